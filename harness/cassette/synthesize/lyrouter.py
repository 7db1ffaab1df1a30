"""The synthesized cassettes only the `lyrouter` catalog uses: Anthropic answers for fallback between its channels
and for usage and model shapes the shared catalogue does not have (cassettes/anthropic/lyrouter-*), and its doc's
200 example as an OpenAI-compatible answer (cassettes/openai/text-three-deltas)."""

from __future__ import annotations

from typing import Any

from harness.cassette.synthesize import anthropic
from harness.cassette.synthesize.common import Synthesized
from harness.cassette.synthesize.openai import DATE


def anthropic_catalogue(am: Any) -> dict[str, tuple[str, str, list[dict[str, Any]]]]:
    """name -> (description, source, interactions), written to cassettes/anthropic/lyrouter-<name>.yaml."""
    c: dict[str, tuple[str, str, list[dict[str, Any]]]] = {}
    text_blocks = [am.text("Fallback worked:", " the second channel answered.")]
    for status, etype, msg, extra in (
        (500, "api_error", "Internal server error", {"x-should-retry": "true"}),
        (529, "overloaded_error", "Overloaded", {"retry-after": "3", "x-should-retry": "true"}),
    ):
        name = f"lyrouter-fallback-{status}"
        errs = am.error_interactions(name, status, etype, msg, extra)
        oks = am.ok_interactions(
            name,
            "What is a prompt cache?",
            text_blocks,
            "end_turn",
            {"input_tokens": 27, "output_tokens": 12},
        )
        # Per stream flag: the error first, then the success (the replay repeats the last one).
        c[name] = (
            f"Channel fallback: per stream flag, the first call gets HTTP {status} {etype}, every later call "
            "a text answer (end_turn).",
            "wire-reference.md §1.6, §1.7, §1.8",
            [errs[0], oks[0], errs[1], oks[1]],
        )

    name = "lyrouter-cache-mixed"
    c[name] = (
        "Text answer with both cache reads (1024) and cache writes (300) beside 226 uncached input tokens, "
        "as in the LYRouter doc's Anthropic usage example.",
        "wire-reference.md §1.6 (Usage), §1.7",
        am.ok_interactions(
            name,
            "And the next turn?",
            [am.text("Here is", " the next turn.")],
            "end_turn",
            {
                "input_tokens": 226,
                "cache_read_input_tokens": 1024,
                "cache_creation_input_tokens": 300,
                "output_tokens": 32,
            },
        ),
    )

    name = "lyrouter-model-alias"
    inter = am.ok_interactions(
        name,
        "What is a prompt cache?",
        [am.text("A prompt cache", " stores a prefix.")],
        "end_turn",
        {"input_tokens": 27, "output_tokens": 9},
    )
    for it in inter:  # the upstream names the model differently from the requested id
        it["response"]["body"]["string"] = it["response"]["body"]["string"].replace(
            '"model":"claude-sonnet-5-5"', '"model":"claude-sonnet-5-5-20261015"'
        )
    c[name] = (
        "Plain text answer whose `model` is claude-sonnet-5-5-20261015 (a dated name, not the requested id).",
        "wire-reference.md §1.6, §1.7",
        inter,
    )
    return c


# LYRouter's "Response (200 example)" as a cassette (lyrouter-chat-completions.md): the doc's text in exactly three
# content deltas, the model name the upstream returned, cached prompt tokens. The doc's example, so its ids and
# headers are the values written here rather than derived from the name.
THREE_DELTAS_METADATA = {
    "origin": "synthesized",
    "date": "2026-11-29",
    "provider": "openai",
    "model": "gpt-5.5-2026-09-18",
    "description": "Plain text answer streamed as exactly three content deltas (LYRouter is / a trusted model "
    "service / and token governance platform.), finish_reason stop. of them cached, 32 "
    "completion). The model name differs from the requested id (gpt-5.5).",
    "source": "wire-reference.md §2.3, §2.4, §2.5; lyrouter-chat-completions.md Response (200 example)",
}
THREE_DELTAS_INTERACTIONS: list[dict[str, Any]] = [
    {
        "request": {
            "body": '{"model":"gpt-5.5","messages":[{"role":"user","content":"Introduce LYRouter in one '
            'sentence."}],"stream":false}',
            "headers": {
                "accept": ["application/json"],
                "content-type": ["application/json"],
                "user-agent": ["UA"],
            },
            "method": "POST",
            "uri": "https://api.openai.com/v1/chat/completions",
        },
        "response": {
            "body": {
                "string": '{"id":"chatcmpl-fJZIvTTFMqlsbShtp8yvFKCHPsSHR","object":"chat.completion","created":1795953600,"model":"gpt-5.5-2026-09-18","choices":[{"index":0,"message":{"role":"assistant","content":"LYRouter '
                "is a trusted model service and token governance "
                'platform.","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":1250,"completion_tokens":32,"total_tokens":1282,"prompt_tokens_details":{"cached_tokens":1024,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"service_tier":"default","system_fingerprint":"fp_llIMu0xLvu"}'
            },
            "headers": {
                "content-type": ["application/json"],
                "x-request-id": ["req_6e3a85044d22e85f86139fd496f5f9f5"],
                "openai-processing-ms": ["412"],
                "x-ratelimit-limit-requests": ["10000"],
                "x-ratelimit-remaining-requests": ["9999"],
                "x-ratelimit-limit-tokens": ["30000000"],
                "x-ratelimit-remaining-tokens": ["29998750"],
            },
            "status": {"code": 200, "message": "OK"},
        },
    },
    {
        "request": {
            "body": '{"model":"gpt-5.5","messages":[{"role":"user","content":"Introduce LYRouter in one '
            'sentence."}],"stream":true,"stream_options":{"include_usage":true}}',
            "headers": {
                "accept": ["application/json"],
                "content-type": ["application/json"],
                "user-agent": ["UA"],
            },
            "method": "POST",
            "uri": "https://api.openai.com/v1/chat/completions",
        },
        "response": {
            "body": {
                "string": "data: "
                '{"id":"chatcmpl-fJZIvTTFMqlsbShtp8yvFKCHPsSHR","object":"chat.completion.chunk","created":1795953600,"model":"gpt-5.5-2026-09-18","service_tier":"default","system_fingerprint":"fp_llIMu0xLvu","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}\n'
                "\n"
                "data: "
                '{"id":"chatcmpl-fJZIvTTFMqlsbShtp8yvFKCHPsSHR","object":"chat.completion.chunk","created":1795953600,"model":"gpt-5.5-2026-09-18","service_tier":"default","system_fingerprint":"fp_llIMu0xLvu","choices":[{"index":0,"delta":{"content":"LYRouter '
                'is"},"logprobs":null,"finish_reason":null}],"usage":null}\n'
                "\n"
                "data: "
                '{"id":"chatcmpl-fJZIvTTFMqlsbShtp8yvFKCHPsSHR","object":"chat.completion.chunk","created":1795953600,"model":"gpt-5.5-2026-09-18","service_tier":"default","system_fingerprint":"fp_llIMu0xLvu","choices":[{"index":0,"delta":{"content":" '
                "a trusted model "
                'service"},"logprobs":null,"finish_reason":null}],"usage":null}\n'
                "\n"
                "data: "
                '{"id":"chatcmpl-fJZIvTTFMqlsbShtp8yvFKCHPsSHR","object":"chat.completion.chunk","created":1795953600,"model":"gpt-5.5-2026-09-18","service_tier":"default","system_fingerprint":"fp_llIMu0xLvu","choices":[{"index":0,"delta":{"content":" '
                "and token governance "
                'platform."},"logprobs":null,"finish_reason":null}],"usage":null}\n'
                "\n"
                "data: "
                '{"id":"chatcmpl-fJZIvTTFMqlsbShtp8yvFKCHPsSHR","object":"chat.completion.chunk","created":1795953600,"model":"gpt-5.5-2026-09-18","service_tier":"default","system_fingerprint":"fp_llIMu0xLvu","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}\n'
                "\n"
                "data: "
                '{"id":"chatcmpl-fJZIvTTFMqlsbShtp8yvFKCHPsSHR","object":"chat.completion.chunk","created":1795953600,"model":"gpt-5.5-2026-09-18","service_tier":"default","system_fingerprint":"fp_llIMu0xLvu","choices":[],"usage":{"prompt_tokens":1250,"completion_tokens":32,"total_tokens":1282,"prompt_tokens_details":{"cached_tokens":1024,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}\n'
                "\n"
                "data: [DONE]\n"
                "\n"
            },
            "headers": {
                "content-type": ["text/event-stream; charset=utf-8"],
                "x-request-id": ["req_75467bbb281660abd6f0f3284da3a27e"],
                "openai-processing-ms": ["412"],
                "x-ratelimit-limit-requests": ["10000"],
                "x-ratelimit-remaining-requests": ["9999"],
                "x-ratelimit-limit-tokens": ["30000000"],
                "x-ratelimit-remaining-tokens": ["29998750"],
                "cache-control": ["no-cache"],
            },
            "status": {"code": 200, "message": "OK"},
        },
    },
]


def cassettes() -> list[Synthesized]:
    out = [Synthesized("openai/text-three-deltas", dict(THREE_DELTAS_METADATA), THREE_DELTAS_INTERACTIONS)]
    out += [
        Synthesized(
            f"anthropic/{name}",
            {
                "origin": "synthesized",
                "date": DATE,
                "provider": "anthropic",
                "api_version": anthropic.API_VERSION,
                "model": anthropic.MODEL,
                "description": description,
                "source": source,
            },
            interactions,
        )
        for name, (description, source, interactions) in anthropic_catalogue(anthropic).items()
    ]
    return out
