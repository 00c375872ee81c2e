"""cocotb testbench: the exported RTL channel against golden.simulation.channel.Channel, every cycle.

The golden directions compute each cycle's fault controls from their schedules (cuts, flaps,
bit errors at a rate and at exact positions, garbage, stuck words, a frozen line, gray failures, latency drift);
the TB drives
those controls into the RTL ports, drives both transmitters with random words (IDLE-rich, so
drift has something to delete) and compares what each receiver gets.

Environment: OAE_CHANNEL_CYCLES (default 20000).
"""

import os
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly

from cocotb_tests import replay_seed
from golden.simulation.channel import IDLE_WORD, Channel

LATENCY = 16  # must match the exported design's generation parameters


def schedules(cycles):
    third = cycles // 3
    return {
        "flaps and exact flips": (
            {
                "cuts": [(third, third + 300), (2 * third, 2 * third + 5)],
                "bit_flips": {t: 1 << (t % 72) for t in range(500, cycles, 97)},
            },
            {"cuts": [(third + 100, third + 900)]},
        ),
        "bit errors, garbage, stuck, gray": (
            {
                "bit_error_rate": 1e-3,
                "garbage": [(third, third + 200)],
                "freezes": [(third + 400, third + 420)],
                "gray": [(third + 600, 2 * third, 0x0F, 0x05, "drop")],
            },
            {
                "bit_error_rate": 1e-4,
                "stuck": [(third, third + 50, 0), (2 * third, 2 * third + 50, IDLE_WORD)],
                "gray": [(third + 100, third + 900, 0x30, 0x10, "corrupt")],
            },
        ),
        "drift": (
            {"latency_changes": [(t, LATENCY + (t // 1000) % 9) for t in range(1000, cycles, 1000)]},
            {"latency_changes": [(t, max(1, LATENCY - (t // 700) % 12)) for t in range(700, cycles, 700)]},
        ),
    }


class ChannelTB:
    def __init__(self, dut, faults_ab, faults_ba, seed):
        self.dut = dut
        self.golden = Channel(LATENCY, faults_ab=faults_ab, faults_ba=faults_ba, seed=seed)
        self.rng = random.Random(seed)
        self.compared = 0

    async def start(self):
        """Reset with both transmitters silent; returns at the falling edge that begins cycle 0."""
        Clock(self.dut.clk, 10, unit="ns").start()
        self.dut.rst.value = 1
        for prefix in ("ab", "ba"):
            getattr(self.dut, f"{prefix}_sink__valid").value = 0
        await FallingEdge(self.dut.clk)
        await FallingEdge(self.dut.clk)
        self.dut.rst.value = 0

    def _word(self):
        r = self.rng.random()
        return IDLE_WORD if r < 0.6 else None if r < 0.62 else self.rng.getrandbits(72)

    def _drive(self, prefix, direction, word, t):
        d = self.dut
        c = direction.controls(t)
        getattr(d, f"{prefix}_sink__valid").value = int(word is not None)
        getattr(d, f"{prefix}_sink__word").value = word or 0
        getattr(d, f"{prefix}_cut").value = int(c.cut)
        getattr(d, f"{prefix}_flip").value = c.flip
        getattr(d, f"{prefix}_force").value = int(c.force is not None)
        getattr(d, f"{prefix}_force_word").value = c.force or 0
        getattr(d, f"{prefix}_freeze").value = int(c.freeze)
        getattr(d, f"{prefix}_gray_mask").value = c.gray_mask
        getattr(d, f"{prefix}_gray_value").value = c.gray_value
        getattr(d, f"{prefix}_gray_drop").value = int(c.gray_drop)
        getattr(d, f"{prefix}_latency").value = c.latency
        return c

    def _sample(self, prefix):
        d = self.dut
        if not getattr(d, f"{prefix}_source__valid").value:
            return None
        return getattr(d, f"{prefix}_source__word").value.to_unsigned()

    async def run(self, cycles):
        g = self.golden
        for t in range(cycles):
            if t:
                await FallingEdge(self.dut.clk)
            word_a, word_b = self._word(), self._word()
            c_ab = self._drive("ab", g.ab, word_a, t)
            c_ba = self._drive("ba", g.ba, word_b, t)
            await ReadOnly()
            for prefix, direction, word, c in (("ab", g.ab, word_a, c_ab), ("ba", g.ba, word_b, c_ba)):
                want = direction.apply(word, c)
                got = self._sample(prefix)
                assert got == want, (
                    f"cycle {t} {prefix}: RTL delivered {got!r}, golden {want!r} "
                    f"(latency rtl {getattr(self.dut, prefix + '_current_latency').value}, "
                    f"golden {direction.latency})"
                )
                self.compared += 1


@cocotb.parametrize(scenario=list(schedules(1)))
async def test_channel_lockstep(dut, scenario):
    cycles = int(os.environ.get("OAE_CHANNEL_CYCLES", "20000"))
    faults_ab, faults_ba = schedules(cycles)[scenario]
    seed = replay_seed()
    dut._log.info("%s: %d cycles, seed %d", scenario, cycles, seed)
    tb = ChannelTB(dut, faults_ab, faults_ba, seed)
    await tb.start()
    await tb.run(cycles)
    assert tb.compared == 2 * cycles
    assert tb.golden.ab.bits_flipped > 0 or scenario == "drift"
