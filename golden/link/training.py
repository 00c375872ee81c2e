"""Training of one end: HELLO, PROBE, READY (docs/PROTOCOL.md 2.3). Twin of rtl/link/training.py.

It owns the nonce, the peer's identity, the RTT probes and the READY handshake. The endpoint
hands it every well-formed training word, asks it for the next training word (giving the bits
of its half-state that training does not own), and entangles when :attr:`ready_to_entangle`.

Pipeline (PROTOCOL.md 2.2): :meth:`receive` and :meth:`tick` are the A stage, stamped with the
cycle the word arrived; :meth:`choose` is S's decision, made from the state at the start of the
cycle without changing it, and :meth:`commit` makes it after A. A probe is timed from the cycle
it is on the wire (``WIRE_DELAY`` after S chose it) to the cycle its echo arrives.
"""

from dataclasses import dataclass

from golden import encoding as enc
from golden.encoding import Ctl, LinkState
from golden.params import WIRE_DELAY

_NONCE_MASK = (1 << enc.NONCE_BITS) - 1
_READY_NONCE_MASK = (1 << enc.READY_BODY.width("nonce")) - 1
_PROBE_MASK = (1 << enc.PROBE_BODY.width("number")) - 1


@dataclass(frozen=True)
class TrainingChoice:
    """The training word S chose, and what sending it changes: a control word (``code``,
    ``body``), or a slice of a check frame (``check``: class, index; PROTOCOL.md 2.3)."""

    code: Ctl
    body: int
    check: tuple | None = None


def nonce_lfsr_step(state: int) -> int:
    """One step of the Galois LFSR that draws training nonces (taps ``NONCE_LFSR_TAPS``)."""
    lsb = state & 1
    state >>= 1
    return state ^ enc.NONCE_LFSR_TAPS if lsb else state


class Training:
    """HELLO / PROBE / READY state of one end. ``phase`` is a :class:`LinkState` below UP.

    ``params``: the endpoint's :class:`golden.params.LinkParams` (port_id, nonce_seed, probes,
    max_rtt, margin). ``counters``: the endpoint's counters (ties are counted there)."""

    def __init__(self, params, counters):
        self.port_id, self.probes = params.port_id, params.probes
        self.num_classes = params.num_classes
        self.max_rtt, self.margin = params.max_rtt, params.margin
        self.counters = counters
        self._lfsr = params.nonce_seed
        self.rtt = None
        # The RTT of the last round, while it is measured again: it bounds the first probe.
        self.hint = None
        self.session = None  # the tag of the last session this end entangled in
        self.start(initial=True)

    def start(self, *, initial=False, remeasure=True, fault=False, keep=False, resume=False):
        """Begin a training round; keep the RTT unless ``remeasure``; ``fault`` flags HELLOs,
        ``keep`` (with ``fault``) tells the peer to keep its RTT too; ``resume``: the round follows
        a suspicion of the last session, which the end resumes if the peer does (2.3)."""
        self.phase = LinkState.HELLO
        self.fault, self.keep = fault, keep
        self.resume = resume and self.session is not None
        if remeasure:
            if self.rtt is not None:
                self.hint = self.rtt
            self.rtt = None
        if not initial:
            self._lfsr = nonce_lfsr_step(self._lfsr)
        self.nonce = self._lfsr & _NONCE_MASK
        self.peer_nonce, self.peer_port, self.heard, self.leader = None, None, False, False
        self.probe_number, self.probe_sent_at, self.probes_done, self.probe_rtts = 0, None, 0, []
        self.probe_echo_due = None
        self._samples_stale = False  # an echo came back after its probe was declared lost
        self._echo_fresh = False  # a probe applied this cycle: its echo is still owed
        self.peer_half, self.heard_ready, self.peer_heard_me, self.sent_heard = None, False, False, False
        self.peer_left_hello = False
        # The data-path check (2.3): per class, whether the peer's check frame arrived whole in
        # this round, and the index of its next slice; the next slice of mine to send, and
        # whether one whole pass of my check frames has been sent.
        self.checked = [False] * self.num_classes
        self._check_next = [0] * self.num_classes
        self._check_at, self._check_pass = (0, 0), False

    def entangled(self):
        """The end entangled: this round's nonces make the session a later round may resume."""
        self.session = enc.session_tag(self.nonce, self.peer_nonce)

    @property
    def measuring(self) -> bool:
        """A probe may be out: in PROBE, and in READY of a resumed round until its one sample."""
        return self.phase == LinkState.PROBE or (self.phase == LinkState.READY and self.rtt is None)

    @property
    def checks_done(self) -> bool:
        """The peer's check frame of every class arrived whole in this round."""
        return all(self.checked)

    def receive_check(self, cls: int, index: int, slice_: int):
        """A applies a well-formed DATA word while not UP: a slice of the peer's check frame of
        class ``cls`` if it is the one expected (2.3); anything else starts the class again."""
        if not self.heard or cls >= self.num_classes:
            return
        match = slice_ == enc.check_slice(self.peer_nonce, cls, index)
        if match and (index == self._check_next[cls] or index == 0):
            self._check_next[cls] = (index + 1) % enc.SLICES_PER_FRAME
            self.checked[cls] |= index == enc.SLICES_PER_FRAME - 1
        else:
            self._check_next[cls] = 0

    @property
    def ready_to_entangle(self) -> bool:
        return self.phase == LinkState.READY and self.heard_ready and self.peer_heard_me and self.sent_heard

    def _after_hello(self):
        """Both nonces are known to both ends. Measure the RTT unless it is still valid."""
        self.phase = LinkState.PROBE if self.rtt is None else LinkState.READY

    def receive(self, code, body, cycle) -> str | None:
        """A applies a well-formed training word that arrived at ``cycle``. Returns an anomaly,
        or None.

        While UP the endpoint does not call this (PROTOCOL.md 8 gives UP's rules)."""
        if code == Ctl.TRAIN_HELLO:
            pn = enc.HELLO_BODY.get(body, "nonce")
            pport = enc.HELLO_BODY.get(body, "port")
            if self.phase != LinkState.HELLO:
                return "peer restarted training" if pn != self.peer_nonce else None
            if (pn, pport) == (self.nonce, self.port_id):
                self.counters.ties += 1
                self._lfsr = nonce_lfsr_step(self._lfsr)
                self.nonce = self._lfsr & _NONCE_MASK
                self.heard = False
                return None
            self.peer_nonce, self.peer_port, self.heard = pn, pport, True
            self.leader = (self.nonce, self.port_id) > (pn, pport)
            if (
                enc.HELLO_BODY.get(body, "fault")
                and enc.HELLO_BODY.get(body, "keep")
                and self.rtt is None
                and self.hint is not None
            ):
                # The peer saw the lost token corrupted: the round trip did not change.
                self.rtt = self.hint
            if (
                self.resume
                and enc.HELLO_BODY.get(body, "resume")
                and enc.HELLO_BODY.get(body, "session") == self.session
            ):
                # The peer resumes the same session: its HELLO is the evidence, no second crossing
                # is needed, and the one sample of the round trip is taken in READY (2.3).
                self.phase = LinkState.READY
            elif enc.HELLO_BODY.get(body, "heard") and enc.HELLO_BODY.get(body, "peer_nonce") == self.nonce:
                self._after_hello()
        elif code == Ctl.TRAIN_PROBE:
            # Echoed in any phase, but it does not take this end out of HELLO: a probe does not
            # say which nonce of mine its sender heard, and one sent before this end restarted
            # would take it to PROBE, where the peer's new HELLO then restarts it, and so on.
            if self.heard and enc.PROBE_BODY.get(body, "nonce") == self.peer_nonce:
                self.peer_left_hello = True
                self.probe_echo_due, self._echo_fresh = body, True
        elif code == Ctl.TRAIN_PROBE_ECHO:
            # (An echo does not show that the peer left HELLO: it echoes in HELLO too.)
            mine = enc.PROBE_BODY.get(body, "nonce") == self.nonce
            number = enc.PROBE_BODY.get(body, "number")
            if mine and self.measuring and number != self.probe_number & _PROBE_MASK:
                # The echo of a probe already declared lost: the round trip outgrew the bound
                # the samples set. They are discarded and the bound is max_rtt again (from the
                # next cycle), so training cannot wait for echoes it will always call lost.
                self.counters.probes_late += 1
                self._samples_stale = True
                self.hint = None
            elif mine and self.measuring and self.probe_sent_at is not None:
                self.probe_rtts.append(cycle - self.probe_sent_at)
                self.probe_sent_at = None
                self.probe_number += 1
                self.probes_done += 1
                if self.phase == LinkState.READY or self.probes_done == self.probes:
                    self.rtt = max(self.probe_rtts)
                    self.phase = LinkState.READY
        elif code == Ctl.TRAIN_READY:
            if self.heard and enc.READY_BODY.get(body, "nonce") == self.peer_nonce & _READY_NONCE_MASK:
                self.peer_half = body
                self.heard_ready = True
                self.peer_left_hello = True
                if enc.READY_BODY.get(body, "heard"):
                    self.peer_heard_me = True
        return None

    def tick(self, cycle):
        """A, after this cycle's word, which arrived at ``cycle``: a probe not answered within
        its bound (as it was at the start of the cycle) was lost."""
        if self.measuring and self.probe_sent_at is not None:
            # A probe not back within the measured round trip plus margin was lost; until one
            # probe of this round returned, the round trip of the last round stands in for it,
            # and without one only the design bound max_rtt is known. The cap keeps every sample
            # within max_rtt + margin, which the RTT registers are sized for.
            known = max(self.probe_rtts) if self.probe_rtts else self.hint
            bound = self.max_rtt if known is None else min(known, self.max_rtt) + self.margin
            if cycle - self.probe_sent_at > bound:
                self.probe_sent_at = None
                self.probe_number += 1
        if self._samples_stale:
            self.probe_rtts, self.probes_done, self._samples_stale = [], 0, False

    def choose(self, cycle, half_state, held=False) -> TrainingChoice:
        """The training word S sends in ``cycle``; changes nothing. ``half_state``: the
        endpoint's READY body bits below the heard-ready bit (AIT halves, confirmed counts);
        ``held``: a degraded link's hold is on, so heard-ready is not said (5.2)."""
        if self.probe_echo_due is not None:
            return TrainingChoice(Ctl.TRAIN_PROBE_ECHO, self.probe_echo_due)
        if self.measuring and self.probe_sent_at is None:
            return TrainingChoice(
                Ctl.TRAIN_PROBE,
                enc.PROBE_BODY.pack(number=self.probe_number & _PROBE_MASK, nonce=self.nonce),
            )
        # The check frames (2.3), until the peer says they arrived: one whole pass back to back
        # on entering READY, then every other cycle once the peer left HELLO.
        if (
            self.phase == LinkState.READY
            and not self.peer_heard_me
            and (not self._check_pass or (self.peer_left_hello and cycle % 2 == 1))
        ):
            cls, index = self._check_at
            return TrainingChoice(Ctl.TRAIN_READY, 0, check=(cls, index, enc.check_slice(self.nonce, cls, index)))
        # A peer still in HELLO needs my HELLO(heard) to move on; it may have missed it. The
        # parity is that of the cycle S chooses in (the RTL's cycle counter).
        if self.phase == LinkState.READY and (self.peer_left_hello or cycle % 2 == 0):
            return TrainingChoice(
                Ctl.TRAIN_READY,
                # Heard-ready only once the RTT is known and the peer's check frames came, and not
                # while a degraded link is held down: the peer may entangle on it (2.3, 5.2).
                half_state
                | enc.READY_BODY.pack(
                    heard=int(self.heard_ready and self.rtt is not None and self.checks_done and not held),
                    nonce=self.nonce & _READY_NONCE_MASK,
                ),
            )
        return TrainingChoice(
            Ctl.TRAIN_HELLO,
            enc.HELLO_BODY.pack(
                nonce=self.nonce,
                peer_nonce=self.peer_nonce or 0,
                heard=int(self.heard),
                port=self.port_id,
                fault=int(self.fault),
                keep=int(self.keep),
                resume=int(self.resume),
                session=self.session if self.resume else 0,
            ),
        )

    def commit(self, choice: TrainingChoice | None, cycle: int):
        """After A: S sent ``choice`` in ``cycle`` (None: it sent no training word)."""
        if choice is not None and choice.check is not None:
            cls, index = self._check_at
            if index + 1 < enc.SLICES_PER_FRAME:
                self._check_at = (cls, index + 1)
            else:
                self._check_pass |= cls + 1 == self.num_classes
                self._check_at = ((cls + 1) % self.num_classes, 0)
        elif choice is not None:
            if choice.code == Ctl.TRAIN_PROBE_ECHO and not self._echo_fresh:
                self.probe_echo_due = None
            elif choice.code == Ctl.TRAIN_PROBE:
                self.probe_sent_at = cycle + WIRE_DELAY
            elif choice.code == Ctl.TRAIN_READY:
                self.sent_heard |= bool(enc.READY_BODY.get(choice.body, "heard"))
        self._echo_fresh = False
