# amaranth: UnusedElaboratable=no
"""rtl/rlfd.py against golden/rlfd.py, cycle by cycle, under random event sequences."""

import random

import pytest
from amaranth.sim import Simulator

from golden.encoding import Reason
from golden.params import LinkParams
from golden.rlfd import Rlfd as GoldenRlfd
from rtl.rlfd import Rlfd


@pytest.mark.parametrize("seed", range(4))
def test_rlfd_matches_golden_every_cycle(seed):
    rng = random.Random(seed)
    margin, los = rng.choice([(8, 8), (3, 4), (1, 2)])
    params = LinkParams(margin=margin, los_cycles=los, max_rtt=64)
    dut = Rlfd(params)
    golden = GoldenRlfd(params)
    seen = set()

    async def bench(ctx):
        rtt = rng.randint(3, 40)
        bad_until = -1
        for cycle in range(4000):
            if cycle > bad_until and rng.random() < 0.01:
                bad_until = cycle + rng.randint(1, 2 * los)     # a burst like a short cut
            up = rng.random() < 0.9
            wellformed = rng.random() < (0.1 if cycle <= bad_until else 0.98)
            received = golden.waiting and rng.random() < 0.05
            clear = rng.random() < 0.01
            for port, v in (("up", up), ("wellformed", wellformed), ("token_received", received),
                            ("clear", clear), ("rtt", rtt), ("arm", 0)):
                ctx.set(getattr(dut, port), v)
            # The golden end does these in this order within one cycle (golden/link.py step).
            golden.observe(wellformed)
            if received:
                golden.token_received()
            want = golden.check(cycle) if up else None
            got = ctx.get(dut.reason)
            assert got == (want or Reason.NONE) and ctx.get(dut.suspect) == (want is not None), (cycle, want, got)
            seen.add(want)
            if want:                              # the end retrains: start afresh, send nothing
                golden.clear()
                ctx.set(dut.clear, 1)
                arm = False
            else:
                if clear:
                    golden.clear()
                arm = not golden.waiting and rng.random() < 0.3
                if arm and rng.random() < 0.2:    # entangling as follower rather than sending
                    golden.expect_first_token(cycle, rtt)
                elif arm:
                    golden.token_sent(cycle + 1, rtt)
            ctx.set(dut.arm, arm)
            await ctx.tick()
            ctx.set(dut.clear, 0)
            assert ctx.get(dut.waiting) == golden.waiting, cycle

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert {Reason.LOSS_OF_SIGNAL, Reason.TOKEN_OVERDUE} <= seen


@pytest.mark.parametrize("max_rtt, margin", [(63, 8), (64, 8), (4096, 1), (64, 1 << 16)])
def test_the_largest_rtt_training_accepts_gets_its_full_deadline(max_rtt, margin):
    """Training accepts an RTT up to max_rtt + margin (PROTOCOL.md 2.3); the RLFD must hold it
    without wrapping: the token is overdue exactly RTT + margin cycles after it left."""
    params = LinkParams(max_rtt=max_rtt, margin=margin, los_cycles=2)
    dut = Rlfd(params)
    rtt = params.rtt_limit
    overdue_after = []

    async def bench(ctx):
        ctx.set(dut.up, 1)
        ctx.set(dut.wellformed, 1)
        ctx.set(dut.rtt, rtt)
        ctx.set(dut.arm, 1)                  # the token leaves next cycle
        await ctx.tick()
        ctx.set(dut.arm, 0)
        for cycle in range(1, rtt + margin + 3):
            if ctx.get(dut.suspect):
                overdue_after.append(cycle)
                break
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    # Sent at cycle 1, so due by 1 + RTT + margin (golden Rlfd.token_sent / check).
    assert overdue_after == [1 + rtt + margin]


@pytest.mark.parametrize("kwargs, name", [({"margin": 0}, "margin"), ({"los_cycles": 1}, "los_cycles"),
                                          ({"max_rtt": True}, "max_rtt")])
def test_bad_parameters(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        Rlfd(LinkParams(**kwargs))


def test_parameters_must_be_a_link_params():
    with pytest.raises(TypeError, match="^params must be a LinkParams"):
        Rlfd({"margin": 8})
