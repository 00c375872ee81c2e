"""The link configurations and fault scenarios the RTL runs in lockstep with the golden model.

A :class:`Build` fixes everything Verilator compiles in (generation parameters of both ends and
the channel's initial latency); a scenario adds what the testbench drives at run time (user
traffic, channel faults, cycles). Both ends get fixed nonce seeds so that the golden harness
and the exported design agree without rebuilding per seed.
"""

from collections.abc import Callable
from dataclasses import dataclass, field, fields

from golden.link.control import TOKEN_COPY_DELTA
from golden.params import TURNAROUND, LinkParams, window_for_rtt
from golden.simulation.channel import Channel
from sim.harness.link import LinkHarness, Traffic, is_copy_word, is_token_word

_DEFAULT = LinkParams()


@dataclass(frozen=True)
class Build:
    """Generation parameters of both ends (as :class:`LinkParams`, minus the per-end port id and
    nonce seed) and the channel's initial latencies and length bound."""

    num_classes: int = _DEFAULT.num_classes
    echo_mode: str = _DEFAULT.echo_mode
    window: int = _DEFAULT.window
    margin: int = _DEFAULT.margin
    los_cycles: int = _DEFAULT.los_cycles
    probes: int = _DEFAULT.probes
    max_rtt: int = _DEFAULT.max_rtt
    token_copies: bool = _DEFAULT.token_copies
    recovery: str = _DEFAULT.recovery
    read_slices: int = _DEFAULT.read_slices
    latency: int = 16
    latency_ba: int | None = None  # B to A, when it differs from ``latency``
    max_latency: int = 64

    def params(self, end: str) -> LinkParams:
        port, seed = {"a": (1, 0x1235), "b": (2, 0x9878)}[end]
        shared = {f.name: getattr(self, f.name) for f in fields(LinkParams) if hasattr(self, f.name)}
        return LinkParams(**shared, port_id=port, nonce_seed=seed)

    def harness(self, seed, traffic, faults_ab=None, faults_ba=None, user_takes=False) -> LinkHarness:
        """The golden twin of the build, checking the balance invariant (PROTOCOL.md 3.3) too.
        ``user_takes``: ends that model the receive memory and its user streams, as the RTL."""
        channel = Channel(self.latency, latency_ba=self.latency_ba, faults_ab=faults_ab, faults_ba=faults_ba, seed=seed)
        return LinkHarness(
            self.params("a"),
            self.params("b"),
            channel,
            traffic,
            traffic,
            seed=seed,
            check_balance=True,
            user_takes=user_takes,
        )

    def pair_params(self) -> dict:
        """Generation parameters of rtl/simulation/link_pair.py for this build (sim/tools/verilog.py ``export``)."""
        return {
            "params_a": self.params("a").as_dict(),
            "params_b": self.params("b").as_dict(),
            "latency": self.latency,
            "latency_ba": self.latency_ba,
            "max_latency": self.max_latency,
        }

    @property
    def tag(self) -> str:
        """A name for the build directory, from every generation parameter."""
        ba = "" if self.latency_ba is None else f"_{self.latency_ba}"
        copies = "_copies" if self.token_copies else ""
        reads = "" if self.read_slices == _DEFAULT.read_slices else f"_rs{self.read_slices}"
        return (
            f"{self.echo_mode}_c{self.num_classes}_w{self.window}_m{self.margin}_los{self.los_cycles}"
            f"_p{self.probes}_r{self.max_rtt}_l{self.latency}{ba}_max{self.max_latency}{copies}_{self.recovery}{reads}"
        )


@dataclass(frozen=True)
class Scenario:
    build: Build
    cycles: int
    traffic: Traffic
    faults_ab: dict = field(default_factory=dict)
    faults_ba: dict = field(default_factory=dict)
    # Faults planned by a golden dry run: ``plan(scenario, seed) -> (faults_ab, faults_ba)``,
    # used instead of the two dicts (see :meth:`faults`).
    plan: Callable | None = None
    ait_cuts: bool = False  # the campaign of cuts at every offset of a token transfer
    healthy_stretch: int = 0  # cycles of an idle, fault-free link run without per-cycle checks
    # Least counts that show the faults were exercised: golden counters (equal to the RTL's),
    # "preemptions" (frames interrupted by another class at a slice boundary, both ends) or
    # "count_wraps" (classes, over both ends, that delivered at least 2**count_bits frames) or
    # "copies_across_loss" / "copies_standing_in" (token copies that arrived after their original
    # and a lost word / after their original was destroyed: sim/harness/link.py).
    require: dict = field(default_factory=dict)
    # Golden counters (equal to the RTL's) that must stay 0 over both ends: what the scenario
    # shows never happens.
    forbid: tuple = ()
    # (low, high): the RTT both ends hold at the end must lie in this range, for scenarios about
    # a parameter edge.
    rtt_range: tuple | None = None
    # Settles asked of the ends (PROTOCOL.md 10.6), as sim/harness/link_lockstep.py ``settles``:
    # (cycle, end, "down" or "now").
    settles: tuple = ()

    def faults(self, seed: int) -> tuple:
        """(faults_ab, faults_ba) for the channel of a run with this seed."""
        return self.plan(self, seed) if self.plan else (self.faults_ab, self.faults_ba)


def copies_across_drift(scenario, seed, gap=150, bump=4) -> tuple:
    """Faults that put a fill word between a token word and its copy (PROTOCOL.md 3.1), on both
    lines, planned by a golden dry run of ``scenario`` with ``seed``. Whenever a line is about
    to deliver a token original and then its copy, the latency grows by one for ``bump`` cycles
    from the copy's cycle, so the line inserts a fill word between the two, and a flip of slice
    bit 0 makes a word malformed (an IDLE's slice must be 0; a token word fails its CRC):
    alternately the inserted fill word alone (the original arrives: the copy must be dropped)
    and the original with it (the copy must stand for it). A rule by position gets the first
    wrong; only the copy's turn tells the two apart. Between such events, at most ``gap``
    cycles apart, a lone malformed fill word keeps the ends asking for copies. The faults only
    concern cycles from the one being planned on, so the dry run is the run they describe."""
    b = scenario.build
    base = {"ab": b.latency, "ba": b.latency if b.latency_ba is None else b.latency_ba}
    h = b.harness(
        seed, scenario.traffic, {"latency_changes": [], "bit_flips": {}}, {"latency_changes": [], "bit_flips": {}}
    )
    lines = {"ab": h.channel.ab, "ba": h.channel.ba}
    planned, events = {"ab": 0, "ba": 0}, {"ab": 0, "ba": 0}
    for t in range(scenario.cycles):
        for name, line in lines.items():
            L = base[name]
            upcoming = line.upcoming(2)
            if not (line.latency == line.target_latency == L and t >= planned[name] and len(upcoming) == 2):
                continue
            head, after = upcoming
            if head is not None and is_token_word(head) and not is_copy_word(head) and after == head ^ TOKEN_COPY_DELTA:
                line.latency_changes += [(t + 1, L + 1), (t + 1 + bump, L)]
                line.bit_flips[t + 1] = 1
                if events[name] % 2:
                    line.bit_flips[t] = 1
                events[name] += 1
                planned[name] = t + bump + 2
            elif t >= planned[name] + gap:
                line.latency_changes += [(t, L + 1), (t + bump, L)]
                line.bit_flips[t] = 1
                planned[name] = t + bump + 1
        h.step()
    return (
        {"latency_changes": h.channel.ab.latency_changes, "bit_flips": h.channel.ab.bit_flips},
        {"latency_changes": h.channel.ba.latency_changes, "bit_flips": h.channel.ba.bit_flips},
    )


DIGEST = Build()
# Full echo reads its receive memories a half frame a clock (PROTOCOL.md 4.6).
FULL = Build(num_classes=3, echo_mode="full", window=8, latency=5, max_rtt=256, read_slices=4)
STORM = Build(num_classes=4, echo_mode="digest", window=4, latency=9, latency_ba=4, max_rtt=256)
# Parameter edges. max_rtt = 2**6 - 1 with the largest window: drift after the first probe sample
# makes the measured RTT exceed max_rtt (training accepts up to max_rtt + margin), so every RTT
# register must be wide enough for max_rtt + margin.
# Bit errors at 1e-3 corrupt a training word every few round trips: a lost probe waits for
# max_rtt (2.3), so this build bounds the cable at 128 cycles to keep the link mostly UP.
NOISY = Build(max_rtt=128)
# The defaults are selective repeat (PROTOCOL.md 4.6) and token copies (3.1); go-back-N without
# copies is the other build, kept in lockstep too, on the cable of NOISY (one build for its
# scenarios: the default max_rtt is covered by DIGEST's).
GO_BACK_N = Build(max_rtt=128, recovery="go_back_n", token_copies=False)
EDGE_RTT = Build(window=31, max_rtt=63, latency=29)
# Receive memories read a quarter frame a clock, as a fabric node's ports read theirs (10.11).
NARROW = Build(read_slices=2)
# A long link (PROTOCOL.md 4.4): 256 cycles each way, RTT 517, the window the round trip needs
# (175 frames per class, 12-bit counts, replay and receive memories of 256 and 512 frames).
LONG = Build(window=window_for_rtt(2 * 256 + TURNAROUND), max_rtt=1024, latency=256, max_latency=512)
# max_rtt = 2**6 with the smallest window, four classes, the largest margin and loss-of-signal
# run, on a channel whose round trip is exactly max_rtt (31 + 28 cycles + the turnaround of 5).
EDGE_WIDE = Build(num_classes=4, window=1, margin=1 << 16, los_cycles=1024, max_rtt=64, latency=31, latency_ba=28)


def goodput_build(mode: str) -> Build:
    """The bench's goodput link (bench/__main__.py ``goodput``): one class, the default window,
    16 cycles each way, echo ``mode``."""
    return Build(num_classes=1, echo_mode=mode)


_MIXED = Traffic(frame_load=(0.04, 0.04), ait_rate=0.05, withdraw_rate=0.01, take_rate=0.7)
_LIGHT = Traffic(frame_load=(0.02, 0.02, 0.02), ait_rate=0.05, withdraw_rate=0.01, take_rate=0.7)
# Higher classes preempt lower ones at any slice: every class busy, the top one in bursts.
_STORM = Traffic(frame_load=(0.3, 0.3, 0.3, 0.1), ait_rate=0.1, withdraw_rate=0.02, take_rate=0.5)
_SATURATED = Traffic(frame_load=(1.0, 1.0), ait_rate=0.2, take_rate=0.9)
_FOUR = Traffic(frame_load=(0.05,) * 4, ait_rate=0.05, withdraw_rate=0.01, take_rate=0.7)
# Saturated both ways, with users that take a delivered frame in 3% of cycles.
_SLOW_USER = Traffic(frame_load=(1.0, 1.0), ait_rate=0.05, take_rate=0.9, frame_take_rate=0.03)

SCENARIOS = {
    "digest traffic": Scenario(DIGEST, 20_000, _MIXED, healthy_stretch=100_000),
    # Bit errors alone make no training (a lost token word is asked again, PROTOCOL.md 3.1): a
    # cut in the middle makes the link train again under noise.
    "digest bit errors": Scenario(
        DIGEST,
        20_000,
        _MIXED,
        {"bit_error_rate": 2e-4, "cuts": [(10_000, 10_030)]},
        {"bit_error_rate": 2e-4, "cuts": [(10_000, 10_030)]},
        require={"malformed": 4, "trainings": 2},
    ),
    # Frame-level recovery (PROTOCOL.md 4.6) at the bench's error rates, saturated both ways:
    # hundreds of recoveries, the link staying UP. Selective repeat: a payload hit resends that
    # frame alone (REPLAY), frames confirmed behind it wait marked good, a RESYNC resumes past
    # them and scans the rest. Token copies: each token word twice while the peer has seen noise;
    # a lost original is replaced by its copy, a copy that follows an applied original is dropped.
    "digest ber 1e-4": Scenario(
        DIGEST, 30_000, _SATURATED, {"bit_error_rate": 1e-4}, {"bit_error_rate": 1e-4}, require={"recoveries": 200}
    ),
    # Lost token-plane words asked again (PROTOCOL.md 3.1) with the link UP: at 1e-4 a token word
    # is hit every few hundred, often with no copy (the peer has seen no noise lately); not one
    # retraining.
    "digest token asks": Scenario(
        DIGEST,
        30_000,
        _SATURATED,
        {"bit_error_rate": 1e-4},
        {"bit_error_rate": 1e-4},
        require={"token_asks": 5},
        forbid=("trainings",),
    ),
    "digest ber 1e-3": Scenario(
        NOISY, 20_000, _SATURATED, {"bit_error_rate": 1e-3}, {"bit_error_rate": 1e-3}, require={"recoveries": 200}
    ),
    # Users that take a delivered frame in 3% of cycles from a saturated link: the receive
    # memories fill, the receivers refuse slices and the senders' RESYNCs send them again
    # (PROTOCOL.md 4.6), frame by frame as the users take, the link UP throughout.
    "digest slow user": Scenario(
        DIGEST,
        15_000,
        _SLOW_USER,
        require={"recoveries": 100},
        forbid=("trainings",),
    ),
    # A frame read in four parts and offered at most every fifth cycle per class keeps up with
    # a saturated link under recoveries, and the memories fill and recover behind a slow user.
    "narrow reads ber 1e-4": Scenario(
        NARROW, 20_000, _SATURATED, {"bit_error_rate": 1e-4}, {"bit_error_rate": 1e-4}, require={"recoveries": 100}
    ),
    "narrow reads slow user": Scenario(
        NARROW,
        15_000,
        _SLOW_USER,
        require={"recoveries": 100},
        forbid=("trainings",),
    ),
    # Users that take a frame in 0.3% of cycles: a memory stays full long enough that the
    # sender's recoveries confirm nothing RECOVERY_LIMIT times in a row; the end finds its link
    # degraded and retrains, and reconciles with frames still waiting for the user (the limit
    # of PROTOCOL.md 10.11).
    "digest stalled user": Scenario(
        DIGEST,
        15_000,
        Traffic(frame_load=(1.0, 1.0), ait_rate=0.05, take_rate=0.9, frame_take_rate=0.003),
        require={"recoveries": 100, "trainings": 2},
    ),
    # Go-back-N without token copies: NAKs, RESYNC rounds and lost acknowledgements.
    "go-back-n ber 1e-4": Scenario(
        GO_BACK_N, 30_000, _SATURATED, {"bit_error_rate": 1e-4}, {"bit_error_rate": 1e-4}, require={"recoveries": 200}
    ),
    "go-back-n ber 1e-3": Scenario(
        GO_BACK_N,
        20_000,
        _SATURATED,
        {"bit_error_rate": 1e-3},
        {"bit_error_rate": 1e-3},
        require={"recoveries": 200},
    ),
    # Frozen lines with copies on (a steady trickle of bit errors keeps them on): the first
    # repeat of a token word is dropped as a copy, a second is early (PROTOCOL.md 3.1, 5.2).
    "digest frozen line": Scenario(
        NOISY,
        12_000,
        _MIXED,
        {"freezes": [(t, t + 1 + (t // 7) % 61) for t in range(800, 11_000, 577)], "bit_error_rate": 2e-5},
        {"freezes": [(t, t + 2 + (t // 5) % 45) for t in range(1100, 11_000, 811)], "bit_error_rate": 2e-5},
        require={"trainings": 4},
    ),
    "full ber 1e-4": Scenario(
        FULL,
        30_000,
        Traffic(frame_load=(1.0, 1.0, 1.0), ait_rate=0.2, take_rate=0.9),
        {"bit_error_rate": 1e-4},
        {"bit_error_rate": 1e-4},
        require={"recoveries": 200},
    ),
    # The line freezes on the word it carries (PROTOCOL.md 6), token-plane words included: a
    # copy of a token is never taken as the answer (PROTOCOL.md 5.2), the link retrains.
    "go-back-n frozen line": Scenario(
        GO_BACK_N,
        12_000,
        _MIXED,
        {"freezes": [(t, t + 1 + (t // 7) % 61) for t in range(800, 11_000, 577)]},
        {"freezes": [(t, t + 2 + (t // 5) % 45) for t in range(1100, 11_000, 811)]},
        require={"trainings": 4},
    ),
    # The round trip shrinks by more than the margin (16 -> 4 one way): tokens come early, the
    # ends measure again (PROTOCOL.md 5.2) and hold the new, shorter RTT.
    "digest drift down": Scenario(
        DIGEST,
        8000,
        _MIXED,
        {"latency_changes": [(1500, 4)]},
        require={"suspicions": 1},
        rtt_range=(4 + 16 + TURNAROUND, 4 + 16 + TURNAROUND + 8),
    ),
    # Every fault of PROTOCOL.md 6 at once, the latency up and down, then a healthy channel:
    # both ends end UP at the true round trip (within the margin) and delivering (PROTOCOL.md 7).
    "digest liveness": Scenario(
        DIGEST,
        24_000,
        _MIXED,
        {
            "cuts": [(900, 1300), (5200, 5203)],
            "garbage": [(2500, 2530)],
            "freezes": [(3100, 3160)],
            "bit_flips": {t: 1 << (t % 72) for t in range(700, 9000, 113)},
            "latency_changes": [(1500, 40), (4000, 5), (6000, 30), (8000, 16)],
        },
        {
            "cuts": [(2000, 2600)],
            "stuck": [(4400, 4430, 0)],
            "freezes": [(7000, 7100)],
            "latency_changes": [(3000, 25), (6500, 9), (8200, 16)],
        },
        require={"trainings": 4},
        # Within the margin of the true round trip, either way (PROTOCOL.md 7): a resumed session
        # takes one sample, which drift still under way may leave below the final round trip.
        rtt_range=(32 + TURNAROUND - 8, 32 + TURNAROUND + 8),
    ),
    # Flaps of every length class, both directions and one (PROTOCOL.md 2.3): shorter than the
    # loss-of-signal window (asked again, no suspicion), a little longer, a round trip, many:
    # each suspicion resumes the session with one sample of the round trip.
    "digest resume": Scenario(
        DIGEST,
        14_000,
        _MIXED,
        {"cuts": [(1500, 1505), (3000, 3009), (5000, 5040), (7000, 7300), (9000, 11_000)]},
        {"cuts": [(1500, 1505), (3000, 3009), (5000, 5040), (7000, 7300), (12_000, 12_050)]},
        require={"suspicions": 8, "token_asks": 2},
    ),
    # A degraded link is not resumed (every data word from A corrupted for a while): A's round
    # carries no resume flag, so B, which suspects on A's remote fault, trains in full as well.
    "digest resume refused": Scenario(
        DIGEST,
        10_000,
        _MIXED,
        {"gray": [(1500, 4000, 0x80, 0x80, "corrupt")]},
        require={"suspicions": 2},
    ),
    # A gray line (every data word from A dropped for a while, everything else passing): the data
    # plane calls it degraded, and training's data-path check (PROTOCOL.md 2.3) holds the link
    # down until the line carries data again.
    "digest gray held down": Scenario(
        DIGEST,
        12_000,
        _MIXED,
        {"gray": [(1500, 8000, 0x80, 0x80, "drop")]},
        require={"suspicions": 2},
    ),
    # A gray line that comes back and fails again: each degraded verdict holds the link down for
    # DEGRADED_HOLD cycles from its restart, doubling with each verdict in a row (5.2).
    "digest degraded backs off": Scenario(
        DIGEST,
        16_000,
        _MIXED,
        {
            "gray": [
                (1500, 2100, 0x80, 0x80, "drop"),
                (4000, 4600, 0x80, 0x80, "drop"),
                (8000, 8600, 0x80, 0x80, "drop"),
            ]
        },
        require={"suspicions": 6},
    ),
    "digest flaps": Scenario(
        DIGEST,
        6000,
        _MIXED,
        {"cuts": [(1500, 1530), (3000, 3400)]},
        {"cuts": [(4200, 4205)]},
        require={"suspicions": 2},
    ),
    # Drift by 3 (inside the margin of 8) goes unnoticed; a jump of 27 is suspected and the
    # link retrains at the new round trip.
    "digest drift": Scenario(
        DIGEST,
        8000,
        _MIXED,
        {"latency_changes": [(1500, 19), (2500, 13), (5000, 40)]},
        {"latency_changes": [(2000, 20), (3500, 16)]},
        require={"suspicions": 1},
    ),
    # The bench's operating point: every class always offering, tokens always, all taken; long
    # enough for the top class's 12-bit counts to wrap at both ends.
    "digest saturated": Scenario(
        DIGEST, 40_000, Traffic(frame_load=(1.0, 1.0), ait_rate=1.0), require={"count_wraps": 2}
    ),
    # A->B grows by 12 (more than the margin of 8) right after both ends' first probe sample
    # (cycle 81): later probes are declared lost, their late echoes discard the samples, and both
    # ends measure again (PROTOCOL.md 2.3) instead of probing for ever.
    "digest probe drift": Scenario(
        DIGEST,
        4000,
        _MIXED,
        {"latency_changes": [(82, 28)]},
        require={"probes_late": 2},
        rtt_range=(16 + 28 + TURNAROUND,) * 2,
    ),
    # Saturated both ways over the long link, with bit errors: the window keeps both directions
    # near full rate (about 3500 frames delivered by the two ends; the golden link with a window
    # of 31 delivers about 1500) while selective repeat resends the frames bit errors hit.
    "digest long": Scenario(
        LONG,
        20_000,
        _SATURATED,
        {"bit_error_rate": 1e-5},
        {"bit_error_rate": 1e-5},
        require={"frames_delivered": 2800, "recoveries": 10},
    ),
    # A fill word between each of hundreds of token words and its copy (drift inserts it),
    # malformed, and every other time the original malformed too: the copy is dropped when its
    # original was applied and stands for it when not, by its turn (PROTOCOL.md 3.1). The count
    # follows the token traffic: 148 to 193 of each per run over 150 random seeds (median 179),
    # so the floor is 100, not a figure one seed in a few dozen falls below.
    "digest copies across drift": Scenario(
        DIGEST, 12_000, _MIXED, plan=copies_across_drift, require={"copies_across_loss": 100, "copies_standing_in": 100}
    ),
    "digest ait cuts": Scenario(DIGEST, 0, Traffic(), ait_cuts=True, require={"suspicions": 183}),
    "full traffic": Scenario(FULL, 20_000, _LIGHT),
    "full bit errors": Scenario(
        FULL,
        20_000,
        _LIGHT,
        {"bit_error_rate": 3e-4, "cuts": [(10_000, 10_030)]},
        {"bit_error_rate": 3e-4, "cuts": [(10_000, 10_030)]},
        require={"malformed": 4, "trainings": 2},
    ),
    "full flaps": Scenario(
        FULL,
        6000,
        _LIGHT,
        {"cuts": [(2000, 2100)], "garbage": [(4000, 4020)]},
        {"stuck": [(3000, 3040, 0)]},
        require={"suspicions": 1, "malformed": 10},
    ),
    "preemption storm": Scenario(STORM, 8000, _STORM, {"bit_error_rate": 1e-4}, require={"preemptions": 100}),
    # A->B grows by 5 cycles right after both ends' first probe sample of 63 (cycle 133): later
    # samples are 68, within the largest sample + margin, so RTT = 68 > max_rtt = 63.
    "edge rtt above max_rtt": Scenario(
        EDGE_RTT, 6000, _MIXED, {"latency_changes": [(133, 34)]}, rtt_range=(64, 63 + 8)
    ),
    "edge wide": Scenario(EDGE_WIDE, 6000, _FOUR, rtt_range=(64, 64)),
    # Settling a failed link (PROTOCOL.md 10.6), as a fabric does when a LINK_DOWN holds it down:
    # both ends, while the line is cut both ways; one end alone (the other reconciles with it
    # when the link is back); an end whose peer's last word got through (one direction cut); and
    # a settle asked of an UP end, which it skips. Each settled end reconciles without entering
    # UP, hands its unconfirmed frames over newest first, numbers on from its confirmed count,
    # and the link that comes back delivers none of them.
    "digest settle": Scenario(
        DIGEST,
        20_000,
        _MIXED,
        {"cuts": [(3000, 6000), (9000, 12_000)]},
        {"cuts": [(3000, 6000), (9000, 12_000), (15_000, 17_000)]},
        settles=(
            (3400, "b", "down"),
            # Asked "now" a few cycles before the end entangles again (6065, 12065, 17091): the
            # first two apply; the third would apply in the cycle the end entangles, and is skipped.
            (6061, "a", "now"),
            (9400, "a", "down"),
            (12_062, "b", "now"),
            (15_400, "b", "down"),
            (17_090, "a", "now"),
            (18_500, "a", "now"),
        ),
        require={"settles_applied": 5, "settles_skipped": 2, "frames_taken_out": 4},
    ),
    "full settle": Scenario(
        FULL,
        12_000,
        _LIGHT,
        {"cuts": [(3000, 5000)]},
        {"cuts": [(3000, 5000), (8000, 9500)]},
        settles=((3300, "a", "down"), (3300, "b", "down"), (8300, "a", "down")),
        require={"settles_applied": 3, "frames_taken_out": 6},
    ),
}


def free_running_inputs(build: Build) -> dict:
    """Constant user inputs that keep a link of ``build`` busy with no testbench work per cycle:
    every class always has a frame to hand in, A always has a token to hand in, every delivery
    is taken at once, and the channel is quiet at the build's latencies (an input left unset
    would ask the line for latency 0, which the fill words would then let it approach). Keys
    are port paths of rtl/simulation/link_pair.py."""
    inputs = {}
    for e in "ab":
        for c in range(build.num_classes):
            inputs[(f"{e}_frames_in", c, "valid")] = 1
            inputs[(f"{e}_frames_in", c, "payload")] = int.from_bytes(bytes(range(c, c + 64)), "little")
            inputs[(f"{e}_frames_out", c, "ready")] = 1
        inputs[(f"{e}_ait_in", "valid")] = int(e == "a")
        inputs[(f"{e}_ait_in", "payload")] = 0x1234
        inputs[(f"{e}_ait_out", "ready")] = 1
        inputs[(f"{e}_withdraw",)] = 0
        inputs[(f"{e}_settle", "valid")] = 0
        for c in range(build.num_classes):
            inputs[(f"{e}_taken", c, "ready")] = 0
    for d in ("ab", "ba"):
        for port in ("cut", "flip", "force", "force_word", "freeze", "gray_mask", "gray_value", "gray_drop"):
            inputs[(f"{d}_{port}",)] = 0
    ba = build.latency if build.latency_ba is None else build.latency_ba
    inputs[("ab_latency",)], inputs[("ba_latency",)] = build.latency, ba
    return inputs


# tests/test_link_sweep.py runs this scenario, the same lockstep, through `make sweeps`' table
# (a divergence fails it there); cocotb_tests/test_link.py leaves it out, so it runs once.
BY_THE_SWEEP_TEST = "digest flaps"
