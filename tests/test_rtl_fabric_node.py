# amaranth: UnusedElaboratable=no
"""rtl/fabric/node.py against golden/fabric/node.py (PROTOCOL.md 10), every cycle, inside a golden
triangle, in the Amaranth simulator (cocotb_tests/test_fabric.py runs a whole triangle of RTL
nodes on Verilator through every scenario and random schedules).

The RTL node shadows one golden node of a :class:`sim.harness.fabric.FabricHarness`: in every
clock it gets the words the golden node's ports receive, the user's offers the golden node got
(each stream's next frame) and the tokens handed in, and must do what the golden node did: take
the same offers, deliver the same user frames, adopt the same verdicts, hold the same table and
ports UP, drive the same word on every link, and deliver and return the same tokens. The
harness's scoreboard checks the golden fabric end to end meanwhile.
"""

import pytest

from golden.encoding import Verdict
from golden.topology import Topology
from rtl.fabric.node import Node
from sim.harness.amaranth_sim import simulate
from sim.harness.fabric import make_triangle
from sim.tools.seeds import seeded_rng
from sim.triangle import SCENARIOS, apply_faults

PARAMS = dict(user_classes=1, e2e_window=8, ack_every=2, forward_depth=2)


def _word(w):
    return 0 if w is None else w


def _run(h, seed, node, cycles, schedule):
    """Step the harness ``cycles`` times, with the RTL twin of golden ``node`` in lockstep;
    ``schedule(h)`` is called before each step (faults, tokens)."""
    t, me = node.topology, node.id
    links = t.links_of(me)
    others = [n for n in range(t.num_nodes) if n != me]
    C = node.user_classes
    dut = Node(node_id=me, topology=t, seed=seed, **PARAMS)
    seen = {"frames": 0, "verdicts": 0, "offers_refused": 0, "tokens": 0, "returned": 0}
    owed = {link: [] for link in links}  # tokens the golden node delivered, not yet seen

    async def bench(ctx):
        ctx.set(dut.user_out.ready, 1)
        for p in range(len(links)):
            ctx.set(dut.ait_out[p].ready, 1)
        for _ in range(cycles):
            schedule(h)
            clock = h.begin()
            rx, ait, offers = clock.rx[me], clock.ait[me], clock.offers[me]
            res = h.finish(clock)[me]
            where = f"node {me} cycle {node.cycle - 1}"
            for p, link in enumerate(links):
                word = rx[link]
                ctx.set(dut.rx[p].valid, word is not None)
                ctx.set(dut.rx[p].word.as_value(), _word(word))
                ctx.set(dut.ait_in[p].valid, link in ait)
                ctx.set(dut.ait_in[p].payload, ait.get(link, 0))
            for k in range(len(others) * C):
                ctx.set(dut.user_in[k].valid, 0)
            for dest, cls, data, _ in offers:
                k = others.index(dest) * C + cls
                ctx.set(dut.user_in[k].valid, 1)
                ctx.set(dut.user_in[k].payload, int.from_bytes(bytes(data).ljust(56, b"\0"), "little"))
            for dest, cls, _, took in offers:
                k = others.index(dest) * C + cls
                assert ctx.get(dut.user_in[k].ready) == took, (where, "offer", dest, cls)
                seen["offers_refused"] += not took
            # What the golden step delivered and adopted, in this clock.
            assert ctx.get(dut.user_out.valid) == bool(res.frames), (where, res.frames)
            if res.frames:
                ((origin, cls, data),) = res.frames
                got = ctx.get(dut.user_out.payload.payload).to_bytes(56, "little")
                assert (ctx.get(dut.user_out.payload.origin), ctx.get(dut.user_out.payload.cls)) == (origin, cls), where
                assert got == bytes(data).ljust(56, b"\0"), where
                seen["frames"] += 1
            verdicts = [d for name, d in res.events if name == "verdict"]
            assert ctx.get(dut.verdict) == bool(verdicts), (where, res.events)
            if verdicts:
                ((link, code, subject),) = verdicts
                got = (ctx.get(dut.verdict_link), ctx.get(dut.verdict_code), ctx.get(dut.verdict_subject))
                assert got == (link, Verdict(code), subject), where
                seen["verdicts"] += 1
            for p, link in enumerate(links):
                assert ctx.get(dut.ait_in[p].ready) or link not in ait, (where, "token refused")
                if ctx.get(dut.ait_out[p].valid):
                    value = ctx.get(dut.ait_out[p].payload)
                    assert owed[link] and owed[link].pop(0) == value, (where, "token delivered", value)
                    seen["tokens"] += 1
                back = [v for l, v in res.ait_returned if l == link]
                got = [ctx.get(dut.returned_value[p])] if ctx.get(dut.returned[p]) else []
                assert got == back, (where, "token returned", got, back)
                seen["returned"] += len(back)
            for link, value in res.ait:
                owed[link].append(value)
            await ctx.tick()
            # The registers as the clock left them.
            for p, link in enumerate(links):
                assert ctx.get(dut.tx[p].word.as_value()) == node.ports[link].tx_word, (where, "tx", link)
            assert ctx.get(dut.table_up) == sum(e.up << i for i, e in enumerate(node.table)), (where, "table")
            ports_up = sum(node.ports[link].up << p for p, link in enumerate(links))
            assert ctx.get(dut.port_up) == ports_up, (where, "port up")
            assert not ctx.get(dut.fault), where

    simulate(dut, bench)
    return seen


@pytest.mark.slow
@pytest.mark.parametrize(
    "scenario, shadowed",
    [("cut_both", 0), ("cut_both", 2), ("cut_ab", 1)],
)
def test_node_matches_golden_in_a_scenario(scenario, shadowed):
    """A fault of ``python -m sim.triangle`` after every port is UP, with node ``shadowed`` in
    RTL: REPORTs, verdicts, settles and failover through the third node, with traffic and
    tokens."""
    rng = seeded_rng("rtl node", scenario, shadowed)
    seed = rng.randrange(1 << 16)
    h = make_triangle(4, load=0.1, seed=seed, **PARAMS)
    faults = SCENARIOS[scenario].schedule(seed)
    state = {"fault": None}

    def schedule(h):
        if state["fault"] is None and h.all_ports_up():
            state["fault"] = h.cycle + 3
            apply_faults(h, faults, state["fault"])
        if h.cycle % 97 == 0:
            # The token plane's ways (offer, delivery, return after a settle) all run.
            h.order_tokens()

    seen = _run(h, seed, h.nodes[shadowed], 3500, schedule)
    print(scenario, shadowed, seen)
    assert state["fault"] is not None
    assert seen["frames"] > 0 and seen["verdicts"] > 0


def test_node_matches_golden_bring_up():
    rng = seeded_rng("rtl node", "bring up")
    seed = rng.randrange(1 << 16)
    print("seed", seed)
    h = make_triangle(4, load=0.2, seed=seed, **PARAMS)
    seen = _run(h, seed, h.nodes[0], 600, lambda h: None)
    print(seen)
    assert seen["frames"] > 0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"node_id": 3}, "node_id"),
        ({"seed": -1}, "seed"),
        ({"user_classes": 0}, "user_classes"),
        ({"e2e_window": 6}, "e2e_window"),
        ({"forward_depth": 3}, "forward_depth"),
        ({"ack_every": 16, "e2e_window": 8}, "ack_every must be at most e2e_window"),
        ({"num_classes": 2}, "num_classes is set by the node"),
        ({"window": 0}, "window"),
    ],
)
def test_a_bad_node_parameter_is_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Node(**{"node_id": 0, "topology": Topology.triangle(), **kwargs})
