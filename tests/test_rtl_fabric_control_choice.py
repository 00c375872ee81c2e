# amaranth: UnusedElaboratable=no
"""rtl/fabric/control_choice.py against golden/fabric/control_choice.py (PROTOCOL.md 10.11): random
views of a node's flags, event queue and control streams due an ACK, the control engine's action
compared every cycle."""

import pytest

from golden.fabric.control_choice import FLAGS, ControlView, pick_action
from golden.topology import Topology
from rtl.fabric.control_choice import Action, ControlEngineChoice
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
    dut = ControlEngineChoice(ports, len(topology.links), topology.num_nodes)
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
                ack_due=flags(len(dests), rng.choice([0.1, 0.5])),
            )
            want = pick_action(view)
            for name in (*FLAGS, "ack_due"):
                ctx.set(getattr(dut, name), _bits(getattr(view, name)))
            ctx.set(dut.events, view.events)
            assert _action(ctx.get(dut.choice)) == want, (cycle, view)
            seen.add(want if not isinstance(want, tuple) else (want[0], want[1] > 0))

    simulate(dut, bench, clock=None)
    groups = {*FLAGS, "ack"}
    assert {None, "event"} | {(g, False) for g in groups} | {(g, True) for g in groups} <= seen, seen


def test_the_flags_go_before_the_events_and_the_events_before_the_acks():
    """10.11: the lowest flag of the first group set, else the event, else the lowest control
    stream due an ACK."""
    quiet = (False,) * 3
    acks = (False, True)
    view = ControlView(quiet, quiet, (False, True, True), (True, False), True, acks)
    assert pick_action(view) == ("arbitrate", 1)
    view = ControlView(quiet, quiet, quiet, (False, False), True, acks)
    assert pick_action(view) == "event"
    assert pick_action(ControlView(quiet, quiet, quiet, (False, False), False, acks)) == ("ack", 1)
    assert pick_action(ControlView(quiet, quiet, quiet, (False, False), False, (False, False))) is None


@pytest.mark.parametrize(
    "ports,links,nodes",
    [(0, 3, 3), (256, 256, 256), (3, 2, 3), (2, 257, 3), (2, 3, 1), (2, 3, 257), (2.0, 3, 3)],
)
def test_bad_parameters_are_refused(ports, links, nodes):
    with pytest.raises(ValueError):
        ControlEngineChoice(ports, links, nodes)
