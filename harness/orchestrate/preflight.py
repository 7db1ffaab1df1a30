"""One request before any rule: is anything answering at the gateway URL, is it the surface's base path, does
the gateway take the key? A wrong answer to any of these is bad configuration (exit 3, one line), not a
catalog of FAILs and a FAIL certificate.

The request is `POST {base}/{endpoint}` (the profile's surface: `chat/completions`, ...) with an empty JSON
object: the path every rule uses, a body
every gateway refuses before routing (so nothing reaches a provider). Only these answers are diagnosed:
no connection, 401/403, and a 404/405 (the path is not served — with an OpenAI error envelope or without one:
gateways answer unknown paths with their own envelope too, the reference gateway among them). Any other answer,
a slow one included, is the rules' business. The one 404 that is not a missing endpoint is an envelope about the
model (`code`/`param` naming it): a gateway that read the empty body and found no model is the endpoint.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from harness.errors import PreflightError
from harness.families import FAMILIES
from harness.outcomes import KEY_ENV
from harness.surfaces import chat_completions
from harness.surfaces.base import Surface

TIMEOUT = 10.0
CHAT = chat_completions.SURFACE


@dataclass(frozen=True)
class ProbeAnswer:
    status: int | None
    body: bytes = b""
    content_type: str = ""
    error: str = ""  # the transport error, when there was no answer


def _is_openai_error(body: bytes) -> bool:
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        return False
    return isinstance(data, dict) and isinstance(data.get("error"), dict)


def _about_the_model(body: bytes) -> bool:
    """An error envelope whose code or param names the model: the endpoint answered (the body has no model)."""
    if not _is_openai_error(body):
        return False
    error = json.loads(body)["error"]
    return any("model" in str(error.get(k) or "").lower() for k in ("code", "param"))


def _error_message(body: bytes) -> str:
    try:
        error = json.loads(body)["error"]
        return f": {error.get('code') or error.get('type') or ''} {error.get('message') or ''}".rstrip()
    except (UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError):
        return ""


def diagnose(
    url: str, answer: ProbeAnswer, *, key_given: bool, base_path: str | None, surface: Surface = CHAT
) -> str | None:
    """The one-line diagnosis of a preflight answer, or None when the rules can run. Pure."""
    if answer.status is None:
        return f"nothing answers at {url}: {answer.error} (is the gateway running, and is this its address?)"
    if answer.status in (401, 403):
        if not key_given:
            return (
                f"{url} answers {answer.status} and no key was given: set {KEY_ENV} or pass --gateway-key"
                f"{_error_message(answer.body)}"
            )
        return f"{url} refused the key (HTTP {answer.status}{_error_message(answer.body)}): check {KEY_ENV} / --gateway-key"
    if answer.status in (404, 405) and not _about_the_model(answer.body):
        kind = "HTML" if "html" in answer.content_type else answer.content_type or "a body"
        if _is_openai_error(answer.body):
            kind = f"an error envelope{_error_message(answer.body)}"
        example_path = urlsplit(surface.base_url_example).path
        hint = (
            f"did you forget {example_path}?"
            if example_path not in ("", "/")
            else "is this the gateway's root?"
        )
        if base_path:
            hint += f" (the documented base path is {base_path})"
        example = f"http://127.0.0.1:8080{base_path or example_path}"
        return (
            f"no {surface.label} endpoint at this URL: POST {url.rstrip('/')}/{surface.endpoint} answers "
            f"{answer.status} with {kind}; {hint} --gateway-url is the base URL as an SDK takes it, e.g. {example}"
        )
    return None


def probe(
    client: httpx.Client, gateway_url: str, key: str | None, timeout: float = TIMEOUT, surface: Surface = CHAT
) -> ProbeAnswer:
    url = gateway_url.rstrip("/") + "/" + surface.endpoint
    headers = {"content-type": "application/json"}
    if key:
        headers["authorization"] = f"Bearer {key}"
    try:
        response = client.post(url, content=b"{}", headers=headers, timeout=timeout)
    except httpx.ConnectTimeout:
        return ProbeAnswer(None, error=f"connect timeout after {timeout:g}s")
    except (httpx.ConnectError, httpx.UnsupportedProtocol) as exc:
        return ProbeAnswer(None, error=f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
    except httpx.HTTPError:
        # Connected, then slow, cut or garbled: something answers; the rules judge how (within their timeout).
        return ProbeAnswer(0)
    return ProbeAnswer(
        response.status_code, response.content[:4096], response.headers.get("content-type", "")
    )


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
) -> None:
    """Raise PreflightError with a one-line diagnosis when no rule could judge this gateway."""
    check_url(gateway_url)
    # Plain http needs no CA bundle (loading one is a fifth of a second before the first rule).
    verify = not gateway_url.startswith("http://")
    with httpx.Client(trust_env=False, follow_redirects=False, verify=verify) as client:
        answer = probe(client, gateway_url, key, timeout, surface)
    problem = diagnose(gateway_url, answer, key_given=bool(key), base_path=base_path, surface=surface)
    if problem:
        raise PreflightError(problem)


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
    A gateway whose provider base URL points elsewhere would otherwise have every rule blamed on it (exit 3)."""
    import secrets

    from harness.replay.client import ReplayClient

    marker = f"[gc:preflight/wiring#{secrets.token_hex(6)}]"
    replay = ReplayClient(replay_url)
    body = surface.insert_marker({"model": model or "", **surface.hello}, marker)
    headers = {"content-type": "application/json", **surface.request_headers}
    if key:
        headers["authorization"] = f"Bearer {key}"
    try:
        replay.register(marker, "preflight/wiring", {"cassette": WIRING_CASSETTES})
        try:
            with httpx.Client(
                trust_env=False, follow_redirects=False, verify=not gateway_url.startswith("http://")
            ) as client:
                response = client.post(
                    gateway_url.rstrip("/") + "/" + surface.endpoint,
                    json=body,
                    headers=headers,
                    timeout=timeout,
                )
            status = str(response.status_code)
            # Evidence of another provider behind the gateway: an answer served (2xx), or another replay
            # upstream's own refusal passed on. Any other refusal (an unknown model, a missing feature) is the
            # rules' to judge, not a wiring fault.
            elsewhere = 200 <= response.status_code < 300 or b"gateway-conformance replay" in response.content
        except httpx.HTTPError as exc:
            status, elsewhere = f"no answer ({type(exc).__name__})", False
        arrived = bool(replay.calls(marker))
    finally:
        replay.forget(marker)
        replay.close()
    if not arrived and elsewhere:
        raise PreflightError(
            f"the gateway's provider traffic does not reach the replay upstream at {replay_url}: a probe request "
            f"(model {model!r}, marker {marker}) got {status} from the gateway and never arrived there. Point the "
            "gateway's provider base URL at the replay upstream (or map the profile's model roles with --model-map "
            "to ones it routes there)"
        )
