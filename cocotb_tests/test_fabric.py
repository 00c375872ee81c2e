"""pytest entry: the triangle of RTL nodes on Verilator in lockstep with the golden fabric, per
fault scenario of ``python -m sim.triangle`` and for random fault schedules. One Verilator build
per design (``fabric_triangle``, and ``fabric_triangle_slow`` for a schedule that needs a slow
link), shared; each run in its own results directory."""

import pytest

from cocotb_tests.fabric_tb import EXTRA
from sim.tools.cocotb_run import build_dir_for, build_lock, run_cocotb
from sim.tools.verilog import export
from sim.triangle import SCENARIOS

TRIANGLE = [name for name in SCENARIOS if not name.startswith("mesh")] + list(EXTRA)


def _run(request, scenario, run=0):
    design = EXTRA[scenario].design if scenario in EXTRA else "fabric_triangle"
    build_dir = build_dir_for(design)
    with build_lock(build_dir):
        verilog = export(design, build_dir / "verilog")
    run_cocotb(
        verilog=verilog,
        toplevel=design,
        test_module="cocotb_tests.fabric_tb",
        build_dir=build_dir,
        test_dir=build_dir_for(request.node.name),
        extra_env={"OAE_FABRIC_SCENARIO": scenario, "OAE_FABRIC_RUN": str(run)},
    )


@pytest.mark.parametrize("scenario", TRIANGLE)
def test_fabric_lockstep(request, scenario):
    _run(request, scenario)


@pytest.mark.parametrize("run", range(3))
def test_fabric_lockstep_random_faults(request, run):
    """A random fault schedule per run, drawn from the regression seed and the run (the seed is
    printed; OAE_SEED replays it)."""
    _run(request, "random", run)
