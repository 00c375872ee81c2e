"""A first-in first-out queue whose head is a register, for the framer's reverse and expect queues."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for, ceil_log2

from golden.params import check_int


class Queue(wiring.Component):
    """First in, first out, one entry in and one out per cycle, with the head in a register.

    Ports: ``push``/``data`` (append an entry), ``pop`` (drop the head; only while
    ``head_valid``), ``clear`` (empty the queue, discarding this cycle's push too). Outputs
    (registers): ``head``, ``head_valid``, ``count`` (entries held); ``overflow``
    (combinational): this cycle's push does not fit and is dropped (the owner treats it as a
    fault; the framer's queues are sized so that it never happens).

    For comparisons made a cycle ahead of the head: ``successor`` (combinational) is the entry
    that becomes the head at this edge if the head is popped and the memory holds one, and
    ``loaded`` (register) says where the head came from at the last edge: ``from_memory``
    (``successor`` of the previous cycle), ``from_push`` (``data`` of the previous cycle, pushed
    into an empty head), neither (it is the head of the previous cycle, or invalid). A value
    compared in one cycle with ``head``, ``successor`` and ``data`` is so compared with the next
    cycle's head.

    Capacity: ``depth`` rounded up to a power of two (at least 2). Entries behind the head live
    in a memory with a synchronous read port, so large queues map to block RAM; the read
    address is the next cycle's oldest entry, so the head can move on every cycle.

    Latency: an entry pushed into an empty queue is the head in the next cycle; one pushed
    behind others becomes the head in the cycle after its predecessor is popped.
    """

    def __init__(self, *, width, depth):
        for name, value in (("width", width), ("depth", depth)):
            check_int(name, value, 1)
        self._width, self._depth = width, max(2, 1 << ceil_log2(depth))
        super().__init__({
            "push": In(1), "data": In(width), "pop": In(1), "clear": In(1),
            "head": Out(width), "head_valid": Out(1), "count": Out(bits_for(self._depth)), "overflow": Out(1),
            "successor": Out(width), "loaded": Out(data.StructLayout({"from_memory": 1, "from_push": 1})),
        })

    @property
    def depth(self):
        return self._depth

    def elaborate(self, platform):
        m = Module()
        m.submodules.mem = mem = Memory(shape=self._width, depth=self._depth, init=[])
        wr = mem.write_port()
        rd = mem.read_port(domain="sync", transparent_for=[wr])
        bits = ceil_log2(self._depth)
        rp, wp = Signal(bits, name="rp"), Signal(bits, name="wp")
        behind = Signal(bits_for(self._depth))          # entries in the memory, behind the head
        behind_nz = Signal()                            # behind != 0, kept as a register
        take = self.pop | ~self.head_valid              # the head register is free after this cycle
        from_mem = take & behind_nz
        push = self.push & ~self.overflow
        bypass = take & ~behind_nz & push               # straight into the empty head register
        to_mem = push & ~bypass
        # The pop and push decisions arrive late in the cycle, so each count's successors are
        # computed from its register alone and the decisions only choose among them.
        rp_next = Mux(from_mem, rp + 1, rp)
        grow, shrink = to_mem & ~from_mem, from_mem & ~to_mem
        more, fewer = push & ~self.pop, self.pop & ~push
        m.d.comb += [
            self.overflow.eq(self.push & ~self.pop & (self.count == self._depth)),
            # The memory always has a free slot at ``wp`` (the head register holds one entry), so
            # every push writes it, and only the pointer waits for the decision to keep it: the
            # write enable does not depend on ``pop``.
            wr.addr.eq(wp), wr.data.eq(self.data), wr.en.eq(self.push),
            # The memory's output in the next cycle is the entry that will then be oldest.
            rd.addr.eq(rp_next), self.successor.eq(rd.data),
        ]
        with m.If(self.clear):
            m.d.sync += [rp.eq(0), wp.eq(0), behind.eq(0), behind_nz.eq(0), self.count.eq(0),
                         self.head_valid.eq(0), self.loaded.eq(0)]
        with m.Else():
            m.d.sync += [rp.eq(rp_next), wp.eq(Mux(to_mem, wp + 1, wp)),
                         behind.eq(Mux(grow, behind + 1, Mux(shrink, behind - 1, behind))),
                         behind_nz.eq(Mux(grow, 1, Mux(shrink, behind != 1, behind_nz))),
                         self.count.eq(Mux(more, self.count + 1, Mux(fewer, self.count - 1, self.count))),
                         self.head_valid.eq(from_mem | bypass | (self.head_valid & ~self.pop)),
                         self.loaded.from_memory.eq(from_mem), self.loaded.from_push.eq(bypass)]
            with m.If(from_mem):
                m.d.sync += self.head.eq(rd.data)
            with m.Elif(bypass):
                m.d.sync += self.head.eq(self.data)
        return m
