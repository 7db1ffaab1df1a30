"""Real gateway bugs through the clients: the embedded reference gateway with exactly one mutant of
harness/mutants/catalog.yaml applied (each models a bug that shipped in a real gateway), the clients
driven through it, and which mutants make at least one client scenario fail (`clients --mutants GLOB`)."""

from __future__ import annotations

import contextlib
import fnmatch
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from harness.clients.drivers.base import Driver
from harness.clients.runner import ClientTarget, run_profile
from harness.clients.scenarios import ScenarioCatalog


@dataclass(frozen=True)
class Caught:
    mutant: str
    models: str
    failed: tuple[str, ...]  # clients/<client>/<scenario> ids that failed under it

    @property
    def caught(self) -> bool:
        return bool(self.failed)


@contextlib.contextmanager
def mutable_gateway(profile: str, replay_url: str, key: str, log: Path) -> Iterator[tuple[str, Any]]:
    """The reference gateway between two mutating proxies; yields (its OpenAI base URL through the client-side
    proxy, a function that puts one mutant on both proxies, None for none)."""
    from harness.clients import orchestration as orchestrate
    from harness.mutants.proxy import ClientBook, ProxyServer

    book = ClientBook()
    with (
        ProxyServer(replay_url, "upstream", book) as upstream,
        orchestrate.reference_gateway(profile, upstream.url, key, log) as url,
    ):
        parts = urlsplit(url)
        with ProxyServer(f"{parts.scheme}://{parts.netloc}", "client", book) as client:

            def use(mutant: Any) -> None:
                upstream.set_mutant(mutant)
                client.set_mutant(mutant)

            yield client.url + parts.path, use


def catch_bugs(
    target: ClientTarget,
    use: Any,
    drivers: Sequence[Driver],
    catalog: ScenarioCatalog,
    pattern: Sequence[str],
) -> tuple[list[Caught], list[str]]:
    """Each selected mutant's failing client scenarios; and what failed with no mutant at all (a baseline
    that must be empty for the count to mean anything)."""
    from harness.mutants.catalog import load_catalog

    use(None)
    baseline = _failed(run_profile(target, drivers, catalog))
    found = []
    for mutant in load_catalog().mutants:
        if not any(fnmatch.fnmatchcase(mutant.id, g) for g in pattern):
            continue
        use(mutant)
        try:
            document = run_profile(target, drivers, catalog)
        finally:
            use(None)
        found.append(Caught(mutant.id, mutant.models, _failed(document)))
    return found, list(baseline)


def _failed(document: dict[str, Any]) -> tuple[str, ...]:
    return tuple(r["rule_id"] for r in document["results"] if r["outcome"] in ("FAIL", "HARNESS_ERROR"))


def bugs_markdown(found: Sequence[Caught], baseline: Sequence[str], profile: str) -> str:
    caught = [c for c in found if c.caught]
    lines = [
        f"# Real gateway bugs through the clients ({profile})",
        "",
        f"{len(caught)} of {len(found)} mutants make at least one client scenario fail"
        + (
            f"; baseline failures: {', '.join(baseline)}"
            if baseline
            else " (baseline: every scenario passes)."
        ),
        "",
        "| mutant | the real bug | client scenarios that fail |",
        "|---|---|---|",
    ]
    for c in found:
        lines.append(f"| `{c.mutant}` | {c.models} | {', '.join(c.failed) or '— (no client notices)'} |")
    return "\n".join(lines) + "\n"
