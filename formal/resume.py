"""The resume path (docs/PROTOCOL.md 2.3, 3.5): what a suspicion leaves of the link's state.

A suspicion restarts the end; the round that follows (a resume round, or one in full) ends when
the end entangles again, and reconciliation then starts the new session from the two ends'
half-states. The framer and the token plane do not know which kind of round it was: what
resuming keeps is what they keep from the restart to the entangle. These proofs show, on the
two blocks that hold that state, that it is all kept, and what entangling then makes of it.
"""

from amaranth.asserts import AnyConst, AnySeq, Initial
from amaranth.hdl import Assert, Assume, Cat, Cover, Elaboratable, Module, Mux, Signal

from formal import observe
from formal.framer import PARAMS, FramerDelivery, _dist
from formal.runner import Proof
from golden import encoding as enc
from golden.encoding import RxPhase, TxPhase
from rtl.link.framer import Framer
from rtl.link.token_plane import TokenPlane


class _RestartForgets(Framer):
    """Seeded bug: a restart forgets the frames pending (``rx_count`` back to ``delivered``), so
    the resumed link numbers again frames the peer has already sent."""

    def _rx_commit(self, m, n):
        super()._rx_commit(m, n)
        with m.If(self.restart):
            for c in range(self._C):
                m.d.sync += [n.rx_count[c].eq(n.delivered[c]), n.pending_frames[c].eq(0)]


class _RestartDropsOffer(TokenPlane):
    """Seeded bug: a restart forgets the transfer in flight (an offer goes back to NONE), so a
    value the peer may have accepted is neither committed nor retracted by reconciliation."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        with m.If(self.restart):
            m.d.sync += self.tx_phase.eq(TxPhase.NONE)
        return m


class FramerResume(FramerDelivery):
    """The framer's environment and pointer invariants of :class:`formal.framer.FramerDelivery`,
    plus the training of a round: the peer's READY body is stored at least two cycles before
    the end entangles, and every READY of the round carries the same body (the peer's
    half-state is frozen too). Proves, for every class, from a restart of an UP end (a
    suspicion, or an anomaly) to the cycle it entangles again:

    * the next frame expected (``rx_count``), the frames delivered (``delivered``) and the
      confirmed counts the end offers in READY (``counts``) are those of the cycle of the
      restart, the state before the suspicion;
    * in the cycle after entangling, ``delivered`` and ``rx_count`` are both the reconciled
      count: the peer's confirmed count when it lies within the frames pending, all of them
      otherwise (PROTOCOL.md 3.5), so the resumed session expects the frame the peer resumes
      sending from.
    """

    def properties(self, m, e):
        dut, own, N, C, K = e.dut, e.own, e.N, e.C, e.K
        up, restart, entangle, peer_half, peer_store = e.up, e.restart, e.entangle, e.peer_half, e.peer_store

        # --- the round's peer half ------------------------------------------------------------
        stored = Signal(range(3))  # cycles since the first READY of the round was stored
        with m.If(restart):
            m.d.sync += stored.eq(0)
        with m.Elif(peer_store & (stored == 0)):
            m.d.sync += stored.eq(1)
        with m.Elif((stored != 0) & (stored != 2)):
            m.d.sync += stored.eq(stored + 1)
        m.d.comb += [
            Assume(~(peer_store & (stored != 0)) | (dut.rx_body == peer_half)),
            Assume(~entangle | (stored == 2)),
        ]

        # --- frozen from the restart to the entangle ---------------------------------------------
        suspended = Signal()  # after the restart of an UP end, up to and with the entangle
        resumed = Signal()  # the cycle after that entangle
        with m.If(restart & up):
            m.d.sync += suspended.eq(1)
        with m.Elif(entangle):
            m.d.sync += suspended.eq(0)
        m.d.sync += resumed.eq(suspended & entangle)
        # The round's own registers (induction invariants): a suspended end is not UP.
        m.d.comb += [Assert(stored != 3), Assert(~suspended | ~up), Assert(~resumed | up)]
        peer = enc.READY_BODY.lsb("counts")
        delivers, forgets = [], []
        for c in range(C):
            d, r = own[f"delivered{c}"], own[f"rx_count{c}"]
            lsb, width = enc.class_count_field(c, C)
            confirmed = dut.counts[lsb : lsb + width]
            snap = {k: Signal(len(v), name=f"snap_{k}{c}") for k, v in (("d", d), ("r", r), ("counts", confirmed))}
            with m.If(restart & up):
                m.d.sync += [snap["d"].eq(d), snap["r"].eq(r), snap["counts"].eq(confirmed)]
            with m.If(suspended):
                m.d.comb += [Assert(d == snap["d"]), Assert(r == snap["r"]), Assert(confirmed == snap["counts"])]
            # Reconciliation: the peer's confirmed count for the class, when within the pending frames.
            peer_count = peer_half[peer + lsb :][:width]
            owed = (peer_count - snap["d"][:K])[:K]
            pending = _dist(snap["d"], snap["r"], N)
            expected = Signal(N, name=f"reconciled{c}")
            with m.If(entangle):
                m.d.sync += expected.eq(Mux(owed > pending, snap["r"], (snap["d"] + owed)[:N]))
            with m.If(resumed):
                m.d.comb += [Assert(d == expected), Assert(r == expected)]
            delivers.append(resumed & (d != snap["d"]))
            forgets.append(resumed & (snap["r"] != d))
        with m.If(Initial()):
            m.d.comb += Assume(~suspended & ~resumed & (stored == 0))

        # Not vacuous: a resume that delivers a frame pending before the suspicion, and one that
        # forgets a frame the peer had not confirmed (it sends it again).
        m.d.comb += [Cover(Cat(*delivers).any()), Cover(Cat(*forgets).any())]


class TokenResume(Elaboratable):
    """One end's token plane in the environment of :class:`formal.token_plane.TokenConservation`
    (every received word free within the endpoint's contract; outside a session no token word
    is applied but the follower's entangling plain token, and S sends none). Proves, from a
    restart in a session (a suspicion, or an anomaly) to the cycle the end entangles again:

    * the half-state that reconciliation reads (the phase and sequence of the transfer offered
      and of the one accepted) and the balance are those of the cycle of the restart, the state
      before the suspicion; a value handed in stays the end's (it is given back only on a
      withdrawal);
    * in the cycle after entangling the balance is 0 (a transfer in flight is settled by
      reconciliation, PROTOCOL.md 3.5), and the end holds the token exactly when it is the
      leader or entangled on the leader's token: the token is neither lost nor doubled by a
      suspicion.
    """

    def __init__(self, dut):
        self.dut = dut

    def elaborate(self, platform):
        m = Module()
        dut = self.dut
        m.submodules.dut = observe.elaborate(dut, platform)
        free = {name: AnySeq(len(getattr(dut, name))) for name in (
            "peer_half", "entangle", "restart", "rx_token", "rx_seq", "rx_value", "c_seq",
            "withdraw", "ait_in_valid", "ait_in_value", "ait_out_taken", "send",
        )}  # fmt: skip
        kind = AnySeq(len(dut.rx_kind.as_value()))
        leader = AnyConst(1)
        for name, value in free.items():
            m.d.comb += getattr(dut, name).eq(value)
        m.d.comb += [dut.rx_kind.eq(kind), dut.leader.eq(leader)]

        session = Signal()  # entangled and not restarted since
        m.d.comb += [
            Assume((kind & (kind - 1)) == 0),
            Assume(~free["entangle"] | (~session & ~free["restart"])),
            Assume(~free["send"] | (dut.due & session & ~free["restart"] & ~free["entangle"])),
            Assume(~free["rx_token"] | (~dut.due & ~free["restart"])),
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

        suspended, resumed = Signal(), Signal()
        snap_half, snap_balance = Signal.like(dut.half_state), Signal.like(dut.balance)
        suspicion = free["restart"] & session
        with m.If(suspicion):
            m.d.sync += [suspended.eq(1), snap_half.eq(dut.half_state), snap_balance.eq(dut.balance)]
        with m.Elif(free["entangle"]):
            m.d.sync += suspended.eq(0)
        m.d.sync += resumed.eq(suspended & free["entangle"])
        entangled_on_token = Signal()
        m.d.sync += entangled_on_token.eq(free["rx_token"] & free["entangle"])
        with m.If(suspended):
            m.d.comb += [Assert(dut.half_state == snap_half), Assert(dut.balance == snap_balance), Assert(~session)]
        # A value offered is the end's until the transfer ends (an induction invariant too).
        m.d.comb += [Assert(~(dut.tx_phase == TxPhase.OFFERED) | ~dut.ait_ready), Assert(~resumed | session)]
        with m.If(resumed):
            m.d.comb += [
                Assert(dut.balance == 0),
                Assert(dut.tx_phase != TxPhase.OFFERED),
                Assert(dut.rx_phase != RxPhase.ACCEPTED),
                Assert(dut.due == (leader | entangled_on_token)),
            ]
        with m.If(Initial()):
            m.d.comb += Assume(~session & ~suspended & ~resumed)

        # Not vacuous: a suspicion while an offer is out, resumed with the offer committed; and
        # one while a value accepted waits, resumed with it delivered.
        m.d.comb += [
            Cover(resumed & (snap_balance == -1) & (dut.tx_phase == TxPhase.COMMITTED)),
            Cover(resumed & (snap_balance == 1) & (dut.rx_phase == RxPhase.DELIVERED)),
        ]
        return m


def _build_framer(mutant):
    return FramerResume((_RestartForgets if mutant else Framer)(PARAMS), PARAMS), []


def _build_token(mutant):
    return TokenResume(_RestartDropsOffer() if mutant else TokenPlane()), []


def proofs():
    return [
        Proof(
            name="resume_framer",
            block="Framer (default build)",
            prop="restart to entangle: next expected, delivered, confirmed kept; reconciled after",
            build=_build_framer,
            mode="prove",
            depth=4,
            cover_depth=20,
            mutant="a restart forgets the pending frames (rx_count back to delivered)",
            mutant_depth=16,
            fast=False,
            flatten=True,
        ),
        Proof(
            name="resume_token_plane",
            block="TokenPlane",
            prop="restart to entangle: half-state and balance kept; balance 0 and one token after",
            build=_build_token,
            mode="prove",
            depth=5,
            cover_depth=12,
            mutant="a restart forgets the offer in flight (tx_phase back to NONE)",
        ),
    ]
