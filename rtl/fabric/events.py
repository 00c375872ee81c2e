"""The event queue of a node's control engine in hardware (PROTOCOL.md 10.11); twin of
golden/fabric/events.py."""

from amaranth.hdl import Array, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for

from golden.params import check_int


class EventQueue(wiring.Component):
    """``depth`` events of ``width`` bits in registers, written by ``writers`` writers in one
    clock and read one a clock.

    Ports (in): ``write`` (a bit per writer) and ``data`` (an event per writer): the events
    written in a clock join the queue in writer order, as the golden node appends them (each
    port's change in link order, each port never UP in link order, then the frame engine's
    message); ``pop`` (the control engine takes the head; only while ``head_valid``). Out, from
    registers: ``head``, ``head_valid``, ``count``; combinational: ``overflow`` (this clock's
    writes do not all fit after its pop: those that fit, the first ones, are kept, and the
    rest are lost; the node sizes the queue so that it never happens).

    Latency: an event written is at the head at the next clock if the queue is empty after this
    clock's pop. The queue is small (a few events per port), so it lives in registers: a memory
    has one write port, and a clock may bring an event from every port at once.
    Failure behaviour: ``overflow`` above; ValueError at construction for bad parameters.
    """

    def __init__(self, *, width: int, depth: int, writers: int):
        self._width = check_int("width", width, 1)
        self._depth = check_int("depth", depth, 1, 1024)
        self._writers = check_int("writers", writers, 1, 64)
        super().__init__(
            {
                "write": In(writers),
                "data": In(width).array(writers),
                "pop": In(1),
                "head": Out(width),
                "head_valid": Out(1),
                "count": Out(bits_for(depth)),
                "overflow": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        depth, writers = self._depth, self._writers
        slots = Array(Signal(self._width, name=f"slot{i}") for i in range(depth))
        rp, wp = Signal(range(depth), name="rp"), Signal(range(depth), name="wp")
        count, pop = self.count, self.pop
        room = depth - count + pop
        # Writer k's place behind the tail: the writes before it in this clock.
        placed, kept = [], []
        before = 0
        for k in range(writers):
            offset = Signal(bits_for(writers), name=f"offset{k}")
            m.d.comb += offset.eq(before)
            keep = Signal(name=f"keep{k}")
            m.d.comb += keep.eq(self.write[k] & (offset < room))
            at = wp + offset
            placed.append(Mux(at >= depth, at - depth, at))
            kept.append(keep)
            before = before + self.write[k]
        written = Signal(bits_for(writers), name="written")
        m.d.comb += [
            written.eq(sum(kept)),
            self.overflow.eq(before > room),
            self.head.eq(slots[rp]),
            self.head_valid.eq(count != 0),
        ]
        for k in range(writers):
            with m.If(kept[k]):
                m.d.sync += slots[placed[k]].eq(self.data[k])
        next_wp = wp + written
        next_rp = rp + pop
        m.d.sync += [
            wp.eq(Mux(next_wp >= depth, next_wp - depth, next_wp)),
            rp.eq(Mux(next_rp >= depth, next_rp - depth, next_rp)),
            count.eq(count + written - pop),
        ]
        return m
