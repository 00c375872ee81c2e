"""cocotb testbench: two AxisLinkEndpoints and the channel, driven with cocotbext-axi.

Each end's user side runs on a clock of its own; every class has an ``AxiStreamSource`` on its
``s_axis`` port and an ``AxiStreamSink`` on the peer's ``m_axis`` port, both pausing at random
(tvalid and tready gaps at any beat). The oracle is the list of packets handed to the sources:
the good ones (exactly 64 bytes, every tkeep bit set) must leave the peer's sink exactly once,
in order, bit for bit, each as eight full beats; the bad ones (short, long, with a tkeep gap:
rtl/link/axis.py) must never leave and must each be counted in ``bad_packets``. Meanwhile the
channel is cut each way, long enough for the link to retrain, and the traffic must survive it.

Environment: OAE_AXIS_PACKETS (good packets per class and end, default 300).
"""

import itertools
import logging
import os

import cocotb
from cocotb.triggers import FallingEdge
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSink, AxiStreamSource

from cocotb_tests import replay_seed
from cocotb_tests.endpoint_tb import LinkPairTB
from golden.encoding import FRAME_BYTES

NUM_CLASSES = 2  # must match the exported design
PEER = {"a": "b", "b": "a"}


def pauses(rng, busy):
    """A pause generator for cocotbext-axi: paused in about ``busy`` of the cycles, in bursts."""
    while True:
        if rng.random() < busy / 8:
            yield from itertools.repeat(True, rng.randint(1, 16))
        else:
            yield False


def bad_packet(rng):
    """A packet that is not a frame, of each kind rtl/link/axis.py defines."""
    kind = rng.choice(["short", "long", "gap"])
    if kind == "short":
        return AxiStreamFrame(rng.randbytes(rng.choice([1, 8, 40, 56, 63])))
    if kind == "long":
        return AxiStreamFrame(rng.randbytes(rng.choice([65, 72, 128])))
    keep = [1] * FRAME_BYTES
    keep[rng.randrange(FRAME_BYTES)] = 0
    return AxiStreamFrame(rng.randbytes(FRAME_BYTES), tkeep=keep)


class AxisTB(LinkPairTB):
    def __init__(self, dut, seed):
        super().__init__(dut, seed)
        self.sources, self.sinks = {}, {}
        self.expected = {(e, c): [] for e in "ab" for c in range(NUM_CLASSES)}  # sent by e
        self.received = {(e, c): 0 for e in "ab" for c in range(NUM_CLASSES)}
        self.bad_sent = {"a": 0, "b": 0}
        self.cuts_seen = 0

    async def start(self):
        d = self.dut
        for e in "ab":
            getattr(d, f"{e}_ait_in__valid").value = 0
            getattr(d, f"{e}_ait_in__payload").value = 0
            getattr(d, f"{e}_ait_out__ready").value = 1
            getattr(d, f"{e}_returned__ready").value = 1
            getattr(d, f"{e}_withdraw").value = 0
            for c in range(NUM_CLASSES):
                clk, rst = getattr(d, f"core_{e}_clk"), getattr(d, f"core_{e}_rst")
                src = AxiStreamSource(AxiStreamBus(d, f"{e}_s_axis__{c}", bus_separator="__"), clk, rst)
                sink = AxiStreamSink(AxiStreamBus(d, f"{e}_m_axis__{c}", bus_separator="__"), clk, rst)
                for driver in (src, sink):
                    driver.log.setLevel(logging.WARNING)  # not a line per packet
                src.set_pause_generator(pauses(self.rng, 0.3))
                sink.set_pause_generator(pauses(self.rng, 0.3))
                self.sources[e, c], self.sinks[e, c] = src, sink
        await super().start()

    async def send(self, end, cls, count):
        """``count`` good packets on one class, a bad one now and then between them."""
        src = self.sources[end, cls]
        for _ in range(count):
            if self.rng.random() < 0.1:
                await src.send(bad_packet(self.rng))
                self.bad_sent[end] += 1
            payload = self.rng.randbytes(FRAME_BYTES)
            self.expected[end, cls].append(payload)
            await src.send(AxiStreamFrame(payload))

    async def receive(self, end, cls):
        """What the peer of ``end`` delivers on class ``cls``, against what ``end`` sent."""
        sink, sent = self.sinks[PEER[end], cls], self.expected[end, cls]
        while True:
            frame = await sink.recv(compact=False)
            k = self.received[end, cls]
            assert k < len(sent), f"{PEER[end]} delivered class {cls} packet #{k}, never sent by {end}"
            assert len(frame.tdata) == FRAME_BYTES and all(frame.tkeep), (
                f"{PEER[end]} class {cls} packet #{k}: {len(frame.tdata)} bytes, tkeep {frame.tkeep}"
            )
            assert bytes(frame.tdata) == sent[k], f"{PEER[end]} class {cls} packet #{k} is not the one {end} sent"
            self.received[end, cls] = k + 1

    def all_delivered(self):
        return all(self.received[k] == len(v) for k, v in self.expected.items())

    async def cuts(self):
        """Each direction cut for long enough that the ends retrain (RLFD, PROTOCOL.md 5)."""
        for direction in ("ab", "ba"):
            await self.link_cycles(self.rng.randint(1500, 3000))
            await FallingEdge(self.dut.clk)
            getattr(self.dut, f"{direction}_cut").value = 1
            down = False
            for _ in range(30):
                await self.link_cycles(10)
                down |= not self.both_up()
            getattr(self.dut, f"{direction}_cut").value = 0
            assert down, f"the link stayed up through a 300-cycle cut of {direction}"
            self.cuts_seen += 1


@cocotb.test()
async def test_axis_endpoints(dut):
    packets = int(os.environ.get("OAE_AXIS_PACKETS", "300"))
    seed = replay_seed()
    dut._log.info("%d packets per class and end, seed %d", packets, seed)
    tb = AxisTB(dut, seed)
    await tb.start()
    await tb.wait_until_up()
    trainings = sum(int(getattr(dut, f"{e}_status__counters__trainings").value) for e in "ab")
    for e in "ab":
        for c in range(NUM_CLASSES):
            cocotb.start_soon(tb.send(e, c, packets))
            cocotb.start_soon(tb.receive(e, c))
    cuts = cocotb.start_soon(tb.cuts())
    for _ in range(2000):
        await tb.link_cycles(100)
        if tb.all_delivered() and all(len(v) == packets for v in tb.expected.values()):
            break
    retrained = sum(int(getattr(dut, f"{e}_status__counters__trainings").value) for e in "ab") - trainings
    anomalies = sum(int(getattr(dut, f"{e}_status__counters__anomalies").value) for e in "ab")
    # Anomalies (a receive memory overrun while a sink pauses) retrain the link too, for now.
    dut._log.info(
        "delivered %s; bad packets sent a %d b %d; trainings during traffic %d, anomalies %d",
        dict(tb.received),
        tb.bad_sent["a"],
        tb.bad_sent["b"],
        retrained,
        anomalies,
    )
    assert cuts.done() and tb.cuts_seen == 2, "the traffic ended before both cuts"
    assert all(len(v) == packets for v in tb.expected.values()), "the sources did not get every packet out"
    assert tb.all_delivered(), f"not delivered: sent {[len(v) for v in tb.expected.values()]}, got {tb.received}"
    assert retrained >= 2, "the link never retrained"
    for e in "ab":
        counted = int(getattr(dut, f"{e}_bad_packets").value)
        assert counted == tb.bad_sent[e], f"{e} counted {counted} bad packets, {tb.bad_sent[e]} were sent"
    assert tb.both_up()
