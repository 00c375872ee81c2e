# amaranth: UnusedElaboratable=no
"""rtl/fabric/reorder.py against golden/fabric/reorder.py (PROTOCOL.md 10.7, 10.10): a stream's
frames arriving out of order, copies and frames beyond the window among them, drained one a
cycle as a destination does, the RTL's slots compared with the golden buffer every cycle. The
frames themselves are in the destination's reorder memory, and tests/test_rtl_fabric_destination.py
compares every frame drained with the golden one."""

import pytest

from golden.fabric.e2e import SEQ_MOD
from golden.fabric.reorder import Reorder as GoldenReorder
from rtl.fabric.reorder import Reorder
from sim.harness.amaranth_sim import simulate
from sim.tools.seeds import examples, seeded_rng


@pytest.mark.parametrize("window,start", [(1, 0), (4, SEQ_MOD - 6), (16, 5)])
def test_reorder_matches_golden(window, start):
    rng = seeded_rng("reorder", window, start)
    dut = Reorder(window)
    gold = GoldenReorder(window)
    seen = {"held": 0, "refused": 0, "drained": 0, "copy": 0}

    async def bench(ctx):
        expected = start
        for cycle in range(examples(3000)):
            ctx.set(dut.expected, expected)
            query = (expected + rng.randrange(-2, window + 2)) % SEQ_MOD
            ctx.set(dut.query_seq, query)
            assert bool(ctx.get(dut.holds)) == gold.holds(query), cycle
            assert ctx.get(dut.count) == len(gold), cycle
            hold = take = False
            seq = expected
            frame = bytes(64)
            after = expected
            if gold.holds(expected):
                # The destination drains: the next expected frame is in the buffer.
                take = True
                gold.take(expected)
                after = (expected + 1) % SEQ_MOD
                seen["drained"] += 1
            else:
                seq = (expected + rng.randrange(-2, window + 2)) % SEQ_MOD
                ahead = (seq - expected) % SEQ_MOD
                if ahead == 0 and rng.random() < 0.1:
                    hold = True  # offered to the buffer instead: refused, it is the next
                    assert not gold.hold(seq, frame, expected)
                elif ahead == 0:
                    after = (expected + 1) % SEQ_MOD  # delivered on arrival
                elif ahead < SEQ_MOD // 2:
                    hold = True
                    seen["copy"] += gold.holds(seq)
                    kept = gold.hold(seq, frame, expected)
                    seen["held" if kept else "refused"] += 1
            ctx.set(dut.hold, hold)
            ctx.set(dut.hold_seq, seq)
            ctx.set(dut.take, take)
            ctx.set(dut.take_seq, expected)
            if hold:
                assert bool(ctx.get(dut.accepted)) == gold.holds(seq), cycle
            expected = after
            await ctx.tick()

    simulate(dut, bench)
    if window > 1:
        assert all(seen.values()), seen
    else:
        assert seen["refused"] and not seen["held"], seen


@pytest.mark.parametrize("window", [0, 3, (1 << 16) + 1, 2.0])
def test_a_bad_window_is_refused(window):
    for make in (Reorder, GoldenReorder):
        with pytest.raises(ValueError, match="window"):
            make(window)
