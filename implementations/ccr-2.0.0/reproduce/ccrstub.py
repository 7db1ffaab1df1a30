"""Shared by the CCR 2.0.0 reproductions (stdlib only): a stub provider on 127.0.0.1 that answers what the script
scripts and records what the gateway sent, and a launcher that starts Claude Code Router in front of it.

CCR is started as peers/ccr/run_peer.sh starts it: `node <cli.js> start` in the foreground, a scratch HOME holding
.claude-code-router/config.json (HOST 127.0.0.1, APIKEY, one provider, Router.default), stopped by its pid.
CCR_CLI names the installed bundle (default: where `PEERS=/tmp/gc-peers bash peers/certify.sh ccr` installs it)."""
from __future__ import annotations

import json, os, shutil, socket, subprocess, tempfile, threading, time, urllib.error, urllib.request  # noqa: E401
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CCR_CLI = os.environ.get("CCR_CLI", "/tmp/gc-peers/ccr/node_modules/@musistudio/claude-code-router/dist/cli.js")
GATEWAY_KEY = "sk-ccr-gateway-test"  # CCR's own APIKEY (fake)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Stub:
    """answer(path, body) -> (status, headers, payload): bytes, or a list of chunks written one by one (a stream).
    Every request is kept in .requests as (path, headers, parsed body) and in .raw as bytes."""

    def __init__(self, answer):
        self.requests: list[tuple[str, dict, object]] = []
        self.raw: list[bytes] = []
        stub = self
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                return None

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode(errors="replace")
                stub.raw.append(raw)
                stub.requests.append((self.path, dict(self.headers), body))
                status, headers, payload = answer(self.path, body)
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                if isinstance(payload, list):
                    self.send_header("transfer-encoding", "chunked")
                    self.end_headers()
                    for chunk in payload:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        self.wfile.flush()
                        time.sleep(0.02)
                    self.wfile.write(b"0\r\n\r\n")
                else:
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self):
        self.server.shutdown()


def provider(family: str, stub_url: str) -> tuple[dict, str]:
    """The Providers entry and Router.default for one family, as peers/ccr/config-<family>.json spells them."""
    if family == "openai":
        return ({"name": "openai", "api_base_url": stub_url + "/v1/chat/completions",
                 "api_key": "sk-openai-fake-key", "models": ["gpt-4.1"]}, "openai,gpt-4.1")
    if family == "anthropic":
        return ({"name": "anthropic", "api_base_url": stub_url + "/v1/messages", "api_key": "sk-ant-fake-key",
                 "models": ["claude-sonnet-4-5-20250929"], "transformer": {"use": ["Anthropic"]}},
                "anthropic,claude-sonnet-4-5-20250929")
    return ({"name": "gemini", "api_base_url": stub_url + "/v1beta/models/", "api_key": "gemini-fake-key",
             "models": ["gemini-2.5-flash"], "transformer": {"use": ["gemini"]}}, "gemini,gemini-2.5-flash")


class CCR:
    """Claude Code Router in the foreground on a free loopback port, for one provider family."""

    def __init__(self, family: str, stub_url: str, **extra):
        entry, default = provider(family, stub_url)
        self.home = tempfile.mkdtemp(prefix="ccr-repro-")
        self.port = free_port()
        os.makedirs(os.path.join(self.home, ".claude-code-router"))
        config = {"HOST": "127.0.0.1", "PORT": self.port, "APIKEY": GATEWAY_KEY, "LOG": False,
                  "Providers": [entry], "Router": {"default": default}, **extra}
        with open(os.path.join(self.home, ".claude-code-router", "config.json"), "w") as f:
            json.dump(config, f)
        env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
        self.proc = subprocess.Popen(["node", CCR_CLI, "start"], env={**env, "HOME": self.home},
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{self.port}"  # wait for GET /health (a public path), up to 20 s
        for _ in range(100):
            try:
                urllib.request.urlopen(self.url + "/health", timeout=1)
                return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise SystemExit(f"CCR did not start (is {CCR_CLI} installed?)")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:  # not expected: CCR exits on SIGTERM
            self.proc.kill()
        shutil.rmtree(self.home, ignore_errors=True)

    def post(self, path: str, body, headers: dict | None = None) -> tuple[int, dict, str]:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        h = {"content-type": "application/json", "x-api-key": GATEWAY_KEY, "anthropic-version": "2023-06-01",
             **(headers or {})}
        req = urllib.request.Request(self.url + path, data=data, headers={k: v for k, v in h.items() if v})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, dict(r.headers), r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read().decode()


def sse(events: list[dict | str]) -> list[bytes]:
    """SSE chunks as OpenAI and Gemini stream them: one `data:` line each."""
    return [f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n".encode() for e in events]


def chat_completion(content="Hello.", finish="stop", **message) -> bytes:
    """An OpenAI chat.completion as api.openai.com sends it today (message.annotations is [] on every answer)."""
    return json.dumps({
        "id": "chatcmpl-stub", "object": "chat.completion", "created": 1, "model": "gpt-4.1-2025-04-14",
        "choices": [{"index": 0, "finish_reason": finish, "logprobs": None,
                     "message": {"role": "assistant", "content": content, "refusal": None, "annotations": [],
                                 **message}}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}}).encode()


def chunk(delta: dict | None = None, finish=None, usage=None) -> dict:
    return {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4.1-2025-04-14",
            "choices": [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}],
            **({"usage": usage} if usage else {})}


def events(text: str) -> list[dict]:  # the `data:` events of an Anthropic SSE body, in order
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]
