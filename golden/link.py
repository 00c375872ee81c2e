"""One OAE link endpoint in the link clock domain, cycle by cycle: the executable form of
docs/PROTOCOL.md sections 2-5.

:class:`LinkCore` composes the parts, each with its own module: training (golden/training.py),
the token plane (golden/token_plane.py), the data plane (golden/framer.py) and the failure
detector (golden/rlfd.py); it owns what joins them: the order of work within a cycle, the
scheduler's first choice (the token), reconciliation at entangle and the reaction to anomalies.

Twin of ``rtl.link.LinkCore`` (rtl/link.py), which matches it cycle for cycle. The RTL's
``LinkEndpoint`` adds bisynchronous FIFOs on the user side; it has no golden twin because FIFO
timing depends on clock phase (golden/cdc.py checks the FIFOs at transaction level instead).

Timing contract:

* ``tx_word`` is a register: the word this end drives on the link during the current cycle.
* ``step(rx, ...)`` is one link clock edge: it consumes the word received this cycle (``None`` =
  no signal) and this cycle's user inputs, updates the state and computes the next ``tx_word``.

User side (transactions): frames go in with ``frames={cls: bytes}`` when ``frame_ready(cls)``;
tokens go in with ``ait=value`` when ``ait_ready``; a token being offered can be withdrawn with
``withdraw=True``. Deliveries come back in the :class:`StepResult`.

Failure behaviour: malformed words are counted and dropped. Protocol anomalies (a slice out of
sequence, an echo that does not match or echoes nothing, a token where none is due...) and RLFD
suspicions (token overdue, loss of signal) send the end back to training, which reconciles the
atomic token transfer and the frame counts with the peer before entangling again. Nothing the
user handed in is lost or delivered twice. A bad call (a word that is not a 72-bit integer, a
frame for a class that is not ready, a flag that is not a bool) raises before anything changes.
"""

from dataclasses import dataclass, field, make_dataclass

from . import encoding as enc
from .control import check_word, control_word
from .encoding import Ctl, Kind, LinkState, Reason
from .framer import Framer
from .params import LinkParams
from .rlfd import Rlfd
from .token_plane import TokenPlane
from .training import Training
from .slice import control_tag, make_word

_IDLE = make_word(control_tag(Ctl.IDLE), 0)
_PLAIN_TOKENS = (Ctl.TICK, Ctl.TOCK)
_WORD_LIMIT = 1 << enc.WORD_BITS


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass
class StepResult:
    """What one cycle handed to the user, and what happened."""
    frames: list = field(default_factory=list)      # [(cls, bytes)] delivered, in order
    ait: list = field(default_factory=list)         # token values delivered to this user
    ait_returned: list = field(default_factory=list)  # own token values given back (withdrawn)
    events: list = field(default_factory=list)      # [(name, detail)]


# Event counts of one end, a field per name of ``encoding.STATUS_COUNTERS``: the RTL status
# port carries the same names (``status.counters``), modulo 2**STATUS_COUNTER_BITS.
Counters = make_dataclass("Counters", [(name, int, 0) for name in enc.STATUS_COUNTERS])


class LinkCore:
    """One end of an OAE link. See the module docstring for the timing contract.

    ``params``: a :class:`golden.params.LinkParams`, or its fields as keyword arguments."""

    def __init__(self, params: LinkParams | None = None, **kwargs):
        self.p = LinkParams.resolve(params, kwargs)
        self.cycle = 0
        self.counters = Counters()
        # Token plane and data plane keep their half-states across trainings: reconciliation
        # needs them.
        self.tokens = TokenPlane()
        self.framer = Framer(self.p, self.counters)
        self.suspect = False
        self.up = False
        self.rlfd = Rlfd(self.p)
        self.training = Training(self.p, self.counters)
        self._enter_training(initial=True)
        self.tx_word = self._schedule()

    # --- observation ----------------------------------------------------------------------

    @property
    def balance(self) -> int:
        return self.tokens.balance

    def frame_ready(self, cls: int) -> bool:
        self._check_class("cls", cls)
        return self.framer.frame_ready(cls)

    def _check_class(self, name, cls):
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

    # --- training ------------------------------------------------------------------------

    def _enter_training(self, initial=False, remeasure=True, fault=False):
        self.up = False
        if not initial:
            self.counters.trainings += 1
            self.training.start(remeasure=remeasure, fault=fault)
        self.tokens.leave_session()
        self.rlfd.clear()
        self.framer.leave_session()

    def _half_state_body(self) -> int:
        """The endpoint's part of the READY body: AIT halves and confirmed counts."""
        return self.tokens.half_state() | self.framer.counts_body(enc.READY_CONFIRMED_LSB)

    def _entangle(self, res):
        """Both half-states are known: reconcile (PROTOCOL.md 3.5), then enter UP."""
        peer = self.training.peer_half
        delivered, conflict = self.tokens.reconcile(peer)
        if delivered is not None:
            res.ait.append(delivered)
        self.counters.reconcile_conflicts += conflict
        frames, conflicts = self.framer.reconcile(peer)
        self._deliver_frames(frames, res)
        self.counters.reconcile_conflicts += conflicts
        self.up = True
        self.suspect = False
        self.rlfd.clear()
        res.events.append(("up", self.rtt))
        self.tokens.enter_session(self.leader)
        if not self.leader:
            self.rlfd.expect_first_token(self.cycle, self.rtt)

    def _restart(self, res, reason: str | Reason, suspect=False):
        if suspect:
            self.counters.suspicions += 1
            self.suspect = True
            res.events.append(("suspect", reason))
        else:
            self.counters.anomalies += 1
            res.events.append(("anomaly", reason))
        # An anomaly comes from a word the link carried: the link is alive and the round trip
        # unchanged. A suspicion may come from drift, so the round trip is measured again, and
        # the peer is told (remote fault) so that it suspects too rather than guess.
        self._enter_training(remeasure=suspect, fault=suspect)

    def _malformed(self):
        self.counters.malformed += 1
        return "malformed"

    # --- token plane ----------------------------------------------------------------------

    def _token_body(self, seq=0, value=0) -> int:
        return (seq << enc.TOKEN_AIT_SEQ_LSB | value << enc.TOKEN_AIT_VALUE_LSB
                | self.framer.counts_body(enc.TOKEN_COMMIT_LSB))

    def _rx_token(self, code, body, res, withdraw):
        if self.tokens.due or not self.rlfd.waiting:
            return self._restart(res, "token received while none is due")
        own_plain = Ctl.TICK if self.leader else Ctl.TOCK
        if code == own_plain:
            return self._restart(res, "received my own plain token kind")
        anomaly, frames = self.framer.token_received(body)
        self._deliver_frames(frames, res)
        if anomaly:
            return self._restart(res, anomaly)
        anomaly, delivered, returned = self.tokens.receive(
            code, enc.field(body, enc.TOKEN_AIT_SEQ_LSB, enc.AIT_SEQ_BITS),
            enc.field(body, enc.TOKEN_AIT_VALUE_LSB, enc.AIT_VALUE_BITS), withdraw)
        if anomaly:
            return self._restart(res, anomaly)
        if delivered is not None:
            res.ait.append(delivered)
        if returned is not None:
            res.ait_returned.append(returned)
        self.rlfd.token_received()

    # --- data plane -----------------------------------------------------------------------

    def _deliver_frames(self, frames, res):
        self.counters.frames_delivered += len(frames)
        res.frames.extend(frames)

    def _data_result(self, res, result):
        malformed, anomaly = result
        if malformed:
            self._malformed()
        if anomaly:
            self._restart(res, anomaly)

    # --- the cycle --------------------------------------------------------------------------

    def step(self, rx, frames=None, ait=None, withdraw=False, ait_taken=True) -> StepResult:
        """One link clock. ``rx``: received word or None. ``frames``: {cls: 64 bytes}, only for
        classes where :meth:`frame_ready`. ``ait``: a token value, only when :attr:`ait_ready`.
        ``withdraw``: retract the token being offered if the peer accepts it. ``ait_taken``: the
        user takes a delivered token this cycle (False holds it, so further offers are rejected).
        """
        self._validate_inputs(rx, frames, ait, withdraw, ait_taken)
        res = StepResult()
        self._receive(rx, res, withdraw)
        self._user_inputs(frames, ait, withdraw, ait_taken, res)
        self._watchdogs(res)
        self.cycle += 1
        self.tx_word = self._schedule()
        return res

    def _receive(self, rx, res, withdraw):
        checked = None if rx is None else check_word(rx)
        self.rlfd.observe(checked is not None)
        if checked is None:
            if rx is not None:
                self._malformed()
            return
        tag, slice_, body = checked.tag, checked.slice, checked.body
        if tag.kind == Kind.CONTROL and tag.code == Ctl.IDLE:
            return
        if self.state != LinkState.UP:
            if tag.kind == Kind.CONTROL and tag.code in enc.TRAINING_CODES:
                anomaly = self.training.receive(tag.code, body, self.cycle)
                if anomaly:
                    self._restart(res, anomaly)
            elif (self.state == LinkState.READY and tag.kind == Kind.CONTROL and tag.code in _PLAIN_TOKENS
                  and self.training.heard_ready and not self.leader):
                # The leader is already UP: our READY reached it, its READY(heard) did not reach us.
                self._entangle(res)
                self._rx_token(tag.code, body, res, withdraw)
            return
        if tag.kind == Kind.DATA:
            self._data_result(res, self.framer.rx_data(tag, slice_))
        elif tag.kind == Kind.ECHO:
            self._data_result(res, self.framer.rx_echo(tag, slice_))
        elif tag.code in enc.TOKEN_CODES:
            self._rx_token(tag.code, body, res, withdraw)
        elif tag.code == Ctl.DIGEST:
            self._data_result(res, self.framer.rx_digest(body))
        elif tag.code == Ctl.TRAIN_HELLO and enc.field(body, enc.HELLO_FAULT_BIT, 1):
            self._restart(res, Reason.REMOTE_FAULT, suspect=True)
        elif tag.code != Ctl.TRAIN_READY:
            # READY may still arrive from a peer finishing its handshake; HELLO or PROBE mean
            # the peer dropped out of UP.
            self._restart(res, "peer is training")

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
            if not self.frame_ready(c):
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

    def _user_inputs(self, frames, ait, withdraw, ait_taken, res):
        for c, frame in (frames or {}).items():
            self.framer.hand_in(c, frame)
        returned = self.tokens.user(ait, withdraw, ait_taken)
        if returned is not None:
            res.ait_returned.append(returned)

    def _watchdogs(self, res):
        if not self.up and self.training.ready_to_entangle:
            return self._entangle(res)
        if not self.up:
            self.training.tick(self.cycle)
            return
        reason = self.rlfd.check(self.cycle)
        if reason:
            return self._restart(res, reason, suspect=True)
        if self.framer.echo_overdue(self.cycle, self.rtt + self.p.margin + self.p.echo_slack):
            return self._restart(res, "echo overdue")

    def _schedule(self) -> int:
        """Choose the word for the next cycle (priority order of PROTOCOL.md 4.2)."""
        if self.state != LinkState.UP:
            return self._schedule_training()
        if self.tokens.due:
            return self._send_token()
        word = self.framer.next_word(self.cycle)
        return _IDLE if word is None else word

    def _schedule_training(self):
        code, body = self.training.next_word(self.cycle, self._half_state_body())
        return control_word(code, body)

    def _send_token(self):
        self.rlfd.token_sent(self.cycle, self.rtt)
        self.framer.token_sent()
        code, seq, value = self.tokens.next_word(self.leader)
        return control_word(code, self._token_body(seq, value))
