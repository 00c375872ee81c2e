"""Two golden endpoints joined by a golden channel, with traffic generators and a scoreboard.

The scoreboard raises :class:`ScoreboardError` at the first cycle where the link breaks a
guarantee of docs/PROTOCOL.md section 7:

* frames of each class are delivered in the order they were handed in, each exactly once,
  bit for bit;
* a token value is delivered at most once, and never both delivered and returned;
* while both ends are UP in one entangled session (neither has decided a restart), the
  balances of the two ends, plus the balance carried by token-plane words in flight (in the
  channel, in ``tx_word``, or inside an end's pipeline: owed, chosen by S, or arrived and not
  yet applied), plus that of token-plane words the channel destroyed (less that of words it
  created: a frozen or forced token-plane word) during the session, sum to 0
  (checked when ``check_balance``; PROTOCOL.md 3.3).
"""

import random
from dataclasses import dataclass, field

from golden import encoding as enc
from golden.common.slice import DECODE_TABLE
from golden.encoding import LinkState
from golden.link.control import check_word
from golden.link.core import LinkCore
from golden.params import APPLY_DELAY, RESTART_DELAY, LinkParams, require_shared
from golden.simulation.channel import IDLE_WORD, Channel
from sim.harness.base import Harness, ScoreboardError

# The token-plane balance a word carries (PROTOCOL.md 3), by its tag byte.
_TAG_BALANCE = tuple(enc.WORD_BALANCE.get(tag.code, 0) if tag.kind == enc.Kind.CONTROL else 0 for tag in DECODE_TABLE)
# Whether a tag byte is a token-plane word's (TICK, TOCK, AIT_*).
_TOKEN_TAG = tuple(tag.kind == enc.Kind.CONTROL and tag.code in enc.TOKEN_CODES for tag in DECODE_TABLE)


def is_copy_word(word) -> bool:
    """A token word with the copy flag (PROTOCOL.md 3.1), as sent."""
    return word is not None and is_token_word(word) and bool(enc.TOKEN_BODY.get(word, "copy"))


def is_token_word(word) -> bool:
    """A token-plane word (TICK, TOCK, AIT_*) by its tag; ``word`` an int."""
    return _TOKEN_TAG[word >> enc.SLICE_BITS]


@dataclass
class Traffic:
    """What one end's user does. Probabilities are per cycle."""

    frame_load: tuple = (0.0,)  # per class: probability a frame is handed in when ready
    ait_rate: float = 0.0  # probability a token is handed in when ait_ready
    withdraw_rate: float = 0.0  # probability the user withdraws a token it is offering
    take_rate: float = 1.0  # probability the user takes a delivered token this cycle
    # With ends that model the receive memory (``user_takes``): per class, the probability the
    # user takes the frame its stream offers this cycle (``frames_out.ready``).
    frame_take_rate: float = 1.0

    def __post_init__(self):
        for name in ("ait_rate", "withdraw_rate", "take_rate", "frame_take_rate"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} must be a probability in [0, 1], not {v!r}")
        if not all(isinstance(v, (int, float)) and 0.0 <= v <= 1.0 for v in self.frame_load):
            raise ValueError(f"frame_load must hold probabilities in [0, 1], not {self.frame_load!r}")

    @property
    def idle(self) -> bool:
        """A user that hands in nothing and takes every delivered token at once."""
        return not any(self.frame_load) and not self.ait_rate and self.take_rate == 1.0 and self.frame_take_rate == 1.0


# The goodput operating point of PROTOCOL.md 4.6 (`make bench`, golden and RTL): one class
# with a frame to hand in at every cycle, at both ends.
SATURATED_ONE_CLASS = Traffic(frame_load=(1.0,))


def goodput_warm_up(latency: int) -> int:
    """Cycles run after both ends are UP before goodput is measured: a few round trips, so the
    pipeline and the window are full."""
    return 5 * (2 * latency + 1) + 200


def goodput_share(frames: int, cycles: int) -> float:
    """Goodput of one direction: payload bits of ``frames`` 64-byte frames delivered in
    ``cycles`` over the raw slice bits of those cycles."""
    return frames * enc.FRAME_BYTES * 8 / (cycles * enc.SLICE_BITS)


@dataclass
class EndStats:
    frames_in: list = field(default_factory=list)  # per class: frames handed in, in order
    frames_out: list = field(default_factory=list)  # per class: count delivered to this end
    ait_in: list = field(default_factory=list)
    ait_out: list = field(default_factory=list)
    ait_returned: list = field(default_factory=list)
    events: list = field(default_factory=list)  # (cycle, name, detail)
    # Settling (PROTOCOL.md 10.6): per class, the frames a settle took out of the stream that the
    # take-out has still to hand over (oldest first), and how many it handed over.
    taken_due: list = field(default_factory=list)
    taken: list = field(default_factory=list)


class LinkHarness(Harness):
    """Runs A and B over ``channel`` cycle by cycle; see the module docstring for the checks."""

    def __init__(
        self,
        params_a: LinkParams,
        params_b: LinkParams,
        channel: Channel,
        traffic_a: Traffic | None = None,
        traffic_b: Traffic | None = None,
        seed: int = 0,
        check_balance: bool = False,
        user_takes: bool = False,
    ):
        require_shared(params_a, params_b)
        self.a = LinkCore(params_a, user_takes=user_takes)
        self.b = LinkCore(params_b, user_takes=user_takes)
        self.channel = channel
        self.traffic = {"a": traffic_a or Traffic(), "b": traffic_b or Traffic()}
        for t in self.traffic.values():
            if len(t.frame_load) > params_a.num_classes:
                raise ValueError("frame_load has more entries than num_classes")
        self.rng = random.Random(seed)
        self.check_balance = check_balance
        C = params_a.num_classes
        self.stats = {
            k: EndStats(
                frames_in=[[] for _ in range(C)], frames_out=[0] * C, taken_due=[[] for _ in range(C)], taken=[0] * C
            )
            for k in "ab"
        }
        self._withdrawing = {"a": False, "b": False}
        self._next_token = {"a": 1, "b": 0x8001}
        self._delivered_tokens = set()
        self._destroyed = 0
        self._line_balance = [0, 0]
        # Token copies (PROTOCOL.md 3.1) carry no balance of their own; per line, the balance of
        # an original the line destroyed, which its copy restores if it arrives.
        self._rescue = [0, 0]
        # Per line, what the line did to the last token original: "intact", "lost" (intact,
        # then a word lost), "destroyed", or None (see _follow_copies).
        self._after_original = [None, None]
        self.copies_across_loss = 0
        self.copies_standing_in = 0
        self.cycle = 0

    @classmethod
    def watching(cls, a: LinkCore, b: LinkCore, channel: Channel) -> "LinkHarness":
        """A monitor of ends that something else steps (the fabric's ports, sim/harness/fabric.py):
        only :meth:`account` is called, after each cycle, to follow and check the token-plane
        balance of their link (``a`` drives the channel's ``ab`` line)."""
        h = cls(a.p, b.p, channel, check_balance=True)
        h.a, h.b = a, b
        return h

    # --- user side -------------------------------------------------------------------------

    def user_inputs(self, name, ep):
        t, s, rng = self.traffic[name], self.stats[name], self.rng
        if t.idle:
            return None, None, self._withdrawing[name], True
        frames = {}
        for c, load in enumerate(t.frame_load):
            if load and ep.frame_ready(c) and rng.random() < load:
                frame = rng.randbytes(enc.FRAME_BYTES)
                frames[c] = frame
                s.frames_in[c].append(frame)
        ait = None
        if t.ait_rate and ep.ait_ready and rng.random() < t.ait_rate:
            ait = self._next_token[name] & 0xFFFF
            self._next_token[name] += 1
            s.ait_in.append(ait)
            self._withdrawing[name] = False
        if (
            ep.tokens.tx_value is not None
            and not self._withdrawing[name]
            and t.withdraw_rate
            and rng.random() < t.withdraw_rate
        ):
            self._withdrawing[name] = True
        take = rng.random() < t.take_rate
        return frames, ait, self._withdrawing[name], take

    def _frames_taking(self, name, ep) -> tuple:
        """The classes whose offered frame end ``name``'s user takes this cycle."""
        if not ep.framer.user_takes:
            return ()
        wanted = self.frames_wanted(name)
        return tuple(c for c, want in enumerate(wanted) if want and ep.frame_out(c) is not None)

    def frames_wanted(self, name) -> tuple:
        """Per class, whether end ``name``'s user takes the frame its stream offers this cycle
        (``frames_out.ready``; ends built with ``user_takes``)."""
        rate = self.traffic[name].frame_take_rate
        if rate == 1.0:
            return (True,) * self.a.p.num_classes
        return tuple(self.rng.random() < rate for _ in range(self.a.p.num_classes))

    def withdraw(self, name):
        """From now on the user at ``name`` withdraws the token it is offering."""
        self._withdrawing[name] = True

    def score(self, name, peer_name, res):
        s, peer = self.stats[name], self.stats[peer_name]
        for c, frame in res.frames:
            k = s.frames_out[c]
            if k >= len(peer.frames_in[c]):
                raise ScoreboardError(f"cycle {self.cycle}: {name} got class {c} frame #{k} never sent")
            if frame != peer.frames_in[c][k]:
                raise ScoreboardError(
                    f"cycle {self.cycle}: {name} class {c} frame #{k} differs from "
                    f"the frame sent (corrupted, reordered or duplicated)"
                )
            s.frames_out[c] = k + 1
        for value in res.ait:
            if value not in peer.ait_in:
                raise ScoreboardError(f"cycle {self.cycle}: {name} got token {value:#x} nobody sent")
            if value in self._delivered_tokens:
                raise ScoreboardError(f"cycle {self.cycle}: token {value:#x} delivered twice")
            if value in peer.ait_returned:
                raise ScoreboardError(f"cycle {self.cycle}: token {value:#x} delivered after it was returned")
            self._delivered_tokens.add(value)
            s.ait_out.append(value)
        for value in res.ait_returned:
            if value in self._delivered_tokens:
                raise ScoreboardError(f"cycle {self.cycle}: token {value:#x} returned after delivery")
            s.ait_returned.append(value)
            self._withdrawing[name] = False
        for ev_name, detail in res.events:
            s.events.append((self.cycle, ev_name, detail))

    def end_settled(self, name, ep):
        """End ``name`` (the golden ``ep``) settled (PROTOCOL.md 10.6): its frames from the
        confirmed count on leave the stream to its peer, which never delivers them; the take-out
        hands them over, newest first, and the next frame handed in follows the confirmed one."""
        s = self.stats[name]
        for c in range(len(s.frames_in)):
            cut = ep.framer.confirmed[c]
            s.taken_due[c].extend(s.frames_in[c][cut:])
            del s.frames_in[c][cut:]

    def took_out(self, name, cls, frame):
        """End ``name``'s take-out handed over ``frame`` of class ``cls``."""
        due = self.stats[name].taken_due[cls]
        if not due or due.pop() != frame:
            raise ScoreboardError(f"cycle {self.cycle}: {name} took out a class {cls} frame it did not owe")
        self.stats[name].taken[cls] += 1

    @staticmethod
    def _word_balance(word):
        return 0 if word is None else _TAG_BALANCE[word >> enc.SLICE_BITS]

    def _track_balance(self, sent, delivered):
        """Keep the balance carried by each delay line, word by word (drift only moves IDLEs).
        A fault that delivers another word than the line held destroys the balance of the one
        and creates that of the other (a frozen or forced token-plane word)."""
        receivers = (self.b, self.a)
        for i, direction in enumerate((self.channel.ab, self.channel.ba)):
            original = direction.last_original
            left_copy = is_copy_word(original)
            self._line_balance[i] += (0 if is_copy_word(sent[i]) else self._word_balance(sent[i])) - (
                0 if left_copy else self._word_balance(original)
            )
            d = delivered[i]
            if self.a.p.token_copies:
                self._follow_copies(i, original, d, receivers[i])
            if d != original:
                # A word the fault made counts once the receiver takes it (not as a copy).
                # ``d`` is the word the receiver applies next.
                created = d is not None and check_word(d) is not None and not receivers[i].next_is_copy
                lost = 0 if left_copy else self._word_balance(original)
                self._destroyed += lost - (self._word_balance(d) if created else 0)
                # Any word may come between a token word and a copy of it: fill words right
                # after it, and a round trip of others before one sent again when asked.
                if original is not None and is_token_word(original) and not left_copy:
                    self._rescue[i] = lost
            elif left_copy and self._rescue[i]:
                # The copy stands in for its original, unless the receiver drops it (its turn
                # says a token word was applied in the original's place, PROTOCOL.md 3.1).
                if not receivers[i].next_is_copy:
                    self._destroyed -= self._rescue[i]
                    self._rescue[i] = 0
            elif original is not None and is_token_word(original) and not left_copy:
                self._rescue[i] = 0

    def _follow_copies(self, i, original, d, receiver):
        """Follow each token original and its copy along line ``i`` (PROTOCOL.md 3.1), by what
        the line did to them, not by the receiver's rule. Counts the copies that arrive intact
        after an intact original and a lost word between the two (``copies_across_loss``: the
        balance check holds the receiver to dropping them) and the copies that arrive intact
        after their original was destroyed (``copies_standing_in``); with ``check_balance``, a
        receiver in session that drops one of those is an error (the balance check cannot see
        it: a copy dropped looks like a word the line destroyed)."""
        state = self._after_original[i]
        if d != original:
            # A fault acted (a fill word that drift inserted intact is no loss).
            applied_token = (
                d is not None and check_word(d) is not None and is_token_word(d) and not receiver.next_is_copy
            )
            if original is not None and is_token_word(original) and not is_copy_word(original):
                state = None if applied_token else "destroyed"
            elif applied_token:
                state = None  # a token word was applied in the original's place
            elif state == "intact" and not (original is None and d == IDLE_WORD):
                state = "lost"
        elif original is None or original == IDLE_WORD:
            pass
        elif not _TOKEN_TAG[original >> enc.SLICE_BITS]:
            state = None
        elif enc.TOKEN_BODY.get(original, "copy"):
            self.copies_across_loss += state == "lost"
            if state == "destroyed":
                self.copies_standing_in += 1
                if self.check_balance and receiver.up and not receiver.restarting and receiver.next_is_copy:
                    raise ScoreboardError(
                        f"cycle {self.cycle}: a token copy whose original the line destroyed was dropped"
                    )
            state = None
        else:
            state = "intact"
        self._after_original[i] = state

    def _check_balance(self):
        if not self.both_up() or self.a.restarting or self.b.restarting:
            self._destroyed = 0  # the session is over; reconciliation settles the rest
            return
        # Words owed, chosen and not yet on the wire, or arrived and not yet applied, are in flight.
        on_wire = sum(self._word_balance(w) for w in (self.a.tx_word, self.b.tx_word) if not is_copy_word(w))
        in_flight = on_wire + self.a.pipeline_balance() + self.b.pipeline_balance() + sum(self._line_balance)
        total = self.a.balance + self.b.balance + in_flight + self._destroyed
        if total != 0:
            raise ScoreboardError(
                f"cycle {self.cycle}: balances {self.a.balance:+d} {self.b.balance:+d} "
                f"+ in flight {in_flight:+d} + destroyed {self._destroyed:+d} = {total:+d}"
            )

    # --- the run ---------------------------------------------------------------------------

    def step(self):
        sent = (self.a.tx_word, self.b.tx_word)
        rx_b, rx_a = self.channel.step(*sent)
        # In the order the lockstep (link_lockstep.py) draws them: what each user takes, then
        # what it hands in.
        xa = self._frames_taking("a", self.a)
        fa, ta, wa, ka = self.user_inputs("a", self.a)
        xb = self._frames_taking("b", self.b)
        fb, tb, wb, kb = self.user_inputs("b", self.b)
        res_a = self.a.step(rx_a, frames=fa, ait=ta, withdraw=wa, ait_taken=ka, frames_taken=xa)
        res_b = self.b.step(rx_b, frames=fb, ait=tb, withdraw=wb, ait_taken=kb, frames_taken=xb)
        self.score("a", "b", res_a)
        self.score("b", "a", res_b)
        self.cycle += 1
        self.account(sent, (rx_b, rx_a))

    def account(self, sent, delivered):
        """After a cycle of both ends: follow the token-plane balance each line carries (and
        the copies across a loss), and check the invariant if asked. ``sent``: the words A and B
        put on the wire; ``delivered``: what the lines delivered to B and to A."""
        self._track_balance(sent, delivered)
        if self.check_balance:
            self._check_balance()

    # --- end-of-run checks -----------------------------------------------------------------

    def both_up(self) -> bool:
        return self.a.state == LinkState.UP and self.b.state == LinkState.UP

    def settled(self) -> bool:
        """Both UP, every handed-in frame delivered, every token delivered or returned."""
        if not self.both_up():
            return False
        for me, peer in (("a", "b"), ("b", "a")):
            s, p = self.stats[me], self.stats[peer]
            if any(s.frames_out[c] != len(p.frames_in[c]) for c in range(len(s.frames_out))):
                return False
            if any(s.taken_due):
                return False
            outstanding = set(p.ait_in) - set(s.ait_out) - set(p.ait_returned)
            if outstanding:
                return False
        return True

    def quiesce(self, limit: int = 200_000):
        """Stop all traffic, heal nothing, and run until :meth:`settled` (ScoreboardError if not)."""
        for name in "ab":
            t = self.traffic[name]
            self.traffic[name] = Traffic(frame_load=(0.0,) * len(t.frame_load), take_rate=1.0)
            self._withdrawing[name] = False
        return self.run_until(LinkHarness.settled, limit)


def make_link(
    latency=16,
    *,
    seed=0,
    faults_ab=None,
    faults_ba=None,
    latency_ba=None,
    traffic_a=None,
    traffic_b=None,
    check_balance=False,
    **params,
):
    """Convenience: a harness with the same parameters at both ends (distinct ids and seeds)."""
    pa = LinkParams(port_id=1, nonce_seed=0x1234 + 2 * seed + 1, **params)
    pb = LinkParams(port_id=2, nonce_seed=0x9876 + 2 * seed + 2, **params)
    ch = Channel(latency, latency_ba=latency_ba, faults_ab=faults_ab, faults_ba=faults_ba, seed=seed)
    return LinkHarness(pa, pb, ch, traffic_a, traffic_b, seed=seed, check_balance=check_balance)


def run_flap(h: LinkHarness, length: int, directions=("ab", "ba"), lead: int = 100) -> tuple:
    """Cut ``directions`` of ``h``'s channel for ``length`` cycles from ``lead`` cycles on and run
    until both ends are UP again (ScoreboardError if they are not within a few thousand cycles
    of the line's return). Returns ({end: cycles it believed the link down after the line was
    back}, {end: the training phases it went through})."""
    start = h.channel.ab.cycle + lead
    back = start + length
    for d in directions:
        line = getattr(h.channel, d)
        line.cuts = (*line.cuts, (start, back))
    ends = (("a", h.a), ("b", h.b))
    up_again, phases = {"a": None, "b": None}, {"a": set(), "b": set()}
    for _ in range(lead + length + 20 * h.a.rtt + 2000):
        h.step()
        for name, ep in ends:
            if not ep.up:
                phases[name].add(ep.state)
            elif phases[name] and up_again[name] is None:
                up_again[name] = h.channel.ab.cycle
        # A suspicion on the last missing word takes effect RESTART_DELAY cycles after the cycle
        # that applies it, the one after the line is back.
        if h.channel.ab.cycle > back + APPLY_DELAY + RESTART_DELAY and h.both_up():
            break
    if not h.both_up():
        raise ScoreboardError(f"cycle {h.cycle}: the link is not UP {h.channel.ab.cycle - back} cycles after a flap")
    down_after = {n: max(0, up_again[n] - back) if phases[n] else 0 for n in "ab"}
    return down_after, phases
