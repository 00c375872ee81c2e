# amaranth: UnusedElaboratable=no
"""rtl/contrast/ltssm.py in lockstep with the LTSSM of a running golden contrast-link end.

A golden pair (sim/harness/pcie.py) runs a fault schedule; end A's LTSSM is observed each cycle:
whether its word went on the wire, the word it took (or PAD / SKP), receiver detection, and
the data link layer's rollovers. The RTL Ltssm gets the same inputs; its state, LinkUp, rate,
transmit word and every counter must equal the golden LTSSM's after every cycle.
"""

import pytest

from golden import encoding as enc
from golden.encoding import LtssmState as S
from rtl.contrast.ltssm import COUNTERS, Ltssm
from sim.harness.amaranth_sim import simulate
from sim.harness.pcie import make_pcie_link

pytestmark = pytest.mark.slow

_MASK = (1 << enc.STATUS_COUNTER_BITS) - 1


class _Probe:
    """Records, for one golden end and one cycle, what its LTSSM was given."""

    def __init__(self, end):
        self.end, self.ltssm = end, end.ltssm
        self.reset()
        ltssm, dll = end.ltssm, end.dll
        sent_word, receive, saw_skp, saw_pad = ltssm.sent_word, ltssm.receive, ltssm.saw_skp, ltssm.saw_pad
        tick = ltssm.tick
        direct = ltssm.direct_recovery
        dll_tick = dll.tick

        def on_sent(code):
            self.sent = 1
            sent_word(code)

        def on_receive(code, body):
            self.rx = (code, body)
            receive(code, body)

        def on_tick(far_receiver):
            self.far = far_receiver
            tick(far_receiver)

        def on_skp():
            self.skp = 1
            saw_skp()

        def on_pad():
            self.pad = 1
            saw_pad()

        def on_direct(cause):
            if cause == "REPLAY_NUM rollover":
                if self.in_tick:
                    self.rollover_tick = 1
                else:
                    self.rollover_rx = 1
            direct(cause)

        def on_dll_tick():
            self.in_tick = True
            return dll_tick()

        ltssm.sent_word, ltssm.receive, ltssm.saw_skp, ltssm.saw_pad = on_sent, on_receive, on_skp, on_pad
        ltssm.direct_recovery, ltssm.tick = on_direct, on_tick
        dll.tick = on_dll_tick

    def reset(self):
        self.sent = self.skp = self.pad = self.rollover_rx = self.rollover_tick = 0
        self.rx, self.in_tick, self.far = None, False, True


# Timers at 1/64 (TEST_SCALE): training takes about 30,000 cycles (Detect.Quiet's 12 ms), then
# bit errors send L0 to Recovery on framing errors and replays, and a flap of 1,000 cycles is
# recovered inside Recovery.
SCENARIOS = {
    "flap and bit errors": dict(
        faults_ab={"cuts": [(40_000, 41_000)], "bit_error_rate": 1e-4},
        faults_ba={"cuts": [(40_000, 41_000)], "bit_error_rate": 1e-4},
        seed=5,
    ),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_rtl_ltssm_matches_the_golden_ltssm_every_cycle(name):
    h = make_pcie_link(**SCENARIOS[name])
    probe = _Probe(h.a)
    dut = Ltssm(h.a.p)
    cycles = 48_000
    seen = set()

    async def bench(ctx):
        for cycle in range(cycles):
            probe.reset()
            h.step()
            ctx.set(dut.sent, probe.sent)
            ctx.set(dut.skp, probe.skp)
            ctx.set(dut.pad, probe.pad)
            rx = probe.rx
            ctx.set(dut.rx_valid, int(rx is not None))
            if rx is not None:
                rcode, rbody = rx
                ctx.set(dut.rx_signal, int(rcode is not None))
                ctx.set(dut.rx_malformed, int(rcode == "MALFORMED"))
                ctx.set(dut.rx_code, rcode if isinstance(rcode, int) else 0)
                ctx.set(dut.rx_body, rbody)
            ctx.set(dut.far_receiver, int(probe.far))
            ctx.set(dut.dll_recovery_rx, probe.rollover_rx)
            ctx.set(dut.dll_recovery_tick, probe.rollover_tick)
            await ctx.tick()
            g = h.a.ltssm
            got = {"state": ctx.get(dut.state), "link_up": ctx.get(dut.link_up), "rate": ctx.get(dut.rate)}
            want = {"state": int(g.state), "link_up": int(g.link_up), "rate": int(g.rate)}
            got.update({c: ctx.get(getattr(dut, c)) for c in COUNTERS})
            want.update({c: g.counters[c] & _MASK for c in COUNTERS})
            phy = g.word()
            got["tx"] = (ctx.get(dut.tx_ei), ctx.get(dut.tx_l0)) + (
                (ctx.get(dut.tx_code), ctx.get(dut.tx_body)) if phy and phy[0] != "EI" else ()
            )
            want["tx"] = (int(phy is not None and phy[0] == "EI"), int(phy is None)) + (
                (int(phy[0]), phy[1]) if phy and phy[0] != "EI" else ()
            )
            assert got == want, f"cycle {cycle}: RTL {got} golden {want}"
            seen.add(S(g.state))

    simulate(dut, bench, clock=1e-6)
    assert {S.L0, S.RECOVERY_RCVRLOCK, S.RECOVERY_RCVRCFG, S.RECOVERY_IDLE} <= seen
    assert h.a.ltssm.counters["recoveries"] >= 3 and h.a.ltssm.counters["receiver_errors"] >= 1
