"""`stream_matches_nonstream`: the same cassette streamed and not streamed gives the same content, tool calls,
finish reason and usage."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from harness.exchange import Exchange
from harness.surfaces import reading
from harness.surfaces.chat_completions import reading as chat
from harness.values import ABSENT, json_equal, short
from harness.violation import Violation, no_response


def check_stream_matches_nonstream(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    """Same cassette, stream vs `stream: false`: content, tool calls, finish reason and usage agree."""
    check = "stream_matches_nonstream"
    missing = no_response(check, exchange)
    if missing:
        yield missing
        return
    if exchange.companion is None:
        yield Violation(
            check,
            "companion",
            "a stream: false exchange",
            None,
            "the harness made no non-stream companion request",
        )
        return
    streamed = chat.answer_document(exchange)
    plain = chat.answer_document(exchange.companion)
    if not streamed.stream:
        yield Violation(
            check, "stream", "an SSE stream", short(exchange.response.raw), "the answer is not a stream"
        )
        return
    if plain.stream or not isinstance(plain.document, dict):
        yield Violation(
            check,
            "nonstream",
            "a JSON completion",
            short(exchange.companion.response.raw),
            plain.error or "not a JSON object",
        )
        return
    s_choice, n_choice = chat.first_choice(streamed.document), chat.first_choice(plain.document)
    s_choice, n_choice = reading.as_object(s_choice), reading.as_object(n_choice)
    s_message, n_message = (
        reading.as_object(s_choice.get("message")),
        reading.as_object(n_choice.get("message")),
    )
    # A stream's role chunk carries content "", so "" and null both mean "no text".
    s_text, n_text = s_message.get("content") or "", n_message.get("content") or ""
    if s_text != n_text:
        yield Violation(
            check,
            "choices[0].message.content",
            short(n_text),
            short(s_text),
            "streamed content differs from non-streamed",
        )
    s_calls, n_calls = _calls(s_message), _calls(n_message)
    if len(s_calls) != len(n_calls):
        yield Violation(
            check,
            "choices[0].message.tool_calls",
            len(n_calls),
            len(s_calls),
            "a different number of tool calls",
        )
    for i, (s_call, n_call) in enumerate(zip(s_calls, n_calls, strict=False)):
        for part, label in ((0, "function.name"), (1, "function.arguments")):
            if not json_equal(s_call[part], n_call[part]):
                yield Violation(
                    check,
                    f"choices[0].message.tool_calls[{i}].{label}",
                    short(n_call[part]),
                    short(s_call[part]),
                    f"streamed {label} differs",
                )
    if s_choice.get("finish_reason") != n_choice.get("finish_reason"):
        yield Violation(
            check,
            "choices[0].finish_reason",
            n_choice.get("finish_reason"),
            s_choice.get("finish_reason"),
            "streamed finish_reason differs",
        )
    usage_mode = expected.get("usage", "all") if isinstance(expected, Mapping) else "all"
    if usage_mode is False:
        return  # the profile documents different usage shapes for streams (e.g. LYRouter's Anthropic channels)
    s_usage, n_usage = streamed.document.get("usage"), plain.document.get("usage")
    if s_usage is None and not chat.requested_usage(exchange):
        return  # nothing to compare: the stream was not asked for usage
    if usage_mode == "documented":
        s_usage, n_usage = _documented_usage(s_usage), _documented_usage(n_usage)
    for path, s_value, n_value in _leaf_differences(s_usage, n_usage, "usage"):
        yield Violation(
            check, path, short(n_value), short(s_value), "streamed usage differs from non-streamed"
        )


def _calls(message: Mapping[str, Any]) -> list[tuple[Any, Any]]:
    """(name, parsed arguments) per tool call; arguments stay a string when they do not parse."""
    calls = message.get("tool_calls")
    out = []
    for call in calls if isinstance(calls, list) else []:
        function = reading.as_object(reading.as_object(call).get("function"))
        arguments = function.get("arguments")
        parsed = reading.parse_json(arguments) if isinstance(arguments, str) else reading.Parsed(False)
        out.append((function.get("name"), parsed.value if parsed.ok else arguments))
    return out


# The counts OpenAI's usage object documents and the SDKs' typed `CompletionUsage` exposes; a detail object's
# absent count is 0 (`prompt_tokens_details` and `completion_tokens_details` are optional on the wire).
_DOCUMENTED_USAGE = (
    ("prompt_tokens", None),
    ("completion_tokens", None),
    ("total_tokens", None),
    ("prompt_tokens_details", "cached_tokens"),
    ("completion_tokens_details", "reasoning_tokens"),
)


def _documented_usage(usage: Any) -> Any:
    """The documented counts of a usage object (other objects unchanged, so a missing usage still differs)."""
    if not isinstance(usage, Mapping):
        return usage
    out: dict[str, Any] = {}
    for key, detail in _DOCUMENTED_USAGE:
        if detail is None:
            out[key] = usage.get(key, ABSENT)
        else:
            details = usage.get(key)
            out[f"{key}.{detail}"] = details.get(detail, 0) if isinstance(details, Mapping) else 0
    return out


def _leaf_differences(a: Any, b: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            yield from _leaf_differences(a.get(key, ABSENT), b.get(key, ABSENT), f"{path}.{key}")
    elif not json_equal(a, b):
        yield path, a, b
