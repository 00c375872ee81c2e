# amaranth: UnusedElaboratable=no
"""rtl/fabric/forward.py against golden/fabric/forward.py (PROTOCOL.md 10.11): a forward queue
driven as a node drives it (a port's take, the frame engine's frame at the tail or, taken out of
a settled port, at the head; a destination that loses and regains its path), the RTL compared
with the golden queue every cycle, overflows included."""

import pytest

from golden.fabric.forward import ForwardQueue as GoldenForwardQueue
from rtl.fabric.forward import ForwardQueue
from sim.harness.amaranth_sim import simulate
from sim.tools.seeds import examples, seeded_rng

WIDTH = 24


@pytest.mark.parametrize("depth,room", [(1, 0), (1, 1), (2, 2), (4, 4), (8, 5)], ids=lambda v: str(v))
def test_forward_queue_matches_golden(depth, room):
    rng = seeded_rng("forward_queue", depth, room)
    dut = ForwardQueue(depth=depth, room=room, width=WIDTH)
    gold = GoldenForwardQueue(depth, room)
    seen = dict.fromkeys(("pop", "tail", "head", "pop_and_head", "dropped_oldest", "dropped_self", "overflow"), 0)
    # The corners: beyond the depth, at the capacity (every slot of the memory in use when
    # depth + room is a power of two), a head push refused there, a tail push while the only
    # frame leaves, and a queue a pop emptied.
    seen.update(beyond_depth=0, at_capacity=0, head_overflow=0, tail_while_last_leaves=0, emptied=0)

    async def bench(ctx):
        no_path = False
        for cycle in range(examples(4000)):
            assert ctx.get(dut.count) == len(gold), cycle
            assert bool(ctx.get(dut.head_valid)) == bool(len(gold)), cycle
            assert bool(ctx.get(dut.full)) == gold.full, cycle
            if len(gold):
                assert ctx.get(dut.head) == next(iter(gold)), cycle
            if rng.random() < 0.01:
                no_path = not no_path  # the destination's path comes and goes
            # Phases of filling and draining, so that the queue reaches full, its capacity and
            # empty; in the filling phases settles take frames out (at the head) as often as
            # frames are relayed, which is what goes beyond the depth.
            filling = (cycle // 200) % 2
            pop = bool(len(gold)) and not no_path and rng.random() < (0.3 if filling else 0.6)
            push = rng.random() < (0.8 if filling else 0.3)
            front = push and rng.random() < (0.5 if filling else 0.3)
            before = len(gold)
            frame = rng.getrandbits(WIDTH)
            ctx.set(dut.pop, pop)
            ctx.set(dut.push, push)
            ctx.set(dut.front, front)
            ctx.set(dut.no_path, no_path)
            ctx.set(dut.data, frame)
            if pop:
                gold.pop()
                seen["pop"] += 1
            overflow = dropped = False
            if push:
                try:
                    dropped = gold.push(frame, front, no_path)
                except OverflowError:
                    overflow = True
            assert bool(ctx.get(dut.overflow)) == overflow, cycle
            assert bool(ctx.get(dut.dropped)) == dropped, cycle
            if overflow:
                seen["overflow"] += 1
                seen["head_overflow"] += front
            elif dropped:
                seen["dropped_self" if front else "dropped_oldest"] += 1
            elif push:
                seen["head" if front else "tail"] += 1
                seen["pop_and_head"] += pop and front
            seen["beyond_depth"] += len(gold) > depth
            seen["at_capacity"] += len(gold) == depth + room
            seen["tail_while_last_leaves"] += pop and before == 1 and push and not front and not overflow
            seen["emptied"] += pop and not len(gold)
            await ctx.tick()

    simulate(dut, bench)
    if not room:
        # No room beyond the depth: at the depth, a frame taken out is refused only with a path.
        seen.pop("beyond_depth")
    assert all(seen.values()), seen


def test_a_frame_taken_out_goes_before_the_queue_and_a_full_queue_with_no_path_drops_its_oldest():
    q = GoldenForwardQueue(2, 1)
    q.push(b"a")
    q.push(b"b")
    assert q.push(b"c", front=True) is False and list(q) == [b"c", b"a", b"b"]
    with pytest.raises(OverflowError):
        q.push(b"d", front=True)
    with pytest.raises(OverflowError):
        q.push(b"d")
    assert q.push(b"d", no_path=True) is True and list(q) == [b"a", b"b", b"d"]
    assert q.push(b"e", front=True, no_path=True) is True and list(q) == [b"a", b"b", b"d"]


@pytest.mark.parametrize("depth,room,width", [(0, 0, 8), (2, -1, 8), (2, 0, 0), (2.0, 0, 8), (True, 0, 8)])
def test_bad_parameters_are_refused(depth, room, width):
    with pytest.raises(ValueError):
        ForwardQueue(depth=depth, room=room, width=width)
    if width:
        with pytest.raises(ValueError):
            GoldenForwardQueue(depth, room)
