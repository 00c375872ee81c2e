# amaranth: UnusedElaboratable=no
"""rtl/fabric/port_records.py against golden/fabric/port_records.py (PROTOCOL.md 10.3, 10.5),
every cycle: random port changes (first entries among them, with ports that hear and ports
that do not), absences found, REPORTs told the peer, counts across their fields' width."""

import pytest

from golden import encoding as enc
from golden.fabric.message import wire_session
from golden.fabric.port_records import PortRecords as GoldenPortRecords
from rtl.fabric.port_records import PortRecords
from sim.harness.amaranth_sim import simulate
from sim.tools.seeds import examples, seeded_rng

RUNS, CYCLES = 40, 80
NODE = 5


@pytest.mark.parametrize("ports", [1, 2, 3, 4])
def test_port_records_match_golden_every_cycle(ports):
    rng = seeded_rng("port records", ports)
    seen = {"first_quiet": 0, "first_news": 0, "absent_new": 0, "told": 0, "not_told": 0, "marked": 0}
    # Many short runs from a fresh node each, so that first entries come up often.
    for _ in range(examples(RUNS)):
        _run(rng, ports, seen)
    if ports == 1:  # no other port to report absent
        del seen["first_news"], seen["absent_new"]
    assert all(seen.values()), seen


def _run(rng, ports, seen):
    links = sorted(rng.sample(range(12), ports))  # a node's links, not numbered from 0
    dut, gold = PortRecords(ports=ports), GoldenPortRecords(links)

    async def bench(ctx):
        for cycle in range(CYCLES):
            hears = rng.getrandbits(ports)
            action = rng.choice(["change", "change", "never_up", "tell", "none"])
            p = rng.randrange(ports)
            link = links[p]
            table_up = rng.random() < 0.7
            up = rng.random() < (0.3 if gold.up[link] else 0.6)
            marks = [q for q in range(ports) if rng.random() < 0.02]
            ctx.set(dut.hears, hears)
            ctx.set(dut.change, action == "change")
            ctx.set(dut.never_up, action == "never_up")
            ctx.set(dut.tell, action == "tell")
            ctx.set(dut.change_port, p)
            ctx.set(dut.never_up_port, p)
            ctx.set(dut.tell_port, p)
            ctx.set(dut.table_up, table_up)
            ctx.set(dut.change_up, up)
            ctx.set(dut.mark_absent, sum(1 << q for q in marks))
            announce = everything = told = False
            absent = ()
            if action == "change":
                change = gold.changed(link, up, lambda lk: hears >> links.index(lk) & 1, table_up)
                announce, absent, everything = change.announce, change.absent, change.arbitrate_all
                seen["first_quiet"] += everything
                seen["first_news"] += bool(absent) and announce
                seen["absent_new"] += len(absent)
            elif action == "never_up":
                gold.never_up(link)
            where = (links, cycle, action, p)
            assert ctx.get(dut.announce) == announce, where
            assert ctx.get(dut.arbitrate_all) == everything, where
            assert ctx.get(dut.absent_new) == sum(1 << links.index(lk) for lk in absent), where
            for q, lk in enumerate(links):
                assert ctx.get(dut.now_up) >> q & 1 == gold.up[lk], (where, q)
                assert ctx.get(dut.now_incident[q]) == gold.incident[lk] % (1 << enc.INCIDENT_BITS), (where, q)
                assert ctx.get(dut.now_session[q]) == wire_session(gold.session[lk]), (where, q)
                assert ctx.get(dut.now_absent) >> q & 1 == (lk in gold.absent), (where, q)
            if action == "tell":
                told = gold.tell(gold.report(NODE, link, bool(hears >> p & 1), 0))
                seen["told" if told else "not_told"] += 1
            assert ctx.get(dut.told) == told, where
            for q in marks:
                seen["marked"] += links[q] not in gold.absent
                gold.absent.add(links[q])
            await ctx.tick()
            for q, lk in enumerate(links):
                assert ctx.get(dut.ever_up) >> q & 1 == gold.ever_up[lk], (where, q)
                assert ctx.get(dut.absent) >> q & 1 == (lk in gold.absent), (where, q)

    simulate(dut, bench)


def test_the_counts_wrap_as_a_report_carries_them():
    """Past 2^16 - 1 entries the session a REPORT carries goes on at 1 (0 means never
    entangled); the incident count wraps to 0. The registers are set near the wrap."""
    dut = PortRecords(ports=1)
    top = (1 << enc.SESSION_BITS) - 1

    async def bench(ctx):
        ctx.set(dut.change_port, 0)
        ctx.set(dut.hears, 1)
        ctx.set(dut.session, [top - 1])
        incidents = 1 << enc.INCIDENT_BITS
        ctx.set(dut.incident, [incidents - 2])
        for k in range(4):
            ctx.set(dut.change, 1)
            ctx.set(dut.change_up, 1)
            assert ctx.get(dut.now_session[0]) == wire_session(top + k)
            await ctx.tick()
            ctx.set(dut.change_up, 0)
            assert ctx.get(dut.now_incident[0]) == (incidents - 1 + k) % incidents
            await ctx.tick()

    simulate(dut, bench)


@pytest.mark.parametrize("ports", [0, -1, 257, 1.5])
def test_a_bad_port_count_is_refused(ports):
    with pytest.raises(ValueError, match="ports"):
        PortRecords(ports=ports)
