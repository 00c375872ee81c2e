"""Parameters of the PCIe-style contrast link, defined once: the timer table in real time, its
conversion to link cycles, and the counts and sizes a deployment chooses (docs/CONTRAST.md 4).

Standard library only, like golden/params.py, so the RTL may import it. Every timer is given in
seconds with its source; :class:`PcieParams` turns it into cycles at ``clock_mhz``, stretched by
the LTSSM tolerance (the spec allows -0/+50%) and multiplied by one common ``time_scale`` for fast
tests (the experiment runs at 1.0: scaling every timer by one factor scales every ratio to OAE by
that factor).
"""

import math
from dataclasses import asdict, dataclass, fields

from golden import encoding as enc
from golden.encoding import LtssmState as S

# The 64-bit 10GBASE-R datapath clock: one 72-bit word per cycle, the clock OAE is built for.
DEFAULT_CLOCK_MHZ = 156.25


@dataclass(frozen=True)
class Timer:
    seconds: float
    source: str
    ltssm: bool  # an LTSSM timer: stretched by the tolerance


# Sources: the PCI Express Base Specification, Revision 4.0 (PCI-SIG, 2017), by section number:
# chapter 4 for the LTSSM and electrical idle, 3.5.2.1 for the replay timer; the completion
# timeout is the Device Control 2 register's range.
TIMERS = {
    "detect_quiet": Timer(12e-3, "4.2.6.1.1 Detect.Quiet: 12 ms -> Detect.Active", True),
    "polling_active": Timer(24e-3, "4.2.6.2.1 Polling.Active: 24 ms -> Polling.Configuration or Detect", True),
    "polling_config": Timer(48e-3, "4.2.6.2.3 Polling.Configuration: 48 ms -> Detect", True),
    "config_linkwidth": Timer(24e-3, "4.2.6.3 Config.Linkwidth.Start: 24 ms -> Detect", True),
    "config_complete": Timer(2e-3, "4.2.6.3 Config.Complete: 2 ms -> Detect", True),
    "config_idle": Timer(2e-3, "4.2.6.3 Config.Idle: 2 ms -> Recovery.RcvrLock or Detect", True),
    "recovery_rcvrlock": Timer(
        24e-3, "4.2.6.4.1 Recovery.RcvrLock: 24 ms -> Recovery.Speed at the lowest rate, Configuration or Detect", True
    ),
    "recovery_rcvrcfg": Timer(48e-3, "4.2.6.4.4 Recovery.RcvrCfg: 48 ms -> Detect", True),
    "recovery_idle": Timer(2e-3, "4.2.6.4.5 Recovery.Idle: 2 ms -> Recovery.RcvrLock or Detect", True),
    "recovery_speed_ei": Timer(
        6e-6, "4.2.6.4.3 Recovery.Speed: electrical idle >= 6 us after a failed speed change", False
    ),
    "ei_inference": Timer(128e-6, "4.2.4.3 electrical idle inferred: no SKP (or FC update) in 128 us", False),
    "replay_timer": Timer(
        24e-6, "3.5.2.1 REPLAY_TIMER, simplified limit 24,000 symbol times (about 24 us at 8 GT/s)", False
    ),
    "ack_latency": Timer(
        8e-6,
        "model choice: a third of the replay timer, so an ACK is due well before the peer's replay timer expires",
        False,
    ),
    "completion_timeout": Timer(
        10e-3,
        "Device Control 2, default range 50 us - 50 ms; the spec recommends not "
        "expiring before 10 ms (the fastest recommended value is the default here)",
        False,
    ),
}

# Counts of the LTSSM (not timers: never scaled).
TS1_BEFORE_CONFIG = 1024  # 4.2.6.2.1: TS1 sent in Polling.Active before it may leave
TS_TO_LOCK = 8  # consecutive training sets received to move on
TS_AFTER_FIRST = 16  # TS2 (IDL) sent after the first one received
IDLE_TO_RLOCK_LIMIT = 0xFF  # 4.2.6.3.6, 4.2.6.4.5: Idle -> RcvrLock transitions before Detect
SKP_INTERVAL = 370  # 128b/130b: a SKP ordered set every 370 to 375 blocks
REPLAY_NUM_ROLLOVER = 4  # 3.5.2.1: the 4th replay in a row rolls REPLAY_NUM over -> Recovery
COMPLETER_DELAY_BITS = 32  # the RTL completer's delay port: up to 27 s at 156.25 MHz


# The timer that runs in each state (None: no timer).
STATE_TIMER = {
    S.DETECT_QUIET: "detect_quiet",
    S.DETECT_ACTIVE: None,
    S.POLLING_ACTIVE: "polling_active",
    S.POLLING_CONFIG: "polling_config",
    S.CONFIG_LINKWIDTH: "config_linkwidth",
    S.CONFIG_COMPLETE: "config_complete",
    S.CONFIG_IDLE: "config_idle",
    S.L0: None,
    S.RECOVERY_RCVRLOCK: "recovery_rcvrlock",
    S.RECOVERY_SPEED: "recovery_speed_ei",
    S.RECOVERY_RCVRCFG: "recovery_rcvrcfg",
    S.RECOVERY_IDLE: "recovery_idle",
}
RECOVERY_STATES = frozenset((S.RECOVERY_RCVRLOCK, S.RECOVERY_SPEED, S.RECOVERY_RCVRCFG, S.RECOVERY_IDLE))
# Link numbers: training sets carry TS_LINK_PAD until Configuration, then link 0 (x1).
LINK_NUMBER = 0


def ts_body(link: int, rate: int) -> int:
    return link << enc.TS_LINK_LSB | rate << enc.TS_RATE_LSB


def _int_in(name, value, low, high):
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer in [{low}, {high}], not {value!r}")


@dataclass(frozen=True)
class PcieParams:
    """What one contrast-link end is built with. Bad values raise ValueError naming the parameter.

    ``clock_mhz``: the link clock (one word per cycle). ``time_scale``: one factor for every timer
    (1.0 = the spec; tests use less). ``tolerance``: the LTSSM timers fire at nominal x (1 +
    tolerance), 0 to 0.5 (-0/+50%); 0 gives the contrast link its fastest legal detection.
    ``completion_timeout_s``: the requester's configured value (50 us to 64 s). ``max_rate``: the
    rate the end trains at (PcieRate). ``replay_tlps``: the replay buffer, in TLPs. ``ack_every``:
    TLPs received before an ACK is due regardless of the ACK latency timer. ``outstanding``:
    read requests in flight at most. ``completer_delay``: cycles this end's completer takes to
    answer a request. ``ei_detect``: cycles of no signal in which the receiver's squelch reports
    electrical idle (an implementation figure: 8 cycles, about 50 ns). ``framing_error_recovery``:
    a malformed word in L0 at the full rate sends the LTSSM to Recovery (docs/CONTRAST.md 3)."""

    clock_mhz: float = DEFAULT_CLOCK_MHZ
    time_scale: float = 1.0
    tolerance: float = 0.0
    completion_timeout_s: float = TIMERS["completion_timeout"].seconds
    max_rate: int = enc.PcieRate.FULL
    replay_tlps: int = 32
    ack_every: int = 8
    outstanding: int = 16
    completer_delay: int = 64
    ei_detect: int = 8
    framing_error_recovery: bool = True
    skp_interval: int = SKP_INTERVAL

    def __post_init__(self):
        def number(value):
            return isinstance(value, (int, float)) and not isinstance(value, bool)

        if not number(self.clock_mhz) or not 1 <= self.clock_mhz <= 2000:
            raise ValueError(f"clock_mhz must be a number in [1, 2000], not {self.clock_mhz!r}")
        if not number(self.time_scale) or not 0 < self.time_scale <= 1:
            raise ValueError(f"time_scale must be a number in (0, 1], not {self.time_scale!r}")
        if not number(self.tolerance) or not 0 <= self.tolerance <= 0.5:
            raise ValueError(f"tolerance must be a number in [0, 0.5] (the spec's -0/+50%), not {self.tolerance!r}")
        if not number(self.completion_timeout_s) or not 50e-6 <= self.completion_timeout_s <= 64:
            raise ValueError(
                f"completion_timeout_s must be a number of seconds in [50e-6, 64], not {self.completion_timeout_s!r}"
            )
        if isinstance(self.max_rate, bool):
            raise ValueError(f"max_rate must be one of {[int(r) for r in enc.PcieRate]}, not {self.max_rate!r}")
        if self.max_rate not in tuple(enc.PcieRate):
            raise ValueError(f"max_rate must be one of {[int(r) for r in enc.PcieRate]}, not {self.max_rate!r}")
        _int_in("replay_tlps", self.replay_tlps, 1, 1 << (enc.PCIE_SEQ_BITS - 1))
        _int_in("ack_every", self.ack_every, 1, self.replay_tlps)
        _int_in("outstanding", self.outstanding, 1, 1 << enc.STP_REQ_TAG_BITS)
        _int_in("completer_delay", self.completer_delay, 0, (1 << COMPLETER_DELAY_BITS) - 1)
        _int_in("ei_detect", self.ei_detect, 1, 1 << 16)
        _int_in("skp_interval", self.skp_interval, 16, 1 << 16)
        if not isinstance(self.framing_error_recovery, bool):
            raise ValueError(f"framing_error_recovery must be a bool, not {self.framing_error_recovery!r}")
        # SKP must arrive well within the electrical-idle inference window, at the lowest rate too,
        # or a healthy link would infer electrical idle: scaling the timers down needs fewer words
        # between SKPs.
        gap = 2 * self.skp_interval * enc.PCIE_LOW_RATE_DIVISOR
        if self.cycles("ei_inference") <= gap:
            raise ValueError(
                f"time_scale {self.time_scale} at clock_mhz {self.clock_mhz} makes electrical-idle "
                f"inference {self.cycles('ei_inference')} cycles, not above {gap} (2 SKP intervals at "
                f"the lowest rate): raise time_scale or clock_mhz, or lower skp_interval"
            )
        # A replay timer shorter than a TLP and its ACK would replay a healthy link for ever.
        least = 4 * enc.PCIE_TLP_WORDS
        if self.cycles("replay_timer") < least:
            raise ValueError(
                f"time_scale {self.time_scale} at clock_mhz {self.clock_mhz} makes the replay timer "
                f"{self.cycles('replay_timer')} cycles, under {least}: raise time_scale or clock_mhz"
            )

    def cycles(self, name: str) -> int:
        """Timer ``name`` of TIMERS in link cycles (rounded up), at least 1."""
        if name not in TIMERS:
            raise ValueError(f"no timer {name!r}; the timers are {sorted(TIMERS)}")
        timer = TIMERS[name]
        seconds = self.completion_timeout_s if name == "completion_timeout" else timer.seconds
        stretch = 1 + self.tolerance if timer.ltssm else 1
        # Rounded up: a spec timer is a minimum (-0%), it must not fire a cycle early (the
        # epsilon keeps float noise in the product from adding a cycle).
        return max(1, math.ceil(seconds * stretch * self.time_scale * self.clock_mhz * 1e6 - 1e-6))

    def table(self) -> list[dict]:
        """Every timer: name, real time, cycles at this build, source (for docs and reports)."""
        return [
            {
                "name": n,
                "seconds": (self.completion_timeout_s if n == "completion_timeout" else t.seconds),
                "cycles": self.cycles(n),
                "ltssm": t.ltssm,
                "source": t.source,
            }
            for n, t in TIMERS.items()
        ]

    def asdict(self) -> dict:
        return asdict(self)

    @classmethod
    def resolve(cls, params, kwargs) -> "PcieParams":
        """``params`` itself, or a PcieParams built from ``kwargs`` (never both)."""
        if params is not None and kwargs:
            raise ValueError("pass either a PcieParams or its fields, not both")
        if params is not None:
            if not isinstance(params, cls):
                raise ValueError(f"params must be a PcieParams, not {type(params).__name__}")
            return params
        unknown = set(kwargs) - {f.name for f in fields(cls)}
        if unknown:
            raise ValueError(f"unknown contrast-link parameter(s) {sorted(unknown)}")
        return cls(**kwargs)
