"""Shared by the reproduction scripts in this folder (Python 3 stdlib only; nothing from the project's harness/).

Stub(handler)  a fake provider on 127.0.0.1:<free port> speaking Anthropic POST /v1/messages, OpenAI
               POST /v1/chat/completions and POST/GET/DELETE /v1/responses[/{id}], GET /v1/models. It records every
               call in .calls ({method, path, headers, body}). handler(method, path, body) may return
               (status, headers, payload) to answer a call itself (payload: dict = JSON, list = SSE events
               [(event, data), ...], str = raw text); None falls back to the defaults below, which validate like
               the real APIs only where a script needs it (Anthropic: max_tokens required, temperature in [0, 1]).
gateway(stub)  starts LiteLLM 1.110.2 with peers/litellm/run_peer.sh (its config_deterministic.yaml: claude-test
               and claude-test-drop = anthropic/claude-sonnet-4-5-20250929, drop_params false / true; gpt-test =
               openai/gpt-5.5, gpt-test-sampling = openai/gpt-4.1; master key sk-peer-test; no database; retries
               and cooldowns off), api_base pointed at the stub, on a free port in 4100-4199; stops it by pid.
               env PEER_VENV (default /tmp/gc-peers/litellm).
http(...)      one request with urllib, never raising on an HTTP status: (status, headers, text).
verdict(...)   prints the result; exit 1 when the behaviour is present, 0 when it is not. A script that fails
               on its own (an answer of a shape it did not expect) exits 2: neither verdict.
"""
import contextlib, json, os, socket, subprocess, sys, threading, urllib.error, urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

def _crash(kind, value, tb):  # runs after the `with gateway()` clean-up; 2 = the script failed, not a verdict
    sys.__excepthook__(kind, value, tb); sys.stdout.flush(); os._exit(2)
sys.excepthook = _crash

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
KEY = "sk-peer-test"  # the gateway's master key (peers/litellm/config_deterministic.yaml)


def anthropic_error(status, etype, message, headers=None):
    return status, headers or {}, {"type": "error", "error": {"type": etype, "message": message},
                                   "request_id": "req_stub_0001"}


def openai_error(status, etype, message, code=None, param=None, headers=None):
    return status, headers or {}, {"error": {"message": message, "type": etype, "param": param, "code": code}}


def anthropic_message(blocks=None, stop_reason="end_turn"):
    blocks = blocks or [{"type": "text", "text": "Hello from the stub."}]
    return {"id": "msg_stub_0001", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
            "content": blocks, "stop_reason": stop_reason, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0}}


def anthropic_sse(blocks=None, stop_reason="end_turn", error_after=None):
    """Anthropic stream events for blocks (text, thinking, tool_use; "parts": the deltas); error_after=N: an `error` event after N deltas."""
    msg = anthropic_message([], stop_reason); msg["stop_reason"] = None
    ev = [("message_start", {"type": "message_start", "message": msg})]
    n = 0
    for i, b in enumerate(blocks or [{"type": "text", "text": "Hello from the stub."}]):
        start = (dict(b, input={}) if b["type"] == "tool_use" else
                 {"type": "thinking", "thinking": "", "signature": ""} if b["type"] == "thinking" else dict(b, text=""))
        ev.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": start}))
        parts = b.get("parts") or [b.get("text", b.get("thinking", ""))]
        for p in parts:
            if error_after is not None and n == error_after:
                ev.append(("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}))
                return ev
            d = ({"type": "input_json_delta", "partial_json": p} if b["type"] == "tool_use" else
                 {"type": "thinking_delta", "thinking": p} if b["type"] == "thinking" else {"type": "text_delta", "text": p})
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d})); n += 1
        if b["type"] == "thinking":
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                               "delta": {"type": "signature_delta", "signature": b["signature"]}}))
        ev.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    ev.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                                 "usage": {"output_tokens": 5}}))
    ev.append(("message_stop", {"type": "message_stop"}))
    for _, d in ev:
        if d.get("type") == "content_block_start":
            d["content_block"].pop("parts", None)
    return ev


def response_object(rid, text="Hello from the stub.", status="completed", model="gpt-5.5"):
    return {"id": rid, "object": "response", "created_at": 1790000000, "status": status, "error": None,
            "incomplete_details": None, "instructions": None, "model": model, "parallel_tool_calls": True,
            "tool_choice": "auto", "tools": [], "metadata": {}, "temperature": 1.0, "top_p": 1.0,
            "output": [{"type": "message", "id": "msg_stub_1", "status": "completed", "role": "assistant",
                        "content": [{"type": "output_text", "text": text, "annotations": []}]}] if text else [],
            "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                      "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}}


def responses_sse(rid, parts=("Hello ", "from ", "the stub."), error_after=None):
    """OpenAI Responses stream; error_after=N: the API's `error` event after N text deltas, then the stream ends."""
    r0 = response_object(rid, text=None, status="in_progress")
    ev = [("response.created", {"type": "response.created", "response": r0}),
          ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
           "item": {"id": "msg_stub_1", "type": "message", "status": "in_progress", "role": "assistant", "content": []}}),
          ("response.content_part.added", {"type": "response.content_part.added", "item_id": "msg_stub_1",
           "output_index": 0, "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}})]
    for i, p in enumerate(parts):
        if error_after is not None and i == error_after:
            ev.append(("error", {"type": "error", "error": {"type": "server_error", "code": "server_error",
                                                            "message": "Overloaded", "param": None}}))
            break
        ev.append(("response.output_text.delta", {"type": "response.output_text.delta", "item_id": "msg_stub_1",
                   "output_index": 0, "content_index": 0, "delta": p}))
    else:
        ev.append(("response.completed", {"type": "response.completed",
                                          "response": response_object(rid, "".join(parts))}))
    for n, (_, d) in enumerate(ev):
        d["sequence_number"] = n
    return ev


class Stub:
    def __init__(self, handler=None):
        self.handler, self.calls, self.store, self.n = handler, [], {}, 0
        stub = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *a): pass
            def _any(self):
                n = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(n).decode("utf-8", "replace") if n else ""
                try: body = json.loads(raw) if raw else None
                except ValueError: body = raw
                path = self.path.split("?")[0]
                stub.calls.append({"method": self.command, "path": path, "headers": dict(self.headers), "body": body})
                out = (stub.handler and stub.handler(self.command, path, body)) or stub.default(self.command, path, body)
                status, headers, payload = out
                if isinstance(payload, list):  # SSE, connection closed at the end
                    self.send_response(status); self.send_header("content-type", "text/event-stream")
                    self.send_header("connection", "close")
                    for k, v in headers.items(): self.send_header(k, v)
                    self.end_headers()
                    for e, d in payload:
                        self.wfile.write(f"event: {e}\ndata: {json.dumps(d)}\n\n".encode()); self.wfile.flush()
                    self.close_connection = True
                    return
                data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
                self.send_response(status); self.send_header("content-type", "application/json")
                self.send_header("request-id", "req_stub_0001"); self.send_header("x-request-id", "req_stub_0001")
                for k, v in headers.items(): self.send_header(k, v)
                self.send_header("content-length", str(len(data))); self.end_headers(); self.wfile.write(data)
            do_GET = do_POST = do_DELETE = _any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def default(self, method, path, body):
        body = body if isinstance(body, dict) else {}
        if path == "/v1/messages":
            if not isinstance(body.get("max_tokens"), int):
                return anthropic_error(400, "invalid_request_error", "max_tokens: Field required")
            t = body.get("temperature")
            if t is not None and not 0 <= t <= 1:
                return anthropic_error(400, "invalid_request_error", f"temperature: range: 0..1 (got {t})")
            return (200, {}, anthropic_sse()) if body.get("stream") else (200, {}, anthropic_message())
        if path == "/v1/chat/completions":
            return 200, {}, {"id": "chatcmpl-stub", "object": "chat.completion", "created": 1790000000,
                             "model": body.get("model"), "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": "Hello from the stub."}}],
                             "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
        if path == "/v1/responses" and method == "POST":
            prev = body.get("previous_response_id")
            if prev and prev not in self.store:
                return openai_error(404, "invalid_request_error", f"Previous response with id '{prev}' not found.",
                                    "previous_response_not_found", "previous_response_id")
            self.n += 1; rid = f"resp_stub_{self.n:04d}"
            self.store[rid] = response_object(rid)
            return (200, {}, responses_sse(rid)) if body.get("stream") else (200, {}, self.store[rid])
        if path.startswith("/v1/responses/"):
            rid = path.split("/")[3]
            if rid not in self.store:
                return openai_error(404, "invalid_request_error", f"Response with id '{rid}' not found.", None)
            if method == "DELETE":
                del self.store[rid]; return 200, {}, {"id": rid, "object": "response", "deleted": True}
            return 200, {}, self.store[rid]
        if path == "/v1/models":
            return 200, {}, {"object": "list", "data": [{"id": "gpt-5.5", "object": "model", "created": 0,
                                                        "owned_by": "openai"}]}
        return openai_error(404, "invalid_request_error", f"stub: no route {method} {path}")

    def posts(self, path):
        return [c for c in self.calls if c["method"] == "POST" and c["path"] == path]

    def stop(self):
        self.server.shutdown(); self.server.server_close()


def free_port(lo, hi):
    for p in range(lo, hi):
        with socket.socket() as s:
            try: s.bind(("127.0.0.1", p)); return p
            except OSError: continue
    sys.exit("no free port in %d-%d" % (lo, hi))


@contextlib.contextmanager
def gateway(stub):
    """LiteLLM on 127.0.0.1:<4100-4199> with its provider base URLs at the stub; yields http://127.0.0.1:PORT."""
    port = free_port(4100, 4200)
    state = f"/tmp/gc-repro-litellm/state-{port}"
    env = dict(os.environ, PEER_VENV=os.environ.get("PEER_VENV", "/tmp/gc-peers/litellm"), UP_URL=stub.url,
               PROXY_PORT=str(port), STATE=state)
    script = os.path.join(REPO, "peers", "litellm", "run_peer.sh")
    r = subprocess.run(["bash", script, "start"], env=env, capture_output=True, text=True)
    try:
        if r.returncode:
            print(r.stdout, r.stderr); sys.exit(2)
        stub.calls.clear()  # LiteLLM lists the OpenAI deployments' GET /v1/models at start-up
        yield f"http://127.0.0.1:{port}"
    finally:
        subprocess.run(["bash", script, "stop"], env=env, capture_output=True)
        stub.stop()


def http(method, url, body=None, headers=None, raw=None):
    data = raw.encode() if raw is not None else (json.dumps(body).encode() if body is not None else None)
    h = {"content-type": "application/json", "authorization": f"Bearer {KEY}"}
    h.update(headers or {})
    req = urllib.request.Request(url, data=data, method=method, headers={k: v for k, v in h.items() if v is not None})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


def sse_events(text):
    """[(event, data-as-dict-or-str)] from an SSE body."""
    out = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        ev, data = None, []
        for line in block.split("\n"):
            if line.startswith("event:"): ev = line[6:].strip()
            elif line.startswith("data:"): data.append(line[5:].strip())
        if data:
            d = "\n".join(data)
            try: d = json.loads(d)
            except ValueError: pass
            out.append((ev, d))
    return out


def short(x, n=300):
    s = x if isinstance(x, str) else json.dumps(x)
    return s if len(s) <= n else s[:n] + f"... ({len(s)} chars)"


def verdict(present, text):
    print(("BEHAVIOUR PRESENT: " if present else "not present: ") + text)
    sys.exit(1 if present else 0)
