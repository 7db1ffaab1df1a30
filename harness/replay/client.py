"""The harness's side of the replay upstream's control API: register cases, read the calls they got.

Every transport or protocol failure surfaces as `ReplayError` (the harness reports it as HARNESS_ERROR).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

import httpx
import orjson

from harness.cassette.bodies import parse_json_body
from harness.errors import ReplayError
from harness.exchange import ServedAnswer, UpstreamCall


def _decode(body: str, encoding: str | None) -> bytes:
    if encoding == "base64":
        return base64.b64decode(body)
    return body.encode("utf-8")


def _served(raw: Mapping[str, Any] | None) -> ServedAnswer | None:
    if not raw:
        return None
    return ServedAnswer(
        status=int(raw["status"]),
        headers={str(k).lower(): str(v) for k, v in (raw.get("headers") or {}).items()},
        body=_decode(raw.get("body") or "", raw.get("body_encoding")),
        cassette=raw.get("cassette"),
        interaction=raw.get("interaction"),
        fault=raw.get("fault"),
        provider_refusal=raw.get("provider_refusal"),
        paced_seconds=float(raw.get("paced_seconds") or 0.0),
    )


def _plain(value: Any) -> Any:
    """JSON-ready copy: the frozen spec model may hold read-only mappings and tuples."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def call_from_wire(raw: Mapping[str, Any]) -> UpstreamCall:
    body = _decode(raw.get("body") or "", raw.get("body_encoding"))
    return UpstreamCall(
        method=str(raw["method"]),
        path=str(raw["path"]),
        headers={str(k).lower(): str(v) for k, v in (raw.get("headers") or {}).items()},
        body=body,
        json=parse_json_body(body),
        served=_served(raw.get("served")),
        query=str(raw.get("query") or ""),
    )


def _calls_of(data: Any, marker: str) -> tuple[UpstreamCall, ...]:
    try:
        return tuple(call_from_wire(c) for c in data["calls"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ReplayError(f"malformed calls answer for {marker}: {exc}") from exc


class ReplayClient:
    def __init__(
        self, base_url: str, timeout: float = 10.0, transport: httpx.BaseTransport | None = None
    ) -> None:
        self.base_url = base_url.rstrip("/")
        # Plain http (the loopback case) uses no TLS at all; skipping the CA bundle load saves ~0.2 s per client.
        verify = not self.base_url.startswith("http://")
        self._http = httpx.Client(base_url=self.base_url, timeout=timeout, transport=transport, verify=verify)

    def _request(self, method: str, path: str, *, expect: tuple[int, ...] = (200,), **kw: Any) -> Any:
        try:
            try:
                resp = self._http.request(method, path, **kw)
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError):
                # A kept-alive connection the server closed as this request went out (idle keep-alive, a busy
                # machine): every control call is idempotent (register overwrites), so once more, on a new one.
                resp = self._http.request(method, path, **kw)
        except httpx.HTTPError as exc:
            raise ReplayError(f"replay upstream at {self.base_url} unreachable: {exc}") from exc
        if resp.status_code not in expect:
            try:
                problem = resp.json().get("error", resp.text)
            except ValueError:
                problem = resp.text[:300]
            raise ReplayError(f"{method} {path}: HTTP {resp.status_code}: {problem}", resp.status_code)
        try:
            return orjson.loads(resp.content)  # a case's calls can carry tens of megabytes of bodies
        except ValueError as exc:
            raise ReplayError(f"{method} {path}: answer is not JSON") from exc

    def register(self, marker: str, rule_id: str, upstream: Mapping[str, Any] | None) -> None:
        payload = {"marker": marker, "rule": rule_id, "upstream": _plain(upstream)}
        self._request("POST", "/__gc/cases", json=payload, expect=(201,))

    def calls(self, marker: str) -> tuple[UpstreamCall, ...]:
        data = self._request("GET", "/__gc/calls", params={"marker": marker})
        return _calls_of(data, marker)

    def take(self, marker: str) -> tuple[UpstreamCall, ...]:
        """The case's calls, and the case forgotten: `calls()` then `forget()` in one request."""
        data = self._request("DELETE", "/__gc/cases", params={"marker": marker, "calls": "1"})
        return _calls_of(data, marker)

    def forget(self, marker: str | None = None) -> None:
        """Forget one case, or every case when `marker` is None."""
        self._request("DELETE", "/__gc/cases", params={"marker": marker} if marker is not None else None)

    def diagnostics(self) -> list[dict[str, Any]]:
        return list(self._request("GET", "/__gc/diagnostics")["diagnostics"])

    def clear_diagnostics(self) -> None:
        self._request("DELETE", "/__gc/diagnostics")

    def fetches(self) -> list[dict[str, Any]]:
        return list(self._request("GET", "/__gc/fetches")["fetches"])

    def health(self) -> bool:
        try:
            self._request("GET", "/__gc/health")
        except ReplayError:
            return False
        return True

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ReplayClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
