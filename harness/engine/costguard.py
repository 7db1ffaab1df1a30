"""The live cost guard (issue 20): what a live run will send, what of it may reach a paid provider, and which
rule variants a `--max-requests` budget buys.

- **Billable or refused.** A rule whose doc sentence says the gateway refuses the request before any provider
  call (a 4xx status with `upstream_calls: 0`) costs no provider tokens from a gateway that follows its doc;
  the plan counts such requests apart, and counts prompt tokens over the billable ones only.
- **Large requests.** A live request body over `LARGE_REQUEST_BYTES` (1 MB) is real bytes uploaded to a hosted
  gateway — and a real provider bill if that gateway does not enforce its limit — so it is sent only with
  `--allow-large-requests`; otherwise the variant is not runnable live, saying so.
- **The budget.** `--max-requests N` spends N on the variants with specific checks first, then structural, then
  status-and-shape only, spread over areas (round robin) within each class; the rest are SKIP (budget), the
  variants that cannot run live keep their reason, and the run says "partial: N of M variants sent".

Pure: forms and rules in, choices and lines out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.engine.live import LiveForm, billable

LARGE_REQUEST_BYTES = 1_000_000
LARGE_OPT_IN = "--allow-large-requests"
BUDGET_PREFIX = "SKIP (budget): "
# The order the budget buys judgments in.
JUDGMENT_ORDER = ("specific", "structural", "shape")


def large_request_reason(form: LiveForm, allowed: bool) -> str | None:
    """Why a variant is not sent live without the opt-in, or None."""
    if allowed or form.reason is not None or form.prompt_bytes <= LARGE_REQUEST_BYTES:
        return None
    mb = form.prompt_bytes / 1_000_000
    return (
        f"not runnable live without {LARGE_OPT_IN}: sends a {mb:.1f} MB request body (real bytes uploaded to the "
        "gateway, and a provider bill if it does not enforce its limit)"
    )


@dataclass(frozen=True)
class Plan:
    """What a live run will send."""

    variants: int  # rule variants in the run
    runnable: int  # of them, those that run live
    requests: int
    billable: int  # requests that may reach a provider
    refused: int  # requests the doc says are refused before any provider call
    max_tokens: int  # output tokens the billable requests may produce at most
    unbounded: int  # billable requests whose output the request does not bound
    prompt_bytes: int  # bytes of the billable requests' bodies

    def describe(self, repeat: int) -> str:
        extra = f" (+{self.unbounded} without a max_tokens bound)" if self.unbounded else ""
        return (
            f"live run: {self.requests} requests to the gateway (repeat {repeat}): {self.billable} may reach a "
            f"provider, {self.refused} the doc says are refused before any provider call; the billable ones may "
            f"produce at most {self.max_tokens} output tokens{extra} and send about {self.prompt_bytes // 4} "
            f"prompt tokens ({self.prompt_bytes} bytes)"
        )


def plan(forms: Sequence[LiveForm], repeat: int) -> Plan:
    requests = billable_n = refused = tokens = unbounded = size = 0
    for form in forms:
        if form.reason is not None:
            continue
        n = form.requests * repeat
        requests += n
        if not form.billable:
            refused += n
            continue
        billable_n += n
        size += form.prompt_bytes * n
        if form.max_tokens is None:
            unbounded += n
        else:
            tokens += form.max_tokens * n
    runnable = sum(1 for f in forms if f.reason is None)
    return Plan(len(forms), runnable, requests, billable_n, refused, tokens, unbounded, size)


def choose(
    forms: Sequence[LiveForm], areas: Sequence[str], repeat: int, max_requests: int | None
) -> set[int]:
    """The indices of the runnable forms the budget sends: specific checks first, spread over areas."""
    runnable = [i for i, f in enumerate(forms) if f.reason is None]
    if max_requests is None:
        return set(runnable)
    chosen: set[int] = set()
    left = max_requests
    for judgment in JUDGMENT_ORDER:
        queues: dict[str, list[int]] = {}
        for i in runnable:
            if forms[i].judgment == judgment:
                queues.setdefault(areas[i], []).append(i)
        while queues and left > 0:
            for area in list(queues):
                queue = queues[area]
                while queue:  # the next of this area that fits
                    i = queue.pop(0)
                    need = forms[i].requests * repeat
                    if need <= left:
                        chosen.add(i)
                        left -= need
                        break
                if not queue:
                    del queues[area]
    return chosen


def budget_reason(max_requests: int) -> str:
    return f"{BUDGET_PREFIX}--max-requests {max_requests} spent; not sent (the budget went to other rule variants)"


def is_budget_skip(result: Mapping[str, Any]) -> bool:
    return result.get("outcome") == "SKIP" and str(result.get("reason") or "").startswith(BUDGET_PREFIX)


def partial_line(documents: Sequence[Mapping[str, Any]]) -> str | None:
    """'partial: N of M variants sent' when a budget cut the run, else None."""
    results = [r for d in documents for r in d["results"]]
    cut = sum(1 for r in results if is_budget_skip(r))
    if not cut:
        return None
    runnable = sum(1 for r in results if r.get("outcome") != "NOT_APPLICABLE")
    return (
        f"partial: {runnable - cut} of {runnable} runnable rule variants sent (--max-requests); "
        f"{cut} SKIP (budget)"
    )


__all__ = [
    "BUDGET_PREFIX",
    "LARGE_OPT_IN",
    "LARGE_REQUEST_BYTES",
    "Plan",
    "billable",
    "budget_reason",
    "choose",
    "is_budget_skip",
    "large_request_reason",
    "partial_line",
    "plan",
]


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
