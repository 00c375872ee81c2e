# amaranth: UnusedElaboratable=no
"""rtl/fabric/table.py against golden/fabric/table.py (PROTOCOL.md 10.4): random verdicts, many
of them stale, offered one a cycle; what is adopted and every entry compared each cycle."""

import pytest

from golden.encoding import Verdict
from golden.fabric.table import Table
from rtl.fabric.table import TopologyTable
from sim.harness.amaranth_sim import simulate
from sim.tools.seeds import examples, seeded_rng


@pytest.mark.parametrize("links", [1, 3, 6])
def test_table_matches_golden_every_cycle(links):
    rng = seeded_rng(links)
    dut, golden = TopologyTable(links), Table(links)
    outcomes = set()

    async def bench(ctx):
        for _ in range(examples(3000)):
            write = rng.random() < 0.7
            link = rng.randrange(links + 1)  # one past the last: never adopted
            held = golden[min(link, links - 1)].epoch
            # Epochs near the held one: equal, one less, one more, by count or by arbiter; now and
            # then a jump over the field's width (the top bit of the count, arbiters up to 255).
            count = max(0, held[0] + rng.choice([-1, 0, 0, 1, 1, 2]))
            if rng.random() < 0.02:
                count = held[0] + (1 << rng.choice([15, 16, 24, 31]))
            count = min(count, (1 << 32) - 1)  # the field's width: no epoch goes past it
            arbiter = rng.randrange(4) if rng.random() < 0.9 else rng.randrange(256)
            verdict = rng.choice(list(Verdict))
            subject = rng.randrange(256)
            ctx.set(dut.write_en, write)
            ctx.set(
                dut.write,
                {"link": link, "verdict": verdict, "subject": subject, "count": count, "arbiter": arbiter},
            )
            read = rng.randrange(links + 1)
            ctx.set(dut.read_link, read)
            want = write and link < links and golden.adopt(link, verdict, subject, (count, arbiter))
            assert ctx.get(dut.adopt) == want, (link, count, arbiter, held)
            outcomes.add((write and link < links, want))
            await ctx.tick()
            up = ctx.get(dut.up)
            assert [up >> i & 1 for i in range(links)] == [e.up for e in golden]
            ctx.set(dut.read_link, read)
            entry = ctx.get(dut.read)
            if read < links:
                e = golden[read]
                assert (entry.up, (entry.count, entry.arbiter), entry.verdict, entry.subject) == (
                    e.up,
                    e.epoch,
                    e.verdict,
                    e.subject,
                )
            else:
                assert (entry.up, entry.count, entry.arbiter) == (1, 0, 0)

    simulate(dut, bench)
    # Verdicts were adopted, refused as stale, and offered for a link that is not there.
    assert outcomes == {(True, True), (True, False), (False, False)}


@pytest.mark.parametrize("links", [0, 257, True, "3"])
def test_a_bad_link_count_is_refused(links):
    with pytest.raises(ValueError, match="links"):
        TopologyTable(links)
