"""cocotb testbench: rtl/link/framer/ alone on Verilator, in lockstep with its golden twin.

sim/harness/framer.py runs two golden framers over a faulty line in the pipeline of
PROTOCOL.md 2.2 and reports, each cycle, every input end A's framer takes (the restart cycle,
the word A applies routed by kind, entangling with the peer's counts, also on the peer's first
token, frames handed in, S's turn and the token) and what the golden framer did. The TB drives
the same inputs into the RTL framer and compares, before each clock edge: the malformed and
anomaly flags, the data-plane anomalies recovered and a degraded data plane (PROTOCOL.md 4.6),
reconciliation conflicts, the echo deadline, the confirmed counts, S's choice,
the sent-slice and sent-frame pulses, the slice B2 builds and readiness per class; frames
delivered are compared as transactions (the RTL hands them over from its receive memory a cycle
later, at a random user pace).

Environment: OAE_FRAMER_CYCLES (default 20000), OAE_FRAMER_SCENARIO (a key of SCENARIOS).
"""

import os
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly

from cocotb_tests import replay_seed
from golden import encoding as enc
from golden.common.slice import data_tag, echo_tag, make_word
from golden.encoding import Ctl, Kind
from golden.link.control import control_word
from golden.params import LinkParams
from sim.harness.framer import FramerPair, slice_contribution

# name -> (generation parameters, harness options); the pytest entry exports one build each.
SCENARIOS = {
    "digest": (
        dict(num_classes=2, window=4, echo_mode="digest", recovery="go_back_n"),
        dict(latency=6, flip_rate=0.002, drop_rate=0.001, return_drop_rate=0.02, burst=150, restart_every=1500),
    ),
    "full": (
        dict(num_classes=3, window=2, echo_mode="full"),
        dict(latency=3, flip_rate=0.002, drop_rate=0.001, return_drop_rate=0.01, burst=500, restart_every=1500),
    ),
    # Selective repeat (PROTOCOL.md 4.6; digest mode only: in full echo mode a payload hit is an
    # echo mismatch first, and selective recovers as go-back-N). Payload hits resend one frame;
    # frames confirmed out of order wait behind it, and a RESYNC resumes past them and scans.
    "digest selective": (
        dict(num_classes=2, window=8, echo_mode="digest", recovery="selective"),
        dict(latency=6, flip_rate=0.003, drop_rate=0.0005, return_drop_rate=0.01, burst=150, restart_every=2500),
    ),
    # Dense errors: replays of replays, RESYNCs during scans, lost tokens (the build of
    # "digest selective"; a degraded data plane is reached on some seeds of the link
    # scenario "digest ber 1e-3").
    "selective dense errors": (
        dict(num_classes=2, window=8, echo_mode="digest", recovery="selective"),
        dict(latency=3, flip_rate=0.01, drop_rate=0.0005, return_drop_rate=0.002, burst=500, restart_every=25000),
    ),
    # A longer line and window: RESYNCs leave long scans over frames good and not, so the
    # order in which the RTL reads the good bits ahead of the scan is checked.
    "selective long window": (
        dict(num_classes=2, window=32, echo_mode="digest", recovery="selective"),
        dict(
            latency=24,
            flip_rate=0.004,
            drop_rate=0.0005,
            return_drop_rate=0.002,
            frame_load=0.3,
            burst=800,
            restart_every=25000,
        ),
    ),
}


class FramerLockstepError(AssertionError):
    """The RTL framer differs from the golden one."""


class FramerTB:
    """Owns the clock, reset, the input driver and the comparisons for one framer."""

    def __init__(self, dut, params: LinkParams, harness: FramerPair, seed):
        self.dut, self.p, self.h = dut, params, harness
        self.rng = random.Random(seed ^ 0x5A5A)
        self.owed = [[] for _ in range(params.num_classes)]  # golden deliveries not yet taken
        self.taken = [0] * params.num_classes
        self.cycle = 0
        self._pending = None  # the golden events of the next cycle, computed ahead
        self._degraded_before = False
        self.compared = {
            "anomaly": 0,
            "recovery": 0,
            "overdue": 0,
            "entangle": 0,
            "token entangle": 0,
            "choices": 0,
            "recovery words": 0,
            "replays": 0,
            "built": 0,
            "degraded": 0,
            "scan turns": 0,
        }
        self._last_look = {}  # class -> (cycle, queued) of the scan's last look

    def port(self, name):
        return getattr(self.dut, name)

    def stream(self, name, c, member):
        return getattr(self.dut, f"{name}__{c}__{member}")

    async def start(self):
        Clock(self.dut.clk, 10, unit="ns").start()
        self.dut.rst.value = 1
        # The harness holds the peer's counts steady while a session is down (as training's
        # register does), so nothing is stored from an arriving READY.
        for name in (
            "restart",
            "up",
            "entangle",
            "rx_data",
            "rx_data_class",
            "rx_echo",
            "rx_digest",
            "rx_token",
            "rx_token_up",
            "rx_resync",
            "rx_ack",
            "rx_nak",
            "rx_replay",
            "live",
            "commit",
            "token_send",
            "peer_store",
            "peer_half_in",
        ):
            self.port(name).value = 0
        self.port("rtt").value = self.h.rtt
        await FallingEdge(self.dut.clk)
        await FallingEdge(self.dut.clk)
        self.dut.rst.value = 0

    def _fail(self, what):
        raise FramerLockstepError(f"cycle {self.cycle}: {what}")

    def _drive(self, ev, ev_next):
        d, C = self.dut, self.p.num_classes
        # Stage C's view: the word A applies in the next cycle.
        ahead = ev_next.rx or ev_next.data_word
        if ahead:
            d.c_cls.value, d.c_index.value, d.c_slice.value = ahead.tag.cls, ahead.tag.index, ahead.slice
        rx = ev.rx
        kind = rx.tag.kind if rx else None
        code = rx.tag.code if rx and kind == Kind.CONTROL else None
        flags = {
            "rx_data": kind == Kind.DATA,
            "rx_echo": kind == Kind.ECHO,
            "rx_digest": code == Ctl.DIGEST,
            "rx_resync": code == Ctl.RESYNC,
            "rx_ack": code == Ctl.RESYNC_ACK,
            "rx_nak": code == Ctl.NAK,
            "rx_replay": code == Ctl.REPLAY,
            "rx_token": code == Ctl.TICK,
        }
        for name, value in flags.items():
            self.port(name).value = int(value)
        word = rx or ev.data_word
        d.rx_data_class.value = 1 << ev.data_word.tag.cls if ev.data_word is not None else 0
        if word:
            d.rx_cls.value, d.rx_index.value, d.rx_last.value = word.tag.cls, word.tag.index, int(word.tag.last)
            d.rx_slice.value, d.rx_body.value = word.slice, word.body
            d.rx_nslice.value = slice_contribution(word.slice)
        d.restart.value = int(ev.restart)
        d.up.value = int(ev.up)
        d.rx_token_up.value = int(flags["rx_token"] and ev.up)
        d.live.value = int(ev.up and not ev.restart)
        d.entangle.value = int(ev.entangle)
        d.peer_half.value = ev.peer_half
        d.commit.value = int(ev.framer_turn and ev.choice is not None)
        d.token_send.value = int(ev.token_send)
        for c in range(C):
            self.stream("frames_in", c, "valid").value = int(c in ev.frames_in)
            frame = ev.frames_in.get(c, bytes(enc.FRAME_BYTES))
            self.stream("frames_in", c, "payload").value = int.from_bytes(frame, "little")
            self.stream("frames_out", c, "ready").value = int(self.rng.random() < 0.8)

    def _compare(self, ev):
        d = self.dut
        checks = {
            "malformed": (int(d.malformed.value), int(ev.malformed)),
            "anomaly": (int(d.anomaly.value), int(ev.anomaly)),
            "recovery_anomalies": (int(d.recovery_anomalies.value), ev.recovery_anomalies),
            "counts": (int(d.counts.value), ev.counts),
            "queue_overflow": (int(d.queue_overflow.value), 0),
        }
        if ev.entangle:
            checks["conflicts"] = (int(d.conflicts.value), ev.conflicts)
            self.compared["entangle"] += 1
            self.compared["token entangle"] += ev.rx is not None
        if ev.overdue is not None:
            checks["overdue"] = (int(d.overdue.value), int(ev.overdue))
            self.compared["overdue"] += ev.overdue
        if ev.framer_turn:
            choice = ev.choice
            checks["s_valid"] = (int(d.s_valid.value), int(choice is not None))
            sent = choice is not None and choice.is_slice
            checks["slice_sent"] = (int(d.slice_sent.value), int(sent))
            checks["frame_sent"] = (int(d.frame_sent.value), int(sent and choice.index == enc.SLICES_PER_FRAME - 1))
            if choice is not None:
                checks["s_is_data"] = (int(d.s_is_data.value), int(choice.is_slice))
                checks["s_word"] = (
                    self._s_word(),
                    choice.word if not choice.is_slice else choice.word >> enc.SLICE_BITS,
                )
                self.compared["choices"] += 1
                self.compared["recovery words"] += choice.control != 0
                self.compared["replays"] += choice.control == Ctl.REPLAY
        if ev.built is not None:
            checks["b_slice"] = (d.b_slice.value.to_unsigned(), ev.built)
            self.compared["built"] += 1
        for c, ready in enumerate(ev.ready):
            checks[f"frames_in[{c}].ready"] = (int(self.stream("frames_in", c, "ready").value), int(ready))
        for name, (got, want) in checks.items():
            if got != want:
                self._fail(f"{name}: RTL {got:#x}, golden {want:#x}")
        # degraded is a register: it shows A's decision of the previous cycle.
        if self.cycle and int(d.degraded.value) != int(self._degraded_before):
            self._fail(f"degraded: RTL {int(d.degraded.value)}, golden {int(self._degraded_before)}")
        self.compared["degraded"] += ev.degraded and not self._degraded_before and not ev.restart
        self._degraded_before = ev.degraded and not ev.restart
        self.compared["anomaly"] += ev.anomaly
        self.compared["recovery"] += ev.recovery_anomalies

    def _s_word(self):
        """S's choice as the golden word: a return in full, a data slice as its tag only (B reads
        the slice a cycle later)."""
        d = self.dut
        cls, index = int(d.s_cls.value), int(d.s_index.value)
        if int(d.s_is_data.value):
            return data_tag(cls, index)
        payload = d.s_payload.value.to_unsigned()
        if int(d.s_is_control.value):
            return control_word(int(d.s_code.value), payload & ((1 << enc.CTL_BODY_BITS) - 1))
        return make_word(echo_tag(cls, index), payload)

    def _collect(self, ev):
        for c, frame in ev.delivered:
            self.owed[c].append(frame)
        for c in range(self.p.num_classes):
            if self.stream("frames_out", c, "valid").value and self.stream("frames_out", c, "ready").value:
                frame = self.stream("frames_out", c, "payload").value.to_unsigned().to_bytes(enc.FRAME_BYTES, "little")
                if not self.owed[c]:
                    self._fail(f"class {c}: the RTL delivered a frame the golden framer has not")
                if frame != self.owed[c].pop(0):
                    self._fail(f"class {c} frame #{self.taken[c]} differs from the golden delivery")
                self.taken[c] += 1

    def _scan_state(self):
        f = self.h.a.framer
        if not self.p.selective:
            return None
        return list(f.scan), [set(g) for g in f.good], list(f.confirmed)

    def _count_scan(self, before):
        """Count the scan's consecutive looks that went another way than the one before (a frame
        queued after one known good, or the other way round): the order the RTL reads the good
        bits in, ahead of the scan, is checked only where neighbouring bits differ."""
        if before is None:
            return
        scan, good, confirmed = before
        for c, now in enumerate(self.h.a.framer.scan):
            if now != scan[c] + 1:
                continue
            queued = scan[c] >= confirmed[c] and scan[c] not in good[c]
            last = self._last_look.get(c)
            if last is not None and last[0] == self.cycle - 1 and last[1] != queued:
                self.compared["scan turns"] += 1
            self._last_look[c] = (self.cycle, queued)

    async def run(self, cycles):
        """Run `cycles` more cycles in lockstep; a later call continues where this one stopped."""
        if self._pending is None:
            self._pending = self.h.step()
        ev = self._pending
        for _ in range(cycles):
            before = self._scan_state()
            ev_next = self.h.step()
            self._count_scan(before)
            self._drive(ev, ev_next)
            await ReadOnly()
            self._compare(ev)
            self._collect(ev)
            self.cycle += 1
            ev = ev_next
            await FallingEdge(self.dut.clk)
        self._pending = ev


@cocotb.test()
async def test_framer_lockstep(dut):
    name = os.environ["OAE_FRAMER_SCENARIO"]
    params, options = SCENARIOS[name]
    params = LinkParams(**params)
    cycles = int(os.environ.get("OAE_FRAMER_CYCLES", "20000"))
    seed = replay_seed()
    dut._log.info("%s: %d cycles, seed %d", name, cycles, seed)
    harness = FramerPair(params, seed=seed, **options)
    tb = FramerTB(dut, params, harness, seed)
    await tb.start()
    await tb.run(cycles)
    # The faults must have exercised what the comparison covers. How often they do is up to the
    # seed, so a run that falls short of a goal goes on (up to three times its length) rather than
    # failing for want of luck; a goal still missed then is a real loss of coverage.
    while _coverage_missing(tb, harness, params, cycles >= 20000) and tb.cycle < 3 * cycles:
        await tb.run(cycles // 10)
    dut._log.info(
        "compared %s; sessions %d; frames delivered %d (RTL took %s) in %d cycles",
        tb.compared,
        harness.sessions,
        harness.frames_delivered(),
        tb.taken,
        tb.cycle,
    )
    missing = _coverage_missing(tb, harness, params, cycles >= 20000)
    assert not missing, f"after {tb.cycle} cycles the run still lacks: {'; '.join(missing)}"


def _coverage_missing(tb, harness, params, deadline_goal):
    """The coverage goals a framer lockstep run has not reached yet, in words."""
    c = tb.compared
    goals = [
        (harness.sessions >= 10, "10 sessions"),
        (c["recovery"] >= 20, "20 recoveries"),
        (c["entangle"] >= 10, "10 entangles"),
        (c["recovery words"] >= 20, "20 recovery words"),
        (c["token entangle"] >= 3, "3 entangles on the leader's token"),
        (sum(tb.taken) >= 200, "200 frames taken"),
        # Returns lost at every traffic stop leave only the echo deadline to find them.
        (c["overdue"] >= 5 or not deadline_goal, "5 overdue echoes (the echo deadline)"),
    ]
    # (In full echo mode a payload hit is an echo mismatch first: selective recovers as go-back-N.)
    if params.selective and not params.full_echo:
        goals.append((c["replays"] >= 20, "20 selective replays"))
        goals.append((c["scan turns"] >= 5, "5 scan looks that differ from the one before"))
    return [what for met, what in goals if not met]
