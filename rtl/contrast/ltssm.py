"""The contrast link's LTSSM in hardware: twin of golden/contrast/ltssm.py (docs/CONTRAST.md 3).

One cycle does what the golden end does in one ``step``, in the same order: the physical layer's
word went on the wire (``sent``), the arriving word is taken (``rx_*``, or ``skp``/``pad``), the
data link layer may direct Recovery (``dll_recovery_rx``), the state timer and the
electrical-idle inference advance, and the data link layer's timer may direct Recovery again
(``dll_recovery_tick``). Each of these is a combinational stage over a copy of the registers
(:meth:`Ltssm._stage`), so the hardware computes exactly the golden sequence of updates; the
registers take the last copy at the edge. Fine for simulation and a contrast model; not laid out
for an FPGA clock.

Ports: ``sent`` (the word ``tx_code``/``tx_body`` went on the wire this cycle), ``rx_valid``
(the LTSSM takes a word this cycle: anything but PAD and SKP), ``rx_signal`` (the word is not
"no signal"), ``rx_malformed``, ``rx_code``, ``rx_body``, ``skp``, ``pad``, ``far_receiver``
(receiver detection), ``dll_recovery_rx``, ``dll_recovery_tick``. Out: ``state``, ``link_up``,
``rate``, ``tx_ei`` (electrical idle), ``tx_l0`` (the data link layer owns the slot),
``state_after_rx`` (the state once this cycle's word is taken: the end ticks its data link layer
only if it is still L0), ``next_state`` and ``next_link_up`` (what the registers take at the edge),
``tx_code``/``tx_body`` (combinational, from the registers), and the event counters, named as
the golden ``Ltssm.counters`` and wrapping at 2**16.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for

from golden import encoding as enc
from golden.encoding import LtssmState as S
from golden.encoding import PcieCode as P
from golden.encoding import PcieRate
from golden.pcie_params import (
    IDLE_TO_RLOCK_LIMIT,
    LINK_NUMBER,
    STATE_TIMER,
    TS1_BEFORE_CONFIG,
    TS_AFTER_FIRST,
    TS_TO_LOCK,
    PcieParams,
    ts_body,
)

COUNTERS = (
    "recoveries",
    "detects",
    "rate_fallbacks",
    "receiver_errors",
    "ei_detected",
    "ei_inferred",
    "timeouts",
    "peer_restarts",
)
_CODE_BITS = enc.TAG_BITS - 1


class Ltssm(wiring.Component):
    """See the module docstring. ``params``: a :class:`golden.pcie_params.PcieParams`."""

    def __init__(self, params: PcieParams):
        if not isinstance(params, PcieParams):
            raise ValueError(f"params must be a PcieParams, not {type(params).__name__}")
        self.p = params
        self._cycles = {name: params.cycles(name) for name in set(STATE_TIMER.values()) - {None}}
        if min(self._cycles.values()) < 2:
            raise ValueError("every LTSSM timer must be at least 2 cycles at this time_scale and clock_mhz")
        self._ei_inference = params.cycles("ei_inference")
        self._timer_bits = bits_for(max(self._cycles.values()))
        members = {
            "sent": In(1),
            "rx_valid": In(1),
            "rx_signal": In(1),
            "rx_malformed": In(1),
            "rx_code": In(_CODE_BITS),
            "rx_body": In(enc.SLICE_BITS),
            "skp": In(1),
            "pad": In(1),
            "far_receiver": In(1),
            "dll_recovery_rx": In(1),
            "dll_recovery_tick": In(1),
            "state": Out(S),
            "link_up": Out(1),
            "rate": Out(1),
            "tx_ei": Out(1),
            "tx_l0": Out(1),
            "state_after_rx": Out(S),
            "next_state": Out(S),
            "next_link_up": Out(1),
            "tx_code": Out(_CODE_BITS),
            "tx_body": Out(enc.SLICE_BITS),
        }
        members.update({name: Out(enc.STATUS_COUNTER_BITS) for name in COUNTERS})
        super().__init__(members)

    # The registers, by name: (width, init).
    def _fields(self):
        p = self.p
        return {
            "state": (4, S.DETECT_QUIET),
            "timer": (self._timer_bits, self._cycles["detect_quiet"]),
            "consecutive": (4, 0),
            "sent_count": (bits_for(TS1_BEFORE_CONFIG), 0),
            "first_heard": (1, 0),
            "sent_after_first": (bits_for(TS_AFTER_FIRST), 0),
            "heard_any": (1, 0),
            "heard_ts2": (1, 0),
            "qualified": (1, 0),
            "rate": (1, p.max_rate),
            "idle_to_rlock": (8, 0),
            "changed_speed": (1, 0),
            "link_up": (1, 0),
            "none_run": (bits_for(p.ei_detect), 0),
            "since_skp": (bits_for(self._ei_inference), 0),
            # Entered in this cycle (its timer starts with the next): a stage value, but a register
            # for the reset state, which the golden end counts as entered in cycle 0.
            "entered": (1, 1),
            **{name: (enc.STATUS_COUNTER_BITS, 0) for name in COUNTERS},
        }

    def _stage(self, m, cur, name):
        """A combinational copy of ``cur`` that a stage of the cycle then assigns to."""
        nxt = {k: Signal(len(v), name=f"{name}_{k}") for k, v in cur.items()}
        m.d.comb += [nxt[k].eq(cur[k]) for k in cur]
        return nxt

    def _enter(self, m, cur, st, target):
        """golden ``Ltssm._enter(target)``: assigns stage ``st``, reading the stage before it,
        ``cur`` (never ``st`` itself: that would be a combinational loop)."""
        timer = STATE_TIMER[target]
        m.d.comb += [
            st["state"].eq(target),
            st["entered"].eq(1),
            st["consecutive"].eq(0),
            st["sent_count"].eq(0),
            st["first_heard"].eq(0),
            st["sent_after_first"].eq(0),
            st["heard_any"].eq(0),
            st["heard_ts2"].eq(0),
            st["qualified"].eq(0),
        ]
        if timer:
            m.d.comb += st["timer"].eq(self._cycles[timer])
        if target == S.DETECT_QUIET:
            with m.If(cur["link_up"]):
                m.d.comb += st["detects"].eq(cur["detects"] + 1)
            m.d.comb += [st["link_up"].eq(0), st["rate"].eq(self.p.max_rate), st["changed_speed"].eq(0)]
        elif target == S.L0:
            m.d.comb += [
                st["link_up"].eq(1),
                st["idle_to_rlock"].eq(0),
                st["changed_speed"].eq(0),
                st["since_skp"].eq(0),
            ]

    def _direct_recovery(self, m, cur, st):
        with m.If(cur["state"] == S.L0):
            m.d.comb += st["recoveries"].eq(cur["recoveries"] + 1)
            self._enter(m, cur, st, S.RECOVERY_RCVRLOCK)

    def _fall_back(self, m, cur, st):
        m.d.comb += [st["rate_fallbacks"].eq(cur["rate_fallbacks"] + 1), st["changed_speed"].eq(1)]
        self._enter(m, cur, st, S.RECOVERY_SPEED)

    def _count(self, m, st, cur, qualifies):
        """golden ``Ltssm._count``: the run of qualifying words (saturating: only >= 2 and >= 8
        are ever asked), and the latched "8 received"."""
        run = Signal(4, name="run")
        m.d.comb += run.eq(Mux(qualifies, Mux(cur["consecutive"] == 15, 15, cur["consecutive"] + 1), 0))
        m.d.comb += [
            st["consecutive"].eq(run),
            st["first_heard"].eq(cur["first_heard"] | qualifies),
            st["qualified"].eq(cur["qualified"] | (run >= TS_TO_LOCK)),
        ]
        return run

    def elaborate(self, platform):
        m = Module()
        p = self.p
        regs = {k: Signal(w, init=int(i), name=k) for k, (w, i) in self._fields().items()}

        # --- Transmit: the word of the current state (golden Ltssm.word) --------------------------
        state = regs["state"]
        with m.Switch(state):
            with m.Case(S.DETECT_QUIET, S.DETECT_ACTIVE, S.RECOVERY_SPEED):
                m.d.comb += self.tx_ei.eq(1)
            with m.Case(S.L0):
                m.d.comb += self.tx_l0.eq(1)
            with m.Case(S.POLLING_ACTIVE):
                m.d.comb += [self.tx_code.eq(P.TS1), self.tx_body.eq(ts_body(enc.TS_LINK_PAD, p.max_rate))]
            with m.Case(S.POLLING_CONFIG):
                m.d.comb += [self.tx_code.eq(P.TS2), self.tx_body.eq(ts_body(enc.TS_LINK_PAD, p.max_rate))]
            with m.Case(S.CONFIG_LINKWIDTH, S.RECOVERY_RCVRLOCK):
                m.d.comb += [self.tx_code.eq(P.TS1), self.tx_body.eq(ts_body(LINK_NUMBER, p.max_rate))]
            with m.Case(S.CONFIG_COMPLETE, S.RECOVERY_RCVRCFG):
                m.d.comb += [self.tx_code.eq(P.TS2), self.tx_body.eq(ts_body(LINK_NUMBER, p.max_rate))]
            with m.Default():
                m.d.comb += self.tx_code.eq(P.IDL)

        # --- The word went on the wire (golden Ltssm.sent_word) ---------------------------------
        st0 = self._stage(m, regs, "sent")
        with m.If(self.sent):
            m.d.comb += st0["sent_count"].eq(
                Mux(regs["sent_count"] == TS1_BEFORE_CONFIG, TS1_BEFORE_CONFIG, regs["sent_count"] + 1)
            )
            with m.If(regs["first_heard"]):
                m.d.comb += st0["sent_after_first"].eq(
                    Mux(regs["sent_after_first"] == TS_AFTER_FIRST, TS_AFTER_FIRST, regs["sent_after_first"] + 1)
                )

        # --- Receive (golden PcieLink._receive and Ltssm.receive) -------------------------------
        st1 = self._stage(m, st0, "rx")
        self._receive(m, st0, st1)

        # --- The data link layer's timer, then the LTSSM's (golden PcieLink.step) ----------------
        st2 = self._stage(m, st1, "dll")
        with m.If(self.dll_recovery_tick):
            self._direct_recovery(m, st1, st2)
        st3 = self._stage(m, st2, "tick")
        self._tick(m, st2, st3)
        m.d.comb += st3["entered"].eq(0)

        m.d.sync += [regs[k].eq(st3[k]) for k in regs]
        m.d.comb += [
            self.state.eq(regs["state"]),
            self.link_up.eq(regs["link_up"]),
            self.rate.eq(regs["rate"]),
            self.state_after_rx.eq(st1["state"]),
            self.next_state.eq(st3["state"]),
            self.next_link_up.eq(st3["link_up"]),
        ]
        m.d.comb += [getattr(self, name).eq(regs[name]) for name in COUNTERS]
        return m

    def _receive(self, m, cur, st):
        p = self.p
        code, body = self.rx_code, self.rx_body
        with m.If(self.pad):
            m.d.comb += st["none_run"].eq(0)
        with m.If(self.skp):
            m.d.comb += [st["none_run"].eq(0), st["since_skp"].eq(0)]
        with m.If(self.rx_valid):
            # The data link layer's rollover comes first (it saw the word in L0).
            mid = self._stage(m, cur, "rollover")
            with m.If(self.dll_recovery_rx):
                self._direct_recovery(m, cur, mid)
            m.d.comb += [st[k].eq(mid[k]) for k in mid]
            run = Signal(len(cur["none_run"]), name="none_run_now")
            m.d.comb += run.eq(
                Mux(self.rx_signal, 0, Mux(mid["none_run"] == p.ei_detect, p.ei_detect, mid["none_run"] + 1))
            )
            m.d.comb += st["none_run"].eq(run)
            word = Signal(name="rx_word")  # a word of this link (a signal, not malformed)
            m.d.comb += word.eq(self.rx_signal & ~self.rx_malformed)
            ts = Signal(name="rx_ts")
            m.d.comb += ts.eq(word & ((code == P.TS1) | (code == P.TS2)) & (body[enc.TS_RESERVED_LSB :] == 0))
            link = body[enc.TS_LINK_LSB : enc.TS_LINK_LSB + enc.TS_LINK_BITS]
            ours = Signal(name="rx_ours")  # a training set of this configured link
            m.d.comb += ours.eq(ts & (link == LINK_NUMBER))
            ours2 = Signal(name="rx_ours_ts2")
            m.d.comb += ours2.eq(ours & (code == P.TS2))
            state = mid["state"]
            with m.If(self.rx_malformed):
                m.d.comb += st["receiver_errors"].eq(mid["receiver_errors"] + 1)
                if p.framing_error_recovery:
                    with m.If((state == S.L0) & (mid["rate"] == PcieRate.FULL)):
                        m.d.comb += st["recoveries"].eq(mid["recoveries"] + 1)
                        self._enter(m, mid, st, S.RECOVERY_RCVRLOCK)
            with m.If(ours):
                m.d.comb += [st["heard_any"].eq(1), st["heard_ts2"].eq(mid["heard_ts2"] | ours2)]
            recovering = (
                (state == S.RECOVERY_RCVRLOCK)
                | (state == S.RECOVERY_SPEED)
                | (state == S.RECOVERY_RCVRCFG)
                | (state == S.RECOVERY_IDLE)
            )
            with m.If(recovering & ts & (link == enc.TS_LINK_PAD)):
                m.d.comb += st["peer_restarts"].eq(mid["peer_restarts"] + 1)
                self._enter(m, mid, st, S.DETECT_QUIET)
            with m.Else():
                self._dispatch(m, mid, st, state, code, word, ts, ours, ours2, run)

    def _dispatch(self, m, mid, st, state, code, word, ts, ours, ours2, run):
        """golden ``Ltssm.receive``, by the state at the start of the cycle."""
        p = self.p
        with m.Switch(state):
            with m.Case(S.DETECT_QUIET):
                with m.If(self.rx_signal):
                    self._enter(m, mid, st, S.DETECT_ACTIVE)
            with m.Case(S.L0):
                with m.If(ts):
                    self._direct_recovery(m, mid, st)
                with m.Elif(word & (code == P.EIOS)):
                    self._direct_recovery(m, mid, st)
                with m.Elif(run >= p.ei_detect):
                    m.d.comb += st["ei_detected"].eq(mid["ei_detected"] + 1)
                    self._direct_recovery(m, mid, st)
            with m.Case(S.POLLING_ACTIVE):
                run1 = self._count(m, st, mid, ts)
                with m.If((mid["qualified"] | (run1 >= TS_TO_LOCK)) & (mid["sent_count"] >= TS1_BEFORE_CONFIG)):
                    self._enter(m, mid, st, S.POLLING_CONFIG)
            with m.Case(S.POLLING_CONFIG):
                self._leave_after_16(m, st, mid, ts & (code == P.TS2), S.CONFIG_LINKWIDTH)
            with m.Case(S.CONFIG_LINKWIDTH):
                run2 = self._count(m, st, mid, ours)
                with m.If(run2 >= 2):
                    self._enter(m, mid, st, S.CONFIG_COMPLETE)
            with m.Case(S.CONFIG_COMPLETE):
                self._leave_after_16(m, st, mid, ours2, S.CONFIG_IDLE)
            with m.Case(S.CONFIG_IDLE):
                self._leave_after_16(m, st, mid, word & (code == P.IDL), S.L0)
            with m.Case(S.RECOVERY_IDLE):
                with m.If(ours & (code == P.TS1)):
                    self._enter(m, mid, st, S.RECOVERY_RCVRLOCK)
                with m.Else():
                    self._leave_after_16(m, st, mid, word & (code == P.IDL), S.L0)
            with m.Case(S.RECOVERY_RCVRLOCK):
                run8 = self._count(m, st, mid, ours)
                with m.If(run8 >= TS_TO_LOCK):
                    self._enter(m, mid, st, S.RECOVERY_RCVRCFG)
            with m.Case(S.RECOVERY_RCVRCFG):
                run3 = self._count(m, st, mid, ours2)
                qualified = mid["qualified"] | (run3 >= TS_TO_LOCK)
                with m.If(qualified & (mid["sent_after_first"] >= TS_AFTER_FIRST)):
                    self._enter(m, mid, st, S.RECOVERY_IDLE)
                with m.Elif((run >= p.ei_detect) & ~(mid["heard_ts2"] | ours2) & (mid["rate"] != PcieRate.LOW)):
                    self._fall_back(m, mid, st)

    def _leave_after_16(self, m, st, mid, qualifies, target):
        """Count the run; leave for ``target`` once 8 were received (latched) and 16 sent after
        the first."""
        run = self._count(m, st, mid, qualifies)
        qualified = mid["qualified"] | (run >= TS_TO_LOCK)
        with m.If(qualified & (mid["sent_after_first"] >= TS_AFTER_FIRST)):
            self._enter(m, mid, st, target)

    def _tick(self, m, cur, st):
        """golden ``Ltssm.tick``: reads stage ``cur`` (with its ``entered`` flag), assigns ``st``."""
        state = cur["state"]
        with m.If(state == S.L0):
            since = Signal(len(cur["since_skp"]), name="since_skp_now")
            m.d.comb += since.eq(Mux(cur["since_skp"] == self._ei_inference, self._ei_inference, cur["since_skp"] + 1))
            m.d.comb += st["since_skp"].eq(since)
            with m.If(since >= self._ei_inference):
                m.d.comb += st["ei_inferred"].eq(cur["ei_inferred"] + 1)
                self._direct_recovery(m, cur, st)
        with m.Elif(cur["entered"]):
            pass
        with m.Elif(state == S.DETECT_ACTIVE):
            with m.If(self.far_receiver):
                self._enter(m, cur, st, S.POLLING_ACTIVE)
            with m.Else():
                self._enter(m, cur, st, S.DETECT_QUIET)
        with m.Else():
            left = Signal(self._timer_bits, name="timer_left")
            m.d.comb += [left.eq(cur["timer"] - 1), st["timer"].eq(left)]
            with m.If(left == 0):
                self._expire(m, cur, st, state)

    def _expire(self, m, cur, st, state):
        with m.If(state != S.RECOVERY_SPEED):
            m.d.comb += st["timeouts"].eq(cur["timeouts"] + 1)
        idle_allowed = cur["idle_to_rlock"] < IDLE_TO_RLOCK_LIMIT
        full = cur["rate"] == PcieRate.FULL
        with m.Switch(state):
            with m.Case(S.DETECT_QUIET):
                self._enter(m, cur, st, S.DETECT_ACTIVE)
            with m.Case(S.POLLING_ACTIVE):
                with m.If(cur["qualified"]):
                    self._enter(m, cur, st, S.POLLING_CONFIG)
                with m.Else():
                    self._enter(m, cur, st, S.DETECT_QUIET)
            with m.Case(S.CONFIG_COMPLETE):
                with m.If(full & idle_allowed):  # >= 8 GT/s: into Idle while idle_to_rlock < FFh
                    self._enter(m, cur, st, S.CONFIG_IDLE)
                with m.Else():
                    self._enter(m, cur, st, S.DETECT_QUIET)
            with m.Case(S.RECOVERY_RCVRCFG):
                with m.If(full & idle_allowed):
                    self._enter(m, cur, st, S.RECOVERY_IDLE)
                with m.Else():
                    self._enter(m, cur, st, S.DETECT_QUIET)
            with m.Case(S.POLLING_CONFIG, S.CONFIG_LINKWIDTH):
                self._enter(m, cur, st, S.DETECT_QUIET)
            with m.Case(S.CONFIG_IDLE, S.RECOVERY_IDLE):
                with m.If(idle_allowed):
                    m.d.comb += st["idle_to_rlock"].eq(
                        Mux(cur["rate"] == PcieRate.LOW, IDLE_TO_RLOCK_LIMIT, cur["idle_to_rlock"] + 1)
                    )
                    self._enter(m, cur, st, S.RECOVERY_RCVRLOCK)
                with m.Else():
                    self._enter(m, cur, st, S.DETECT_QUIET)
            with m.Case(S.RECOVERY_RCVRLOCK):
                with m.If((cur["rate"] != PcieRate.LOW) & ~cur["changed_speed"]):
                    self._fall_back(m, cur, st)
                with m.Elif(cur["heard_any"]):
                    self._enter(m, cur, st, S.CONFIG_LINKWIDTH)
                with m.Else():
                    self._enter(m, cur, st, S.DETECT_QUIET)
            with m.Case(S.RECOVERY_SPEED):
                with m.If(cur["changed_speed"]):
                    m.d.comb += st["rate"].eq(PcieRate.LOW)
                self._enter(m, cur, st, S.RECOVERY_RCVRLOCK)
