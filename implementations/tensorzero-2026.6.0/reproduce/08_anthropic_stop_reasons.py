"""Anthropic's stop reasons `refusal` and `model_context_window_exceeded` become finish_reason "stop" (TensorZero maps
every stop reason it does not know to Unknown, and Unknown to stop). A refused structured-output answer is then a
normal answer whose content is the refusal text: openai-python's parse() fails on it as invalid JSON instead of
raising ContentFilterFinishReasonError. Rules: openai/finish/content-filter, openai/finish/context-window-length,
openai/output/refusal-not-content. Source: crates/tensorzero-core/src/providers/anthropic.rs AnthropicStopReason
(EndTurn, MaxTokens, StopSequence, ToolUse, #[serde(other)] Unknown); endpoints/openai_compatible/types/
chat_completions.rs (`FinishReason::Unknown => OpenAICompatibleFinishReason::Stop`).
    python3 08_anthropic_stop_reasons.py"""
import sys

import openai
import pydantic
from tzstub import CLAUDE, Reply, anthropic_message, gateway, verdict


class Weather(pydantic.BaseModel):
    city: str
    temperature_c: int


def answer(path, body):
    text = body["messages"][0]["content"][0]["text"]
    if "window" in text:
        return Reply(body=anthropic_message("The transcript covers", "model_context_window_exceeded"))
    return Reply(body=anthropic_message("I can't help with that.", "refusal"))


present = False
with gateway(answer) as (url, stub):
    client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
    for text, expected in (("refuse this", "content_filter"), ("fill the window", "length")):
        got = client.chat.completions.create(model=CLAUDE, messages=[{"role": "user", "content": text}])
        finish = got.choices[0].finish_reason
        present |= finish != expected
        print(f"{text!r}: expected finish_reason {expected!r}, got {finish!r}")
    try:
        client.chat.completions.parse(model=CLAUDE, response_format=Weather,
                                      messages=[{"role": "user", "content": "refuse this"}])
        print("parse(): no exception")
    except Exception as e:  # what a structured-output client sees
        print(f"parse() on the refusal: expected ContentFilterFinishReasonError, got {type(e).__name__}")
sys.exit(verdict(present, "Anthropic refusal / context-window stops answered as finish_reason stop"))
