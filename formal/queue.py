"""The queue contract of rtl/common/queue.py, for the plain and the look-ahead build."""

from amaranth.asserts import AnyConst, AnySeq, Initial
from amaranth.hdl import Assert, Assume, Cover, Elaboratable, Module, Signal

from formal import observe
from formal.runner import Proof
from rtl.common.queue import Queue

WIDTH, DEPTH = 4, 4
# The owner pops a valid head within this many cycles (see QueueContract).
POP_WITHIN = 2


class _DroppingQueue(Queue):
    """Seeded bug: a push that meets a pop while the queue holds two entries is counted
    but never stored, so the entry is lost."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        with m.If(self.push & self.pop & (self.count == 2)):
            m.d.comb += m.submodules.rest.push.eq(0)
        return m


class _Tracked:
    """One entry the solver picked: ``held`` while in the queue, ``ahead`` the entries in front of
    it, ``out`` once it has been popped."""

    def __init__(self, name, width, depth):
        self.value = AnyConst(width)
        self.held = Signal(name=f"{name}_held")
        self.out = Signal(name=f"{name}_out")
        self.ahead = Signal(range(depth + 1), name=f"{name}_ahead")


class QueueContract(Elaboratable):
    """Proves, for every sequence of pushes, pops and clears (pops only of a valid head):

    * ``count``, ``head_valid`` and ``overflow`` follow a model occupancy: nothing is invented
      and nothing is lost;
    * two arbitrary entries A then B (values chosen with AnyConst, write cycles chosen by the
      solver) come out exactly once, at the pop the model predicts, A before B, unless a clear
      discards them; with ``lookahead``, ``successor`` shows the entry behind the head.

    ``pop_within``: the owner pops a valid head within that many cycles. The queue has no timer,
    but its memory is invisible to the properties: without a bound on the wait an induction
    could start from a memory holding anything and idle for any number of steps first. With
    ``None`` the environment may wait for ever (then only a bounded proof is possible).
    """

    def __init__(self, dut, *, pop_within=POP_WITHIN):
        self.dut, self.pop_within = dut, pop_within

    @staticmethod
    def _internal_invariants(m, fragment, level, depth, lookahead):
        """How the memory queue's pointers and counts, and the full flag, follow the occupancy. A push met by a pop
        every cycle keeps ``count`` and the head as they are, so without these an induction can
        start from pointers that disagree with ``count`` and never see it."""
        rest = observe.registers(fragment, "rest")
        behind, behind_nz, rp, wp = rest["behind"], rest["behind_nz"], rest["rp"], rest["wp"]
        # Entries not in the memory: the memory queue's head register, and the look-ahead head.
        held_outside = rest["head_valid"]
        if lookahead:
            head_valid = observe.registers(fragment)["head_valid"]
            held_outside = rest["head_valid"] + head_valid
            m.d.comb += Assert(~rest["head_valid"] | head_valid)
        m.d.comb += [
            Assert(observe.registers(fragment)["full"] == (level == depth)),
            Assert(behind + held_outside == level),
            Assert(~behind_nz | rest["head_valid"]),
            Assert(behind_nz == (behind != 0)),
            Assert((wp - rp)[: len(rp)] == behind[: len(rp)]),
            Assert(rest["rp_after"] == (rp + 1)[: len(rp)]),
        ]

    def elaborate(self, platform):
        m = Module()
        dut = self.dut
        m.submodules.dut = fragment = observe.elaborate(dut, platform)
        depth, width = dut.depth, len(dut.data)
        lookahead = hasattr(dut, "successor")

        push, pop, clear, data = AnySeq(1), AnySeq(1), AnySeq(1), AnySeq(width)
        m.d.comb += [dut.push.eq(push), dut.pop.eq(pop), dut.clear.eq(clear), dut.data.eq(data)]

        # The model: only how many entries the queue holds.
        level = Signal(range(depth + 1))
        dropped = push & ~pop & (level == depth)
        accepted = push & ~dropped & ~clear
        m.d.comb += Assume(~pop | (level != 0))  # the owner pops only a valid head
        with m.If(clear):
            m.d.sync += level.eq(0)
        with m.Else():
            m.d.sync += level.eq(level + (push & ~dropped) - pop)
        m.d.comb += [
            Assert(level <= depth),
            Assert(dut.count == level),
            Assert(dut.head_valid == (level != 0)),
            Assert(dut.overflow == dropped),
        ]
        self._internal_invariants(m, fragment, level, depth, lookahead)

        if self.pop_within is not None:
            waited = Signal(range(self.pop_within + 1))
            m.d.sync += waited.eq(((level != 0) & ~pop & ~clear) * (waited + 1))
            m.d.comb += Assume(~(level != 0) | pop | clear | (waited < self.pop_within - 1))

        a, b = _Tracked("a", width, depth), _Tracked("b", width, depth)
        pick_a, pick_b = AnySeq(1), AnySeq(1)
        # A is any accepted entry whose value is a's; B any accepted after A was written.
        picked_a = a.held | a.out
        take_a = pick_a & ~picked_a & accepted & (data == a.value)
        take_b = pick_b & picked_a & ~(b.held | b.out) & accepted & (data == b.value)
        for entry, take in ((a, take_a), (b, take_b)):
            with m.If(clear):
                m.d.sync += entry.held.eq(0)  # discarded with the rest; no longer followed
            with m.Elif(take):
                m.d.sync += [entry.held.eq(1), entry.ahead.eq(level - pop)]
            with m.Elif(entry.held & pop):
                with m.If(entry.ahead == 0):
                    m.d.sync += [entry.held.eq(0), entry.out.eq(1)]
                with m.Else():
                    m.d.sync += entry.ahead.eq(entry.ahead - 1)
            with m.If(entry.held):
                # It is in the queue, at the place the model says; at the head, it is the head.
                m.d.comb += Assert(entry.ahead < level)
                with m.If(entry.ahead == 0):
                    m.d.comb += Assert(dut.head == entry.value)
                if lookahead:
                    with m.If(entry.ahead == 1):
                        m.d.comb += Assert(dut.successor == entry.value)
            m.d.comb += Assert(~(entry.held & entry.out))
        # In order: B stays behind A while both are held, and never leaves first.
        with m.If(a.held & b.held):
            m.d.comb += Assert(b.ahead > a.ahead)
        m.d.comb += [Assert(~b.out | a.out), Assert(~b.held | a.held | a.out)]
        # A clear may leave a stale ``out``; the harness's own registers start clean.
        with m.If(Initial()):
            m.d.comb += Assume((level == 0) & ~a.held & ~a.out & ~b.held & ~b.out)

        # Not vacuous: a full queue that drops a push, both entries out in order, and (with the
        # look-ahead) an entry seen as the successor before it is the head.
        m.d.comb += [Cover(dropped), Cover(b.out & ~clear)]
        m.d.comb += Cover(a.held & b.held & (b.ahead == depth - 1))
        if lookahead:
            m.d.comb += Cover(a.held & (a.ahead == 1) & pop)
        return m


def _build(lookahead, pop_within):
    def build(mutant):
        cls = _DroppingQueue if mutant else Queue
        return QueueContract(cls(width=WIDTH, depth=DEPTH, lookahead=lookahead), pop_within=pop_within), []

    return build


def proofs():
    out = []
    for lookahead, tag in ((False, "plain"), (True, "lookahead")):
        block = f"Queue(lookahead={lookahead})"
        out.append(
            Proof(
                name=f"queue_{tag}",
                block=block,
                prop=f"queue contract: count/valid/overflow, entries once and in order (pop within {POP_WITHIN})",
                build=_build(lookahead, POP_WITHIN),
                mode="prove",
                depth=2 * DEPTH + 6,
                cover_depth=2 * DEPTH + 6,
                mutant="a push meeting a pop at two entries is counted but not stored",
            )
        )
        out.append(
            Proof(
                name=f"queue_{tag}_any_wait",
                block=block,
                prop="queue contract with no bound on the wait before a pop",
                build=_build(lookahead, None),
                mode="bmc",
                depth=24,
                fast=False,
                cover_depth=2 * DEPTH + 6,
                mutant="a push meeting a pop at two entries is counted but not stored",
                bounded="the memory is hidden and the owner may wait for ever: no k-induction closes",
            )
        )
    return out
