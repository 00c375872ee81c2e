"""One OAE link endpoint, cycle by cycle: the executable form of docs/PROTOCOL.md sections 2-5.

It composes the parts, each with its own module: training (golden/training.py), the token
plane (golden/token_plane.py), the data plane (golden/framer.py) and the failure detector
(golden/rlfd.py); it owns what joins them: the order of work within a cycle, the scheduler's
first choice (the token), reconciliation at entangle and the reaction to anomalies.

Twin of rtl/link.py (the RTL endpoint, not yet built). Timing contract (what the RTL matches cycle for cycle):

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
user handed in is lost or delivered twice.
"""

from dataclasses import dataclass, field

from . import encoding as enc
from .control import check_word, control_word
from .encoding import Ctl, Kind, LinkState
from .framer import Framer
from .rlfd import Rlfd
from .token_plane import TokenPlane
from .training import Training
from .slice import control_tag, frame_to_slices, make_word

_IDLE = make_word(control_tag(Ctl.IDLE), 0)
_PLAIN_TOKENS = (Ctl.TICK, Ctl.TOCK)


@dataclass(frozen=True)
class LinkParams:
    """Generation parameters of an endpoint; validated here, at construction."""
    num_classes: int = 2
    echo_mode: str = "digest"      # "digest" or "full"
    window: int = 16               # frames per class the peer may hold unconfirmed
    margin: int = 8                # RLFD margin in cycles, see PROTOCOL.md 5.1
    los_cycles: int = 8            # cycles without a well-formed word = loss of signal
    probes: int = 4                # RTT probes per training
    max_rtt: int = 4096            # design bound on the round trip (cable + pipeline)
    port_id: int = 0
    nonce_seed: int = 1

    def __post_init__(self):
        def need(name, ok, what):
            if not ok:
                raise ValueError(f"{name} must be {what}, not {getattr(self, name)!r}")
        def is_int(v):
            return isinstance(v, int) and not isinstance(v, bool)
        need("num_classes", is_int(self.num_classes) and 1 <= self.num_classes <= enc.MAX_CLASSES,
             f"an integer in [1, {enc.MAX_CLASSES}]")
        need("echo_mode", self.echo_mode in ("digest", "full"), "'digest' or 'full'")
        need("window", is_int(self.window) and 1 <= self.window <= enc.COUNT_MOD // 2 - 1,
             f"an integer in [1, {enc.COUNT_MOD // 2 - 1}]")
        need("margin", is_int(self.margin) and 1 <= self.margin <= 1 << 16, "an integer in [1, 65536]")
        # A cut is then suspected at the far end within los_cycles + L + 1 <= RTT + margin.
        need("los_cycles", is_int(self.los_cycles) and 2 <= self.los_cycles <= min(1024, self.margin + 2),
             "an integer in [2, margin + 2] (so a cut is suspected within RTT + margin)")
        need("probes", is_int(self.probes) and 1 <= self.probes <= 64, "an integer in [1, 64]")
        need("max_rtt", is_int(self.max_rtt) and 3 <= self.max_rtt <= 1 << 20, "an integer in [3, 2**20]")
        need("port_id", is_int(self.port_id) and 0 <= self.port_id < 1 << enc.PORT_ID_BITS,
             f"an integer in [0, {(1 << enc.PORT_ID_BITS) - 1}]")
        need("nonce_seed", is_int(self.nonce_seed) and 0 < self.nonce_seed < 1 << 32, "a nonzero 32-bit integer")

    @property
    def echo_slack(self) -> int:
        """Cycles an echo may wait in the peer's reverse queue (PROTOCOL.md 4.5)."""
        return enc.echo_slack(self.num_classes, self.window, self.echo_mode == "full")


@dataclass
class StepResult:
    """What one cycle handed to the user, and what happened."""
    frames: list = field(default_factory=list)      # [(cls, bytes)] delivered, in order
    ait: list = field(default_factory=list)         # token values delivered to this user
    ait_returned: list = field(default_factory=list)  # own token values given back (withdrawn)
    events: list = field(default_factory=list)      # [(name, detail)]


@dataclass
class Counters:
    malformed: int = 0
    anomalies: int = 0
    suspicions: int = 0
    trainings: int = 0
    ties: int = 0
    reconcile_conflicts: int = 0
    frames_sent: int = 0
    frames_delivered: int = 0
    slices_sent: int = 0


class LinkEndpoint:
    """One end of an OAE link. See the module docstring for the timing contract."""

    def __init__(self, params: LinkParams | None = None, **kwargs):
        if params is not None and kwargs:
            raise ValueError("params and keyword parameters are exclusive; pass one or the other")
        self.p = params if params is not None else LinkParams(**kwargs)
        self.cycle = 0
        self.counters = Counters()
        # Token plane and data plane keep their half-states across trainings: reconciliation
        # needs them.
        self.tokens = TokenPlane()
        self.framer = Framer(num_classes=self.p.num_classes, window=self.p.window,
                             echo_mode=self.p.echo_mode, counters=self.counters)
        self.suspect = False
        self.up = False
        self.rlfd = Rlfd(self.p.margin, self.p.los_cycles)
        self.training = Training(port_id=self.p.port_id, nonce_seed=self.p.nonce_seed, probes=self.p.probes,
                                 max_rtt=self.p.max_rtt, margin=self.p.margin, counters=self.counters)
        self._enter_training(initial=True)
        self.tx_word = self._schedule()

    # --- observation ----------------------------------------------------------------------

    @property
    def balance(self) -> int:
        return self.tokens.balance

    def frame_ready(self, cls: int) -> bool:
        if not 0 <= cls < self.p.num_classes:
            raise ValueError(f"cls must be in [0, {self.p.num_classes}), not {cls!r}")
        return self.framer.frame_ready(cls)

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

    def _restart(self, res, reason, suspect=False):
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
        self._validate_inputs(frames, ait)
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
            self._restart(res, "remote fault", suspect=True)
        elif tag.code != Ctl.TRAIN_READY:
            # READY may still arrive from a peer finishing its handshake; HELLO or PROBE mean
            # the peer dropped out of UP.
            self._restart(res, "peer is training")

    def _validate_inputs(self, frames, ait):
        """All user inputs are checked before anything changes: a bad call loses nothing."""
        for c, frame in (frames or {}).items():
            if not self.frame_ready(c):
                raise ValueError(f"frames[{c}] offered while frame_ready({c}) is False")
            frame_to_slices(frame)
        if ait is not None:
            if not self.ait_ready:
                raise ValueError("ait offered while ait_ready is False")
            if not isinstance(ait, int) or isinstance(ait, bool) or not 0 <= ait < 1 << enc.AIT_VALUE_BITS:
                raise ValueError(f"ait must be a {enc.AIT_VALUE_BITS}-bit integer, not {ait!r}")

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
        """Choose the word for the next cycle (priority order of PROTOCOL.md 4.4)."""
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
