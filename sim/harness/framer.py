"""Two golden framers joined by a delay line, without the rest of the endpoint: the stimulus of
the framer's unit lockstep (cocotb_tests/framer_tb.py drives rtl/link/framer/ from end A's events).

It stands in for what golden/link/core.py does around a framer, reduced to what the data plane
needs, in the pipeline of PROTOCOL.md 2.2: each end applies the word that arrived in the
previous cycle (A), chooses a word from the state at the start of the cycle (S: the token if
it holds it, else the framer's choice) and puts it on the line three cycles later; a token is
held from the cycle A applies it to the cycle S sends it on, carrying the commit counts.
Data-plane anomalies are recovered by the framers themselves (go-back-N, PROTOCOL.md 4.6).
Training is replaced by a pause: on an anomaly recovery cannot mend, a degraded data plane or a
token lost for three round trips, both ends restart in the next cycle (the restart cycle), send IDLE for
``latency`` + 5 cycles (the line drains), and then B, the leader, entangles against A's
confirmed counts and sends the first token. End A entangles in the same cycle, or, in every
other session, waits and entangles on B's first token, as a follower whose READY handshake
was cut short does.

Each :meth:`FramerPair.step` returns :class:`EndEvents` for end A: every input the RTL framer
takes in that cycle and what the golden framer did with them. Frames delivered at either end
are checked against what the other end handed in (in order, exactly once, bit for bit), so the
harness itself cannot hide a loss.
"""

import random
import zlib
from collections import deque
from dataclasses import dataclass, field

from golden import encoding as enc
from golden.encoding import Ctl, Kind
from golden.link.control import check_word, control_word
from golden.link.core import Counters
from golden.link.framer import DataChoice, Framer
from golden.params import APPLY_DELAY, TURNAROUND, LinkParams
from sim.harness.base import Harness, ScoreboardError

_IDLE = control_word(Ctl.IDLE)


def slice_contribution(slice_: int) -> int:
    """What a slice contributes to the CRC-32 state (the RTL framer's ``rx_nslice``, computed
    in stage C): the state after the slice from a zero state."""
    return zlib.crc32(slice_.to_bytes(enc.SLICE_BITS // 8, "little"), 0xFFFFFFFF) ^ 0xFFFFFFFF


def _is_return(word) -> bool:
    checked = check_word(word)
    return checked is not None and (
        checked.tag.kind == Kind.ECHO or (checked.tag.kind == Kind.CONTROL and checked.tag.code == Ctl.DIGEST)
    )


class FramerHarnessError(ScoreboardError):
    """A frame was lost, duplicated or corrupted between the two golden framers."""


@dataclass
class EndEvents:
    """End A's framer inputs in one cycle and the golden framer's answers."""

    restart: bool = False  # the restart cycle
    up: bool = False  # UP at the start of the cycle
    rx: object = None  # golden.link.control.Checked A applies (routed to the framer), or None
    data_word: object = None  # the well-formed DATA word A has this cycle, applied or not
    malformed: bool = False
    anomaly: bool = False  # an anomaly recovery cannot mend (the end restarts)
    recovery_anomalies: int = 0  # data-plane anomalies found this cycle (word and deadlines)
    degraded: bool = False  # at the end of A
    ready: list = field(default_factory=list)  # frame_ready per class at the start of the cycle
    frames_in: dict = field(default_factory=dict)  # {class: bytes} handed in
    entangle: bool = False
    peer_half: int = 0  # the peer's confirmed counts as READY carries them (held, as training does)
    conflicts: int = 0
    overdue: bool | None = None  # the oldest expected return is late (None: not judged this cycle)
    framer_turn: bool = False  # S would send the framer's word (UP, not restarting, no token held)
    choice: DataChoice | None = None
    token_send: bool = False
    counts: int = 0  # confirmed counts at the start of the cycle
    delivered: list = field(default_factory=list)  # [(class, bytes)] delivered this cycle
    built: int | None = None  # the data slice B2 builds this cycle (S's data choice of two cycles ago)


class _End:
    def __init__(self, params, leader):
        self.counters = Counters()
        self.framer = Framer(params, self.counters)
        self.leader = leader
        self.up = False
        self.restart_next = False
        self.token_due = False
        self.follow_token = False  # waiting to entangle on the leader's first token
        self.rx_q = None
        self.chosen = (_IDLE, None)  # S's last choice: in B1 now
        self.building = (_IDLE, None)  # the choice before it: in B2, on the wire after the next edge
        self.on_wire = (_IDLE, None)
        self.wire_prev = None
        self.sent = [[] for _ in range(params.num_classes)]  # frames handed in, per class
        self.got = [0] * params.num_classes  # frames delivered, per class


class FramerPair(Harness):
    """Golden framers A and B (the leader) over a line of ``latency`` cycles each way; each word
        on the line has one random bit flipped with probability ``flip_rate`` and is lost (no
        signal) with probability ``drop_rate``, and an ECHO or DIGEST word with
        ``return_drop_rate``. Users hand in frames with probability ``frame_load`` per class and
        cycle, in bursts: every ``burst`` cycles traffic stops or starts. At every stop, every return
        word on its way to A for the next ``burst // 2`` cycles is lost, so that nothing later
        exposes the loss and the echo deadline alone must find it. Every ``restart_every`` cycles (0:
    never) both ends restart, so that reconciliation is exercised however well recovery works."""

    def __init__(
        self,
        params: LinkParams,
        *,
        latency=6,
        flip_rate=0.0,
        drop_rate=0.0,
        return_drop_rate=0.0,
        frame_load=0.1,
        burst=400,
        restart_every=0,
        seed=0,
    ):
        if not isinstance(params, LinkParams):
            raise TypeError(f"params must be a LinkParams, not {type(params).__name__}")
        self.p = params
        self.rng = random.Random(seed)
        self.latency, self.flip_rate, self.drop_rate = latency, flip_rate, drop_rate
        self.return_drop_rate = return_drop_rate
        self.frame_load, self.burst, self.restart_every = frame_load, burst, restart_every
        self.returns_lost_until = 0
        self.rtt = 2 * latency + TURNAROUND
        self.bound = self.rtt + params.margin + params.echo_slack
        self.quiet_bound = self.rtt + params.margin + params.quiet_slack
        self.a, self.b = _End(params, leader=False), _End(params, leader=True)
        self.lines = {"ab": deque([None] * latency), "ba": deque([None] * latency)}
        self.cycle = 0
        self.down_until = latency + 5  # both ends start out of session
        self.last_token = 0
        self.sessions = 0
        self.restarts = 0
        self.token_entangles = 0

    def _line(self, name, word):
        line = self.lines[name]
        line.append(word)
        out = line.popleft()
        if out is not None and self.drop_rate and self.rng.random() < self.drop_rate:
            return None
        if (
            out is not None
            and _is_return(out)
            and (
                (name == "ba" and self.cycle < self.returns_lost_until)
                or (self.return_drop_rate and self.rng.random() < self.return_drop_rate)
            )
        ):
            return None
        if out is not None and self.flip_rate and self.rng.random() < self.flip_rate:
            out ^= 1 << self.rng.randrange(enc.WORD_BITS)
        return out

    def _deliver(self, end, peer, frames, ev):
        for c, frame in frames:
            k = end.got[c]
            if k >= len(peer.sent[c]) or peer.sent[c][k] != frame:
                raise FramerHarnessError(f"cycle {self.cycle}: class {c} frame #{k} lost, duplicated or corrupted")
            end.got[c] = k + 1
        ev.delivered.extend(frames)

    def _choose(self, end, restarting):
        """S, from the state at the start of the cycle: ("token", counts), ("data", choice) or None."""
        if not end.up or restarting:
            return None
        if end.token_due:
            return ("token", tuple(end.framer.confirmed))
        return ("data", end.framer.choose())

    def _entangle(self, end, peer, ev):
        half = enc.READY_BODY.pack(counts=peer.framer.counts_field())
        ev.entangle, ev.peer_half = True, half
        frames, ev.conflicts = end.framer.reconcile(half)
        self._deliver(end, peer, frames, ev)
        end.up, end.token_due, end.follow_token = True, end.leader, False

    def _apply(self, end, peer, ev):
        """A: the word that arrived in the previous cycle. Returns True on an anomaly."""
        checked = end.rx_q
        if checked is None:
            return False
        tag, f = checked.tag, end.framer
        if tag.kind == Kind.CONTROL and tag.code == Ctl.IDLE:
            return False
        if not end.up:
            if end.follow_token and tag.kind == Kind.CONTROL and tag.code == Ctl.TICK:
                self._entangle(end, peer, ev)
                self.token_entangles += end is self.a
            else:
                return False
        ev.rx = checked
        fatal = recovered = None
        if tag.kind == Kind.DATA:
            ev.malformed, recovered = f.rx_data(tag, checked.slice)
        elif tag.kind == Kind.ECHO:
            ev.malformed, recovered = f.rx_echo(tag, checked.slice)
        elif tag.code == Ctl.DIGEST:
            ev.malformed, recovered = f.rx_digest(checked.body)
        elif tag.code == Ctl.RESYNC:
            fatal, frames = f.rx_resync(checked.body)
            self._deliver(end, peer, frames, ev)
        elif tag.code == Ctl.RESYNC_ACK:
            f.rx_ack(checked.body)
        elif tag.code == Ctl.NAK:
            recovered = f.rx_nak()
        elif tag.code == Ctl.REPLAY:
            ev.malformed, recovered = f.rx_replay(checked.body)
        else:  # the token (this harness sends only TICK)
            fatal, frames = f.token_received(checked.body)
            self._deliver(end, peer, frames, ev)
            end.token_due = True
            self.last_token = self.cycle
        ev.recovery_anomalies += recovered is not None
        ev.anomaly = fatal is not None
        return ev.anomaly

    def _user(self, end, ev):
        ev.ready = [end.framer.frame_ready(c) for c in range(self.p.num_classes)]
        on = (self.cycle // self.burst) % 2 == 0
        for c in range(self.p.num_classes):
            if on and ev.ready[c] and self.rng.random() < self.frame_load:
                ev.frames_in[c] = self.rng.randbytes(enc.FRAME_BYTES)

    def step(self) -> EndEvents:
        """One cycle of both ends; returns end A's events."""
        ends = ((self.a, self.b), (self.b, self.a))
        evs = {id(self.a): EndEvents(), id(self.b): EndEvents()}
        if self.cycle % (2 * self.burst) == self.burst:
            self.returns_lost_until = self.cycle + self.burst // 2
        restarting = {}
        for end, _ in ends:
            ev = evs[id(end)]
            ev.up, ev.counts = end.up, end.framer.counts_field()
            ev.peer_half = enc.READY_BODY.pack(counts=(self.b if end is self.a else self.a).framer.counts_field())
            restarting[id(end)] = ev.restart = end.restart_next
            if end.restart_next:
                end.restart_next, end.up, end.token_due, end.follow_token = False, False, False, False
                end.framer.leave_session()
        choices = {id(end): self._choose(end, restarting[id(end)]) for end, _ in ends}
        for end, _ in ends:
            ev, choice = evs[id(end)], choices[id(end)]
            ev.framer_turn = choice is not None and choice[0] == "data"
            ev.choice = choice[1] if ev.framer_turn else None
            ev.token_send = choice is not None and choice[0] == "token"
            ev.built = (
                end.building[1].word & ((1 << enc.SLICE_BITS) - 1)
                if end.building[1] is not None and end.building[1].is_slice
                else None
            )
            self._user(end, ev)
        rx_b, rx_a = self._line("ab", self.a.on_wire[0]), self._line("ba", self.b.on_wire[0])
        trouble = False
        for end, peer in ends:
            ev = evs[id(end)]
            if end.rx_q is not None and end.rx_q.tag.kind == Kind.DATA:
                ev.data_word = end.rx_q
            was_up = end.up
            if not restarting[id(end)]:
                trouble |= self._apply(end, peer, ev)
            for c, frame in ev.frames_in.items():
                end.sent[c].append(frame)
                end.framer.hand_in(c, frame)
            if was_up and not restarting[id(end)]:
                arrived = self.cycle - APPLY_DELAY
                end.framer.advance()
                ev.overdue = end.framer.echo_overdue(arrived, self.bound, self.quiet_bound)
                ev.recovery_anomalies += end.framer.watchdog(arrived, self.bound, self.quiet_bound) is not None
            ev.degraded = end.framer.degraded
            trouble |= ev.degraded
        lost = (self.a.up or self.b.up) and self.cycle - self.last_token > 3 * self.rtt
        lost |= bool(self.restart_every) and self.cycle % self.restart_every == 0
        in_session = any(e.up or e.follow_token for e, _ in ends)
        if (trouble or lost) and in_session and not any(restarting.values()):
            for end, _ in ends:
                end.restart_next = True
            self.down_until = self.cycle + 1 + self.latency + 5
            self.restarts += 1
        elif not in_session and not any(restarting.values()) and self.cycle >= self.down_until:
            self._entangle(self.b, self.a, evs[id(self.b)])
            if self.sessions % 2:
                self.a.follow_token = True
            else:
                self._entangle(self.a, self.b, evs[id(self.a)])
            self.last_token = self.cycle
            self.sessions += 1
        for end, _ in ends:
            choice = choices[id(end)]
            word, data = _IDLE, None
            if choice is not None and choice[0] == "token":
                end.token_due = False
                end.framer.token_sent(choice[1])
                word = control_word(Ctl.TICK, enc.TOKEN_BODY.pack(counts=end.framer.counts_field(choice[1])))
            elif choice is not None and choice[1] is not None:
                end.framer.commit(choice[1], self.cycle, self.rtt, self.p.margin)
                word, data = choice[1].word, choice[1]
            end.framer.end_cycle(end.up, end.wire_prev, self.cycle)
            if not (restarting[id(end)] or evs[id(end)].up or end.up):
                end.framer.follow_rtt(self.rtt if self.cycle else None)
            end.wire_prev = end.on_wire[1]
            end.on_wire, end.building, end.chosen = end.building, end.chosen, (word, data)
        self.a.rx_q, self.b.rx_q = (
            (None if rx_a is None else check_word(rx_a)),
            (None if rx_b is None else check_word(rx_b)),
        )
        self.cycle += 1
        return evs[id(self.a)]

    def frames_delivered(self) -> int:
        return sum(self.a.got) + sum(self.b.got)
