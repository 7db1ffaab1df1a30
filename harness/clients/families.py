"""Which provider family the gateway calls for the clients' model, found up front, and which families a scenario's
provider script answers: a scenario whose family is not scripted is NOT_APPLICABLE, said before anything runs —
never a library's failure (issue 46: a gateway routing MODEL to OpenAI or Gemini had openai-python called BROKEN
because the scenarios scripted only Anthropic's answers)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.clients.scenarios import Scenario
from harness.families import FAMILIES, endpoint_family


def scripted(scenario: Scenario) -> frozenset[str]:
    """The families a scenario's provider script answers: its cassette set's keys, or the family folder of its one
    cassette (`clients/anthropic/text`)."""
    cassette = scenario.upstream.get("cassette")
    if isinstance(cassette, Mapping):
        return frozenset(str(k) for k in cassette)
    if isinstance(cassette, str):
        parts = cassette.split("/")
        family = parts[1] if parts[0] == "clients" and len(parts) > 2 else parts[0]
        return frozenset({family}) if family in FAMILIES else frozenset()
    return frozenset(FAMILIES)  # no provider call scripted: any family


def probe_family(
    base_url: str, key: str, model: str, replay_url: str, surface: Any, headers: Mapping[str, str]
) -> str | None:
    """One plain request through the gateway with a case marker, every family scripted: the family of the first
    provider call it made (None: it made none, or the request failed)."""
    import secrets

    import httpx

    from harness.replay.client import ReplayClient

    marker = f"[gc:clients/family-probe#{secrets.token_hex(6)}]"
    body = surface.insert_marker({"model": model, **surface.hello}, marker)
    sent = {"content-type": "application/json", **surface.request_headers, **dict(headers)}
    if key:
        sent["authorization"] = f"Bearer {key}"
    with ReplayClient(replay_url) as replay:
        replay.register(
            marker, "clients/family-probe", {"cassette": {f: f"{f}/text-basic" for f in FAMILIES}}
        )
        try:
            with httpx.Client(
                trust_env=False, follow_redirects=False, verify=not base_url.startswith("http://")
            ) as c:
                c.post(base_url.rstrip("/") + "/" + surface.endpoint, json=body, headers=sent, timeout=20.0)
        except httpx.HTTPError:
            pass
        calls = replay.calls(marker)
        replay.forget(marker)
    families = [f for f in (endpoint_family(c.path) for c in calls) if f]
    return families[0] if families else None
