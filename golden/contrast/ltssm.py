"""The contrast link's physical layer: a PCIe-style LTSSM on the 72-bit channel (docs/CONTRAST.md 3).

:class:`Ltssm` holds the state, the one state timer, the training-set counts, the rate and the
electrical-idle detectors. Each cycle the end calls :meth:`Ltssm.word` for what the physical
layer sends (``None`` while the data link layer owns the slot, in L0 and nowhere else), then
:meth:`Ltssm.receive` with the word that arrived (PAD and SKP already removed by the caller, who
reports SKP through :meth:`Ltssm.saw_skp`), then :meth:`Ltssm.tick`.

Failure behaviour, as the spec has it: a dead peer is noticed only when a timer expires (24 ms in
Recovery.RcvrLock, twice when the first attempt was at the full rate, the second after a silent
fall-back to the lowest rate); until then ``link_up`` stays 1.
"""

from golden import encoding as enc
from golden.encoding import LtssmState as S
from golden.encoding import PcieCode as P
from golden.encoding import PcieRate
from golden.pcie_params import (
    IDLE_TO_RLOCK_LIMIT,
    LINK_NUMBER,
    RECOVERY_STATES,
    STATE_TIMER,
    TS1_BEFORE_CONFIG,
    TS_AFTER_FIRST,
    TS_TO_LOCK,
    PcieParams,
    ts_body,
)


class Ltssm:
    """One end's LTSSM. ``params``: a :class:`golden.pcie_params.PcieParams`."""

    def __init__(self, params: PcieParams):
        self.p = params
        self.cycles = {name: params.cycles(name) for name in set(STATE_TIMER.values()) - {None}}
        self.ei_inference_cycles = params.cycles("ei_inference")
        self.rate = params.max_rate
        self.idle_to_rlock = 0
        self.changed_speed = False  # a fall-back happened in this Recovery
        self.link_up = False  # LinkUp: set on L0 entry, cleared in Detect
        self.counters = {
            "recoveries": 0,
            "detects": 0,
            "rate_fallbacks": 0,
            "receiver_errors": 0,
            "ei_detected": 0,
            "ei_inferred": 0,
            "timeouts": 0,
            "peer_restarts": 0,
        }
        self.none_run = 0  # consecutive cycles with no signal
        self.since_skp = 0  # cycles in L0 since the last SKP arrived
        self.recovery_cause = None  # why the last L0 -> Recovery happened (for reports)
        self._enter(S.DETECT_QUIET)

    # --- State entry --------------------------------------------------------------------------------
    def _enter(self, state):
        self.state = state
        name = STATE_TIMER[state]
        self.timer = self.cycles[name] if name else None
        self.consecutive = 0  # consecutive qualifying words received in this state
        self.sent = 0  # words of this state's kind sent (TS1 in Polling.Active)
        self.first_heard = False  # a qualifying word arrived in this state
        self.sent_after_first = 0  # words sent since then
        self.heard_any = False  # any training set received in this state
        self.heard_ts2 = False  # any TS2 received in this state
        self.entered = True  # entered in this cycle: its timer starts with the next
        self.qualified = False  # the receive condition held once (Polling.Active timeout)
        if state == S.DETECT_QUIET:
            if self.link_up:
                self.counters["detects"] += 1
            self.link_up = False
            self.rate = self.p.max_rate
            self.changed_speed = False
        elif state == S.L0:
            self.link_up = True
            self.idle_to_rlock = 0
            self.changed_speed = False
            self.since_skp = 0

    def direct_recovery(self, cause: str):
        """A higher layer (REPLAY_NUM rollover) or the receiver sends L0 to Recovery."""
        if self.state == S.L0:
            self.counters["recoveries"] += 1
            self.recovery_cause = cause
            self._enter(S.RECOVERY_RCVRLOCK)

    def _to_detect(self):
        self._enter(S.DETECT_QUIET)

    # --- Transmit -------------------------------------------------------------------------------
    def word(self):
        """(code, body) the physical layer sends this cycle; ("EI", 0) for electrical idle; None in
        L0, where the data link layer chooses."""
        s = self.state
        if s in (S.DETECT_QUIET, S.DETECT_ACTIVE, S.RECOVERY_SPEED):
            return ("EI", 0)
        if s == S.L0:
            return None
        if s in (S.POLLING_ACTIVE,):
            return (P.TS1, ts_body(enc.TS_LINK_PAD, self.p.max_rate))
        if s == S.POLLING_CONFIG:
            return (P.TS2, ts_body(enc.TS_LINK_PAD, self.p.max_rate))
        if s in (S.CONFIG_LINKWIDTH, S.RECOVERY_RCVRLOCK):
            return (P.TS1, ts_body(LINK_NUMBER, self.p.max_rate))
        if s in (S.CONFIG_COMPLETE, S.RECOVERY_RCVRCFG):
            return (P.TS2, ts_body(LINK_NUMBER, self.p.max_rate))
        return (P.IDL, 0)  # Config.Idle, Recovery.Idle

    def sent_word(self, code):
        """The word the physical layer offered went on the wire (a real slot, not PAD)."""
        self.sent += 1
        if self.first_heard:
            self.sent_after_first += 1

    # --- Receive --------------------------------------------------------------------------------
    def saw_skp(self):
        self.since_skp = 0
        self.none_run = 0

    def saw_pad(self):
        """A PAD slot: a signal, but no word for the LTSSM."""
        self.none_run = 0

    def receive(self, code, body) -> None:
        """The word that arrived this cycle (``code`` None = no signal; "MALFORMED" = a tag that
        is not a word of this link: counted, a signal, and a break in any run)."""
        s = self.state
        if code is None:
            self.none_run += 1
        else:
            self.none_run = 0
        if code == "MALFORMED":
            self.counters["receiver_errors"] += 1
            if s == S.L0 and self.rate == PcieRate.FULL and self.p.framing_error_recovery:
                self.direct_recovery("framing error")
        ts = code in (P.TS1, P.TS2) and not body >> enc.TS_RESERVED_LSB
        link = (body >> enc.TS_LINK_LSB) & ((1 << enc.TS_LINK_BITS) - 1) if ts else None
        ours = ts and link == LINK_NUMBER  # a training set of this configured link
        if ours:
            self.heard_any = True
            self.heard_ts2 |= code == P.TS2
        if s == S.DETECT_QUIET:
            if code is not None:  # electrical idle exit
                self._enter(S.DETECT_ACTIVE)
            return
        if s == S.DETECT_ACTIVE:
            return  # decided in tick()
        if s == S.L0:
            if ts:
                self.direct_recovery("training set received")
            elif code == P.EIOS:
                self.direct_recovery("EIOS received (no L0s)")
            elif self.none_run >= self.p.ei_detect:
                self.counters["ei_detected"] += 1
                self.direct_recovery("electrical idle detected")
            return
        if s in RECOVERY_STATES and ts and link == enc.TS_LINK_PAD:
            # The peer is training from Detect (its link number not configured): its data link
            # layer was reset. Resuming L0 would pair this end's sequence numbers with its fresh
            # ones; PCIe goes through Configuration and data link re-initialization, collapsed
            # here into Detect (docs/CONTRAST.md 3.2).
            self.counters["peer_restarts"] += 1
            self._to_detect()
            return
        if s == S.POLLING_ACTIVE:
            self._count(ts)
            if self.qualified and self.sent >= TS1_BEFORE_CONFIG:
                self._enter(S.POLLING_CONFIG)
        elif s == S.POLLING_CONFIG:
            self._count(code == P.TS2 and ts)
            if self.qualified and self.sent_after_first >= TS_AFTER_FIRST:
                self._enter(S.CONFIG_LINKWIDTH)
        elif s == S.CONFIG_LINKWIDTH:
            self._count(ours)
            if self.consecutive >= 2:
                self._enter(S.CONFIG_COMPLETE)
        elif s == S.CONFIG_COMPLETE:
            self._count(code == P.TS2 and ours)
            if self.qualified and self.sent_after_first >= TS_AFTER_FIRST:
                self._enter(S.CONFIG_IDLE)
        elif s in (S.CONFIG_IDLE, S.RECOVERY_IDLE):
            if s == S.RECOVERY_IDLE and code == P.TS1 and ours:
                self._enter(S.RECOVERY_RCVRLOCK)
                return
            self._count(code == P.IDL)
            if self.qualified and self.sent_after_first >= TS_AFTER_FIRST:
                self._enter(S.L0)
        elif s == S.RECOVERY_RCVRLOCK:
            self._count(ours)
            if self.consecutive >= TS_TO_LOCK:
                self._enter(S.RECOVERY_RCVRCFG)
        elif s == S.RECOVERY_RCVRCFG:
            self._count(code == P.TS2 and ours)
            if self.qualified and self.sent_after_first >= TS_AFTER_FIRST:
                self._enter(S.RECOVERY_IDLE)
            elif self.none_run >= self.p.ei_detect and not self.heard_ts2 and self.rate != PcieRate.LOW:
                self._fall_back()

    def _count(self, qualifies: bool):
        """Count a qualifying word toward the consecutive run; anything else breaks it (no signal
        included: a run is words in a row)."""
        self.consecutive = self.consecutive + 1 if qualifies else 0
        self.first_heard |= qualifies
        # "8 consecutive received" is latched: once it held, the end only waits for its own
        # 16 sent, whatever the peer (already moved on) sends now.
        self.qualified |= self.consecutive >= TS_TO_LOCK

    def _fall_back(self):
        """Recovery.Speed with the target rate forced to the lowest: silent (no error logged)."""
        self.counters["rate_fallbacks"] += 1
        self.changed_speed = True
        self._enter(S.RECOVERY_SPEED)

    # --- Timers ---------------------------------------------------------------------------------
    def tick(self, far_receiver: bool) -> None:
        """End of the cycle: the state timer, Detect.Active's receiver detection
        (``far_receiver``: the analogue measurement of the peer's termination on this end's
        transmit line) and the electrical-idle inference. A state's timer counts the cycles
        after the one it was entered in, wherever in that cycle it was entered."""
        entered, self.entered = self.entered, False
        if self.state == S.L0:
            self.since_skp += 1
            if self.since_skp >= self.ei_inference_cycles:
                self.counters["ei_inferred"] += 1
                self.direct_recovery("electrical idle inferred")
                self.entered = False
            return
        if entered:
            return
        s = self.state
        if s == S.DETECT_ACTIVE:
            self._enter(S.POLLING_ACTIVE if far_receiver else S.DETECT_QUIET)
        elif self.timer is not None:
            self.timer -= 1
            if self.timer == 0:
                self._expire(s)
        self.entered = False

    def _expire(self, s) -> None:
        """The state timer of ``s`` ran out (anchors 1.1)."""
        if s != S.RECOVERY_SPEED:
            self.counters["timeouts"] += 1
        idle_allowed = self.idle_to_rlock < IDLE_TO_RLOCK_LIMIT
        if s == S.DETECT_QUIET:
            self._enter(S.DETECT_ACTIVE)
        elif s == S.POLLING_ACTIVE:
            self._enter(S.POLLING_CONFIG if self.qualified else S.DETECT_QUIET)
        elif s in (S.CONFIG_COMPLETE, S.RECOVERY_RCVRCFG) and self.rate == PcieRate.FULL and idle_allowed:
            # At 8 GT/s and above these time out into Idle while idle_to_rlock < FFh.
            self._enter(S.CONFIG_IDLE if s == S.CONFIG_COMPLETE else S.RECOVERY_IDLE)
        elif s in (S.POLLING_CONFIG, S.CONFIG_LINKWIDTH, S.CONFIG_COMPLETE, S.RECOVERY_RCVRCFG):
            self._to_detect()
        elif s in (S.CONFIG_IDLE, S.RECOVERY_IDLE):
            if idle_allowed:
                self.idle_to_rlock = IDLE_TO_RLOCK_LIMIT if self.rate == PcieRate.LOW else self.idle_to_rlock + 1
                self._enter(S.RECOVERY_RCVRLOCK)
            else:
                self._to_detect()
        elif s == S.RECOVERY_RCVRLOCK:
            if self.rate != PcieRate.LOW and not self.changed_speed:
                self._fall_back()
            elif self.heard_any:
                self._enter(S.CONFIG_LINKWIDTH)
            else:
                self._to_detect()
        elif s == S.RECOVERY_SPEED:
            # The electrical idle of a failed speed change is over: lock again at the new rate.
            if self.changed_speed:
                self.rate = PcieRate.LOW
            self._enter(S.RECOVERY_RCVRLOCK)
