"""Two golden framers joined by a delay line, without the rest of the endpoint: the stimulus of
the framer's unit lockstep (cocotb_tests/framer_tb.py drives rtl/framer.py from end A's events).

It stands in for what golden/link.py does around a framer, reduced to what the data plane
needs: a token that circulates (the leader, A, sends the first one; an end that receives it
sends it on in the next cycle, carrying its commit counts), and sessions. Training is replaced
by a pause: on an anomaly, an overdue echo or a token lost for three round trips at either
end, both ends leave the session, send nothing for ``latency`` + 5 cycles (the line drains),
then reconcile against each other's confirmed counts and entangle together.

Each :meth:`FramerPair.step` returns :class:`EndEvents` for end A: every input the RTL framer
takes in that cycle, in the golden order, and what the golden framer did with them. Frames
delivered at either end are checked against what the other end handed in (in order, exactly
once, bit for bit), so the harness itself cannot hide a loss.
"""

import random
from collections import deque
from dataclasses import dataclass, field

from golden import encoding as enc
from golden.control import check_word, control_word
from golden.encoding import Ctl, Kind
from golden.framer import Framer
from golden.link import Counters
from golden.params import LinkParams


def _is_return(word) -> bool:
    checked = check_word(word)
    return checked is not None and (checked.tag.kind == Kind.ECHO or (
        checked.tag.kind == Kind.CONTROL and checked.tag.code == Ctl.DIGEST))


class FramerHarnessError(AssertionError):
    """A frame was lost, duplicated or corrupted between the two golden framers."""


@dataclass
class EndEvents:
    """End A's inputs in one cycle and the golden framer's answers, in step order."""
    rx: object = None               # golden.control.Checked routed to the framer, or None
    malformed: bool = False
    anomaly: bool = False           # from the receive step: the end restarts (restart_rx)
    ready: list = field(default_factory=list)       # frame_ready per class before the user step
    frames_in: dict = field(default_factory=dict)   # {class: bytes} handed in
    entangle: bool = False
    peer_half: int = 0
    conflicts: int = 0
    overdue: bool | None = None     # echo deadline judged after the receive step (None: not UP)
    restart_wd: bool = False
    up_final: bool = False
    token_send: bool = False
    tx_word: int | None = None      # the data-plane word chosen (None: token or not UP)
    counts: int = 0                 # confirmed counts after every step
    delivered: list = field(default_factory=list)   # [(class, bytes)] delivered this cycle
    slice_sent: bool = False
    frame_sent: bool = False


class _End:
    def __init__(self, params, leader):
        self.counters = Counters()
        self.framer = Framer(params, self.counters)
        self.leader = leader
        self.up = False
        self.token_due = False
        self.tx = None
        self.sent = [[] for _ in range(params.num_classes)]      # frames handed in, per class
        self.got = [0] * params.num_classes                       # frames delivered, per class


class FramerPair:
    """Golden framers A (leader) and B over a line of ``latency`` cycles each way; each word on
    the line has one random bit flipped with probability ``flip_rate`` and is lost (no signal)
    with probability ``drop_rate``, and an ECHO or DIGEST word with ``return_drop_rate``.
    Users hand in frames with probability ``frame_load`` per class and cycle, in bursts: every
    ``burst`` cycles traffic stops or starts. At every stop, every return word on its way to A
    for the next ``burst // 2`` cycles is lost, so that nothing later exposes the loss and the
    echo deadline alone must find it (if it is shorter than that)."""

    def __init__(self, params: LinkParams, *, latency=6, flip_rate=0.0, drop_rate=0.0, return_drop_rate=0.0,
                 frame_load=0.1, burst=400, seed=0):
        if not isinstance(params, LinkParams):
            raise TypeError(f"params must be a LinkParams, not {type(params).__name__}")
        self.p = params
        self.rng = random.Random(seed)
        self.latency, self.flip_rate, self.drop_rate = latency, flip_rate, drop_rate
        self.return_drop_rate = return_drop_rate
        self.frame_load, self.burst = frame_load, burst
        self.returns_lost_until = 0
        self.rtt = 2 * latency + 1
        self.bound = self.rtt + params.margin + params.echo_slack
        self.a, self.b = _End(params, leader=True), _End(params, leader=False)
        self.lines = {"ab": deque([None] * latency), "ba": deque([None] * latency)}
        self.cycle = 0
        self.down_until = latency + 5       # both ends start out of session
        self.last_token = 0
        self.sessions = 0
        self.restarts = 0

    def _line(self, name, word):
        line = self.lines[name]
        line.append(word)
        out = line.popleft()
        if out is not None and self.drop_rate and self.rng.random() < self.drop_rate:
            return None
        if out is not None and _is_return(out) and (
                (name == "ba" and self.cycle < self.returns_lost_until)
                or (self.return_drop_rate and self.rng.random() < self.return_drop_rate)):
            return None
        if out is not None and self.flip_rate and self.rng.random() < self.flip_rate:
            out ^= 1 << self.rng.randrange(enc.WORD_BITS)
        return out

    def _receive(self, end, peer, word, ev):
        """The receive step: returns True on an anomaly."""
        if not end.up or word is None:
            return False
        checked = check_word(word)
        if checked is None:             # counted by the endpoint's word checker, not the framer
            return False
        tag, f = checked.tag, end.framer
        if tag.kind == Kind.CONTROL and tag.code == Ctl.IDLE:
            return False
        ev.rx = checked
        if tag.kind == Kind.DATA:
            ev.malformed, anomaly = f.rx_data(tag, checked.slice)
        elif tag.kind == Kind.ECHO:
            ev.malformed, anomaly = f.rx_echo(tag, checked.slice)
        elif tag.code == Ctl.DIGEST:
            ev.malformed, anomaly = f.rx_digest(checked.body)
        else:                                   # the token (this harness sends only TICK)
            anomaly, frames = f.token_received(checked.body)
            self._deliver(end, peer, frames, ev)
            end.token_due = True
            self.last_token = self.cycle
        return anomaly is not None

    def _deliver(self, end, peer, frames, ev):
        for c, frame in frames:
            k = end.got[c]
            if k >= len(peer.sent[c]) or peer.sent[c][k] != frame:
                raise FramerHarnessError(f"cycle {self.cycle}: class {c} frame #{k} lost, duplicated or corrupted")
            end.got[c] = k + 1
        ev.delivered.extend(frames)

    def _choose_frames(self, end, ev):
        """The user looks at readiness at the start of the cycle (as the RTL's ``ready``) and
        decides what to hand in; the frames go in at the user step."""
        ev.ready = [end.framer.frame_ready(c) for c in range(self.p.num_classes)]
        on = (self.cycle // self.burst) % 2 == 0
        for c in range(self.p.num_classes):
            if on and ev.ready[c] and self.rng.random() < self.frame_load:
                ev.frames_in[c] = self.rng.randbytes(enc.FRAME_BYTES)

    def _user(self, end, ev):
        for c, frame in ev.frames_in.items():
            end.sent[c].append(frame)
            end.framer.hand_in(c, frame)

    def _leave(self, end):
        end.up, end.token_due = False, False
        end.framer.leave_session()

    def _next_word(self, end, ev):
        if not end.up:
            return None
        ev.up_final = True
        if end.token_due:
            end.token_due = False
            ev.token_send = True
            end.framer.token_sent()
            return control_word(Ctl.TICK, end.framer.counts_body(enc.TOKEN_COMMIT_LSB))
        before = end.counters.slices_sent, end.counters.frames_sent
        word = end.framer.next_word(self.cycle + 1)
        ev.slice_sent = end.counters.slices_sent != before[0]
        ev.frame_sent = end.counters.frames_sent != before[1]
        ev.tx_word = word
        return word if word is not None else control_word(Ctl.IDLE)

    def step(self) -> EndEvents:
        """One cycle of both ends; returns end A's events."""
        ev_a, ev_b = EndEvents(), EndEvents()
        if self.cycle % (2 * self.burst) == self.burst:
            self.returns_lost_until = self.cycle + self.burst // 2
        self._choose_frames(self.a, ev_a)
        self._choose_frames(self.b, ev_b)
        rx_b, rx_a = self._line("ab", self.a.tx), self._line("ba", self.b.tx)
        ev_a.anomaly = self._receive(self.a, self.b, rx_a, ev_a)
        ev_b.anomaly = self._receive(self.b, self.a, rx_b, ev_b)
        for end, ev in ((self.a, ev_a), (self.b, ev_b)):
            if ev.anomaly:
                self._leave(end)
        self._user(self.a, ev_a)
        self._user(self.b, ev_b)
        # Watchdogs, with both ends' view: a session ends at both ends in the same cycle.
        if self.a.up:
            ev_a.overdue = self.a.framer.echo_overdue(self.cycle, self.bound)
        trouble = ev_a.anomaly or ev_b.anomaly or ev_a.overdue or (
            self.b.up and self.b.framer.echo_overdue(self.cycle, self.bound)) or (
            self.a.up and self.cycle - self.last_token > 3 * self.rtt)
        if trouble and (self.a.up or self.b.up or ev_a.anomaly or ev_b.anomaly):
            ev_a.restart_wd = self.a.up
            for end in (self.a, self.b):
                if end.up:
                    self._leave(end)
            self.down_until = self.cycle + self.latency + 5
            self.restarts += 1
        elif not self.a.up and self.cycle >= self.down_until:
            halves = {id(e): e.framer.counts_body(enc.READY_CONFIRMED_LSB) for e in (self.a, self.b)}
            for end, peer, ev in ((self.a, self.b, ev_a), (self.b, self.a, ev_b)):
                ev.entangle, ev.peer_half = True, halves[id(peer)]
                frames, ev.conflicts = end.framer.reconcile(ev.peer_half)
                self._deliver(end, peer, frames, ev)
                end.up, end.token_due = True, end.leader
            self.last_token = self.cycle
            self.sessions += 1
        self.a.tx = self._next_word(self.a, ev_a)
        self.b.tx = self._next_word(self.b, ev_b)
        ev_a.counts = self.a.framer.counts_body(0)
        self.cycle += 1
        return ev_a

    def frames_delivered(self) -> int:
        return sum(self.a.got) + sum(self.b.got)
