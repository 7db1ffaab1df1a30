"""The check that a new recording still shows its cassette's scenario (harness/cassette/scenario.py): the
properties each `expect` key names, judged on an interaction, so `record` never turns a refusal cassette into a
plain answer. Pure: no I/O; the caller passes cassettes and interactions."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import jsonschema

from harness.cassette.document import Cassette, Interaction
from harness.cassette.scenario import Scenario
from harness.cassette.summary import summarize
from harness.checks import answer as answers
from harness.exchange import ServedAnswer
from harness.surfaces import reading
from harness.surfaces.chat_completions import reading as chat

# ---------------------------------------------------------------------------------------------
# Checking one answer against the scenario


def _served(it: Interaction) -> ServedAnswer:
    headers = {k: v[0] for k, v in it.response.headers.items() if v}
    return ServedAnswer(status=it.response.status, headers=headers, body=it.response.body)


def _show(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return "null" if value is None else str(value)


def _bound(name: str, got: int, want: Any) -> Iterator[str]:
    if isinstance(want, int) and not isinstance(want, bool):
        want = {"equals": want}
    want = want if isinstance(want, Mapping) else {}
    if "equals" in want and got != want["equals"]:
        yield f"{name}: got {got}, want {want['equals']}"
    if "min" in want and got < want["min"]:
        yield f"{name}: got {got}, want at least {want['min']}"
    if "max" in want and got > want["max"]:
        yield f"{name}: got {got}, want at most {want['max']}"


def _text_deltas(it: Interaction) -> int:
    """Stream events that carry text (Anthropic text_delta, OpenAI delta.content, Gemini text parts, Responses
    response.output_text.delta)."""
    count = 0
    for payload in reading.stream_view(it.response.body, chat.DONE).payloads:
        data = payload.json if payload.is_object else {}
        if data.get("type") == "response.output_text.delta" and data.get("delta"):
            count += 1
            continue
        delta = reading.as_object(data.get("delta"))
        if delta.get("type") == "text_delta" and delta.get("text"):
            count += 1
        choices = data.get("choices")
        if isinstance(choices, list) and choices and _delta_content(choices[0]):
            count += 1
        candidates = data.get("candidates")
        if isinstance(candidates, list) and candidates:
            parts = reading.as_object(reading.as_object(candidates[0]).get("content")).get("parts") or []
            count += sum(
                1 for p in parts if isinstance(p, Mapping) and p.get("text") and not p.get("thought")
            )
    return count


def _has_logprobs(it: Interaction) -> bool:
    """An OpenAI-compatible answer (or any chunk of its stream) carries token logprobs (`logprobs.content`)."""
    if it.response.is_sse:
        documents = [p.json for p in reading.stream_view(it.response.body, chat.DONE).payloads if p.is_object]
    else:
        body = reading.parse_json(it.response.body)
        documents = [body.value] if body.ok else []
    for document in documents:
        for choice in reading.as_object(document).get("choices") or []:
            if isinstance(choice, dict) and reading.as_object(choice.get("logprobs")).get("content"):
                return True
    return False


def _delta_content(choice: Any) -> bool:
    return bool(reading.as_object(reading.as_object(choice).get("delta")).get("content"))


def problems(expect: Mapping[str, Any], it: Interaction) -> list[str]:
    """What this answer lacks of the scenario, one phrase each (`stop_reason: got end_turn, want refusal`)."""
    summary = summarize(it)
    out: list[str] = []
    if "status" in expect and summary.status != expect["status"]:
        out.append(f"status: got {summary.status}, want {expect['status']}")
    if "error_type" in expect and summary.error_type != expect["error_type"]:
        out.append(f"error type: got {_show(summary.error_type)}, want {expect['error_type']}")
    if "stop_reason" in expect and summary.stop_reason != expect["stop_reason"]:
        out.append(f"stop_reason: got {_show(summary.stop_reason)}, want {expect['stop_reason']}")
    if "blocks" in expect and list(summary.blocks) != list(expect["blocks"]):
        out.append(f"blocks: got {_show(summary.blocks)}, want {_show(expect['blocks'])}")
    if "fields" in expect:
        missing = [f for f in expect["fields"] if f not in summary.content_fields]
        if missing:
            out.append(f"fields: {', '.join(missing)} missing")
    if "usage_fields" in expect:
        missing = [f for f in expect["usage_fields"] if f not in summary.usage_fields]
        if missing:
            out.append(f"usage fields: {', '.join(missing)} missing")
    if expect.get("logprobs") is True and not _has_logprobs(it):
        out.append("logprobs: none in the answer")
    if "text_deltas" in expect and it.response.is_sse:
        out.extend(_bound("text deltas", _text_deltas(it), expect["text_deltas"]))
    answer = answers.summarize(_served(it)) if 200 <= it.response.status < 300 else None
    if answer is None:
        wanted = expect.keys() & {"tool_arguments", "usage", "text", "thinking", "stop_sequence", "model"}
        if wanted:
            out.append("no answer to read " + ", ".join(sorted(wanted)) + " from")
        return out
    out.extend(_answer_problems(expect, answer, it))
    return out


def _answer_problems(
    expect: Mapping[str, Any], answer: answers.UpstreamAnswer, it: Interaction
) -> Iterator[str]:
    for name, schema in (expect.get("tool_arguments") or {}).items():
        calls = [t for t in answer.tool_uses if t.name == name]
        if not calls:
            yield f"tool {name}: not called"
        for call in calls:
            parsed = reading.parse_json(call.arguments)
            if not parsed.ok:
                yield f"tool {name}: arguments are not JSON"
            elif (error := _invalid(parsed.value, schema)) is not None:
                yield f"tool {name}: arguments {error}"
    for name, want in (expect.get("usage") or {}).items():
        yield from _bound(f"usage {name}", answer.usage.get(name, 0), want)
    text = expect.get("text") or {}
    if "min_length" in text and len(answer.text) < text["min_length"]:
        yield f"text: {len(answer.text)} characters, want at least {text['min_length']}"
    if "matches" in text and not re.search(text["matches"], answer.text):
        yield f"text: does not match {text['matches']!r}"
    if "schema" in text:
        parsed = reading.parse_json(answer.text)
        if not parsed.ok:
            yield "text: not JSON"
        elif (error := _invalid(parsed.value, text["schema"])) is not None:
            yield f"text: {error}"
    if expect.get("thinking") is True and not answer.thinking:
        yield "thinking: none"
    if "stop_sequence" in expect:
        got = _stop_sequence(it)
        if got != expect["stop_sequence"]:
            yield f"stop_sequence: got {_show(got)}, want {expect['stop_sequence']}"
    model = expect.get("model") or {}
    if "matches" in model and not re.search(model["matches"], answer.model or ""):
        yield f"model: got {_show(answer.model)}, want one matching {model['matches']!r}"


def _invalid(value: Any, schema: Any) -> str | None:
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as exc:
        return f"invalid: {exc.message}"
    return None


def _stop_sequence(it: Interaction) -> Any:
    if not it.response.is_sse:
        body = reading.parse_json(it.response.body)
        return reading.as_object(body.value).get("stop_sequence") if body.ok else None
    found = None
    for payload in reading.stream_view(it.response.body, chat.DONE).payloads:
        if payload.is_object and payload.json.get("type") == "message_delta":
            found = reading.as_object(payload.json.get("delta")).get("stop_sequence", found)
    return found


def cassette_problems(cassette: Cassette, scenario: Scenario) -> list[str]:
    """Each interaction that should answer the scenario (every 2xx one; all of them for a fault) checked."""
    lines = []
    faulty = "status" in scenario.expect and scenario.expect["status"] >= 400
    for i, it in enumerate(cassette.interactions):
        if not faulty and not 200 <= it.response.status < 300:
            continue
        if faulty and it.response.status < 400:
            continue
        label = "stream" if it.request.stream else "non-stream"
        lines += [f"#{i} ({label}) {p}" for p in problems(scenario.expect, it)]
    return lines


def describe_recording(scenario: Scenario, it: Interaction) -> str:
    """A description true of this recording: the scenario's properties with the values it shows."""
    summary = summarize(it)
    answer = answers.summarize(_served(it))
    expect = scenario.expect
    parts = [f"stop reason {summary.stop_reason}", f"content [{', '.join(summary.blocks)}]"]
    if answer is not None:
        for name in expect.get("tool_arguments") or {}:
            args = [t.arguments for t in answer.tool_uses if t.name == name]
            parts += [f"{name} arguments {a}" for a in args]
        parts += [f"{name} {answer.usage.get(name, 0)}" for name in expect.get("usage") or {}]
        if expect.get("thinking"):
            parts.append(f"{len(answer.thinking)} characters of thinking")
        if "text" in expect or "text_deltas" in expect:
            parts.append(f"{len(answer.text)} characters of text")
        if "model" in expect:
            parts.append(f"model {answer.model}")
    if "text_deltas" in expect:
        parts.append(f"{_text_deltas(it)} text deltas")
    return "Recorded: " + "; ".join(parts) + "."
