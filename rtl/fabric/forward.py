"""A forward queue of a node in hardware (PROTOCOL.md 10.11); twin of golden/fabric/forward.py."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for, ceil_log2

from golden.params import check_int
from rtl.link.framer import FRAME_BITS


class ForwardQueue(wiring.Component):
    """The frames a node forwards to one (destination, port class): ``depth`` frames, and beyond
    them ``room`` for the frames settles take out, in a memory with one write port and one
    synchronous read port (block RAM for frames), the head read ahead into registers.

    Ports (in): ``pop`` (a port takes the head; only while ``head_valid`` and the destination
    has a path); ``push``, ``front``, ``data`` (the frame engine queues ``data`` at the tail, or
    at the head with ``front``: a frame a settled port took out); ``no_path`` (the destination
    has no path: a push into a full queue drops, as golden :meth:`push`). Out (registers):
    ``head``, ``head_valid``, ``count``, ``full`` (``count`` reached ``depth``); combinational:
    ``dropped`` (this clock's push dropped the oldest frame, or itself at the head), ``overflow``
    (this clock's push does not fit and is ignored: a relayed frame for a full queue with a
    path, or a frame taken out beyond ``depth + room``; the node checks the room first, so this
    is a fault).

    Fullness is judged after the clock's ``pop``, as the golden node's port takes its frame
    before the frame engine writes. Latency: a frame pushed is the head at the next clock if
    the queue is empty after this clock's pop, or if pushed at the head; one behind others
    becomes the head at the clock after its predecessor leaves. The head can leave every clock:
    the memory always reads the entry after the head, so no ``pop`` reaches its address.
    Failure behaviour: ``overflow`` above; ValueError at construction for bad parameters.
    """

    def __init__(self, *, depth: int, room: int, width: int = FRAME_BITS):
        self._depth = check_int("depth", depth, 1)
        self._capacity = depth + check_int("room", room, 0)
        self._width = check_int("width", width, 1)
        self._size = max(2, 1 << ceil_log2(self._capacity))  # memory entries; the pointers wrap
        super().__init__(
            {
                "pop": In(1),
                "push": In(1),
                "front": In(1),
                "no_path": In(1),
                "data": In(width),
                "head": Out(width),
                "head_valid": Out(1),
                "count": Out(bits_for(self._capacity)),
                "full": Out(1),
                "dropped": Out(1),
                "overflow": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        m.submodules.mem = mem = Memory(shape=self._width, depth=self._size, init=[])
        wr = mem.write_port()
        rd = mem.read_port(domain="sync", transparent_for=[wr])
        bits = ceil_log2(self._size)
        # The head's address, with its neighbours kept as registers beside it.
        rp = Signal(bits, name="rp")
        rp_after = Signal(bits, name="rp_after", init=1)
        rp_before = Signal(bits, name="rp_before", init=self._size - 1)
        wp = Signal(bits, name="wp")
        # Registers of the count's comparisons: count > depth, count == depth + room.
        beyond_depth, at_capacity = Signal(name="beyond_depth"), Signal(name="at_capacity")
        held, read_moved = Signal(self._width, name="held"), Signal(name="read_moved")
        count, pop, push, front = self.count, self.pop, self.push, self.front

        full_now = Mux(pop, beyond_depth, self.full)  # full after the port's take
        drop_oldest = push & ~front & full_now & self.no_path
        drop_self = push & front & full_now & self.no_path
        m.d.comb += [
            self.overflow.eq(push & full_now & ~self.no_path & (~front | (at_capacity & ~pop))),
            self.dropped.eq(drop_oldest | drop_self),
        ]
        to_tail = push & ~front & ~self.overflow
        to_head = push & front & ~drop_self & ~self.overflow
        leaves = pop | drop_oldest  # never both: drop_oldest needs a clock without a pop
        # The pushed frame is the next head: at the head, or into a queue empty after the take.
        bypass = to_head | (to_tail & ((count == 0) | ((count == 1) & leaves)))
        # Else the head leaving makes the entry after it the head: read from the memory at
        # ``rp_after`` in this clock, which no write of this clock touches (the tail is there
        # only when the head is the last entry, and then the pushed frame bypasses). With no
        # entry after it the queue is empty, and its next head comes by the bypass.
        from_memory = leaves & ~bypass
        head_now = Mux(read_moved, rd.data, held)
        step = Mux(leaves & ~to_head, 1, Mux(to_head & ~leaves, -1, 0))
        count_next = Signal.like(count)
        m.d.comb += [
            count_next.eq(count + to_tail + to_head - leaves),
            wr.en.eq(to_tail | to_head),
            # At the head: before it, or in its place when it leaves in this clock.
            wr.addr.eq(Mux(to_head, Mux(leaves, rp, rp_before), wp)),
            wr.data.eq(self.data),
            rd.addr.eq(rp_after),
            self.head.eq(head_now),
        ]
        m.d.sync += [
            rp.eq(rp + step),
            rp_after.eq(rp_after + step),
            rp_before.eq(rp_before + step),
            wp.eq(wp + to_tail),
            count.eq(count_next),
            self.head_valid.eq(count_next != 0),
            self.full.eq(count_next >= self._depth),
            beyond_depth.eq(count_next > self._depth),
            at_capacity.eq(count_next == self._capacity),
            read_moved.eq(from_memory),
            held.eq(Mux(bypass, self.data, head_now)),
        ]
        return m
