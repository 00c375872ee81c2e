"""The forward queue on rtl/fabric/forward.py: its occupancy, and a read-ahead whose head never
depends on a read that meets a write (docs/PROTOCOL.md 10.11)."""

from amaranth.asserts import AnySeq, Initial
from amaranth.hdl import Assert, Assume, Cover, Elaboratable, Module, Mux, Signal

from formal import observe
from formal.runner import Proof
from rtl.fabric.forward import ForwardQueue

WIDTH = 4
# (depth, room): four memory entries that a frame taken out fills to the brim, and two, where the
# slot before the head is the slot after it.
SIZES = ((3, 1), (2, 0))


class _LateBypass(ForwardQueue):
    """Seeded bug: a frame relayed into a queue of one frame whose head leaves in the same clock
    is not passed straight to the head, which is then read from the slot written in that clock."""

    def _straight_to_head(self, to_head, to_tail, leaves):
        return to_head | (to_tail & (self.count == 0))


class ForwardReadAhead(Elaboratable):
    """Proves, for every sequence of relayed frames, frames taken out (pushed at the head), takes by
    a port and paths lost and found, every input free:

    A port takes only a valid head, and only while the destination has a path.

    * ``count``, ``head_valid``, ``full``, ``dropped`` and ``overflow`` follow a model occupancy
      with golden ``ForwardQueue.push``'s rules: a relayed frame for a queue full after the
      clock's take drops the oldest when the destination has no path and is a fault otherwise; a
      frame taken out goes in beyond ``depth`` up to ``depth + room``, or drops itself with no
      path (with room, a frame taken out fills the queue beyond its depth); the pointers and the
      registered comparisons agree with the count;
    * the memory read whose data becomes the head at the next clock (the head leaves, and no
      pushed frame passes straight to the head) is never at the address written in the same
      clock: the head is the same whatever the read port gives when it meets a write
      (transparent, the old entry, or undefined as an ECP5 block RAM's), and a frame relayed
      into a queue of one whose head leaves reaches the head by the bypass. The queue's memory
      carries ``no_rw_check`` on the strength of this.
    """

    def __init__(self, dut):
        self.dut = dut

    def elaborate(self, platform):
        m = Module()
        dut = self.dut
        m.submodules.dut = fragment = observe.elaborate(dut, platform)
        regs = observe.registers(fragment)
        depth, capacity = dut._depth, dut._capacity
        room = capacity - depth

        push, front, pop, no_path = AnySeq(1), AnySeq(1), AnySeq(1), AnySeq(1)
        m.d.comb += [
            dut.push.eq(push),
            dut.front.eq(front),
            dut.pop.eq(pop),
            dut.no_path.eq(no_path),
            dut.data.eq(AnySeq(WIDTH)),
        ]

        # The model: how many frames the queue holds.
        level = Signal(range(capacity + 1))
        # A port takes only a valid head, and only by the destination's path (the node's
        # ``no_path`` and the ports' hops are the same register).
        m.d.comb += [Assume(~pop | (level != 0)), Assume(~(pop & no_path))]
        after_take = Signal(range(capacity + 1))
        m.d.comb += after_take.eq(level - pop)
        full = after_take >= depth
        relayed, taken_out = push & ~front, push & front
        drop_oldest = relayed & full & no_path
        drop_self = taken_out & full & no_path
        fault = push & ~no_path & Mux(front, after_take == capacity, full)
        to_tail = relayed & ~fault
        to_head = taken_out & ~drop_self & ~fault
        m.d.sync += level.eq(after_take + to_tail + to_head - drop_oldest)
        m.d.comb += [
            Assert(level <= capacity),
            Assert(dut.count == level),
            Assert(dut.head_valid == (level != 0)),
            Assert(dut.full == (level >= depth)),
            Assert(dut.dropped == (drop_oldest | drop_self)),
            Assert(dut.overflow == fault),
        ]

        # The pointers and the registered comparisons beside the count, for the induction.
        rp = regs["rp"]
        bits = len(rp)
        m.d.comb += [
            Assert(regs["rp_after"] == (rp + 1)[:bits]),
            Assert(regs["rp_before"] == (rp - 1)[:bits]),
            Assert((regs["wp"] - rp)[:bits] == level[:bits]),
            Assert(regs["beyond_depth"] == (level > depth)),
            Assert(regs["at_capacity"] == (level == capacity)),
        ]

        # The read the head takes at the next clock (``read_moved`` then) is never at the address
        # written in this one.
        from_memory = regs["from_memory"]
        written_at_read = regs["wr__en"] & (regs["wr__addr"] == regs["rd__addr"])
        m.d.comb += Assert(~(from_memory & written_at_read))

        with m.If(Initial()):
            m.d.comb += Assume(level == 0)

        # Not vacuous: the head read from the memory while a relayed frame goes to the tail, a
        # frame relayed into a queue of one whose head leaves (it passes straight to the head), a
        # frame taken out beyond the depth, and a full queue with no path dropping its oldest.
        m.d.comb += [
            Cover(from_memory & to_tail),
            Cover(to_tail & (level == 1) & pop),
            Cover(to_head & (after_take == (depth if room else depth - 1))),
            Cover(drop_oldest),
        ]
        return m


def _build(depth, room):
    def build(mutant):
        cls = _LateBypass if mutant else ForwardQueue
        return ForwardReadAhead(cls(depth=depth, room=room, width=WIDTH)), []

    return build


def proofs():
    return [
        Proof(
            name=f"forward_d{depth}_r{room}",
            block=f"ForwardQueue(depth={depth}, room={room}, width={WIDTH})",
            prop="occupancy as golden ForwardQueue; the head's memory read never meets a write",
            build=_build(depth, room),
            mode="prove",
            depth=4,
            cover_depth=2 * (depth + room) + 4,
            mutant="a frame relayed into a queue of one whose head leaves is not passed to the head",
        )
        for depth, room in SIZES
    ]
