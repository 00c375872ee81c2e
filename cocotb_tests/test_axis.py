"""pytest entry: two AXI4-Stream endpoints over the channel, driven by cocotbext-axi."""

from sim.tools.cocotb_run import build_dir_for, run_cocotb
from sim.tools.verilog import export


def test_axis_endpoints(request):
    build = build_dir_for(request.node.name)
    verilog = export("link_axis_pair", build / "verilog")
    run_cocotb(verilog=verilog, toplevel="link_axis_pair", test_module="cocotb_tests.axis_tb", build_dir=build)
