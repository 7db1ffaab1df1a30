"""The client scenarios' provider scripts for the families beside Anthropic (cassettes/clients/openai/,
cassettes/clients/responses/, cassettes/clients/gemini/): the same answers as cassettes/clients/anthropic/ — the
same text, tool calls, JSON and usage (21 input, 9 output tokens) — in each family's documented wire format, built
with the helpers of openai.py, responses.py and gemini.py. So a gateway that routes the clients' model to an
OpenAI-compatible provider, OpenAI's Responses API or Gemini is judged on what its clients get, instead of every
scenario being not applicable (issue 46). Gemini answers carry no tool-call ids: its function calls are left to
the Anthropic, OpenAI and Responses scripts. Synthesized, not recorded."""

from __future__ import annotations

from typing import Any

from harness.cassette.synthesize import gemini as G
from harness.cassette.synthesize import openai as O
from harness.cassette.synthesize import responses as R
from harness.cassette.synthesize.common import Synthesized

MODEL = "gpt-5.5-2026-09-18"
USAGE = O.usage(21, 9)
TEXT = ["Hello from ", "the scripted ", "provider."]
LIMIT = "Rate limit reached for requests per min. Please try again in 1s."
RETRY = {"retry-after": "1", "x-should-retry": "true"}


def _answer(
    content: list[str] | None, finish: str, calls: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {"content": content, "finish": finish, "usage": USAGE}
    if calls:
        out["tool_calls"] = calls
    return out


def _call(name: str, i: int, tool: str, *pieces: str) -> dict[str, Any]:
    return {"id": O.call_id(f"clients/{name}", i), "name": tool, "pieces": list(pieces)}


ANSWERS: dict[str, list[dict[str, Any]]] = {
    "text": [_answer(TEXT, "stop")],
    "tool-round-trip": [
        _answer(None, "tool_calls", [_call("tool-round-trip", 0, "get_weather", '{"city": ', '"Oslo"}')]),
        _answer(["It is 7 degrees ", "in Oslo."], "stop"),
    ],
    "parallel-tools": [
        _answer(
            ["Looking both up."],
            "tool_calls",
            [
                _call("parallel-tools", 0, "get_weather", '{"city":', ' "Oslo"}'),
                _call("parallel-tools", 1, "get_time", '{"timezone": ', '"Europe/Paris"}'),
            ],
        )
    ],
    "structured": [_answer(['{"city": "Oslo", ', '"temperature_c": 7}'], "stop")],
}


def _turns(pairs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Each turn's non-streaming interaction first, then each turn's streaming one (the replay serves the
    interactions that match a request's stream flag in cassette order)."""
    return [p[0] for p in pairs] + [p[1] for p in pairs]


def _openai(name: str, answer: dict[str, Any], turn: int) -> list[dict[str, Any]]:
    return O.ok_interactions(f"clients/{name}-{turn}", MODEL, "[gc] client", answer)


def _responses(name: str, answer: dict[str, Any], turn: int) -> list[dict[str, Any]]:
    label = f"clients-{name}-{turn}"
    return [
        {
            "request": R.request(MODEL, stream=stream, prompt="[gc] client"),
            "response": {
                "body": {"string": R.sse(R.events(label, MODEL, answer)) if stream
                         else O.dumps(R.response(label, MODEL, answer))},
                "headers": O.headers(f"responses/{label}", int(stream), sse=stream),
                "status": {"code": 200, "message": "OK"},
            },
        }
        for stream in (False, True)
    ]  # fmt: skip


def _gemini(name: str, answer: dict[str, Any], turn: int) -> list[dict[str, Any]]:
    finish = {"stop": "STOP"}[answer["finish"]]
    return G.ok_interactions(f"clients/{name}-{turn}", "[gc] client", [G.text(*answer["content"])], finish,
                             {"prompt": 21, "output": 9})  # fmt: skip


def _limited(family: str) -> list[dict[str, Any]]:
    """HTTP 429 for both stream flags, in the family's error envelope."""
    if family == "gemini":
        return [
            G.error_interaction(429, "Resource has been exhausted (e.g. check quota).", stream=s)
            for s in (False, True)
        ]
    error = {"message": LIMIT, "type": "requests", "param": None, "code": "rate_limit_exceeded"}
    out = O.error_interactions("clients/rate-limit", MODEL, 429, error, RETRY)
    if family == "responses":
        for it, stream in zip(out, (False, True), strict=True):
            it["request"] = R.request(MODEL, stream=stream, prompt="[gc] client")
    return out


BUILD = {"openai": _openai, "responses": _responses, "gemini": _gemini}
URI = {"openai": O.URI, "responses": R.URI, "gemini": G.BASE}


def catalogue(family: str) -> dict[str, tuple[str, list[dict[str, Any]]]]:
    build = BUILD[family]
    out: dict[str, tuple[str, list[dict[str, Any]]]] = {
        "text": (
            "A three-piece text answer, 21 input and 9 output tokens.",
            build("text", ANSWERS["text"][0], 0),
        ),
        "rate-limit": ("HTTP 429 on every attempt.", _limited(family)),
    }
    limited, text = _limited(family), build("rate-limit-retry", ANSWERS["text"][0], 0)
    out["rate-limit-retry"] = (
        "HTTP 429 once, then the text answer (per stream flag).",
        [limited[0], text[0], limited[1], text[1]],
    )
    if family != "gemini":
        out["tool-round-trip"] = (
            "Turn 1: get_weather(city=Oslo) as a tool call; turn 2 (after the tool result): a text answer.",
            _turns([build("tool-round-trip", a, i) for i, a in enumerate(ANSWERS["tool-round-trip"])]),
        )
        out["parallel-tools"] = (
            "A text part, then get_weather(Oslo) and get_time(Europe/Paris) as two tool calls.",
            build("parallel-tools", ANSWERS["parallel-tools"][0], 0),
        )
        out["structured"] = (
            "The JSON object a json_schema answer holds, as text: city Oslo, temperature_c 7.",
            build("structured", ANSWERS["structured"][0], 0),
        )
    return out


def tool_ids(family: str, name: str) -> list[str]:
    """The ids the first answer of scenario cassette `name` gives its tool calls (what must come back)."""
    return [c["id"] for c in ANSWERS[name][0].get("tool_calls") or []]


def cassettes() -> list[Synthesized]:
    return [
        Synthesized(
            f"clients/{family}/{name}",
            {
                "origin": "synthesized",
                "date": "2026-12-07",
                "provider": {"openai": "openai", "responses": "openai", "gemini": "gemini"}[family],
                "api_version": "v1beta" if family == "gemini" else "v1",
                "model": G.MODEL if family == "gemini" else MODEL,
                "description": description,
                "source": "wire-reference.md; built by harness/cassette/synthesize/clients_families.py",
            },
            interactions,
        )
        for family in ("openai", "responses", "gemini")
        for name, (description, interactions) in catalogue(family).items()
    ]
