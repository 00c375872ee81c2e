# amaranth: UnusedElaboratable=no
"""rtl/fabric/destination.py against golden/fabric/destination.py (PROTOCOL.md 10.7, 10.10,
10.11): the frames of several streams arriving at a node out of order, copies, frames beyond the
window, drains and the control engine's ACKs among them, the RTL compared with the golden
destination every cycle."""

import pytest

from golden.encoding import NodeKind
from golden.fabric.destination import Destination as GoldenDestination
from golden.fabric.destination import received_streams
from golden.fabric.e2e import SEQ_MOD
from golden.params import E2E_CONTROL_WINDOW
from rtl.fabric.destination import Destination
from sim.harness.amaranth_sim import simulate
from sim.tools.seeds import examples, seeded_rng

OUTCOMES = ("duplicate", "ack_copy", "held", "copy", "refused", "delivered", "last", "ack_due")


def message_ok(frame: bytes) -> int:
    """A bit the caller judges of a frame (here any function of it), kept with the frame."""
    return frame[1] & 1


@pytest.mark.parametrize(
    "others,user_classes,window,ack_every",
    # Windows below, equal to and above the control streams' (16): the reorder memory's regions
    # are laid out largest first.
    [(1, 1, 4, 1), (2, 1, 8, 4), (2, 2, 4, 2), (3, 1, 16, 8), (2, 1, 1, 1), (1, 2, 32, 4)],
    ids=str,
)
def test_destination_matches_golden(others, user_classes, window, ack_every):
    rng = seeded_rng("destination", others, user_classes, window, ack_every)
    dut = Destination(others, user_classes, window, ack_every)
    gold = GoldenDestination(range(1, others + 1), user_classes, window, ack_every)
    streams = received_streams(range(1, others + 1), user_classes)
    seen = {name: 0 for name in OUTCOMES}
    seen.update(drained=0, drained_ok=0, control_acks=0, not_last=0)

    async def bench(ctx):
        for cycle in range(examples(1500)):
            assert bool(ctx.get(dut.draining)) == (gold.draining is not None), cycle
            # As the frame engine does: a draining stream drains before any frame arrives,
            # or the engine waits (a control stream's drain waiting for the event queue).
            drain = gold.draining is not None and rng.random() < 0.8
            arrive = gold.draining is None and rng.random() < 0.7
            k = rng.randrange(len(streams))
            key = streams[k]
            limit = E2E_CONTROL_WINDOW if key[2] == NodeKind.CONTROL else window
            expected = gold.expected[key]
            seq = (expected + rng.randrange(-3, limit + 2)) % SEQ_MOD
            if rng.random() < 0.02:
                seq = rng.randrange(SEQ_MOD)
            frame = rng.getrandbits(512).to_bytes(64, "little")
            control = [d for d in range(others) if rng.random() < 0.05]
            origin = control[0] if control else 0
            ctx.set(dut.arrive, arrive)
            ctx.set(dut.stream, k)
            ctx.set(dut.seq, seq)
            ctx.set(dut.frame, int.from_bytes(frame, "little"))
            ctx.set(dut.message_ok, message_ok(frame))
            ctx.set(dut.drain, drain)
            ctx.set(dut.control_ack, bool(control))
            ctx.set(dut.control_ack_origin, origin)
            control_key = streams[origin * (user_classes + 1) + user_classes]
            control_expected = gold.expected[control_key]
            assert ctx.get(dut.control_ack_expected) == control_expected, cycle
            assert ctx.get(dut.stream_expected) == expected, cycle
            got = None
            if drain:
                assert ctx.get(dut.drain_stream) == streams.index(gold.draining), cycle
                assert bool(ctx.get(dut.draining_control)) == (gold.draining[2] == NodeKind.CONTROL), cycle
                _, want_frame, got = gold.drain()
                assert ctx.get(dut.drain_frame) == int.from_bytes(want_frame, "little"), cycle
                # The bit kept beside a held frame comes back with it.
                assert ctx.get(dut.drain_message_ok) == message_ok(want_frame), cycle
                seen["drained_ok"] += message_ok(want_frame)
                seen["drained"] += 1
            elif arrive:
                got = gold.arrive(key, seq, frame)
            if control:
                gold.record(control_key, control_expected)
                seen["control_acks"] += 1
            for name in OUTCOMES:
                want = getattr(got, name) if got is not None else False
                if name == "last" and not (got is not None and got.delivered):
                    continue  # read only with a delivery
                assert bool(ctx.get(getattr(dut, name))) == want, (cycle, name, got)
                seen[name] += want
            if got is not None and got.delivered:
                assert ctx.get(dut.expected) == got.expected, cycle
                seen["not_last"] += not got.last
            await ctx.tick()

    simulate(dut, bench)
    assert all(seen.values()), seen


@pytest.mark.parametrize(
    "others,user_classes,window,ack_every",
    [(0, 1, 4, 1), (1, 0, 4, 1), (1, 4, 4, 1), (1, 1, 3, 1), (1, 1, 4, 0), (1, 1, 4, 5), (1.0, 1, 4, 1)],
)
def test_bad_parameters_are_refused(others, user_classes, window, ack_every):
    with pytest.raises(ValueError):
        Destination(others, user_classes, window, ack_every)


def test_the_golden_destination_refuses_what_does_not_arrive_here():
    gold = GoldenDestination([1, 2], 1, 4, 1)
    with pytest.raises(ValueError):
        gold.arrive((0, 0, NodeKind.USER), 0, bytes(64))
    with pytest.raises(ValueError):
        gold.drain()
    with pytest.raises(ValueError):
        gold.record((1, 0, NodeKind.USER), 3)
