"""The contrast link's lockstep scenarios (cocotb_tests/pcie_tb.py): golden pair and RTL pair on
the same channel and faults, timers at the tests' scale (sim/pcie_harness.py TEST_SCALE)."""

from golden import encoding as enc
from golden.encoding import PcieCode
from golden.pcie_params import PcieParams

from .pcie_harness import TEST_SCALE

LATENCY = 4     # the exported design's channel (sim/verilog.py "pcie_pair")
_ACK_TAG = enc.pcie_tag(PcieCode.ACK)
_LOCK = PcieParams(**TEST_SCALE).cycles("recovery_rcvrlock")
_TIMEOUT = PcieParams(**TEST_SCALE).cycles("completion_timeout")
_FLAP, _CUT = 35_000, 110_000
_SLOW = 33_000         # the slow completer's start, in L0
_DATA_TAGS = enc.pcie_tag(PcieCode.TLP_DATA) & 0xF0      # the tags of the eight TLP_DATA codes

# Timers at 1/64: training reaches L0 by about cycle 31,000. ``require``: counters (both ends
# summed) the run must have exercised.
SCENARIOS = {
    # Bit errors: NAKs, replays, framing errors into Recovery and out; lost ACKs (replay timer);
    # a flap shorter than RcvrLock hidden in Recovery.
    "errors and a flap": dict(
        faults_ab={"bit_error_rate": 1e-4, "cuts": [(40_000, 41_000)]},
        faults_ba={"bit_error_rate": 1e-4, "cuts": [(40_000, 41_000)],
                   "gray": [(36_000, 37_000, 0xFF, _ACK_TAG, "drop")]},
        request_rate=0.01, cycles=48_000,
        require={"naks_sent": 1, "replays": 1, "replay_timeouts": 1, "recoveries": 2, "completions": 10}),
    # A NAK storm: for 6,000 cycles every data word from A arrives with a bit flipped (a gray
    # failure: tags intact, so no framing error): B NAKs (once until a good TLP), A replays on the
    # NAK or its REPLAY_TIMER, and REPLAY_NUM rolls over into Recovery, again and again.
    "NAK storm": dict(
        faults_ab={"bit_error_rate": 1e-5, "gray": [(34_000, 40_000, 0xF0, _DATA_TAGS, "corrupt")]},
        faults_ba={"bit_error_rate": 1e-5}, cycles=44_000,
        require={"naks_sent": 20, "replays": 50, "replay_rollovers": 5, "recoveries": 5}),
    # A flap past the first RcvrLock timeout: the rate falls back, silently; then a one-way cut
    # that outlasts Recovery: Detect, DL_Down (the requests in flight are lost: completion
    # timeouts), training again. ``skip``: stretches (start, end)
    # where every input is constant and nothing moves (Detect.Quiet, inside the cuts; no read
    # requests there), run unobserved and compared from their end. The requests sent in the
    # cut's first 1,000 cycles time out in a compared stretch.
    "fall-back and a cut": dict(
        faults_ab={"cuts": [(_FLAP, _FLAP + _LOCK + 2_000), (_CUT, _CUT + 2 * _LOCK + 5_000)]},
        faults_ba={"cuts": [(_FLAP, _FLAP + _LOCK + 2_000)]},
        request_rate=0.01, cycles=_CUT + 2 * _LOCK + 45_000,
        skip=[(50, 29_000), (_FLAP + 100, _FLAP + _LOCK + 1_900), (_CUT + 1_000, _CUT + _TIMEOUT - 1_500),
              (_CUT + _TIMEOUT + 2_500, _CUT + 2 * _LOCK + 4_900)],
        require={"rate_fallbacks": 2, "detects": 2, "timeouts": 4, "completion_timeouts": 1}),
    # A completer slower than the completion timeout for 2,000 cycles, on a clean line: the
    # requests it answers late time out (the requester believes the completer dead while the
    # link works), then the late answers arrive on freed tags (unexpected), then it recovers.
    "slow completer": dict(
        request_rate=0.01, cycles=_SLOW + _TIMEOUT + 6_000, skip=[(50, 29_000)],
        completer_delays={_SLOW: _TIMEOUT + 2_000, _SLOW + 2_000: PcieParams().completer_delay},
        require={"completion_timeouts": 5, "unexpected_completions": 5, "completions": 30}),
}
