"""Synthesis smoke test: one small component through yosys synth_ecp5 and nextpnr-ecp5, so a
change that breaks synthesis fails `make test` (the full flow is `make synth`)."""

import pytest

from sim.tools import synth
from sim.tools.synth import HEADROOM_MHZ, TARGET_MHZ, _has_headroom, _row, main, synthesize
from sim.tools.toolchain import ensure_synth_tools


@pytest.mark.synth
def test_rlfd_synthesizes_places_and_meets_the_target(tmp_path):
    row = synthesize("rlfd", ensure_synth_tools(), out=tmp_path)
    assert row["luts"] > 10 and row["ffs"] > 10 and row["fits"]
    assert row["fmax_mhz"] > TARGET_MHZ and row["meets_target"]
    assert row["slack_ns"] == round(1000 / TARGET_MHZ - 1000 / row["fmax_mhz"], 3) > 0
    path = row["critical_path"]
    assert path["logic_levels"] >= 1 and "TRELLIS" not in path["from"] + path["to"]
    assert row["seed"] == 1 and list(row["fmax_by_seed"]) == ["1"]
    assert row["headroom"] == (row["fmax_mhz"] >= HEADROOM_MHZ)
    assert (tmp_path / "rlfd" / "yosys.log").exists() and (tmp_path / "rlfd" / "nextpnr-seed1.log").exists()
    assert (tmp_path / "rlfd" / "timing.json").exists()


def test_bad_arguments_print_usage_and_exit_2(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["no_such_component"])
    assert stop.value.code == 2
    assert "unknown component 'no_such_component'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        main(["--seeds", "0", "rlfd"])
    assert stop.value.code == 2
    assert "--seeds must be at least 1" in capsys.readouterr().err


@pytest.mark.synth
def test_every_seed_is_placed_and_the_fastest_kept(tmp_path):
    row = synthesize("rlfd", ensure_synth_tools(), out=tmp_path, seeds=2, target_mhz=2000.0)
    assert list(row["fmax_by_seed"]) == ["1", "2"] and not row["meets_target"] and not row["headroom"]
    assert row["fmax_mhz"] == max(row["fmax_by_seed"].values()) == row["fmax_by_seed"][str(row["seed"])]
    assert (tmp_path / "rlfd" / "nextpnr-seed2.log").exists()
    by_seed = row["critical_path_by_seed"]
    assert list(by_seed) == ["1", "2"]
    kept = by_seed[str(row["seed"])]
    assert {k: kept[k] for k in row["critical_path"]} == row["critical_path"]
    assert kept["delay_ns"] == row["critical_path_ns"]


@pytest.mark.synth
def test_a_ripup_past_its_limit_is_dropped_and_the_seed_routed_without_it(tmp_path, monkeypatch):
    monkeypatch.setattr(synth, "RIPUP_LIMIT_S", 0.01)
    row = synthesize("rlfd", ensure_synth_tools(), out=tmp_path, seeds=2)
    assert row["ripup_dropped"] == ["1", "2"] and list(row["fmax_by_seed"]) == ["1", "2"]
    assert row["fmax_mhz"] > TARGET_MHZ and "(routed without the ripup: seed 1, 2)" in _row("rlfd", row)


@pytest.mark.synth
def test_a_component_placed_only_reports_the_estimate_after_placement(tmp_path):
    row = synthesize("rlfd", ensure_synth_tools(), out=tmp_path, seeds=3, route=False)
    assert row["fits"] and not row["routed"] and row["fmax_mhz"] is None and row["seed"] == 1
    assert row["placed_estimate_mhz"] > 0 and not row["meets_target"] and not row["headroom"]
    log = (tmp_path / "rlfd" / "nextpnr-seed1.log").read_text()
    assert f"Max frequency for clock 'clk': {row['placed_estimate_mhz']:.2f} MHz" in log
    assert row["utilisation"]["TRELLIS_COMB"][0] > 10 and row["worst_paths"]
    assert not (tmp_path / "rlfd" / "nextpnr-seed2.log").exists()  # seed 1 only
    assert "~" in _row("rlfd", row) and "Routing" not in log


def test_the_estimate_after_placement_is_each_clocks_last_and_the_slowest(tmp_path):
    log = tmp_path / "nextpnr.log"
    log.write_text(
        "Info: Max frequency for clock   'a': 95.00 MHz (FAIL at 156.25 MHz)\n"
        "Info: Max frequency for clock 'bcd': 23.99 MHz (FAIL at 156.25 MHz)\n"
        "Warning: Max frequency for clock   'a': 20.00 MHz (FAIL at 156.25 MHz)\n"
    )
    # nextpnr pads a shorter clock name; a's last estimate is the slowest.
    assert synth.placement_estimate(log) == 20.0
    log.write_text("Info: Program finished normally.\n")
    assert synth.placement_estimate(log) is None and synth.placement_estimate(tmp_path / "absent") is None


def test_seed_count_and_frequencies_are_validated_before_any_tool_runs(tmp_path):
    with pytest.raises(ValueError, match="seeds must be an integer >= 1"):
        synthesize("rlfd", {}, out=tmp_path, seeds=0)
    with pytest.raises(ValueError, match="target_mhz must be a frequency in MHz above 0"):
        synthesize("rlfd", {}, out=tmp_path, target_mhz=0)
    with pytest.raises(ValueError, match="target_mhz must be a frequency in MHz above 0"):
        synthesize("rlfd", {}, out=tmp_path, target_mhz="fast")
    with pytest.raises(ValueError, match="route must be True or False"):
        synthesize("rlfd", {}, out=tmp_path, route="no")
    assert not (tmp_path / "rlfd").exists()


def test_headroom_is_5_percent_at_seed_1_and_the_target_at_the_others():
    assert _has_headroom({1: (HEADROOM_MHZ, {}), 2: (TARGET_MHZ, {})}, TARGET_MHZ)
    assert not _has_headroom({1: (HEADROOM_MHZ - 0.1, {}), 2: (200.0, {})}, TARGET_MHZ)
    assert not _has_headroom({1: (200.0, {}), 2: (TARGET_MHZ - 0.1, {}), 3: (200.0, {})}, TARGET_MHZ)


def _fake_nextpnr(tmp_path, dp16kd, comb=92_839):
    """A stand-in for nextpnr that prints its utilisation block and stops, as nextpnr does
    when a design needs more of the device than it has."""
    script = tmp_path / "nextpnr"
    script.write_text(
        "#!/bin/sh\n"
        "printf 'Info: Device utilisation:\\n'\n"
        f"printf 'Info: \\t              DP16KD:     {dp16kd}/    208   99%%\\n'\n"
        f"printf 'Info: \\t        TRELLIS_COMB:   {comb}/  83640   99%%\\n'\n"
        "printf '\\nERROR: Unable to place cell\\n'\n"
        "exit 1\n"
    )
    script.chmod(0o755)
    return {**ensure_synth_tools(), "nextpnr": script}


@pytest.mark.synth
def test_a_design_that_needs_more_than_the_device_is_reported_not_placed(tmp_path):
    row = synthesize("rlfd", _fake_nextpnr(tmp_path, 310), out=tmp_path / "out")
    assert not row["fits"] and row["fmax_mhz"] is None and not row["meets_target"]
    assert row["utilisation"] == {"DP16KD": [310, 208], "TRELLIS_COMB": [92_839, 83_640]}
    assert row["luts"] > 10 and row["fmax_by_seed"] == {}
    assert "NO" in _row("rlfd", row) and "logic cells 92839/83640 (110%)" in synth._use(row)


@pytest.mark.synth
def test_a_nextpnr_failure_with_room_on_the_device_is_an_error(tmp_path):
    with pytest.raises(RuntimeError, match="nextpnr failed"):
        synthesize("rlfd", _fake_nextpnr(tmp_path, 32, comb=12_010), out=tmp_path / "out")


def test_the_utilisation_block_of_a_nextpnr_log_is_read(tmp_path):
    log = tmp_path / "nextpnr.log"
    log.write_text(
        "Info: Device utilisation:\nInfo: \t  DP16KD:   32/  208  15%\nInfo: \t  TRELLIS_COMB: 12010/ 83640  14%\n\n"
    )
    assert synth.utilisation(log) == {"DP16KD": (32, 208), "TRELLIS_COMB": (12010, 83640)}
    assert synth.utilisation(tmp_path / "absent.log") == {}
