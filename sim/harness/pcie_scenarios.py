"""The contrast link's lockstep scenarios (cocotb_tests/pcie_tb.py): golden pair and RTL pair on
the same channel and faults, timers at the tests' scale (sim/harness/pcie.py TEST_SCALE)."""

from golden import encoding as enc
from golden.encoding import PcieCode
from golden.pcie_params import PcieParams
from sim.harness.pcie import TEST_SCALE, make_pcie_link

LATENCY = 4  # the exported design's channel (sim/tools/verilog.py "pcie_pair")
_ACK_TAG = enc.pcie_tag(PcieCode.ACK)
_LOCK = PcieParams(**TEST_SCALE).cycles("recovery_rcvrlock")
_TIMEOUT = PcieParams(**TEST_SCALE).cycles("completion_timeout")
_FLAP, _CUT = 35_000, 110_000
_SLOW = 33_000  # the slow completer's start, in L0
_DATA_TAGS = enc.pcie_tag(PcieCode.TLP_DATA) & 0xF0  # the tags of the eight TLP_DATA codes
_TS1, _TS2 = enc.pcie_tag(PcieCode.TS1), enc.pcie_tag(PcieCode.TS2)  # mask 0xFC on _TS1: both

# Timers at 1/64: training reaches L0 by about cycle 31,000. ``require``: counters (both ends
# summed) the run must have exercised. ``timeouts``: state timer expiries (either end) the run
# must have exercised, as "STATE/RATE[/FF] -> NEXT" (FF: idle_to_rlock at FFh); with the
# scenarios before them and the golden table test (tests/test_pcie_link.py), every branch of
# the RTL LTSSM's timer expiry runs in lockstep. ``skip``: stretches run unobserved, or "auto":
# every stretch in which nothing happens (quiet_stretches).
SCENARIOS = {
    # Bit errors: NAKs, replays, framing errors into Recovery and out; lost ACKs (replay timer);
    # a flap shorter than RcvrLock hidden in Recovery.
    "errors and a flap": dict(
        faults_ab={"bit_error_rate": 1e-4, "cuts": [(40_000, 41_000)]},
        faults_ba={
            "bit_error_rate": 1e-4,
            "cuts": [(40_000, 41_000)],
            "gray": [(36_000, 37_000, 0xFF, _ACK_TAG, "drop")],
        },
        request_rate=0.01,
        cycles=48_000,
        require={"naks_sent": 1, "replays": 1, "replay_timeouts": 1, "recoveries": 2, "completions": 10},
    ),
    # A NAK storm: for 6,000 cycles every data word from A arrives with a bit flipped (a gray
    # failure: tags intact, so no framing error): B NAKs (once until a good TLP), A replays on the
    # NAK or its REPLAY_TIMER, and REPLAY_NUM rolls over into Recovery, again and again.
    "NAK storm": dict(
        faults_ab={"bit_error_rate": 1e-5, "gray": [(34_000, 40_000, 0xF0, _DATA_TAGS, "corrupt")]},
        faults_ba={"bit_error_rate": 1e-5},
        cycles=44_000,
        require={"naks_sent": 20, "replays": 50, "replay_rollovers": 5, "recoveries": 5},
    ),
    # A flap past the first RcvrLock timeout: the rate falls back, silently; then a one-way cut
    # that outlasts Recovery: Detect, DL_Down (the requests in flight are lost: completion
    # timeouts), training again. ``skip``: stretches (start, end)
    # where every input is constant and nothing moves (Detect.Quiet, inside the cuts; no read
    # requests there), run unobserved and compared from their end. The requests sent in the
    # cut's first 1,000 cycles time out in a compared stretch.
    "fall-back and a cut": dict(
        faults_ab={"cuts": [(_FLAP, _FLAP + _LOCK + 2_000), (_CUT, _CUT + 2 * _LOCK + 5_000)]},
        faults_ba={"cuts": [(_FLAP, _FLAP + _LOCK + 2_000)]},
        request_rate=0.01,
        cycles=_CUT + 2 * _LOCK + 45_000,
        skip=[
            (50, 29_000),
            (_FLAP + 100, _FLAP + _LOCK + 1_900),
            (_CUT + 1_000, _CUT + _TIMEOUT - 1_500),
            (_CUT + _TIMEOUT + 2_500, _CUT + 2 * _LOCK + 4_900),
        ],
        require={"rate_fallbacks": 2, "detects": 2, "timeouts": 4, "completion_timeouts": 1},
    ),
    # A completer slower than the completion timeout for 2,000 cycles, on a clean line: the
    # requests it answers late time out (the requester believes the completer dead while the
    # link works), then the late answers arrive on freed tags (unexpected), then it recovers.
    "slow completer": dict(
        request_rate=0.01,
        cycles=_SLOW + _TIMEOUT + 6_000,
        skip=[(50, 29_000)],
        completer_delays={_SLOW: _TIMEOUT + 2_000, _SLOW + 2_000: PcieParams().completer_delay},
        require={"completion_timeouts": 5, "unexpected_completions": 5, "completions": 30},
    ),
    # Each window below blocks what one end's state waits for, from the cycle it entered it (the
    # cycles come from the golden pair; a model change that moves them fails the scenario's
    # ``timeouts``, which then names what was not reached). Direction "ba" is what A hears.
    # Training: A hears no training set in Polling.Active, later no TS2 in Polling.Config
    # and in Configuration.Complete, then nothing in Configuration.Idle.
    "training timeouts": dict(
        faults_ba={
            "gray": [(30_353, 148_600, 0xFF, _TS2, "drop"), (149_722, 154_700, 0xFF, _TS2, "drop")],
            "cuts": [(154_606, 159_600)],
        },
        cycles=162_000,
        skip="auto",
        timeouts=[
            "POLLING_CONFIG/FULL -> DETECT_QUIET",
            "CONFIG_LINKWIDTH/FULL -> DETECT_QUIET",
            "CONFIG_COMPLETE/FULL -> CONFIG_IDLE",
            "CONFIG_IDLE/FULL -> RECOVERY_RCVRLOCK",
        ],
    ),
    "recovery timeouts": dict(
        faults_ab={"cuts": [(95_000, 95_100)]},
        faults_ba={
            "cuts": [(95_000, 95_100), (212_297, 218_000)],
            "gray": [(29_300, 88_000, 0xFC, _TS1, "drop"), (95_100, 212_297, 0xFF, _TS2, "drop")],
        },
        cycles=220_000,
        skip="auto",
        timeouts=[
            "POLLING_ACTIVE/FULL -> DETECT_QUIET",
            "RECOVERY_RCVRCFG/FULL -> RECOVERY_IDLE",
            "RECOVERY_IDLE/FULL -> RECOVERY_RCVRLOCK",
        ],
    ),
    # At the lowest rate (after a flap past RcvrLock): RcvrLock hearing training sets of another
    # link number (heard, never locked), Configuration.Idle twice (idle_to_rlock goes to FFh at
    # this rate, and stays there through Detect into the next training at the full rate).
    "lowest-rate timeouts": dict(
        faults_ab={"cuts": [(35_000, 95_600), (100_000, 100_100)]},
        faults_ba={
            "cuts": [(35_000, 95_600), (100_000, 100_100), (158_778, 163_800), (222_474, 227_500)],
            "gray": [
                (100_112, 158_700, 0xFC, _TS1, "corrupt"),
                (163_812, 222_400, 0xFC, _TS1, "corrupt"),
                (228_592, 233_600, 0xFF, _TS2, "drop"),
            ],
        },
        cycles=236_000,
        skip="auto",
        timeouts=[
            "RECOVERY_RCVRLOCK/LOW -> CONFIG_LINKWIDTH",
            "CONFIG_IDLE/LOW -> RECOVERY_RCVRLOCK",
            "CONFIG_IDLE/LOW/FF -> DETECT_QUIET",
            "CONFIG_COMPLETE/FULL/FF -> DETECT_QUIET",
        ],
    ),
    # At the lowest rate, A alone hears no TS2 in RcvrCfg: B times out of Recovery.Idle twice
    # into Detect, A (in Polling.Active, qualified, its TS1 count short) into Polling.Configuration.
    "lowest-rate restarts": dict(
        faults_ab={"cuts": [(35_000, 95_600), (100_000, 100_100)]},
        faults_ba={"cuts": [(35_000, 95_600), (100_000, 100_100)], "gray": [(100_130, 217_400, 0xFF, _TS2, "drop")]},
        cycles=230_000,
        skip="auto",
        timeouts=[
            "RECOVERY_IDLE/LOW -> RECOVERY_RCVRLOCK",
            "RECOVERY_IDLE/LOW/FF -> DETECT_QUIET",
            "POLLING_ACTIVE/FULL -> POLLING_CONFIG",
        ],
    ),
    # At the lowest rate neither end hears a TS2 in RcvrCfg.
    "lowest-rate RcvrCfg": dict(
        faults_ab={"cuts": [(35_000, 95_600), (100_000, 100_100)], "gray": [(100_130, 217_400, 0xFF, _TS2, "drop")]},
        faults_ba={"cuts": [(35_000, 95_600), (100_000, 100_100)], "gray": [(100_130, 217_400, 0xFF, _TS2, "drop")]},
        cycles=219_000,
        skip="auto",
        timeouts=["RECOVERY_RCVRCFG/LOW -> DETECT_QUIET"],
    ),
}


def quiet_stretches(options: dict, cycles: int, seed: int, margin: int = 64, least: int = 1_000) -> list:
    """The stretches (start, end) of a golden run of scenario ``options`` in which no input
    changes (fault controls, receiver detection), no frame is taken or delivered and neither
    end changes state, less ``margin`` cycles at each side and at least ``least`` long: what a
    lockstep may run unobserved and compare from its end (a state timer that fires early in the
    RTL shows as a different state when the comparison resumes, ``margin`` cycles before the
    golden one fires)."""
    options = {k: v for k, v in options.items() if k not in ("require", "timeouts", "skip", "cycles")}
    h = make_pcie_link(LATENCY, seed=seed, **options)
    seen = {}
    for name in ("ab", "ba"):
        direction = getattr(h.channel, name)
        controls = direction.controls

        def record(t, name=name, controls=controls):
            seen[name] = controls(t)
            return seen[name]

        direction.controls = record
    events, last = [0, cycles], None
    for t in range(cycles):
        h.step()
        # (A cut is in the controls, and receiver detection follows the cuts.)
        now = (
            seen.get("ab"),
            seen.get("ba"),
            h.a.state,
            h.b.state,
            h.offered["a"],
            h.offered["b"],
            h.delivered["a"],
            h.delivered["b"],
            h.a.ltssm.rate,
            h.b.ltssm.rate,
        )
        if now != last:
            events.append(t)
            last = now
    events.sort()
    return [(e + margin, f - margin) for e, f in zip(events, events[1:]) if f - e >= least + 2 * margin]
