"""The loopback file server under `/__gc/files/` (the harness's `${images_url}`): fixtures, redirects,
a 10 MiB + 1 byte body, a PNG of any size up to that (`sized.png?bytes=N`), a slow body."""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from harness.replay.fixtures import BIG_FILE_BYTES, PNG_IHDR_1X1, PNG_SIGNATURE, static_files, tiny_png
from harness.replay.sending import DisconnectWatch


class _SlowBody(Response):
    """tiny.png after a delay that ends early when the client leaves (so shutdown never waits on it)."""

    def __init__(self, delay: float) -> None:
        super().__init__(status_code=200)
        self.delay = delay

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        watch = DisconnectWatch(receive)
        try:
            if await watch.sleep(self.delay):
                return
            data = tiny_png()
            headers = [(b"content-type", b"image/png"), (b"content-length", str(len(data)).encode())]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": data, "more_body": False})
        finally:
            watch.close()


class _BigBody(Response):
    """A PNG signature and IHDR chunk followed by zero filler, `size` bytes in all, sent in 64 KiB pieces."""

    def __init__(self, size: int = BIG_FILE_BYTES) -> None:
        super().__init__(status_code=200)
        self.size = size

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        head = PNG_SIGNATURE + PNG_IHDR_1X1
        headers = [(b"content-type", b"image/png"), (b"content-length", str(self.size).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": head, "more_body": True})
        left = self.size - len(head)
        block = b"\x00" * 65536
        while left > 0:
            piece = block[: min(left, len(block))]
            await send({"type": "http.response.body", "body": piece, "more_body": True})
            left -= len(piece)
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def serve_file(request: Request, name: str) -> Response:
    base = f"{str(request.base_url).rstrip('/')}/__gc/files"
    fixed = static_files()
    if name in fixed:
        data, ctype = fixed[name]
        return Response(data, 200, media_type=ctype)
    if name == "big.png":
        return _BigBody()
    if name == "sized.png":
        # EZAT's 32 MB of downloads per request, under its 10 MB per image: several images of N bytes each.
        size = request.query_params.get("bytes", "")
        if not size.isdigit() or not len(PNG_SIGNATURE + PNG_IHDR_1X1) <= int(size) <= BIG_FILE_BYTES:
            return Response(
                f"bytes must be an integer from {len(PNG_SIGNATURE + PNG_IHDR_1X1)} to {BIG_FILE_BYTES}\n",
                400,
                media_type="text/plain",
            )
        return _BigBody(int(size))
    if name == "slow.png":
        try:
            delay = float(request.query_params.get("delay", "20"))
        except ValueError:
            return Response("delay must be a number\n", 400, media_type="text/plain")
        return _SlowBody(delay)
    if name == "redirect-to":
        url = request.query_params.get("url")
        if not url:
            return Response("redirect-to needs ?url=\n", 400, media_type="text/plain")
        return Response(b"", 302, headers={"location": url})
    m = re.fullmatch(r"redirect/(\d+)/(.+)", name)
    if m:
        n, target = int(m.group(1)), m.group(2)
        if n == 0:
            return await serve_file(request, target)
        nxt = f"{base}/{target}" if n == 1 else f"{base}/redirect/{n - 1}/{target}"
        return Response(b"", 302, headers={"location": nxt})
    return Response(f"no fixture named {name}\n", 404, media_type="text/plain")
