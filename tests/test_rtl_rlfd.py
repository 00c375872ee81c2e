# amaranth: UnusedElaboratable=no
"""rtl/link/rlfd.py against golden/link/rlfd.py, cycle by cycle, under random event sequences."""

import random

import pytest

from golden.encoding import Reason
from golden.link.rlfd import Rlfd as GoldenRlfd
from golden.params import WIRE_DELAY, LinkParams
from rtl.link.rlfd import Rlfd
from sim.harness.amaranth_sim import simulate


@pytest.mark.parametrize("seed", range(4))
def test_rlfd_matches_golden_every_cycle(seed):
    """Random A-stage cycles in the order golden/link/core.py steps them: the word (observe), the
    token, the check while UP; then S's token (arm), or an ask or a token word sent again
    (rearm). A suspicion is followed by the restart cycle (clear, nothing applied); an end
    entangling as follower clears and arms, and when it entangles on the leader's token that
    token arrives in the same cycle. Whether an ask is allowed (``may_ask``) is compared every
    cycle."""
    rng, rng_ask = random.Random(seed), random.Random(seed + 100)
    margin, los = rng.choice([(8, 8), (4, 4), (2, 2)])
    params = LinkParams(margin=margin, los_cycles=los, max_rtt=64)
    dut = Rlfd(params)
    golden = GoldenRlfd(params)
    seen = set()

    async def bench(ctx):
        rtt = rng.randint(6, 40)
        bad_until = -1
        restart = silent = False
        for cycle in range(4000):
            if cycle > bad_until and rng.random() < 0.01:
                bad_until = cycle + rng.randint(1, 2 * los)  # a burst like a short cut
            up = not restart and rng.random() < 0.9
            wellformed = rng.random() < (0.1 if cycle <= bad_until else 0.98)
            entangle = not restart and not up and rng.random() < 0.2
            received = not restart and (golden.waiting or entangle) and rng.random() < 0.1 and not silent
            arm = (entangle or (up and not golden.waiting and not received)) and rng.random() < 0.4
            # Drawn apart, so that the other events' sequence is the one without rearms.
            rearm = up and not arm and golden.waiting and rng_ask.random() < 0.01
            asked = rearm and rng_ask.random() < 0.7
            assert ctx.get(dut.may_ask) == golden.may_ask(cycle), cycle
            seen.add(("may_ask", golden.may_ask(cycle)))
            ports = {
                "up": up,
                "wellformed": wellformed,
                "token_received": received,
                "rtt": rtt,
                "clear": restart or entangle,
                "arm": arm,
                "arm_sent": arm and not entangle,
                "rearm": rearm,
                "rearm_ask": asked,
            }
            for port, v in ports.items():
                ctx.set(getattr(dut, port), v)
            want = None
            if restart:
                golden.clear()
            else:
                golden.observe(wellformed)
                if entangle:
                    golden.clear()
                    if arm:
                        golden.arm(cycle, rtt, sent=False)
                if received:
                    golden.token_received()
                want = golden.check(cycle) if up else None
                if arm and not entangle:
                    golden.arm(cycle, rtt)
                    silent = rng_ask.random() < 0.2  # a wait whose token never comes
                if rearm:
                    golden.rearm(cycle, rtt, asked)
            got = ctx.get(dut.reason)
            assert got == (want or Reason.NONE) and ctx.get(dut.suspect) == (want is not None), (cycle, want, got)
            seen.add(want)
            restart = want is not None
            await ctx.tick()
            assert ctx.get(dut.waiting) == golden.waiting, cycle

    simulate(dut, bench, clock=1e-8)
    assert {Reason.LOSS_OF_SIGNAL, Reason.TOKEN_OVERDUE, ("may_ask", True), ("may_ask", False)} <= seen


@pytest.mark.slow
@pytest.mark.parametrize("max_rtt, margin", [(63, 8), (64, 8), (4096, 2), (64, 1 << 16)])
def test_the_largest_rtt_training_accepts_gets_its_full_deadline(max_rtt, margin):
    """Training accepts an RTT up to max_rtt + margin (PROTOCOL.md 2.3); the RLFD must hold it
    without wrapping: S sends the token in cycle 0, on the wire in cycle WIRE_DELAY, due back by
    arrival WIRE_DELAY + RTT + margin, applied one cycle later: overdue in cycle RTT + margin +
    WIRE_DELAY + 1."""
    params = LinkParams(max_rtt=max_rtt, margin=margin, los_cycles=2)
    dut = Rlfd(params)
    rtt = params.rtt_limit
    overdue_at = []

    async def bench(ctx):
        ctx.set(dut.up, 1)
        ctx.set(dut.wellformed, 1)
        ctx.set(dut.rtt, rtt)
        ctx.set(dut.arm, 1)
        await ctx.tick()
        ctx.set(dut.arm, 0)
        for cycle in range(1, rtt + margin + 5):
            if ctx.get(dut.suspect):
                overdue_at.append(cycle)
                break
            await ctx.tick()

    simulate(dut, bench, clock=1e-8)
    golden = GoldenRlfd(params)
    golden.arm(0, rtt)
    assert overdue_at == [golden.deadline] == [rtt + margin + WIRE_DELAY + 1]


@pytest.mark.parametrize(
    "kwargs, name", [({"margin": 0}, "margin"), ({"los_cycles": 1}, "los_cycles"), ({"max_rtt": True}, "max_rtt")]
)
def test_bad_parameters(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        Rlfd(LinkParams(**kwargs))


def test_parameters_must_be_a_link_params():
    with pytest.raises(TypeError, match="^params must be a LinkParams"):
        Rlfd({"margin": 8})
