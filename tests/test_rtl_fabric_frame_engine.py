# amaranth: UnusedElaboratable=no
"""rtl/fabric/frame_engine.py against golden/fabric/frame_engine.py (PROTOCOL.md 10.7, 10.11),
every cycle, on what a node's frame engine sees in a fabric: each node of a golden triangle
records its engine's sources in every clock (and the control engine's ACK records) through a
link cut, the verdict, the settle and failover, and the heal; a golden engine and the RTL engine
of its own then handle them side by side. In the perturbed case the sources are changed now
and then, the same for both: a head has one bit of its header, its ACK or message slice
flipped (malformed frames and messages, frames early or refused), a head is held back and
handed in a few clocks later (frames held in a reorder buffer, then drained), or a copy of a
head is handed in again later (duplicates, acknowledged again)."""

import dataclasses

import pytest

from golden.encoding import NodeKind
from golden.fabric.destination import Destination as GoldenDestination
from golden.fabric.frame_engine import FrameEngine as GoldenFrameEngine
from golden.fabric.message import message_payload
from rtl.fabric.frame_choice import Source
from rtl.fabric.frame_engine import FrameEngine
from sim.harness.amaranth_sim import simulate
from sim.harness.coverage import PERTURB_ROUNDS, covered, replay_until_covered
from sim.harness.fabric import make_triangle
from sim.tools.seeds import seeded_rng

USER_CLASSES = 2
WINDOW, ACK_EVERY = 8, 2
CYCLES = 2000  # handled cycles replayed per node


def _record(seed):
    """Per node, its engine's sources and the control engine's ACK record (a control stream, or
    None), in every clock."""
    h = make_triangle(
        4, load=0.2, seed=seed, user_classes=USER_CLASSES, e2e_window=WINDOW, ack_every=ACK_EVERY, forward_depth=2
    )
    traces = {}
    for node in h.nodes:
        trace = traces[node.id] = []
        engine, destination = node.frame_engine, node.destination

        def step(s, engine=engine, trace=trace, step=engine.step):
            trace.append([s, None])
            return step(s)

        def record(key, expected, trace=trace, record=destination.record):
            trace[-1][1] = key
            return record(key, expected)

        engine.step, destination.record = step, record
    h.run_until(lambda h: h.all_ports_up(), 6000)
    h.run(200)
    start = h.cycle + 3
    # Link 0 cut and healed, then link 1.
    h.cut(0, start, start + 1500)
    h.cut(1, start + 2000, start + 3000)
    h.run(5000)
    return h, traces


def _busy(s, draining, ack):
    return draining or ack is not None or any(f is not None for f in s.control_heads + s.user_heads + s.offers)


def _perturb(rng, s, stash, draining):
    """``s`` changed as the module docstring says; ``stash``: the frames held back or copied,
    to hand in later, each in an empty inbox of its kind; ``draining``: the stream draining its
    reorder buffer, whose frame waits only if it is a message (the event queue is made full
    now and then while one drains)."""
    heads = {"control_heads": list(s.control_heads), "user_heads": list(s.user_heads)}
    full = {name: [i for i, f in enumerate(frames) if f is not None] for name, frames in heads.items()}
    # Control frames are few: one is changed more often than a user frame.
    if any(full.values()) and rng.random() < (0.5 if full["control_heads"] else 0.08):
        name = rng.choice([name for name, i in full.items() if i])
        i = rng.choice(full[name])
        what = rng.randrange(3)
        if what == 0:
            frame = bytearray(heads[name][i])
            bit = rng.randrange(64) if rng.random() < 0.3 else rng.randrange(64, 3 * 64)
            frame[bit // 8] ^= 1 << (bit % 8)
            heads[name][i] = bytes(frame)
        else:
            stash.append((name, heads[name][i]))
            if what == 1:
                heads[name][i] = None
    if rng.random() < (0.3 if draining is not None else 0.05):
        s = dataclasses.replace(s, messages_wait=not s.messages_wait)
    for k, (name, frame) in enumerate(stash):
        empty = [i for i, f in enumerate(heads[name]) if f is None]
        if empty and rng.random() < 0.2:
            heads[name][rng.choice(empty)] = frame
            del stash[k]
            break
    return dataclasses.replace(s, **{name: tuple(frames) for name, frames in heads.items()})


@pytest.mark.slow
def test_frame_engine_matches_golden_on_a_fabric_trace():
    """The trace is recorded once and replayed twice: as recorded, then perturbed."""
    rng = seeded_rng("frame engine")
    h, traces = _record(rng.randrange(1 << 16))
    wanted = {"forward", "release", "deliver", "event", "ack", "taken", "offer", "duplicate"}
    for perturb in (False, True):
        if perturb:
            wanted |= {"malformed", "held", "drain", "ack_due"}

        # Perturbed, the trace is replayed again with new perturbations until every rare case
        # has come up: each replay is compared clock by clock all the same.
        def replay_round(seen, perturb=perturb):
            for node in h.nodes:
                _replay(node, traces[node.id], rng if perturb else None, seen)

        seen = replay_until_covered(replay_round, wanted, PERTURB_ROUNDS if perturb else 1)
        assert wanted <= covered(seen), (perturb, seen)


def _replay(node, trace, rng, seen):
    t, me, C = node.topology, node.id, node.user_classes
    others = [n for n in range(t.num_nodes) if n != me]
    gold_dest = GoldenDestination(others, C, WINDOW, ACK_EVERY)
    gold = GoldenFrameEngine(me, t, C, gold_dest)
    dut = FrameEngine(node_id=me, topology=t, user_classes=C, e2e_window=WINDOW, ack_every=ACK_EVERY)

    def peer(n):
        return n - (n > me)

    def stream(key):
        origin, cls, kind = key
        return peer(origin) * (C + 1) + (C if kind == NodeKind.CONTROL else cls)

    def bits(pairs, index):
        return sum(1 << index(*p) for p in pairs)

    async def bench(ctx):
        handled, stash = 0, []
        for cycle, (s, ack) in enumerate(trace):
            if handled >= CYCLES:
                break
            if gold.taken is None and not _busy(s, gold_dest.draining is not None, ack):
                continue
            handled += 1
            if rng is not None:
                s = _perturb(rng, s, stash, gold_dest.draining)
            for name in ("control_heads", "user_heads", "offers"):
                frames = getattr(s, name)
                ctx.set(getattr(dut, name), [0 if f is None else int.from_bytes(f, "little") for f in frames])
                valid = {"control_heads": dut.control_valid, "user_heads": dut.user_valid, "offers": dut.offer_valid}
                ctx.set(valid[name], sum(1 << i for i, f in enumerate(frames) if f is not None))
            ctx.set(dut.full, bits(s.full, lambda d, c: peer(d) * (C + 1) + c))
            ctx.set(dut.pathless, bits(s.pathless, lambda d, control: peer(d) * 2 + control))
            ctx.set(dut.messages_wait, s.messages_wait)
            ctx.set(dut.control_ack, ack is not None)
            ctx.set(dut.control_ack_origin, 0 if ack is None else peer(ack[0]))
            if ack is not None:
                assert ctx.get(dut.control_ack_expected) == gold_dest.expected[ack], cycle
            out = gold.step(s)
            where = (me, cycle, out)
            # The frame taken, and the one handled.
            for port, value in ((dut.take, out.source), (dut.choice, out.handled)):
                source = {None: Source.NONE, "drain": Source.DRAIN}.get(value)
                if source is None:
                    what, i = value
                    source = {"control": Source.CONTROL, "user": Source.USER, "offer": Source.OFFER}[what]
                    assert ctx.get(port.index) == i, where
                assert ctx.get(port.source) == source, where
            frame = ctx.get(dut.frame).to_bytes(64, "little")
            assert ctx.get(dut.forward) == (out.forward is not None), where
            if out.forward is not None:
                f, d, c, front = out.forward
                assert (frame, ctx.get(dut.forward_peer), ctx.get(dut.forward_class)) == (f, peer(d), c), where
                assert ctx.get(dut.forward_front) == front, where
            for name, value in (("release", out.release), ("taken", out.taken)):
                assert ctx.get(getattr(dut, name)) == (value is not None), (name, where)
                if value is not None:
                    n, c, kind, seq = value
                    got = [ctx.get(getattr(dut, f"{name}_{f}")) for f in ("peer", "cls", "kind", "seq")]
                    assert got == [peer(n), c, kind, seq], (name, where)
            assert ctx.get(dut.deliver) == (out.deliver is not None), where
            if out.deliver is not None:
                origin, c, payload = out.deliver
                assert (ctx.get(dut.deliver_peer), ctx.get(dut.deliver_cls)) == (peer(origin), c), where
                assert frame[8:] == payload, where
            assert ctx.get(dut.event) == (out.event is not None), where
            if out.event is not None:
                msg, origin, last = out.event
                assert (ctx.get(dut.event_peer), ctx.get(dut.event_last)) == (peer(origin), last), where
                assert frame[8:] == message_payload(msg.slices()).ljust(56, b"\0"), where
            assert ctx.get(dut.ack) == (out.ack is not None), where
            if out.ack is not None:
                key, expected = out.ack
                assert (ctx.get(dut.ack_stream), ctx.get(dut.ack_expected)) == (stream(key), expected), where
            assert ctx.get(dut.ack_due) == (out.ack_due is not None), where
            if out.ack_due is not None:
                assert ctx.get(dut.ack_due_peer) == peer(out.ack_due[0]), where
            assert ctx.get(dut.held) == out.held, where
            assert ctx.get(dut.duplicate) == out.duplicates, where
            assert ctx.get(dut.malformed) == out.malformed, where
            assert ctx.get(dut.event_holds) == out.event_holds, where
            assert ctx.get(dut.forward_holds) == out.forward_holds, where
            if ack is not None:
                gold_dest.record(ack, gold_dest.expected[ack])
            for name in ("forward", "release", "deliver", "event", "ack", "ack_due", "taken"):
                seen[name] = seen.get(name, 0) + (getattr(out, name) is not None)
            seen["held"] = seen.get("held", 0) + out.held
            seen["malformed"] = seen.get("malformed", 0) + out.malformed
            seen["duplicate"] = seen.get("duplicate", 0) + out.duplicates
            seen["drain"] = seen.get("drain", 0) + (out.handled == "drain")
            seen["offer"] = seen.get("offer", 0) + (isinstance(out.handled, tuple) and out.handled[0] == "offer")
            await ctx.tick()

    simulate(dut, bench, name=f"frame_engine_node{me}")
