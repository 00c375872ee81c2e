"""A FIFO queue that takes up to two entries per cycle, for the framer's ECHO and expect queues."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for, ceil_log2

from golden.params import check_int


class Queue(wiring.Component):
    """First in, first out; ``push_a`` then ``push_b`` may both add an entry in one cycle.

    Ports: ``push_a``/``data_a``, ``push_b``/``data_b`` (entries appended in that order),
    ``pop`` (drop the head; only when ``count`` > 0), ``clear`` (empty the queue, discarding this
    cycle's pushes too). Outputs: ``count`` (entries held, register), ``head`` and ``second``
    (the two oldest entries, combinational reads), ``overflow`` (combinational: this cycle's
    pushes do not fit; they are then dropped, and the owner must treat it as an anomaly).
    Latency: an entry pushed at an edge is at ``head`` after it if the queue was empty.
    """

    def __init__(self, *, width, depth):
        for name, value in (("width", width), ("depth", depth)):
            check_int(name, value, 2)
        self._width, self._depth = width, 1 << ceil_log2(depth)
        super().__init__({
            "push_a": In(1), "data_a": In(width), "push_b": In(1), "data_b": In(width),
            "pop": In(1), "clear": In(1),
            "count": Out(bits_for(self._depth)), "head": Out(width), "second": Out(width), "overflow": Out(1),
        })

    @property
    def depth(self):
        return self._depth

    def elaborate(self, platform):
        m = Module()
        m.submodules.mem = mem = Memory(shape=self._width, depth=self._depth, init=[])
        bits = ceil_log2(self._depth)
        rp, wp = Signal(bits), Signal(bits)
        wa, wb = mem.write_port(), mem.write_port()
        ra, rb = mem.read_port(domain="comb"), mem.read_port(domain="comb")
        pushes = self.push_a + self.push_b
        m.d.comb += [
            self.overflow.eq(self.count + pushes > self._depth),
            ra.addr.eq(rp), rb.addr.eq(rp + 1), self.head.eq(ra.data), self.second.eq(rb.data),
            wa.addr.eq(wp), wa.data.eq(Mux(self.push_a, self.data_a, self.data_b)),
            wb.addr.eq(wp + 1), wb.data.eq(self.data_b),
        ]
        ok = ~self.overflow & ~self.clear
        m.d.comb += [wa.en.eq(ok & (self.push_a | self.push_b)), wb.en.eq(ok & self.push_a & self.push_b)]
        with m.If(self.clear):
            m.d.sync += [rp.eq(0), wp.eq(0), self.count.eq(0)]
        with m.Else():
            pushed = Mux(self.overflow, 0, pushes)
            m.d.sync += [rp.eq(rp + self.pop), wp.eq(wp + pushed), self.count.eq(self.count + pushed - self.pop)]
        return m
