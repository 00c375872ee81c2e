"""cocotb testbench: two LinkEndpoints (user side behind bisynchronous FIFOs) and the channel.

The link runs on one clock, each end's user side on a clock of its own (A faster, B slower than
the link). There is no golden lockstep here (the FIFOs move the user-side timing); the check is
an independent scoreboard of the guarantees of docs/PROTOCOL.md 7: every frame of each class
delivered exactly once, in order, bit for bit; every token delivered at most once, to the peer
only, never both delivered and given back; at the end, everything delivered or given back.
The channel is cut both ways and hit by bit flips while traffic flows, and one user stops taking
frames for a while (its end overruns, retrains, and gets the frames again).

Ports are reached as cocotb-bus ``Bus`` objects (a stream's ``valid``, ``ready``, ``payload``);
deliveries reach the scoreboard through a :class:`StreamMonitor` per ``frames_out`` port. The
scoreboard is our own rather than cocotb-bus's ``Scoreboard``: the guarantees are exactly-once
across two ends and tokens that may be delivered or given back, not one expected list per port
(and that class's ``result`` ends the test as passed under cocotb 2).

Environment: OAE_ENDPOINT_CYCLES (link cycles of traffic, default 20000).
"""

import os
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, Timer
from cocotb_bus.bus import Bus
from cocotb_bus.monitors import BusMonitor

from cocotb_tests import replay_seed
from golden.encoding import FRAME_BYTES, LinkState

LINK_NS, CORE_NS = 10, {"a": 7, "b": 13}
NUM_CLASSES = 2  # must match the exported design
STREAM = ["valid", "ready", "payload"]


def stream_bus(dut, name):
    """The flattened Verilog ports of one amaranth.lib.stream port (``<name>__valid`` ...)."""
    return Bus(dut, name, STREAM, bus_separator="__")


class StreamMonitor(BusMonitor):
    """Every transfer (valid and ready) on a stream port, as the payload's bytes, little-endian.

    Drivers of this TB change inputs at falling edges, so the values read after a falling edge
    (ReadOnly) are the ones the next rising edge takes."""

    _signals = STREAM

    def __init__(self, dut, name, clock, nbytes, callback):
        self._nbytes = nbytes
        super().__init__(dut, name, clock, callback=callback, bus_separator="__")

    async def _monitor_recv(self):
        while True:
            await FallingEdge(self.clock)
            await ReadOnly()
            if self.bus.valid.value and self.bus.ready.value:
                self._recv(int(self.bus.payload.value).to_bytes(self._nbytes, "little"))


class Scoreboard:
    def __init__(self):
        self.sent = {e: [[] for _ in range(NUM_CLASSES)] for e in "ab"}  # frames handed in at e
        self.received = {e: [0] * NUM_CLASSES for e in "ab"}  # frames delivered at e
        self.tokens_in = {e: set() for e in "ab"}
        self.delivered, self.returned = {}, set()

    def frame_out(self, end, cls, payload):
        peer = "b" if end == "a" else "a"
        k = self.received[end][cls]
        assert k < len(self.sent[peer][cls]), f"{end} got class {cls} frame #{k} that was never handed in"
        assert payload == self.sent[peer][cls][k], f"{end} class {cls} frame #{k} is not the frame handed in"
        self.received[end][cls] = k + 1

    def token_out(self, end, value):
        peer = "b" if end == "a" else "a"
        assert value in self.tokens_in[peer], f"{end} got token {value:#x} its peer never handed in"
        assert value not in self.delivered, f"token {value:#x} delivered twice"
        assert value not in self.returned, f"token {value:#x} delivered after it was given back"
        self.delivered[value] = end

    def token_returned(self, end, value):
        assert value in self.tokens_in[end], f"{end} got back token {value:#x} it never handed in"
        assert value not in self.delivered, f"token {value:#x} given back after delivery"
        assert value not in self.returned, f"token {value:#x} given back twice"
        self.returned.add(value)

    def settled(self):
        frames = all(
            self.received[e][c] == len(self.sent["b" if e == "a" else "a"][c]) for e in "ab" for c in range(NUM_CLASSES)
        )
        tokens = all(v in self.delivered or v in self.returned for e in "ab" for v in self.tokens_in[e])
        return frames and tokens


class LinkPairTB:
    """Clocks, resets and the channel's fault ports of a pair of endpoints with user sides on
    clocks of their own (``core_a``, ``core_b``); shared by this TB and cocotb_tests/axis_tb.py."""

    def __init__(self, dut, seed):
        self.dut, self.rng = dut, random.Random(seed)

    async def start(self):
        Clock(self.dut.clk, LINK_NS, unit="ns").start()
        for e in "ab":
            Clock(getattr(self.dut, f"core_{e}_clk"), CORE_NS[e], unit="ns").start()
        for rst in ("rst", "core_a_rst", "core_b_rst"):
            getattr(self.dut, rst).value = 1
        for d in ("ab", "ba"):
            for name, value in (
                ("cut", 0),
                ("flip", 0),
                ("force", 0),
                ("force_word", 0),
                ("freeze", 0),
                ("latency", 16),
            ):
                getattr(self.dut, f"{d}_{name}").value = value
        await Timer(100, unit="ns")
        for rst in ("rst", "core_a_rst", "core_b_rst"):
            getattr(self.dut, rst).value = 0

    def both_up(self):
        return all(int(getattr(self.dut, f"{e}_status__state").value) == LinkState.UP for e in "ab")

    async def link_cycles(self, n):
        await Timer(n * LINK_NS, unit="ns")

    async def wait_until_up(self):
        """Both ends UP within 5,000 link cycles, or the test fails."""
        for _ in range(500):
            await self.link_cycles(10)
            if self.both_up():
                return
        assert self.both_up(), "the link did not come up"


class EndpointTB(LinkPairTB):
    def __init__(self, dut, seed):
        super().__init__(dut, seed)
        self.sb = Scoreboard()
        self.traffic = True
        self.stalled = {"a": False, "b": False}  # the user takes no frames (forces overruns)
        self.next_token = {"a": 0x0001, "b": 0x8001}

    def port(self, end, *path):
        return stream_bus(self.dut, "__".join([f"{end}_{path[0]}", *map(str, path[1:])]))

    def monitor_deliveries(self):
        """A monitor per frames_out port, feeding the scoreboard in the user's clock."""
        self.monitors = [
            StreamMonitor(
                self.dut,
                f"{e}_frames_out__{c}",
                getattr(self.dut, f"core_{e}_clk"),
                FRAME_BYTES,
                callback=lambda frame, e=e, c=c: self.sb.frame_out(e, c, frame),
            )
            for e in "ab"
            for c in range(NUM_CLASSES)
        ]

    async def user(self, end):
        """Drive and watch one end's user side, in its core clock: random traffic, random
        withdrawals, every handed-in frame and every token movement into the scoreboard
        (delivered frames reach it through the monitors)."""
        clk, rng, sb = getattr(self.dut, f"core_{end}_clk"), self.rng, self.sb
        frames_in = [self.port(end, "frames_in", c) for c in range(NUM_CLASSES)]
        ready_out = [self.port(end, "frames_out", c).ready for c in range(NUM_CLASSES)]
        ait_in, ait_out, returned = self.port(end, "ait_in"), self.port(end, "ait_out"), self.port(end, "returned")
        pending = [None] * NUM_CLASSES
        token = None
        while True:
            await FallingEdge(clk)
            for c in range(NUM_CLASSES):
                if pending[c] is None and self.traffic and rng.random() < 0.05:
                    pending[c] = rng.randbytes(FRAME_BYTES)
                frames_in[c].valid.value = int(pending[c] is not None)
                frames_in[c].payload.value = int.from_bytes(pending[c] or bytes(FRAME_BYTES), "little")
                ready_out[c].value = int(not self.stalled[end] and rng.random() < 0.8)
            if token is None and self.traffic and rng.random() < 0.02:
                token = self.next_token[end]
                self.next_token[end] += 1
            ait_in.valid.value = int(token is not None)
            ait_in.payload.value = token or 0
            ait_out.ready.value = int(rng.random() < 0.5)
            returned.ready.value = 1
            if rng.random() < 0.01:
                getattr(self.dut, f"{end}_withdraw").value = int(self.traffic and rng.random() < 0.3)
            await ReadOnly()
            for c in range(NUM_CLASSES):
                if frames_in[c].valid.value and frames_in[c].ready.value:
                    sb.sent[end][c].append(pending[c])
                    pending[c] = None
            if ait_in.valid.value and ait_in.ready.value:
                sb.tokens_in[end].add(token)
                token = None
            if ait_out.valid.value and ait_out.ready.value:
                sb.token_out(end, int(ait_out.payload.value))
            if returned.valid.value:
                sb.token_returned(end, int(returned.payload.value))

    async def faults(self):
        """Cuts and bit flips in the link clock while traffic flows."""
        d = self.dut
        for _ in range(3):
            await self.link_cycles(self.rng.randint(2000, 4000))
            direction = self.rng.choice(["ab", "ba"])
            await FallingEdge(d.clk)
            getattr(d, f"{direction}_cut").value = 1
            await self.link_cycles(self.rng.choice([5, 60, 300]))
            getattr(d, f"{direction}_cut").value = 0
            for _ in range(5):
                await self.link_cycles(self.rng.randint(50, 400))
                await FallingEdge(d.clk)
                getattr(d, f"{direction}_flip").value = 1 << self.rng.randrange(72)
                await FallingEdge(d.clk)
                getattr(d, f"{direction}_flip").value = 0


@cocotb.test()
async def test_endpoints_across_clock_domains(dut):
    cycles = int(os.environ.get("OAE_ENDPOINT_CYCLES", "20000"))
    seed = replay_seed()
    dut._log.info("%d link cycles of traffic, seed %d", cycles, seed)
    tb = EndpointTB(dut, seed)
    await tb.start()
    tb.monitor_deliveries()
    for e in "ab":
        cocotb.start_soon(tb.user(e))
    await tb.wait_until_up()
    fault_task = cocotb.start_soon(tb.faults())
    await tb.link_cycles(cycles // 4)
    # B's user stops taking frames for a while: its receive memory fills, the end retrains on
    # the overrun, and the frames come again once it takes them.
    anomalies = int(dut.b_status__counters__anomalies.value)
    tb.stalled["b"] = True
    await tb.link_cycles(2000)
    tb.stalled["b"] = False
    overruns = int(dut.b_status__counters__anomalies.value) - anomalies
    await tb.link_cycles(cycles - cycles // 4)
    fault_task.cancel()
    for d in ("ab", "ba"):
        getattr(dut, f"{d}_cut").value = 0
        getattr(dut, f"{d}_flip").value = 0
    tb.traffic = False
    for e in "ab":
        getattr(dut, f"{e}_withdraw").value = 0
    for _ in range(400):
        await tb.link_cycles(100)
        if tb.sb.settled() and tb.both_up():
            break
    sb = tb.sb
    dut._log.info(
        "frames handed in a %s b %s; tokens a %d b %d (delivered %d, given back %d); trainings a %d b %d",
        [len(x) for x in sb.sent["a"]],
        [len(x) for x in sb.sent["b"]],
        len(sb.tokens_in["a"]),
        len(sb.tokens_in["b"]),
        len(sb.delivered),
        len(sb.returned),
        int(dut.a_status__counters__trainings.value),
        int(dut.b_status__counters__trainings.value),
    )
    missing_tokens = sorted(v for e in "ab" for v in sb.tokens_in[e] if v not in sb.delivered and v not in sb.returned)
    dut._log.info("anomalies at B while its user stalled: %d", overruns)
    assert overruns >= 1, "a stalled user never caused an overrun"
    assert sb.settled(), (
        f"outstanding after the link settled: frames delivered {sb.received}, tokens {[hex(v) for v in missing_tokens]}"
    )
    assert min(len(x) for e in "ab" for x in sb.sent[e]) > 50
    assert int(dut.a_status__counters__trainings.value) + int(dut.b_status__counters__trainings.value) >= 2
