"""The control messages a node's stream to one destination holds back, in hardware (PROTOCOL.md
10.10); twin of golden/fabric/waiting.py."""

from amaranth.hdl import Array, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for

from golden.params import check_int


class WaitingMessages(wiring.Component):
    """Up to ``capacity`` messages of ``width`` bits, each in the slot of what it is about (the
    caller numbers the (type, link) pairs: a REPORT per port of the node, a VERDICT per link of
    the fabric), and their age order in registers.

    Ports (in): ``park``, ``park_slot``, ``park_payload`` (golden :meth:`park`: the message
    waits, last; one waiting in the same slot leaves the order); ``pop`` (golden :meth:`pop`:
    the oldest leaves; only while ``count`` is not 0, and never with ``park`` in one clock: one
    control action parks or flushes). Out: ``count`` (register); ``oldest_payload`` (the
    oldest message, read combinationally from a memory of ``capacity`` slots: distributed RAM);
    ``superseded`` (combinational: this clock's park replaces a message).

    Latency: a message parked is counted and readable from the next clock. Failure behaviour:
    none (``capacity`` slots hold every message the numbering allows); ValueError at
    construction for bad parameters.
    """

    def __init__(self, *, capacity: int, width: int):
        self._capacity = check_int("capacity", capacity, 1, 1024)
        self._width = check_int("width", width, 1)
        super().__init__(
            {
                "park": In(1),
                "park_slot": In(range(capacity)),
                "park_payload": In(width),
                "pop": In(1),
                "count": Out(bits_for(capacity)),
                "oldest_payload": Out(width),
                "superseded": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        n = self._capacity
        m.submodules.mem = mem = Memory(shape=self._width, depth=n, init=[])
        wr = mem.write_port()
        rd = mem.read_port(domain="comb")
        # order[i]: the slot of the i-th oldest message, for i < count.
        order = Array(Signal(range(n), name=f"order{i}") for i in range(n))
        present = Signal(n, name="present")  # a message waits in the slot
        count = self.count
        # Where the parked slot stands in the order, if a message waits there: the first match,
        # as the entries beyond ``count`` (stale) come after the live ones.
        position = Signal(range(n), name="position")
        for i in reversed(range(n)):
            with m.If(order[i] == self.park_slot):
                m.d.comb += position.eq(i)
        m.d.comb += [
            self.superseded.eq(self.park & present.bit_select(self.park_slot, 1)),
            wr.addr.eq(self.park_slot),
            wr.data.eq(self.park_payload),
            wr.en.eq(self.park),
            rd.addr.eq(order[0]),
            self.oldest_payload.eq(rd.data),
        ]
        # Entries close up over the one that leaves: the oldest on a pop, the superseded one on
        # a park; a park then puts its slot last.
        gone = Mux(self.pop, 0, position)
        closing = self.pop | self.superseded
        after = Mux(closing, count - 1, count)  # entries left before the park's
        for i in range(n - 1):
            with m.If(closing & (i >= gone)):
                m.d.sync += order[i].eq(order[i + 1])
        for i in range(n):
            with m.If(self.park & (after == i)):
                m.d.sync += order[i].eq(self.park_slot)
        with m.If(self.park):
            m.d.sync += [present.bit_select(self.park_slot, 1).eq(1), count.eq(after + 1)]
        with m.Elif(self.pop):
            m.d.sync += [present.bit_select(order[0], 1).eq(0), count.eq(count - 1)]
        return m
