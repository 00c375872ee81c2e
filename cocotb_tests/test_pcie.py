"""pytest entry: the RTL contrast-link pair on Verilator in lockstep with the golden pair, per
scenario (cocotb_tests/pcie_tb.py); one Verilator build, each scenario in its own directory."""

import pytest

from sim.harness.pcie_scenarios import SCENARIOS
from sim.tools.cocotb_run import build_dir_for, build_lock, run_cocotb
from sim.tools.verilog import export


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_pcie_lockstep(request, scenario):
    build_dir = build_dir_for("pcie_pair")
    with build_lock(build_dir):
        verilog = export("pcie_pair", build_dir / "verilog")
    run_cocotb(
        verilog=verilog,
        toplevel="pcie_pair",
        test_module="cocotb_tests.pcie_tb",
        build_dir=build_dir,
        test_dir=build_dir_for(request.node.name),
        extra_env={"OAE_PCIE_SCENARIO": scenario},
    )
