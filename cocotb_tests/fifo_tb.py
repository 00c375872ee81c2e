"""cocotb testbench: the exported BisyncFIFO against golden.common.cdc.BisyncFIFOModel.

Drivers act at falling edges: they set the stream inputs for the coming rising edge and read the
DUT's registered outputs, which are settled then, so each transfer is known before the edge that
makes it. The one asynchronous event, a write-side reset clearing the read side, is resolved
against the read edge it races with (resets are placed away from read edges).

Environment: OAE_FIFO_WORDS words per clock ratio (default 20000); OAE_FIFO_DEPTH, the exported
depth (default 16); OAE_FIFO_STATS, a JSON-lines
file that receives one record per ratio for the report.
"""

import json
import os
import random
import statistics

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, Timer
from cocotb.utils import get_sim_time

from golden.common.cdc import BisyncFIFOModel, CdcViolation

# (label, write period ps, read period ps, read clock start offset ps)
RATIOS = [
    ("1:1", 10000, 10000, 3000),
    ("1:1.37", 10000, 13700, 1100),
    ("1:4", 10000, 40000, 7000),
    ("4:1", 40000, 10000, 2500),
    # Mesochronous pair: the read clock is 0.02% slow, so its phase slips one full write period
    # every 5000 cycles and every phase relation is visited.
    ("meso-drift", 10000, 10002, 5000),
]
WORD_MASK = (1 << 72) - 1


class FifoTB:
    """Owns the two clocks, both stream drivers/monitors, the resets and the scoreboard."""

    def __init__(self, dut, w_period, r_period, r_offset, rng):
        self.dut = dut
        self.w_period, self.r_period, self.r_offset = w_period, r_period, r_offset
        self.rng = rng
        self.model = BisyncFIFOModel()
        self.r_start = None
        self.w_in_reset = False
        self.r_in_reset = False
        self.reset_times = []  # write-side reset assertion times (ps)
        self.pending_take = None  # (word, read_edges, edge_time) decided, edge not yet resolved
        self.flush_seen = False
        self.read_edges = 0
        self.p_valid = 0.8
        self.p_ready = 0.7
        self.sent = 0
        self.errors = []

    async def start(self):
        d = self.dut
        for sig in (d.sink__valid, d.source__ready):
            sig.value = 0
        d.sink__payload.value = 0
        d.w_rst.value = 1
        d.r_rst.value = 1
        Clock(d.w_clk, self.w_period, unit="ps").start()
        await Timer(self.r_offset, unit="ps")
        self.r_start = self.now()
        Clock(d.r_clk, self.r_period, unit="ps").start()
        for _ in range(3):
            await FallingEdge(d.w_clk)
        d.w_rst.value = 0
        d.r_rst.value = 0

    @staticmethod
    def now():
        return round(get_sim_time("ps"))

    def read_edges_at(self, t):
        """Read rising edges at or before time t (a read edge at t samples before a write at t)."""
        if t < self.r_start:
            return 0
        return (t - self.r_start) // self.r_period + 1

    def _check(self, fn, *args):
        try:
            fn(*args)
        except CdcViolation as err:
            err.args = (f"{err} [t={self.now()} ps, sent={self.sent}, write resets at {self.reset_times}]",)
            self.errors.append(str(err))
            raise

    async def writer(self, words):
        d = self.dut
        valid, word = False, 0
        while self.sent < words:
            await FallingEdge(d.w_clk)
            if self.w_in_reset:
                valid = False
                d.sink__valid.value = 0
                continue
            if not valid and self.rng.random() < self.p_valid:
                valid, word = True, self.rng.getrandbits(72)
                d.sink__payload.value = word
            d.sink__valid.value = int(valid)
            if valid and d.sink__ready.value:
                now = self.now()
                self._check(self.model.write, word, self.read_edges_at(now + self.w_period // 2))
                self.sent += 1
                valid = False
        await FallingEdge(d.w_clk)
        d.sink__valid.value = 0

    def _resolve_take(self, reset_time=None):
        """Apply the take decided at the last read falling edge unless a write reset beat its edge."""
        if self.pending_take is None:
            return
        word, edges, edge_time = self.pending_take
        if reset_time is None or edge_time < reset_time:
            self.pending_take = None
            self._check(self.model.take, word, edges)
        elif reset_time is not None:
            self.pending_take = None

    async def reader(self):
        d = self.dut
        while True:
            await FallingEdge(d.r_clk)
            self.read_edges = self.read_edges_at(self.now())
            self._resolve_take()
            if d.flushed.value:
                self.flush_seen = True
            if self.r_in_reset:
                if d.source__valid.value:
                    self.errors.append("source.valid high during read-side reset")
                    raise CdcViolation(self.errors[-1])
                d.source__ready.value = 0
                continue
            ready = self.rng.random() < self.p_ready
            d.source__ready.value = int(ready)
            if d.source__valid.value:
                word = d.source__payload.value.to_unsigned()
                self._check(self.model.present, word, self.read_edges)
                if ready:
                    now = self.now()
                    self.pending_take = (word, self.read_edges, now + self.r_period // 2)

    async def _away_from_read_edges(self):
        """Wait until no read clock edge is within 2 ps, so an async reset cannot tie with one."""
        half = self.r_period // 2
        while True:
            phase = (self.now() - self.r_start) % half
            if 2 < phase < half - 2:
                return
            await Timer(5, unit="ps")

    async def write_reset(self, cycles):
        d = self.dut
        await FallingEdge(d.w_clk)
        await self._away_from_read_edges()
        self.w_in_reset = True
        d.sink__valid.value = 0
        d.w_rst.value = 1
        now = self.now()
        self._resolve_take(reset_time=now)
        self.model.write_reset()
        self.reset_times.append(now)
        self.flush_seen = False
        for _ in range(cycles):
            await FallingEdge(d.w_clk)
        d.w_rst.value = 0
        self.w_in_reset = False

    async def read_reset(self, cycles):
        d = self.dut
        await FallingEdge(d.r_clk)
        self.r_in_reset = True
        d.source__ready.value = 0
        d.r_rst.value = 1
        # The reader may already have offered ready for the coming edge; reset withdraws it.
        if self.pending_take is not None and self.pending_take[2] > self.now():
            self.pending_take = None
        for _ in range(cycles):
            await FallingEdge(d.r_clk)
        d.r_rst.value = 0
        self.r_in_reset = False
        self.model.read_reset_released(self.read_edges_at(self.now()))


def _stats(label, tb, words):
    lat = tb.model.latencies
    return {
        "ratio": label,
        "words": words,
        "delivered": tb.model.delivered,
        "discarded": tb.model.discarded,
        "latency_min": min(lat) if lat else None,
        "latency_median": statistics.median(lat) if lat else None,
        "latency_max": max(lat) if lat else None,
        "errors": len(tb.errors),
        "first_error": tb.errors[0] if tb.errors else None,
    }


@cocotb.parametrize(ratio=RATIOS)
async def test_fifo_ratio(dut, ratio):
    """Random traffic, random backpressure both sides, one write reset and one read reset mid-stream."""
    label, w_period, r_period, r_offset = ratio
    words = int(os.environ.get("OAE_FIFO_WORDS", "20000"))
    seed = cocotb.RANDOM_SEED + sum(map(ord, label))
    dut._log.info("ratio %s: %d words, seed %d", label, words, seed)
    rng = random.Random(seed)
    tb = FifoTB(dut, w_period, r_period, r_offset, rng)
    await tb.start()
    reader = cocotb.start_soon(tb.reader())
    writer = cocotb.start_soon(tb.writer(words))
    try:
        for phase_words, action in ((words // 3, "w"), (2 * words // 3, "r")):
            while tb.sent < phase_words:
                await FallingEdge(dut.w_clk)
                if reader.done():
                    reader.result()
            # Backpressure pattern changes with each phase: bursty writer, then a slow reader.
            if action == "w":
                await tb.write_reset(rng.choice([1, 2, 5]))
                tb.p_valid, tb.p_ready = 0.95, 0.5
            else:
                await tb.read_reset(rng.choice([1, 3, 8]))
                tb.p_valid, tb.p_ready = 0.5, 0.95
        await writer
        tb.p_ready = 1.0
        slow = max(w_period, r_period)
        for _ in range(tb.model.max_latency + 64):
            await Timer(slow, unit="ps")
            if not tb.model.in_flight:
                break
        if reader.done():
            reader.result()
        tb.model.finish()
        assert tb.flush_seen, "flushed never pulsed after the write-side reset"
        depth = int(os.environ.get("OAE_FIFO_DEPTH", "16"))
        assert tb.model.discarded <= depth + 1, (
            f"{tb.model.discarded} words discarded by one reset, more than "
            f"the FIFO holds ({depth} + the output register)"
        )
    except (CdcViolation, AssertionError) as err:
        if str(err) not in tb.errors:
            tb.errors.append(str(err))
        raise
    finally:
        stats_path = os.environ.get("OAE_FIFO_STATS")
        if stats_path:
            with open(stats_path, "a") as f:
                f.write(json.dumps(_stats(label, tb, words)) + "\n")
        reader.cancel()
        writer.cancel()
    dut._log.info(
        "ratio %s: %d delivered, %d discarded by the write reset, latency %s",
        label,
        tb.model.delivered,
        tb.model.discarded,
        _stats(label, tb, words),
    )
