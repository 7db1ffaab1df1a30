"""Relay's additions to the translations (pure): the image limit checked before routing, the Anthropic extras
(`user`, `output_config`, `anthropic_tools`, `relay_web_search`), the body for OpenAI-compatible providers,
the stream post-processing every family shares, and the cost of an answer.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from reference_gateway.errors import GatewayError
from reference_gateway.policy.models import Prices
from reference_gateway.translate.anthropic.request import AnthropicRequest
from reference_gateway.translate.chunks import DONE, ChunkSource, StreamItem

_SERVER_TOOL_PREFIXES = ("web_search_", "web_fetch_")
_MILLION = Decimal(1_000_000)


def _image_error(code: str, message: str, path: str) -> GatewayError:
    return GatewayError(400, message, type="invalid_request_error", code=code, param=path)


def _decoded_size(data: str) -> int | None:
    """The decoded length of base64 text, or None when it is not base64."""
    try:
        return len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        return None


def image_parts(body: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(path, url) of every image_url part of the request's messages."""
    found: list[tuple[str, str]] = []
    messages = body.get("messages")
    for i, message in enumerate(messages if isinstance(messages, list) else []):
        content = message.get("content") if isinstance(message, dict) else None
        for j, part in enumerate(content if isinstance(content, list) else []):
            if isinstance(part, dict) and part.get("type") == "image_url":
                image_url = part.get("image_url")
                url = image_url.get("url") if isinstance(image_url, dict) else image_url
                found.append(
                    (f"messages[{i}].content[{j}].image_url.url", url if isinstance(url, str) else "")
                )
    return found


def check_images(body: Mapping[str, Any], max_bytes: int) -> None:
    """Relay: "Each image is limited to Gateway:MaxImageBytes decoded bytes ... refused before anything is
    routed or billed, with 400, type invalid_request_error, code image_too_large. An image_url that is neither
    a data: URL nor an http(s) URL is refused with code invalid_image_url"."""
    for path, url in image_parts(body):
        scheme = url.split(":", 1)[0].lower() if ":" in url else ""
        if scheme in ("http", "https"):
            continue
        if scheme != "data":
            raise _image_error("invalid_image_url", f"{path}: must be a data: URL or an http(s) URL", path)
        header, comma, data = url[5:].partition(",")
        size = _decoded_size(data) if comma and "base64" in header.lower().split(";")[1:] else None
        if size is None:
            raise _image_error(
                "invalid_image_url", f"{path}: must be a base64 data URL (data:<type>;base64,<data>)", path
            )
        if size > max_bytes:
            raise _image_error(
                "image_too_large",
                f"{path}: the image is {size} bytes; at most {max_bytes} decoded bytes are accepted",
                path,
            )


def server_tools(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Relay: "Types starting web_search_ or web_fetch_ are forwarded verbatim ...; anything else is skipped"."""
    raw = body.get("anthropic_tools")
    return [
        dict(t)
        for t in (raw if isinstance(raw, list) else [])
        if isinstance(t, dict)
        and isinstance(t.get("type"), str)
        and t["type"].startswith(_SERVER_TOOL_PREFIXES)
    ]


def anthropic_extras(body: Mapping[str, Any], translated: AnthropicRequest) -> AnthropicRequest:
    """The Anthropic body with Relay's additions: `user` as metadata.user_id, `output_config` sent whole, the
    server tools after the function tools."""
    out: AnthropicRequest = {**translated}  # type: ignore[typeddict-item]
    user = body.get("user")
    if isinstance(user, str) and user:
        out["metadata"] = {"user_id": user}
    config = body.get("output_config")
    if isinstance(config, dict):
        # "Send Claude's output_config as a top-level field and it is forwarded whole".
        out["output_config"] = {**translated.get("output_config", {}), **config}
    extra = server_tools(body)
    if extra:
        out["tools"] = [*translated.get("tools", []), *extra]
    return out


def openai_body(body: Mapping[str, Any], relay_fields: frozenset[str]) -> dict[str, Any]:
    """The body before the OpenAI-compatible pass-through: Relay-only fields removed (`metadata` "because
    OpenAI rejects it"), and a stream always asks for usage ("Relay always requests it from the provider")."""
    out = {k: v for k, v in body.items() if k not in relay_fields}
    if body.get("stream") is True:
        options = body.get("stream_options")
        out["stream_options"] = {**(options if isinstance(options, dict) else {}), "include_usage": True}
    return out


def asked_for_usage(body: Mapping[str, Any]) -> bool:
    options = body.get("stream_options")
    return body.get("stream") is True and isinstance(options, dict) and options.get("include_usage") is True


# ------------------------------------------------------------------------------------------- web search


def web_search_report(message: Mapping[str, Any]) -> dict[str, Any]:
    """Relay `relay_web_search`: queries, results (url, title, page_age), citations (url, title, cited_text),
    the answer (the text after the last search result), errors, the billed search requests, and `paused`."""
    queries: list[str] = []
    results: list[dict[str, Any]] = []
    citations: list[dict[str, Any]] = []
    errors: list[str] = []
    answer: list[str] = []
    content = message.get("content")
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "server_tool_use" and block.get("name") == "web_search":
            query = block.get("input", {}).get("query") if isinstance(block.get("input"), Mapping) else None
            if isinstance(query, str):
                queries.append(query)
        elif isinstance(kind, str) and kind.endswith("_tool_result"):
            inner = block.get("content")
            if isinstance(inner, Mapping) and isinstance(inner.get("error_code"), str):
                errors.append(inner["error_code"])
            for result in inner if isinstance(inner, list) else []:
                if isinstance(result, Mapping) and result.get("type") == "web_search_result":
                    results.append({k: result.get(k) for k in ("url", "title", "page_age")})
            if kind == "web_search_tool_result":
                answer = []  # the answer is the text after the last search result
        elif kind == "text" and isinstance(block.get("text"), str):
            answer.append(block["text"])
            for citation in block.get("citations") or []:
                if isinstance(citation, Mapping) and "url" in citation:
                    citations.append({k: citation.get(k) for k in ("url", "title", "cited_text")})
    usage = message.get("usage")
    server = usage.get("server_tool_use") if isinstance(usage, Mapping) else None
    requests = server.get("web_search_requests") if isinstance(server, Mapping) else None
    return {
        "queries": queries,
        "results": results,
        "citations": citations,
        "answer": "".join(answer),
        "errors": errors,
        "requests": requests if isinstance(requests, int) else 0,
        "paused": message.get("stop_reason") == "pause_turn",
    }


# ------------------------------------------------------------------------------------------- streams


def without_nulls(value: Any) -> Any:
    """Relay: "Fields that are not set are omitted rather than sent as null" (at every level)."""
    if isinstance(value, Mapping):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def _is_output(chunk: Mapping[str, Any]) -> bool:
    """A chunk the client must get once it is sent: text, a tool-call fragment or a finish reason."""
    for choice in chunk.get("choices") or []:
        if not isinstance(choice, Mapping):
            continue
        if choice.get("finish_reason") is not None:
            return True
        delta = choice.get("delta")
        if isinstance(delta, Mapping) and (delta.get("content") or delta.get("tool_calls")):
            return True
    return False


class RelayStream:
    """One family's chunks as Relay sends them: every chunk forwarded without its null fields; the usage-only
    chunk only when the client asked; a failure one `{"error": {"message", "type", "code"}}` line and no [DONE].

    `began` turns true at the first output chunk; until then nothing has to reach the client and a failure is
    reported as `early_failure` instead of an error line (so the gateway may retry or fall back)."""

    def __init__(self, source: ChunkSource, *, show_usage: bool, default_code: str) -> None:
        self._source = source
        self._show_usage = show_usage
        self._default_code = default_code
        self.began = False
        self.early_failure: GatewayError | None = None
        self.usage: Mapping[str, Any] | None = None

    @property
    def finished(self) -> bool:
        return self._source.finished

    def _items(self, items: list[StreamItem]) -> list[StreamItem]:
        out: list[StreamItem] = []
        for item in items:
            if item == DONE:
                out.append(DONE)
                continue
            if not isinstance(item, Mapping):
                continue
            error = item.get("error")
            if isinstance(error, Mapping):
                if not self.began:
                    self.early_failure = _from_envelope(error)
                    return out
                code = error.get("code")
                out.append(
                    {
                        "error": {
                            "message": error.get("message") or "The provider failed.",
                            "type": error.get("type") or "server_error",
                            "code": code if isinstance(code, str) and code else self._default_code,
                        }
                    }
                )
                return out  # no [DONE] after an error
            usage = item.get("usage")
            if isinstance(usage, Mapping):
                self.usage = usage
            if item.get("choices") == [] and not self._show_usage:
                continue  # "hides it unless you did"
            chunk = without_nulls(item)
            if not self._show_usage:
                chunk.pop("usage", None)
            self.began = self.began or _is_output(chunk)
            out.append(chunk)
        return out

    def feed(self, event: Any) -> list[StreamItem]:
        return self._items(self._source.feed(event))

    def fail(self, error: GatewayError) -> list[StreamItem]:
        return self._items(self._source.fail(error))

    def end_of_stream(self) -> list[StreamItem]:
        return self._items(self._source.end_of_stream())


def _from_envelope(error: Mapping[str, Any]) -> GatewayError:
    """An error that happened before output began, as a retryable upstream failure."""
    code = error.get("code")
    failure = GatewayError(
        502,
        str(error.get("message") or "The provider failed."),
        type="server_error",
        code=code if isinstance(code, str) else None,
    )
    failure.retryable = True
    return failure


# ------------------------------------------------------------------------------------------- cost


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def cost_usd(usage: Any, prices: Prices | None) -> Decimal:
    """The cost of one answer from its OpenAI-shaped usage (cached reads and cache writes are inside
    prompt_tokens) and the model's prices per million tokens."""
    if prices is None or not isinstance(usage, Mapping):
        return Decimal(0)
    details = usage.get("prompt_tokens_details")
    details = details if isinstance(details, Mapping) else {}
    cached = _count(details.get("cached_tokens"))
    written = _count(details.get("cache_creation_tokens"))
    fresh = max(_count(usage.get("prompt_tokens")) - cached - written, 0)
    total = (
        fresh * prices.input
        + cached * prices.cached
        + written * prices.cache_write
        + _count(usage.get("completion_tokens")) * prices.output
    )
    return total / _MILLION


def cost_text(cost: Decimal) -> str:
    """A plain decimal string: `0`, `0.0000275`, never an exponent."""
    if cost == 0:
        return "0"
    text = format(cost.normalize(), "f")
    return text
