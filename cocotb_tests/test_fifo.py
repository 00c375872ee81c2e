"""pytest entry: the BisyncFIFO Verilog on Verilator, swept over depths (one build each)."""

import pytest

from sim.tools.cocotb_run import build_dir_for, run_cocotb
from sim.tools.verilog import export


@pytest.mark.parametrize("design, depth", [("bisync_fifo", 16), ("bisync_fifo_d4", 4)])
def test_bisync_fifo(request, design, depth, tmp_path):
    build = build_dir_for(request.node.name)
    verilog = export(design, build / "verilog")
    run_cocotb(
        verilog=verilog,
        toplevel=design,
        test_module="cocotb_tests.fifo_tb",
        build_dir=build,
        extra_env={"OAE_FIFO_STATS": str(tmp_path / "stats.jsonl"), "OAE_FIFO_DEPTH": str(depth)},
    )
