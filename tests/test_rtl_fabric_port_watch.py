# amaranth: UnusedElaboratable=no
"""rtl/fabric/port_watch.py against golden/fabric/port_watch.py (PROTOCOL.md 10.3, 10.6, 10.11):
random port states and arrivals, the event, ``hears``, ``stuck`` and the session count compared
every cycle."""

import pytest

from golden.fabric.message import wire_session
from golden.fabric.port_watch import PortWatch as GoldenWatch
from rtl.fabric.port_watch import PortWatch
from sim.harness.amaranth_sim import simulate
from sim.tools.seeds import examples, seeded_rng


@pytest.mark.parametrize("los,bound", [(1, 1), (8, 40), (3, 300)])
def test_port_watch_matches_golden(los, bound):
    rng = seeded_rng("port_watch", los, bound)
    dut, gold = PortWatch(los, bound), GoldenWatch(los, bound)
    seen = set()

    async def bench(ctx):
        up = ever_up = False
        quiet = 0  # cycles left of a silence, so that hearing stops for longer than los
        for cycle in range(examples(4000)):
            if rng.random() < 0.02:
                up = not up
            if rng.random() < 0.005:
                ever_up = not ever_up
            if quiet:
                quiet -= 1
            elif rng.random() < 0.02:
                quiet = rng.randrange(1, 3 * los + 2)
            heard = not quiet and rng.random() < 0.7
            ctx.set(dut.up, up)
            ctx.set(dut.heard, heard)
            ctx.set(dut.ever_up, ever_up)
            want = (gold.hears, gold.stuck(ever_up), wire_session(gold.entangled))
            got = (bool(ctx.get(dut.hears)), bool(ctx.get(dut.stuck)), ctx.get(dut.session))
            assert got == want, (cycle, got, want)
            changed = gold.change(up)
            assert bool(ctx.get(dut.change)) == changed, cycle
            gold.tick(heard)
            seen.update({("hears", want[0]), ("stuck", want[1]), ("change", changed)})
            await ctx.tick()
        assert gold.entangled > 1

    simulate(dut, bench)
    expected = {("hears", False), ("stuck", False), ("change", True), ("change", False)}
    if los > 1:
        expected.add(("hears", True))
    if bound < 100:
        expected.add(("stuck", True))
    assert expected <= seen, seen


@pytest.mark.parametrize("los,bound", [(0, 5), (5, 0), (5, True), (5, 2.0)])
def test_bad_parameters_are_refused(los, bound):
    with pytest.raises(ValueError):
        PortWatch(los, bound)
    with pytest.raises(ValueError):
        GoldenWatch(los, bound)


def test_a_bound_beyond_the_counters_is_refused():
    with pytest.raises(ValueError, match="training_bound"):
        PortWatch(8, 1 << 24)
