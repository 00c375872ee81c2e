# amaranth: UnusedElaboratable=no
"""rtl/fabric/waiting.py against golden/fabric/waiting.py (PROTOCOL.md 10.10): control messages
parked behind a full window, newer ones replacing older ones about the same (type, link), and
flushed oldest first, the RTL compared with the golden queue every cycle."""

import pytest

from golden.fabric.waiting import WaitingMessages as GoldenWaitingMessages
from rtl.fabric.waiting import WaitingMessages
from sim.harness.amaranth_sim import simulate
from sim.tools.seeds import examples, seeded_rng

WIDTH = 40


@pytest.mark.parametrize("capacity", [1, 2, 5, 9])
def test_waiting_messages_match_golden(capacity):
    rng = seeded_rng("waiting_messages", capacity)
    dut = WaitingMessages(capacity=capacity, width=WIDTH)
    gold = GoldenWaitingMessages(capacity)
    seen = dict(parked=0, superseded=0, superseded_not_last=0, popped=0, full=0)

    async def bench(ctx):
        for cycle in range(examples(2000)):
            assert ctx.get(dut.count) == len(gold), cycle
            if len(gold):
                assert ctx.get(dut.oldest_payload) == gold.payloads()[0], cycle
            seen["full"] += len(gold) == capacity
            # Storms of messages (one a clock at most, as one control action writes one), then
            # flushes; every slot can be parked whatever the count, as the numbering allows.
            storm = (cycle // 100) % 2 == 0
            pop = bool(len(gold)) and rng.random() < (0.2 if storm else 0.6)
            park = not pop and rng.random() < (0.7 if storm else 0.1)
            slot, payload = rng.randrange(capacity), rng.getrandbits(WIDTH)
            ctx.set(dut.pop, pop)
            ctx.set(dut.park, park)
            ctx.set(dut.park_slot, slot)
            ctx.set(dut.park_payload, payload)
            if pop:
                gold.pop()
                seen["popped"] += 1
            superseded = False
            if park:
                keys = list(gold.messages)
                superseded = gold.park(slot, payload)
                seen["parked"] += 1
                seen["superseded"] += superseded
                seen["superseded_not_last"] += superseded and keys[-1] != slot
            assert bool(ctx.get(dut.superseded)) == superseded, cycle
            await ctx.tick()

    simulate(dut, bench)
    if capacity == 1:
        seen.pop("superseded_not_last")  # one slot: the one superseded is always the last
    assert all(seen.values()), seen


def test_the_newest_about_a_link_goes_last_and_the_oldest_leaves_first():
    q = GoldenWaitingMessages(3)
    assert q.park(("report", 0), b"a") is False
    q.park(("verdict", 0), b"b")
    assert q.park(("report", 0), b"c") is True
    assert q.payloads() == [b"b", b"c"]
    assert q.pop() == b"b" and q.pop() == b"c" and not len(q)
    with pytest.raises(ValueError):
        q.pop()
    for i in range(3):
        q.park(i, b"x")
    with pytest.raises(OverflowError):
        q.park(3, b"y")


@pytest.mark.parametrize("capacity,width", [(0, 8), (1025, 8), (2, 0), (2.0, 8)])
def test_bad_parameters_are_refused(capacity, width):
    with pytest.raises(ValueError):
        WaitingMessages(capacity=capacity, width=width)
    if capacity == 0 or isinstance(capacity, float):  # the golden queue has no width, nor a size limit
        with pytest.raises(ValueError):
            GoldenWaitingMessages(capacity)
