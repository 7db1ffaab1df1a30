"""Downloads http(s) image URLs for the inline-only models, with EZAT's limits and an SSRF guard.

The guard resolves each host itself, refuses every non-public address (IPv4 and IPv6, mapped forms included)
on every redirect hop, and connects to the address it checked: the request goes to the IP literal with the
original `Host` header and TLS server name, so there is no second DNS lookup to race.
"""

from __future__ import annotations

import asyncio
import base64
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import httpx

from reference_gateway.errors import invalid_request
from reference_gateway.translate.content import InlineImage, RemoteImage

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
MB = 1024 * 1024
_REDIRECTS = (301, 302, 303, 307, 308)


@dataclass(frozen=True)
class ImageLimits:
    """EZAT "Images and PDFs": 10 MB per image, 20 image URLs and 32 MB per request, 15 s each, 3 redirects."""

    max_bytes: int = 10 * MB
    max_urls: int = 20
    max_total_bytes: int = 32 * MB
    timeout: float = 15.0
    max_redirects: int = 3


@dataclass(frozen=True)
class AllowList:
    """Hosts exempt from the public-address rule (for tests and private deployments): names and networks."""

    networks: tuple[IPNetwork, ...] = ()
    hosts: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, entries: Iterable[str]) -> AllowList:
        networks: list[IPNetwork] = []
        hosts: set[str] = set()
        for entry in entries:
            try:
                networks.append(ipaddress.ip_network(entry.strip(), strict=False))
            except ValueError:
                hosts.add(entry.strip().lower().rstrip("."))
        return cls(tuple(networks), frozenset(hosts))

    def allows(self, host: str, address: IPAddress) -> bool:
        return host.lower().rstrip(".") in self.hosts or any(address in net for net in self.networks)


def is_public(address: IPAddress) -> bool:
    """Only globally routable unicast addresses. IPv4 inside IPv6 (`::ffff:127.0.0.1`, 6to4) is judged as IPv4."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return is_public(address.ipv4_mapped)
        if address.sixtofour is not None and not is_public(address.sixtofour):
            return False
    return address.is_global and not (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
    )


async def system_resolver(host: str, port: int) -> Sequence[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


class _DownloadError(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def sniff_image(data: bytes) -> str | None:
    """The media type from the first bytes (EZAT checks the bytes, not the content-type)."""
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _parse_url(url: str, base: httpx.URL | None = None) -> httpx.URL:
    """The URL (joined to `base` for a redirect), or the download failure for one httpx cannot read
    (`http://[::1`, control characters)."""
    try:
        return base.join(url) if base is not None else httpx.URL(url)
    except (httpx.InvalidURL, ValueError) as exc:
        raise _DownloadError("the URL is malformed") from exc


class _Budget:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0


class ImageFetcher:
    def __init__(
        self,
        *,
        limits: ImageLimits | None = None,
        allow: AllowList | None = None,
        resolver: Resolver | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.limits = limits or ImageLimits()
        self.allow = allow or AllowList()
        self.resolver: Resolver = resolver or system_resolver
        self._client = httpx.AsyncClient(
            transport=transport,
            follow_redirects=False,
            trust_env=False,
            timeout=httpx.Timeout(self.limits.timeout),
            headers={
                "accept": "image/jpeg, image/png, image/gif, image/webp",
                "user-agent": "reference-gateway",
            },
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def fetch_all(self, refs: Sequence[RemoteImage]) -> Mapping[str, InlineImage]:
        """Download every image concurrently; the first failure (in request order) is the 400 returned."""
        if len(refs) > self.limits.max_urls:
            extra = refs[self.limits.max_urls]
            raise invalid_request(
                f"{extra.path}: too many image URLs; at most {self.limits.max_urls} per request", extra.path
            )
        budget = _Budget(self.limits.max_total_bytes)
        tasks = [asyncio.ensure_future(self._fetch_with_timeout(ref, budget)) for ref in refs]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        finally:
            pending = [task for task in tasks if not task.done()]
            for task in pending:
                task.cancel()
            # Let the cancellations land: a task that is only asked to stop has no result or exception yet. Then
            # retrieve every exception, not only the one raised below (also when this call is cancelled): an
            # unretrieved one is logged as "Task exception was never retrieved" when its task is collected.
            await asyncio.gather(*pending, return_exceptions=True)
            failures = [task.exception() if task.done() and not task.cancelled() else None for task in tasks]
        results: dict[str, InlineImage] = {}
        for ref, task, error in zip(refs, tasks, failures, strict=True):
            if task.cancelled():
                continue
            if isinstance(error, _DownloadError):
                raise invalid_request(f"{ref.path}: could not download the image ({error.reason})", ref.path)
            if error is not None:
                raise error
            results[ref.path] = task.result()
        if len(results) != len(refs):  # pragma: no cover - a cancelled task implies a failure raised above
            raise invalid_request(f"{refs[0].path}: could not download the image", refs[0].path)
        return results

    async def _fetch_with_timeout(self, ref: RemoteImage, budget: _Budget) -> InlineImage:
        try:
            return await asyncio.wait_for(self._fetch(ref.url, budget), self.limits.timeout)
        except asyncio.TimeoutError as exc:
            raise _DownloadError(f"timed out after {self.limits.timeout:g} seconds") from exc
        except httpx.HTTPError as exc:
            raise _DownloadError("the connection failed") from exc

    async def _checked_address(self, host: str, port: int) -> str:
        """Resolve `host` once and return the address to connect to; every address it has must be allowed."""
        try:
            literal: IPAddress | None = ipaddress.ip_address(host)
        except ValueError:
            literal = None
        if literal is not None:
            candidates: Sequence[str] = [str(literal)]
        else:
            try:
                candidates = await self.resolver(host, port)
            except OSError as exc:
                raise _DownloadError("the host name could not be resolved") from exc
        if not candidates:
            raise _DownloadError("the host name could not be resolved")
        addresses: list[IPAddress] = []
        for candidate in candidates:
            address = ipaddress.ip_address(candidate.split("%", 1)[0])
            if not (self.allow.allows(host, address) or is_public(address)):
                # One non-public answer is enough to refuse: the name could be rebound to it at any time.
                raise _DownloadError("the host is not a public address")
            addresses.append(address)
        return str(addresses[0])

    async def _fetch(self, url: str, budget: _Budget) -> InlineImage:
        current = _parse_url(url)
        for _hop in range(self.limits.max_redirects + 1):
            if current.scheme not in ("http", "https") or not current.host:
                raise _DownloadError("only http and https URLs can be downloaded")
            port = current.port or (443 if current.scheme == "https" else 80)
            address = await self._checked_address(current.host, port)
            host_header = current.netloc.decode("ascii").rsplit("@", 1)[-1]
            request = self._client.build_request(
                "GET",
                current.copy_with(host=address),
                headers={"host": host_header},
                extensions={"sni_hostname": current.host} if current.scheme == "https" else {},
            )
            response = await self._client.send(request, stream=True)
            try:
                if response.status_code in _REDIRECTS and "location" in response.headers:
                    current = _parse_url(response.headers["location"], base=current)
                    continue
                if response.status_code != 200:
                    raise _DownloadError(f"HTTP {response.status_code}")
                data = await self._read(response, budget)
            finally:
                await response.aclose()
            media_type = sniff_image(data)
            if media_type is None:
                raise _DownloadError("not a JPEG, PNG, GIF or WebP image")
            return InlineImage(media_type, base64.b64encode(data).decode("ascii"))
        raise _DownloadError(f"more than {self.limits.max_redirects} redirects")

    async def _read(self, response: httpx.Response, budget: _Budget) -> bytes:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.limits.max_bytes:
            raise _DownloadError(f"larger than {self.limits.max_bytes // MB} MB")
        data = bytearray()
        async for chunk in response.aiter_bytes():
            data += chunk
            budget.used += len(chunk)
            if len(data) > self.limits.max_bytes:
                raise _DownloadError(f"larger than {self.limits.max_bytes // MB} MB")
            if budget.used > budget.limit:
                raise _DownloadError(f"the images of this request exceed {budget.limit // MB} MB")
        return bytes(data)
