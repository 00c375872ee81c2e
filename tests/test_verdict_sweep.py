"""sim/verdict_sweep.py: the measurement PROTOCOL.md 10.8 quotes."""

import json

import pytest

from sim import verdict_sweep


def test_a_cut_is_measured_against_both_bounds():
    r = verdict_sweep.run_cut({0: 2, 1: 2, 2: 2}, ("ab",), 3, seed=1)
    assert 0 < r["verdict_cycles"] <= r["verdict_bound"]
    assert 0 < r["failover_cycles"] <= r["failover_bound"]
    assert r["verdict_bound"] < r["failover_bound"]


@pytest.mark.slow
def test_the_sweep_writes_its_report_and_exits_0_when_every_verdict_is_within_its_bound(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(verdict_sweep, "REPORT", tmp_path / "report" / "verdict_sweep.json")
    monkeypatch.setattr(verdict_sweep, "BUILD", tmp_path)
    assert verdict_sweep.main(["--setting", "all at 2"]) == 0
    report = json.loads((tmp_path / "report" / "verdict_sweep.json").read_text())
    (row,) = report["settings"]
    assert len(row["runs"]) == 2 * verdict_sweep.OFFSETS
    assert row["verdict_cycles_max"] == max(r["verdict_cycles"] for r in row["runs"])
    assert "all at 2" in capsys.readouterr().out
