# amaranth: UnusedElaboratable=no
"""rtl/fabric/receive.py against golden/fabric/receive.py (PROTOCOL.md 10.7, 10.11): frames of
every kind, for this node and for others, well formed and malformed, each at the head of a
control or a user inbox under random forward-queue, path and event-queue states, routed and
held alike."""

import pytest

from golden import encoding as enc
from golden.encoding import NodeKind
from golden.fabric.message import node_frame
from golden.fabric.receive import Hold, Way, hold, route
from rtl.fabric.receive import FrameRoute
from sim.harness.amaranth_sim import simulate
from sim.tools.seeds import examples, seeded_rng

# (num_nodes, node_id, user_classes)
CONFIGS = [(3, 0, 1), (3, 2, 1), (4, 1, 3), (5, 4, 2), (2, 1, 1)]
FRAMES = 1500


def _frame(rng, nodes, me, classes):
    """A frame with a header a node could send, or one field or bit of it made wrong."""
    kind = rng.choice([NodeKind.USER, NodeKind.CONTROL, NodeKind.ACK])
    dest = me if rng.random() < 0.4 else rng.randrange(nodes)
    origin = rng.choice([n for n in range(nodes) if n != dest])
    cls = 0 if kind == NodeKind.CONTROL else rng.randrange(classes)
    body = bytearray(enc.NODE_PAYLOAD_BYTES)
    body[0] = rng.randrange(4)  # an ACK's stream kind, any of the four
    frame = bytearray(node_frame(kind, origin, dest, cls, rng.getrandbits(enc.E2E_SEQ_BITS), bytes(body)))
    if rng.random() < 0.25:
        header = int.from_bytes(frame[:8], "little")
        what = rng.randrange(4)
        if what == 0:
            header ^= 1 << rng.randrange(enc.SLICE_BITS)
        else:
            field = ["origin", "dest", "cls"][what - 1]
            wrong = rng.randrange(enc.MAX_CLASSES if field == "cls" else nodes + 2)
            header = enc.NODE_HEADER.pack(**{**_fields(header), field: wrong})
        frame[:8] = header.to_bytes(8, "little")
    return bytes(frame)


def _fields(header):
    return {name: enc.NODE_HEADER.get(header, name) for name, _, _ in enc.NODE_HEADER.fields}


@pytest.mark.parametrize("nodes,me,classes", CONFIGS, ids=[f"n{n}_id{i}_c{c}" for n, i, c in CONFIGS])
def test_route_and_hold_match_golden(nodes, me, classes):
    rng = seeded_rng(f"receive {nodes} {me} {classes}")
    dut = FrameRoute(node_id=me, num_nodes=nodes, user_classes=classes)
    others = nodes - 1
    seen = set()

    def peer(n):
        return n - (n > me)

    async def bench(ctx):
        for _ in range(examples(FRAMES)):
            frame = _frame(rng, nodes, me, classes)
            control_inbox = rng.random() < 0.5
            full = rng.getrandbits(others * (classes + 1))
            pathless = rng.getrandbits(others * 2)
            wait = rng.random() < 0.5
            ctx.set(dut.header.as_value(), int.from_bytes(frame[:8], "little"))
            ctx.set(dut.ack.as_value(), int.from_bytes(frame[8:16], "little"))
            ctx.set(dut.control_inbox, control_inbox)
            ctx.set(dut.queue_full, full)
            ctx.set(dut.no_path, pathless)
            ctx.set(dut.messages_wait, wait)
            r = route(frame, me, nodes, classes)
            why = hold(
                r,
                control_inbox,
                lambda d, c: full >> (peer(d) * (classes + 1) + c) & 1,
                lambda d, c: pathless >> (peer(d) * 2 + (c == classes)) & 1,
                wait,
            )
            context = (frame[:16].hex(), control_inbox, bin(full), bin(pathless), wait)
            assert ctx.get(dut.way).name == r.way.name, context
            assert ctx.get(dut.hold).name == why.name, context
            if r.way != Way.MALFORMED:
                h = r.header
                assert ctx.get(dut.port_class) == r.port_class, context
                assert ctx.get(dut.peer) == peer(h.dest if r.way == Way.FORWARD else h.origin), context
            seen.add((r.way, why))

    simulate(dut, bench, clock=None)
    # Every way a frame goes, and each reason to wait, came up.
    assert {w for w, _ in seen} == set(Way)
    assert {why for _, why in seen} == set(Hold)


@pytest.mark.parametrize(
    "kwargs,name",
    [
        ({"node_id": 3, "num_nodes": 3, "user_classes": 1}, "node_id"),
        ({"node_id": -1, "num_nodes": 3, "user_classes": 1}, "node_id"),
        ({"node_id": 0, "num_nodes": 1, "user_classes": 1}, "num_nodes"),
        ({"node_id": 0, "num_nodes": enc.MAX_NODES + 1, "user_classes": 1}, "num_nodes"),
        ({"node_id": 0, "num_nodes": 3, "user_classes": 0}, "user_classes"),
        ({"node_id": 0, "num_nodes": 3, "user_classes": enc.MAX_CLASSES}, "user_classes"),
    ],
)
def test_bad_parameters_are_refused(kwargs, name):
    with pytest.raises(ValueError, match=name):
        FrameRoute(**kwargs)
