"""Two golden contrast-link ends (golden/contrast/link.py) on the golden channel, with saturating
frame traffic, read requests, and a scoreboard.

The channel is the OAE link's, with SKP as its fill word. The scoreboard numbers every frame an
end hands in and checks, every cycle, that the peer delivers them in order, each at most once,
bit for bit (:class:`sim.harness.base.ScoreboardError` otherwise). A frame never delivered is
lost: the contrast link discards its replay buffer when the link goes down (PCIe does), and the
harness counts those frames (``lost``) rather than failing on them.
"""

import dataclasses
import random

from golden.contrast.link import PcieLink
from golden.encoding import FRAME_BYTES, SKP_WORD, LtssmState
from golden.encoding import PCIE_TLP_WORDS as FRAME_WORDS
from golden.pcie_params import PcieParams
from golden.simulation.channel import Channel
from sim.harness.base import Harness, ScoreboardError


def numbered_frame(end: str, number: int) -> bytes:
    """Frame ``number`` of end ``end``: its number and origin, then a pattern derived from both."""
    head = number.to_bytes(8, "little") + end.encode()
    rng = random.Random(number * 2 + (end == "b"))
    return head + bytes(rng.getrandbits(8) for _ in range(FRAME_BYTES - len(head)))


class PcieHarness(Harness):
    """``params``: both ends' PcieParams (or per end: ``params_b``). ``backlog``: frames kept
    queued at each end (0: no frame traffic). ``request_rate``: per cycle, the chance that each
    end issues a read request when it has a free tag. ``completer_delays``: {cycle: delay}, from
    that cycle on both ends' completers answer after ``delay`` cycles (a slow completer)."""

    def __init__(
        self,
        params: PcieParams,
        channel: Channel,
        *,
        params_b: PcieParams | None = None,
        backlog: int = 4,
        request_rate: float = 0.0,
        seed: int = 0,
        completer_delays=None,
    ):
        if not 0 <= request_rate <= 1:
            raise ValueError(f"request_rate must be a probability in [0, 1], not {request_rate!r}")
        if not isinstance(backlog, int) or backlog < 0:
            raise ValueError(f"backlog must be a non-negative integer, not {backlog!r}")
        self.completer_delays = dict(completer_delays or {})
        for cycle, delay in self.completer_delays.items():
            if not isinstance(cycle, int) or cycle < 0:
                raise ValueError(f"completer_delays: a cycle must be a non-negative integer, not {cycle!r}")
            # The same limit as the parameter (and the RTL port's width).
            dataclasses.replace(params, completer_delay=delay)
        self.a, self.b = PcieLink(params), PcieLink(params_b or params)
        self.channel = channel
        self.backlog, self.request_rate = backlog, request_rate
        self.rng = random.Random(seed)
        self.cycle = 0
        self.offered = {"a": 0, "b": 0}  # frames handed in
        self.next_expected = {"a": 0, "b": 0}  # the lowest number the peer may still deliver, per sender
        self.delivered = {"a": 0, "b": 0}  # frames of each sender delivered
        self._delivered_numbers = {"a": set(), "b": set()}
        self.rx_a = self.rx_b = None

    def feed(self, name):
        """End ``name``'s user side for this cycle: its backlog topped up, a read request drawn,
        the completer's delay changed where the schedule says."""
        end = self.end(name)
        if self.cycle in self.completer_delays:
            end.completer.delay = self.completer_delays[self.cycle]
        while len(end.frames_in) < self.backlog:
            end.offer_frame(numbered_frame(name, self.offered[name]))
            self.offered[name] += 1
        if self.request_rate and self.rng.random() < self.request_rate:
            end.request()

    def end(self, name) -> PcieLink:
        return self.a if name == "a" else self.b

    def score(self, sender):
        """Check the frames ``sender``'s peer delivered this cycle: each one of ``sender``'s, not
        corrupted, in order and once (raises ScoreboardError)."""
        receiver = self.end("b" if sender == "a" else "a")
        while receiver.delivered:
            frame = receiver.delivered.pop(0)
            number = int.from_bytes(frame[:8], "little")
            if number >= self.offered[sender] or frame != numbered_frame(sender, number):
                raise ScoreboardError(
                    f"cycle {self.cycle}: a frame from {sender} was corrupted (no frame #{number} was sent like this)"
                )
            if number < self.next_expected[sender]:
                raise ScoreboardError(
                    f"cycle {self.cycle}: {sender}'s frame #{number} delivered again or "
                    f"out of order (next expected #{self.next_expected[sender]})"
                )
            self.next_expected[sender] = number + 1
            self.delivered[sender] += 1
            self._delivered_numbers[sender].add(number)

    def receiver_detection(self) -> dict:
        """{end: whether its receiver detection finds the peer this cycle}: an end measures the
        peer's termination on its own transmit line (A's is direction ab), so a cut of that
        direction hides the peer."""
        return {
            "a": not self.channel.ab.cut_at(self.channel.ab.cycle),
            "b": not self.channel.ba.cut_at(self.channel.ba.cycle),
        }

    def step_ends(self, far, controls=None):
        """Both ends and the channel, one cycle: ``far`` is each end's receiver detection;
        ``controls`` ({"ab": Controls, "ba": Controls}), when given, are the channel's fault
        controls of this cycle, drawn by a testbench that drives them into the RTL channel too."""
        tx_a = self.a.step(self.rx_a, far["a"])
        tx_b = self.b.step(self.rx_b, far["b"])
        if controls is None:
            self.rx_b, self.rx_a = self.channel.step(tx_a, tx_b)
        else:
            self.rx_b = self.channel.ab.step_with(tx_a, controls["ab"])
            self.rx_a = self.channel.ba.step_with(tx_b, controls["ba"])

    def step(self):
        self.feed("a")
        self.feed("b")
        self.step_ends(self.receiver_detection())
        self.score("a")
        self.score("b")
        self.cycle += 1

    def describe(self) -> str:
        return f"a {self.a.state.name}, b {self.b.state.name}"

    def both_l0(self) -> bool:
        return self.a.state == self.b.state == LtssmState.L0

    def lost(self, sender: str) -> int:
        """Frames of ``sender`` that will never be delivered: skipped by a later delivery, or
        discarded from the sender's replay buffer at DL_Down and not delivered before."""
        end = self.a if sender == "a" else self.b
        discarded = {int.from_bytes(f[:8], "little") for f in end.lost}
        skipped = self.next_expected[sender] - self.delivered[sender]
        return skipped + len({n for n in discarded if n >= self.next_expected[sender]})


# Fast tests: every timer at 1/64 of the spec, and SKP often enough for the shortened
# electrical-idle inference window.
TEST_SCALE = {"time_scale": 1 / 64, "skp_interval": 32}


def check_replay_timer(params: PcieParams, latency_ab: int, latency_ba: int) -> None:
    """ValueError unless ``params``' replay timer exceeds a channel's round trip (latencies each
    way), the ACK latency and two TLPs: on a shorter one a healthy link replays."""
    least = latency_ab + latency_ba + 2 + params.cycles("ack_latency") + 2 * FRAME_WORDS
    if params.cycles("replay_timer") <= least:
        raise ValueError(
            f"the replay timer ({params.cycles('replay_timer')} cycles) must exceed the round trip, "
            f"the ACK latency and two TLPs ({least}) or a healthy link replays: raise time_scale"
        )


def make_pcie_link(
    latency: int = 4, *, faults_ab=None, faults_ba=None, latency_ba=None, seed: int = 0, **kwargs
) -> PcieHarness:
    """A contrast link on a channel of ``latency`` cycles each way; PcieParams fields in
    ``kwargs`` (default TEST_SCALE), and the harness's ``backlog``, ``request_rate`` and
    ``completer_delays``."""
    harness_keys = {"backlog", "request_rate", "completer_delays"}
    options = {k: kwargs.pop(k) for k in list(kwargs) if k in harness_keys}
    params = PcieParams(**{**TEST_SCALE, **kwargs})
    check_replay_timer(params, latency, latency if latency_ba is None else latency_ba)
    channel = Channel(
        latency, latency_ba=latency_ba, faults_ab=faults_ab, faults_ba=faults_ba, seed=seed, fill_word=SKP_WORD
    )
    return PcieHarness(params, channel, seed=seed, **options)
