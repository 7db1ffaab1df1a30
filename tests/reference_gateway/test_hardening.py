"""Hostile input and unexpected failures (issues 10 and 13): every one answers the profile's envelope, the
log never quotes the body or a key, and the connection stays usable."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from reference_gateway.app import Hooks, create_app
from reference_gateway.web.logs import make_safe
from tests.reference_gateway.conftest import (
    CLIENT_KEY,
    UPSTREAM_KEY,
    FakeAnthropic,
    ServerThread,
    gateway_settings,
)

MODEL = "anthropic/claude-sonnet-5-5"
SECRET_TEXT = "confidential-prompt-7f3a"
AUTH = {"authorization": f"Bearer {CLIENT_KEY}"}


class LogLines(logging.Handler):
    """Every formatted record (tracebacks included) of the gateway's and uvicorn's loggers, one string each."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(self.format(record))

    def wait_for(self, fragment: str, timeout: float = 5.0) -> None:
        import time

        deadline = time.monotonic() + timeout
        while not any(fragment in line for line in self.lines):
            assert time.monotonic() < deadline, f"no log line with {fragment!r}:\n{self.text}"
            time.sleep(0.02)

    @property
    def text(self) -> str:
        return "\n".join(self.records)

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()


@pytest.fixture
def log_lines() -> Iterator[LogLines]:
    # Made safe as the command line makes its own handler (`logs.configure`): the filter is the handler's.
    handler = LogLines()
    make_safe(handler)
    loggers = [logging.getLogger(name) for name in ("reference_gateway", "uvicorn", "uvicorn.error")]
    saved = [(lg, lg.level) for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.setLevel(logging.DEBUG)
    yield handler
    for lg, level in saved:
        lg.removeHandler(handler)
        lg.setLevel(level)


class ExplodingTransport(httpx.AsyncBaseTransport):
    """An upstream transport failing with a bug the gateway does not know, its text quoting secrets."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        raise RuntimeError(f"bug while sending {request.content!r} with {UPSTREAM_KEY} and {CLIENT_KEY}")


class ExplodingModels(dict[str, Any]):
    def values(self) -> Any:
        raise RuntimeError(f"catalog bug quoting {CLIENT_KEY} and {SECRET_TEXT}")


def exchange_on_one_connection(port: int, requests: list[bytes]) -> list[tuple[int, bytes, bytes]]:
    """Send each raw HTTP/1.1 request on the same socket; (status, headers, body) per answer. A request that
    finds the connection closed has status 0."""
    answers: list[tuple[int, bytes, bytes]] = []
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        buffer = b""
        for raw in requests:
            try:
                sock.sendall(raw)
            except OSError:
                answers.append((0, b"", b""))
                continue
            while b"\r\n\r\n" not in buffer:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                buffer += chunk
            if b"\r\n\r\n" not in buffer:
                answers.append((0, b"", b""))
                continue
            head, buffer = buffer.split(b"\r\n\r\n", 1)
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            while len(buffer) < length:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                buffer += chunk
            body, buffer = buffer[:length], buffer[length:]
            answers.append((int(head.split(b" ")[1]), head, body))
    return answers


def post(path: str, body: bytes, headers: dict[str, str] | None = None) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "host: 127.0.0.1", f"content-length: {len(body)}"]
    lines += [f"{k}: {v}" for k, v in {"content-type": "application/json", **AUTH, **(headers or {})}.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def get(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {CLIENT_KEY}\r\n\r\n".encode()


def chat_body(**fields: Any) -> bytes:
    import json

    body = {"model": MODEL, "messages": [{"role": "user", "content": SECRET_TEXT}], **fields}
    return json.dumps(body).encode()


# ------------------------------------------------------------------------------------ unexpected errors


@pytest.fixture(scope="module")
def exploding_gateway(fake_server: tuple[FakeAnthropic, ServerThread]) -> Iterator[ServerThread]:
    app = create_app(gateway_settings(fake_server[1].url), Hooks(upstream_transport=ExplodingTransport()))
    with ServerThread(app) as server:
        yield server


@pytest.fixture(scope="module")
def exploding_catalog_gateway(fake_server: tuple[FakeAnthropic, ServerThread]) -> Iterator[ServerThread]:
    settings = gateway_settings(fake_server[1].url)
    catalog = replace(settings.catalog, models=ExplodingModels(settings.catalog.models))
    with ServerThread(create_app(replace(settings, catalog=catalog))) as server:
        yield server


def _assert_clean_500(answer: tuple[int, bytes, bytes], log: LogLines) -> None:
    import json

    status, head, body = answer
    assert status == 500
    assert json.loads(body) == {
        "error": {
            "message": "The server had an error while processing your request.",
            "type": "server_error",
            "param": None,
            "code": None,
        }
    }
    assert b"request-id: " in head
    assert any("unexpected RuntimeError" in line for line in log.lines), log.text
    for secret in (SECRET_TEXT, CLIENT_KEY, UPSTREAM_KEY, "bug while sending", "catalog bug"):
        assert secret not in log.text


def test_unexpected_exception_in_a_request_is_a_500_envelope_and_a_clean_log(
    exploding_gateway: ServerThread, log_lines: LogLines
) -> None:
    answers = exchange_on_one_connection(
        exploding_gateway.port, [post("/openai/v1/chat/completions", chat_body()), get("/healthz")]
    )
    _assert_clean_500(answers[0], log_lines)
    assert answers[1][0] == 200, "the 500 dropped the keep-alive connection"


def test_unexpected_exception_outside_the_chat_endpoint_is_never_re_raised(
    exploding_catalog_gateway: ServerThread, log_lines: LogLines
) -> None:
    answers = exchange_on_one_connection(
        exploding_catalog_gateway.port, [get("/api/models"), get("/healthz")]
    )
    _assert_clean_500(answers[0], log_lines)
    assert answers[1][0] == 200, "the 500 dropped the keep-alive connection"


# ------------------------------------------------------------------------------------ hostile bodies (issue 13)


@pytest.fixture(scope="module")
def ezat_gateway(fake_server: tuple[FakeAnthropic, ServerThread]) -> Iterator[ServerThread]:
    with ServerThread(create_app(gateway_settings(fake_server[1].url))) as server:
        yield server


@pytest.fixture(scope="module")
def lyrouter_upstream() -> Iterator[tuple[Any, ServerThread]]:
    from tests.reference_gateway.test_lyrouter_end_to_end import FakeUpstream

    fake = FakeUpstream()
    with ServerThread(fake) as server:
        yield fake, server


@pytest.fixture(scope="module")
def lyrouter_gateway(lyrouter_upstream: tuple[Any, ServerThread]) -> Iterator[ServerThread]:
    from tests.reference_gateway.test_lyrouter_end_to_end import settings

    with ServerThread(create_app(settings(lyrouter_upstream[1].url, default_model=None))) as server:
        yield server


@pytest.fixture
def lyrouter_fake(lyrouter_upstream: tuple[Any, ServerThread]) -> Any:
    lyrouter_upstream[0].script.clear()
    lyrouter_upstream[0].calls.clear()
    return lyrouter_upstream[0]


def _surrogate(field: str) -> bytes:
    """A chat body with a lone surrogate escape in `field` (JSON text: json.dumps cannot write one raw)."""
    parts = {
        "content": '"messages":[{"role":"user","content":"hi \\ud800 there"}]',
        "system": '"messages":[{"role":"system","content":"\\udfff"},{"role":"user","content":"hi"}]',
        "stop": '"messages":[{"role":"user","content":"hi"}],"stop":["\\ud83d"]',
        "tool": '"messages":[{"role":"user","content":"hi"}],'
        '"tools":[{"type":"function","function":{"name":"f\\ud800","parameters":{"type":"object"}}}]',
        "stream": '"messages":[{"role":"user","content":"\\ud800"}],"stream":true',
        "key": '"messages":[{"role":"user","content":"hi"}],"metadata":{"\\ud800":1}',
    }
    return ('{"model":"' + MODEL + '",' + parts[field] + "}").encode()


HOSTILE_BODIES = [
    ("deep-array", b"[" * 1000 + b"]" * 1000, "nested"),
    ("deep-ignored-field", chat_body()[:-1] + b',"user":' + b"[" * 1000 + b"]" * 1000 + b"}", "nested"),
    ("deep-200", chat_body()[:-1] + b',"user":' + b"[" * 200 + b"]" * 200 + b"}", "nested"),
    *(
        (f"surrogate-{f}", _surrogate(f), "surrogate")
        for f in ("content", "system", "stop", "tool", "stream", "key")
    ),
    ("top_p--1e999", chat_body()[:-1] + b',"top_p":-1e999}', "out of range"),
    ("temperature-1e999", chat_body()[:-1] + b',"temperature":1e999}', "out of range"),
    (
        "tool-schema-1e999",
        chat_body()[:-1]
        + b',"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object",'
        b'"properties":{"a":{"type":"number","maximum":1e400}}}}}]}',
        "out of range",
    ),
    (
        "response-format-1e999",
        chat_body()[:-1]
        + b',"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object",'
        b'"properties":{"a":{"minimum":-1e999}},"additionalProperties":false}}}}',
        "out of range",
    ),
    ("nan", chat_body()[:-1] + b',"top_p":NaN}', "NaN"),
]


@pytest.mark.parametrize(
    "body, problem", [(b, p) for _, b, p in HOSTILE_BODIES], ids=[i for i, _, _ in HOSTILE_BODIES]
)
def test_hostile_body_is_a_400_naming_the_problem_and_keeps_the_connection(
    ezat_gateway: ServerThread, fake: FakeAnthropic, body: bytes, problem: str
) -> None:
    import json

    answers = exchange_on_one_connection(
        ezat_gateway.port, [post("/openai/v1/chat/completions", body), get("/healthz")]
    )
    status, _, raw = answers[0]
    assert status == 400, raw
    error = json.loads(raw)["error"]
    assert error["type"] == "invalid_request_error"
    assert error["message"].startswith("We could not parse the JSON body of your request")
    assert problem in error["message"]
    assert fake.received == []
    assert answers[1][0] == 200, "the 400 dropped the keep-alive connection"


@pytest.mark.parametrize(
    "body, problem", [(b, p) for _, b, p in HOSTILE_BODIES[:5]], ids=[i for i, _, _ in HOSTILE_BODIES[:5]]
)
def test_hostile_body_is_lyrouters_invalid_json(
    lyrouter_gateway: ServerThread, lyrouter_fake: Any, body: bytes, problem: str
) -> None:
    import json

    body = body.replace(MODEL.encode(), b"claude-sonnet-5-5")
    answers = exchange_on_one_connection(lyrouter_gateway.port, [post("/v1/chat/completions", body)])
    status, _, raw = answers[0]
    assert status == 400, raw
    error = json.loads(raw)["error"]
    assert (error["code"], error["type"]) == ("invalid_json", "invalid_request_error")
    assert error["message"].startswith("request body must be a JSON object") and problem in error["message"]
    assert lyrouter_fake.calls == []


@pytest.mark.parametrize("canonical", [False, True], ids=["compact", "canonical"])
@pytest.mark.parametrize(
    "value", [float("nan"), float("-inf"), "\ud800", {"k\udfff": 1}], ids=["nan", "-inf", "surrogate", "key"]
)
def test_upstream_body_is_serialised_strictly_or_refused(canonical: bool, value: Any) -> None:
    import asyncio

    from reference_gateway.errors import GatewayError
    from reference_gateway.upstream.client import Endpoint, ErrorStyle, Upstream, UpstreamSettings

    sent: list[bytes] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request.content)
        return httpx.Response(200, json={})

    async def call(stream: bool) -> None:
        upstream = Upstream(
            UpstreamSettings("http://upstream.invalid", "k"),
            transport=httpx.MockTransport(handler),
            style=ErrorStyle(canonical_json=canonical),
        )
        body = {"model": "m", "top_p": value}
        endpoint = Endpoint("openai", "/v1/chat/completions", {})
        try:
            if stream:
                async with upstream.stream_raw(endpoint, body, request_id="r", model="m"):
                    pass
            else:
                await upstream.call(endpoint, body, request_id="r", model="m")
        finally:
            await upstream.aclose()

    for stream in (False, True):
        with pytest.raises(GatewayError) as caught:
            asyncio.run(call(stream))
        assert caught.value.status == 400 and caught.value.type == "invalid_request_error"
    assert sent == [], "invalid JSON reached the upstream"


# ------------------------------------------------------------------------------------ image URLs


def _image_body(url: str) -> bytes:
    import json

    content = [{"type": "text", "text": "what is it?"}, {"type": "image_url", "image_url": {"url": url}}]
    return json.dumps({"model": MODEL, "messages": [{"role": "user", "content": content}]}).encode()


@pytest.mark.parametrize(
    "url",
    [
        "http://[::1",
        "http://127.0.0.1:9/a.png\n",
        "http://127.0.0.1:9/a.png\t",
        "http://127.0.0.1:9/a.png\x00",
    ],
    ids=["unclosed-bracket", "newline", "tab", "nul"],
)
def test_malformed_image_url_is_the_image_400(
    ezat_gateway: ServerThread, fake: FakeAnthropic, url: str
) -> None:
    import json

    answers = exchange_on_one_connection(
        ezat_gateway.port, [post("/openai/v1/chat/completions", _image_body(url)), get("/healthz")]
    )
    status, _, raw = answers[0]
    assert status == 400, raw
    assert json.loads(raw)["error"] == {
        "message": "messages[0].content[1].image_url.url: could not download the image (the URL is malformed)",
        "type": "invalid_request_error",
        "param": "messages[0].content[1].image_url.url",
        "code": None,
    }
    assert fake.received == [] and answers[1][0] == 200


@pytest.mark.e2e
def test_every_failed_download_is_retrieved() -> None:
    """Two downloads failing at once: the second's exception is still retrieved (no "Task exception was never
    retrieved" when the task is collected)."""
    import asyncio
    import gc

    from reference_gateway.errors import GatewayError
    from reference_gateway.translate.anthropic.request import RemoteImage
    from reference_gateway.upstream.images import ImageFetcher

    unretrieved: list[str] = []

    async def run() -> None:
        asyncio.get_running_loop().set_exception_handler(
            lambda _loop, ctx: unretrieved.append(ctx["message"])
        )
        fetcher = ImageFetcher()
        refs = [
            RemoteImage(f"messages[0].content[{i}].image_url.url", u)
            for i, u in enumerate(["ftp://a/b", "http://[::1"])
        ]
        try:
            await fetcher.fetch_all(refs)
        except GatewayError as error:
            assert error.status == 400
        else:
            raise AssertionError("no error")
        finally:
            await fetcher.aclose()
        gc.collect()
        await asyncio.sleep(0)

    asyncio.run(run())
    assert unretrieved == []


# ------------------------------------------------------------------------------------ upstream answers


NOT_A_MESSAGE = [
    {"foo": 1},
    {"type": "message", "role": "assistant", "content": "a string", "stop_reason": "end_turn", "usage": {}},
    {"type": "message", "role": "assistant", "content": [1, 2], "stop_reason": "end_turn"},
    [1, 2],
]


@pytest.mark.parametrize("answer", NOT_A_MESSAGE, ids=["foo", "content-string", "content-numbers", "array"])
def test_upstream_200_that_is_not_a_message_is_a_502(
    ezat_gateway: ServerThread, fake: FakeAnthropic, answer: Any
) -> None:
    import json

    from tests.reference_gateway.conftest import Reply

    fake.reply(Reply(body=answer))
    answers = exchange_on_one_connection(
        ezat_gateway.port, [post("/openai/v1/chat/completions", chat_body())]
    )
    status, _, raw = answers[0]
    assert status == 502, raw
    error = json.loads(raw)["error"]
    assert error["type"] == "server_error" and "upstream" in error["message"]


@pytest.mark.parametrize(
    "model, answer",
    [
        ("gpt-5.5", b'{"foo": 1}'),
        ("gpt-5.5", b'{"choices": "x"}'),
        ("gpt-5.5", b"not json"),
        ("claude-sonnet-5-5", b'{"foo": 1}'),
    ],
    ids=["openai-foo", "openai-choices-string", "openai-not-json", "anthropic-foo"],
)
def test_lyrouter_upstream_200_of_the_wrong_shape_is_a_502(
    lyrouter_gateway: ServerThread, lyrouter_fake: Any, model: str, answer: bytes
) -> None:
    import json

    from tests.reference_gateway.test_lyrouter_end_to_end import Answer

    lyrouter_fake.script.append(Answer(body=answer))
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": "hi"}]}).encode()
    status, _, raw = exchange_on_one_connection(lyrouter_gateway.port, [post("/v1/chat/completions", body)])[
        0
    ]
    assert status == 502, raw
    assert json.loads(raw)["error"]["type"] == "server_error"


# ------------------------------------------------------------------------------------ echoes, logs, headers


def test_echoed_model_is_cut_short(ezat_gateway: ServerThread, fake: FakeAnthropic) -> None:
    import json

    body = json.dumps({"model": "m" * 1_000_000, "messages": [{"role": "user", "content": "hi"}]}).encode()
    status, _, raw = exchange_on_one_connection(
        ezat_gateway.port, [post("/openai/v1/chat/completions", body)]
    )[0]
    assert status == 404
    message = json.loads(raw)["error"]["message"]
    assert message.startswith("The model `mmmm") and len(message) < 300


def test_echoed_path_and_content_type_are_cut_short(
    ezat_gateway: ServerThread, lyrouter_gateway: ServerThread
) -> None:
    status, _, raw = exchange_on_one_connection(ezat_gateway.port, [get("/x" * 20_000)])[0]
    assert status == 404 and len(raw) < 500
    request = post("/v1/chat/completions", b"{}", {"content-type": "text/" + "p" * 20_000})
    status, _, raw = exchange_on_one_connection(lyrouter_gateway.port, [request])[0]
    assert status == 400 and raw.startswith(b"unsupported content-type: text/ppp") and len(raw) < 500


@pytest.mark.parametrize(
    "request_bytes",
    [
        post(
            "/openai/v1/chat/completions",
            (b'{"model": "\\ud800\\nINJECTED-LOG-LINE forged", "messages": []}'),
        ),
        post("/openai/v1/chat/completions", b'{"model": "x\\nINJECTED-LOG-LINE forged", "messages": []}'),
        get("/openai/v1/models%0AINJECTED-LOG-LINE%0d%0aforged"),
    ],
    ids=["surrogate-model", "newline-model", "newline-path"],
)
def test_no_forged_log_lines(ezat_gateway: ServerThread, log_lines: LogLines, request_bytes: bytes) -> None:
    status, _, raw = exchange_on_one_connection(ezat_gateway.port, [request_bytes])[0]
    assert 400 <= status < 500, raw
    log_lines.wait_for(" 4")  # the request line is written after the answer went out
    assert not any(line.startswith("INJECTED") or line.startswith("forged") for line in log_lines.lines), (
        log_lines.text
    )


def test_client_abort_of_a_pending_request_is_quiet(
    ezat_gateway: ServerThread, fake: FakeAnthropic, log_lines: LogLines
) -> None:
    import time

    from tests.reference_gateway.conftest import Reply, message

    fake.reply(Reply(body=message(), delay=1.0))
    with socket.create_connection(("127.0.0.1", ezat_gateway.port)) as sock:
        sock.sendall(post("/openai/v1/chat/completions", chat_body()))
        deadline = time.monotonic() + 5
        while not fake.received and time.monotonic() < deadline:
            time.sleep(0.02)
    log_lines.wait_for("POST /openai/v1/chat/completions")
    time.sleep(0.2)
    assert "InvalidStateError" not in log_lines.text and "Traceback" not in log_lines.text
    assert not any(" 500 " in line for line in log_lines.lines), log_lines.text


@dataclass(frozen=True)
class Served:
    port: int
    log: Path


@pytest.fixture(scope="module")
def served_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`python -m reference_gateway` itself (its uvicorn and logging configuration are under test), on a free
    port, its output in `log`."""
    import os
    import subprocess
    import sys
    import time

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log_path = tmp_path_factory.mktemp("served") / "gateway.log"
    log = log_path.open("wb")
    env = {**os.environ, "REFERENCE_GATEWAY_API_KEYS": CLIENT_KEY}
    cmd = [
        sys.executable,
        "-m",
        "reference_gateway",
        "--upstream-url",
        "http://127.0.0.1:9",
        "--port",
        str(port),
        "--log-level",
        "debug",
    ]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline and proc.poll() is None, "the gateway did not start"
            time.sleep(0.1)
        yield Served(port, log_path)
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


@pytest.mark.e2e
@pytest.mark.parametrize("size", [64 * 1024, 1024 * 1024], ids=["64KB", "1MB"])
def test_huge_authorization_header_is_an_envelope(served_gateway: Served, size: int) -> None:
    import json

    request = post("/openai/v1/chat/completions", chat_body(), {"authorization": "Bearer " + "k" * size})
    status, head, raw = exchange_on_one_connection(served_gateway.port, [request])[0]
    assert status in (401, 431), (status, raw[:200])
    assert b"content-type: application/json" in head.lower()
    assert json.loads(raw)["error"]["type"] == "invalid_request_error"


@pytest.mark.e2e
def test_the_served_gateway_writes_no_forged_log_line(served_gateway: Served) -> None:
    """The command line installs the control-character filter on its handler: the request line (logger
    `reference_gateway`) and every other logger's lines are escaped, e.g. a percent-decoded path."""
    import time

    status, _, _ = exchange_on_one_connection(
        served_gateway.port, [get("/v1/x%0AINJECTED-LOG-LINE%0d%0aforged")]
    )[0]
    assert status == 404
    deadline = time.monotonic() + 5
    while b"INJECTED" not in served_gateway.log.read_bytes():
        assert time.monotonic() < deadline, served_gateway.log.read_text()
        time.sleep(0.05)
    lines = served_gateway.log.read_text().splitlines()
    assert any("/v1/x\\u000aINJECTED-LOG-LINE\\u000d\\u000aforged 404" in line for line in lines), lines
    assert not any(line.startswith(("INJECTED", "forged")) for line in lines), lines
