# amaranth: UnusedElaboratable=no
"""rtl/fabric/control_engine.py against golden/fabric/control_engine.py (PROTOCOL.md 10.11): random
views of a node's flags, event queue and ACKs due, the control engine's action compared every
cycle."""

import pytest

from golden.encoding import NodeKind
from golden.fabric.control_engine import FLAGS, ControlView, ack_streams, pick_action
from golden.topology import Topology
from rtl.fabric.control_engine import Action, ControlEngineChoice
from sim.harness.amaranth_sim import simulate
from sim.tools.seeds import examples, seeded_rng

_ACTIONS = {
    Action.ANNOUNCE: "announce",
    Action.STAND_IN: "stand_in",
    Action.ARBITRATE: "arbitrate",
    Action.FLUSH: "flush",
    Action.ACK: "ack",
}


def _bits(flags):
    return sum(1 << i for i, f in enumerate(flags) if f)


def _action(value):
    kind = Action(value.action)
    if kind == Action.NONE:
        return None
    if kind == Action.EVENT:
        return "event"
    return (_ACTIONS[kind], value.index)


@pytest.mark.parametrize(
    "topology,user_classes",
    [(Topology.triangle(), 1), (Topology.triangle(), 3), (Topology.full_mesh(4), 2), (Topology.full_mesh(5), 1)],
    ids=["triangle-1", "triangle-3", "mesh4-2", "mesh5-1"],
)
def test_control_engine_choice_matches_golden(topology, user_classes):
    rng = seeded_rng("control_engine", topology.num_nodes, len(topology.links), user_classes)
    ports = len(topology.links_of(0))
    dests = list(range(1, topology.num_nodes))
    streams = len(ack_streams(dests, user_classes, NodeKind.USER, NodeKind.CONTROL))
    dut = ControlEngineChoice(ports, len(topology.links), topology.num_nodes, streams)
    seen = set()

    def flags(n, p):
        return tuple(rng.random() < p for _ in range(n))

    async def bench(ctx):
        for cycle in range(examples(3000)):
            # Mostly quiet flags, so that every group, the events and the ACKs each get chosen.
            p = rng.choice([0.0, 0.02, 0.1, 0.5])
            view = ControlView(
                announce=flags(ports, p),
                stand_in=flags(ports, p),
                arbitrate=flags(len(topology.links), p),
                flush=flags(len(dests), p),
                events=rng.random() < 0.3,
                ack_due=flags(streams, rng.choice([0.1, 0.5])),
                ack_room=flags(streams, rng.choice([0.3, 0.9])),
            )
            want = pick_action(view).action
            for name in (*FLAGS, "ack_due", "ack_room"):
                ctx.set(getattr(dut, name), _bits(getattr(view, name)))
            ctx.set(dut.events, view.events)
            assert _action(ctx.get(dut.choice)) == want, (cycle, view)
            seen.add(want if not isinstance(want, tuple) else (want[0], want[1] > 0))

    simulate(dut, bench, clock=None)
    groups = {*FLAGS, "ack"}
    assert {None, "event"} | {(g, False) for g in groups} | {(g, True) for g in groups} <= seen, seen


def test_the_flags_go_before_the_events_and_the_events_before_the_acks():
    """10.11: the lowest flag of the first group set, else the event, else the lowest ACK due
    whose queue has room for two; the ACKs due without room are counted as held."""
    quiet = (False,) * 3
    acks = dict(ack_due=(True, True, True), ack_room=(False, True, True))
    view = ControlView(quiet, quiet, (False, True, True), (True, False), True, **acks)
    assert pick_action(view).action == ("arbitrate", 1)
    view = ControlView(quiet, quiet, quiet, (False, False), True, **acks)
    assert pick_action(view).action == "event"
    choice = pick_action(ControlView(quiet, quiet, quiet, (False, False), False, **acks))
    assert (choice.action, choice.held) == (("ack", 1), 1)


@pytest.mark.parametrize(
    "ports,links,nodes,streams",
    [(0, 3, 3, 4), (256, 256, 256, 510), (3, 2, 3, 4), (2, 257, 3, 4), (2, 3, 1, 4), (2, 3, 3, 3), (2, 3, 3, 9)],
)
def test_bad_parameters_are_refused(ports, links, nodes, streams):
    with pytest.raises(ValueError):
        ControlEngineChoice(ports, links, nodes, streams)
