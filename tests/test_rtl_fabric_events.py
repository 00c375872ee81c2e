# amaranth: UnusedElaboratable=no
"""rtl/fabric/events.py against golden/fabric/events.py (PROTOCOL.md 10.11): a node's event queue
written by several writers in a clock (each port, then the frame engine's message) and read one
event a clock, the RTL compared with the golden queue every cycle, overflows included."""

import pytest

from golden.fabric.events import EventQueue as GoldenEventQueue
from golden.params import EVENT_MESSAGES, EVENTS_PER_PORT
from rtl.fabric.events import EventQueue
from sim.harness.amaranth_sim import simulate
from sim.tools.seeds import examples, seeded_rng

WIDTH = 12


@pytest.mark.parametrize(
    "depth,writers",
    [(1, 1), (3, 4), (EVENTS_PER_PORT * 3 + EVENT_MESSAGES, 7), (EVENTS_PER_PORT * 4 + EVENT_MESSAGES, 9)],
    ids=lambda v: str(v),
)
def test_event_queue_matches_golden(depth, writers):
    rng = seeded_rng("event_queue", depth, writers)
    dut = EventQueue(width=WIDTH, depth=depth, writers=writers)
    gold = GoldenEventQueue(depth)
    seen = dict(popped=0, several=0, full=0, overflow=0, wrapped=0)

    async def bench(ctx):
        written = 0
        for cycle in range(examples(3000)):
            assert ctx.get(dut.count) == len(gold), cycle
            assert bool(ctx.get(dut.head_valid)) == bool(len(gold)), cycle
            if len(gold):
                assert ctx.get(dut.head) == gold.events[0], cycle
            # Bursts of events (a storm of port changes) between quiet stretches.
            p = rng.choice([0.0, 0.05, 0.2, 0.6])
            write = [rng.random() < p for _ in range(writers)]
            data = [rng.getrandbits(WIDTH) for _ in range(writers)]
            pop = bool(len(gold)) and rng.random() < 0.5
            ctx.set(dut.pop, pop)
            ctx.set(dut.write, sum(1 << k for k, w in enumerate(write) if w))
            for k in range(writers):
                ctx.set(dut.data[k], data[k])
            if pop:
                gold.popleft()
                seen["popped"] += 1
            overflow = False
            for k in range(writers):
                if write[k]:
                    try:
                        gold.append(data[k])
                        written += 1
                    except OverflowError:
                        overflow = True
            assert bool(ctx.get(dut.overflow)) == overflow, cycle
            seen["overflow"] += overflow
            seen["several"] += sum(write) > 1 and not overflow
            seen["full"] += len(gold) == depth
            seen["wrapped"] = written > depth
            await ctx.tick()

    simulate(dut, bench)
    if writers == 1:
        seen.pop("several")
    assert all(seen.values()), seen


def test_the_golden_queue_keeps_what_fits_and_refuses_the_rest():
    q = GoldenEventQueue(2)
    q.append("a")
    q.append("b")
    with pytest.raises(OverflowError):
        q.append("c")
    assert q.popleft() == "a" and len(q) == 1


@pytest.mark.parametrize("width,depth,writers", [(0, 4, 2), (8, 0, 2), (8, 4, 0), (8, 4.0, 2), (8, 1025, 2)])
def test_bad_parameters_are_refused(width, depth, writers):
    with pytest.raises(ValueError):
        EventQueue(width=width, depth=depth, writers=writers)
    if isinstance(depth, int) and not 1 <= depth:
        with pytest.raises(ValueError):
            GoldenEventQueue(depth)
