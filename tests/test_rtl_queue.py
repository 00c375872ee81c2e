# amaranth: UnusedElaboratable=no
"""rtl/queue.py against a Python deque under random pushes, pops and clears."""

import collections
import random

import pytest
from amaranth.sim import Simulator

from rtl.queue import Queue


@pytest.mark.parametrize("depth", [4, 12])
def test_queue_matches_a_deque(depth):
    rng = random.Random(depth)
    dut = Queue(width=8, depth=depth)
    model = collections.deque()
    seen = collections.Counter()

    async def bench(ctx):
        for cycle in range(3000):
            push_a, push_b = rng.random() < 0.5, rng.random() < 0.3
            pop = bool(model) and rng.random() < 0.55
            clear = rng.random() < 0.01
            a, b = rng.randrange(256), rng.randrange(256)
            for port, value in (("push_a", push_a), ("data_a", a), ("push_b", push_b), ("data_b", b),
                                ("pop", pop), ("clear", clear)):
                ctx.set(getattr(dut, port), value)
            assert ctx.get(dut.count) == len(model), cycle
            if model:
                assert ctx.get(dut.head) == model[0], cycle
            if len(model) > 1:
                assert ctx.get(dut.second) == model[1], cycle
            pushes = [v for v, on in ((a, push_a), (b, push_b)) if on]
            overflow = len(model) + len(pushes) > dut.depth
            assert ctx.get(dut.overflow) == overflow, cycle
            seen["overflow" if overflow else "fits"] += 1
            if pop:
                model.popleft()
            if clear:
                model.clear()
                seen["clear"] += 1
            elif not overflow:
                model.extend(pushes)
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert seen["overflow"] and seen["clear"] and seen["fits"]


@pytest.mark.parametrize("kwargs, name", [({"width": 1, "depth": 4}, "width"), ({"width": 8, "depth": 1.5}, "depth")])
def test_bad_parameters(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        Queue(**kwargs)
