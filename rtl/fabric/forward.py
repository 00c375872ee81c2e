"""What a node forwards to one destination in one port class, in hardware (PROTOCOL.md 10.11):
a forward queue and its ACK slot; twin of golden/fabric/forward.py."""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for, ceil_log2

from golden import encoding as enc
from golden.encoding import NodeKind
from golden.params import check_int
from rtl.fabric.message import node_header
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
        # ``no_rw_check``: the head never takes a read that met a write (below), so yosys need
        # not guard the block RAM's read against the write port.
        m.submodules.mem = mem = Memory(shape=self._width, depth=self._size, init=[], attrs={"no_rw_check": 1})
        wr = mem.write_port()
        rd = mem.read_port(domain="sync")
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
        bypass = self._straight_to_head(to_head, to_tail, leaves)
        # Else the head leaving makes the entry after it the head: read from the memory at
        # ``rp_after`` in this clock, which no write of this clock touches (the tail is there
        # only when the head is the last entry, and then the pushed frame bypasses; formal/
        # forward.py proves it). With no entry after it the queue is empty, and its next head
        # comes by the bypass. The head therefore does not depend on what the read port gives
        # when it meets a write, and the memory says so to yosys: an ECP5 block RAM's read is
        # undefined when it meets the other port's write, and without ``no_rw_check`` yosys
        # guards the port with a register as wide as the frame and a multiplexer (a queue of
        # node3 synthesized alone: 1,596 LUT4 and 557 flip-flops, against 2,136 and 1,070 with
        # a transparent port and 2,123 and 1,591 with one that is not, unmarked).
        from_memory = Signal(name="from_memory")
        m.d.comb += from_memory.eq(leaves & ~bypass)
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

    def _straight_to_head(self, to_head, to_tail, leaves):
        """The pushed frame is the next head: at the head, or into a queue empty after the
        clock's take (or drop)."""
        count = self.count
        return to_head | (to_tail & ((count == 0) | ((count == 1) & leaves)))


class Forwards(wiring.Component):
    """What node ``node_id`` forwards to node ``dest`` in one port class: a :class:`ForwardQueue`
    (``depth``, ``room``) and the ACK slot of the node's stream from ``dest`` in class
    ``stream_cls`` of kind ``kind`` (USER, or CONTROL with class 0), which holds the sequence its newest ACK
    carries: the ACK frame is built from it and the parameters when a port takes it.

    Ports (in): ``push``, ``front``, ``no_path``, ``data`` (the queue's, as in
    :class:`ForwardQueue`); ``ack``, ``ack_expected`` (golden :meth:`ack`: the stream's ACK waits
    in the slot, replacing one); ``take`` (golden :meth:`take`: a port takes ``frame``; only while
    ``waiting``). Out: ``waiting`` (from registers), ``frame`` (what a take gets: the slot's ACK
    and the queue's head in turn while both wait), ``count``, ``full``, ``dropped``,
    ``overflow`` (the queue's), ``replaced`` (combinational: this clock's ``ack`` replaces one
    still in the slot after the clock's take).

    Latency: an ACK written is in the slot from the next clock; a take and an ACK in one clock
    leave the new ACK waiting. Failure behaviour: the queue's ``overflow``; ValueError at
    construction for bad parameters.
    """

    def __init__(self, *, node_id: int, dest: int, stream_cls: int, kind: NodeKind, depth: int, room: int):
        self._node_id = check_int("node_id", node_id, 0, enc.MAX_NODES - 1)
        self._dest = check_int("dest", dest, 0, enc.MAX_NODES - 1)
        if dest == node_id:
            raise ValueError(f"dest must be another node than node_id ({node_id})")
        self._cls = check_int("stream_cls", stream_cls, 0, enc.MAX_CLASSES - 1)
        if kind not in (NodeKind.USER, NodeKind.CONTROL) or (kind == NodeKind.CONTROL and stream_cls):
            raise ValueError(
                f"an ACK slot is for a user stream or a control stream of class 0, not {kind!r} {stream_cls}"
            )
        self._kind = kind
        self._queue = ForwardQueue(depth=depth, room=room)
        super().__init__(
            {
                "push": In(1),
                "front": In(1),
                "no_path": In(1),
                "data": In(FRAME_BITS),
                "ack": In(1),
                "ack_expected": In(enc.E2E_SEQ_BITS),
                "take": In(1),
                "waiting": Out(1),
                "frame": Out(FRAME_BITS),
                "count": Out(len(self._queue.count)),
                "full": Out(1),
                "dropped": Out(1),
                "overflow": Out(1),
                "replaced": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        m.submodules.queue = q = self._queue
        slot_valid, slot_last = Signal(name="slot_valid"), Signal(name="slot_last")
        slot_seq = Signal(enc.E2E_SEQ_BITS, name="slot_seq")
        header = node_header(kind=NodeKind.ACK, origin=self._node_id, dest=self._dest, cls=self._cls, seq=slot_seq)
        body = Const(enc.ACK_BODY.pack(stream=int(self._kind)), enc.SLICE_BITS)
        ack_frame = Cat(header, body, Const(0, FRAME_BITS - 2 * enc.SLICE_BITS))
        # The slot's turn: it waits, and the queue's head did not wait when the slot last went.
        slot_turn = slot_valid & ~(slot_last & q.head_valid)
        m.d.comb += [
            q.push.eq(self.push),
            q.front.eq(self.front),
            q.no_path.eq(self.no_path),
            q.data.eq(self.data),
            q.pop.eq(self.take & ~slot_turn),
            self.waiting.eq(slot_valid | q.head_valid),
            self.frame.eq(Mux(slot_turn, ack_frame, q.head)),
            self.count.eq(q.count),
            self.full.eq(q.full),
            self.dropped.eq(q.dropped),
            self.overflow.eq(q.overflow),
            # Judged after the clock's take, which comes first (10.11).
            self.replaced.eq(self.ack & slot_valid & ~(self.take & slot_turn)),
        ]
        with m.If(self.take):
            m.d.sync += slot_last.eq(slot_turn)
        with m.If(self.ack):
            m.d.sync += [slot_valid.eq(1), slot_seq.eq(self.ack_expected)]
        with m.Elif(self.take & slot_turn):
            m.d.sync += slot_valid.eq(0)
        return m
