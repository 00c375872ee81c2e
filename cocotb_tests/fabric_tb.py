"""cocotb testbench: a triangle of RTL nodes on RTL channels (rtl/simulation/fabric.py) on Verilator,
in lockstep with the golden fabric (sim/harness/fabric_lockstep.py does the checks).

Environment: OAE_FABRIC_SCENARIO (a triangle scenario of ``python -m sim.triangle``, a key of
``EXTRA``, or ``random`` for a fault schedule drawn from the seed and OAE_FABRIC_RUN),
OAE_FABRIC_CYCLES (cycles from the fault to the drain), OAE_FABRIC_SUMMARY (a JSON file for the
run's counts).
"""

import dataclasses
import json
import os
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly

from cocotb_tests import replay_seed
from cocotb_tests.link_tb import CocotbIO
from sim.harness.fabric import make_triangle
from sim.harness.fabric_lockstep import FabricLockstep
from sim.tools.verilog import DESIGNS

PERIOD_NS = 10
LOAD = 0.1


def control_window(h, t):
    """Node 2 cut off for 9000 cycles while link 0-1, which it arbitrates, flaps twelve times:
    the control streams towards node 2 fill their windows, and the messages beyond wait, the
    newest about each link replacing the older (PROTOCOL.md 10.10); node 2, back, takes them."""
    for link in h.topology.links_of(2):
        h.cut(link, t, t + 9000)
    for d in ("ab", "ba"):
        getattr(h.channels[0], d).cuts = [(s, s + 40) for s in range(t + 1500, t + 8700, 600)]


def stale_report(h, t):
    """On the build with a slow link 0-2, link 1-2 flaps twice, the second time as the first
    incident's REPORTs cross the slow link: an end asked to settle has entangled again by
    then, so the settle is skipped and its streams send again (PROTOCOL.md 10.6)."""
    h.cut(2, t, t + 30)
    for d in ("ab", "ba"):
        getattr(h.channels[2], d).cuts.append((t + 240, t + 270))


def cut_from_start(h, t):
    """Link 0-1 cut from node 0 to node 1 from reset for 4,000 cycles: node 1's port hears
    nothing and is reported at once; node 0's hears node 1 but never trains, and is reported
    absent once it has heard for longer than training takes at max_rtt (PROTOCOL.md 7.5,
    10.3); the link goes DOWN, traffic goes round, and once repaired the link trains and is
    admitted."""
    h.channels[0].ab.cuts = [(0, 4_000)]


def settle_race(h, t):
    """Link 0-1 cut both ways for 58 cycles: healed so that each end entangles again in the two
    cycles between the LINK_DOWN's settle being asked and applied (at the fixed seed), so the
    settle finds the port reconciled by its entangling and the streams it paused send again
    (PROTOCOL.md 10.6)."""
    h.cut(0, t, t + 58)


@dataclasses.dataclass(frozen=True)
class Extra:
    """A fault schedule beyond those of ``python -m sim.triangle``: ``apply(h, t)``, the cycles
    to run after it, the exported design it runs on, whether it applies at reset (else once
    every port is UP), and the offered load (lower where the fault holds a stream back for
    long: what its user made meanwhile must drain through an end-to-end window of 8)."""

    apply: object
    cycles: int
    design: str = "fabric_triangle"
    at_reset: bool = False
    load: float = LOAD


EXTRA = {
    "control_window": Extra(control_window, 10_000),
    "settle_race": Extra(settle_race, 1_000),
    "stale_report": Extra(stale_report, 3_000, design="fabric_triangle_slow", load=0.02),
    "cut_from_start": Extra(cut_from_start, 6_000, design="fabric_triangle_slow", at_reset=True, load=0.02),
}


class FabricTB:
    """Owns the clock, reset, the golden fabric and the lockstep checker for one run."""

    def __init__(self, dut, design, seed, run=0, load=LOAD):
        self.dut = dut
        self.rng = random.Random(f"{seed}/{run}")
        # The generation parameters of the exported fabric: the golden nodes are built the same.
        build = DESIGNS[design][1]
        latency = build["latency"]
        latency = dict(enumerate(latency)) if isinstance(latency, list) else latency
        nodes = {k: v for k, v in build.items() if k not in ("topology", "latency", "max_latency", "seed")}
        self.harness = make_triangle(latency, load=load, seed=seed, node_seed=build.get("seed", 0), **nodes)
        self.lock = FabricLockstep(self.harness, CocotbIO(dut))

    async def start(self):
        """Reset; returns at the falling edge that begins cycle 0 (the golden nodes' cycle 0)."""
        Clock(self.dut.clk, PERIOD_NS, unit="ns").start()
        self.dut.rst.value = 1
        await FallingEdge(self.dut.clk)
        await FallingEdge(self.dut.clk)
        self.dut.rst.value = 0

    async def cycle(self):
        clock = self.lock.drive()
        await ReadOnly()
        self.lock.check_and_step(clock)
        await FallingEdge(self.dut.clk)

    async def run(self, cycles, every=None):
        for _ in range(cycles):
            if every is not None:
                every()
            await self.cycle()

    async def run_until(self, predicate, limit):
        for _ in range(limit):
            if predicate():
                return
            await self.cycle()
        assert predicate(), f"condition not reached within {limit} cycles (cycle {self.lock.cycle})"

    def tokens(self):
        """Every live port gets a token as soon as it may take one, every 97 cycles."""
        if self.harness.cycle % 97 == 0:
            self.harness.order_tokens()


@cocotb.test()
async def test_fabric_lockstep(dut):
    from sim.triangle import SCENARIOS, apply_faults

    name = os.environ["OAE_FABRIC_SCENARIO"]
    cycles = int(os.environ.get("OAE_FABRIC_CYCLES", 3000))
    seed, run = replay_seed(), int(os.environ.get("OAE_FABRIC_RUN", 0))
    extra = EXTRA.get(name)
    tb = FabricTB(dut, extra.design if extra else "fabric_triangle", seed, run, extra.load if extra else LOAD)
    h = tb.harness
    if extra and extra.at_reset:
        extra.apply(h, 0)
    await tb.start()
    if not (extra and extra.at_reset):
        await tb.run_until(h.all_ports_up, 6000)
    start = h.cycle + 3
    if name == "random":
        faults = h.random_faults(tb.rng, start)
    elif extra:
        if not extra.at_reset:
            extra.apply(h, start)
        faults, cycles = extra.apply.__doc__.split(":")[0], int(os.environ.get("OAE_FABRIC_CYCLES", extra.cycles))
    else:
        apply_faults(h, SCENARIOS[name].schedule(seed), start)
        faults = SCENARIOS[name].description
    dut._log.info("%s, seed %d: faults %s from cycle %d", name, seed, faults, start)
    await tb.run(cycles, tb.tokens)
    # Drain: no new frames; every frame between live nodes arrives.
    h.load = 0.0
    await tb.run_until(h.delivered_all, 20_000)
    lock = tb.lock
    lost = sum(k - h.got.get(key, 0) for key, k in h.made.items() if h.alive(key[0]) and h.alive(key[1]))
    summary = {
        "scenario": name,
        "seed": seed,
        "cycles": lock.cycle,
        "faults": repr(faults),
        "adopted": {f"{link}:{int(v)}:{s}": sorted(when.items()) for (link, v, s), when in h.verdicts.adopted.items()},
        "frames_lost": lost,
        "tokens_in": len(h.tokens_in),
        "tokens_delivered": len(h.tokens_out),
        "tokens_returned": len(h.tokens_back),
        **{
            name: sum(getattr(n.counters, name) for n in h.nodes)
            for name in ("settles", "settle_skipped", "resent", "failed_over", "control_superseded", "stale_verdicts")
        },
        **lock.seen,
    }
    dut._log.info("compared %d cycles: %s", lock.cycle, summary)
    assert lost == 0
    out = os.environ.get("OAE_FABRIC_SUMMARY")
    if out:
        with open(out, "w") as handle:
            json.dump(summary, handle, indent=2)
