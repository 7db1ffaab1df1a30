"""Live mode's cost guard: the requests and output tokens a live run plans (printed before anything is sent),
the `--max-requests` cut, and the tokens each answer reported. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from harness.engine.live import LiveForm


@dataclass(frozen=True)
class CostPlan:
    requests: int
    max_tokens: int
    unbounded: int  # requests whose output the request does not bound
    prompt_bytes: int = 0

    def describe(self, repeat: int) -> str:
        extra = f" (+{self.unbounded} without a max_tokens bound)" if self.unbounded else ""
        return (
            f"live run: {self.requests} requests to the gateway (repeat {repeat}); they may produce at most "
            f"{self.max_tokens} output tokens{extra} and send about {self.prompt_bytes // 4} prompt tokens "
            f"({self.prompt_bytes} bytes)"
        )


def plan_cost(forms: Iterable[LiveForm], repeat: int) -> CostPlan:
    requests = tokens = unbounded = size = 0
    for form in forms:
        if form.reason is not None:
            continue
        n = form.requests * repeat
        requests += n
        size += form.prompt_bytes * n
        if form.max_tokens is None:
            unbounded += n
        else:
            tokens += form.max_tokens * n
    return CostPlan(requests, tokens, unbounded, size)


def budget_cut(forms: Sequence[LiveForm], repeat: int, max_requests: int | None) -> int:
    """How many of `forms` (in run order) fit in `max_requests`; all of them without a limit."""
    if max_requests is None:
        return len(forms)
    used = 0
    for index, form in enumerate(forms):
        need = 0 if form.reason is not None else form.requests * repeat
        if used + need > max_requests:
            return index
        used += need
    return len(forms)


def reported_tokens(exchange: Any) -> dict[str, int]:
    """prompt / completion tokens the gateway reported in one answer (0 when it reported none)."""
    from harness.checks import views

    if exchange is None or exchange.response.status is None:
        return {"prompt_tokens": 0, "completion_tokens": 0}
    try:
        document = views.gateway_answer(exchange).document
    except Exception:  # a garbled answer reports no tokens; its rule says what is wrong with it
        return {"prompt_tokens": 0, "completion_tokens": 0}
    usage = document.get("usage") if isinstance(document, dict) else None
    usage = usage if isinstance(usage, dict) else {}
    out = {}
    for name, alias in (("prompt_tokens", "input_tokens"), ("completion_tokens", "output_tokens")):
        value = usage.get(name, usage.get(alias))
        out[name] = value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
    return out
