# amaranth: UnusedElaboratable=no
"""rtl/fabric/control_engine.py against golden/fabric/control_engine.py (PROTOCOL.md 10.3-10.6,
10.10, 10.11), every cycle, on what a node's control engine sees in a fabric.

Each node of a golden triangle records, in every clock, what its control engine read (its
ports, its control stores, how far its control streams have arrived) and what the node wrote
for it (the events queued, the flush and ACK flags set). Two fault histories: link 0 cut and
healed, then link 1 (REPORTs, LINK_DOWN verdicts, settles, LINK_UP); and link 0 cut, its
arbiter killed once it has held the link DOWN, and the link healed (NODE_DOWN, and the ends of
link 0 standing in for the dead arbiter, admitting the link themselves). A
golden engine and the RTL engine of its own then take them side by side.

In the perturbed case the inputs are changed now and then, the same for both: a port's view
(up, hears, half-state, settle under way, sessions) flipped, a control store made full or freed,
a flush or ACK flag set, and a random well-formed REPORT or VERDICT queued (any link, any end,
epochs around the one held, LINK_DOWNs carrying reports whose sessions agree or not), which
drives the arbiter's rules, stale verdicts, settles and their skips, and messages waiting for a
window slot."""

import dataclasses

import pytest

from golden.encoding import NodeKind, Verdict
from golden.fabric.control_engine import ControlEngine as GoldenControlEngine
from golden.fabric.message import Report, VerdictMsg, message_payload, node_frame, parse_message, wire_session
from golden.fabric.store import Store
from golden.params import E2E_CONTROL_WINDOW, EVENT_MESSAGES
from rtl.fabric.control_choice import Action
from rtl.fabric.control_engine import ControlEngine
from sim.harness.amaranth_sim import simulate
from sim.harness.coverage import PERTURB_ROUNDS, covered, replay_until_covered
from sim.harness.fabric import make_triangle
from sim.tools.seeds import seeded_rng

CYCLES = 1500  # busy cycles replayed per node
CONTROL = NodeKind.CONTROL


@dataclasses.dataclass
class Clock:
    """One clock of one node: the engine's sources, its control stores' (next_seq, base) and
    streams' expected, per other node; then the events and flags the node wrote."""

    sources: object
    stores: dict
    expected: dict
    events: list = dataclasses.field(default_factory=list)
    flush: set = dataclasses.field(default_factory=set)
    ack: set = dataclasses.field(default_factory=set)


def _record(seed, history):
    h = make_triangle(4, load=0.2, seed=seed, user_classes=1, e2e_window=8, ack_every=2, forward_depth=2)
    traces = {}
    for node in h.nodes:
        trace = traces[node.id] = []

        def engine(res, node=node, trace=trace, engine=node._control_engine):
            stores = {d: (o.store.next_seq, o.store.base) for d, o in node.control.origins.items()}
            expected = {d: node.destination.expected[d, 0, CONTROL] for d in node.dests}
            trace.append(Clock(node._control_sources(), stores, expected))
            return engine(res)

        def append(event, trace=trace, append=node.control.events.append):
            trace[-1].events.append(event)
            return append(event)

        def apply(out, res, node=node, trace=trace, apply=node._apply):
            if out.ack_due is not None:
                trace[-1].ack.add(out.ack_due[0])
            if out.release is not None and out.release[2] == CONTROL and out.release[0] in node._may_flush:
                trace[-1].flush.add(out.release[0])
            return apply(out, res)

        node._control_engine, node.control.events.append, node._apply = engine, append, apply
    h.run_until(lambda h: h.all_ports_up(), 6000)
    h.run(200)
    start = h.cycle + 3
    if history == "cuts":
        h.cut(0, start, start + 1500)
        h.cut(1, start + 2000, start + 3000)
        h.run(5000)
    else:
        # Link 0 held DOWN by its arbiter, which then dies: its ends admit it again themselves.
        h.cut(0, start, start + 2000)
        h.kill(2, start + 1000)
        h.run(5000)
    return h, traces


def _random_message(rng, engine):
    """A well-formed REPORT or VERDICT for ``engine``'s fabric, about a random link, or None."""
    t = engine.topology
    link = rng.randrange(len(t.links))
    ends = t.links[link]

    def report(writer, up=None):
        up = rng.random() < 0.5 if up is None else up
        session = rng.choice([0, 1, 1, 2, 3])
        return Report(link, writer, up, rng.random() < 0.7, rng.randrange(4), session, rng.getrandbits(20))

    if rng.random() < 0.4:
        msg = report(rng.choice(ends))
    else:
        code = rng.choice(
            [Verdict.LINK_UP, Verdict.LINK_DOWN, Verdict.LINK_DOWN, Verdict.NODE_DOWN, Verdict.UNREACHABLE]
        )
        writers = list(t.arbiters(link)) + (list(ends) if code == Verdict.LINK_UP else [])
        writer = rng.choice(writers)
        subject = (
            rng.choice([e for e in ends if e != writer]) if code in (Verdict.NODE_DOWN, Verdict.UNREACHABLE) else 0
        )
        count = max(1, engine.table[link].epoch[0] + rng.choice([-1, 0, 1, 1, 2]))
        reports = ()
        if code == Verdict.LINK_DOWN:
            a, b = report(ends[0], False), report(ends[1], False)
            if rng.random() < 0.5:
                b = dataclasses.replace(b, session=a.session)
            reports = (a, b)
        msg = VerdictMsg(link, writer, code, subject, count, reports)
    payload = message_payload(msg.slices()).ljust(56, b"\0")
    return parse_message(payload, t)


def _perturb(rng, clock, engine):
    """``clock`` changed as the module docstring says (a copy; the golden ``engine``'s state
    shapes the messages queued)."""
    ports = list(clock.sources.ports)
    if rng.random() < 0.1:
        i = rng.randrange(len(ports))
        field = rng.choice(["up", "hears", "half", "settle_ready", "entangled"])
        value = getattr(ports[i], field)
        new = {"half": rng.getrandbits(20), "entangled": rng.choice([0, 1, 2, 3])}.get(field, not value)
        ports[i] = dataclasses.replace(ports[i], **{field: new})
    stores = dict(clock.stores)
    if rng.random() < 0.05:
        d = rng.choice(list(stores))
        seq, _ = stores[d]
        stores[d] = (seq, (seq - rng.choice([0, 1, E2E_CONTROL_WINDOW, E2E_CONTROL_WINDOW])) % (1 << 32))
    events, flush, ack = list(clock.events), set(clock.flush), set(clock.ack)
    queued = len(engine.events) + len(events)
    if rng.random() < 0.08 and queued < EVENT_MESSAGES and not any(e[0] == "msg" for e in events):
        msg = _random_message(rng, engine)
        if msg is not None:
            origin = rng.choice([n for n in engine.topology.neighbours(engine.id)])
            events.append(("msg", msg, origin, rng.random() < 0.5))
    if rng.random() < 0.03:
        flush.add(rng.choice(engine.dests))
    if rng.random() < 0.03:
        ack.add(rng.choice(engine.dests))
    sources = dataclasses.replace(clock.sources, ports=tuple(ports))
    return Clock(sources, stores, clock.expected, events, flush, ack)


class _Arrived:
    """The destination as the control engine reads it: how far each control stream arrived."""

    def __init__(self):
        self.expected = {}


def _busy(engine, clock):
    return not engine.idle or clock.events or clock.flush or clock.ack


@pytest.mark.slow
@pytest.mark.parametrize("history", ["cuts", "arbiter_death"])
def test_control_engine_matches_golden_on_a_fabric_trace(history):
    """The trace is recorded once and replayed twice: as recorded, then perturbed."""
    rng = seeded_rng("control engine", history)
    h, traces = _record(rng.randrange(1 << 16), history)
    wanted = {"arbitrate", "event", "ack", "written", "verdict", "port_up", "suspect"}
    wanted |= {"stand_in", "own_link_up", "verdict_NODE_DOWN"} if history == "arbiter_death" else {"settle"}
    for perturb in (False, True):
        if perturb:
            wanted |= {"stale", "settle_skipped", "waits", "flush", "superseded"}

        # Perturbed, the trace is replayed again with new perturbations until every rare case
        # has come up: each replay is compared clock by clock all the same.
        def replay_round(seen, perturb=perturb):
            for node in h.nodes:
                _replay(node, traces[node.id], rng if perturb else None, seen)

        seen = replay_until_covered(replay_round, wanted, PERTURB_ROUNDS if perturb else 1)
        print("perturbed" if perturb else "as recorded", sorted(seen.items()))
        assert wanted <= covered(seen), (perturb, seen)


def _replay(node, trace, rng, seen):
    t, me = node.topology, node.id
    others = [n for n in range(t.num_nodes) if n != me]
    stores = {d: Store(E2E_CONTROL_WINDOW) for d in others}
    arrived = _Arrived()
    gold = GoldenControlEngine(me, t, stores, arrived)
    dut = ControlEngine(node_id=me, topology=t)
    links = t.links_of(me)

    def peer(n):
        return n - (n > me)

    def count(name, n=1):
        seen[name] = seen.get(name, 0) + n

    async def bench(ctx):
        busy = 0
        for cycle, clock in enumerate(trace):
            if busy >= CYCLES:
                break
            if rng is not None:
                clock = _perturb(rng, clock, gold)
            if not _busy(gold, clock):
                continue
            busy += 1
            where = (me, cycle)
            # The registers, as the clock starts.
            assert ctx.get(dut.table_up) == sum(e.up << i for i, e in enumerate(gold.table)), where
            assert ctx.get(dut.recorded_up) == sum(gold.records.up[link] << p for p, link in enumerate(links)), where
            assert ctx.get(dut.events_count) == len(gold.events), where
            waiting = sum(bool(gold.origins[d].waiting) << peer(d) for d in others)
            assert ctx.get(dut.waiting) == waiting, where

            for d, (seq, base) in clock.stores.items():
                stores[d].next_seq, stores[d].base, stores[d].send = seq, base, base
            arrived.expected = {(d, 0, CONTROL): e for d, e in clock.expected.items()}
            ctx.set(
                dut.ports,
                [
                    {
                        "up": p.up,
                        "hears": p.hears,
                        "half": p.half,
                        "settle_ready": p.settle_ready,
                        "session": wire_session(p.entangled),
                    }
                    for p in clock.sources.ports
                ],
            )
            ctx.set(dut.store_full, sum(stores[d].full << peer(d) for d in others))
            ctx.set(dut.next_seq, [stores[d].next_seq for d in others])
            out = gold.step(clock.sources)

            # The action taken, and the one acted on.
            for port, action in ((dut.take, out.taken), (dut.choice, out.action)):
                if action is None:
                    assert ctx.get(port.action) == Action.NONE, where
                elif action == "event":
                    assert ctx.get(port.action) == Action.EVENT, where
                else:
                    name, i = action
                    assert ctx.get(port.action) == Action[name.upper()], (where, action)
                    assert ctx.get(port.index) == i, (where, action)
            action = out.action
            if action is not None:
                count(action if action == "event" else action[0])
            where = (me, cycle, action, out)
            for d in others:
                i = peer(d)
                assert ctx.get(dut.store_write[i]) == (d in out.written), where
                assert ctx.get(dut.waits[i]) == (d in out.waits), where
                if d in out.written:
                    frame = node_frame(CONTROL, me, d, 0, stores[d].next_seq, out.payload)
                    assert out.written[d] == frame, where
                    assert ctx.get(dut.store_frame[i]).to_bytes(64, "little") == frame, where
            assert sum(ctx.get(dut.superseded[i]) for i in range(len(others))) == out.superseded, where
            if out.payload is not None:
                assert ctx.get(dut.payload.as_value()).to_bytes(56, "little") == out.payload.ljust(56, b"\0"), where
            assert ctx.get(dut.ack) == (out.ack is not None), where
            if out.ack is not None:
                assert ctx.get(dut.ack_peer) == peer(out.ack[0][0]), where
            assert ctx.get(dut.settle) == (out.settle is not None), where
            if out.settle is not None:
                link, half = out.settle
                assert (ctx.get(dut.settle_port), ctx.get(dut.settle_half)) == (links.index(link), half), where
            port_events = [e for e in out.events if e[0] != "verdict"]
            verdicts = [e[1] for e in out.events if e[0] == "verdict"]
            assert ctx.get(dut.announced) == bool(port_events), where
            if port_events:
                ((name, link),) = port_events
                got = (ctx.get(dut.announced_port), ctx.get(dut.announced_up))
                assert got == (links.index(link), name == "port_up"), where
                count(name)
            assert ctx.get(dut.verdict) == bool(verdicts), where
            if verdicts:
                ((link, code, subject),) = verdicts
                got = (ctx.get(dut.verdict_link), ctx.get(dut.verdict_code), ctx.get(dut.verdict_subject))
                assert got == (link, code, subject), where
                count("verdict")
                if out.adopted is not None and out.adopted.arbiter == me and me not in t.arbiters(link):
                    count("own_link_up")
                count(f"verdict_{Verdict(code).name}")
            assert ctx.get(dut.stale) == out.stale, where
            assert ctx.get(dut.settle_skipped) == out.settle_skipped, where
            absent = sum((link in gold.records.absent) << p for p, link in enumerate(links))
            assert ctx.get(dut.absent) == absent, where
            count("written", len(out.written))
            count("waits", len(out.waits))
            count("superseded", out.superseded)
            count("settle", out.settle is not None)
            count("stale", out.stale)
            count("settle_skipped", out.settle_skipped)
            count("ack", out.ack is not None)

            # What the node writes in the clock: the events, the flags.
            port_event = port_up = never = 0
            message = None
            for event in clock.events:
                if event[0] == "port":
                    p = links.index(event[1])
                    port_event |= 1 << p
                    port_up |= event[2] << p
                elif event[0] == "never_up":
                    never |= 1 << links.index(event[1])
                else:
                    message = event
                gold.events.append(event)
            if never:
                gold.records.absent.update(link for p, link in enumerate(links) if never >> p & 1)
            ctx.set(dut.port_event, port_event)
            ctx.set(dut.port_event_up, port_up)
            ctx.set(dut.never_up, never)
            ctx.set(dut.message_event, message is not None)
            if message is not None:
                _, msg, origin, last = message
                payload = message_payload(msg.slices()).ljust(56, b"\0")
                ctx.set(dut.message.as_value(), int.from_bytes(payload, "little"))
                ctx.set(dut.message_origin, peer(origin))
                ctx.set(dut.message_last, last)
            ctx.set(dut.flag_flush, sum(1 << peer(d) for d in clock.flush))
            ctx.set(dut.flag_ack, sum(1 << peer(d) for d in clock.ack))
            gold.to_flush.update(clock.flush)
            gold.to_ack.update((d, 0, CONTROL) for d in clock.ack)
            assert not ctx.get(dut.overflow), where
            await ctx.tick()
            for name in ("port_event", "port_event_up", "never_up", "message_event", "flag_flush", "flag_ack"):
                ctx.set(getattr(dut, name), 0)

    simulate(dut, bench, name=f"control_engine_node{me}")
