"""One OAE link endpoint in the link clock domain, cycle by cycle: the executable form of
docs/PROTOCOL.md sections 2-5.

:class:`LinkCore` composes the parts, each with its own module: training (golden/link/training.py),
the token plane (golden/link/token_plane.py), the data plane (golden/link/framer.py) and the failure
detector (golden/link/rlfd.py); it owns what joins them: the pipeline of PROTOCOL.md 2.2, the
scheduler's first choice (the token), reconciliation at entangle and restarts.

Twin of ``rtl.link.core.LinkCore`` (rtl/link/core.py), which matches it cycle for cycle. The RTL's
clock crossing (rtl/link/endpoint.py) adds bisynchronous FIFOs on the user side; it has no golden twin
because FIFO timing depends on clock phase (golden/common/cdc.py checks the FIFOs at transaction level instead).

Timing contract (PROTOCOL.md 2.2): ``tx_word`` is the word this end drives on the link during
the current cycle. ``step(rx, ...)`` is one link clock edge: it checks the word received in this
cycle (``None`` = no signal; stage C), applies the word checked in the previous cycle and this
cycle's user inputs (A), chooses the word that will be on the wire three cycles later (S) and
moves the pipeline on (B1, B2). A word that arrives in cycle t can change the word on the wire in
cycle t + TURNAROUND at the earliest.

User side (transactions): frames go in with ``frames={cls: bytes}`` when ``frame_ready(cls)``;
tokens go in with ``ait=value`` when ``ait_ready``; a token being offered can be withdrawn with
``withdraw=True``. Deliveries come back in the :class:`StepResult`. A fabric settles a failed
link's end between steps (:meth:`LinkCore.settle`, PROTOCOL.md 10.6) and takes the frames the
settle took out one at a time (:attr:`LinkCore.taken_offer`, :meth:`LinkCore.take_out`).

Failure behaviour: malformed words are counted and dropped. A data-plane anomaly (a slice out
of sequence, an echo that does not match or echoes nothing, a return overdue) is recovered at
frame level with the link UP: the sender resends its unconfirmed frames (go-back-N, PROTOCOL.md
4.6). A lost token-plane word is asked again with the link UP (PROTOCOL.md 3.1). Other protocol
anomalies (a token where none is due, a commit count beyond the frames received...), RLFD
suspicions (token overdue, loss of signal) and a recovery that keeps failing (``degraded``)
restart the end: it trains again (after a suspicion, a degraded link aside, it resumes the
session when the peer does: one sample of the round trip, PROTOCOL.md 2.3), and reconciles the
atomic token transfer and the frame counts with the peer before entangling again. Nothing the user handed in is lost or
delivered twice. A bad call (a word that is not a 72-bit integer, a
frame for a class that is not ready, a flag that is not a bool) raises before anything changes.
"""

from dataclasses import dataclass, field, make_dataclass

from golden import encoding as enc
from golden.common.slice import DECODE_TABLE, data_tag, make_word
from golden.encoding import Ctl, Kind, LinkState, Reason
from golden.link.control import TOKEN_AGAIN_DELTA, TOKEN_COPY_DELTA, check_word, control_word
from golden.link.framer import DataChoice, Framer
from golden.link.rlfd import Rlfd
from golden.link.token_plane import TokenChoice, TokenPlane
from golden.link.training import Training, TrainingChoice
from golden.params import (
    APPLY_DELAY,
    CHECK_GRACE,
    DEGRADED_HEAL,
    DEGRADED_HOLD,
    DEGRADED_STEPS,
    FILL_INTERVAL,
    NOISE_WINDOW,
    RESTART_DELAY,
    LinkParams,
)

_IDLE = control_word(Ctl.IDLE)
_PLAIN_TOKENS = (Ctl.TICK, Ctl.TOCK)
_WORD_LIMIT = 1 << enc.WORD_BITS


def _is_int(value) -> bool:
    return type(value) is int or (isinstance(value, int) and not isinstance(value, bool))


@dataclass
class StepResult:
    """What one cycle handed to the user, and what happened."""

    frames: list = field(default_factory=list)  # [(cls, bytes)] delivered, in order
    ait: list = field(default_factory=list)  # token values delivered to this user
    ait_returned: list = field(default_factory=list)  # own token values given back (withdrawn)
    events: list = field(default_factory=list)  # [(name, detail)]
    taken: list = field(default_factory=list)  # [(cls, bytes)] the user took (``frames_taken``)


# Event counts of one end, a field per name of ``encoding.STATUS_COUNTERS``: the RTL status
# port carries the same names (``status.counters``), modulo 2**STATUS_COUNTER_BITS. Like the
# hardware's registered counters they show the events of the cycles before the last one
# (PROTOCOL.md 5.2): ``LinkCore.counters`` is taken at the start of each step.
Counters = make_dataclass("Counters", [(name, int, 0) for name in enc.STATUS_COUNTERS])


def _snapshot(counters: Counters) -> Counters:
    """A copy of ``counters`` (every field an int), without copy.copy's generic machinery:
    it is taken every cycle."""
    snap = object.__new__(Counters)
    snap.__dict__.update(counters.__dict__)
    return snap


@dataclass(frozen=True)
class _Choice:
    """S's choice of one cycle: the word, and what choosing it changes (made after A)."""

    word: int
    training: TrainingChoice | None = None
    token: TokenChoice | None = None
    counts: tuple = ()  # the confirmed counts a token word carries
    data: DataChoice | None = None
    copy: bool = False  # a token word's copy: of the one S chose in the previous cycle, or below
    ask: bool = False  # the last token word with the again flag: the peer's answer was lost (3.1)
    resend: bool = False  # the last token word again, as a copy: the peer asked for it


_IDLE_CHOICE = _Choice(_IDLE)  # nothing to send: the most common choice, made once


class LinkCore:
    """One end of an OAE link. See the module docstring for the timing contract.

    ``params``: a :class:`golden.params.LinkParams`, or its fields as keyword arguments.
    ``user_takes``: the user takes delivered frames from a stream per class, as from the
    hardware's ``frames_out`` (:meth:`frame_out`, ``step(frames_taken=...)``), and the receive
    memory refuses slices while full (:class:`golden.link.framer.Framer`). Without it a frame is
    the user's as it is delivered (``StepResult.frames``)."""

    def __init__(self, params: LinkParams | None = None, *, user_takes: bool = False, **kwargs):
        self.p = LinkParams.resolve(params, kwargs)
        # Beyond the RTT, how long a return may take (PROTOCOL.md 4.5); fixed by the parameters.
        self._echo_allowance = self.p.margin + self.p.echo_slack
        self._quiet_allowance = self.p.margin + self.p.quiet_slack
        self.cycle = 0
        self._events = Counters()  # counted as they happen; ``counters`` lags by a cycle
        self.counters = Counters()
        # Token plane and data plane keep their half-states across trainings: reconciliation
        # needs them.
        self.tokens = TokenPlane()
        self.framer = Framer(self.p, self._events, user_takes=user_takes)
        self.suspect = False
        self.up = False
        self.rlfd = Rlfd(self.p)
        self.training = Training(self.p, self._events)
        # A restart decided by A: the cycle it takes effect, whether it is a suspicion, and
        # whether that suspicion keeps the RTT (a token lost to corruption).
        self._restart_at, self._restart_fault, self._restart_keep = None, False, False
        self._restart_resume = False  # the restart is a suspicion the round may resume from
        # The RTT at the start of the last two cycles, the older first (the window follows it, 4.4).
        self._rtt_past = (None, None)
        # A degraded link is held down (PROTOCOL.md 5.2): the restart under way is a degraded
        # verdict; the verdicts in a row; the cycle the hold ends; the cycle the end entered UP.
        self._restart_degraded, self._degraded_streak, self._hold_until, self._up_since = False, 0, 0, 0
        self.degraded = False  # since a degraded verdict's restart, until the link is UP again
        # Token copies (PROTOCOL.md 3.1): the A cycle of the last malformed word.
        self._noisy_at = None
        self._check_grace_until = 0  # A cycles before this take a DATA word like the peer's check slice for one
        self._settle = None  # a settle asked: (peer half-state, the cycle at whose end it applies)
        self._enter_training(initial=True)
        # The pipeline registers (PROTOCOL.md 2.2): the word A applies next, S's last choice
        # (in B1 next cycle), the choice before it (in B2, on the wire next cycle), the word on
        # the wire now, and the data word that was on the wire in the previous cycle (recorded
        # in the expect queue this cycle).
        self._rx_q, self._rx_word = None, None
        self._since_fill = 0  # S's choices since it last chose IDLE (PROTOCOL.md 6)
        first = self._choose()
        self._chosen = self._building = first
        self.tx_word = first.word
        self._on_wire = first.data
        self._wire_prev = None

    # --- observation ----------------------------------------------------------------------

    @property
    def balance(self) -> int:
        return self.tokens.balance

    def frame_ready(self, cls: int) -> bool:
        self._check_class("cls", cls)
        return self.framer.frame_ready(cls) and not self.settle_hold

    def frames_unsent(self, cls: int) -> int:
        """Frames of class ``cls`` handed in and not yet sent to their last slice: a user that
        wants a later frame to go first holds it back until this is 0."""
        self._check_class("cls", cls)
        return self.framer.unsent(cls)

    def _check_class(self, name, cls):
        if type(cls) is int and 0 <= cls < self.p.num_classes:
            return
        if not _is_int(cls):
            raise TypeError(f"{name} must be an int class number, not {type(cls).__name__}")
        if not 0 <= cls < self.p.num_classes:
            raise ValueError(f"{name} must be in [0, {self.p.num_classes}), not {cls!r}")

    @property
    def ait_ready(self) -> bool:
        return self.tokens.ait_ready

    @property
    def state(self) -> LinkState:
        return LinkState.UP if self.up else self.training.phase

    @property
    def rtt(self) -> int | None:
        return self.training.rtt

    @property
    def leader(self) -> bool:
        return self.training.leader

    @property
    def window(self) -> int:
        """The window in use: frames per class sent beyond those the peer is known to have
        committed, as the measured round trip needs, up to the replay memory (PROTOCOL.md 4.4)."""
        return self.framer.window_now

    @property
    def held_until(self) -> int:
        """The cycle a degraded link's hold ends (PROTOCOL.md 5.2): before it, training does not
        say heard-ready. 0 when no hold was ever set."""
        return self._hold_until

    @property
    def restarting(self) -> bool:
        """A restart has been decided and takes effect in the next cycle (PROTOCOL.md 2.2)."""
        return self._restart_at is not None

    @property
    def restart_cycle(self) -> bool:
        """The next step is the restart cycle (PROTOCOL.md 2.2)."""
        return self._restart_at == self.cycle

    @property
    def restart_fault(self) -> bool:
        """The restart decided is a suspicion: the next round remeasures and sets the remote-fault flag."""
        return self._restart_fault

    @property
    def restart_keep(self) -> bool:
        """The restart decided keeps the session's measured round trip (PROTOCOL.md 2.3)."""
        return self._restart_keep

    @property
    def restart_resume(self) -> bool:
        """The restart under way starts a round that may resume the session (PROTOCOL.md 2.3)."""
        return self._restart_resume

    @property
    def checked(self):
        """The received word stage C checked in the last step, which stage A applies in the next
        one (None when nothing arrived): an observation hook for the tests of the RTL blocks."""
        return self._rx_q

    @property
    def chosen(self):
        """Stage S's choice of the last step, which stages B1 and B2 build in the next two and
        which is on the wire in the one after."""
        return self._chosen

    @property
    def next_is_copy(self) -> bool:
        """The word applied next is a token copy to drop (PROTOCOL.md 3.1): a well-formed token
        word with the copy flag whose original was applied (its turn is not the turn expected).
        A copy whose original was lost stands for it."""
        q = self._rx_q
        if q is None or not self.p.token_copies:
            return False
        return (
            q.tag.kind == Kind.CONTROL
            and q.tag.code in enc.TOKEN_CODES
            and bool(enc.TOKEN_BODY.get(q.body, "copy"))
            and enc.TOKEN_BODY.get(q.body, "turn") != self._rx_turn
        )

    def pipeline_balance(self) -> int:
        """The balance (PROTOCOL.md 3.3) carried by token words inside the end, not yet on the
        wire or not yet applied: the reply A decided and S has not sent, the words S chose in
        the last two cycles (in B1 and B2) and the well-formed word A applies next."""
        total = enc.WORD_BALANCE.get(self.tokens.reply[0], 0) if self.tokens.reply else 0
        chosen = [None if c.copy else c.word for c in (self._chosen, self._building)]
        applied = self._rx_word if self._rx_q is not None and not self.next_is_copy else None
        for word in (*chosen, applied):
            if word is not None:
                tag = DECODE_TABLE[word >> enc.SLICE_BITS]
                total += enc.WORD_BALANCE.get(tag.code, 0) if tag.kind == Kind.CONTROL else 0
        return total

    # --- training and restarts -------------------------------------------------------------

    def _enter_training(self, initial=False, remeasure=True, fault=False, keep=False, resume=False):
        self.up = False
        self._peer_wants_copies = False  # the peer's last token word asked for copies
        self._copy_due = None  # the copy S sends in the next cycle
        self._new_turns()
        if not initial:
            self.training.start(remeasure=remeasure, fault=fault, keep=keep, resume=resume)
        self.tokens.leave_session()
        self.rlfd.clear()
        self.framer.leave_session()

    def _new_turns(self):
        """A session's token words are numbered by their turn bit from 0, at each end (3.1); no
        token word of the session has been sent, so none can be asked for."""
        self._tx_turn = 0  # the turn of the next token word S sends
        self._rx_turn = 0  # the turn of the next token word A expects
        self._last_token = None  # the last token word S sent in the session (not a copy)
        self._ask_due = False  # S sends the ask next (3.1)
        self._resend_due = False  # S sends the last token word again next, the peer asked

    def half_state_body(self) -> int:
        """The endpoint's part of the READY body: AIT halves and confirmed counts."""
        return self.tokens.half_state() | enc.READY_BODY.pack(counts=self.framer.counts_field())

    def _entangle(self, res):
        """Both half-states are known: reconcile (PROTOCOL.md 3.5), then enter UP."""
        self._reconcile(self.training.peer_half, res)
        self.training.entangled()
        # The peer's check slices may follow for a round trip (PROTOCOL.md 2.3).
        self._check_grace_until = self.cycle + self.rtt + self.p.margin + CHECK_GRACE
        self.up = True
        self.suspect = self.degraded = False
        self._up_since = self.cycle
        self.rlfd.clear()
        res.events.append(("up", self.rtt))
        self.tokens.enter_session(self.leader)
        self._new_turns()
        if not self.leader:
            self.rlfd.arm(self.cycle, self.rtt, sent=False)

    @property
    def settle_ready(self) -> bool:
        """A settle may be asked now, between two steps: none asked in the last two (the
        hardware's request register and its apply register are both free)."""
        return self._settle is None or self.cycle > self._settle[1]

    def settle(self, peer_half: int) -> None:
        """Settle this end of a link the fabric holds DOWN (PROTOCOL.md 10.6), asked between two
        steps (the hardware's request in the cycle of the step before). Two steps later, at the
        end of the second, the end reconciles with the peer's half-state (a READY body below the
        heard-ready bit) exactly as at entangle, without entering UP, and its unconfirmed frames
        leave the replay buffer for the take-out (:attr:`taken_offer`, :meth:`take_out`); that
        step's result carries what reconciling delivered and the event ("settle", True). If the
        end is UP by then (asking while it is UP is allowed, for the hardware's request meets the
        state of the cycle before), its entangling reconciled it: nothing is done, and the event
        is ("settle", False). Training goes on: reconciling again at entangle, against either of
        the peer's halves (before or after the peer settled), changes nothing more (3.5, 10.6).
        From the request through the step after the settle's, and until the take-out is empty, no
        frame is handed in (:meth:`frame_ready`).
        ValueError unless :attr:`settle_ready`, or for a bad half-state."""
        if not self.settle_ready:
            raise ValueError("settle: a settle was asked in one of the last two steps")
        half_bits = enc.READY_BODY.lsb("heard")
        if not _is_int(peer_half) or not 0 <= peer_half < 1 << half_bits:
            raise ValueError(f"peer_half must be a {half_bits}-bit half-state, not {peer_half!r}")
        self._settle = (peer_half, self.cycle + 1)

    @property
    def settle_hold(self) -> bool:
        """No frame is handed in in the next step: a settle was asked and the step is at most the
        one after the settle's (applied or skipped), or its take-out is busy."""
        return (self._settle is not None and self._settle[1] + 1 >= self.cycle) or self.framer.takeout.busy

    @property
    def taken_offer(self):
        """The frame a settle took out that the end offers now, (cls, 64 bytes), or None."""
        return self.framer.takeout.offer

    def take_out(self):
        """The fabric takes the offered frame (:attr:`taken_offer`), between two steps (the
        hardware's ready in the cycle of the step before). ValueError if none is offered."""
        return self.framer.takeout.take()

    def _settle_end(self, res) -> None:
        """The end of a step: the take-out moves on, then a settle due now is applied."""
        self.framer.takeout.tick()
        if self._settle is None or self._settle[1] != self.cycle:
            return
        peer_half = self._settle[0]
        if self.up:
            res.events.append(("settle", False))
            return
        self._reconcile(peer_half, res)
        self.framer.settle_take()
        res.events.append(("settle", True))

    def _reconcile(self, peer_half: int, res) -> None:
        """Both planes against the peer's half-state (PROTOCOL.md 3.5): a token delivered and
        the frames committed go into ``res``, conflicts into the counters."""
        delivered, conflict = self.tokens.reconcile(peer_half)
        if delivered is not None:
            res.ait.append(delivered)
        self._events.reconcile_conflicts += conflict
        frames, conflicts = self.framer.reconcile(peer_half)
        self._deliver_frames(frames, res)
        self._events.reconcile_conflicts += conflicts

    def half_state(self) -> int:
        """This end's half-state as its READY body carries it (PROTOCOL.md 2.3), for a REPORT."""
        return self.half_state_body()

    def _decide_restart(self, res, reason: str | Reason, suspect=False, keep=False):
        """A restart, counted and reported now, taking effect RESTART_DELAY cycles later (the
        first cause of a cycle wins; none is decided while one is under way). ``keep``: a
        suspicion whose retraining keeps the RTT at both ends."""
        if self._restart_at is not None:
            return
        self._restart_at, self._restart_fault, self._restart_keep = self.cycle + RESTART_DELAY, suspect, keep
        # A degraded link is not resumed: the line that failed it would be believed again.
        self._restart_resume = suspect and reason != Reason.DEGRADED
        self._restart_degraded = reason == Reason.DEGRADED
        if self._restart_degraded:
            healed = self.cycle - self._up_since >= DEGRADED_HEAL
            self._degraded_streak = 1 if healed else min(self._degraded_streak + 1, DEGRADED_STEPS)
        self._events.trainings += 1
        if suspect:
            self._events.suspicions += 1
            self.suspect = True
            res.events.append(("suspect", reason))
        else:
            self._events.anomalies += 1
            res.events.append(("anomaly", reason))

    def _do_restart(self):
        # An anomaly comes from a word the link carried: the link is alive and the round trip
        # unchanged. A suspicion may come from drift, so the round trip is measured again, and
        # the peer is told (remote fault) so that it suspects too rather than guess; unless the
        # token was lost to corruption (keep), which both ends then know.
        suspect, keep, self._restart_at = self._restart_fault, self._restart_keep, None
        if self._restart_degraded:
            self.degraded = True
            self._hold_until = self.cycle + (DEGRADED_HOLD << (self._degraded_streak - 1))
        self._enter_training(remeasure=suspect and not keep, fault=suspect, keep=keep, resume=self._restart_resume)

    # --- token plane ----------------------------------------------------------------------

    def _rx_token(self, code, body, res, withdraw):
        # Whatever follows, the peer's next token word has the other turn: a word that is not
        # taken ends the session.
        self._rx_turn ^= 1
        if self.tokens.due or not self.rlfd.waiting:
            return self._decide_restart(res, "token received while none is due")
        if self.rlfd.early(self.cycle):
            return self._decide_restart(res, Reason.TOKEN_EARLY, suspect=True)
        own_plain = Ctl.TICK if self.leader else Ctl.TOCK
        if code == own_plain:
            return self._decide_restart(res, "received my own plain token kind")
        # The data plane and the token plane act on the token independently (PROTOCOL.md 4.3).
        counts_anomaly, frames = self.framer.token_received(body)
        self._deliver_frames(frames, res)
        anomaly, delivered, returned = self.tokens.receive(
            code,
            enc.TOKEN_BODY.get(body, "ait_seq"),
            enc.TOKEN_BODY.get(body, "ait_value"),
            withdraw,
        )
        if delivered is not None:
            res.ait.append(delivered)
        if returned is not None:
            res.ait_returned.append(returned)
        if anomaly is None:
            self.rlfd.token_received()
        self._peer_wants_copies = bool(enc.TOKEN_BODY.get(body, "copies"))
        if counts_anomaly or anomaly:
            self._decide_restart(res, counts_anomaly or anomaly)

    # --- data plane -----------------------------------------------------------------------

    def _deliver_frames(self, frames, res):
        self._events.frames_delivered += len(frames)
        res.frames.extend(frames)

    def _data_result(self, res, result):
        """A data-plane word's outcome: (malformed, anomaly). The framer recovers from the
        anomaly itself (PROTOCOL.md 4.6); it is counted here."""
        malformed, anomaly = result
        if malformed:
            self._events.malformed += 1
        if anomaly:
            self._recovery_anomaly(res, anomaly)

    def _recovery_anomaly(self, res, reason):
        self._events.anomalies += 1
        res.events.append(("recovery", reason))

    def _rx_resync(self, body, res):
        anomaly, frames = self.framer.rx_resync(body)
        self._deliver_frames(frames, res)
        if anomaly:
            self._decide_restart(res, anomaly)

    # --- the cycle --------------------------------------------------------------------------

    def step(self, rx, frames=None, ait=None, withdraw=False, ait_taken=True, frames_taken=()) -> StepResult:
        """One link clock. ``rx``: received word or None. ``frames``: {cls: 64 bytes}, only for
        classes where :meth:`frame_ready`. ``ait``: a token value, only when :attr:`ait_ready`.
        ``withdraw``: retract the token being offered if the peer accepts it. ``ait_taken``: the
        user takes a delivered token this cycle (False holds it, so further offers are rejected).
        ``frames_taken``: with ``user_takes``, the classes whose :meth:`frame_out` the user takes
        this cycle (the frames go in ``StepResult.taken``).
        """
        self._validate_inputs(rx, frames, ait, withdraw, ait_taken)
        frames_taken = self._check_taken(frames_taken)
        self.counters = _snapshot(self._events)
        res = StepResult()
        restarting = self.restart_cycle
        if restarting:
            self._do_restart()
        # A and S both read the state at the start of the cycle; S's choice is made after A.
        was_up = self.up
        rtt_before, self._rtt_past = self._rtt_past[0], (self._rtt_past[1], self.rtt)
        entangle = not self.up and self.training.ready_to_entangle
        # The user can only take a token it sees: one delivered before this cycle.
        ait_taken = ait_taken and self.tokens.ait_out is not None
        choice = self._choose()
        self._since_fill = 0 if choice.word == _IDLE else self._since_fill + 1
        offering = choice.token is not None and choice.token.offer
        returned = self.tokens.user_give(ait, withdraw, offering)
        if returned is not None:
            res.ait_returned.append(returned)
        if not restarting:
            self._apply(self._rx_q, res, withdraw)
        self.tokens.user_take(ait_taken)
        for c, frame in (frames or {}).items():
            self.framer.hand_in(c, frame)
        self._watchdogs(res, was_up, entangle)
        self._commit(choice)
        self.framer.end_cycle(self.up, self._wire_prev, self.cycle)
        if not (restarting or was_up or self.up):
            self.framer.follow_rtt(rtt_before)
        self._settle_end(res)
        if self.framer.user_takes:
            res.taken.extend((c, self.framer.take_frame(c)) for c in frames_taken)
            self.framer.end_delivery()
        self._rx_q, self._rx_word = self._check(rx), rx
        # The pipeline moves on: B2's word goes on the wire, B1's moves to B2, S's choice to B1.
        self._wire_prev = self._on_wire
        self.tx_word, self._on_wire = self._building.word, self._building.data
        self._building, self._chosen = self._chosen, choice
        self.cycle += 1
        return res

    def _check(self, rx):
        """Stage C: the received word checked; a malformed one is counted here."""
        if rx is None:
            return None
        checked = check_word(rx)
        if checked is None:
            self._events.malformed += 1
        return checked

    def _apply(self, checked, res, withdraw):
        """Stage A: the word that arrived in the previous cycle."""
        self.rlfd.observe(checked is not None, self._rx_word is not None)
        copy = self.next_is_copy
        idle = checked is not None and checked.tag.kind == Kind.CONTROL and checked.tag.code == Ctl.IDLE
        if checked is None:
            if self._rx_word is not None:
                self._noisy_at = self.cycle
            # A malformed or missing word may have been the peer's answer: ask for it again
            # (PROTOCOL.md 3.1).
            if self.up and not self._ask_due and self._may_ask_again():
                self._ask_due = True
            return
        if copy:
            # A copy with the again flag whose original was applied: the peer lost my answer.
            again = enc.TOKEN_BODY.get(checked.body, "again")
            if self.up and again and not self._resend_due and self._may_ask_again():
                self._resend_due = not self.tokens.due
            return
        if idle:
            return
        tag, slice_, body = checked.tag, checked.slice, checked.body
        if not self.up:
            if tag.kind == Kind.CONTROL and tag.code in enc.TRAINING_CODES:
                anomaly = self.training.receive(tag.code, body, self.cycle - APPLY_DELAY)
                if anomaly:
                    self._decide_restart(res, anomaly)
            elif tag.kind == Kind.DATA:
                self.training.receive_check(tag.cls, tag.index, slice_)
            elif (
                self.state == LinkState.READY
                and tag.kind == Kind.CONTROL
                and tag.code in _PLAIN_TOKENS
                and self.training.heard_ready
                and not self.leader
            ):
                # The leader is already UP: our READY reached it, its READY(heard) did not reach us.
                self._entangle(res)
                self._rx_token(tag.code, body, res, withdraw)
            return
        if tag.kind == Kind.DATA:
            if self.cycle < self._check_grace_until and slice_ == enc.check_slice(
                self.training.peer_nonce, tag.cls, tag.index
            ):
                return  # the peer's check frame, sent before it knew I had it (2.3)
            self._data_result(res, self.framer.rx_data(tag, slice_))
        elif tag.kind == Kind.ECHO:
            self._data_result(res, self.framer.rx_echo(tag, slice_))
        elif tag.code in enc.TOKEN_CODES:
            self._rx_token(tag.code, body, res, withdraw)
        elif tag.code == Ctl.DIGEST:
            self._data_result(res, self.framer.rx_digest(body))
        elif tag.code == Ctl.RESYNC:
            self._rx_resync(body, res)
        elif tag.code == Ctl.RESYNC_ACK:
            self.framer.rx_ack(body)
        elif tag.code == Ctl.NAK:
            self._data_result(res, (False, self.framer.rx_nak()))
        elif tag.code == Ctl.REPLAY:
            self._data_result(res, self.framer.rx_replay(body))
        elif tag.code == Ctl.TRAIN_HELLO and enc.HELLO_BODY.get(body, "fault"):
            self._decide_restart(res, Reason.REMOTE_FAULT, suspect=True, keep=bool(enc.HELLO_BODY.get(body, "keep")))
        elif tag.code != Ctl.TRAIN_READY:
            # READY may still arrive from a peer finishing its handshake; HELLO or PROBE mean
            # the peer dropped out of UP.
            self._decide_restart(res, "peer is training")

    def _may_ask_again(self) -> bool:
        """With token copies, while UP, waiting for the peer's token word in this session and
        past its earliest cycle, with a token word of this session to send again (PROTOCOL.md
        3.1)."""
        return self.p.token_copies and self._last_token is not None and self.rlfd.may_ask(self.cycle)

    def _validate_inputs(self, rx, frames, ait, withdraw, ait_taken):
        """All inputs are checked before anything changes: a bad call loses nothing. A wrong
        type is a TypeError, a value out of range a ValueError; both name the argument."""
        if rx is not None:
            if not _is_int(rx):
                raise TypeError(f"rx must be None or an int word, not {type(rx).__name__}")
            if not 0 <= rx < _WORD_LIMIT:
                raise ValueError(f"rx must be a {enc.WORD_BITS}-bit word in [0, 2**{enc.WORD_BITS}), not {rx:#x}")
        if frames is not None and not isinstance(frames, dict):
            raise TypeError(f"frames must be a dict {{class: 64 bytes}} or None, not {type(frames).__name__}")
        for c, frame in (frames or {}).items():
            self._check_class("frames key", c)
            if not self.framer.frame_ready(c):
                raise ValueError(f"frames[{c}] offered while frame_ready({c}) is False")
            if not isinstance(frame, (bytes, bytearray)):
                raise TypeError(f"frames[{c}] must be bytes, not {type(frame).__name__}")
            if len(frame) != enc.FRAME_BYTES:
                raise ValueError(f"frames[{c}] must be {enc.FRAME_BYTES} bytes, not {len(frame)}")
        if ait is not None:
            if not _is_int(ait):
                raise TypeError(f"ait must be None or an int token value, not {type(ait).__name__}")
            if not 0 <= ait < 1 << enc.AIT_VALUE_BITS:
                raise ValueError(f"ait must be a {enc.AIT_VALUE_BITS}-bit integer, not {ait!r}")
            if not self.ait_ready:
                raise ValueError("ait offered while ait_ready is False")
        for name, flag in (("withdraw", withdraw), ("ait_taken", ait_taken)):
            if not isinstance(flag, bool):
                raise TypeError(f"{name} must be a bool, not {type(flag).__name__}")

    def frame_out(self, c: int):
        """With ``user_takes``: the frame class ``c``'s stream offers now, or None."""
        self._check_class("class", c)
        return self.framer.frame_out(c)

    def _check_taken(self, frames_taken) -> tuple:
        """``frames_taken`` as a tuple of distinct classes, each offering a frame now."""
        if type(frames_taken) is tuple and not frames_taken:
            return ()
        try:
            taken = tuple(frames_taken)
        except TypeError:
            raise TypeError(f"frames_taken must be an iterable of classes, not {type(frames_taken).__name__}") from None
        if taken and not self.framer.user_takes:
            raise ValueError("frames_taken needs an end built with user_takes=True")
        if len(set(taken)) != len(taken):
            raise ValueError(f"frames_taken names a class twice: {taken}")
        for c in taken:
            self._check_class("frames_taken", c)
            if self.framer.frame_out(c) is None:
                raise ValueError(f"frames_taken names class {c}, which offers no frame now")
        return taken

    def _watchdogs(self, res, was_up, entangle):
        """A, after the word and the user: entangle (decided from the state at the start of
        the cycle), the probe bound, the RLFD, the recovery deadlines and a degraded link."""
        arrived = self.cycle - APPLY_DELAY
        if not self.up:
            if entangle:
                self._entangle(res)
            else:
                self.training.tick(arrived)
            return
        if not was_up:
            return
        reason = self.rlfd.check(self.cycle)
        self.framer.advance()
        anomaly = self.framer.watchdog(arrived, self.rtt + self._echo_allowance, self.rtt + self._quiet_allowance)
        if anomaly:
            self._recovery_anomaly(res, anomaly)
        if reason:
            self._decide_restart(res, reason, suspect=True, keep=reason == Reason.TOKEN_OVERDUE and self.rlfd.keeps_rtt)
        elif self.framer.degraded:
            self._decide_restart(res, Reason.DEGRADED, suspect=True)

    # --- S: the word for three cycles from now ----------------------------------------------

    def _choose(self) -> _Choice:
        """S's choice from the state at the start of the cycle (PROTOCOL.md 4.2), or the fill
        word when one is due and the choice is not a word whose timing the round trip depends
        on (a token, a probe echo); changes nothing."""
        choice = self._choose_word()
        if (
            self._since_fill >= FILL_INTERVAL - 1
            and choice.token is None
            and not choice.copy
            and not (choice.training is not None and choice.training.code == Ctl.TRAIN_PROBE_ECHO)
        ):
            return _IDLE_CHOICE
        return choice

    def _choose_word(self) -> _Choice:
        if not self.up:
            t = self.training.choose(self.cycle, self.half_state_body(), held=self.cycle < self.held_until)
            if t.check is not None:
                cls, index, slice_ = t.check
                return _Choice(make_word(data_tag(cls, index), slice_), training=t)
            return _Choice(control_word(t.code, t.body), training=t)
        if self._copy_due is not None:
            return _Choice(self._copy_due, copy=True)
        if not self.tokens.due and self._ask_due:
            return _Choice(self._last_token ^ TOKEN_AGAIN_DELTA, copy=True, ask=True)
        if not self.tokens.due and self._resend_due:
            return _Choice(self._last_token ^ TOKEN_COPY_DELTA, copy=True, resend=True)
        if self.tokens.due:
            t = self.tokens.choose(self.leader)
            noisy = self.p.token_copies and self._noisy_at is not None and self.cycle - self._noisy_at < NOISE_WINDOW
            body = enc.TOKEN_BODY.pack(
                counts=self.framer.counts_field(),
                ait_seq=t.seq,
                ait_value=t.value,
                copies=int(noisy),
                turn=self._tx_turn,
            )
            return _Choice(control_word(t.code, body), token=t, counts=tuple(self.framer.confirmed))
        d = self.framer.choose()
        return _IDLE_CHOICE if d is None else _Choice(d.word, data=d)

    def _commit(self, choice: _Choice):
        """After A: what S's choice of this cycle changes (PROTOCOL.md 2.2)."""
        self.training.commit(choice.training, self.cycle)
        copies = choice.token is not None and self.p.token_copies and self._peer_wants_copies
        self._copy_due = choice.word ^ TOKEN_COPY_DELTA if copies else None
        if choice.ask or choice.resend:
            self._ask_due = self._ask_due and not choice.ask
            self._resend_due = self._resend_due and not choice.resend
            self._events.token_asks += choice.ask
            self.rlfd.rearm(self.cycle, self.rtt, asked=choice.ask)
        if choice.token is not None:
            self._last_token = choice.word
            self._ask_due = self._resend_due = False
            self._tx_turn ^= 1
            self.tokens.commit(choice.token)
            self.framer.token_sent(choice.counts)
            self.rlfd.arm(self.cycle, self.rtt)
        elif choice.data is not None:
            self.framer.commit(choice.data, self.cycle, self.rtt, self.p.margin)
