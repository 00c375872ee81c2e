"""The bounded event queue of the golden fabric node (golden/fabric/node.py, PROTOCOL.md 10.11): it
keeps room for every port's changes, and a control message for the node waits in its inbox
while the queue holds EVENT_MESSAGES events; the verdicts still come and everything arrives."""

import random

import pytest

import golden.fabric.control_engine as control_engine_module
import golden.fabric.node as node_module
from golden.params import EVENT_MESSAGES, EVENTS_PER_PORT
from golden.topology import Topology
from sim.harness.fabric import make_triangle


def test_the_event_queue_has_room_for_each_port_and_the_messages():
    n = node_module.Node(0, Topology.full_mesh(4))
    assert n.events.depth == EVENTS_PER_PORT * 3 + EVENT_MESSAGES


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 2])
def test_messages_that_wait_for_room_among_the_events_still_make_every_verdict(monkeypatch, seed):
    """With room for one message at a time, control messages wait in their inboxes while
    another is queued. Random flaps on every link and direction (as the flap storm of
    tests/test_fabric.py), then a healthy channel: every link is UP again in every table, the
    tables agree, and every frame arrives once and in order."""
    # Room for one message: the engine's event queue and the node's wait for room.
    for module in (node_module, control_engine_module):
        monkeypatch.setattr(module, "EVENT_MESSAGES", 1)
    rng = random.Random(seed)
    h = make_triangle(rng.choice([4, 8, 16]), load=0.03, ait_rate=0.05, seed=100 + seed)
    h.run_until(lambda h: h.all_ports_up(), 20_000)
    h.run(300)
    h.flap_storm(rng, h.cycle + 10)
    h.run(4000)
    h.run_until(lambda h: all(e.up for n in h.nodes for e in n.table), 20_000)
    h.load, h.ait_rate = 0.0, 0.0
    h.run_until(lambda h: h.delivered_all(), 40_000)
    assert h.tables_agree()
    assert sum(n.counters.event_holds for n in h.nodes) > 0, "no message waited: the test tests nothing"
    assert max(n.counters.events_max for n in h.nodes) <= 1 + EVENTS_PER_PORT * 2
