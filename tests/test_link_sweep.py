"""`make sim`'s link table: one scenario end to end (Verilator build shared with the lockstep tests)."""

import json
import os
import random

from sim import link_sweep
from sim.harness.link_scenarios import BY_THE_SWEEP_TEST
from sim.tools.verilog import BUILD


def test_link_sweep_reports_a_scenario(capsys):
    # The one run of this scenario's lockstep in `make test` (cocotb_tests/test_link.py leaves it here).
    assert BY_THE_SWEEP_TEST == "digest flaps"
    # Seeded like every lockstep run (sim/tools/cocotb_run.py): random, printed, OAE_SEED replays it.
    seed = int(os.environ.get("OAE_SEED", random.randrange(1 << 31)))
    print(f"link sweep: seed {seed} (replay with OAE_SEED={seed})")
    assert link_sweep.main(["--scenario", "digest flaps", "--seed", str(seed)]) == 0
    out = capsys.readouterr().out
    assert "digest flaps" in out.splitlines()[-2]
    row = json.loads((BUILD / "report" / "link_sweep.json").read_text())["rows"][0]
    assert row["scenario"] == "digest flaps" and row["seed"] == seed
    assert row["cycles_compared"] > 6000 and row["frames"] > 100 and row["suspicions"] >= 2
