"""Anthropic Messages in (`POST {base}/messages`, docs/wire-reference.md §1; specs/anthropic/contract.md).

A model served by an Anthropic channel is passed through: the client's body goes upstream as its bytes came
(only `model` is re-spelt when the catalog id differs from the upstream id), with `anthropic-version` and
`anthropic-beta` as the client sent them and the query (`?beta=true`) kept; the gateway's own key replaces the
client's. The answer of any status, and every stream event, come back as the provider sent them. The gateway's
own refusals (no key, a body that is not JSON, an unknown model) are in Anthropic's error envelope.

A model served by another family is bridged through the profile's flow (bridge.py): the request becomes a chat
body, the flow serves it as it serves any chat request (its channels, fallback, stores), and its completion or
chunk stream comes back as a Message or Messages events; the flow's errors come back in Anthropic's envelope.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from reference_gateway.errors import GatewayError, note_answered, note_error, passed_header, server_error
from reference_gateway.flows.base import Flow
from reference_gateway.inbound import bridge
from reference_gateway.inbound.base import flow_headers, open_passthrough, serve_as_chat, translated_stream
from reference_gateway.inbound.base import parse_json as parse_answer
from reference_gateway.policy.models import Channel
from reference_gateway.services import Services
from reference_gateway.upstream.client import Endpoint
from reference_gateway.web.body import BodyError, parse_json
from reference_gateway.web.intake import read_body

# Anthropic's error type per HTTP status (Anthropic API reference, "Errors": HTTP errors).
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 402: "billing_error",
               403: "permission_error", 404: "not_found_error", 413: "request_too_large",
               429: "rate_limit_error", 500: "api_error", 504: "timeout_error", 529: "overloaded_error"}  # fmt: skip
# Client headers that reach Anthropic as the client sent them (Claude Code's gateway requirements: forward
# `anthropic-beta` and `anthropic-version`); everything else is the gateway's own.
FORWARDED = ("anthropic-version", "anthropic-beta")
# Answer headers passed back to the client.
ANSWER_HEADERS = ("content-type", "request-id", "retry-after", "anthropic-organization-id")
_DEFAULT_VERSION = "2023-06-01"


class MessagesError(Exception):
    """A refusal of the gateway's own, answered in Anthropic's envelope."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def error_response(status: int, message: str, headers: Any = None, kind: str | None = None) -> Response:
    """Anthropic's envelope for `status` (or `kind`); the retry hints, the provider's rate-limit headers and the
    gateway's own-limit mark among `headers` are kept (errors.passed_header: the SDKs wait on Retry-After)."""
    kind = kind or ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    note_answered(status, kind)
    body = {"type": "error", "error": {"type": kind, "message": message}}
    kept = {k: v for k, v in (headers or {}).items() if passed_header(k)}
    return Response(json.dumps(body), status_code=status, media_type="application/json", headers=kept)


def _kind_of(error: GatewayError) -> str | None:
    """Anthropic's type where the gateway's says more than the status: a spent budget is `billing_error` whatever its
    status (Claude Code's gateway protocol: the user's cap is 429 billing_error)."""
    return "billing_error" if error.type == "insufficient_quota" else None


def error_event(status: int, message: str) -> bytes:
    kind = ERROR_TYPES.get(status, "api_error")
    data = json.dumps({"type": "error", "error": {"type": kind, "message": message}})
    return f"event: error\ndata: {data}\n\n".encode()


def respell_model(raw: bytes, upstream: str) -> bytes:
    """The body with its top-level `model` value replaced by `upstream` and every other byte as it came."""
    text = raw.decode("utf-8")
    decoder = json.JSONDecoder()
    i = _skip(text, 0)
    if text[i : i + 1] != "{":
        raise ValueError("not an object")
    i = _skip(text, i + 1)
    while text[i : i + 1] != "}":
        key, i = decoder.raw_decode(text, i)
        i = _skip(text, i)
        if text[i : i + 1] != ":":
            raise ValueError("expected ':'")
        start = _skip(text, i + 1)
        _value, end = decoder.raw_decode(text, start)
        if key == "model":
            return (text[:start] + json.dumps(upstream) + text[end:]).encode("utf-8")
        i = _skip(text, end)
        if text[i : i + 1] == ",":
            i = _skip(text, i + 1)
    return raw


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


class Messages:
    name = "messages"

    def routes(self, base: str, flow: Flow) -> list[Route]:
        return [
            Route(f"{base}/messages", _answered(flow, _create), methods=["POST"]),
            Route(f"{base}/messages/count_tokens", _answered(flow, _count_tokens), methods=["POST"]),
        ]


Handler = Callable[[Flow, Request], Awaitable[Response]]


def _answered(flow: Flow, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        try:
            return await handler(flow, request)
        except MessagesError as exc:
            return error_response(exc.status, exc.message)
        except GatewayError as exc:
            note_error(exc)
            return error_response(exc.status, _message_of(exc), exc.headers, _kind_of(exc))

    return endpoint


def _message_of(error: GatewayError) -> str:
    """What the client reads of an error: a forwarded provider answer's own message (an OpenAI or Gemini envelope
    passed on whole, as LYRouter forwards it) rather than the gateway's generic words, and an overflow in
    Anthropic's words, "prompt is too long", which Claude Code compacts on."""
    code, message = error.code, error.message
    if error.raw is not None:
        document = parse_answer(error.raw.content)
        inner = document.get("error") if isinstance(document, dict) else None
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            message = inner["message"]
            code = code or inner.get("code") or inner.get("status")
    overflow = code == "context_length_exceeded" or ("token count" in message and "exceeds" in message)
    return f"prompt is too long: {message}" if overflow and "prompt is too long" not in message else message


async def _read(services: Services, request: Request) -> tuple[bytes, dict[str, Any], Channel]:
    """The request let in, its bytes, its JSON object and the channel of its model; refusals raised."""
    settings = services.settings
    services.intake.authenticate(request)
    raw = await read_body(request, settings.max_body_bytes)
    try:
        # The chat path's limits (web/body.py): nesting, numbers a float holds, Unicode text.
        body = parse_json(raw)
    except BodyError as exc:
        raise MessagesError(400, f"The request body is not valid JSON: {exc.problem}") from exc
    if not isinstance(body, dict):
        raise MessagesError(400, "The request body must be a JSON object.")
    name = body.get("model")
    if not isinstance(name, str) or not name:
        raise MessagesError(400, "model: Field required")
    model = settings.catalog.get(name)
    if model is None or not model.channels or not model.enabled:
        raise MessagesError(404, f"model: {name}")
    channel = model.channels[0]
    content = raw if channel.upstream == name else respell_model(raw, channel.upstream)
    return content, body, channel


async def _create(flow: Flow, request: Request) -> Response:
    content, body, channel = await _read(flow.services, request)
    if channel.protocol != "anthropic":
        return await _bridged(flow, request, body)
    return await _pass_through(flow.services, request, channel, content, stream=body.get("stream") is True)


async def _count_tokens(flow: Flow, request: Request) -> Response:
    """`POST {base}/messages/count_tokens`: passed through to Anthropic; another family has no such count, so the
    endpoint is not served for its models (a Messages client such as Claude Code then estimates locally)."""
    content, body, channel = await _read(flow.services, request)
    if channel.protocol != "anthropic":
        raise MessagesError(
            404, f"count_tokens is not served for model {body.get('model')} (a {channel.protocol} channel)"
        )
    return await _pass_through(
        flow.services, request, channel, content, stream=False, path="/v1/messages/count_tokens"
    )


def _endpoint(services: Services, request: Request, channel: Channel, path: str = "/v1/messages") -> Endpoint:
    headers = {name: request.headers[name] for name in FORWARDED if name in request.headers}
    headers.setdefault("anthropic-version", _DEFAULT_VERSION)
    if services.settings.upstream.api_key:
        headers["x-api-key"] = services.settings.upstream.api_key
    return Endpoint("anthropic", channel.base_path.rstrip("/") + path, headers)


async def _pass_through(
    services: Services,
    request: Request,
    channel: Channel,
    content: bytes,
    *,
    stream: bool,
    path: str = "/v1/messages",
) -> Response:
    endpoint = _endpoint(services, request, channel, path)
    request_id: str = request.state.request_id
    query = request.url.query
    upstream = services.upstream
    if not stream:
        async with upstream.passthrough(
            endpoint, content, query=query, request_id=request_id, stream=False
        ) as got:
            return Response(got.content, status_code=got.status_code, headers=_answer_headers(got.headers))
    refused, response, opened = await open_passthrough(
        upstream, endpoint, content, query=query, request_id=request_id, headers_of=_answer_headers
    )
    if refused is not None:
        return refused

    async def relay() -> AsyncIterator[bytes]:
        try:
            async for piece in response.aiter_raw():
                yield piece
        except Exception as exc:
            note_error(exc if isinstance(exc, GatewayError) else server_error())
            yield error_event(500, "The upstream provider's stream failed.")
        finally:
            await opened.__aexit__(None, None, None)

    headers = {k: v for k, v in _answer_headers(response.headers).items() if k != "content-type"}
    headers["cache-control"] = "no-cache"
    return StreamingResponse(relay(), media_type="text/event-stream", headers=headers)


def _answer_headers(headers: Any) -> dict[str, str]:
    """The provider's answer headers passed back: ANSWER_HEADERS, and its rate-limit headers (x-should-retry too)."""
    kept = {name: headers[name] for name in ANSWER_HEADERS if name in headers}
    kept.update({name.lower(): value for name, value in headers.items() if passed_header(name)})
    return kept


# The types of the Messages fields the bridge reads (Anthropic API reference, Messages): a value of another type is
# Anthropic's 400, in its words, before the flow sees it (the bridge would otherwise read it as something else).
_SHAPES: dict[str, tuple[type, ...]] = {"messages": (list,), "system": (str, list), "max_tokens": (int,),
    "stop_sequences": (list,), "tools": (list,), "tool_choice": (dict,), "metadata": (dict,),
    "temperature": (int, float), "top_p": (int, float), "top_k": (int,), "stream": (bool,)}  # fmt: skip
_TYPE_WORDS = {list: "a valid list", str: "a valid string", int: "a valid integer", float: "a valid number",
               dict: "a valid dictionary", bool: "a valid boolean"}  # fmt: skip


def malformed(body: dict[str, Any]) -> str | None:
    """What is wrong with the shape of a Messages request, as Anthropic words it (`messages.0.content: Input
    should be a valid list`), or None."""
    for name, kinds in _SHAPES.items():
        value = body.get(name)
        if value is None:
            continue
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            return f"{name}: Input should be {_TYPE_WORDS[kinds[-1] if kinds[0] is int else kinds[0]]}"
    if not body.get("messages"):
        return (
            "messages: Field required"
            if "messages" not in body
            else "messages: at least one message is required"
        )
    for i, message in enumerate(body["messages"]):
        if not isinstance(message, dict):
            return f"messages.{i}: Input should be a valid dictionary"
        if message.get("role") not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        content = message.get("content")
        if not isinstance(content, str | list):
            return f"messages.{i}.content: Input should be a valid list"
        if isinstance(content, list) and not all(isinstance(block, dict) for block in content):
            return f"messages.{i}.content: each block should be a valid dictionary"
    for name in ("system", "tools"):
        value = body.get(name)
        if isinstance(value, list) and not all(isinstance(item, dict) for item in value):
            return f"{name}: each item should be a valid dictionary"
    if not all(isinstance(stop, str) for stop in body.get("stop_sequences") or []):
        return "stop_sequences: each item should be a valid string"
    return None


async def _bridged(flow: Flow, request: Request, body: dict[str, Any]) -> Response:
    """The request served by the flow as a chat request, the answer turned back into Messages."""
    problem = malformed(body)
    if problem is not None:
        raise MessagesError(400, problem)
    chat = json.dumps(bridge.chat_request(body)).encode("utf-8")
    answer = await serve_as_chat(flow, request, chat, "/messages")
    model = str(body.get("model"))
    if isinstance(answer, StreamingResponse):
        translator = bridge.StreamBridge(model, bridge.estimate_input_tokens(body))
        return StreamingResponse(
            _events(answer, translator),
            media_type="text/event-stream",
            headers={**flow_headers(answer.headers), "cache-control": "no-cache"},
        )
    raw = bytes(answer.body)
    document = parse_answer(raw)
    if answer.status_code != 200 or not isinstance(document, dict) or "choices" not in document:
        error = document.get("error") if isinstance(document, dict) else None
        text = error.get("message") if isinstance(error, dict) else raw.decode("utf-8", "replace")
        if (
            isinstance(error, dict)
            and error.get("code") == "context_length_exceeded"
            and "prompt is too long" not in str(text)
        ):
            # Anthropic's words for an overflow, which Claude Code compacts on (the provider's own message after them)
            text = f"prompt is too long: {text}"
        spent = isinstance(error, dict) and error.get("type") == "insufficient_quota"
        return error_response(
            answer.status_code if answer.status_code >= 400 else 502,
            str(text),
            answer.headers,
            "billing_error" if spent else None,
        )
    return Response(
        json.dumps(bridge.message(document, model)),
        media_type="application/json",
        headers=flow_headers(answer.headers),
    )


def _events(answer: StreamingResponse, translator: bridge.StreamBridge) -> AsyncIterator[bytes]:
    """The flow's chat SSE bytes in, Messages events out (its keep-alive comment as a Messages `ping`)."""
    return translated_stream(answer, translator, lambda _comment: bridge.event("ping", {}))
