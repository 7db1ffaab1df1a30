"""A surface is data plus one adapter: the Echo API (tests/harness/surfaces/echo.py, a test's own adapter that
harness/ does not know) is certified end to end, with the replay upstream playing Anthropic, by a profile that
names it, and its own grammar check catches a broken Echo gateway. No harness change outside the adapter."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from harness.cli import main
from harness.outcomes import EXIT_FAILURES, EXIT_OK
from harness.paths import cassettes_dir
from harness.replay.server import ReplayServer
from tests.harness.tiny_gateways import serve

PROFILE = """\
profile: echo
doc: echo-api
title: Echo, a tiny inbound API of a test's own
surface: tests.harness.surfaces.echo:SURFACE
models:
  MODEL: {default: echo-1, description: any model}
"""
DOC = "# Echo API\n\n## Replies\n\nThe reply is the provider's text, streamed as pieces and one end event.\n"
RULES = """\
source: {doc: echo-api, section: Replies}
rules:
  - id: echo/replies/reply-is-the-providers-text
    level: MUST
    title: the reply is the provider's text
    source: {quote: "The reply is the provider's text, streamed as pieces and one end event."}
    variants: {stream: [false, true]}
    needs: {models: [MODEL]}
    upstream: {cassette: anthropic/text-basic}
    request:
      path: echo
      body: {model: $MODEL, say: What is a prompt cache?}
    expect:
      status: 200
      json: [{path: '$.reply', equals: '${answer.text}'}]
      stream_order: {}
      upstream_calls: 1
"""


def echo_gateway(upstream_url: str, bug: str | None = None) -> Starlette:
    """An Echo gateway over Anthropic Messages; `bug`: `no-end` leaves the stream's end event out."""

    async def echo(request: Request) -> Response:
        body = await request.json()
        if not isinstance(body.get("say"), str):  # refused as the Echo API refuses it, in its error envelope
            return JSONResponse({"error": {"message": "say: required", "type": "invalid_request"}}, 400)
        stream = bool(body.get("stream"))
        upstream = {"model": "claude-sonnet-5-5", "max_tokens": 1024, "stream": False,
                    "messages": [{"role": "user", "content": body["say"]}]}  # fmt: skip
        async with httpx.AsyncClient(base_url=upstream_url, trust_env=False) as client:
            answer = (await client.post("/v1/messages", json=upstream)).json()
        text = "".join(b["text"] for b in answer["content"] if b["type"] == "text")
        usage = {"in": answer["usage"]["input_tokens"], "out": answer["usage"]["output_tokens"]}
        if not stream:
            return JSONResponse({"kind": "echo", "reply": text, "usage": usage})

        async def events() -> AsyncIterator[bytes]:
            for i in range(0, len(text), 7):
                yield f"event: piece\ndata: {json.dumps({'kind': 'piece', 'text': text[i : i + 7]})}\n\n".encode()
            if bug != "no-end":
                yield f"event: end\ndata: {json.dumps({'kind': 'end', 'usage': usage})}\n\n".encode()

        return StreamingResponse(events(), media_type="text/event-stream")

    return Starlette(routes=[Route("/api/echo", echo, methods=["POST"])])


@pytest.fixture(scope="module")
def replay() -> Iterator[ReplayServer]:
    with ReplayServer(cassettes_dir()) as server:
        yield server


@pytest.fixture
def specs(tmp_path: Path) -> Path:
    root = tmp_path / "specs" / "echo"
    root.mkdir(parents=True)
    (root / "profile.yaml").write_text(PROFILE)
    (root / "echo-api.md").write_text(DOC)
    (root / "replies.yaml").write_text(RULES)
    return tmp_path / "specs"


def _certify(specs: Path, gateway: str, replay: ReplayServer, out: Path) -> tuple[int, list[tuple[str, str]]]:
    code = main(["certify", "--specs-dir", str(specs), "--profile", "echo", "--gateway-url", f"{gateway}/api",
                 "--replay-url", replay.url, "--report-dir", str(out)])  # fmt: skip
    document = json.loads((out / "echo" / "results.json").read_text())
    return code, [(json.dumps(r["variant"]), r["outcome"]) for r in document["results"]]


@pytest.mark.e2e
def test_a_surface_of_a_tests_own_is_certified_end_to_end(
    tmp_path: Path, specs: Path, replay: ReplayServer
) -> None:
    with serve(echo_gateway(replay.url)) as gateway:
        code, outcomes = _certify(specs, gateway, replay, tmp_path / "report")
    assert outcomes == [('{"stream": false}', "PASS"), ('{"stream": true}', "PASS")]
    assert code == EXIT_OK


@pytest.mark.e2e
def test_its_own_grammar_check_fails_a_broken_gateway(
    tmp_path: Path, specs: Path, replay: ReplayServer
) -> None:
    with serve(echo_gateway(replay.url, bug="no-end")) as gateway:
        code, outcomes = _certify(specs, gateway, replay, tmp_path / "report")
    assert outcomes == [('{"stream": false}', "PASS"), ('{"stream": true}', "FAIL")]
    assert code == EXIT_FAILURES
    document = json.loads((tmp_path / "report" / "echo" / "results.json").read_text())
    failed = next(r for r in document["results"] if r["outcome"] == "FAIL")
    assert [v["message"] for v in failed["violations"]] == ["the stream does not end once"]
