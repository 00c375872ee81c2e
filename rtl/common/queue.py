"""A first-in first-out queue whose head is a register, for the framer's reverse, expect and redo queues."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for, ceil_log2

from golden.params import check_int


class _MemoryQueue(wiring.Component):
    """The queue behind the head: entries in a memory with a synchronous read port, the oldest
    one in a register (``head``). ``pop`` and ``push`` may arrive late in the cycle: they only
    choose among values computed from registers, and neither reaches the memory's ports. Every
    cycle writes ``data`` into the memory's free slot, whether or not it is kept (``push``): the
    slot at ``wp`` holds no entry until ``wp`` moves past it, so the write enable is constant.
    The read address is the entry after the oldest (``rp_after``, a register), read whether or
    not the head moves: the oldest entry itself was read in an earlier cycle and waits in
    ``held`` (``read_moved``: it is the memory's output instead). Holds up to ``depth`` (a power
    of two) entries; a push is taken while it pops or has ``room`` (the owner's queue is not
    full), so the memory never holds more.

    ``pop`` and ``push`` are the last selects of every register they move, and the formulas
    lean on two invariants formal/queue.py proves: entries in the memory imply a valid head
    register, and with the head register empty the owner's queue has room."""

    def __init__(self, *, width, depth):
        self._width, self._depth = width, depth
        super().__init__(
            {
                "push": In(1),
                "room": In(1),
                "data": In(width),
                "pop": In(1),
                "clear": In(1),
                "head": Out(width),
                "head_valid": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        m.submodules.mem = mem = Memory(shape=self._width, depth=self._depth, init=[])
        wr = mem.write_port()
        rd = mem.read_port(domain="sync", transparent_for=[wr])
        bits = ceil_log2(self._depth)
        rp, wp = Signal(bits, name="rp"), Signal(bits, name="wp")
        rp_after = Signal(bits, name="rp_after", init=1)  # rp + 1
        behind = Signal(bits_for(self._depth))  # entries in the memory, behind the head
        behind_nz = Signal()  # behind != 0, kept as a register
        held, read_moved = Signal(self._width, name="held"), Signal(name="read_moved")
        push, pop, head_valid = self.push, self.pop, self.head_valid
        from_mem = pop & behind_nz  # the head register takes the oldest entry of the memory
        # Straight into the head register, free after this cycle with the memory empty.
        bypass = push & Mux(pop, ~behind_nz, ~head_valid)
        to_mem = push & Mux(pop, behind_nz, self.room & head_valid)
        grow, shrink = to_mem & ~from_mem, from_mem & ~to_mem
        # The oldest entry in the memory (while behind_nz): read last cycle at rp_after if the
        # head moved then, else the one held since.
        oldest = Mux(read_moved, rd.data, held)
        m.d.comb += [
            # The memory always has a free slot at ``wp`` (the head register holds one entry).
            wr.addr.eq(wp),
            wr.data.eq(self.data),
            wr.en.eq(1),
            # The oldest entry in the next cycle if the head moves now (written now: the port is
            # transparent).
            rd.addr.eq(rp_after),
        ]
        # An entry written into the empty memory is its oldest in the next cycle.
        m.d.sync += [read_moved.eq(from_mem), held.eq(Mux(behind_nz, oldest, self.data))]
        with m.If(self.clear):
            m.d.sync += [
                rp.eq(0),
                rp_after.eq(1),
                wp.eq(0),
                behind.eq(0),
                behind_nz.eq(0),
                self.head_valid.eq(0),
            ]
        with m.Else():
            m.d.sync += [
                wp.eq(Mux(to_mem, wp + 1, wp)),
                behind.eq(Mux(grow, behind + 1, Mux(shrink, behind - 1, behind))),
                behind_nz.eq(Mux(grow, 1, Mux(shrink, behind != 1, behind_nz))),
                self.head_valid.eq(from_mem | bypass | (head_valid & ~pop)),
            ]
            with m.If(from_mem):
                m.d.sync += [rp.eq(rp_after), rp_after.eq(rp_after + 1), self.head.eq(oldest)]
            with m.Elif(bypass):
                m.d.sync += self.head.eq(self.data)
        return m


class Queue(wiring.Component):
    """First in, first out, one entry in and one out per cycle, with the head in a register.

    Ports: ``push``/``data`` (append an entry), ``pop`` (drop the head; only while
    ``head_valid``), ``clear`` (empty the queue, discarding this cycle's push too). Outputs
    (registers): ``head``, ``head_valid``, ``count`` (entries held); ``overflow``
    (combinational): this cycle's push does not fit and is dropped (the owner treats it as a
    fault; the framer's queues are sized so that it never happens).

    With ``lookahead``, for comparisons made a cycle ahead of the head: ``successor`` (a
    register) is the entry that becomes the head at this edge if the head is popped and the
    queue holds one, and ``loaded`` (register) says where the head came from at the last edge:
    ``from_memory`` (``successor`` of the previous cycle), ``from_push`` (``data`` of the
    previous cycle, pushed into an empty head), neither (it is the head of the previous cycle,
    or invalid). A value compared in one cycle with ``head``, ``successor`` and ``data`` is so
    compared with the next cycle's head; all three being registers, such a comparison is one
    register-to-register path. The price is a second entry register, and one more gate between
    ``pop`` and the memory queue's pointers, so queues that need no look-ahead go without.

    Capacity: ``depth`` rounded up to a power of two (at least 2). Entries behind the head (with
    ``lookahead``, behind the successor) live in a memory with a synchronous read port, so large
    queues map to block RAM; the memory reads the entry after the oldest every cycle, the oldest
    having been read before, so the head can move on every cycle and no pop reaches the
    memory's address.

    Latency: an entry pushed into an empty queue is the head in the next cycle; one pushed
    behind others becomes the head in the cycle after its predecessor is popped.
    """

    def __init__(self, *, width, depth, lookahead=False):
        for name, value in (("width", width), ("depth", depth)):
            check_int(name, value, 1)
        if not isinstance(lookahead, bool):
            raise ValueError(f"lookahead must be True or False, not {lookahead!r}")
        self._width, self._depth, self._lookahead = width, max(2, 1 << ceil_log2(depth)), lookahead
        ports = {
            "push": In(1),
            "data": In(width),
            "pop": In(1),
            "clear": In(1),
            "head": Out(width),
            "head_valid": Out(1),
            "count": Out(bits_for(self._depth)),
            "overflow": Out(1),
        }
        if lookahead:
            ports.update(successor=Out(width), loaded=Out(data.StructLayout({"from_memory": 1, "from_push": 1})))
        super().__init__(ports)

    @property
    def depth(self):
        return self._depth

    def elaborate(self, platform):
        m = Module()
        # Never holds more than the queue does, so never more than ``depth``.
        m.submodules.rest = rest = _MemoryQueue(width=self._width, depth=self._depth)
        # ``full`` (count == depth) is a register, so that a late push meets no comparison
        # of the count on its way to the pointers.
        full = Signal(name="full")
        push = self.push & ~self.overflow
        more, fewer = push & ~self.pop, self.pop & ~push
        m.d.comb += [
            self.overflow.eq(self.push & ~self.pop & full),
            rest.data.eq(self.data),
            rest.clear.eq(self.clear),
            rest.room.eq(~full),
        ]
        with m.If(self.clear):
            m.d.sync += [self.count.eq(0), full.eq(0)]
        with m.Else():
            m.d.sync += [
                self.count.eq(Mux(more, self.count + 1, Mux(fewer, self.count - 1, self.count))),
                full.eq(Mux(more, self.count == self._depth - 1, full & ~fewer)),
            ]
        if not self._lookahead:
            m.d.comb += [
                rest.push.eq(self.push),
                rest.pop.eq(self.pop),
                self.head.eq(rest.head),
                self.head_valid.eq(rest.head_valid),
            ]
            return m
        # The head register in front of ``rest``, whose head is then the successor.
        take = self.pop | ~self.head_valid  # the head register is free after this cycle
        from_rest = take & rest.head_valid
        bypass = take & ~rest.head_valid & push  # straight into the empty head register
        # The memory queue never fills here: it holds one entry fewer than the queue.
        m.d.comb += [
            rest.push.eq(push & ~bypass),
            rest.pop.eq(from_rest),
            rest.room.eq(1),
            self.successor.eq(rest.head),
        ]
        with m.If(self.clear):
            m.d.sync += [self.head_valid.eq(0), self.loaded.eq(0)]
        with m.Else():
            m.d.sync += [
                self.head_valid.eq(from_rest | bypass | (self.head_valid & ~self.pop)),
                self.loaded.from_memory.eq(from_rest),
                self.loaded.from_push.eq(bypass),
            ]
            with m.If(from_rest):
                m.d.sync += self.head.eq(rest.head)
            with m.Elif(bypass):
                m.d.sync += self.head.eq(self.data)
        return m
