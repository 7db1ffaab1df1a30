"""Image downloads: limits, byte sniffing, and the SSRF guard (every refused address class, redirects to private
addresses, a DNS name resolving to loopback) — asserting that no connection is made to any of them."""

from __future__ import annotations

import asyncio
import base64
import ipaddress
import socket
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import httpx
import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from reference_gateway.errors import GatewayError
from reference_gateway.translate.anthropic.request import RemoteImage
from reference_gateway.upstream.images import AllowList, ImageFetcher, ImageLimits, is_public, sniff_image
from tests.reference_gateway.conftest import FakeAnthropic, ServerThread

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 32
GIF = b"GIF89a" + b"\x00" * 16
WEBP = b"RIFF\x00\x00\x00\x00WEBPVP8 " + b"\x00" * 16


class CountingListener:
    """A TCP listener that only counts connection attempts."""

    def __init__(self, host: str) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind((host, 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(1)
        self.sock.close()


class Recording(httpx.AsyncBaseTransport):
    """Wraps the real transport and records every request that reaches it (i.e. every connection attempt)."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.requests: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _image_app() -> Starlette:
    async def image(request: Request) -> Response:
        kind = request.path_params["kind"]
        blobs = {"png": PNG, "jpeg": JPEG, "gif": GIF, "webp": WEBP, "text": b"<html>not an image</html>"}
        if kind == "big":
            return Response(b"\x89PNG\r\n\x1a\n" + b"\x00" * (3 * 1024 * 1024))
        if kind in blobs:
            # A lying content-type: the gateway sniffs the bytes.
            return Response(blobs[kind], media_type="application/octet-stream")
        return Response(b"missing", status_code=404)

    async def redirect(request: Request) -> Response:
        return RedirectResponse(request.query_params["to"], status_code=302)

    async def loop(request: Request) -> Response:
        n = int(request.path_params["n"])
        return RedirectResponse(f"/loop/{n + 1}", status_code=302)

    async def slow(_request: Request) -> Response:
        await asyncio.sleep(2)
        return Response(PNG)

    return Starlette(
        routes=[
            Route("/img/{kind}", image),
            Route("/redirect", redirect),
            Route("/loop/{n}", loop),
            Route("/slow", slow),
        ]
    )


@pytest.fixture(scope="module")
def image_server() -> Iterator[ServerThread]:
    with ServerThread(_image_app()) as server:
        yield server


@pytest.fixture
def listener() -> Iterator[CountingListener]:
    counting = CountingListener("127.0.0.1")
    yield counting
    counting.close()


def fetch(
    urls: Sequence[str],
    *,
    allow: Sequence[str] = (),
    resolver: Any = None,
    limits: ImageLimits | None = None,
) -> tuple[dict[str, Any] | GatewayError, Recording]:
    recording = Recording()

    async def go() -> dict[str, Any] | GatewayError:
        fetcher = ImageFetcher(
            limits=limits, allow=AllowList.parse(allow), resolver=resolver, transport=recording
        )
        try:
            refs = [RemoteImage(f"messages[0].content[{i}].image_url.url", u) for i, u in enumerate(urls)]
            return dict(await fetcher.fetch_all(refs))
        except GatewayError as error:
            return error
        finally:
            await fetcher.aclose()

    return asyncio.run(go()), recording


REFUSED = [
    "127.0.0.1",
    "127.8.9.10",
    "10.0.0.1",
    "172.16.5.4",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "240.0.0.1",
    "255.255.255.255",
    "::1",
    "::",
    "fe80::1",
    "fc00::1",
    "fd12:3456::1",
    "ff02::1",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "2002:7f00:1::1",
]


@pytest.mark.parametrize("address", REFUSED)
def test_is_public_refuses(address: str) -> None:
    assert not is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
def test_is_public_accepts(address: str) -> None:
    assert is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", REFUSED)
def test_literal_addresses_are_refused_without_connecting(address: str) -> None:
    host = f"[{address}]" if ":" in address else address
    result, recording = fetch([f"http://{host}:9/x.png"])
    assert isinstance(result, GatewayError) and result.status == 400
    assert (
        result.message
        == "messages[0].content[0].image_url.url: could not download the image (the host is not a public address)"
    )
    assert result.param == "messages[0].content[0].image_url.url"
    assert recording.requests == []


def test_dns_name_resolving_to_loopback_is_refused(listener: CountingListener) -> None:
    asked: list[str] = []

    async def resolver(host: str, port: int) -> list[str]:
        asked.append(host)
        return ["127.0.0.1"]

    result, recording = fetch([f"http://images.example.com:{listener.port}/a.png"], resolver=resolver)
    assert isinstance(result, GatewayError) and "not a public address" in result.message
    assert asked == ["images.example.com"]
    assert recording.requests == [] and listener.accepted == 0


def test_dns_name_with_one_private_answer_is_refused(listener: CountingListener) -> None:
    async def resolver(host: str, port: int) -> list[str]:
        return ["93.184.216.34", "10.0.0.7"]

    result, recording = fetch([f"http://mixed.example.com:{listener.port}/a.png"], resolver=resolver)
    assert isinstance(result, GatewayError) and "not a public address" in result.message
    assert recording.requests == []


@pytest.mark.parametrize(
    "target", ["http://10.1.2.3/x.png", "http://[::ffff:192.168.0.1]/x.png", "http://metadata.internal/x"]
)
def test_redirect_to_private_address_is_refused(image_server: ServerThread, target: str) -> None:
    async def resolver(host: str, port: int) -> list[str]:
        return ["169.254.169.254"]

    url = str(httpx.URL(f"{image_server.url}/redirect", params={"to": target}))
    result, recording = fetch([url], allow=["127.0.0.1/32"], resolver=resolver)
    assert isinstance(result, GatewayError) and "not a public address" in result.message
    assert [r.url.path for r in recording.requests] == ["/redirect"]  # the first hop only


def test_redirect_to_other_loopback_listener_never_connects(image_server: ServerThread) -> None:
    other = CountingListener("127.0.0.2")
    try:
        url = str(
            httpx.URL(f"{image_server.url}/redirect", params={"to": f"http://127.0.0.2:{other.port}/x.png"})
        )
        result, recording = fetch([url], allow=["127.0.0.1/32"])
        assert isinstance(result, GatewayError)
        assert other.accepted == 0 and len(recording.requests) == 1
    finally:
        other.close()


def test_connects_to_the_checked_address_with_the_original_host(image_server: ServerThread) -> None:
    calls: list[str] = []

    async def resolver(host: str, port: int) -> list[str]:
        calls.append(host)
        return ["127.0.0.1"]

    result, recording = fetch(
        [f"http://pics.example.com:{image_server.port}/img/png"],
        allow=["pics.example.com"],
        resolver=resolver,
    )
    assert isinstance(result, dict), result
    assert calls == ["pics.example.com"]
    sent = recording.requests[0]
    assert sent.url.host == "127.0.0.1"
    assert sent.headers["host"] == f"pics.example.com:{image_server.port}"


@pytest.mark.parametrize(
    ("kind", "media_type"),
    [("png", "image/png"), ("jpeg", "image/jpeg"), ("gif", "image/gif"), ("webp", "image/webp")],
)
def test_downloads_are_sniffed(image_server: ServerThread, kind: str, media_type: str) -> None:
    result, _ = fetch([f"{image_server.url}/img/{kind}"], allow=["127.0.0.1"])
    assert isinstance(result, dict)
    image = result["messages[0].content[0].image_url.url"]
    assert image.media_type == media_type
    assert sniff_image(base64.b64decode(image.data)) == media_type


@pytest.mark.parametrize(
    ("path", "limits", "reason"),
    [
        ("/img/missing", None, "HTTP 404"),
        ("/img/text", None, "not a JPEG, PNG, GIF or WebP image"),
        ("/img/big", ImageLimits(max_bytes=1024 * 1024), "larger than 1 MB"),
        ("/loop/0", None, "more than 3 redirects"),
        ("/slow", ImageLimits(timeout=0.3), "timed out after 0.3 seconds"),
    ],
    ids=["404", "not-an-image", "too-big", "redirect-loop", "timeout"],
)
@pytest.mark.e2e
def test_download_failures(
    image_server: ServerThread, path: str, limits: ImageLimits | None, reason: str
) -> None:
    result, _ = fetch([f"{image_server.url}{path}"], allow=["127.0.0.1"], limits=limits)
    assert isinstance(result, GatewayError)
    assert result.message == f"messages[0].content[0].image_url.url: could not download the image ({reason})"


def test_total_budget_and_url_count(image_server: ServerThread) -> None:
    budget = ImageLimits(max_total_bytes=5 * 1024 * 1024)
    result, _ = fetch([f"{image_server.url}/img/big"] * 2, allow=["127.0.0.1"], limits=budget)
    assert isinstance(result, GatewayError) and "exceed 5 MB" in result.message
    result, recording = fetch([f"{image_server.url}/img/png"] * 21, allow=["127.0.0.1"])
    assert isinstance(result, GatewayError)
    assert result.message.startswith("messages[0].content[20].image_url.url: too many image URLs")
    assert recording.requests == []


def test_gateway_downloads_and_names_the_failed_part(
    client: openai.OpenAI, fake: FakeAnthropic, image_server: ServerThread
) -> None:
    content: Any = [
        {"type": "text", "text": "What is in these?"},
        {"type": "image_url", "image_url": {"url": f"{image_server.url}/img/jpeg"}},
        {"type": "image_url", "image_url": {"url": f"{image_server.url}/img/png", "detail": "low"}},
    ]
    client.chat.completions.create(
        model="anthropic/claude-sonnet-5-5", messages=[{"role": "user", "content": content}]
    )
    blocks = fake.last["messages"][0]["content"]
    assert [b["type"] for b in blocks] == ["text", "image", "image"]
    assert blocks[1]["source"] == {
        "type": "base64",
        "media_type": "image/jpeg",
        "data": base64.b64encode(JPEG).decode(),
    }
    assert blocks[2]["source"]["media_type"] == "image/png"

    fake.reset()
    content[2] = {"type": "image_url", "image_url": {"url": f"{image_server.url}/img/nothing"}}
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(
            model="anthropic/claude-sonnet-5-5", messages=[{"role": "user", "content": content}], stream=True
        )
    assert info.value.body == {
        "message": "messages[0].content[2].image_url.url: could not download the image (HTTP 404)",
        "type": "invalid_request_error",
        "param": "messages[0].content[2].image_url.url",
        "code": None,
    }
    assert fake.received == []
