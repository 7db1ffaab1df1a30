"""Live coverage measured: each profile's catalog run `--upstream live` against the embedded reference gateway
over the live provider simulator (`serve-upstream --simulate`), as README's "Try it offline" describes.

    PYTHONPATH=$PWD python3 benchmarks/live_simulated.py [--profile P ...] [--out DIR] [-- extra pytest args]

Prints, per profile and area, the rule variants judged with specific checks / structural checks only / status
and shape only / not runnable live, and the outcome counts (FAIL must be 0). Not a test: a measurement.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.orchestrate.child import Run, run_pytest  # noqa: E402
from harness.orchestrate.embedded import embedded, reference_gateway  # noqa: E402
from harness.orchestrate.embedded_catalog import gateways_for  # noqa: E402
from harness.simulator.app import SimulatorServer  # noqa: E402


def classify(result: dict) -> str:
    """The four live-coverage classes of issue 20 (the same reading as harness/report/live_coverage.py)."""
    live = result.get("live_coverage")
    if not live or result["outcome"] in ("NOT_APPLICABLE", "SKIP"):
        return "not runnable"
    if "judgment" in live:  # written by this version
        return {"specific": "specific", "structural": "structural", "shape": "shape only"}[live["judgment"]]
    # Results of the version before issue 20 (its `specific` counted structural live forms, and the generic
    # `schema: true` it added was a structural key): the same reading, reconstructed.
    structural = set(live.get("structural") or [])
    specific = set(live.get("specific") or []) - {"live_usage", "live_tool_arguments"} - structural
    if specific:
        return "specific"
    judged = set(live.get("judged") or [])
    return "structural" if judged - {"status", "schema"} else "shape only"


CLASSES = ("specific", "structural", "shape only", "not runnable")


def table(document: dict) -> None:
    profile = document["profile"]["name"]
    per_area: dict[str, Counter[str]] = {}
    for r in document["results"]:
        per_area.setdefault(r["area"], Counter())[classify(r)] += 1
    total: Counter[str] = Counter()
    print(f"\n{profile}: outcomes {json.dumps({k: v for k, v in document['totals'].items() if v})}")
    print(f"  {'area':<16}" + "".join(f"{c:>14}" for c in CLASSES))
    for area, counts in sorted(per_area.items()):
        total.update(counts)
        print(f"  {area:<16}" + "".join(f"{counts[c]:>14}" for c in CLASSES))
    print(f"  {'(all)':<16}" + "".join(f"{total[c]:>14}" for c in CLASSES))
    fails = [r["rule_id"] for r in document["results"] if r["outcome"] in ("FAIL", "HARNESS_ERROR")]
    for rule_id in sorted(set(fails)):
        print(f"  FAIL {rule_id}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--profile", action="append", default=None)
    parser.add_argument("--out", type=Path, default=Path("/tmp/gc-live-sim"))
    parser.add_argument(
        "--tabulate", type=Path, default=None, help="only print the table of a results folder"
    )
    parser.add_argument("extra", nargs="*")
    args = parser.parse_args()
    if args.tabulate:
        for path in sorted(args.tabulate.glob("*/results.json")):
            table(json.loads(path.read_text()))
        return 0
    profiles = args.profile or ["ezat", "lyrouter", "relay"]
    key = "gc-" + secrets.token_hex(8)
    with SimulatorServer(seed=1) as sim:
        for profile in profiles:
            # A catalog such as openai or anthropic: each reference gateway that serves it.
            for gateway in gateways_for(profile):
                setup = embedded(profile, gateway)
                out = args.out / (profile if gateway == profile else f"{profile}-{gateway}")
                with reference_gateway(gateway, sim.url, key, out / "gateway.log") as url:
                    run = Run(
                        profile=profile,
                        gateway_url=url,
                        description=f"reference gateway ({gateway}) over the simulator",
                        replay_url=None,
                        features=setup.features,
                        upstream="live",
                        model_map=setup.model_map,
                    )
                    document = run_pytest(run, out, key, [*setup.plugin_args(), *args.extra])
                table(document)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
