"""Pure checks: one function per check kind, named like the rule keyword that invokes it; a kind whose meaning
is a surface's own is the surface's (harness/surfaces/), chosen by the exchange's surface, never branched on.

`check_<kind>(expected, exchange)` yields every `Violation` it finds (the way jsonschema keywords
yield errors); `run_checks` runs the kinds a rule's `expect` names. No I/O, no clock, no globals.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.errors import CheckError
from harness.exchange import Exchange, served_status
from harness.surfaces import surface_of
from harness.surfaces.base import Surface
from harness.violation import Check, Violation

CHECKS: dict[str, Check] = {}


def check_for(kind: str, surface: Surface) -> Check:
    """The check a kind names: the surface's own when its meaning is the surface's (`stream_order`), else the
    generic one. A kind neither knows is rule data this surface cannot judge."""
    found = surface.check(kind) or CHECKS.get(kind)
    if found is None:
        raise CheckError(
            f"the check `{kind}` has no meaning for the {surface.title} surface ({surface.name})"
        )
    return found


def implicit(expect: Mapping[str, Any]) -> bool:
    """Whether a rule's expectations get the surface's implicit answer checks: it expects a served answer (2xx, or
    101: a WebSocket upgrade whose socket carries the events) and names no schema or error of its own."""
    if "schema" in expect or "shape" in expect or expect.get("error"):
        return False
    status = expect.get("status", 200)
    statuses = status if isinstance(status, list) else [status]
    return all(isinstance(s, int) and served_status(s) for s in statuses)


def run_checks(expect: Mapping[str, Any], exchange: Exchange) -> list[Violation]:
    """Run every check kind named in `expect`, each as the exchange's surface means it."""
    surface = surface_of(exchange)
    violations: list[Violation] = []
    for kind, expected in expect.items():
        violations.extend(check_for(kind, surface)(expected, exchange))
    if "provider_accepts" not in expect:  # implicit: what the gateway sent, the provider must accept
        violations.extend(CHECKS["provider_accepts"](True, exchange))
    if implicit(expect):  # implicit, replay and live alike: a served answer has the SDK's shape
        for kind in surface.implicit_checks:
            violations.extend(check_for(kind, surface)(True, exchange))
    return violations


# Registration: the generic check kinds. The kinds whose meaning is a surface's own (stream_order,
# finish_reason, stream_matches_nonstream, shape, the live forms) are the surface's (harness/surfaces/).
from harness.checks import gateway as _gateway  # noqa: E402
from harness.checks import listener as _listener  # noqa: E402
from harness.checks import response as _response  # noqa: E402
from harness.checks import streamed as _streamed  # noqa: E402
from harness.checks import upstream as _upstream  # noqa: E402

CHECKS.update(
    {
        "status": _response.check_status,
        "headers": _response.check_headers,
        "error": _response.check_error,
        "json": _response.check_json,
        "chunks": _response.check_chunks,
        "schema": _response.check_schema,
        "usage": _response.check_usage,
        "upstream_calls": _upstream.check_upstream_calls,
        "upstream": _upstream.check_upstream,
        "upstream_headers": _upstream.check_upstream_headers,
        "upstream_schema": _upstream.check_upstream_schema,
        "body": _response.check_body,
        "upstream_raw": _upstream.check_upstream_raw,
        "upstream_compare": _upstream.check_upstream_compare,
        "listener": _listener.check_listener,
        "elapsed": _listener.check_elapsed,
        "streamed": _streamed.check_streamed,
        "provider_accepts": _upstream.check_provider_accepts,
        "upstream_path": _upstream.check_upstream_path,
        # What a gateway adds (specs/features/gateway-features.md), read against its set-up.
        "forwards_headers": _gateway.check_forwards_headers,
        "own_limit": _gateway.check_own_limit,
        "not_retried": _gateway.check_not_retried,
        "cost": _gateway.check_cost,
    }
)

__all__ = ["CHECKS", "Check", "Violation", "check_for", "implicit", "run_checks"]
