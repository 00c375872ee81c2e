"""Generation parameters of an OAE endpoint, defined once: defaults, limits, and the sizes they imply.

Standard library only, like golden/encoding.py: the golden model, the RTL (which may import
these two modules and nothing else from golden/), the lockstep and the tests all use it, so a
limit or a width cannot differ between them. Wire encodings live in golden/encoding.py; this
module holds what a deployment chooses.
"""

from dataclasses import asdict, dataclass, fields

from golden import encoding as enc

ECHO_MODES = ("digest", "full")
# Frame-level recovery (PROTOCOL.md 4.6): go-back-N for every error, or selective repeat of a
# frame whose digest shows its payload corrupted (go-back-N for the rest).
RECOVERY_MODES = ("go_back_n", "selective")

# The slices a receive memory's user side may read a clock (PROTOCOL.md 4.6): a whole frame, or
# half or a quarter of one, when a frame then takes 1 + 8 / read_slices cycles, within the eight a
# frame takes on the wire; a slice a clock would take nine.
READ_SLICES = (8, 4, 2)

# The parameters both ends of a link must agree on (PROTOCOL.md 9).
SHARED_PARAMS = ("num_classes", "echo_mode", "window", "recovery", "token_copies")

# The endpoint's pipeline (PROTOCOL.md 2.2): a word arriving at cycle t is checked (C) in t and
# applied (A) in t + APPLY_DELAY; a word chosen by S in cycle s is built in two stages, B1 in
# s + 1 (the slice read from the replay memory) and B2 in s + 2 (the word), and is on the wire
# in s + WIRE_DELAY. The turnaround, arrival to the earliest reply on the wire, is
# APPLY_DELAY + 1 (S in the cycle after A) + WIRE_DELAY.
APPLY_DELAY = 1
WIRE_DELAY = 3
TURNAROUND = APPLY_DELAY + 1 + WIRE_DELAY
# A restart decided by A in cycle a takes effect in a + RESTART_DELAY, the restart cycle.
RESTART_DELAY = 2
# A token S sends in cycle s must be applied back by s + TOKEN_DEADLINE_AFTER_SEND + RTT + margin:
# on the wire at s + WIRE_DELAY, arrived by then + RTT + margin, applied APPLY_DELAY later.
TOKEN_DEADLINE_AFTER_SEND = WIRE_DELAY + APPLY_DELAY

# An end sends a fill word (IDLE) at least once every FILL_INTERVAL cycles (PROTOCOL.md 6): the
# channel's elastic buffer can then shorten a latency that grew, whatever the traffic.
FILL_INTERVAL = 256

# Token copies (PROTOCOL.md 3.1): an end asks for them while it has applied a malformed word in
# the last NOISE_WINDOW cycles.
NOISE_WINDOW = 256
# A lost token word asked again (PROTOCOL.md 3.1): an end asks at most ASK_LIMIT times while it
# waits for one token word; then the token deadline decides (PROTOCOL.md 5.2).
ASK_LIMIT = 3
# The data-path check of training (PROTOCOL.md 2.3): for RTT + margin + CHECK_GRACE A cycles after
# entangling, a DATA word equal to the peer's check slice of its class and index is its check frame,
# sent before the peer learnt that it had arrived, and is dropped.
CHECK_GRACE = APPLY_DELAY + 1

# Frame-level recovery (PROTOCOL.md 4.6): this many RESYNCs in a row without a frame confirmed
# make the end suspect its link (reason ``degraded``) and retrain.
RECOVERY_LIMIT = 16
# A line that returns nothing (PROTOCOL.md 4.5, 4.6): the peer's reverse queue is empty when it
# applies a RESYNC, so the return of the first slice recorded after one is due within RTT +
# margin + QUIET_SLACK (the words the peer's S may put first: token words and their copies, an
# ask, its own recovery words, a data slice, a fill word), whatever the echo slack. When
# that return is late QUIET_LIMIT times in a row, with no expected return arriving in between,
# the line carries nothing from this end: degraded.
QUIET_SLACK = 16
QUIET_LIMIT = 3
# A degraded link is held down (PROTOCOL.md 5.2): its next training round may not entangle for
# DEGRADED_HOLD cycles, doubling with each degraded verdict in a row up to DEGRADED_HOLD <<
# (DEGRADED_STEPS - 1); a link UP for DEGRADED_HEAL cycles in a row starts the count again.
DEGRADED_HOLD = 1024
DEGRADED_STEPS = 6
DEGRADED_HEAL = DEGRADED_HOLD << DEGRADED_STEPS
# A RESYNC on the wire at w is acknowledged by w + RTT + ACK_SLACK + margin at the latest: the
# peer's S may put its token word, its own RESYNC and a fill word before the acknowledgement.
ACK_SLACK = 3

# A fabric's end-to-end acknowledgements (PROTOCOL.md 10.7): a destination acknowledges a user
# stream after this many more frames delivered in order (a node parameter, at most the maximum).
E2E_ACK_EVERY = 8
E2E_ACK_EVERY_MAX = 1 << 16
# The end-to-end window (PROTOCOL.md 10.10): the frames of one user stream (origin, destination,
# class) its origin holds unacknowledged at most, a node parameter, a power of two (a frame's slot
# in the stream's store is the low bits of its sequence) and at least ``ack_every``. The default,
# 64 frames, keeps one stream at a class's full rate over two hops of lines up to the default link
# build's 18 cycles each way. The RTL store reads a frame's 448-bit payload a clock, so its block
# RAMs are counted by that width (13 ECP5 blocks of 512 x 36), not by the window, up to 512. The maximum
# allows the largest ``ack_every``, and stays far below half the 32-bit sequence space, by which a
# destination tells a copy from a frame it has not had.
E2E_WINDOW = 64
E2E_WINDOW_MAX = 1 << 16
# A node's ports read their receive memories a quarter frame a clock (``read_slices``, PROTOCOL.md
# 4.6, 10.11), unless its link parameters say otherwise: a memory a frame wide takes 16 block RAMs
# whatever its depth, one a quarter wide 4, and the node has one per port and class.
NODE_READ_SLICES = 2
# The window of each control stream (origin, destination), fixed: a control message written while
# it is full waits, and a newer one about the same link replaces it (PROTOCOL.md 10.10).
E2E_CONTROL_WINDOW = 16
# The frames one forward queue of a node (destination, port class) holds at most (PROTOCOL.md
# 10.11), a node parameter, a power of two (a queue's pointers wrap). A frame whose queue is full
# stays in the port that delivered it until there is room; one for a node with no path does not
# wait, and the queue drops its oldest frame instead. The default, twice the end-to-end window
# (in RTL 15 ECP5 block RAMs of 512 x 36 per queue, for a frame read a clock at any depth up to
# 512), keeps every frame an origin sent
# since its last route change in a triangle, where a queue carries one origin's stream per class
# and the ACKs of another; the fabric scenarios at latencies 8 and 30 never fill a queue of 16.
FORWARD_DEPTH = 2 * E2E_WINDOW
FORWARD_DEPTH_MAX = 1 << 12
# A node's event queue (PROTOCOL.md 10.11): room for this many events per port (a port's
# changes never wait: they are what the node must report) and for EVENT_MESSAGES control
# messages, which wait in their inbox while as many are queued.
EVENTS_PER_PORT = 2
EVENT_MESSAGES = 8


def window_for_rtt(rtt: int, full_echo: bool = False) -> int:
    """The window (frames per class) that keeps one saturated class sending at full rate over a
    round trip of ``rtt`` cycles: the bandwidth-delay product of the commit loop (PROTOCOL.md
    4.4). A frame's slot is free again when the end learns the peer applied the commit count
    that includes it: its last slice leaves F - 1 cycles after its first (F: the wire cycles of
    one frame, 9 in digest mode, 17 in full), its digest returns a round trip later, the next
    token carrying the count leaves within a round trip and the peer's answer is back within
    another: 3 RTT + F - 1 cycles, during which the class sends one frame every F cycles."""
    frame_cycles = enc.SLICES_PER_FRAME + enc.returned_words_per_frame(full_echo)
    return -(-(3 * rtt + frame_cycles - 1) // frame_cycles) + 1


def longest_latency(window: int, full_echo: bool = False) -> int:
    """The longest one-way channel latency (cycles) over which ``window`` keeps a saturated class
    at full rate: the largest L with ``window_for_rtt(2 L + TURNAROUND) <= window`` (0: none)."""
    latency = 0
    while window_for_rtt(2 * (latency + 1) + TURNAROUND, full_echo) <= window:
        latency += 1
    return latency


def window_in_use_terms(full_echo: bool = False) -> tuple[int, int]:
    """(offset, shift) such that :func:`window_in_use` is min(window, (3 RTT + offset) >> shift):
    the one definition the golden model and the hardware share (F + 2 F' - 2, log2 F')."""
    frame_cycles = enc.SLICES_PER_FRAME + enc.returned_words_per_frame(full_echo)
    shift = frame_cycles.bit_length() - 1
    return frame_cycles + (2 << shift) - 2, shift


def window_in_use(rtt: int, window: int, full_echo: bool = False) -> int:
    """The window an end sends with over a measured round trip of ``rtt`` cycles (PROTOCOL.md
    4.4): ``ceil((3 RTT + F - 1) / F') + 1``, :func:`window_for_rtt` with the divisor F, the
    frame's wire cycles, rounded down to a power of two F' (8 in digest mode, 16 in full), so
    that hardware divides by a shift; never below what the round trip needs and at most F/F'
    of it (one eighth, one sixteenth more), and at most ``window``, the frames the replay
    memory holds."""
    offset, shift = window_in_use_terms(full_echo)
    return min(window, (3 * rtt + offset) >> shift)


# Inclusive limits of each parameter that stands alone; ``los_cycles`` also depends on ``margin``.
# window: counts travel modulo 2**count_bits, and a receiver must tell the frames of the window
# from those a window later, so a window is at most half the count space, less one; the count
# width depends on num_classes (checked in LinkParams), this is the widest.
LIMITS = {
    "num_classes": (1, enc.MAX_CLASSES),
    "window": (1, (1 << (enc.MAX_COUNT_BITS - 1)) - 1),
    "margin": (2, 1 << 16),  # at least los_cycles, which is at least 2
    "los_cycles": (2, 1024),
    "probes": (1, 64),
    "max_rtt": (TURNAROUND + 2, 1 << 20),  # the shortest round trip: latency 1 each way
    "port_id": (0, (1 << enc.PORT_ID_BITS) - 1),
    "nonce_seed": (1, (1 << enc.NONCE_LFSR_BITS) - 1),
}


def check_int(name: str, value, low: int, high: int | None = None) -> int:
    """``value`` if it is an int (not a bool) in [low, high]; otherwise ValueError naming ``name``."""
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= low and (high is None or value <= high)
    if not ok:
        span = f"in [{low}, {high}]" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be an integer {span}, not {value!r}")
    return value


def check_power_of_two(name: str, value, low: int, high: int, why: str) -> int:
    """``value`` if it is a power of two in [low, high]; otherwise ValueError naming ``name`` and
    saying ``why`` it must be one."""
    check_int(name, value, low, high)
    if value & (value - 1):
        raise ValueError(f"{name} must be a power of two ({why}), not {value}")
    return value


def check_window(name: str, value) -> int:
    """An end-to-end window (PROTOCOL.md 10.10): a power of two in [1, ``E2E_WINDOW_MAX``], since a
    frame's slot is the low bits of its sequence; otherwise ValueError naming ``name``."""
    return check_power_of_two(name, value, 1, E2E_WINDOW_MAX, "a slot is a sequence's low bits")


def check_param(name: str, value) -> int:
    """``value`` checked against the limits of endpoint parameter ``name``."""
    return check_int(name, value, *LIMITS[name])


def check_read_slices(value) -> int:
    """``value`` if it is one of READ_SLICES (PROTOCOL.md 4.6); otherwise ValueError."""
    if type(value) is not int or value not in READ_SLICES:
        raise ValueError(
            f"read_slices must be one of {', '.join(map(str, READ_SLICES))} (a frame read in "
            f"whole parts, fast enough for a class at full rate), not {value!r}"
        )
    return value


@dataclass(frozen=True)
class LinkParams:
    """Generation parameters of one endpoint, golden and RTL alike; validated at construction.

    Bad values raise ValueError naming the parameter; nothing is built from a bad set.
    """

    num_classes: int = 2
    echo_mode: str = "digest"  # "digest" or "full"
    recovery: str = "selective"  # "go_back_n" or "selective" (PROTOCOL.md 4.6)
    token_copies: bool = True  # each token word sent twice on a noisy link (PROTOCOL.md 3.1)
    window: int = 16  # frames per class the peer may hold unconfirmed
    margin: int = 8  # RLFD margin in cycles, see PROTOCOL.md 5.1
    los_cycles: int = 8  # cycles without a well-formed word = loss of signal
    probes: int = 4  # RTT probes per training
    max_rtt: int = 4096  # design bound on the round trip (cable + pipeline)
    port_id: int = 0
    nonce_seed: int = 1
    read_slices: int = 8  # slices of a frame the receive memory's user side reads a clock (PROTOCOL.md 4.6)

    def __post_init__(self):
        for name in LIMITS:
            check_param(name, getattr(self, name))
        if self.echo_mode not in ECHO_MODES:
            raise ValueError(f"echo_mode must be 'digest' or 'full', not {self.echo_mode!r}")
        if not isinstance(self.token_copies, bool):
            raise ValueError(f"token_copies must be a bool, not {self.token_copies!r}")
        if self.recovery not in RECOVERY_MODES:
            raise ValueError(f"recovery must be 'go_back_n' or 'selective', not {self.recovery!r}")
        check_read_slices(self.read_slices)
        largest = self.count_mod // 2 - 1
        if self.window > largest:
            raise ValueError(
                f"window must be an integer in [1, {largest}] with num_classes={self.num_classes} "
                f"(counts are {self.count_bits} bits on the wire, PROTOCOL.md 2.1), "
                f"not {self.window!r}"
            )
        # A cut is then suspected at the far end within los_cycles + RESTART_DELAY + TURNAROUND - 1
        # + L of its start, which is within RTT + margin when the cut direction's latency is at
        # least 1 (PROTOCOL.md 5.3).
        if self.los_cycles > self.margin:
            raise ValueError(
                f"los_cycles must be an integer in [2, margin] (so a cut is suspected "
                f"within RTT + margin), not {self.los_cycles!r}"
            )

    @classmethod
    def from_kwargs(cls, **kwargs) -> "LinkParams":
        """From keyword arguments (the RTL components' and the Verilog sidecars' form); an
        unknown name is a ValueError listing the known ones."""
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(kwargs) - set(known))
        if unknown:
            raise ValueError(f"unknown endpoint parameter {unknown[0]!r}; known: {', '.join(known)}")
        return cls(**kwargs)

    @classmethod
    def resolve(cls, params=None, kwargs=None) -> "LinkParams":
        """The parameters of a component that takes either a LinkParams or its fields as
        keyword arguments (golden and RTL ``LinkCore``): not both, and nothing else."""
        if params is not None and kwargs:
            raise ValueError("params and keyword parameters are exclusive; pass one or the other")
        return require(params) if params is not None else cls.from_kwargs(**(kwargs or {}))

    def as_dict(self) -> dict:
        return asdict(self)

    # --- what the parameters imply --------------------------------------------------------

    @property
    def full_echo(self) -> bool:
        return self.echo_mode == "full"

    @property
    def selective(self) -> bool:
        return self.recovery == "selective"

    @property
    def read_parts(self) -> int:
        """The reads of a frame from the receive memory, one a cycle (PROTOCOL.md 4.6)."""
        return enc.SLICES_PER_FRAME // self.read_slices

    @property
    def window_slots(self) -> int:
        """W': the window rounded up to a power of two (at least 2). A hardware receiver holds
        2 W' frames per class until its user takes them (PROTOCOL.md 4.6)."""
        return 1 << max(1, (self.window - 1).bit_length())

    @property
    def count_bits(self) -> int:
        """Width of frame sequences and commit counts on the wire (PROTOCOL.md 2.1)."""
        return enc.count_bits(self.num_classes)

    @property
    def count_mod(self) -> int:
        return 1 << self.count_bits

    @property
    def echo_slack(self) -> int:
        """Cycles a returned word may wait in the peer's reverse queue (PROTOCOL.md 4.5)."""
        return enc.echo_slack(self.num_classes, self.window, self.full_echo, FILL_INTERVAL)

    @property
    def quiet_slack(self) -> int:
        """Cycles the return of the first slice after a RESYNC may wait (PROTOCOL.md 4.5): not
        bounded by the echo slack, which leaves recovery words out."""
        return QUIET_SLACK

    @property
    def rtt_limit(self) -> int:
        """The largest RTT training can measure: the first probe must return within max_rtt,
        later ones within the largest sample + margin (PROTOCOL.md 2.3)."""
        return self.max_rtt + self.margin

    @property
    def rtt_bits(self) -> int:
        """Width of every register that holds a measured RTT (training, RLFD, framer, status)."""
        return self.rtt_limit.bit_length()

    @property
    def token_countdown(self) -> int:
        """The RLFD countdown at the largest RTT: it starts the cycle after S sends the token
        and reaches 0 in the cycle A must have applied the answer (PROTOCOL.md 5.2)."""
        return self.rtt_limit + self.margin + TOKEN_DEADLINE_AFTER_SEND - 1

    @property
    def deadline_bits(self) -> int:
        """Width of the RLFD's countdown (:attr:`token_countdown`)."""
        return self.token_countdown.bit_length()

    def liveness_bound(self, rtt: int) -> int:
        """Cycles within which both ends are UP once the channel is healthy and stable with
        round trip ``rtt`` (PROTOCOL.md 7.5): a probe lost to a stale bound waits at most
        max_rtt, and detection, HELLO, the probes and READY take a round trip plus margin each."""
        return self.max_rtt + (self.probes + 4) * (rtt + self.margin)

    @property
    def return_queue_depth(self) -> int:
        """Words the reverse (ECHO/DIGEST) queue and the expect queue can hold at once
        (PROTOCOL.md 4.5)."""
        return enc.return_queue_entries(self.num_classes, self.window, self.full_echo)

    @property
    def return_queue_entries(self) -> int:
        """Hardware entries of each return queue: a frame's last-slice echo and its digest share
        one (PROTOCOL.md 4.5)."""
        per_frame = enc.SLICES_PER_FRAME if self.full_echo else 1
        return self.num_classes * self.window * per_frame


def require(params) -> LinkParams:
    """``params`` if it is a LinkParams; TypeError otherwise (components take the endpoint's set)."""
    if not isinstance(params, LinkParams):
        raise TypeError(f"params must be a LinkParams, not {type(params).__name__}")
    return params


def require_shared(params_a: LinkParams, params_b: LinkParams) -> None:
    """Raise ValueError unless the two ends agree on every parameter in ``SHARED_PARAMS``."""
    differ = [n for n in SHARED_PARAMS if getattr(params_a, n) != getattr(params_b, n)]
    if differ:
        raise ValueError(
            f"params_a and params_b must agree on {', '.join(SHARED_PARAMS)}; they differ in {', '.join(differ)}"
        )


# The documented builds (PROTOCOL.md 9): each is the defaults with the window, that is the replay
# memory per class, sized for a stated longest line (``longest_latency``): the default for a
# line of up to 18 cycles each way, ``long`` for 257 (sized for 256, RTT 517: window 175, replay
# and receive memories in block RAM). ``make synth`` places the default endpoint and the long
# build's framer; ``make bench`` names the build behind each row of its goodput-vs-latency table.
BUILD_OPTIONS = {
    "default": {},
    "long": {"window": window_for_rtt(2 * 256 + TURNAROUND)},
}


def build_params(name: str, **overrides) -> LinkParams:
    """The LinkParams of documented build ``name`` (ValueError for another name), with ``overrides``."""
    if name not in BUILD_OPTIONS:
        raise ValueError(f"build must be one of {', '.join(BUILD_OPTIONS)}, not {name!r}")
    return LinkParams(**{**BUILD_OPTIONS[name], **overrides})


def check_node_params(user_classes, ack_every, e2e_window, forward_depth, link_params: dict) -> None:
    """A fabric node's own parameters (PROTOCOL.md 10.7, 10.10, 10.11), checked alike by the golden
    node and its hardware twin: ValueError naming the first bad one."""
    check_int("user_classes", user_classes, 1, enc.MAX_CLASSES - 1)
    check_int("ack_every", ack_every, 1, E2E_ACK_EVERY_MAX)
    check_window("e2e_window", e2e_window)
    check_power_of_two("forward_depth", forward_depth, 2, FORWARD_DEPTH_MAX, "a queue's pointers wrap")
    if ack_every > e2e_window:
        # The destination would wait for more frames than the origin may send: no ACK, ever.
        raise ValueError(f"ack_every must be at most e2e_window ({e2e_window}), not {ack_every}")
    for name in ("num_classes", "port_id", "nonce_seed"):
        if name in link_params:
            raise ValueError(f"{name} is set by the node, not a link parameter here")


def node_port_params(node_id: int, peer: int, link: int, user_classes: int, seed: int, link_params: dict) -> LinkParams:
    """The LinkParams of node ``node_id``'s port on ``link`` towards ``peer``: one class more than
    the user classes (the highest carries control frames), its port id and nonce seed from the
    node, the link and the fabric's ``seed``, ``read_slices`` ``NODE_READ_SLICES`` unless
    ``link_params`` sets it, and ``link_params`` for the rest."""
    return LinkParams(
        num_classes=user_classes + 1,
        port_id=(node_id * 7 + peer) % 256,
        nonce_seed=1 + (seed * 65537 + node_id * 257 + link * 17) % 0xFFFFFFFE,
        **{"read_slices": NODE_READ_SLICES, **link_params},
    )
