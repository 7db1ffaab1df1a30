"""TensorZero's OpenAI-compatible errors are {"error": {"message"}} only: no `type`, `param` or `code`, which OpenAI's
error object always has (openai-python's APIError then has .type/.code None). Rules: openai/errors/error-object-shape,
missing-messages-400, unknown-model-error-object, provider-5xx-stays-5xx, overloaded-not-generic, before-stream-is-status.
Source: crates/tensorzero-error/src/lib.rs build_response_body (json!({"error": {"message": message}})).
    python3 01_error_envelope.py          (exit 1: behaviour present, 0: fixed)"""
import sys

import openai
from tzstub import OPENAI, Reply, gateway, verdict

ANSWER = {"error": {"message": "The server had an error", "type": "server_error", "param": None, "code": None}}
with gateway(lambda path, body: Reply(500, ANSWER)) as (url, stub):
    client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
    cases = {
        "n=2 (refused by the gateway)": dict(model=OPENAI, messages=[{"role": "user", "content": "hi"}], n=2),
        "unknown model": dict(model="tensorzero::model_name::no-such-model", messages=[{"role": "user", "content": "hi"}]),
        "provider 500 server_error": dict(model=OPENAI, messages=[{"role": "user", "content": "hi"}]),
    }
    present = False
    for name, kwargs in cases.items():
        try:
            client.chat.completions.create(**kwargs)
            print(f"{name}: answered 200?")
            continue
        except openai.APIStatusError as exc:
            e, body = exc, exc.response.json()
        error = body.get("error", {})
        missing = [k for k in ("type", "param", "code") if k not in error]
        present |= bool(missing)
        print(f"{name}: status {e.status_code}, error keys {sorted(error)}; expected message/type/param/code, "
              f"missing {missing}; SDK sees type={e.type!r} code={e.code!r}")
sys.exit(verdict(present, "error bodies lack error.type / param / code"))
