"""cocotb module for `make bench`: simulation speed of the RTL link pair on Verilator.

Two measurements on the same exported design, each the rate of several equal segments:

* lockstep: the full cocotb lockstep against the golden model (sim/harness/link_lockstep.py), the
  "digest traffic" scenario, Python working every cycle;
* free running: constant user inputs (sim.harness.link_scenarios.free_running_inputs) and one Timer
  wait per segment, so the time is Verilator's own (the cocotb scheduler wakes once per segment).

Environment: OAE_BENCH_OUT (JSON file to write), OAE_BENCH_SEGMENTS, and the cycles per segment
OAE_BENCH_LOCKSTEP_CYCLES and OAE_BENCH_FREE_CYCLES. With OAE_BENCH_PROFILE (a file name) the
lockstep segments run under cProfile and the statistics go to that file (``python -m pstats``).
"""

import cProfile
import json
import os
import time

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, Timer

from cocotb_tests.link_tb import PERIOD_NS, CocotbIO, LinkTB
from golden.encoding import LinkState
from sim.harness.link_scenarios import SCENARIOS, free_running_inputs

RESULTS = {}


def _segments(kind, default):
    return int(os.environ.get(f"OAE_BENCH_{kind}_CYCLES", default)), int(os.environ.get("OAE_BENCH_SEGMENTS", "3"))


def _save():
    with open(os.environ["OAE_BENCH_OUT"], "w") as handle:
        json.dump(RESULTS, handle)


@cocotb.test()
async def lockstep_speed(dut):
    cycles, segments = _segments("LOCKSTEP", 2000)
    tb = LinkTB(dut, SCENARIOS["digest traffic"], seed=1)
    await tb.start()
    await tb.run_until(tb.harness.both_up, 5000)
    rates = []
    profile_to = os.environ.get("OAE_BENCH_PROFILE")
    profiler = cProfile.Profile() if profile_to else None
    for _ in range(segments):
        if profiler:
            profiler.enable()
        t = time.perf_counter()
        await tb.run(cycles)
        rates.append(cycles / (time.perf_counter() - t))
        if profiler:
            profiler.disable()
    if profiler:
        profiler.dump_stats(profile_to)
    RESULTS["cocotb_lockstep_cycles_per_s_runs"] = rates
    _save()


@cocotb.test()
async def free_running_speed(dut):
    cycles, segments = _segments("FREE", 200_000)
    Clock(dut.clk, PERIOD_NS, unit="ns").start()  # the first test's clock ended with it
    io = CocotbIO(dut)
    for path, value in free_running_inputs(SCENARIOS["digest traffic"].build).items():
        io.set(path, value)
    while not all(io.get((f"{e}_status", "state")) == LinkState.UP for e in "ab"):
        await Timer(100 * PERIOD_NS, unit="ns")
    await FallingEdge(dut.clk)
    trainings = io.get(("b_status", "counters", "trainings"))
    rates, frames = [], 0
    for _ in range(segments):
        before = io.get(("b_status", "counters", "frames_delivered"))
        t = time.perf_counter()
        await Timer(cycles * PERIOD_NS, unit="ns")
        rates.append(cycles / (time.perf_counter() - t))
        frames += (io.get(("b_status", "counters", "frames_delivered")) - before) % (1 << 16)
    assert io.get(("b_status", "counters", "trainings")) == trainings, "the free-running link retrained"
    RESULTS["verilator_link_cycles_per_s_runs"] = rates
    RESULTS["verilator_frames_per_cycle_at_b"] = frames / (segments * cycles)
    _save()
