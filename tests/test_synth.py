"""Synthesis smoke test: one small component through yosys synth_ecp5 and nextpnr-ecp5, so a
change that breaks synthesis fails `make test` (the full flow is `make synth`)."""

import pytest

from sim.synth import TARGET_MHZ, main, synthesize
from sim.toolchain import ensure_synth_tools

def test_rlfd_synthesizes_places_and_meets_the_target(tmp_path):
    row = synthesize("rlfd", ensure_synth_tools(), out=tmp_path)
    assert row["luts"] > 10 and row["ffs"] > 10 and row["fits"]
    assert row["fmax_mhz"] > TARGET_MHZ and row["meets_target"]
    assert (tmp_path / "rlfd" / "yosys.log").exists() and (tmp_path / "rlfd" / "nextpnr.log").exists()

def test_bad_arguments_print_usage_and_exit_2(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["no_such_component"])
    assert stop.value.code == 2
    assert "unknown component 'no_such_component'" in capsys.readouterr().err
