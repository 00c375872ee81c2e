"""Every exported design passes `verilator --lint-only -Wall` with only sim/tools/verilator_waivers.vlt."""

import re

import pytest

from sim.tools.verilog import DESIGNS, WAIVERS, export, lint

pytestmark = pytest.mark.verilator


def test_every_waiver_states_its_reason():
    lines = WAIVERS.read_text().splitlines()
    for i, line in enumerate(lines):
        if line.startswith("lint_off"):
            assert i > 0 and lines[i - 1].startswith("//"), f"waiver without a reason: {line}"
            assert re.fullmatch(r"lint_off -rule [A-Z]+", line), f"waiver must name one rule: {line}"


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_design_lints_clean(name, tmp_path):
    result = lint(export(name, tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "%Warning" not in result.stderr and "%Error" not in result.stderr


def test_an_export_refuses_sources_changed_since_they_were_imported(tmp_path, monkeypatch):
    """The export cache is keyed by the sources on disk, but elaboration uses the modules this
    process imported: after an edit, an export would file the old design under the new key, for
    every later build to reuse. It refuses with a clear error and writes nothing."""
    from sim.tools import verilog

    monkeypatch.setattr(verilog, "_CACHE", tmp_path / "cache")
    monkeypatch.setattr(verilog, "_SOURCES_IMPORTED", "the sources of an earlier edit")
    with pytest.raises(RuntimeError, match="changed after this process imported them"):
        export("rlfd", tmp_path / "out")
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())
    assert not (tmp_path / "out").exists()
