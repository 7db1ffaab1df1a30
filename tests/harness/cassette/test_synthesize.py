"""The synthesized cassettes are what their generators write: regenerating reproduces every shipped file byte
for byte, through the cassette module's one writer, and a generator's change shows as a stale file."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import paths
from harness.cassette.document import load_cassette
from harness.cassette.synthesize.build import main, texts


def test_regenerating_reproduces_the_shipped_cassettes_byte_for_byte(tmp_path: Path) -> None:
    shipped = paths.cassettes_dir()
    written = dict(texts(tmp_path))
    assert len(written) >= 70
    for path, text in written.items():
        relative = path.relative_to(tmp_path)
        assert (shipped / relative).read_text(encoding="utf-8") == text, relative
    synthesized = {
        p.relative_to(shipped)
        for p in shipped.rglob("*.yaml")
        if load_cassette(p, name=str(p.relative_to(shipped).with_suffix(""))).metadata.origin == "synthesized"
    }
    assert synthesized == {
        p.relative_to(tmp_path) for p in written
    }  # no synthesized file without a generator


@pytest.mark.e2e
def test_check_finds_a_stale_file_and_writing_mends_it(tmp_path: Path, capsys: object) -> None:
    assert main(["--cassettes-dir", str(tmp_path)]) == 0
    assert main(["--check", "--cassettes-dir", str(tmp_path)]) == 0
    stale = tmp_path / "anthropic" / "text-basic.yaml"
    stale.write_text(stale.read_text(encoding="utf-8").replace("stop_reason: end_turn", "stop_reason: x"))
    assert main(["--check", "--cassettes-dir", str(tmp_path)]) == 1
    assert main(["--cassettes-dir", str(tmp_path)]) == 0
    assert main(["--check", "--cassettes-dir", str(tmp_path)]) == 0
