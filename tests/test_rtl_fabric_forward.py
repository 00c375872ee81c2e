# amaranth: UnusedElaboratable=no
"""rtl/fabric/forward.py against golden/fabric/forward.py (PROTOCOL.md 10.11): a forward queue
driven as a node drives it (a port's take, the frame engine's frame at the tail or, taken out of
a settled port, at the head; a destination that loses and regains its path), and the queue with
its ACK slot, the RTL compared with the golden twin every cycle, overflows included."""

import pytest

from golden.encoding import NodeKind
from golden.fabric.forward import ForwardQueue as GoldenForwardQueue
from golden.fabric.forward import Forwards as GoldenForwards
from rtl.fabric.forward import ForwardQueue, Forwards
from rtl.link.framer import FRAME_BITS
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


@pytest.mark.parametrize(
    "node_id,dest,stream_cls,kind,depth,room",
    [(0, 1, 0, NodeKind.CONTROL, 2, 1), (2, 0, 1, NodeKind.USER, 4, 2)],
    ids=["control", "user"],
)
def test_forwards_match_golden(node_id, dest, stream_cls, kind, depth, room):
    """The queue with its ACK slot: ACKs written, replaced, taken in turn with the queue's head."""
    rng = seeded_rng("forwards", node_id, dest, stream_cls, depth, room)
    dut = Forwards(node_id=node_id, dest=dest, stream_cls=stream_cls, kind=kind, depth=depth, room=room)
    gold = GoldenForwards(node_id, dest, stream_cls, kind, depth, room)
    seen = dict(ack_taken=0, head_taken=0, turns=0, replaced=0, ack_and_take=0)

    async def bench(ctx):
        last = None
        for cycle in range(examples(3000)):
            assert bool(ctx.get(dut.waiting)) == gold.waiting, cycle
            assert ctx.get(dut.count) == len(gold.queue), cycle
            take = gold.waiting and rng.random() < 0.5
            ack = rng.random() < 0.3
            expected = rng.getrandbits(32)
            push = len(gold.queue) < depth and rng.random() < 0.4
            front = push and rng.random() < 0.2
            frame = rng.getrandbits(FRAME_BITS)
            for port, value in dict(take=take, ack=ack, ack_expected=expected, push=push, front=front).items():
                ctx.set(getattr(dut, port), value)
            ctx.set(dut.data, frame)
            ctx.set(dut.no_path, 0)
            if take:
                # The port's take comes first in the clock, then the engines' writes (10.11).
                what = "ack" if gold.slot is not None and not (gold.slot_last and len(gold.queue)) else "head"
                want = gold.take()
                assert ctx.get(dut.frame) == int.from_bytes(want, "little"), cycle
                seen[f"{what}_taken"] += 1
                seen["turns"] += last is not None and last != what
                last = what
            if push:
                gold.queue.push(frame.to_bytes(64, "little"), front)
            replaced = gold.ack(expected) if ack else False
            assert bool(ctx.get(dut.replaced)) == replaced, cycle
            seen["replaced"] += replaced
            seen["ack_and_take"] += ack and take
            await ctx.tick()

    simulate(dut, bench)
    assert all(seen.values()), seen


def test_a_forwards_slot_refuses_what_is_not_a_stream():
    for kind, cls in ((NodeKind.ACK, 0), (NodeKind.CONTROL, 1)):
        with pytest.raises(ValueError):
            GoldenForwards(0, 1, cls, kind, 2, 0)
        with pytest.raises(ValueError):
            Forwards(node_id=0, dest=1, stream_cls=cls, kind=kind, depth=2, room=0)
    with pytest.raises(ValueError):
        Forwards(node_id=1, dest=1, stream_cls=0, kind=NodeKind.USER, depth=2, room=0)
