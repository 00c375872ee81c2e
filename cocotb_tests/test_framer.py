"""pytest entry: rtl/link/framer/ alone on Verilator in lockstep with golden/link/framer.py, one build
per generation-parameter set (cocotb_tests/framer_tb.py SCENARIOS)."""

import pytest

from cocotb_tests.framer_tb import SCENARIOS
from sim.tools.cocotb_run import build_dir_for, build_lock, run_cocotb
from sim.tools.verilog import export


def _run(request, scenario, seed=None):
    params = SCENARIOS[scenario][0]
    # Scenarios with the same generation parameters share one Verilator build.
    build = build_dir_for("framer_" + "_".join(f"{k}-{v}" for k, v in sorted(params.items())))
    with build_lock(build):
        verilog = export("framer", build / "verilog", params=params)
    run_cocotb(
        verilog=verilog,
        toplevel="framer",
        test_module="cocotb_tests.framer_tb",
        build_dir=build,
        test_dir=build_dir_for(request.node.name),
        extra_env={"OAE_FRAMER_SCENARIO": scenario},
        seed=seed,
    )


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_framer_lockstep(request, scenario):
    _run(request, scenario)


# Seeds that once found an RTL/golden disagreement, replayed on every run (the random seed of the
# test above covers new ground; these keep the old ground covered).
REGRESSION_SEEDS = [
    # The echo deadline of a head that became the head in the cycle after its predecessor was
    # popped late: the RTL held it "not late yet" for a cycle (fixed in rtl/link/framer/).
    ("digest selective", 1960424421),
]


@pytest.mark.parametrize("scenario, seed", REGRESSION_SEEDS, ids=[f"{s} seed {n}" for s, n in REGRESSION_SEEDS])
def test_framer_lockstep_regression_seed(request, scenario, seed):
    _run(request, scenario, seed)
