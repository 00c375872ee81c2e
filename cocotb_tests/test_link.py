"""pytest entry: the RTL link pair on Verilator in lockstep with the golden link, per scenario.

One Verilator build per generation-parameter set (sim.harness.link_scenarios.Build), shared by the
scenarios that use it; each scenario runs in its own results directory.
"""

import pytest

from sim.harness.link_scenarios import BY_THE_SWEEP_TEST, SCENARIOS
from sim.tools.cocotb_run import build_dir_for, build_lock, run_cocotb
from sim.tools.verilog import export


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s != BY_THE_SWEEP_TEST])
def test_link_lockstep(request, scenario):
    build = SCENARIOS[scenario].build
    build_dir = build_dir_for(f"link_pair_{build.tag}")
    with build_lock(build_dir):
        verilog = export("link_pair", build_dir / "verilog", params=build.pair_params())
    run_cocotb(
        verilog=verilog,
        toplevel="link_pair",
        test_module="cocotb_tests.link_tb",
        build_dir=build_dir,
        test_dir=build_dir_for(request.node.name),
        extra_env={"OAE_LINK_SCENARIO": scenario},
    )


def test_endpoints_across_clock_domains(request):
    build_dir = build_dir_for("link_endpoint_pair")
    with build_lock(build_dir):
        verilog = export("link_endpoint_pair", build_dir / "verilog")
    run_cocotb(
        verilog=verilog,
        toplevel="link_endpoint_pair",
        test_module="cocotb_tests.endpoint_tb",
        build_dir=build_dir,
        test_dir=build_dir_for(request.node.name),
    )
