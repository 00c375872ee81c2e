# amaranth: UnusedElaboratable=no
"""rtl/fabric/reports.py against golden/fabric/reports.py (PROTOCOL.md 10.5): random REPORTs of
every end of every link, of leaving and of entering UP, and closes, compared every cycle at a
random link read, on a triangle, a mesh of four and a ring of five with chords."""

import pytest

from golden import encoding as enc
from golden.fabric.message import Report
from golden.fabric.reports import Reports as GoldenReports
from golden.topology import Topology
from rtl.fabric.reports import Reports
from sim.harness.amaranth_sim import simulate
from sim.tools.seeds import examples, seeded_rng

TOPOLOGIES = {
    "triangle": Topology.triangle(),
    "mesh4": Topology.full_mesh(4),
    "ring5_chords": Topology(5, [(0, 1), (1, 2), (2, 3), (3, 4), (0, 4), (0, 2), (1, 3)]),
}
CYCLES = 1500


def _report(rng, t):
    link = rng.randrange(len(t.links))
    return Report(
        link,
        rng.choice(t.links[link]),
        rng.random() < 0.5,
        rng.random() < 0.5,
        rng.getrandbits(enc.INCIDENT_BITS),
        rng.getrandbits(enc.SESSION_BITS),
        rng.getrandbits(enc.HALF_STATE_BITS),
    )


@pytest.mark.parametrize("name", list(TOPOLOGIES))
def test_reports_match_golden_every_cycle(name):
    t = TOPOLOGIES[name]
    rng = seeded_rng("reports", name)
    dut, gold = Reports(t), GoldenReports(t)
    seen = {"replaced": 0, "opened": 0, "closed": 0, "both": 0}

    async def bench(ctx):
        for _ in range(examples(CYCLES)):
            link = rng.randrange(len(t.links))
            ctx.set(dut.link, link)
            for e, end in enumerate(t.links[link]):
                want = gold.latest(link, end)
                got = ctx.get(dut.ends[e])
                assert got.valid == (want is not None), (link, end)
                if want is not None:
                    assert Report.from_slices(ctx.get(dut.ends[e].head.as_value()), got.half) == want, (link, end)
            assert ctx.get(dut.open) == gold.is_open(link), link

            record = _report(rng, t) if rng.random() < 0.5 else None
            close = rng.randrange(len(t.links)) if rng.random() < 0.3 else None
            ctx.set(dut.record, record is not None)
            ctx.set(dut.close, close is not None)
            if close is not None:
                ctx.set(dut.close_link, close)
                seen["closed"] += gold.is_open(close)
                gold.close(close)
            if record is not None:
                s1, s2 = record.slices()
                ctx.set(dut.record_head.as_value(), s1)
                ctx.set(dut.record_half, s2)
                seen["replaced"] += gold.latest(record.link, record.writer) is not None
                seen["opened"] += not record.up and not gold.is_open(record.link)
                seen["both"] += close == record.link and not record.up
                gold.record(record)
            await ctx.tick()

    simulate(dut, bench)
    assert all(seen.values()), seen


def test_a_report_not_by_an_end_of_its_link_is_refused():
    gold = GoldenReports(Topology.triangle())
    with pytest.raises(ValueError, match="not an end"):
        gold.record(Report(0, 2, False, False, 0, 0, 0))
    assert gold.latest(0, 2) is None and not gold.is_open(0)


@pytest.mark.parametrize("topology", [None, 3, "triangle"])
def test_a_bad_topology_is_refused(topology):
    with pytest.raises(ValueError, match="topology"):
        Reports(topology)
