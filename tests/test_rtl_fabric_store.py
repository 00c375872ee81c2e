# amaranth: UnusedElaboratable=no
"""rtl/fabric/store.py against golden/fabric/store.py (PROTOCOL.md 10.7, 10.10, 10.11): random
streams of writes, takes, ACKs, settles, frames taken out, settles a port skipped (a resend) and
route changes, the RTL compared with the golden store every cycle."""

from functools import partial

import pytest

from golden import encoding as enc
from golden.encoding import NodeKind
from golden.fabric.e2e import SEQ_MOD
from golden.fabric.message import node_frame
from golden.fabric.store import Store as GoldenStore
from rtl.fabric.message import node_header
from rtl.fabric.store import Store
from sim.harness.amaranth_sim import simulate
from sim.tools.seeds import examples, seeded_rng

LINKS = [0, 1, 2, 5]
# The stream under test: node 2's control stream to node 1, or its class-1 user stream to node 3.
STREAMS = {5: (NodeKind.CONTROL, 2, 1, 0), 7: (NodeKind.USER, 2, 3, 1)}


def _hop(rng):
    return None if rng.random() < 0.2 else rng.choice(LINKS)


def _store(window, slices, bypass):
    kind, origin, dest, cls = STREAMS[slices]
    header = partial(node_header, kind=kind, origin=origin, dest=dest, cls=cls)
    return Store(window, header=header, payload_slices=slices, bypass=bypass)


@pytest.mark.parametrize(
    "window,slices,bypass", [(1, 7, False), (4, 7, True), (8, 5, False), (16, 7, True), (16, 5, False)]
)
def test_store_matches_golden(window, slices, bypass):
    """The store keeps slices 1 to ``slices`` of each frame and builds slice 0 from its sequence
    (a frame's header is the stream's, numbered as written); the frames written are such."""
    rng = seeded_rng("store", window, slices, bypass)
    dut = _store(window, slices, bypass)
    gold = GoldenStore(window)
    kind, origin, dest, cls = STREAMS[slices]
    seen = {"write": 0, "take": 0, "settled": 0, "lowered": 0, "released": 0, "again": 0, "resent": 0}
    seen["frame_bypass"] = 0

    async def bench(ctx):
        hop = rng.choice(LINKS)
        for cycle in range(examples(3000)):
            if rng.random() < 0.02:
                hop = _hop(rng)
            write = not gold.full and rng.random() < 0.5
            payload = rng.getrandbits(slices * enc.SLICE_BITS).to_bytes(enc.NODE_PAYLOAD_BYTES, "little")
            frame = node_frame(kind, origin, dest, cls, gold.next_seq, payload)
            # The golden order of one cycle (10.11): a user write before the port's choice, a
            # control write after it; then a settle, a frame taken out or an ACK, a settle the
            # port skipped, then the rewind.
            if bypass and write:
                gold.write(frame)
            # What the port sees this cycle.
            unsent = gold.unsent
            take = unsent and rng.random() < 0.6
            want_frame = gold.slots[gold.send % window] if unsent else None
            link = rng.choice(LINKS)
            if take:
                gold.take(link)
            if not bypass and write:
                gold.write(frame)
            settle = rng.random() < 0.05
            s_link, s_hop = rng.choice(LINKS), _hop(rng)
            settled = gold.settled(s_link, s_hop) if settle else False
            taken = rng.random() < 0.08
            # Mostly near the window; now and then anywhere (an old frame a port held long).
            taken_seq = (
                (gold.base + rng.randrange(-2, window + 2)) % SEQ_MOD if rng.random() < 0.9 else rng.randrange(SEQ_MOD)
            )
            before = gold.send
            if taken:
                gold.taken(taken_seq)
            ack = rng.random() < 0.15
            ack_seq = (
                (gold.base + rng.randrange(-3, window + 3)) % SEQ_MOD if rng.random() < 0.9 else rng.randrange(SEQ_MOD)
            )
            released = gold.release(ack_seq) if ack else 0
            resend = rng.random() < 0.03
            resent = gold.resend() if resend else 0
            again = resent + gold.rewind(hop)

            inputs = {
                "write": write,
                "write_payload": int.from_bytes(payload, "little"),
                "take": take,
                "take_link": link,
                "settle": settle,
                "settle_link": s_link,
                "settle_hop": s_hop or 0,
                "settle_hop_valid": s_hop is not None,
                "taken": taken,
                "taken_seq": taken_seq,
                "ack_valid": ack,
                "ack": ack_seq,
                "resend": resend,
                "hop": hop or 0,
                "hop_valid": hop is not None,
            }
            for port, value in inputs.items():
                ctx.set(getattr(dut, port), value)
            assert bool(ctx.get(dut.unsent)) == unsent, cycle
            if unsent:
                assert ctx.get(dut.frame) == int.from_bytes(want_frame, "little"), cycle
                seen["frame_bypass"] += take and write and want_frame == frame
            assert bool(ctx.get(dut.settled)) == settled, cycle
            assert ctx.get(dut.again) == again, cycle
            await ctx.tick()
            got = (
                ctx.get(dut.next_seq),
                ctx.get(dut.base),
                ctx.get(dut.send),
                ctx.get(dut.held),
                bool(ctx.get(dut.full)),
            )
            want = (gold.next_seq, gold.base, gold.send, gold.held, gold.full)
            assert got == want, (cycle, got, want)
            assert bool(ctx.get(dut.via_valid)) == (gold.via is not None), cycle
            if gold.via is not None:
                assert ctx.get(dut.via) == gold.via, cycle
            seen["write"] += write
            seen["take"] += take
            seen["settled"] += settled
            seen["lowered"] += taken and gold.send != before
            seen["released"] += released > 0
            seen["again"] += again > 0 and not resend
            seen["resent"] += resent > 0

    simulate(dut, bench)
    # Every operation did something in this run, or the comparison proved little.
    assert all(seen[k] for k in ("write", "take", "settled", "lowered", "released", "again", "resent")), seen
    if bypass:
        assert seen["frame_bypass"], "no frame was taken in the cycle it was written"


@pytest.mark.parametrize("window", [0, 3, 12, (1 << 16) + 1, "8"])
def test_a_bad_window_is_refused(window):
    for make in (lambda w: _store(w, 7, False), GoldenStore):
        with pytest.raises(ValueError, match="window"):
            make(window)


@pytest.mark.parametrize("slices", [0, 8, "7", None])
def test_a_bad_payload_width_is_refused(slices):
    with pytest.raises(ValueError, match="payload_slices"):
        Store(4, header=lambda seq: seq, payload_slices=slices)


def test_a_header_that_is_no_function_is_refused():
    with pytest.raises(ValueError, match="header must be a function"):
        Store(4, header=0)
