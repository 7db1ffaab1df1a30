"""Shared by the reproduce scripts: a stub provider (stdlib http.server on 127.0.0.1, a free port) and the TensorZero
gateway started in front of it with the peer's own set-up (peers/tensorzero/run_peer.sh: tensorzero.toml, models
tensorzero::model_name::gpt-test (openai gpt-5.5), gpt-test-sampling (openai gpt-4.1), claude-test (anthropic)).
Env: PEER_VENV, the venv with tensorzero 2026.6.0 (default /tmp/gc-peers/tensorzero; peers/tensorzero/install.sh)."""
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

RUN_PEER = Path(__file__).resolve().parents[3] / "peers" / "tensorzero" / "run_peer.sh"
OPENAI, SAMPLING, CLAUDE = ("tensorzero::model_name::" + m for m in ("gpt-test", "gpt-test-sampling", "claude-test"))


class Reply:
    """What the stub answers: a status, a JSON body, or SSE events (each sent after `pause` seconds)."""

    def __init__(self, status=200, body=None, events=None, headers=None, pause=0.0):
        self.status, self.body, self.events, self.headers, self.pause = status, body, events, headers or {}, pause


def openai_completion(text="Hello.", finish="stop", model="gpt-5.5"):
    return {"id": "chatcmpl-stub", "object": "chat.completion", "created": 1700000000, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": None},
                         "logprobs": None, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}}


def openai_chunks(deltas, finish="stop", usage=True, model="gpt-5.5"):
    """Chat-completion chunks for a list of deltas, a finish chunk and (usage) OpenAI's choices-[] usage chunk."""
    base = {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": 1700000000, "model": model}
    out = [dict(base, choices=[{"index": 0, "delta": d, "logprobs": None, "finish_reason": None}]) for d in deltas]
    out.append(dict(base, choices=[{"index": 0, "delta": {}, "logprobs": None, "finish_reason": finish}]))
    if usage:
        out.append(dict(base, choices=[], usage={"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}))
    return [json.dumps(c) for c in out] + ["[DONE]"]


def anthropic_message(text="Hello.", stop_reason="end_turn"):
    return {"id": "msg_stub", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "text", "text": text}], "stop_reason": stop_reason, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 3}}


class Stub:
    """Answers every POST with `answer(path, body) -> Reply`; keeps what it received in `.requests`."""

    def __init__(self, answer):
        self.answer, self.requests = answer, []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                stub.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                reply = stub.answer(self.path, body)
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                if reply.events is None:
                    data = json.dumps(reply.body).encode()
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for event in reply.events:
                    time.sleep(reply.pause)
                    name, data = event if isinstance(event, tuple) else (None, event)
                    self.wfile.write((f"event: {name}\n" if name else "").encode() + f"data: {data}\n\n".encode())
                    self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@contextlib.contextmanager
def gateway(answer):
    """Start a stub answering with `answer` and the gateway in front of it; yield (base_url, stub)."""
    stub = Stub(answer)
    state = tempfile.mkdtemp(prefix="tz-repro-")
    env = dict(os.environ, UP_URL=stub.url, STATE=state,
               PEER_VENV=os.environ.get("PEER_VENV", "/tmp/gc-peers/tensorzero"))
    started = subprocess.run(["bash", str(RUN_PEER), "start"], env=env, capture_output=True, text=True)
    if started.returncode != 0:
        raise SystemExit(f"gateway did not start: {started.stdout}{started.stderr}")
    try:
        yield Path(state, "url").read_text().strip(), stub
    finally:
        subprocess.run(["bash", str(RUN_PEER), "stop"], env=env, capture_output=True)
        stub.server.shutdown()
        shutil.rmtree(state, ignore_errors=True)


def sse_payloads(raw):
    """The data payloads of an SSE body (bytes or str), [DONE] included."""
    text = raw.decode() if isinstance(raw, bytes) else raw
    return [line[6:] for line in text.splitlines() if line.startswith("data: ")]


def verdict(present, claim):
    print(("BEHAVIOUR PRESENT: " if present else "not present (fixed): ") + claim)
    return 1 if present else 0
