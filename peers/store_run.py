"""Store one peer run as evidence in the repository: its conformance report and results (the peer's provider key
scrubbed), and the exchange of each failing rule's first failing variant as its own file, which the README's findings link to.
    python3 peers/store_run.py REPORT_DIR PROFILE DEST
REPORT_DIR: certify's --report-dir; DEST: implementations/<gateway>-<version>/<profile>."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from harness.conformance.implementations import exchange_name

# The fake provider keys the peers' configs hold (peers/*/config*.yaml): never a real secret, scrubbed anyway.
SCRUB = {"sk-ant-fake-key": "<UPSTREAM_KEY>", "sk-ant-client-test": "<UPSTREAM_KEY>", "sk-openai-fake-key": "<UPSTREAM_KEY>",
         "sk-openai-client-test": "<UPSTREAM_KEY>", "gemini-fake-key": "<UPSTREAM_KEY>",
         "gc-fake-client-secret": "<PEER_SECRET>", "gc-fake-session-secret-0123456789abcdef": "<PEER_SECRET>"}


def scrub(text: str) -> str:
    for secret, mark in SCRUB.items():
        text = text.replace(secret, mark)
    return text


def main(report_dir: str, profile: str, dest: str) -> int:
    src, out = Path(report_dir), Path(dest)
    if out.exists():
        shutil.rmtree(out)
    (out / "exchanges").mkdir(parents=True)
    (out / "conformance-report.yaml").write_text(
        scrub((src / "conformance-report.yaml").read_text(encoding="utf-8")), encoding="utf-8"
    )
    text = scrub((src / profile / "results.json").read_text(encoding="utf-8"))
    (out / "results.json").write_text(text, encoding="utf-8")
    stored = 0
    seen: set[str] = set()
    for result in json.loads(text)["results"]:
        # the first failing variant of each rule, as the findings list them (the rest are in results.json)
        if result["outcome"] in ("FAIL", "WARN") and result["rule_id"] not in seen:
            seen.add(result["rule_id"])
            path = out / exchange_name(result)
            path.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            stored += 1
    print(f"stored {out}: report, results, {stored} exchanges")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
