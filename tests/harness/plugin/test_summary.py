"""The pytest route ends as certify does (issue 46): the table per area, the note on failures that share a cause;
and node ids name rule files as a user can open them, never `../errors.yaml`."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.paths import specs_dir
from harness.plugin.summary import file_label, where_line
from harness.replay.server import ReplayServer
from tests.harness.plugin.test_plugin import CASSETTES, RULES, _run
from tests.harness.tiny_gateways import make_gateway, serve


@pytest.fixture(autouse=True)
def _inner_ini(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\naddopts = -p no:benchmark\n")


def test_a_rule_file_is_named_from_here_or_from_the_specs_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundled = specs_dir() / "ezat" / "errors.yaml"
    monkeypatch.chdir(specs_dir().parent)  # a checkout: the path a user opens
    assert file_label(bundled, specs_dir()) == "specs/ezat/errors.yaml" and where_line(specs_dir()) is None
    monkeypatch.chdir(tmp_path)  # elsewhere (an installed suite): specs/… and where that folder is
    assert file_label(bundled, specs_dir()) == f"{specs_dir().name}/ezat/errors.yaml"
    assert (
        where_line(specs_dir())
        == f"rule files: {specs_dir().name}/… in the node ids is the folder {specs_dir()}"
    )
    mine = tmp_path / "conformance" / "acme" / "response.yaml"
    assert file_label(mine, tmp_path / "conformance") == "conformance/acme/response.yaml"
    assert file_label(Path("/elsewhere/acme/x.yaml"), None) == "/elsewhere/acme/x.yaml"


@pytest.mark.e2e
def test_the_summary_has_the_table_per_area_and_the_node_ids_open(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", rules=RULES)
    with ReplayServer(CASSETTES) as replay, serve(make_gateway(replay.url, bug="drops-n")) as gateway:
        result = _run(pytester, gateway, replay)
    out = result.stdout.str()
    assert "gateway-conformance: profile ezat" in out
    assert "profile    area            pass  fail  warn flaky   n/a  error  xfail" in out
    assert "ezat       test               3     1     0     0     1      0      0" in out
    assert "FAIL rules.yaml::ezat/test/refuse-n" in out  # the file as it is, from where pytest ran
    assert "../" not in out
