# amaranth: UnusedElaboratable=no
"""rtl/common/queue.py against a Python deque under random pushes, pops and clears."""

import collections
import random

import pytest

from rtl.common.queue import Queue
from sim.harness.amaranth_sim import simulate


@pytest.mark.parametrize("lookahead", [False, True])
@pytest.mark.parametrize("depth, push_rate, pop_rate", [(4, 0.5, 0.55), (12, 0.6, 0.5), (2, 0.7, 0.3)])
def test_queue_matches_a_deque(depth, push_rate, pop_rate, lookahead):
    rng = random.Random(depth)
    dut = Queue(width=8, depth=depth, lookahead=lookahead)
    model = collections.deque()
    seen = collections.Counter()
    last = {"successor": None, "data": None, "head": None}

    def check_lookahead(ctx, cycle, head_leaves, value):
        """The framer's contract: ``successor`` is the entry behind the head, and the head came
        from last cycle's successor, from last cycle's data, or is last cycle's head."""
        if len(model) >= 2:
            assert ctx.get(dut.successor) == model[1], cycle
        loaded = ctx.get(dut.loaded)
        assert not (loaded.from_memory and loaded.from_push), cycle
        if model:
            source = "successor" if loaded.from_memory else "data" if loaded.from_push else "head"
            assert last[source] is not None and model[0] == last[source], (cycle, source)
            seen["from " + source] += 1
        last.update(successor=ctx.get(dut.successor), data=value, head=None if head_leaves or not model else model[0])

    async def bench(ctx):
        for cycle in range(4000):
            push = rng.random() < push_rate
            pop = bool(model) and rng.random() < pop_rate
            clear = rng.random() < 0.01
            value = rng.randrange(256)
            for port, v in (("push", push), ("data", value), ("pop", pop), ("clear", clear)):
                ctx.set(getattr(dut, port), v)
            assert ctx.get(dut.count) == len(model), cycle
            assert ctx.get(dut.head_valid) == bool(model), cycle
            if model:
                assert ctx.get(dut.head) == model[0], cycle
            if lookahead:
                check_lookahead(ctx, cycle, pop or clear, value)
            full = len(model) == dut.depth
            assert ctx.get(dut.overflow) == (push and not pop and full), cycle
            seen["full"] += full
            seen["pop and push"] += pop and push
            seen["overflow"] += push and not pop and full
            await ctx.tick()
            if clear:
                model.clear()
                continue
            if pop:
                model.popleft()
            if push and not (full and not pop):
                model.append(value)
        assert seen["full"] and seen["pop and push"], seen
        assert not lookahead or (seen["from successor"] and seen["from data"]), seen

    simulate(dut, bench, clock=1e-8)


def test_head_moves_on_every_cycle_of_a_long_burst():
    """Back-to-back pops of entries that sat in the memory: one per cycle, in order."""
    dut = Queue(width=8, depth=16)

    async def bench(ctx):
        ctx.set(dut.push, 1)
        for v in range(12):
            ctx.set(dut.data, v)
            await ctx.tick()
        ctx.set(dut.push, 0)
        ctx.set(dut.pop, 1)
        for v in range(12):
            assert ctx.get(dut.head_valid) and ctx.get(dut.head) == v
            await ctx.tick()
        assert not ctx.get(dut.head_valid) and ctx.get(dut.count) == 0

    simulate(dut, bench, clock=1e-8)


@pytest.mark.parametrize(
    "name, value", [("width", 0), ("depth", 0), ("depth", 2.5), ("width", True), ("lookahead", 1), ("lookahead", None)]
)
def test_bad_sizes_raise(name, value):
    kwargs = {"width": 8, "depth": 4, name: value}
    with pytest.raises(ValueError, match=name):
        Queue(**kwargs)
