"""pytest entry: rtl/framer.py alone on Verilator in lockstep with golden/framer.py, one build
per generation-parameter set (cocotb_tests/framer_tb.py SCENARIOS)."""

import pytest

from cocotb_tests.framer_tb import SCENARIOS
from sim.cocotb_run import build_dir_for, build_lock, run_cocotb
from sim.verilog import export


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_framer_lockstep(request, scenario):
    params = SCENARIOS[scenario][0]
    # Scenarios with the same generation parameters share one Verilator build.
    build = build_dir_for("framer_" + "_".join(f"{k}-{v}" for k, v in sorted(params.items())))
    with build_lock(build):
        verilog = export("framer", build / "verilog", params=params)
    run_cocotb(verilog=verilog, toplevel="framer", test_module="cocotb_tests.framer_tb", build_dir=build,
               test_dir=build_dir_for(request.node.name), extra_env={"OAE_FRAMER_SCENARIO": scenario})
