"""pytest entry: the RTL channel Verilog on Verilator, lockstep with the golden channel."""

from sim.tools.cocotb_run import build_dir_for, run_cocotb
from sim.tools.verilog import export


def test_link_channel(request):
    build = build_dir_for(request.node.name)
    verilog = export("link_channel", build / "verilog")
    run_cocotb(verilog=verilog, toplevel="link_channel", test_module="cocotb_tests.channel_tb", build_dir=build)
