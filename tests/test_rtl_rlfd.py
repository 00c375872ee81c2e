# amaranth: UnusedElaboratable=no
"""rtl/rlfd.py against golden/rlfd.py, cycle by cycle, under random event sequences."""

import random

import pytest
from amaranth.sim import Simulator

from golden.rlfd import Rlfd as GoldenRlfd
from rtl.rlfd import Reason, Rlfd

REASONS = {None: Reason.NONE, "loss of signal": Reason.LOSS_OF_SIGNAL, "token overdue": Reason.TOKEN_OVERDUE}


@pytest.mark.parametrize("seed", range(4))
def test_rlfd_matches_golden_every_cycle(seed):
    rng = random.Random(seed)
    margin, los = rng.choice([(8, 8), (3, 4), (1, 2)])
    dut = Rlfd(margin=margin, los_cycles=los, max_rtt=64)
    golden = GoldenRlfd(margin, los)
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
            assert got == REASONS[want] and ctx.get(dut.suspect) == (want is not None), (cycle, want, got)
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
    assert {"loss of signal", "token overdue"} <= seen


@pytest.mark.parametrize("kwargs, name", [({"margin": 0}, "margin"), ({"los_cycles": 1}, "los_cycles"),
                                          ({"max_rtt": True}, "max_rtt")])
def test_bad_parameters(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        Rlfd(**kwargs)
