"""Token conservation on rtl/link/token_plane.py (docs/PROTOCOL.md 3.2, 3.3)."""

from amaranth.asserts import AnyConst, AnySeq, Initial
from amaranth.hdl import Assert, Assume, Cover, Elaboratable, Module, Mux, Signal, signed

from formal import observe
from formal.runner import Proof
from golden import encoding as enc
from golden.encoding import Ctl, RxPhase, TxPhase
from rtl.link.token_plane import TokenPlane


class _DoubleDelivery(TokenPlane):
    """Seeded bug: a COMMIT delivers the value but leaves the transfer ACCEPTED, so a second
    COMMIT of the same sequence delivers it again."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        with m.If(self.rx_token & ~self.rx_anomaly & self.rx_kind.commit):
            m.d.sync += self.rx_phase.eq(RxPhase.ACCEPTED)
        return m


def _word_balance(code):
    """The balance a token word carries (PROTOCOL.md 3.3)."""
    plus = (code == Ctl.AIT_OFFER) | (code == Ctl.AIT_REJECT)
    minus = (code == Ctl.AIT_COMMIT) | (code == Ctl.AIT_RETRACT)
    return _signed(plus, minus)


def _signed(plus, minus):
    """+1, -1 or 0 (``plus`` and ``minus`` are never both set)."""
    return Mux(plus, 1, Mux(minus, -1, 0))


class TokenConservation(Elaboratable):
    """One end's token plane against any peer: every received word, kind, sequence and value is
    free (AnySeq), so malformed answers, decisions on nothing, repeats and reordered words all
    occur; the peer's half-state at entangling is free too. The endpoint's contract is assumed:
    S sends only while the end holds the token, A applies a token word only while it does not
    (a follower may entangle on the leader's plain token), hand-ins only while ``ait_ready``,
    ``c_seq`` is the sequence of the next cycle's word. Proves, at every cycle of a session:

    * balance: the end's balance plus that of the reply it owes equals the balance of the token
      words it applied minus that of those it sent since it entangled (PROTOCOL.md 3.3 seen from
      one end: added over both ends and the channel this is the invariant);
    * one token: the end holds the token exactly when the rule says (entangled as leader, or
      applied a token word, and has not sent since), so it never sends two token words without
      applying one in between: at most one token in flight per direction;
    * a value handed in is, exactly once, either given back to the user or committed to the
      peer (never both, never lost while held), and every offer of it carries it;
    * a value accepted from the peer is delivered to the user at most once, as accepted.
    """

    def __init__(self, dut):
        self.dut = dut

    def elaborate(self, platform):
        m = Module()
        dut = self.dut
        m.submodules.dut = fragment = observe.elaborate(dut, platform)
        own = observe.registers(fragment)

        free = {name: AnySeq(len(getattr(dut, name))) for name in (
            "peer_half", "entangle", "restart", "rx_token", "rx_seq", "rx_value", "c_seq",
            "withdraw", "ait_in_valid", "ait_in_value", "ait_out_taken", "send",
        )}  # fmt: skip
        kind = AnySeq(len(dut.rx_kind.as_value()))
        leader = AnyConst(1)
        for name, value in free.items():
            m.d.comb += getattr(dut, name).eq(value)
        m.d.comb += [dut.rx_kind.eq(kind), dut.leader.eq(leader)]

        # --- the endpoint's contract ------------------------------------------------------------
        session = Signal()  # entangled and not restarted since
        m.d.comb += [
            Assume((kind & (kind - 1)) == 0),  # one code per word
            Assume(~free["entangle"] | (~session & ~free["restart"])),
            Assume(~free["send"] | (dut.due & session & ~free["restart"] & ~free["entangle"])),
            Assume(~free["rx_token"] | (~dut.due & ~free["restart"])),
            # Outside a session the only token word applied is the leader's plain token that a
            # follower entangles on.
            Assume(~free["rx_token"] | session | (free["entangle"] & ~leader & (kind == 0))),
            Assume(~free["ait_in_valid"] | dut.ait_ready),
            Assume(~free["ait_out_taken"] | dut.ait_out_valid),
        ]
        c_seq_q = Signal.like(dut.c_seq)
        m.d.sync += c_seq_q.eq(free["c_seq"])
        m.d.comb += Assume(free["rx_seq"] == c_seq_q)
        with m.If(free["entangle"]):
            m.d.sync += session.eq(1)
        with m.If(free["restart"]):
            m.d.sync += session.eq(0)

        # --- balance ------------------------------------------------------------------------------
        taken = free["rx_token"] & ~dut.rx_anomaly
        rx_balance = _signed(dut.rx_kind.offer | dut.rx_kind.reject, dut.rx_kind.commit | dut.rx_kind.retract)
        ledger = Signal(signed(4))
        flow = Mux(taken, rx_balance, 0) - Mux(free["send"], _word_balance(dut.s_code), 0)
        with m.If(free["entangle"]):
            m.d.sync += ledger.eq(Mux(taken, rx_balance, 0))
        with m.Else():
            m.d.sync += ledger.eq(ledger + flow)
        # The reply the end owes is in ``s_code`` while it holds the token.
        owed = Mux(own["reply"], _word_balance(dut.s_code), 0)
        with m.If(session):
            m.d.comb += [Assert(dut.balance + owed == ledger), Assert(~own["reply"] | dut.due)]

        # --- one token -----------------------------------------------------------------------------
        holds = Signal()
        with m.If(free["entangle"]):
            m.d.sync += holds.eq(leader | taken)
        with m.Elif(taken):
            m.d.sync += holds.eq(1)
        with m.Elif(free["send"] | free["restart"]):
            m.d.sync += holds.eq(0)
        with m.If(session):
            m.d.comb += Assert(dut.due == holds)
        # The offer that S would send names the transfer S offers (sequence as per 3.4).
        m.d.comb += Assert(~dut.s_offer | (dut.s_code == Ctl.AIT_OFFER))

        # --- a value handed in: given back or committed, exactly once -----------------------------------
        mine = AnyConst(enc.AIT_VALUE_BITS)
        pick = AnySeq(1)
        held = Signal()  # the picked value is the end's
        was_committed = Signal()
        committed_now = (dut.tx_phase == TxPhase.COMMITTED) & ~was_committed
        m.d.sync += was_committed.eq(dut.tx_phase == TxPhase.COMMITTED)
        gone = Signal()  # it was given back or committed once
        handed = ~held & ~gone & pick & free["ait_in_valid"] & (free["ait_in_value"] == mine)
        # A withdrawal in the cycle of the hand-in gives it back at once; a value committed (seen
        # in the phase a cycle after) is no longer the end's, and the next hand-in may come.
        holding = (held & ~committed_now) | handed
        with m.If(handed):
            m.d.sync += held.eq(1)
        with m.If(held & ~committed_now):
            m.d.comb += [
                Assert(~dut.ait_ready),
                Assert(own["tx_value"] == mine),  # an induction invariant: the register holds it
                Assert(~dut.s_offer | (dut.s_value == mine)),
            ]
        with m.If(holding & dut.returned):
            m.d.comb += Assert(dut.returned_value == mine)
            m.d.sync += [held.eq(0), gone.eq(1)]
        # A commit shows in the phase a cycle later: the value must not also have been given back.
        after_give = Signal()
        m.d.sync += after_give.eq(holding & dut.returned)
        with m.If(committed_now & (held | after_give)):
            m.d.comb += Assert(~after_give)
            m.d.sync += [held.eq(0), gone.eq(1)]
        with m.If(held & committed_now):
            m.d.comb += Assert(dut.ait_ready)

        # --- a value accepted: delivered at most once ----------------------------------------------
        was_valid = Signal()
        m.d.sync += was_valid.eq(dut.ait_out_valid)
        rose = dut.ait_out_valid & ~was_valid
        accepted = dut.rx_phase == RxPhase.ACCEPTED
        was_accepted = Signal()
        m.d.sync += was_accepted.eq(accepted)
        accepted_value = Signal(enc.AIT_VALUE_BITS)
        with m.If(accepted):
            m.d.sync += accepted_value.eq(own["rx_value"])
        with m.If(rose):
            # Delivered: it was accepted in the cycle before and is no longer.
            m.d.comb += [
                Assert(was_accepted),
                Assert(dut.rx_phase == RxPhase.DELIVERED),
                Assert(dut.ait_out_value == accepted_value),
            ]

        with m.If(Initial()):
            m.d.comb += Assume(~session & ~held & ~gone & ~holds & (ledger == 0) & ~was_valid & ~was_committed)

        # Not vacuous: a transfer committed, one retracted, one delivered, a reply owed while an
        # offer is out, and a rejected offer handed back by a later withdrawal.
        m.d.comb += [
            Cover(session & held & committed_now),
            Cover(session & held & dut.returned & (dut.tx_phase == TxPhase.OFFERED)),
            Cover(session & rose),
            Cover(session & (dut.balance == -1) & own["reply"]),
            Cover(session & (ledger == 1) & taken & dut.rx_kind.commit),
        ]
        return m


def _build(mutant):
    return TokenConservation(_DoubleDelivery() if mutant else TokenPlane()), []


def proofs():
    return [
        Proof(
            name="token_plane",
            block="TokenPlane",
            prop="balance ledger, one token per direction, exactly-once give-back/commit/delivery",
            build=_build,
            mode="prove",
            depth=6,
            cover_depth=12,
            mutant="a COMMIT leaves the transfer ACCEPTED (a second COMMIT delivers again)",
        )
    ]
