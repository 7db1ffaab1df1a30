"""Before any rule: is anything answering at the gateway URL, is it the surface's base path, does the gateway take the
key, does it answer its API at all, and (live) does it serve the model the rules will name?

The first request is `POST {base}/{endpoint}` (the profile's surface: `chat/completions`, ...) with an empty JSON
object: the path every rule uses, a body every gateway refuses before routing (so nothing reaches a provider). Every
answer is read within a timeout and with a cap (READ_CAP: a 300 MB body is never read into memory) and classified by
its status, content type, JSON or not, and size (`describe`). Then:

- bad configuration (PreflightError, exit 3, one line): nothing listening; 401/403 (the key); a 404/405 that is not
  about the model (no endpoint here: the base path, or a URL naming the endpoint itself); a redirect; a success that
  is not the API's (an HTML page, binary bytes, a body no answer to an empty request is as large as);
- an outage (GatewayUnavailable, exit 2, one line): the gateway took the connection and sent no answer within the
  timeout, or cut it without one, or answers 5xx with something that is not the API's (a proxy's `502 Bad Gateway`
  page) to the empty request and again to a real one. An outage is not a verdict: CI must tell one from a
  regression, so no rule runs (issue 48);
- live (`check_model`): one real request with the model the rules name; an answer saying the gateway does not know
  it is exit 3 naming the role, before the budget is spent on it.

Any other answer is the rules' business. The one 404 that is not a missing endpoint is an envelope about the model
(`code`/`param` naming it): a gateway that read the empty body and found no model is the endpoint.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from harness.errors import GatewayUnavailable, PreflightError
from harness.families import FAMILIES
from harness.outcomes import KEY_ENV
from harness.surfaces import BUILT_IN, chat_completions
from harness.surfaces.base import Surface

TIMEOUT = 10.0
READ_CAP = 64 * 1024  # bytes of an answer the preflight reads: an answer to it is a few hundred
CHAT = chat_completions.SURFACE
_NOT_JSON = object()


@dataclass(frozen=True)
class ProbeAnswer:
    status: int | None
    body: bytes = b""  # at most READ_CAP bytes of it
    content_type: str = ""
    error: str = ""  # why there was no answer, or no whole one: the transport error, the timeout
    size: int | None = None  # the body's length, announced or read (None: not known)
    capped: bool = False  # longer than READ_CAP: the rest was not read
    connected: bool = (
        False  # the connection was made: an answer that never came is an outage, not a wrong URL
    )
    location: str = ""  # a redirect's target


def _parsed(answer: ProbeAnswer) -> Any:
    if answer.capped or answer.error:
        return _NOT_JSON
    try:
        return json.loads(answer.body)
    except (UnicodeDecodeError, ValueError):
        return _NOT_JSON


def is_api(answer: ProbeAnswer) -> bool:
    """An answer an API gives: a JSON document, or an event stream."""
    return _parsed(answer) is not _NOT_JSON or "event-stream" in answer.content_type.lower()


def _is_openai_error(body: bytes) -> bool:
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        return False
    return isinstance(data, dict) and isinstance(data.get("error"), dict)


def _about_the_model(body: bytes, model: str | None = None) -> bool:
    """An error envelope whose code or param names the model (or that quotes the model id): the endpoint answered."""
    if not _is_openai_error(body):
        return False
    error = json.loads(body)["error"]
    if any("model" in str(error.get(k) or "").lower() for k in ("code", "param")):
        return True
    return bool(model) and str(model) in str(error.get("message") or "")


def _error_message(body: bytes) -> str:
    try:
        error = json.loads(body)["error"]
        return f": {error.get('code') or error.get('type') or ''} {error.get('message') or ''}".rstrip()
    except (UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError):
        return ""


def _bytes(n: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:.0f} {unit}"
    return f"{n:,} bytes"


_TITLE = re.compile(rb"<(?:title|h1)[^>]*>\s*([^<]{1,80})", re.I)


def describe(answer: ProbeAnswer) -> str:
    """What came back, in a few words: `an HTML page (“502 Bad Gateway”)`, `4 KB of binary
    application/octet-stream`, `more than 64 KB of application/json (300 MB announced)`, `JSON`, `an empty body`."""
    kind = answer.content_type.split(";")[0].strip() or "no content type"
    if answer.capped:
        announced = f" ({_bytes(answer.size)} announced)" if answer.size else ""
        return f"more than {_bytes(READ_CAP)} of {kind}{announced}"
    body = answer.body
    if not body:
        return "an empty body" + (f" ({answer.error})" if answer.error else "")
    parsed = _parsed(answer)
    if parsed is not _NOT_JSON:
        return "an error envelope" + _error_message(body) if _is_openai_error(body) else f"JSON ({kind})"
    head = body[:2048]
    if "html" in kind.lower() or head.lstrip()[:1] == b"<":
        title = _TITLE.search(head)
        said = title.group(1).decode("utf-8", "replace").strip() if title else ""
        return "an HTML page" + (f" (“{said}”)" if said else "")
    cut = f", cut: {answer.error}" if answer.error else ""
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return f"{_bytes(answer.size or len(body))} of binary {kind}{cut}"
    if any(ord(c) < 32 and c not in "\r\n\t" for c in text):
        return f"{_bytes(answer.size or len(body))} of binary {kind}{cut}"
    shown = " ".join(text.split())[:60]
    return f"{_bytes(answer.size or len(body))} of {kind} (“{shown}”){cut}"


def _endpoint_in(url: str) -> str | None:
    """The endpoint a URL already names (`/v1/messages`), which --gateway-url must not."""
    path = urlsplit(url).path.rstrip("/")
    endpoints = sorted({s.endpoint for s in BUILT_IN.values()}, key=len, reverse=True)
    return next((e for e in endpoints if path.endswith("/" + e)), None)


def diagnose(
    url: str, answer: ProbeAnswer, *, key_given: bool, base_path: str | None, surface: Surface = CHAT
) -> str | None:
    """The one-line diagnosis of bad configuration from the first probe's answer, or None. Pure."""
    where = f"POST {url.rstrip('/')}/{surface.endpoint}"
    example_path = urlsplit(surface.base_url_example).path
    example = f"http://127.0.0.1:8080{base_path or example_path}"
    if answer.status is None and not answer.connected:
        return f"nothing answers at {url}: {answer.error} (is the gateway running, and is this its address?)"
    if answer.status is None:
        return None  # connected, no answer: an outage (outage())
    if answer.status in (401, 403):
        if not key_given:
            return (
                f"{url} answers {answer.status} and no key was given: set {KEY_ENV} or pass --gateway-key"
                f"{_error_message(answer.body)}"
            )
        return f"{url} refused the key (HTTP {answer.status}{_error_message(answer.body)}): check {KEY_ENV} / --gateway-key"
    if 300 <= answer.status < 400:
        to = f" to {answer.location}" if answer.location else ""
        return (
            f"{where} answers {answer.status} (a redirect{to}): give --gateway-url the address the gateway answers "
            f"at itself, e.g. {example}"
        )
    if answer.status in (404, 405) and not _about_the_model(answer.body):
        kind = describe(answer)
        named = _endpoint_in(url)
        if named:
            hint = f"--gateway-url names the endpoint itself (/{named}): drop it, the rules add /{surface.endpoint}"
        elif example_path not in ("", "/"):
            hint = f"did you forget {example_path}?"
        else:
            hint = "is this the gateway's root?"
        if base_path:
            hint += f" (the documented base path is {base_path})"
        return (
            f"no {surface.label} endpoint at this URL: {where} answers {answer.status} with {kind}; {hint} "
            f"--gateway-url is the base URL as an SDK takes it, e.g. {example}"
        )
    if (200 <= answer.status < 300 or answer.status == 501) and not is_api(answer):
        # a page where the API should be (a web UI, a static server: 501 is "POST not implemented here")
        return (
            f"{where} answers {answer.status} with {describe(answer)}, not an answer of the {surface.title} API: is "
            f"--gateway-url the gateway's API base URL (e.g. {example})?"
        )
    return None


def outage(url: str, answer: ProbeAnswer, surface: Surface = CHAT) -> str | None:
    """The one-line account of a gateway that does not answer its API at all (taken the connection and sent
    nothing, cut it, an error page 5xx), or None. Pure."""
    where = f"POST {url.rstrip('/')}/{surface.endpoint}"
    if answer.status is None and answer.connected:
        return f"the gateway does not answer its API: {where} got no answer ({answer.error})"
    if answer.status is not None and answer.status >= 500 and not is_api(answer):
        return f"the gateway does not answer its API: {where} answers {answer.status} with {describe(answer)}"
    return None


_OUTAGE_TAIL = "; an outage, not a verdict: no rule was run"


def _client(gateway_url: str) -> httpx.Client:
    # Plain http needs no CA bundle (loading one is a fifth of a second before the first rule).
    return httpx.Client(trust_env=False, follow_redirects=False, verify=not gateway_url.startswith("http://"))


def _exc_text(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def send_probe(
    client: httpx.Client, url: str, body: bytes, headers: Mapping[str, str], timeout: float
) -> ProbeAnswer:
    """POST `body` to `url`; the answer read for at most `timeout` seconds and READ_CAP bytes."""
    deadline = time.monotonic() + timeout
    try:
        with client.stream("POST", url, content=body, headers=dict(headers), timeout=timeout) as response:
            chunks: list[bytes] = []
            read, capped, error = 0, False, ""
            try:
                for chunk in response.iter_bytes():
                    chunks.append(chunk)
                    read += len(chunk)
                    if read > READ_CAP:
                        capped = True
                        break
                    if time.monotonic() > deadline:
                        error = f"still coming after {timeout:g} s"
                        break
            except httpx.TimeoutException:
                error = f"no more of it within {timeout:g} s"
            except httpx.HTTPError as exc:
                error = f"the connection was cut: {_exc_text(exc)}"
            announced = response.headers.get("content-length", "")
            size = int(announced) if announced.isdigit() else None if capped or error else read
            return ProbeAnswer(
                response.status_code,
                b"".join(chunks)[:READ_CAP],
                response.headers.get("content-type", ""),
                error,
                size,
                capped,
                True,
                response.headers.get("location", ""),
            )
    except httpx.ConnectTimeout:
        return ProbeAnswer(None, error=f"connect timeout after {timeout:g}s")
    except (httpx.ConnectError, httpx.UnsupportedProtocol) as exc:
        return ProbeAnswer(None, error=_exc_text(exc))
    except httpx.TimeoutException:
        return ProbeAnswer(None, error=f"none within {timeout:g} s of sending", connected=True)
    except httpx.HTTPError as exc:
        return ProbeAnswer(None, error=f"the connection was closed: {_exc_text(exc)}", connected=True)


def _headers(key: str | None, surface: Surface | None = None) -> dict[str, str]:
    headers = {"content-type": "application/json", **(surface.request_headers if surface else {})}
    if key:
        headers["authorization"] = f"Bearer {key}"
    return headers


def probe(
    client: httpx.Client, gateway_url: str, key: str | None, timeout: float = TIMEOUT, surface: Surface = CHAT
) -> ProbeAnswer:
    """The empty request: `POST {base}/{endpoint}` with `{}`."""
    url = gateway_url.rstrip("/") + "/" + surface.endpoint
    return send_probe(client, url, b"{}", _headers(key), timeout)


def hello(surface: Surface, model: str | None) -> bytes:
    """The smallest real request of the surface (its `hello`), naming `model`."""
    return json.dumps({"model": model or "", **surface.hello}).encode()


def check_url(gateway_url: str) -> None:
    """A URL without an http(s) scheme is a typo, not a gateway that is down: say so (exit 3)."""
    parts = urlsplit(gateway_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise PreflightError(
            f"--gateway-url {gateway_url!r}: expected an http(s) URL with a scheme and a host, "
            "e.g. http://127.0.0.1:8080/v1"
        )


def preflight(
    gateway_url: str,
    key: str | None,
    base_path: str | None = None,
    timeout: float = TIMEOUT,
    surface: Surface = CHAT,
    model: str | None = None,
) -> None:
    """PreflightError (exit 3) with a one-line diagnosis when no rule could judge this gateway as configured;
    GatewayUnavailable (exit 2) when it does not answer its API at all. `model`: what a real request names."""
    check_url(gateway_url)
    with _client(gateway_url) as client:
        answer = probe(client, gateway_url, key, timeout, surface)
        problem = diagnose(gateway_url, answer, key_given=bool(key), base_path=base_path, surface=surface)
        if problem:
            raise PreflightError(problem)
        down = outage(gateway_url, answer, surface)
        if down and answer.status is not None:
            # An error page for an empty body may be the gateway's own bug, which the rules judge: a real request
            # tells it from an outage.
            # On a connection of its own: a server may close the one its error page went out on, and a reset of
            # that reused connection is not the gateway's answer to the real request.
            url = gateway_url.rstrip("/") + "/" + surface.endpoint
            with _client(gateway_url) as fresh:
                again = send_probe(fresh, url, hello(surface, model), _headers(key, surface), timeout)
            if again.status is not None and (again.status < 500 or is_api(again)):
                return
            down += " to an empty request, and to a real one " + (
                f"{again.status} with {describe(again)}"
                if again.status is not None
                else f"no answer ({again.error})"
            )
    if down:
        raise GatewayUnavailable(down + _OUTAGE_TAIL)


def check_model(
    gateway_url: str,
    key: str | None,
    model: str,
    role: str,
    profile: str,
    surface: Surface = CHAT,
    timeout: float = 30.0,
) -> None:
    """Live mode: one real request naming `model` (role `role`). A gateway that does not serve it is exit 3 naming
    the role, before the run's budget is spent on it; one that does not answer is an outage (exit 2)."""
    url = gateway_url.rstrip("/") + "/" + surface.endpoint
    with _client(gateway_url) as client:
        answer = send_probe(client, url, hello(surface, model), _headers(key, surface), timeout)
    down = outage(gateway_url, answer, surface)
    if down:
        raise GatewayUnavailable(down + _OUTAGE_TAIL)
    if answer.status == 404 or (answer.status in (400, 422) and _about_the_model(answer.body, model)):
        raise PreflightError(
            f"the gateway does not serve the model {model!r} (role {role}): POST {url} answers {answer.status} with "
            f"{describe(answer)}; map the role to one of its model ids with --model-map FILE "
            f"(`gateway-conformance roles --profile {profile} --write-model-map FILE --gateway-url URL` drafts one)"
        )


# The answer every surface's probe is scripted with: a plain text answer, one per provider family.
WIRING_CASSETTES = {family: f"{family}/text-basic" for family in FAMILIES}  # whichever the gateway calls


def check_replay(replay_url: str) -> None:
    """A `--replay-url` that does not answer is bad configuration (exit 3, one line), not 99 HARNESS_ERRORs."""
    from harness.replay.client import ReplayClient

    client = ReplayClient(replay_url)
    try:
        answers = client.health()
    finally:
        client.close()
    if not answers:
        raise PreflightError(
            f"the replay upstream at {replay_url} does not answer: start it (gateway-conformance upstream --port N) "
            "or drop --replay-url to let certify serve one"
        )


def check_wiring(
    gateway_url: str, key: str | None, replay_url: str, model: str | None, surface: Surface = CHAT,
    timeout: float = TIMEOUT,
) -> None:  # fmt: skip
    """One real request with a case marker: it must reach the replay upstream this run registers its cases with.
    A gateway whose provider base URL points elsewhere would otherwise have every rule blamed on it (exit 3); one
    that does not answer it at all is an outage (exit 2)."""
    import secrets

    from harness.replay.client import ReplayClient

    marker = f"[gc:preflight/wiring#{secrets.token_hex(6)}]"
    replay = ReplayClient(replay_url)
    body = surface.insert_marker({"model": model or "", **surface.hello}, marker)
    url = gateway_url.rstrip("/") + "/" + surface.endpoint
    try:
        replay.register(marker, "preflight/wiring", {"cassette": WIRING_CASSETTES})
        with _client(gateway_url) as client:
            answer = send_probe(client, url, json.dumps(body).encode(), _headers(key, surface), timeout)
        arrived = bool(replay.calls(marker))
    finally:
        replay.forget(marker)
        replay.close()
    if arrived:
        return
    down = outage(gateway_url, answer, surface)
    if down:
        raise GatewayUnavailable(down + _OUTAGE_TAIL)
    status = answer.status or 0
    if 200 <= status < 300 and not is_api(answer):
        raise PreflightError(
            f"POST {url} answers a real request {status} with {describe(answer)}, not an answer of the "
            f"{surface.title} API, and nothing reached the replay upstream: is --gateway-url the gateway's API?"
        )
    # Evidence of another provider behind the gateway: an answer served (2xx), or another replay upstream's own
    # refusal passed on. Any other refusal (an unknown model, a missing feature) is the rules' to judge.
    if 200 <= status < 300 or b"gateway-conformance replay" in answer.body:
        raise PreflightError(
            f"the gateway's provider traffic does not reach the replay upstream at {replay_url}: a probe request "
            f"(model {model!r}, marker {marker}) got {status} from the gateway and never arrived there. Point the "
            "gateway's provider base URL at the replay upstream (or map the profile's model roles with --model-map "
            "to ones it routes there)"
        )
