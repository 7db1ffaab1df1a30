"""Checks of what a gateway adds (specs/features/gateway-features.md): the provider's rate-limit headers passed on,
the mark of the gateway's own limit, an answer its clients do not retry, and the cost it reports against the price
table its set-up declares. The set-up's settings come with the exchange (`Exchange.setup`,
harness/featuresetup.py); what a client retries is harness/checks/retrying.py. Pure."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from decimal import Decimal, InvalidOperation
from fnmatch import fnmatchcase
from typing import Any

from harness.checks import answer, views
from harness.checks.retrying import POLICIES, retried_by
from harness.exchange import Exchange
from harness.surfaces import reading, surface_of
from harness.values import short
from harness.violation import Violation, no_response

# A reported cost matches the price table to this fraction of it (a gateway's rounding to its decimals); every
# token class the feature's cassettes carry is several percent of their cost, so leaving one out never passes.
COST_TOLERANCE = Decimal("0.001")
# The retry hints the SDKs read (openai-python `_parse_retry_after_header`): passed on under these names or not at all.
RETRY_HINTS = frozenset({"retry-after", "retry-after-ms"})


def _declared(exchange: Exchange, feature: str, check: str) -> Mapping[str, Any] | Violation:
    settings = exchange.setup.get(feature)
    if settings is None:
        return Violation(
            check,
            "setup",
            f"features.{feature} in the implementation file",
            None,
            f"the set-up declares nothing for {feature} (certify --implementation FILE, its features block)",
        )
    return settings


def _served_headers(exchange: Exchange) -> Mapping[str, str] | None:
    served = answer.last_served(exchange)
    return None if served is None else {k.lower(): v for k, v in served.headers.items()}


def _error_document(exchange: Exchange) -> Any:
    """The error document of the answer as the surface finds it (the body, or a stream's error event), else the
    body parsed as JSON, else None."""
    found = surface_of(exchange).error_document(exchange)
    if not isinstance(found, Violation):
        return found[0]
    parsed = reading.parse_json(exchange.response.raw)
    return parsed.value if parsed.ok else None


def _dig(value: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.lstrip("-").isdigit() and -len(value) <= int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def check_forwards_headers(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    """Every header of the provider's answer (the last call's) whose name matches the pattern reaches the client with
    the provider's value — unless the set-up names it the gateway's own (`rate-limits.own_headers`), or under the
    prefix the set-up documents for the provider's headers (`rate-limits.provider_headers_prefix`). Own names may be
    globs (`anthropic-ratelimit-unified-*`). The retry hints (Retry-After, retry-after-ms) are never excused: the SDKs
    read them under those names only."""
    missing = no_response("forwards_headers", exchange)
    if missing:
        yield missing
        return
    served = _served_headers(exchange)
    if served is None:
        yield Violation(
            "forwards_headers",
            "upstream",
            "the provider's answer",
            None,
            "no upstream answer was observed (the gateway called no provider, or live mode)",
        )
        return
    settings = exchange.setup.get("rate-limits") or {}
    own = [str(h).lower() for h in settings.get("own_headers") or ()]
    prefix = str(settings.get("provider_headers_prefix") or "").lower()
    pattern = re.compile(str(expected), re.IGNORECASE)
    got = {k.lower(): v for k, v in exchange.response.headers.items()}
    for name, value in sorted(served.items()):
        # The SDKs read the retry hints under their own names only: no declared prefix or ownership excuses them.
        hint = name in RETRY_HINTS
        if not pattern.search(name) or (not hint and any(fnmatchcase(name, glob) for glob in own)):
            continue
        shown = name if hint else prefix + name
        if got.get(shown) != value:
            said = "missing" if shown not in got else f"{got[shown]!r}"
            yield Violation(
                "forwards_headers",
                shown,
                value,
                got.get(shown),
                f"the provider sent {name}: {value}; the client got {said}",
            )


def _mark_present(mark: Mapping[str, Any], exchange: Exchange) -> tuple[bool, str]:
    """Whether the answer carries the declared mark, and where it was looked for."""
    if "header" in mark:
        name = str(mark["header"]).lower()
        return name in {k.lower() for k in exchange.response.headers}, f"header {name}"
    document = _error_document(exchange)
    if "code" in mark:
        error = document.get("error") if isinstance(document, Mapping) else None
        code = error.get("code") if isinstance(error, Mapping) else None
        return code == mark["code"], f"error.code {mark['code']!r}"
    path = str(mark.get("field"))
    return _dig(document, path) is not None, f"the error field {path}"


def check_own_limit(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    """`true`: the answer carries the mark the set-up declares for the gateway's own limit (`rate-limits.own_mark`);
    `false`: it does not (a provider's 429 passed on is not dressed as the gateway's)."""
    missing = no_response("own_limit", exchange)
    if missing:
        yield missing
        return
    settings = _declared(exchange, "rate-limits", "own_limit")
    if isinstance(settings, Violation):
        yield settings
        return
    mark = settings.get("own_mark") or {}
    present, where = _mark_present(mark, exchange)
    if present != bool(expected):
        said = "carries" if present else "lacks"
        whose = "a provider's" if not expected else "the gateway's own"
        yield Violation(
            "own_limit",
            where,
            bool(expected),
            present,
            f"{whose} answer {said} the gateway's own-limit mark ({where}); status {exchange.response.status}, "
            f"body {short(exchange.response.raw, 160)}",
        )


def check_not_retried(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    """The answer is one each named client gives up on (harness/checks/retrying.py): no retry storm."""
    missing = no_response("not_retried", exchange)
    if missing:
        yield missing
        return
    status = exchange.response.status or 0
    headers = {k.lower(): v for k, v in exchange.response.headers.items()}
    document = _error_document(exchange)
    for client in expected:
        if client not in POLICIES:
            yield Violation(
                "not_retried", client, sorted(POLICIES), client, f"no retry policy named {client!r}"
            )
            continue
        why = retried_by(client, status, headers, document)
        if why is not None:
            yield Violation(
                "not_retried",
                client,
                "an answer it does not retry",
                {"status": status, "x-should-retry": headers.get("x-should-retry")},
                f"{client} sends the request again: {why}",
            )


def _number(value: Any) -> Decimal | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float, str)):
        try:
            number = Decimal(str(value).strip())
        except InvalidOperation:
            return None
        return number if number.is_finite() else None
    return None


def _reported(exchange: Exchange, settings: Mapping[str, Any]) -> tuple[Any, str]:
    """The cost the answer reports where the set-up says (None: absent), and that place."""
    if "header" in settings:
        name = str(settings["header"]).lower()
        found = {k.lower(): v for k, v in exchange.response.headers.items()}.get(name)
        return found, f"header {name}"
    path = str(settings.get("field"))
    gateway = views.gateway_answer(exchange)
    return (None if gateway.error is not None else _dig(gateway.document, path)), path


def price_of(usage: Mapping[str, int], prices: Mapping[str, Any], per: int) -> Decimal:
    """The price table times the usage (Anthropic's meaning: input excludes both cache tiers, output includes the
    reasoning tokens, priced at `reasoning` when the table gives it)."""

    def price(name: str, default: str) -> Decimal:
        return Decimal(str(prices.get(name, prices.get(default, 0))))

    thinking = usage.get("thinking_tokens", 0)
    total = (
        usage.get("input_tokens", 0) * price("input", "input")
        + usage.get("cache_read_input_tokens", 0) * price("cache_read", "input")
        + usage.get("cache_creation_input_tokens", 0) * price("cache_write", "input")
        + (usage.get("output_tokens", 0) - thinking) * price("output", "output")
        + thinking * price("reasoning", "output")
    )
    return total / Decimal(per)


def check_cost(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    """`{priced: true}`: the cost the gateway reports (where its set-up says) equals its declared price table times
    the provider's usage in the answer served (both cache tiers, reasoning tokens) — absent on a streamed answer when
    the set-up says cost is not reported there; `{priced: false}`: no cost is reported (absent, not 0)."""
    missing = no_response("cost", exchange)
    if missing:
        yield missing
        return
    settings = _declared(exchange, "cost", "cost")
    if isinstance(settings, Violation):
        yield settings
        return
    value, where = _reported(exchange, settings)
    streamed = reading.requested_stream(exchange)
    priced = bool(expected.get("priced", True)) if isinstance(expected, Mapping) else bool(expected)
    if not priced or (streamed and settings.get("streamed") is False):
        if value is not None:
            why = (
                "a model without a price"
                if not priced
                else "a streamed answer (the set-up reports none there)"
            )
            yield Violation("cost", where, "absent", value, f"{where} is {value!r} for {why}: absent, not 0")
        return
    served = answer.last_served(exchange)
    summary = answer.summarize(served) if served is not None else None
    if summary is None:
        yield Violation(
            "cost", "upstream", "the provider's answer with usage", None, "no upstream answer to price"
        )
        return
    model = exchange.request.json.get("model") if isinstance(exchange.request.json, Mapping) else None
    table = settings.get("prices") or {}
    prices = table.get(model) if isinstance(model, str) else None
    if prices is None:
        yield Violation(
            "cost",
            "setup",
            f"a price for {model!r}",
            None,
            f"the set-up's price table has no price for {model!r}",
        )
        return
    want = price_of(summary.usage, prices, int(settings.get("per_tokens") or 1_000_000))
    got = _number(value)
    if got is None:
        yield Violation(
            "cost", where, str(want), value, f"{where} is {'absent' if value is None else repr(value)}"
        )
        return
    if abs(got - want) > COST_TOLERANCE * want:
        yield Violation(
            "cost",
            where,
            str(want),
            str(got),
            f"{where} is {got}; the price table times the provider's usage {dict(summary.usage)} is {want}",
        )


__all__ = [
    "COST_TOLERANCE",
    "check_cost",
    "check_forwards_headers",
    "check_not_retried",
    "check_own_limit",
    "price_of",
]
