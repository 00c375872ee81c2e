"""`make sim`'s link table: one scenario end to end (Verilator build shared with the lockstep tests)."""

import json

import pytest

from sim import link_sweep
from sim.harness.link_scenarios import BY_THE_SWEEP_TEST
from sim.tools.seeds import regression_seed, replay_hint
from sim.tools.verilog import BUILD

pytestmark = pytest.mark.verilator


def test_link_sweep_reports_a_scenario(capsys):
    # The one run of this scenario's lockstep in `make test` (cocotb_tests/test_link.py leaves it here).
    # Seeded like every lockstep run (sim/tools/seeds.py): printed, OAE_SEED replays it.
    seed = regression_seed()
    print(f"link sweep: {replay_hint(seed)}")
    assert link_sweep.main(["--scenario", BY_THE_SWEEP_TEST, "--seed", str(seed)]) == 0
    out = capsys.readouterr().out
    assert BY_THE_SWEEP_TEST in out.splitlines()[-2]
    row = json.loads((BUILD / "report" / "link_sweep.json").read_text())["rows"][0]
    assert row["scenario"] == BY_THE_SWEEP_TEST and row["seed"] == seed
    assert row["cycles_compared"] > 6000 and row["frames"] > 100 and row["suspicions"] >= 2
