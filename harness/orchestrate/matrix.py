"""`matrix`: every catalog (profile with rules) against every gateway — by default the embedded reference
gateway in each profile — one column per gateway (harness/report/matrix.py renders them)."""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from harness.errors import ConfigError, HarnessFailure
from harness.orchestrate.child import (
    Run,
    profiles_with_rules,
    replay_upstream,
    rerun_line,
    run_pytest,
    selected_profiles,
)
from harness.orchestrate.embedded import (
    embedded_args,
    embedded_features,
    reference_gateway,
    reference_model_map,
)
from harness.report.matrix import Column


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "gateway"


def _run_column(
    name: str,
    url: str,
    catalogs: Sequence[str],
    out_dir: Path,
    key: str | None,
    replay_url: str,
    extra: Sequence[str],
    features: tuple[str, ...],
    model_maps: Mapping[str, str | None] | None = None,
    rerun: Callable[[str], str] | None = None,
) -> Column:
    documents, errors = [], {}
    for profile in catalogs:
        run = Run(
            profile=profile,
            gateway_url=url,
            description=name,
            replay_url=replay_url,
            features=features,
            model_map=(model_maps or {}).get(profile),
            rerun_base=rerun(profile) if rerun else None,
        )
        print(f"matrix: {name} x {profile} catalog", flush=True)
        try:
            documents.append(run_pytest(run, out_dir / profile, key, extra))
        except HarnessFailure as exc:
            errors[profile] = f"not run: {exc}"
    return Column(name, tuple(documents), errors, url)


def _reference_rerun(gateway_profile: str) -> Callable[[str], str]:
    """The embedded reference gateway stops with the matrix: rerun through a command that starts it."""

    def rerun(catalog: str) -> str:
        if catalog == gateway_profile:
            return rerun_line(["gateway-conformance", "certify", "--profile", catalog])
        return rerun_line(["gateway-conformance", "matrix", "--profiles", f"{gateway_profile},{catalog}"])

    return rerun


def _reference_column(
    profile: str, catalogs: Sequence[str], out_dir: Path, key: str, upstream: str, extra: Sequence[str]
) -> Column:
    """The embedded reference gateway in `profile`, judged on every catalog."""
    name = f"reference ({profile})"
    column_dir = out_dir / _slug(name)
    try:
        with reference_gateway(profile, upstream, key, column_dir / "gateway.log") as url:
            maps = {catalog: reference_model_map(profile, catalog) for catalog in catalogs}
            features = embedded_features(profile)
            return _run_column(
                name,
                url,
                catalogs,
                column_dir,
                key,
                upstream,
                [*embedded_args(profile), *extra],
                features,
                maps,
                _reference_rerun(profile),
            )
    except HarnessFailure as exc:
        # _run_column catches its own failures: what reaches here is the gateway failing to start.
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        # The first line says what happened, the log's last line usually why.
        why = (
            "did not start: " + " … ".join(dict.fromkeys([lines[0], lines[-1]])) if lines else "did not start"
        )
        return Column(name, (), dict.fromkeys(catalogs, why))


def run_matrix(
    out_dir: Path,
    profiles: Sequence[str] | None = None,
    gateways: Mapping[str, str] | None = None,
    reference: bool | None = None,
    rules: Sequence[str] = (),
    key: str | None = None,
    replay_port: int | None = None,
    replay_url: str | None = None,
    workers: int | None = None,
) -> list[Column]:
    """Run the catalogs (profiles with rules) against each gateway; by default the reference in each profile."""
    from harness.spec.loader import available_profiles

    # A profile without specs can still name a reference gateway mode (its column then says whether it started).
    selected = list(profiles or available_profiles())
    catalogs = [p for p in profiles_with_rules() if p in selected]
    if not catalogs:
        raise ConfigError(
            f"no selected profile has rules to run ({', '.join(selected)}; profiles with rules: "
            f"{', '.join(profiles_with_rules()) or 'none'})"
        )
    catalogs = selected_profiles(catalogs, rules)
    gateways = dict(gateways or {})
    if gateways and replay_port is None and replay_url is None:
        raise ConfigError(
            "--gateway needs the replay upstream at a known address: --replay-port P (point each "
            "gateway's Anthropic base URL at 127.0.0.1:P) or --replay-url URL"
        )
    with_reference = (not gateways) if reference is None else reference
    extra = [a for rule in rules for a in ("--rule", rule)] + (["-n", str(workers)] if workers else [])
    ref_key = "gc-" + secrets.token_hex(16)
    columns: list[Column] = []
    with replay_upstream(replay_port, replay_url) as upstream:
        from harness.orchestrate.embedded_catalog import gateways_for

        # A catalog the reference gateway serves under its own profiles (openai) is no profile to start it in.
        for profile in [p for p in selected if gateways_for(p) == (p,)] if with_reference else []:
            columns.append(_reference_column(profile, catalogs, out_dir, ref_key, upstream, extra))
        for name, url in gateways.items():
            # The replay upstream is at a known address (--replay-port / --replay-url): certify reruns a rule.
            replay = ["--replay-url", replay_url] if replay_url else ["--replay-port", str(replay_port)]

            def rerun(catalog: str, url: str = url, replay: list[str] = replay) -> str:
                head = ["gateway-conformance", "certify", "--gateway-url", url, "--profile", catalog]
                return rerun_line([*head, *replay], key=bool(key))

            columns.append(
                _run_column(name, url, catalogs, out_dir / _slug(name), key, upstream, extra, (), rerun=rerun)
            )
    return columns
