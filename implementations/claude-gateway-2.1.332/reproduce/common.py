"""Shared by the reproduce scripts: a stub Anthropic provider (stdlib http.server on 127.0.0.1, a free port) and
the Claude apps gateway started in front of it with the peer's own start script.

The gateway: peers/claude-gateway/run_peer.sh (install it first: PEER_DIR=$PEERS/claude-gateway
peers/claude-gateway/install.sh). It runs on 127.0.0.1:3480 with its own PostgreSQL (55432) and stub IdP (3481),
so do not run these scripts while certify runs the peer. GC_PEERS (default /tmp/gc-peers) is where it is installed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUN_PEER = HERE.parents[2] / "peers" / "claude-gateway" / "run_peer.sh"
PEERS = Path(os.environ.get("GC_PEERS", "/tmp/gc-peers"))
SCRATCH = Path("/tmp/gc-claude-gateway/repro")
GATEWAY = "http://127.0.0.1:3480"

MESSAGE = {"id": "msg_stub_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
           "content": [{"type": "text", "text": "Hello from the stub."}], "stop_reason": "end_turn",
           "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}}


class Stub:
    """A fake Anthropic API. `answer(path, headers, body) -> (status, headers, bytes)`; every request is kept."""

    def __init__(self, answer):
        self.calls: list[dict] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _serve(self):
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                stub.calls.append({"method": self.command, "path": self.path, "headers": dict(self.headers),
                                   "body": raw.decode("utf-8", "replace")})
                status, headers, data = answer(self.path, dict(self.headers), raw)
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except ConnectionError:  # the gateway may drop a 5xx answer's body unread
                    pass

            do_GET = do_POST = _serve

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()


def ok_answer(path, headers, body):
    return 200, {"content-type": "application/json", "request-id": "req_stub_1"}, json.dumps(MESSAGE).encode()


def _env():
    return {**os.environ, "PEER_DIR": str(PEERS / "claude-gateway"), "STATE": str(SCRATCH / "state"),
            "PG_DIR": str(SCRATCH / "pg")}


def start_gateway(upstream_url: str, ttl_hours: float | None = None) -> str:
    """Start the gateway in front of `upstream_url`; return the bearer token its device-flow sign-in got.
    `ttl_hours` runs a copy of the peer folder whose gateway.yaml sets that session lifetime instead."""
    env = {**_env(), "UP_URL": upstream_url}
    script = RUN_PEER
    if ttl_hours is not None:
        copy = SCRATCH / "peer"
        copy.mkdir(parents=True, exist_ok=True)
        for name in ("run_peer.sh", "oidc_stub.py", "signin.py"):
            shutil.copy(RUN_PEER.parent / name, copy / name)
        config = (RUN_PEER.parent / "gateway.yaml").read_text()
        (copy / "gateway.yaml").write_text(re.sub(r"ttl_hours: [0-9.]+", f"ttl_hours: {ttl_hours}", config))
        script = copy / "run_peer.sh"
    subprocess.run(["bash", str(script), "start"], env=env, check=True, stdout=subprocess.DEVNULL)
    return (SCRATCH / "state" / "token").read_text().strip()


def stop_gateway():
    subprocess.run(["bash", str(RUN_PEER), "stop"], env=_env(), check=False)


def call(method: str, path: str, headers: dict, body: dict | None = None):
    """One request to the gateway: (status, headers, parsed JSON or text)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(GATEWAY + path, data, {"content-type": "application/json", **headers}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            status, hdrs, raw = resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        status, hdrs, raw = err.code, dict(err.headers), err.read()
    try:
        return status, hdrs, json.loads(raw)
    except ValueError:
        return status, hdrs, raw.decode("utf-8", "replace")
