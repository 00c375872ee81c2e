# amaranth: UnusedElaboratable=no
"""rtl/fabric/control_origin.py against golden/fabric/control_origin.py (PROTOCOL.md 10.10),
every cycle: a node's control stream to one destination under random REPORTs about its ports and
VERDICTs about every link, flushes, and ACKs that free slots of the window now and then, so the
window fills, messages wait and replace one another, and flush oldest first."""

import pytest

from golden import encoding as enc
from golden.encoding import MsgType, Verdict
from golden.fabric.control_origin import ControlOrigin as GoldenControlOrigin
from golden.fabric.message import Report, VerdictMsg, message_payload
from golden.fabric.store import Store
from golden.fabric.waiting import WaitingMessages
from golden.params import E2E_CONTROL_WINDOW
from golden.topology import Topology
from rtl.fabric.control_origin import ControlOrigin
from sim.harness.amaranth_sim import simulate
from sim.tools.seeds import examples, seeded_rng

CASES = {
    "triangle_0_to_2": (Topology.triangle(), 0, 2),
    "mesh4_3_to_1": (Topology.full_mesh(4), 3, 1),
    "ring5_chords_2_to_4": (Topology(5, [(0, 1), (1, 2), (2, 3), (3, 4), (0, 4), (0, 2), (1, 3)]), 2, 4),
}
CYCLES = 3000


def _message(rng, t, me):
    """A REPORT about one of my ports or a VERDICT about any link, as payload bytes."""
    if rng.random() < 0.5:
        link = rng.choice(t.links_of(me))
        r = Report(link, me, rng.random() < 0.5, rng.random() < 0.5, rng.getrandbits(16), rng.getrandbits(16), 0)
        return message_payload(r.slices()).ljust(enc.NODE_PAYLOAD_BYTES, b"\0")
    link = rng.randrange(len(t.links))
    v = VerdictMsg(link, me, Verdict.LINK_UP, 0, rng.randrange(1, 1 << enc.EPOCH_BITS))
    return message_payload(v.slices()).ljust(enc.NODE_PAYLOAD_BYTES, b"\0")


@pytest.mark.parametrize("case", list(CASES))
def test_control_origin_matches_golden_every_cycle(case):
    t, me, dest = CASES[case]
    rng = seeded_rng("control origin", case)
    store = Store(E2E_CONTROL_WINDOW)
    waiting = WaitingMessages(len(t.links_of(me)) + len(t.links))
    gold = GoldenControlOrigin(me, dest, store, waiting)
    dut = ControlOrigin(node_id=me, dest=dest, topology=t)
    seen = {"written": 0, "parked": 0, "superseded": 0, "flushed": 0, "flush_idle": 0}

    async def bench(ctx):
        for cycle in range(examples(CYCLES)):
            action = rng.choice(["write", "write", "flush", "none"])
            payload = _message(rng, t, me)
            ctx.set(dut.write, action == "write")
            ctx.set(dut.flush, action == "flush")
            ctx.set(dut.payload.as_value(), int.from_bytes(payload, "little"))
            ctx.set(dut.store_full, store.full)
            ctx.set(dut.next_seq, store.next_seq)
            assert ctx.get(dut.waiting) == len(waiting), cycle
            written = None
            if action == "write":
                written = gold.write(payload)
            elif action == "flush":
                written = gold.flush()
                seen["flush_idle"] += written is None
            frame = None if written is None else written.frame
            if frame is not None:
                store.write(frame)  # as the node does, in the next clock
            assert ctx.get(dut.store_write) == (frame is not None), (cycle, action)
            if frame is not None:
                assert ctx.get(dut.store_frame) == int.from_bytes(frame, "little"), (cycle, action)
                seen["flushed" if action == "flush" else "written"] += 1
            elif written is not None:
                seen["parked"] += 1
            assert ctx.get(dut.superseded) == (written is not None and written.superseded), (cycle, action)
            seen["superseded"] += written is not None and written.superseded
            assert ctx.get(dut.flag) == (written is not None and written.flag), (cycle, action)
            # ACKs now and then free the oldest slots.
            if store.held and rng.random() < 0.15:
                store.release((store.base + rng.randint(1, store.held)) % (1 << enc.E2E_SEQ_BITS))
            await ctx.tick()

    simulate(dut, bench)
    assert all(seen.values()), seen


def test_every_message_type_has_its_waiting_slots():
    # The RTL numbers the waiting slots by REPORT (per port) and else VERDICT (per link).
    assert {MsgType.REPORT, MsgType.VERDICT} == set(MsgType)


@pytest.mark.parametrize(
    "kwargs,name",
    [
        ({"node_id": 0, "dest": 0}, "dest"),
        ({"node_id": 3, "dest": 0}, "node_id"),
        ({"node_id": 0, "dest": 3}, "dest"),
    ],
)
def test_bad_parameters_are_refused(kwargs, name):
    with pytest.raises(ValueError, match=name):
        ControlOrigin(topology=Topology.triangle(), **kwargs)
