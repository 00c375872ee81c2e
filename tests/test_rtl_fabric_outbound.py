# amaranth: UnusedElaboratable=no
"""rtl/fabric/outbound.py against golden/fabric/outbound.py (PROTOCOL.md 10.7, 10.10, 10.11),
every cycle, on what a node's outbound side is asked in a fabric.

Each node of a golden triangle records, in every clock and in order, what its outbound side was
asked: the user's frames, each port's take (with the port's view), the control engine's frames
and ACKs, the frame engine's forwards, take-outs, releases and ACKs, the settles, the settles
found reconciled, the settles done, and the table and ports the clock left for the routes. Two
fault histories: link 0 cut and healed, then link 1 (settles, failover through the third node,
frames taken out, rewinds); and node 2 killed (frames with no path, dropped from full forward
queues). A golden outbound side and the RTL one then take the same requests side by side, and
every frame each port takes, every queue's fullness, path and window, and the frames dropped,
ACKs replaced and frames sent again agree.

In the perturbed case the requests are changed now and then, the same for both: a port's view
flipped, the user's frames held back, a link or a port made DOWN or UP in the state the clock
leaves (routes that change, streams that rewind, queues that lose their path), and a settle or
a reconciled settle asked of a random port."""

import dataclasses

import pytest

from golden import encoding as enc
from golden.encoding import NodeKind
from golden.fabric.message import node_frame
from golden.fabric.outbound import Outbound as GoldenOutbound
from rtl.fabric.outbound import Outbound
from sim.harness.amaranth_sim import simulate
from sim.harness.fabric import make_triangle
from sim.tools.seeds import seeded_rng

USER_CLASSES = 2
WINDOW, DEPTH = 8, 2
CYCLES = 2500  # busy clocks replayed per node


def _record(seed, history):
    """Per node: its outbound side's parameters and, per clock, the requests in order."""
    h = make_triangle(
        4, load=0.3, seed=seed, user_classes=USER_CLASSES, e2e_window=WINDOW, ack_every=2, forward_depth=DEPTH
    )
    traces = {}
    for node in h.nodes:
        out = node.outbound
        trace = traces[node.id] = {"room": node._takeout_room, "clocks": [], "pending": []}

        def hook(name, method, trace=trace):
            def call(*args):
                (trace["clocks"][-1] if trace["clocks"] else trace["pending"]).append((name, args))
                return method(*args)

            return call

        def start(out=out, trace=trace, start=out.start):
            trace["clocks"].append(trace["pending"])
            trace["pending"] = []
            return start()

        def write(dest, cls, payload, out=out, trace=trace, write=out.write):
            trace["pending"].append(("write", (dest, cls, payload)))
            return write(dest, cls, payload)

        out.start, out.write = start, write
        for name in ("select", "forward", "ack", "taken", "release", "resend", "settled", "rewind"):
            setattr(out, name, hook(name, getattr(out, name)))
        out.settle = hook("settle", lambda link, hop, settle=out.settle: settle(link, hop))
        for d in node.dests:
            store = out.stores[d, 0, NodeKind.CONTROL]
            store.write = hook("control", lambda frame, d=d, w=store.write: w(frame))
    h.run_until(lambda h: h.all_ports_up(), 6000)
    h.run(200)
    start = h.cycle + 3
    if history == "cuts":
        h.cut(0, start, start + 1500)
        h.cut(1, start + 2000, start + 3000)
    else:
        # Link 1-2 cut: node 0 relays between them; then node 2 dies with frames queued for it.
        h.cut(h.topology.link_between(1, 2), start, start + 10_000)
        h.kill(2, start + 1200)
    h.run(4500)
    return h, traces


_ENGINE_ORDER = {"settle": 0, "forward": 1, "taken": 2, "release": 3, "ack": 4}


def _perturb(rng, ops, state, gold):
    """``ops`` changed as the module docstring says; ``state``: the perturbation's own (the
    links and ports it holds DOWN or UP, by the clock); ``gold``: the golden outbound side, whose
    streams the added requests are about."""
    out = []
    for name, args in ops:
        if name == "settled":
            # Each request goes where the node would make it: the control engine's settle before
            # the frame engine's work, and that in the order the frame engine applies a frame's
            # outcome (PROTOCOL.md 10.11; golden.fabric.node: forward, taken, release, ACK).
            for op in _engine_requests(rng, ops, state, gold):
                rank = _ENGINE_ORDER.get(op[0])
                later = (i for i, (n, _) in enumerate(out) if rank is not None and _ENGINE_ORDER.get(n, -1) > rank)
                at = next(later, len(out))
                out[at:at] = [op]
        if name == "select" and rng.random() < 0.05:
            link, port = args
            field = rng.choice(["control_open", "link_up", "ready"])
            if field == "ready":
                port = dataclasses.replace(port, ready=tuple(rng.random() < 0.5 for _ in port.ready))
            else:
                port = dataclasses.replace(port, **{field: not getattr(port, field)})
            args = (link, port)
        elif name == "write" and rng.random() < 0.1:
            continue
        elif name == "control" and gold.stores[_dest(args[0]), 0, NodeKind.CONTROL].full:
            continue  # the messages added filled the window: the engine would park this one
        elif name == "rewind":
            for key in [k for k in state if k[0] == "resend"]:
                state[key] -= 1
                if state[key] == 0 and any(n == "settle" and a[0] == key[1] for n, a in out):
                    state[key] = 1
                elif state[key] == 0:
                    del state[key]
                    out.append(("resend", (key[1],)))
            table_up, port_up = args
            if rng.random() < 0.01:
                state[rng.choice(["table", "port"]), rng.randrange(3)] = rng.random() < 0.5, rng.randrange(20, 400)
            table_up, port_up = list(table_up), dict(port_up)
            for (what, i), (value, _) in [(k, v) for k, v in state.items() if k[0] in ("table", "port")]:
                if what == "table":
                    table_up[i] = value
                elif i in port_up:
                    port_up[i] = value
            for key in [k for k in state if k[0] in ("table", "port")]:
                value, left = state[key]
                if left <= 1:
                    del state[key]
                else:
                    state[key] = (value, left - 1)
            args = (tuple(table_up), port_up)
        out.append((name, args))
    return out


def _engine_requests(rng, ops, state, gold):
    """Requests the engines could make in this clock, added now and then: a control message
    into a store (so that control streams have frames in flight), a settle of a port some stream
    sent by (found reconciled a few clocks later: a port reports its settle in a later clock
    than the one that asks it, 10.6), a frame taken out and an ACK, of a stream with frames
    sent. None of a kind the clock already has."""
    have = {name for name, _ in ops}
    written = {_dest(a[0]) for n, a in ops if n == "control"}
    added = []
    control = [d for d in gold.dests if d not in written and not gold.stores[d, 0, NodeKind.CONTROL].full]
    if control and rng.random() < 0.03:
        d = rng.choice(control)
        store = gold.stores[d, 0, NodeKind.CONTROL]
        payload = rng.getrandbits(128).to_bytes(16, "little")
        added.append(("control", (node_frame(NodeKind.CONTROL, gold.id, d, 0, store.next_seq, payload),)))
    sent = [(key, s) for key, s in gold.stores.items() if s.sent and s.via is not None]
    if sent and "settle" not in have and rng.random() < 0.02:
        _, store = rng.choice(sent)
        if ("resend", store.via) not in state:
            added.append(("settle", (store.via, None)))
            state["resend", store.via] = rng.randrange(1, 30)
    if sent and "taken" not in have and rng.random() < 0.03:
        (d, c, kind), store = rng.choice(sent)
        added.append(("taken", (d, c, kind, (store.base + rng.randrange(store.sent)) % (1 << 32))))
    if sent and "release" not in have and rng.random() < 0.03:
        (d, c, kind), store = rng.choice(sent)
        added.append(("release", (d, c, kind, (store.base + rng.randrange(1, store.sent + 1)) % (1 << 32))))
    return added


@pytest.mark.slow
@pytest.mark.parametrize("history", ["cuts", "relay_death"])
def test_outbound_matches_golden_on_a_fabric_trace(history):
    """The trace is recorded once and replayed twice: as recorded, then perturbed."""
    rng = seeded_rng("outbound", history)
    h, traces = _record(rng.randrange(1 << 16), history)
    wanted = {"own", "relayed", "forwarded", "ack", "release", "pathless"}
    wanted |= {"settle", "taken", "again"} if history == "cuts" else set()
    for perturb in (False, True):
        seen = {}
        for node in h.nodes:
            _replay(node, traces[node.id], rng if perturb else None, seen)
        print("perturbed" if perturb else "as recorded", sorted(seen.items()))
        if perturb:
            wanted |= {"again", "full", "settle", "resend", "taken"} | ({"dropped"} if history == "cuts" else set())
        assert wanted <= {k for k, v in seen.items() if v}, (perturb, seen)


def _replay(node, trace, rng, seen):
    t, me, C = node.topology, node.id, node.user_classes
    links = t.links_of(me)
    others = [n for n in range(t.num_nodes) if n != me]
    room = trace["room"]
    gold = GoldenOutbound(me, t, links, C, WINDOW, DEPTH, room)
    dut = Outbound(node_id=me, topology=t, user_classes=C, e2e_window=WINDOW, forward_depth=DEPTH, takeout_room=room)

    def peer(n):
        return n - (n > me)

    def count(name, n=1):
        seen[name] = seen.get(name, 0) + n

    def queue(dest, cls):
        return peer(dest) * (C + 1) + cls

    inputs = (
        "user_write",
        "control_write",
        "forward",
        "taken",
        "release",
        "ack",
        "control_ack",
        "settle",
        "resend",
        "settle_done",
    )

    async def bench(ctx):
        busy, state = 0, {"links": links}
        for cycle, ops in enumerate(trace["clocks"]):
            if busy >= CYCLES:
                break
            if rng is not None:
                ops = _perturb(rng, ops, state, gold)
            busy += 1
            where = (me, cycle)
            # As the clock starts: every queue's fullness, every path, every window.
            gold.start()
            full = sum(gold.full(d, c) << queue(d, c) for d in others for c in range(C + 1))
            assert ctx.get(dut.full) == full, where
            pathless = sum((gold.hops[d, ctl] is None) << (2 * peer(d) + ctl) for d in others for ctl in (0, 1))
            assert ctx.get(dut.pathless) == pathless, where
            count("full", full != 0)
            count("pathless", pathless != 0)
            for i in range(len(inputs)):
                ctx.set(getattr(dut, inputs[i]), 0)
            writes = sum(1 << (peer(a[0]) * C + a[1]) for n, a in ops if n == "write")
            payloads = [0] * (len(others) * C)
            control_frames = [0] * len(others)
            for name, args in ops:
                if name == "write":
                    dest, cls, payload = args
                    k = peer(dest) * C + cls
                    assert ctx.get(dut.user_ready[k]) == gold.ready(dest, cls), where
                    payloads[k] = int.from_bytes(payload.ljust(56, b"\0"), "little")
                    gold.write(dest, cls, payload)
            ctx.set(dut.user_write, writes)
            ctx.set(dut.user_payload, payloads)
            dropped = replaced = again = 0
            selects = [a for n, a in ops if n == "select"]
            rewind = next((a for n, a in ops if n == "rewind"), None)
            if rewind is None:
                rewind = (tuple(e.up for e in node.table), dict(node.port_up))
            table_up, port_up = rewind
            ctx.set(dut.table_up, sum(bool(u) << i for i, u in enumerate(table_up)))
            ctx.set(dut.port_up, sum(bool(port_up[link]) << p for p, link in enumerate(links)))
            ctx.set(dut.control_open, sum(port.control_open << links.index(link) for link, port in selects))
            ctx.set(dut.link_up, sum(port.link_up << links.index(link) for link, port in selects))
            ready = [0] * len(links)
            for link, port in selects:
                ready[links.index(link)] = sum(r << c for c, r in enumerate(port.ready))
            ctx.set(dut.ready, ready)
            for name, args in ops:
                if name == "select":
                    link, port = args
                    p = links.index(link)
                    frames = gold.select(link, port)
                    for cls in range(C + 1):
                        got = ctx.get(dut.take_valid[p][cls])
                        assert got == (cls in frames), (where, link, cls, frames)
                        if cls in frames:
                            frame = ctx.get(dut.take_frame[p][cls]).to_bytes(64, "little")
                            assert frame == frames[cls], (where, link, cls)
                            origin = enc.NODE_HEADER.get(int.from_bytes(frame[:8], "little"), "origin")
                            count("own" if origin == me else "relayed")
                elif name == "control":
                    (frame,) = args
                    d = _dest(frame)
                    store = gold.stores[d, 0, NodeKind.CONTROL]
                    # The control engine numbers a message as it writes it: after messages the
                    # perturbation added, a recorded frame takes the store's next number.
                    frame = _numbered(frame, store.next_seq)
                    store.write(frame)
                    control_frames[peer(d)] = int.from_bytes(frame, "little")
                    ctx.set(dut.control_write, ctx.get(dut.control_write) | 1 << peer(d))
                elif name == "forward":
                    frame, dest, cls, front = args
                    if rng is not None and gold.full(dest, cls) and not front and not gold.no_path(dest, cls):
                        continue  # the frame engine would hold it in its inbox
                    dropped += gold.forward(frame, dest, cls, front)
                    ctx.set(dut.forward, 1)
                    ctx.set(dut.forward_queue, queue(dest, cls))
                    ctx.set(dut.forward_front, front)
                    ctx.set(dut.forward_frame, int.from_bytes(frame, "little"))
                    count("forwarded")
                elif name == "ack":
                    key, expected = args
                    replaced += gold.ack(key, expected)
                    if key[2] == NodeKind.CONTROL:
                        ctx.set(dut.control_ack, 1)
                        ctx.set(dut.control_ack_peer, peer(key[0]))
                        ctx.set(dut.control_ack_expected, expected)
                    else:
                        ctx.set(dut.ack, 1)
                        ctx.set(dut.ack_queue, queue(key[0], key[1]))
                        ctx.set(dut.ack_expected, expected)
                    count("ack")
                elif name in ("taken", "release"):
                    dest, cls, kind, seq = args
                    getattr(gold, name)(dest, cls, kind, seq)
                    ctx.set(getattr(dut, name), 1)
                    ctx.set(getattr(dut, f"{name}_peer"), peer(dest))
                    ctx.set(getattr(dut, f"{name}_cls"), cls)
                    ctx.set(getattr(dut, f"{name}_kind"), kind)
                    ctx.set(getattr(dut, f"{name}_seq"), seq)
                    count(name)
                elif name == "settle":
                    link, _ = args
                    gold.settle(link, lambda d, c: gold.next_hop(d, c, table_up, port_up))
                    ctx.set(dut.settle, 1)
                    ctx.set(dut.settle_port, links.index(link))
                    count("settle")
                elif name == "resend":
                    (link,) = args
                    again += gold.resend(link)
                    ctx.set(dut.resend, ctx.get(dut.resend) | 1 << links.index(link))
                    count("resend")
                elif name == "settled":
                    (done,) = args
                    gold.settled(done)
                    ctx.set(dut.settle_done, sum(1 << links.index(link) for link in done))
            ctx.set(dut.control_frame, control_frames)
            again += gold.rewind(table_up, port_up)
            assert ctx.get(dut.dropped) == dropped, where
            assert ctx.get(dut.replaced) == replaced, where
            assert ctx.get(dut.again) == again, where
            count("dropped", dropped)
            count("again", again)
            assert not ctx.get(dut.overflow), where
            await ctx.tick()

    simulate(dut, bench, name=f"outbound_node{me}")


def _numbered(frame: bytes, seq: int) -> bytes:
    header = int.from_bytes(frame[:8], "little")
    fields = {name: enc.NODE_HEADER.get(header, name) for name, _, _ in enc.NODE_HEADER.fields}
    return enc.NODE_HEADER.pack(**{**fields, "seq": seq}).to_bytes(8, "little") + frame[8:]


def _dest(frame: bytes) -> int:
    return enc.NODE_HEADER.get(int.from_bytes(frame[:8], "little"), "dest")
