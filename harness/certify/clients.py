"""`certify --clients`: the client run beside the catalogs, against the same gateway (the embedded reference
gateway, or the user's with its key, model map and replay upstream), written into the certificate's folder
(`clients/`) and counted in certify's verdict. One argv for `gateway-conformance clients`, built from certify's."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from harness.errors import ConfigError


def clients_argv(args: argparse.Namespace, out_dir: Path, profiles: list[str]) -> list[str]:
    """The `clients` command line that judges the gateway certify judged, in the profiles it certified."""
    argv = ["--report-dir", str(out_dir)]
    for profile in profiles:
        argv += ["--profile", profile]
    for option in ("gateway_url", "gateway_key", "model_map", "replay_url", "replay_port", "expectations"):
        value = getattr(args, option, None)
        if value is not None:
            argv += ["--" + option.replace("_", "-"), str(value)]
    if args.clients != "*":
        argv += ["--client", args.clients]
    return argv


def run_clients(args: argparse.Namespace, report_dir: Path, certified: list[str]) -> list[dict[str, Any]]:
    """Run the clients in the certified profiles that have client scenarios; their results documents (empty,
    saying so, when none has). A configuration error of the clients run is certify's (exit 3)."""
    from harness.clients.command import run as run_clients_command
    from harness.clients.options import add_arguments
    from harness.clients.scenarios import load_scenarios

    known = load_scenarios().profiles
    profiles = [p for p in certified if p in known]
    if not profiles:
        print(f"--clients: no client scenarios for profile(s) {', '.join(certified)}; no client was run")
        return []
    out_dir = report_dir / "clients"
    parser = argparse.ArgumentParser(prog="gateway-conformance certify --clients")
    add_arguments(parser)
    code = run_clients_command(parser.parse_args(clients_argv(args, out_dir, profiles)))
    if code == 3:
        raise ConfigError("--clients: the client run refused its configuration (see the line above)")
    documents = []
    for profile in profiles:
        path = out_dir / profile / "results.json"
        if path.is_file():
            documents.append(json.loads(path.read_text(encoding="utf-8")))
    return documents


def add_client_grid(summary: Path, documents: list[dict[str, Any]]) -> None:
    """certify's summary.md gains the clients-by-scenarios grid and a verdict per client, after its tables."""
    from harness.clients.table import markdown_table, verdicts

    lines = ["", "## Will my application work through it?", ""]
    lines += [f"- **{client}**: {verdict}" for client, verdict in verdicts(documents).items()]
    for document in documents:
        lines += ["", *markdown_table(document)]
    summary.write_text(
        summary.read_text(encoding="utf-8").rstrip("\n") + "\n" + "\n".join(lines) + "\n", "utf-8"
    )
