"""cocotb testbench: the RTL contrast-link pair and the RTL channel (rtl/simulation/pcie_pair.py) on
Verilator, in lockstep with the golden pair and channel (sim/harness/pcie.py).

Each cycle the testbench computes both directions' fault controls from the golden channel and
drives them, with each end's receiver detection, the frame at the head of each golden end's
queue and its read requests; then it steps the golden pair under the same controls and compares,
per end: the word sent, the frame taken, the frame delivered and the request tag (this cycle's),
and DL_Up, "completer alive", state and rate (the registers, after the previous cycle); every
counter every COUNTER_EVERY cycles and at the end. Any difference stops the run, naming the cycle, the end and
the field.

Environment: OAE_PCIE_SCENARIO (a key of sim.harness.pcie_scenarios.SCENARIOS), OAE_PCIE_CYCLES (overrides its length).
"""

import os
from types import SimpleNamespace

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, Timer

from cocotb_tests import replay_seed
from golden import encoding as enc
from golden.encoding import LtssmState, PcieRate, TlpType
from golden.pcie_params import IDLE_TO_RLOCK_LIMIT
from rtl.contrast.link import COUNTERS
from rtl.simulation.pcie_pair import pcie_counters_layout, pcie_observation_layout
from sim.harness.pcie import make_pcie_link
from sim.harness.pcie_scenarios import LATENCY, SCENARIOS, quiet_stretches

PERIOD_NS = 10
COUNTER_EVERY = 16  # cycles between counter comparisons (the rest is compared every cycle)
_MASK = (1 << enc.STATUS_COUNTER_BITS) - 1


class PcieLockstep:
    """The golden pair stepped under the controls the RTL gets, and the per-cycle comparison."""

    def __init__(self, dut, harness):
        self.dut, self.h = dut, harness
        self.cycle = 0
        self.fields = [(name, f.offset, (1 << f.width) - 1) for name, f in pcie_observation_layout()]
        self.counter_fields = [(name, f.offset, (1 << f.width) - 1) for name, f in pcie_counters_layout()]
        self._written = {}
        self.requests = {"a": 0, "b": 0}
        self.tags = {"a": None, "b": None}
        self.took = {"a": False, "b": False}
        self.delivered = {"a": 0, "b": 0}
        self.rx_prev = self.rx_given = {"a": None, "b": None}
        self.skipped = 0
        self.expired = set()  # state timer expiries of either golden end (timeout_name)
        for name in "ab":
            self._wrap(name)

    def _wrap(self, name):
        """Record golden end ``name``'s requests and whether it took a user frame."""
        end = getattr(self.h, name)
        request, next_tlp = end.request, end._next_tlp

        def on_request():
            self.requests[name] += 1
            self.tags[name] = request()
            return self.tags[name]

        def on_next_tlp():
            tlp = next_tlp()
            self.took[name] = tlp is not None and tlp[0] == TlpType.POSTED
            return tlp

        end.request, end._next_tlp = on_request, on_next_tlp
        ltssm = end.ltssm
        expire = ltssm._expire

        def on_expire(state):
            before = timeout_name(state, ltssm.rate, ltssm.idle_to_rlock)
            expire(state)
            self.expired.add(f"{before} -> {ltssm.state.name}")

        ltssm._expire = on_expire

    def _set(self, port, value):
        if self._written.get(port) != value:
            getattr(self.dut, port).value = value
            self._written[port] = value

    def drive(self):
        """This cycle's inputs: fault controls, receiver detection, user frames and requests."""
        h = self.h
        # The registers the RTL shows this cycle: the golden ends' after the previous cycle.
        self.before = {name: self._registers(getattr(h, name)) for name in "ab"}
        self.controls = {}
        for d in ("ab", "ba"):
            direction = getattr(h.channel, d)
            c = self.controls[d] = direction.controls(direction.cycle)
            for port, value in (
                ("cut", int(c.cut)),
                ("flip", c.flip),
                ("force", int(c.force is not None)),
                ("force_word", c.force or 0),
                ("freeze", int(c.freeze)),
                ("gray_mask", c.gray_mask),
                ("gray_value", c.gray_value),
                ("gray_drop", int(c.gray_drop)),
                ("latency", c.latency),
            ):
                self._set(f"{d}_{port}", value)
        self.far = h.receiver_detection()
        for name in "ab":
            self.requests[name], self.took[name] = 0, False
            h.feed(name)
            end = getattr(h, name)
            head = end.frames_in[0] if end.frames_in else None
            self._set(f"{name}_frames_in__valid", int(head is not None))
            if head is not None:
                self._set(f"{name}_frames_in__payload", int.from_bytes(head, "little"))
            self._set(f"{name}_request", self.requests[name])
            self._set(f"{name}_far_receiver", int(self.far[name]))
            self._set(f"{name}_completer_delay", end.completer.delay)

    def _registers(self, end):
        registers = {
            "dl_up": int(end.dl_up),
            "completer_alive": int(end.requester.completer_alive),
            "state": int(end.state),
            "rate": int(end.ltssm.rate),
        }
        if self.cycle % COUNTER_EVERY == 0:
            registers.update({f"counter_{c}": v & _MASK for c, v in end.counters().items()})
        return registers

    def check_and_step(self):
        """Read both ends (at ReadOnly), step the golden pair, compare."""
        h = self.h
        observed = {name: self._observe(name) for name in "ab"}
        before = self.before
        self._step_golden()
        for name in "ab":
            end, obs = getattr(h, name), observed[name]
            got = {
                "tx": obs.tx_word if obs.tx_valid else None,
                "take": bool(obs.frames_in_ready) and bool(self._written.get(f"{name}_frames_in__valid")),
            }
            want = {"tx": end.tx_word, "take": self.took[name]}
            if self.requests[name]:
                got["request_tag"] = obs.request_tag if obs.request_ok else None
                want["request_tag"] = self.tags[name]
            got["frame_out"] = (
                int(getattr(self.dut, f"{name}_frames_out_payload").value) if obs.frames_out_valid else None
            )
            want["frame_out"] = int.from_bytes(end.delivered[0], "little") if end.delivered else None
            if len(end.delivered) > 1:
                self._fail(name, "the golden end delivered two frames in one cycle")
            got.update({k: int(getattr(obs, k)) for k in before[name]})
            want.update(before[name])
            bad = [k for k in want if got.get(k) != want[k]]
            if bad:
                self._fail(name, "; ".join(f"{k}: RTL {got.get(k)} golden {want[k]}" for k in bad))
            self.delivered[name] += want["frame_out"] is not None
        h.score("a")
        h.score("b")
        h.cycle += 1
        self.cycle += 1

    def _step_golden(self):
        h = self.h
        self.rx_prev, self.rx_given = self.rx_given, {"a": h.rx_a, "b": h.rx_b}
        h.step_ends(self.far, self.controls)

    def skip_golden(self, cycles):
        """The golden side of a stretch the RTL runs unobserved (under a Timer): drives the first
        cycle's inputs, then steps the golden pair alone, failing if an input would change (the
        channel's controls or receiver detection) or a frame would be taken or delivered. No
        read requests are made in the stretch. Everything compared resumes afterwards, so a
        divergence in the stretch shows at once."""
        h = self.h
        rate, h.request_rate = h.request_rate, 0
        self.drive()
        first = dict(self.controls)
        far = dict(self.far)
        for i in range(cycles):
            if i:
                # drive() without its port writes and snapshots: the golden pair's inputs only.
                for d in ("ab", "ba"):
                    direction = getattr(h.channel, d)
                    c = self.controls[d] = direction.controls(direction.cycle)
                    if c is not first[d] and c != first[d]:
                        raise AssertionError(
                            f"cycle {self.cycle}: the {d} fault controls change in a skipped stretch (to {c})"
                        )
                self.far = h.receiver_detection()
                if self.far != far:
                    raise AssertionError(f"cycle {self.cycle}: receiver detection changes in a skipped stretch")
                for name in "ab":
                    self.took[name] = False
                    h.feed(name)
            self._step_golden()
            for name in "ab":
                if self.took[name] or getattr(h, name).delivered or self.requests[name]:
                    self._fail(name, "a frame or request in a skipped stretch")
            h.cycle += 1
            self.cycle += 1
        self.skipped += cycles
        h.request_rate = rate

    def _observe(self, name):
        word = int(getattr(self.dut, f"{name}_observe").value)
        fields = {field: word >> offset & mask for field, offset, mask in self.fields}
        if self.cycle % COUNTER_EVERY == 0:
            word = int(getattr(self.dut, f"{name}_counters").value)
            fields.update({f"counter_{field}": word >> offset & mask for field, offset, mask in self.counter_fields})
        return SimpleNamespace(**fields)

    def _fail(self, name, what):
        rx = self.rx_prev[name]
        raise AssertionError(
            f"cycle {self.cycle}, end {name}: {what} (the word it took in the previous cycle: "
            f"{'no signal' if rx is None else hex(rx)}, golden state "
            f"{getattr(self.h, name).state.name})"
        )


def timeout_name(state, rate, idle_to_rlock) -> str:
    """How sim.harness.pcie_scenarios names the state a timer expired in: "STATE/RATE[/FF]"."""
    return f"{state.name}/{PcieRate(rate).name}" + ("/FF" if idle_to_rlock >= IDLE_TO_RLOCK_LIMIT else "")


@cocotb.test()
async def test_pcie_lockstep(dut):
    name = os.environ["OAE_PCIE_SCENARIO"]
    options = dict(SCENARIOS[name])
    require = options.pop("require", {})
    timeouts = options.pop("timeouts", ())
    skips = options.pop("skip", ())
    cycles = int(os.environ.get("OAE_PCIE_CYCLES", options.pop("cycles")))
    cycles = -(-cycles // COUNTER_EVERY) * COUNTER_EVERY + 1  # the last cycle compares the counters
    seed = replay_seed()
    dut._log.info("%s: %d cycles, seed %d", name, cycles, seed)
    if skips == "auto":
        skips = quiet_stretches(options, cycles, seed)
        dut._log.info("%d quiet stretches (%d cycles) run under a Timer", len(skips), sum(e - s for s, e in skips))
    h = make_pcie_link(LATENCY, seed=seed, **options)
    lock = PcieLockstep(dut, h)
    Clock(dut.clk, PERIOD_NS, unit="ns").start()
    dut.rst.value = 1
    await FallingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0
    in_l0 = 0
    skips = dict(skips)
    while lock.cycle < cycles:
        if lock.cycle in skips:
            length = skips[lock.cycle] - lock.cycle
            lock.skip_golden(length)
            # From a falling edge: past the last rising edge of the stretch, then to the next falling.
            await Timer(length * PERIOD_NS - PERIOD_NS / 4, unit="ns")
            await FallingEdge(dut.clk)
            continue
        lock.drive()
        await ReadOnly()
        lock.check_and_step()
        in_l0 += h.a.state == LtssmState.L0
        await FallingEdge(dut.clk)
    totals = {k: h.a.counters()[k] + h.b.counters()[k] for k in COUNTERS}
    dut._log.info(
        "compared %d cycles (%d with A in L0, %d more under a Timer); frames delivered a %d b %d; %s",
        lock.cycle - lock.skipped,
        in_l0,
        lock.skipped,
        h.delivered["a"],
        h.delivered["b"],
        ", ".join(f"{k} {v}" for k, v in totals.items() if v),
    )
    missing = sorted(set(timeouts) - lock.expired)
    assert not missing, (
        f"the scenario did not exercise the timeouts {missing} (the golden pair's were: "
        f"{sorted(lock.expired)}); re-derive its windows"
        + (" (OAE_PCIE_CYCLES shortened it)" if "OAE_PCIE_CYCLES" in os.environ else "")
    )
    for counter, least in require.items():
        assert totals[counter] >= least, (
            f"the scenario exercised {counter} {totals[counter]} times, fewer than "
            f"{least}" + (" (OAE_PCIE_CYCLES shortened it)" if "OAE_PCIE_CYCLES" in os.environ else "")
        )
    assert lock.delivered["a"] + lock.delivered["b"] > 100
