"""One way to run an Amaranth-simulator test: the design, a clock, one async testbench, and
waveforms on request (``WAVES=1``: a VCD under build/sim/amaranth/, named after the test)."""

import contextlib
import os
import re

from amaranth.sim import Simulator

from sim.tools.cocotb_run import waves_requested
from sim.tools.verilog import BUILD


def simulate(dut, bench, *, clock: float | None = 1e-8, name: str | None = None):
    """Run ``bench`` (an ``async def bench(ctx)``) against ``dut`` to its end. ``clock``: the
    period of the ``sync`` domain's clock in seconds, or None for a combinational design.
    ``name``: the waveform file's name (default: the running pytest test)."""
    sim = Simulator(dut)
    if clock is not None:
        sim.add_clock(clock)
    sim.add_testbench(bench)
    waves = contextlib.nullcontext()
    if waves_requested():
        name = name or os.environ.get("PYTEST_CURRENT_TEST", "amaranth").split(" ")[0]
        path = BUILD / "sim" / "amaranth" / (re.sub(r"[^\w.-]+", "_", name) + ".vcd")
        path.parent.mkdir(parents=True, exist_ok=True)
        print(f"waves: {path}")
        waves = sim.write_vcd(str(path))
    with waves:
        sim.run()
    return sim
