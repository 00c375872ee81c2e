"""The detection bounds of docs/PROTOCOL.md 5.2 and 5.3 on rtl/link/rlfd.py."""

from amaranth.asserts import AnySeq, Initial
from amaranth.hdl import Assert, Assume, Cover, Elaboratable, Module, Mux, Signal

from formal import observe
from formal.runner import Proof
from golden.encoding import Reason
from golden.params import ASK_LIMIT, TOKEN_DEADLINE_AFTER_SEND, TURNAROUND, LinkParams
from rtl.link.rlfd import Rlfd

# Small enough for the induction to close, with every rule of the detector still in play:
# margin = los_cycles = 2 and the shortest round trip training accepts.
PARAMS = LinkParams(margin=2, los_cycles=2, max_rtt=TURNAROUND + 2)


class _LateRlfd(Rlfd):
    """Seeded bug: the countdown starts one cycle too long, so a token one cycle late is taken
    and its deadline passes unsuspected."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        with m.If(self.arm | (self.rearm & self.waiting & ~self.token_received)):
            m.d.sync += self.remaining.eq(self.rtt + (self._margin + TOKEN_DEADLINE_AFTER_SEND))
        return m


class RlfdBounds(Elaboratable):
    """Proves, for every sequence of the A stage's events (all inputs free, ``rtt`` held while a
    token is awaited, as training alone changes it); 4 is TOKEN_DEADLINE_AFTER_SEND:

    * loss of signal: ``los_cycles`` consecutive missing or malformed words since the last
      clear, while UP, are a suspicion in the cycle of the last one, with that reason; no loss of
      signal is reported otherwise;
    * token deadline: a token armed in cycle d (S sent it, an ask or a word sent again moved it
      to d) and not received is a suspicion in cycle d + RTT + margin + 4 while UP; a token
      received by then is never a suspicion (the deadline is the only cause of TOKEN_OVERDUE);
    * early token: a token applied before d + RTT + 4 - margin (2 margin before the deadline)
      after S sent it, and only then, is ``early`` and a suspicion;
    * asks: with asks sent only while ``may_ask`` (and no other re-arm) an awaited token is
      suspected within (ASK_LIMIT + 1) * (RTT + margin + 4) cycles of the arm.
    """

    def __init__(self, dut, params):
        self.dut, self.params = dut, params

    def elaborate(self, platform):
        m = Module()
        dut = self.dut
        m.submodules.dut = fragment = observe.elaborate(dut, platform)
        margin, los = self.params.margin, self.params.los_cycles
        after = margin + TOKEN_DEADLINE_AFTER_SEND  # deadline = RTT + after cycles past the arm
        inputs = ("up", "wellformed", "token_received", "arm", "clear", "arm_sent", "rearm", "rearm_ask")
        ev = {name: AnySeq(1) for name in inputs + ("token_in", "present")}
        rtt = AnySeq(len(dut.rtt))
        for name, value in ev.items():
            m.d.comb += getattr(dut, name).eq(value)
        m.d.comb += [dut.rtt.eq(rtt), Assume(rtt <= self.params.rtt_limit)]

        # --- loss of signal ----------------------------------------------------------------
        bad = Signal(range(los + 1))  # consecutive missing or malformed words before this cycle
        run = Mux(ev["wellformed"], 0, Mux(bad == los, los, bad + 1))  # including this cycle's
        m.d.sync += bad.eq(Mux(ev["clear"], 0, run))
        loss = ev["up"] & (run >= los)
        m.d.comb += [
            Assert(dut.los_run == bad),
            Assert(~loss | (dut.suspect & (dut.reason == Reason.LOSS_OF_SIGNAL))),
            Assert((dut.reason == Reason.LOSS_OF_SIGNAL) == loss),
        ]

        # --- the token deadline -------------------------------------------------------------
        waiting, sent = Signal(), Signal()  # a token is due; S sent it (it has an earliest cycle)
        since_max = self.params.token_countdown + 2
        since = Signal(range(since_max + 1))  # cycles since the arm, saturated
        rtt_armed = Signal.like(dut.rtt)
        deadline = rtt_armed + after
        moved = ev["rearm"] & waiting & ~ev["token_received"] & ~ev["arm"]
        with m.If(ev["token_received"]):
            m.d.sync += waiting.eq(0)
        with m.Elif(ev["arm"]):
            m.d.sync += waiting.eq(1)
        with m.Elif(ev["clear"]):
            m.d.sync += waiting.eq(0)
        with m.If(ev["arm"] | moved):
            m.d.sync += [since.eq(1), rtt_armed.eq(rtt), sent.eq(ev["arm"] & ev["arm_sent"])]
        with m.Elif(since < since_max):
            m.d.sync += since.eq(since + 1)
        m.d.comb += Assume(~waiting | (rtt == rtt_armed))
        due_now = waiting & ~ev["token_received"] & (since == deadline)
        overdue = ev["up"] & waiting & ~ev["token_received"] & (since >= deadline)
        m.d.comb += [
            Assert(dut.waiting == waiting),
            # ``since`` saturates: no value above it (an induction invariant; the register's
            # width holds more, and counting on from one would wrap).
            Assert(since <= since_max),
            # The countdown is what is left of the wait: an invariant the induction needs.
            Assert(~waiting | (dut.remaining == Mux(since >= deadline, 0, deadline - since))),
            Assert(~(ev["up"] & due_now) | dut.suspect),
            Assert(~(dut.reason == Reason.TOKEN_OVERDUE) | overdue),
        ]

        # --- an early token -----------------------------------------------------------------
        too_soon = waiting & sent & (since + 2 * margin < deadline)
        m.d.comb += [
            # ``too_soon`` means something only while a token is due (a token can arrive with its arm).
            Assert(~waiting | (dut.too_soon == too_soon)),
            Assert(dut.early == (ev["up"] & ev["token_in"] & too_soon)),
            Assert((dut.reason == Reason.TOKEN_EARLY) == (dut.early & ~loss & ~overdue)),
            Assert(dut.suspect == (dut.reason != Reason.NONE)),
        ]

        # --- asks: at most ASK_LIMIT moves of the deadline in one wait ---------------------------
        asks = Signal(range(ASK_LIMIT + 2))
        total_max = (ASK_LIMIT + 1) * (self.params.rtt_limit + after) + 1
        total = Signal(range(total_max + 1))
        fair = Signal()  # this wait has seen asks only while allowed, and UP throughout
        asked = moved & ev["rearm_ask"] & dut.may_ask
        with m.If(ev["arm"]):
            m.d.sync += [asks.eq(0), total.eq(1), fair.eq(ev["up"] & ev["arm_sent"] & ~ev["token_received"])]
        with m.Else():
            with m.If(asked):
                m.d.sync += asks.eq(asks + 1)
            with m.If(total != total_max):
                m.d.sync += total.eq(total + 1)
            with m.If((moved & ~asked) | ~ev["up"] | ev["clear"] | ev["token_received"] | (since > deadline)):
                m.d.sync += fair.eq(0)
        bound = (ASK_LIMIT + 1) * deadline
        m.d.comb += [
            Assert(~fair | (asks <= ASK_LIMIT)),
            # The detector's own count of asks (an induction invariant).
            Assert(~fair | (observe.registers(fragment)["asks"] == asks)),
            Assert(~fair | waiting),
            Assert(~(fair & (asks == ASK_LIMIT)) | ~dut.may_ask),
            Assert(~fair | (total <= asks * deadline + since)),
            Assert(~(fair & ev["up"] & ~ev["token_received"] & (total >= bound)) | dut.suspect),
        ]
        with m.If(Initial()):
            m.d.comb += Assume(~waiting & ~fair & (bad == 0))

        # Not vacuous: each suspicion, a token received in the deadline's own cycle, an early
        # token, and a wait stretched by every ask it may make.
        m.d.comb += [
            Cover(loss),
            Cover(ev["up"] & due_now),
            Cover(ev["up"] & waiting & ev["token_received"] & (since == deadline) & ~dut.suspect),
            Cover(dut.early),
            Cover(fair & (asks == ASK_LIMIT) & (since == deadline) & ev["up"]),
        ]
        return m


def _build(mutant):
    return RlfdBounds((_LateRlfd if mutant else Rlfd)(PARAMS), PARAMS), []


def proofs():
    return [
        Proof(
            name="rlfd",
            block=f"Rlfd(margin=2, los_cycles=2, max_rtt={TURNAROUND + 2})",
            prop="loss of signal, token deadline, early token, ask limit (PROTOCOL.md 5.2, 5.3)",
            build=_build,
            mode="prove",
            depth=8,
            cover_depth=(ASK_LIMIT + 1) * (TOKEN_DEADLINE_AFTER_SEND + PARAMS.margin) + 4,
            mutant="the countdown starts one cycle too long",
        )
    ]
