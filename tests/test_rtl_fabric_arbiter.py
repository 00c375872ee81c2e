"""rtl/fabric/arbiter.py against golden/fabric/arbiter.py (PROTOCOL.md 10.5) over every input:
both committed states, every verdict that can set an entry, every view of each end and both
states of the incident."""

import itertools

import pytest

from golden.encoding import Verdict
from golden.fabric.arbiter import EndView, decide
from rtl.fabric.arbiter import END_VIEW, Arbiter
from sim.harness.amaranth_sim import simulate

FIELDS = [name for name, _ in END_VIEW]
VIEWS = [dict(zip(FIELDS, bits)) for bits in itertools.product((0, 1), repeat=len(FIELDS))]


@pytest.mark.slow
def test_arbiter_matches_golden_on_every_input():
    dut = Arbiter()
    outcomes = {}

    async def bench(ctx):
        for up, committed, x, y, incident in itertools.product((0, 1), Verdict, VIEWS, VIEWS, (0, 1)):
            if up and committed != Verdict.NONE and committed != Verdict.LINK_UP:
                continue  # an UP entry is set by no verdict yet or by a LINK_UP
            ctx.set(dut.committed_up, up)
            ctx.set(dut.committed, committed)
            ctx.set(dut.x, x)
            ctx.set(dut.y, y)
            ctx.set(dut.open_incident, incident)
            want = decide(bool(up), committed, EndView(**map_bool(x)), EndView(**map_bool(y)), bool(incident))
            got_verdict = Verdict(ctx.get(dut.verdict)) if ctx.get(dut.write) else None
            assert got_verdict == want.verdict, (up, committed, x, y, incident)
            assert bool(ctx.get(dut.healed)) == want.healed, (up, committed, x, y, incident)
            if want.verdict is not None:
                carry = ctx.get(dut.carry)
                assert tuple(e for e in (0, 1) if carry >> e & 1) == want.reports, (up, committed, x, y)
                if want.verdict in (Verdict.NODE_DOWN, Verdict.UNREACHABLE):
                    assert ctx.get(dut.subject) == want.subject, (up, committed, x, y)
            key = (want.verdict, want.healed, want.reports)
            outcomes[key] = outcomes.get(key, 0) + 1

    simulate(dut, bench, clock=None)
    # Every rule of the table fired somewhere: the comparison covered each of them.
    assert {k[0] for k in outcomes} == {None, *Verdict} - {Verdict.NONE}
    assert (None, True, ()) in outcomes
    assert {k[2] for k in outcomes if k[0] == Verdict.LINK_DOWN} == {(0, 1), (0,), (1,)}


def map_bool(view: dict) -> dict:
    return {k: bool(v) for k, v in view.items()}
