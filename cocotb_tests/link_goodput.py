"""cocotb module for `make bench`: goodput measured on the RTL link pair, against bit error rate.

The bench's operating point (bench/__main__.py ``goodput``): one class, both directions
saturated with 64-byte frames, 16 cycles each way, bit errors at the same rate both ways. The
pair runs in lockstep with the golden link (sim/harness/link_lockstep.py), so every cycle is checked;
the figure counts the frames the RTL ends put on their ``frames_out`` ports during the
measurement, per direction, and reports the smaller direction, as the golden bench does.

Environment: OAE_GOODPUT_OUT (JSON file to write: {ber: goodput}), OAE_GOODPUT_BERS (comma
separated rates, 0 for a clean line), OAE_GOODPUT_CYCLES (cycles measured per rate) and
OAE_GOODPUT_MODE (the echo mode the design was built with: digest or full).
"""

import json
import os

import cocotb

from cocotb_tests.link_tb import LinkTB
from sim.harness.link import SATURATED_ONE_CLASS, goodput_share, goodput_warm_up
from sim.harness.link_scenarios import Scenario, goodput_build


@cocotb.test()
async def goodput_by_ber(dut):
    build = goodput_build(os.environ["OAE_GOODPUT_MODE"])
    cycles = int(os.environ["OAE_GOODPUT_CYCLES"])
    results = {}
    for i, ber in enumerate(float(b) for b in os.environ["OAE_GOODPUT_BERS"].split(",")):
        faults = {"bit_error_rate": ber} if ber else {}
        tb = LinkTB(dut, Scenario(build, cycles, SATURATED_ONE_CLASS, faults, faults), seed=1 + i)
        await tb.start(clock=i == 0)
        await tb.bring_up()
        await tb.run(goodput_warm_up(build.latency))
        delivered = tb.lock.rtl_deliveries
        start = [delivered[e]["frames"][0] for e in "ab"]
        await tb.run(cycles)
        per_direction = [goodput_share(delivered[e]["frames"][0] - s, cycles) for e, s in zip("ab", start)]
        # A saturated clean line that delivers nothing is a broken measurement, not a figure.
        assert ber or min(per_direction) > 0, f"the RTL delivered no frame on a clean line: {per_direction}"
        results[f"{ber:g}"] = round(min(per_direction), 4)
        dut._log.info("BER %g: goodput per direction %s", ber, [round(g, 4) for g in per_direction])
    with open(os.environ["OAE_GOODPUT_OUT"], "w") as handle:
        json.dump(results, handle)
