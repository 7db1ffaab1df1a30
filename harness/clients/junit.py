"""junit.xml for a clients run: one testcase per client scenario, as pytest's xunit2 names them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from xml.etree import ElementTree as ET


def junit_xml(document: Mapping[str, Any]) -> str:
    profile = document["profile"]["name"]
    results = document["results"]
    suite = ET.Element("testsuite", name=f"gateway-conformance-clients-{profile}", tests=str(len(results)))
    failures = skipped = errors = 0
    for r in results:
        client = r["rule_id"].split("/")[1]
        case = ET.SubElement(suite, "testcase", classname=f"clients.{profile}.{client}", name=r["rule_id"],
                             time=f"{r['duration']:.3f}")  # fmt: skip
        first = r["violations"][0]["message"] if r["violations"] else (r.get("reason") or "")
        if r["outcome"] in ("FAIL", "XPASS"):
            failures += 1
            ET.SubElement(case, "failure", message=first[:500]).text = "\n".join(
                v["message"] for v in r["violations"]
            )
        elif r["outcome"] == "HARNESS_ERROR":
            errors += 1
            ET.SubElement(case, "error", message=first[:500])
        elif r["outcome"] in ("SKIP", "NOT_APPLICABLE", "XFAIL"):
            skipped += 1
            ET.SubElement(case, "skipped", message=f"{r['outcome']}: {first[:500]}")
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", str(skipped))
    root = ET.Element("testsuites")
    root.append(suite)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
