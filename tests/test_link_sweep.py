"""`make sim`'s link table: one scenario end to end (Verilator build shared with the lockstep tests)."""

import json

from sim import link_sweep
from sim.verilog import BUILD


def test_link_sweep_reports_a_scenario(capsys):
    assert link_sweep.main(["--scenario", "digest flaps", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "digest flaps" in out.splitlines()[-2]
    row = json.loads((BUILD / "report" / "link_sweep.json").read_text())["rows"][0]
    assert row["scenario"] == "digest flaps" and row["seed"] == 3
    assert row["cycles_compared"] > 6000 and row["frames"] > 100 and row["suspicions"] >= 2
