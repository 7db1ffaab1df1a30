"""Time to verdict: certify's wall time, this tree beside a baseline tree, in one run.

    python3 benchmarks/bench_certify.py [--baseline /path/to/older/checkout] [--repeat 1] [--json out.json]

Two measurements, each as the user meets it, run from this tree and (with --baseline) from another checkout
of the project in the same session, alternating, so that machine load hits both alike:
- `embedded`: `gateway-conformance certify` with no arguments (every profile on the embedded reference
  gateway, fuzz included), the README's first command;
- `own-gateway`: the reference gateway started by hand with its defaults (no declared keep-alive silence, so
  the keep-alive rule waits the full 25 s), then `certify --gateway-url … --profile ezat --replay-port P`.

Each result: wall seconds, the CPU seconds of certify and its children (user + system), the exit code and the
verdict counts (pass / fail / warn / n/a / error) per catalog: a faster run that judged differently is no win.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _counts(report_dir: Path) -> dict[str, dict[str, int]]:
    counts = {}
    for results in sorted(report_dir.glob("*/results.json")):
        totals = json.loads(results.read_text(encoding="utf-8"))["totals"]
        counts[results.parent.name] = {k: v for k, v in totals.items() if v}
    return counts


def _timed(cmd: list[str], tree: Path, report_dir: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    env = {**os.environ, **(env or {}), "PYTHONPATH": str(tree)}
    cpu0, t0 = _children_cpu(), time.monotonic()
    proc = subprocess.run(
        cmd, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False
    )
    wall, cpu = time.monotonic() - t0, _children_cpu() - cpu0
    result: dict[str, Any] = {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "exit": proc.returncode}
    result["verdicts"] = _counts(report_dir)
    if proc.returncode not in (0, 1):
        result["stderr_tail"] = proc.stderr.decode("utf-8", "replace")[-600:]
    return result


def embedded(tree: Path, work: Path) -> dict[str, Any]:
    out = work / "embedded"
    cmd = [sys.executable, "-m", "harness.cli", "certify", "--report-dir", str(out)]
    return _timed(cmd, tree, out)


def own_gateway(tree: Path, work: Path) -> dict[str, Any]:
    """The reference gateway as a user starts it (defaults), pointed at the replay upstream certify serves."""
    out = work / "own"
    replay_port, gateway_port = _free_port(), _free_port()
    key = "gc-" + secrets.token_hex(8)
    env = {**os.environ, "PYTHONPATH": str(tree), "REFERENCE_GATEWAY_API_KEYS": key}
    env["ANTHROPIC_API_KEY"] = "gc-replay-upstream-key"
    gateway_cmd = [
        sys.executable,
        "-m",
        "reference_gateway",
        "--profile",
        "ezat",
        "--upstream-url",
        f"http://127.0.0.1:{replay_port}",
        "--host",
        "127.0.0.1",
        "--port",
        str(gateway_port),
        "--allow-image-host",
        "127.0.0.1",
    ]
    log = (work / "own-gateway.log").open("wb")
    gateway = subprocess.Popen(gateway_cmd, cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_port(gateway_port)
        cmd = [
            sys.executable,
            "-m",
            "harness.cli",
            "certify",
            "--gateway-url",
            f"http://127.0.0.1:{gateway_port}/openai/v1",
            "--profile",
            "ezat",
            "--replay-port",
            str(replay_port),
            "--feature",
            "loopback-downloads",
            "--report-dir",
            str(out),
        ]
        return _timed(cmd, tree, out, {"GC_GATEWAY_KEY": key})
    finally:
        gateway.terminate()
        gateway.wait(timeout=10)
        log.close()


def _wait_port(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise SystemExit(f"nothing listens on 127.0.0.1:{port} after {timeout:g}s")


MEASURES = {"embedded": embedded, "own-gateway": own_gateway}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, help="another checkout of the project, measured alike")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", choices=sorted(MEASURES), action="append", default=[])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    trees = {"this": ROOT, **({"baseline": args.baseline.resolve()} if args.baseline else {})}
    results: dict[str, dict[str, list[dict[str, Any]]]] = {}
    with tempfile.TemporaryDirectory(prefix="gc-bench-certify-") as tmp:
        for i in range(args.repeat):
            for name in args.only or list(MEASURES):
                for label, tree in trees.items():  # alternate: load hits both alike
                    work = Path(tmp) / f"{label}-{name}-{i}"
                    work.mkdir()
                    result = MEASURES[name](tree, work)
                    results.setdefault(name, {}).setdefault(label, []).append(result)
                    print(
                        f"{name:12} {label:9} wall {result['wall_s']:6.1f}s  cpu {result['cpu_s']:6.1f}s  "
                        f"exit {result['exit']}  {json.dumps(result['verdicts'], sort_keys=True)}",
                        flush=True,
                    )
    for name, by_tree in results.items():
        if "baseline" in by_tree:
            best = {label: min(r["wall_s"] for r in runs) for label, runs in by_tree.items()}
            print(
                f"{name}: best wall {best['this']:.1f}s vs baseline {best['baseline']:.1f}s "
                f"({best['baseline'] / best['this']:.2f}x faster)"
            )
    if args.json:
        args.json.write_text(json.dumps({"cores": os.cpu_count(), "results": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
