"""Shared by the reproduction scripts in this folder (Python 3 stdlib only; nothing from the project's harness/).
Stub(handler)   a fake provider on 127.0.0.1:<free port>: OpenAI POST /v1/chat/completions and /v1/responses,
                Anthropic POST /v1/messages, GET /v1/models. Every call is recorded in .calls ({method, path,
                headers, body}). handler(method, path, body) (body: {} unless a JSON object) may answer a call with
                (status, headers, payload): payload dict = JSON; list = an SSE stream, each item an (event, data)
                pair or a bytes piece written as is (to split a body anywhere). None = the defaults below.
gateway(stub, backend, breaker=False, extra=())
                starts Shepherd Model Gateway 1.13.0 as peers/smg/run_peer.sh does (smg launch --backend BACKEND
                --worker-urls <stub> --host 127.0.0.1 --port <free> --prometheus-host 127.0.0.1 --prometheus-port
                <free> --history-backend memory --disable-circuit-breaker; no --api-key: the client's key goes on to
                the provider), breaker=True keeps smg's default circuit breaker; yields http://127.0.0.1:PORT and
                stops it by pid. env SMG_BIN (default /tmp/gc-peers/smg/bin/smg, installed by peers/smg/install.sh).
http(...)       one request with urllib, never raising on an HTTP status: (status, headers, text).
verdict(...)    prints the result; exit 1 when the behaviour is present, 0 when it is not.
"""
import contextlib, json, os, socket, subprocess, sys, tempfile, threading, time, urllib.error, urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KEY = "sk-openai-client-test"      # fake provider key the client brings (smg forwards it)
ANT_KEY = "sk-ant-client-test"

def openai_error(status, message, etype="invalid_request_error", code=None, headers=None):
    return status, headers or {}, {"error": {"message": message, "type": etype, "param": None, "code": code}}

def chat_completion(model="gpt-4.1", text="Hello from the stub."):
    return {"id": "chatcmpl-stub", "object": "chat.completion", "created": 1790000000, "model": model,
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                         "message": {"role": "assistant", "content": text, "refusal": None}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}

def response_object(rid="resp_stub_0001", text="Hello from the stub.", model="gpt-5.5", status="completed"):
    return {"id": rid, "object": "response", "created_at": 1790000000, "status": status, "error": None,
            "incomplete_details": None, "instructions": None, "model": model, "parallel_tool_calls": True,
            "tool_choice": "auto", "tools": [], "metadata": {}, "temperature": 1.0, "top_p": 1.0,
            "output": [{"type": "message", "id": "msg_stub_1", "status": "completed", "role": "assistant",
                        "content": [{"type": "output_text", "text": text, "annotations": []}]}] if text else [],
            "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                      "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}}

def anthropic_message(stop_reason="end_turn", text="Hello from the stub."):
    return {"id": "msg_stub_0001", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "text", "text": text}], "stop_reason": stop_reason, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5}}

class Stub:
    def __init__(self, handler=None):
        self.handler, self.calls = handler, []
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
                if path.startswith("/v1/loads") or path in ("/health", "/v1/health"):  # smg's own probes
                    self.send_response(404); self.send_header("content-length", "0"); self.end_headers(); return
                stub.calls.append({"method": self.command, "path": path, "headers": dict(self.headers), "body": body})
                b = body if isinstance(body, dict) else {}
                status, headers, payload = (stub.handler and stub.handler(self.command, path, b)) or \
                    stub.default(self.command, path, b)
                if isinstance(payload, list):  # SSE: events, or raw byte pieces written one by one
                    self.send_response(status); self.send_header("content-type", "text/event-stream")
                    self.send_header("connection", "close")
                    for k, v in headers.items(): self.send_header(k, v)
                    self.end_headers()
                    for item in payload:
                        data = item if isinstance(item, bytes) else \
                            f"event: {item[0]}\ndata: {json.dumps(item[1], ensure_ascii=False)}\n\n".encode()
                        self.wfile.write(data); self.wfile.flush(); time.sleep(0.05)
                    self.close_connection = True
                    return
                data = json.dumps(payload).encode()
                self.send_response(status); self.send_header("content-type", "application/json")
                for k, v in headers.items(): self.send_header(k, v)
                self.send_header("content-length", str(len(data))); self.end_headers(); self.wfile.write(data)
            do_GET = do_POST = do_DELETE = _any
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def default(self, method, path, body):
        body = body if isinstance(body, dict) else {}
        if path == "/v1/chat/completions":
            return 200, {}, chat_completion(body.get("model", "gpt-4.1"))
        if path == "/v1/responses":
            return 200, {}, response_object(model=body.get("model", "gpt-5.5"))
        if path == "/v1/messages":
            return 200, {}, anthropic_message()
        if path == "/v1/models":
            return 200, {}, {"object": "list", "data": [{"id": "gpt-4.1", "object": "model", "created": 0,
                                                        "owned_by": "openai"}]}
        return openai_error(404, f"stub: no route {method} {path}")

    def posts(self, path):
        return [c for c in self.calls if c["method"] == "POST" and c["path"] == path]

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0)); return s.getsockname()[1]

@contextlib.contextmanager
def gateway(stub, backend, breaker=False, extra=()):
    port, prom = free_port(), free_port()
    smg = os.environ.get("SMG_BIN", "/tmp/gc-peers/smg/bin/smg")
    cmd = [smg, "launch", "--backend", backend, "--worker-urls", stub.url, "--host", "127.0.0.1", "--port", str(port),
           "--prometheus-host", "127.0.0.1", "--prometheus-port", str(prom), "--history-backend", "memory",
           *([] if breaker else ["--disable-circuit-breaker"]), *extra]
    home = tempfile.mkdtemp(prefix="gc-repro-smg-")
    log = open(os.path.join(home, "smg.log"), "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, HOME=home, NO_COLOR="1"))
    try:
        for _ in range(120):
            if proc.poll() is not None: break
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readiness", timeout=2) as r:
                    if r.status == 200: break
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.25)
        else:
            sys.exit("smg did not become ready; log: " + log.name)
        if proc.poll() is not None:
            sys.exit("smg exited; log: " + log.name)
        stub.calls.clear()
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try: proc.wait(15)
        except subprocess.TimeoutExpired: proc.kill(); proc.wait()
        stub.server.shutdown()

def http(method, url, body=None, headers=None):
    data = json.dumps(body).encode() if body is not None else None
    h = {"content-type": "application/json", "authorization": f"Bearer {KEY}"}
    h.update(headers or {})
    req = urllib.request.Request(url, data=data, method=method, headers={k: v for k, v in h.items() if v is not None})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read().decode("utf-8", "replace")

def verdict(present, text):
    print(("BEHAVIOUR PRESENT: " if present else "not present: ") + text)
    sys.exit(1 if present else 0)
