"""The provider families `record` can re-record from: each is data plus an SDK client factory and a `send`.

`send` re-sends one recorded request through the family's official SDK with its raw-response API, so the
SDK's own transport (patched by vcrpy) carries it and vcrpy stores the exact wire bytes, not a parsed object.
SDK errors are mapped once, here, to `ProviderError`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from harness.cassette.document import CREDENTIAL_QUERY_PARAMS, RecordedRequest
from harness.errors import ProviderError
from harness.families import EndpointKind


@dataclass(frozen=True)
class Provider:
    name: str  # the cassettes folder and the `--provider` value
    key_env: tuple[str, ...]  # environment variables holding the key, first set one wins
    base_url: str  # the public API
    endpoint: EndpointKind  # the only endpoint its scenarios may call
    kept_request_headers: frozenset[str]  # what shapes the answer, plus the SDK's identity
    forwarded_request_headers: tuple[str, ...]  # sent again from the old cassette (they change the answer)
    version_header: str | None  # the request header naming the API version; None: the path's `v1`, `v1beta`
    connect: Callable[[str, str], contextlib.AbstractContextManager[Any]]  # (base_url, key) → SDK client
    send: Callable[[Any, RecordedRequest], None]  # raises ProviderError
    sdk: str  # the SDK's distribution name, for the cassette's provenance

    @property
    def public_host(self) -> str:
        return urlsplit(self.base_url).hostname or ""

    def sdk_version(self) -> str:
        from importlib import metadata

        try:
            return f"{self.sdk} {metadata.version(self.sdk)}"
        except metadata.PackageNotFoundError:
            return self.sdk


def forwarded_headers(provider: Provider, request: RecordedRequest) -> dict[str, str]:
    headers = request.headers
    return {h: headers[h][0] for h in provider.forwarded_request_headers if headers.get(h)}


def _body(request: RecordedRequest) -> dict[str, Any]:
    body = request.json
    if not isinstance(body, dict):
        raise ProviderError(None, None, "the recorded request body is not a JSON object")
    return dict(body)


# --- Anthropic Messages (anthropic SDK) --------------------------------------------------------


@contextlib.contextmanager
def _anthropic_client(base_url: str, key: str) -> Iterator[Any]:
    import anthropic

    with anthropic.Anthropic(base_url=base_url, api_key=key, max_retries=0) as client:
        yield client


def _anthropic_send(client: Any, request: RecordedRequest) -> None:
    import anthropic
    import httpx2

    headers = forwarded_headers(ANTHROPIC, request)
    try:
        # cast_to=httpx2.Response: the SDK returns the raw response without parsing, so SSE and JSON are read
        # whole and vcrpy stores the exact wire bytes; `stream` stays as recorded in the body.
        client.post(
            "/v1/messages", body=_body(request), cast_to=httpx2.Response, options={"headers": headers}
        )
    except anthropic.APIStatusError as exc:
        raise ProviderError(exc.status_code, exc.type, exc.api_message or "") from exc
    except anthropic.APIConnectionError as exc:
        raise ProviderError(None, type(exc).__name__, str(exc)) from exc


ANTHROPIC = Provider(
    name="anthropic",
    key_env=("ANTHROPIC_API_KEY",),
    base_url="https://api.anthropic.com",
    endpoint="anthropic.messages",
    kept_request_headers=frozenset(
        {
            "accept",
            "anthropic-version",
            "anthropic-beta",
            "content-type",
            "user-agent",
            "x-stainless-retry-count",
        }
    ),
    forwarded_request_headers=("anthropic-beta",),  # the SDK sets anthropic-version itself
    version_header="anthropic-version",
    connect=_anthropic_client,
    send=_anthropic_send,
    sdk="anthropic",
)


# --- OpenAI Chat Completions (openai SDK) ------------------------------------------------------


@contextlib.contextmanager
def _openai_client(base_url: str, key: str) -> Iterator[Any]:
    import openai

    with openai.OpenAI(base_url=base_url, api_key=key, max_retries=0) as client:
        yield client


def _openai_send(client: Any, request: RecordedRequest) -> None:
    _openai_post(client, request, OPENAI, "/chat/completions")


def _responses_send(client: Any, request: RecordedRequest) -> None:
    _openai_post(client, request, RESPONSES, "/responses")


def _openai_post(client: Any, request: RecordedRequest, provider: Provider, path: str) -> None:
    import httpx2
    import openai

    headers = forwarded_headers(provider, request)
    try:
        # As for Anthropic: the raw response, read whole. The base URL carries `/v1` (the SDK's convention).
        client.post(
            path,
            body=_body(request),
            cast_to=httpx2.Response,
            options={"headers": headers},
        )
    except openai.APIStatusError as exc:
        body = exc.body if isinstance(exc.body, dict) else {}  # the SDK keeps the `error` object
        message = body.get("message")
        kind = exc.type or exc.code
        raise ProviderError(
            exc.status_code, kind, message if isinstance(message, str) else str(exc.message)
        ) from exc
    except openai.APIConnectionError as exc:
        raise ProviderError(None, type(exc).__name__, str(exc)) from exc


OPENAI = Provider(
    name="openai",
    key_env=("OPENAI_API_KEY",),
    base_url="https://api.openai.com/v1",
    endpoint="openai.chat",
    kept_request_headers=frozenset(
        {"accept", "content-type", "openai-beta", "user-agent", "x-stainless-retry-count"}
    ),
    forwarded_request_headers=("openai-beta",),
    version_header=None,
    connect=_openai_client,
    send=_openai_send,
    sdk="openai",
)

# OpenAI's Responses API (`POST /v1/responses`, the same SDK and key): the cassettes under `cassettes/responses/`.
RESPONSES = Provider(
    name="responses",
    key_env=("OPENAI_API_KEY",),
    base_url="https://api.openai.com/v1",
    endpoint="openai.responses",
    kept_request_headers=OPENAI.kept_request_headers,
    forwarded_request_headers=("openai-beta",),
    version_header=None,
    connect=_openai_client,
    send=_responses_send,
    sdk="openai",
)


# --- Gemini generateContent (google-genai SDK) -------------------------------------------------


@contextlib.contextmanager
def _gemini_client(base_url: str, key: str) -> Iterator[Any]:
    from google import genai
    from google.genai import types

    # vertexai=False: GOOGLE_GENAI_USE_VERTEXAI in the environment must not send the key elsewhere.
    # attempts=1: no retries, as max_retries=0 for the other SDKs.
    options = types.HttpOptions(base_url=base_url, retry_options=types.HttpRetryOptions(attempts=1))
    with genai.Client(api_key=key, vertexai=False, http_options=options) as client:
        yield client


def gemini_path(uri: str) -> tuple[str, str]:
    """(`v1beta`, `models/…:streamGenerateContent?alt=sse`) from a recorded URI; a credential query is dropped."""
    parts = urlsplit(uri)
    version, _, rest = parts.path.lstrip("/").partition("/")
    query = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if k.lower() not in CREDENTIAL_QUERY_PARAMS
    ]
    return version, rest + (f"?{urlencode(query)}" if query else "")


def _gemini_send(client: Any, request: RecordedRequest) -> None:
    from google.genai import errors

    version, path = gemini_path(request.uri)
    options = {"api_version": version, "headers": forwarded_headers(GEMINI, request)}
    api = client._api_client  # the SDK's REST layer: it sends our body as is and answers the raw HTTP body
    try:
        if request.stream:
            for _ in api.request_streamed("post", path, _body(request), options):
                pass  # read to the end: vcrpy has stored the whole stream by then
        else:
            api.request("post", path, _body(request), options)
    except errors.APIError as exc:
        raise ProviderError(exc.code, exc.status, exc.message or "") from exc
    except _transport_errors() as exc:
        raise ProviderError(None, type(exc).__name__, str(exc)) from exc


def _transport_errors() -> tuple[type[BaseException], ...]:
    # google-genai sends with httpx2 or httpx (GOOGLE_GENAI_HTTP_CLIENT) and lets their errors through.
    found: list[type[BaseException]] = []
    for module in ("httpx2", "httpx"):
        with contextlib.suppress(ImportError):
            found.append(__import__(module).HTTPError)
    return tuple(found)


GEMINI = Provider(
    name="gemini",
    # google-genai's own order: GOOGLE_API_KEY wins when both are set.
    key_env=("GOOGLE_API_KEY", "GEMINI_API_KEY"),
    base_url="https://generativelanguage.googleapis.com",
    endpoint="gemini.generate",
    kept_request_headers=frozenset({"content-type", "user-agent", "x-goog-api-client"}),
    forwarded_request_headers=(),
    version_header=None,
    connect=_gemini_client,
    send=_gemini_send,
    sdk="google-genai",
)

PROVIDERS: dict[str, Provider] = {p.name: p for p in (ANTHROPIC, OPENAI, RESPONSES, GEMINI)}
