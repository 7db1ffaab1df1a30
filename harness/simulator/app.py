"""The live provider simulator as an ASGI app and a loopback server (`serve-upstream --simulate`).

Anthropic Messages (`…/messages`), OpenAI-compatible Chat Completions (`…/chat/completions`, under any base
path), OpenAI Responses (`…/responses`, harness.simulator.responses) and Gemini (`…/models/{model}:generateContent`, `:streamGenerateContent?alt=sse`) answered by
`harness.simulator.core` from the request alone. `GET /__gc/health` answers ok and
`GET /__gc/stats` counts the provider calls (so a test can see live traffic went here and nowhere else).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import random
import secrets
import socket
import threading
import time
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from harness.errors import SimulatorRequestError
from harness.replay import server as server_module
from harness.replay.validate import anthropic_integer_problems, openai_integer_problems, responses_problems
from harness.simulator import core as sim
from harness.simulator import gemini as gem
from harness.simulator import responses as resp
from harness.simulator import wire

# The pause before each piece of a streamed answer: a model writes as it generates, it does not hand over its
# whole answer at once (a real one streams some hundreds of tokens a second; this one about 500 pieces a second),
# so a gateway's stream is judged against a provider that streams (rule */streaming/not-buffered, live form).
PIECE_GAP_SECONDS = 0.002


class CutStream(Response):
    """An SSE body sent in pieces cut at arbitrary byte offsets, a short pause before each, as a model writes."""

    def __init__(self, pieces: list[bytes]) -> None:
        super().__init__(status_code=200, media_type="text/event-stream")
        self.pieces = pieces

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # No content-length: the body is streamed (Response would announce the empty initial body's 0).
        headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for piece in self.pieces:
            await send({"type": "http.response.body", "body": piece, "more_body": True})
            await asyncio.sleep(PIECE_GAP_SECONDS)
        await send({"type": "http.response.body", "body": b"", "more_body": False})


class Simulator:
    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.cache = sim.PrefixCache()
        self.calls = {"anthropic": 0, "openai": 0, "gemini": 0, "responses": 0, "other": 0}

    def _rng(self, body: Any) -> random.Random:
        """A generator for one answer, seeded by the seed and the request body alone: the same request gets the
        same answer whatever was asked before it (no seed: a fresh one each time)."""
        if self.seed is None:
            return random.Random()
        digest = hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
        return random.Random(f"{self.seed}:{digest}")

    async def health(self, request: Request) -> Response:
        return JSONResponse({"status": "ok", "simulator": True})

    async def stats(self, request: Request) -> Response:
        return JSONResponse({"calls": dict(self.calls)})

    async def provider(self, request: Request) -> Response:
        path = request.url.path
        try:
            body = json.loads(await request.body() or b"null")
        except ValueError:
            body = None
        if request.method == "POST" and path.endswith("/messages/count_tokens"):
            self.calls["anthropic"] += 1
            return self._anthropic_count(body)
        if request.method == "POST" and path.endswith("/messages"):
            self.calls["anthropic"] += 1
            return self._anthropic(body)
        if request.method == "POST" and path.endswith("/chat/completions"):
            self.calls["openai"] += 1
            return self._openai(body)
        if request.method == "POST" and path.endswith("/responses"):
            self.calls["responses"] += 1
            return self._responses(body)
        if request.method == "POST" and path.endswith((":generateContent", ":streamGenerateContent")):
            self.calls["gemini"] += 1
            return self._gemini(body, path, request.query_params.get("alt"))
        self.calls["other"] += 1
        return JSONResponse(
            {"error": {"message": f"no endpoint {request.method} {path}", "type": "not_found"}}, 404
        )

    def _anthropic(self, body: Any) -> Response:
        if not isinstance(body, dict):
            return _anthropic_error("the request body must be a JSON object")
        for problem in anthropic_integer_problems(body):  # like the real API: a decimal is no integer
            return _anthropic_error(problem)
        try:
            ask = wire.anthropic_ask(body)
        except SimulatorRequestError as exc:
            return _anthropic_error(str(exc))
        rng = self._rng(body)
        gen = sim.generate(ask, rng, self.cache, "toolu_")
        message = wire.anthropic_message(
            gen, str(body.get("model")), f"msg_{secrets.token_hex(12)}", secrets.token_urlsafe(24)
        )
        if body.get("stream") is not True:
            return JSONResponse(message, headers={"request-id": f"req_{secrets.token_hex(12)}"})
        data = sim.sse(wire.anthropic_events(message, rng))
        return CutStream(sim.cut_bytes(data, rng))

    def _anthropic_count(self, body: Any) -> Response:
        """count_tokens: the input the request carries (system, tools, messages), counted as the simulator counts
        every prompt (docs/wire-reference.md §1.9); from the request alone."""
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or not body["messages"]:
            return _anthropic_error("messages: Field required (at least one message)")
        counted = {k: body[k] for k in ("system", "tools", "messages") if k in body}
        return JSONResponse({"input_tokens": sim.count_tokens(json.dumps(counted))})

    def _openai(self, body: Any) -> Response:
        if not isinstance(body, dict):
            return _openai_error("the request body must be a JSON object")
        for problem in openai_integer_problems(
            body
        ):  # like the real API: "expected an integer, but got a decimal"
            return _openai_error(problem, getattr(problem, "param", None), getattr(problem, "code", None))
        try:
            ask = wire.openai_ask(body)
        except SimulatorRequestError as exc:
            return _openai_error(str(exc))
        rng = self._rng(body)
        gen = sim.generate(ask, rng, self.cache, "call_")
        completion = wire.openai_completion(
            gen, str(body.get("model")), f"chatcmpl-{secrets.token_hex(12)}", int(time.time())
        )
        # `n` choices and `logprobs`, as OpenAI answers them (each choice its own generation, from the request alone).
        completion = wire.with_choices_and_logprobs(
            completion,
            body,
            lambda i: sim.generate(ask, self._rng({**body, "_choice": i}), self.cache, "call_"),
        )
        if body.get("stream") is not True:
            return JSONResponse(completion)
        options = sim.as_object(body.get("stream_options"))
        chunks = wire.openai_chunks(completion, options.get("include_usage") is True, rng)
        data = sim.sse([*((None, c) for c in chunks), (None, "[DONE]")])
        return CutStream(sim.cut_bytes(data, rng))

    def _responses(self, body: Any) -> Response:
        if not isinstance(body, dict):
            return _openai_error("the request body must be a JSON object")
        for problem in responses_problems(body):  # what api.openai.com refuses on /v1/responses
            return _openai_error(problem, getattr(problem, "param", None), getattr(problem, "code", None))
        previous = body.get("previous_response_id")
        if previous is not None:  # nothing is kept here: every id is one the simulator does not have
            return _openai_error(
                f"Previous response with id '{previous}' not found.",
                "previous_response_id",
                "previous_response_not_found",
                status=404,
            )
        rng = self._rng(body)
        try:
            kind, answer = resp.answer(body, rng, self.cache)
        except SimulatorRequestError as exc:
            return _openai_error(str(exc))
        if kind == "json":
            return JSONResponse(answer, headers={"x-request-id": f"req_{secrets.token_hex(16)}"})
        data = b"".join(
            f"event: {e['type']}\ndata: {json.dumps(e, ensure_ascii=False)}\n\n".encode() for e in answer
        )
        return CutStream(sim.cut_bytes(data, rng))

    def _gemini(self, body: Any, path: str, alt: str | None) -> Response:
        if not isinstance(body, dict):
            return JSONResponse(gem.gemini_error(400, "Invalid JSON payload received."), 400)
        try:
            ask = gem.gemini_ask(body)
        except SimulatorRequestError as exc:
            return JSONResponse(gem.gemini_error(400, str(exc)), 400)
        rng = self._rng(body)
        gen = sim.generate(ask, rng, self.cache, "")
        answer = gem.gemini_response(
            gen, gem.model_of(path), secrets.token_urlsafe(16), thoughts=gem.shows_thoughts(body)
        )
        if not path.endswith(":streamGenerateContent"):
            return JSONResponse(answer, media_type="application/json; charset=UTF-8")
        events = gem.gemini_events(answer, rng)
        if alt != "sse":  # without alt=sse the API streams one JSON array of the same responses
            return JSONResponse(events)
        return CutStream(sim.cut_bytes(gem.gemini_sse(events), rng))


def _anthropic_error(message: str) -> Response:
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    return JSONResponse(body, 400)


def _openai_error(
    message: str, param: str | None = None, code: str | None = None, *, status: int = 400
) -> Response:
    body = {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}
    return JSONResponse(body, status)


def build_simulator_app(simulator: Simulator | None = None) -> Starlette:
    s = simulator or Simulator()
    routes = [
        Route("/__gc/health", s.health, methods=["GET"]),
        Route("/__gc/stats", s.stats, methods=["GET"]),
        Route("/{path:path}", s.provider, methods=["GET", "POST", "PUT", "PATCH", "DELETE"]),
    ]
    app = Starlette(routes=routes)
    app.state.simulator = s
    return app


class SimulatorServer:
    """The simulator on a loopback port, on a background thread (like ReplayServer).

    >>> with SimulatorServer() as server:
    ...     server.url  # 'http://127.0.0.1:54321' — the gateway's Anthropic / OpenAI-compatible / Gemini base URL
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, seed: int | None = None) -> None:
        self.simulator = Simulator(seed)
        self.app = build_simulator_app(self.simulator)
        self.host, self._port = host, port
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return server_module._url(self.host, self._port)

    def start(self, timeout: float = 10.0) -> SimulatorServer:
        sock = server_module._bind(self.host, self._port)
        self._port = sock.getsockname()[1]
        server = uvicorn.Server(server_module._config(self.app, log_level="warning", access_log=False))
        self._server = server

        def run() -> None:
            try:
                asyncio.run(server.serve(sockets=[sock]))
            finally:
                sock.close()

        self._thread = threading.Thread(target=run, name=f"simulator:{self._port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the simulator did not start on {self.url}")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is None or self._thread is None:
            return
        self._server.should_exit = True
        self._thread.join(5)
        self._server = self._thread = None

    def __enter__(self) -> SimulatorServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_simulator_foreground(sock: socket.socket) -> None:
    """`gateway-conformance serve-upstream --simulate`: serve on `sock` with access logs until Ctrl-C."""
    config = server_module._config(
        build_simulator_app(), log_level="info", access_log=True, log_config=uvicorn.config.LOGGING_CONFIG
    )
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(config).run(sockets=[sock])
