# amaranth: UnusedElaboratable=no
"""rtl/contrast/dll.py in lockstep with the data link layer of a running golden contrast-link end.

A golden pair (sim/harness/pcie.py) runs with bit errors, a one-way cut, lost ACKs and read requests;
end A's data link layer is observed each cycle: whether it chose a word (and which TLP it was
offered), the rate, the word it took, its tick, leaving L0 and DL_Down. The RTL layer gets the
same inputs; the word it sends, whether it took the offered TLP, the TLP it accepts, its
rollovers and every counter must equal the golden layer's, every cycle.
"""

import pytest

from golden import encoding as enc
from golden.contrast.dll import DataLinkLayer as GoldenDataLinkLayer
from golden.encoding import PcieCode
from rtl.contrast.dll import COUNTERS, DataLinkLayer
from sim.harness.amaranth_sim import simulate
from sim.harness.pcie import make_pcie_link

pytestmark = pytest.mark.slow

_MASK = (1 << enc.STATUS_COUNTER_BITS) - 1


class _Probe:
    """Records what one golden data link layer was given and what it did in one cycle."""

    def __init__(self, dll):
        self.dll = dll
        self.reset()
        choose, receive, tick, leave_l0, reset = dll.choose, dll.receive, dll.tick, dll.leave_l0, dll.reset

        def on_choose(next_tlp):
            def offered():
                self.offer = next_tlp()
                return self.offer

            self.chose = choose(offered)
            return self.chose

        def on_receive(code, body):
            self.rx = (code, body)
            self.accepted, rollover = receive(code, body)
            self.rollover_rx = rollover
            return self.accepted, rollover

        def on_tick():
            self.ticked = True
            self.rollover_tick = tick()
            return self.rollover_tick

        def on_leave():
            self.left = True
            leave_l0()

        def on_reset():
            self.was_reset = True
            return reset()

        dll.choose, dll.receive, dll.tick, dll.leave_l0, dll.reset = on_choose, on_receive, on_tick, on_leave, on_reset

    def reset(self):
        self.chose = self.offer = self.rx = None
        self.accepted = []
        self.rollover_rx = self.rollover_tick = self.ticked = self.left = self.was_reset = False


def test_rtl_dll_matches_the_golden_data_link_layer_every_cycle():
    ack = enc.pcie_tag(PcieCode.ACK)
    h = make_pcie_link(
        faults_ab={"bit_error_rate": 1e-4, "cuts": [(36_000, 36_600)]},
        faults_ba={"bit_error_rate": 1e-4, "gray": [(33_000, 34_000, 0xFF, ack, "drop")]},
        request_rate=0.01,
        seed=11,
    )
    # Training at 1/64 scale takes about 31,000 cycles, in which the data link layer does nothing:
    # run it in the golden model alone, then check the layer is still as built (so the RTL's reset
    # state is the golden layer's state) and compare from there.
    warmup, cycles = 30_000, 10_000
    for _ in range(warmup):
        h.step()
    untouched = GoldenDataLinkLayer(h.a.p)
    untouched.divisor = h.a.dll.divisor
    assert vars(h.a.dll) == vars(untouched), "the data link layer was used during the warm-up"
    probe = _Probe(h.a.dll)
    dut = DataLinkLayer(h.a.p)
    taken = {"tlps": 0, "accepted": 0, "left_l0": 0}

    async def bench(ctx):
        for cycle in range(cycles):
            busy = int(bool(h.a.dll.sending))
            probe.reset()
            h.step()
            ctx.set(dut.slot, int(probe.chose is not None))
            ctx.set(dut.low, int(h.a.dll.divisor != 1))
            offer = probe.offer
            ctx.set(dut.new_valid, int(offer is not None))
            if offer is not None:
                ctx.set(dut.new_type, offer[0])
                ctx.set(dut.new_tag, offer[1])
                ctx.set(dut.new_payload, int.from_bytes(offer[2], "little"))
            rx = probe.rx
            ctx.set(dut.rx_valid, int(rx is not None))
            if rx is not None:
                code, body = rx
                ctx.set(dut.rx_signal, int(code is not None))
                ctx.set(dut.rx_malformed, int(code == "MALFORMED"))
                ctx.set(dut.rx_tag, enc.pcie_tag(code) if isinstance(code, int) else 0)
                ctx.set(dut.rx_body, body)
            ctx.set(dut.tick, int(probe.ticked))
            ctx.set(dut.leave_l0, int(probe.left))
            taken["left_l0"] += probe.left
            ctx.set(dut.reset, int(probe.was_reset))
            got, want = {"busy": ctx.get(dut.busy)}, {"busy": busy}
            if probe.chose is not None:
                got["tx"] = (ctx.get(dut.tx_code), ctx.get(dut.tx_body))
                want["tx"] = (int(probe.chose[0]), probe.chose[1])
                got["take"], want["take"] = ctx.get(dut.new_take), int(offer is not None)
                taken["tlps"] += want["take"]
            got["accept"] = (
                (ctx.get(dut.accept_type), ctx.get(dut.accept_tag), ctx.get(dut.accept_payload))
                if ctx.get(dut.accept_valid)
                else None
            )
            want["accept"] = (
                (probe.accepted[0].type, probe.accepted[0].tag, int.from_bytes(probe.accepted[0].payload, "little"))
                if probe.accepted
                else None
            )
            taken["accepted"] += bool(probe.accepted)
            got["rollover"] = (ctx.get(dut.rollover_rx), ctx.get(dut.rollover_tick))
            want["rollover"] = (int(probe.rollover_rx), int(probe.rollover_tick))
            await ctx.tick()
            got.update({c: ctx.get(getattr(dut, c)) for c in COUNTERS})
            want.update({c: h.a.dll.counters[c] & _MASK for c in COUNTERS})
            assert got == want, f"cycle {warmup + cycle}: RTL {got} golden {want}"

    simulate(dut, bench, clock=1e-6)
    c = h.a.dll.counters
    # The schedule must have exercised what is compared.
    assert taken["tlps"] > 300 and taken["accepted"] > 300 and taken["left_l0"]
    assert c["naks_sent"] and c["naks_received"] and c["replays"] and c["replay_timeouts"] and c["bad_tlps"]
