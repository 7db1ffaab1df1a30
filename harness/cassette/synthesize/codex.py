"""The cassettes of Codex's round trips through a gateway (issue 43, items 3 and 4), in every family that can express
them, built with the family generators (ids derive from the names, so regenerating gives byte-identical files); their
scenario blocks are here too (SCENARIOS, merged into scenarios.py's).

* A call of Codex's apply_patch, a custom (freeform) tool whose input is the patch text: on the Responses API a
  `custom_tool_call` streamed as `response.custom_tool_call_input` deltas; for Anthropic, OpenAI chat and Gemini
  the form a gateway that offers the tool as a function taking its text gets back, a call of apply_patch with
  `{"input": "<patch>"}` (its JSON fragments cut just after a backslash, inside an escape sequence).
* A reasoning model's tool turn, whose reasoning a stateless client sends back with the call's output: Claude's
  signed thinking block before its tool_use, Gemini's functionCall with its thoughtSignature, a Responses reasoning
  item (encrypted_content) before its function_call.
"""

from __future__ import annotations

import json
from typing import Any

from harness.cassette.synthesize import anthropic, gemini, openai, responses
from harness.cassette.synthesize.common import PATCH, Synthesized, json_pieces, ok_pair

PATCH_PROMPT = "Change greet.py so it greets GC-PATCH-u4Jc. Use apply_patch."
WEATHER_PROMPT = "What's the weather in Oslo? Use the tool."
PATCH_SOURCE = "Codex apply_patch (a FREEFORM tool, its input the patch)"
# The request the scenarios send: the patch Codex would apply, in its own format.
PATCH_ASK = (
    'Use apply_patch to change greet.py, which holds print("Hello"), so that it prints Hello, GC-PATCH-u4Jc! '
    "Write the patch in apply_patch's format: *** Begin Patch, *** Update File: greet.py, the hunk, *** End Patch."
)
PATCH_DESCRIPTION = "Apply a patch to a file of the workspace; the input is the patch text."
PATCH_SCHEMA = {
    "type": "object",
    "properties": {"input": {"type": "string", "description": "The patch text."}},
    "required": ["input"],
    "additionalProperties": False,
}
PATCH_ARGS = {
    "type": "object",
    "required": ["input"],
    "properties": {"input": {"type": "string", "pattern": "^\\*\\*\\* Begin Patch[\\s\\S]*GC-PATCH-u4Jc"}},
}
WEATHER_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
OSLO = {"type": "object", "required": ["city"], "properties": {"city": {"const": "Oslo"}}}
WEATHER = {"name": "get_weather", "description": "Current weather for a city", "input_schema": WEATHER_SCHEMA}


def _anthropic() -> list[Synthesized]:
    def one(name: str, description: str, source: str, prompt: str, blocks: Any, usage: Any) -> Synthesized:
        metadata = {"origin": "synthesized", "date": anthropic.DATE, "provider": "anthropic",
                    "api_version": anthropic.API_VERSION, "model": anthropic.MODEL, "description": description,
                    "source": source}  # fmt: skip
        return Synthesized(
            f"anthropic/{name}", metadata, anthropic.ok_interactions(name, prompt, blocks, "tool_use", usage)
        )

    return [
        one(
            "thinking-tool-use",
            "A thinking block with its signature, then one tool_use block (get_weather, city Oslo): stop_reason "
            "tool_use. With thinking on, Anthropic wants this thinking block back unchanged, first in the assistant "
            "turn, when the tool result is sent (extended thinking guide, Preserving thinking blocks).",
            "wire-reference.md §1.4, §1.5, §1.6, §1.7 (thinking block, signature_delta, tool-use fixture)",
            WEATHER_PROMPT,
            [
                anthropic.thinking(
                    "thinking-tool-use",
                    "The user wants the weather in Oslo;",
                    " THINKING-TOOL-m2Vq: I will call get_weather.",
                ),
                anthropic.tool("thinking-tool-use", 0, "get_weather", '{"city"', ': "Os', 'lo"}'),
            ],
            {"input_tokens": 412, "output_tokens": 118, "thinking_tokens": 64},
        ),
        one(
            "custom-tool-call",
            "One tool_use block calling apply_patch with {input: <patch text>} (Codex's freeform apply_patch offered "
            "as a function taking its text): stop_reason tool_use. Its input_json_delta pieces are cut twice just "
            "after a backslash, inside an escape sequence.",
            f"wire-reference.md §1.4, §1.6, §1.7 (tool-use fixture); {PATCH_SOURCE}",
            PATCH_PROMPT,
            [
                anthropic.tool(
                    "custom-tool-call", 0, "apply_patch", *json_pieces(json.dumps({"input": PATCH}))
                )
            ],
            {"input_tokens": 530, "output_tokens": 61},
        ),
    ]


_PATCH_TOOL_CALL: dict[str, Any] = {
    "id": openai.call_id("custom-tool-call", 0),
    "name": "apply_patch",
    "pieces": json_pieces(json.dumps({"input": PATCH})),
}
_PATCH_CALL: dict[str, Any] = {
    "content": None,
    "tool_calls": [_PATCH_TOOL_CALL],
    "finish": "tool_calls",
    "usage": openai.usage(530, 61),
}
_REASONING_CALL: dict[str, Any] = {
    "reasoning_content": ["The user wants Oslo's weather;", " REASONING-TOOL-k8Wd: call get_weather."],
    "tool_calls": [
        {"id": openai.call_id("tool-call", 0), "name": "get_weather", "pieces": ['{"city":', ' "Oslo"}']}
    ],
    "finish": "tool_calls",
    "usage": openai.usage(61, 80, reasoning=64),
}
GPT = "gpt-5.5-2026-09-18"


def _openai() -> list[Synthesized]:
    metadata = {
        "origin": "synthesized",
        "date": openai.DATE,
        "provider": "openai",
        "model": GPT,
        "description": "One function tool call apply_patch with arguments {input: <patch text>} (Codex's freeform "
        "apply_patch offered as a function taking its text), content null, finish_reason tool_calls; the argument "
        "fragments are cut twice just after a backslash, inside an escape sequence.",
        "source": f"wire-reference.md §2.3, §2.5 (tool-call stream); {PATCH_SOURCE}",
    }
    interactions = openai.ok_interactions("custom-tool-call", GPT, PATCH_PROMPT, _PATCH_CALL)
    return [Synthesized("openai/custom-tool-call", metadata, interactions)]


def _responses() -> list[Synthesized]:
    """The Responses forms: apply_patch a custom tool (its call a custom_tool_call, `input` the patch); a reasoning
    item before a function_call."""
    patch_call = {**_PATCH_CALL, "tool_calls": [{**_PATCH_TOOL_CALL, "input": PATCH}]}
    out = []
    for name, prompt, answer, description in (
        (
            "custom-tool-call",
            PATCH_PROMPT,
            patch_call,
            "The Responses form of openai/custom-tool-call, apply_patch offered as a custom (freeform) tool as Codex "
            "offers it: one custom_tool_call item whose input is the patch text, streamed as "
            "response.custom_tool_call_input deltas (two lines each) and its done event; status completed.",
        ),
        (
            "reasoning-tool-call",
            WEATHER_PROMPT,
            _REASONING_CALL,
            "A reasoning item (its summary, and the encrypted_content a stateless client sends back), then one "
            "function_call (get_weather, city Oslo): a reasoning model's answer with a tool call, whose reasoning item "
            "Codex sends back with the call's output on the next turn (store false).",
        ),
    ):
        pair = ok_pair(
            (
                responses.request(GPT, stream=False, prompt=prompt),
                responses.request(GPT, stream=True, prompt=prompt),
            ),
            (
                openai.dumps(responses.response(name, GPT, answer)),
                responses.sse(responses.events(name, GPT, answer)),
            ),
            (
                openai.headers(f"responses/{name}", 0, sse=False),
                openai.headers(f"responses/{name}", 1, sse=True),
            ),
        )
        metadata = {
            "origin": "synthesized",
            "date": "2026-12-07",
            "provider": "responses",
            "model": GPT,
            "description": description,
            "source": "OpenAI API reference: Responses (the response object: custom tool call, reasoning and "
            "function call items; streaming events); openai-python 3.57 types; Reasoning guide (encrypted reasoning "
            "items)",
        }
        out.append(Synthesized(f"responses/{name}", metadata, pair))
    return out


def _gemini() -> list[Synthesized]:
    metadata = {"origin": "synthesized", "date": gemini.DATE, "provider": "gemini", "api_version": gemini.API_VERSION,
                "model": gemini.MODEL, "source": gemini.SOURCE}  # fmt: skip
    declaration = {"name": "apply_patch", "description": PATCH_DESCRIPTION,
                   "parameters": {k: v for k, v in PATCH_SCHEMA.items() if k != "additionalProperties"}}  # fmt: skip
    signature = "CiQB" + gemini._rand("tool-call-thought-signature", "sig", 40)
    return [
        Synthesized(
            "gemini/custom-tool-call",
            {
                **metadata,
                "description": "One whole functionCall part calling apply_patch with args {input: <patch text>} "
                "(Codex's freeform apply_patch offered as a function taking its text), finishReason STOP.",
            },
            gemini.ok_interactions(
                "custom-tool-call",
                PATCH_PROMPT,
                [gemini.call("apply_patch", {"input": PATCH})],
                "STOP",
                {"prompt": 530, "output": 61},
                req_extra={"tools": [{"functionDeclarations": [declaration]}]},
            ),
        ),
        Synthesized(
            "gemini/tool-call-thought-signature",
            {
                **metadata,
                "description": "A thinking model's functionCall part (get_weather, city Oslo) carrying its "
                "thoughtSignature, finishReason STOP; thoughtsTokenCount 64. The signature goes back on that part with "
                "the function's response (Gemini API, Thought signatures: Gemini 3 refuses a current turn's call "
                "without it).",
            },
            gemini.ok_interactions(
                "tool-call-thought-signature",
                WEATHER_PROMPT,
                [gemini.call("get_weather", {"city": "Oslo"}, signature)],
                "STOP",
                {"prompt": 58, "output": 7, "thoughts": 64},
                req_extra={**gemini.TOOLS, "generationConfig": {"thinkingConfig": {"thinkingBudget": 1024}}},
            ),
        ),
    ]


def cassettes() -> list[Synthesized]:
    return [*_anthropic(), *_openai(), *_responses(), *_gemini()]


def _recordable(request: dict[str, Any], **expect: Any) -> dict[str, Any]:
    return {"recordable": True, "request": request, "expect": expect}


def _function(name: str, description: str, parameters: Any) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


SCENARIOS: dict[str, dict[str, Any]] = {
    "anthropic/thinking-tool-use": _recordable(
        {
            "model": anthropic.MODEL,
            "max_tokens": 2048,
            "messages": [{"role": "user", "content": WEATHER_PROMPT}],
            "thinking": {"type": "enabled", "budget_tokens": 1024},
            "tools": [WEATHER],
            "tool_choice": {"type": "auto"},
        },  # a forced choice is refused with thinking on
        stop_reason="tool_use",
        blocks=["thinking", "tool_use(get_weather)"],
        thinking=True,
        tool_arguments={"get_weather": OSLO},
    ),
    "anthropic/custom-tool-call": _recordable(
        {
            "model": anthropic.MODEL,
            "max_tokens": 1024,
            "messages": [{"role": "user", "content": PATCH_ASK}],
            "tools": [
                {"name": "apply_patch", "description": PATCH_DESCRIPTION, "input_schema": PATCH_SCHEMA}
            ],
            "tool_choice": {"type": "tool", "name": "apply_patch"},
        },
        stop_reason="tool_use",
        blocks=["tool_use(apply_patch)"],
        tool_arguments={"apply_patch": PATCH_ARGS},
    ),
    "openai/custom-tool-call": _recordable(
        {
            "model": "gpt-5.5",
            "messages": [{"role": "user", "content": PATCH_ASK}],
            "tools": [_function("apply_patch", PATCH_DESCRIPTION, PATCH_SCHEMA)],
            "tool_choice": "required",
        },
        stop_reason="tool_calls",
        blocks=["tool_call(apply_patch)"],
        tool_arguments={"apply_patch": PATCH_ARGS},
    ),
    "responses/custom-tool-call": _recordable(
        # The custom tool as Codex declares it (no format: freeform text); its call is a custom_tool_call.
        {
            "model": "gpt-5.5",
            "input": PATCH_ASK,
            "tool_choice": "required",
            "tools": [{"type": "custom", "name": "apply_patch", "description": PATCH_DESCRIPTION}],
        },
        stop_reason="completed",
        blocks=["custom_tool_call(apply_patch)"],
        tool_arguments={"apply_patch": PATCH_ARGS},
    ),
    "responses/reasoning-tool-call": _recordable(
        # Codex's turn: store false and the reasoning item's encrypted_content, a tool the model must call.
        {
            "model": "gpt-5.5",
            "input": "What is the weather in Oslo?",
            "tool_choice": "required",
            "tools": [
                {
                    "type": "function",
                    "name": "get_weather",
                    "description": WEATHER["description"],
                    "parameters": WEATHER_SCHEMA,
                }
            ],
            "reasoning": {"effort": "medium", "summary": "auto"},
            "include": ["reasoning.encrypted_content"],
            "store": False,
        },
        stop_reason="completed",
        blocks=["reasoning", "function_call(get_weather)"],
        thinking=True,
        tool_arguments={"get_weather": OSLO},
    ),
    "gemini/custom-tool-call": _recordable(
        {
            "contents": [{"role": "user", "parts": [{"text": PATCH_ASK}]}],
            "tools": [
                {
                    "functionDeclarations": [
                        {
                            "name": "apply_patch",
                            "description": PATCH_DESCRIPTION,
                            "parameters": {
                                k: v for k, v in PATCH_SCHEMA.items() if k != "additionalProperties"
                            },
                        }
                    ]
                }
            ],
            "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["apply_patch"]}},
        },
        stop_reason="STOP",
        blocks=["functionCall(apply_patch)"],
        tool_arguments={"apply_patch": PATCH_ARGS},
    ),
    "gemini/tool-call-thought-signature": _recordable(
        # A thinking budget: a thinking model signs its first function call of the step (thoughtSignature).
        {
            "contents": [{"role": "user", "parts": [{"text": "What is the weather in Oslo?"}]}],
            "tools": [
                {
                    "functionDeclarations": [
                        {
                            "name": "get_weather",
                            "description": WEATHER["description"],
                            "parameters": WEATHER_SCHEMA,
                        }
                    ]
                }
            ],
            "generationConfig": {"thinkingConfig": {"thinkingBudget": 1024}},
        },
        stop_reason="STOP",
        blocks=["functionCall(get_weather)"],
        tool_arguments={"get_weather": OSLO},
    ),
}
