"""The bounded forward queues of the golden fabric node (golden/fabric/node.py, PROTOCOL.md 10.11):
a frame whose forward queue is full waits where it is, an ACK made while its queue is full still
leaves (it waits in its ACK slot, not in the queue), nothing is lost or duplicated for it, and a
node that dropped such frames instead fails the same check; a queue whose destination has no
path drops its oldest frame rather than hold the frames behind it for ever, and the frames it
dropped go again when a path returns; bad depths are refused."""

import dataclasses

import pytest

import golden.fabric.control_engine as control_engine_module
import golden.fabric.node as node_module
import sim.harness.fabric
from golden.encoding import NodeKind
from golden.fabric.message import node_frame, parse_header
from golden.fabric.node import Node
from golden.params import FORWARD_DEPTH, FORWARD_DEPTH_MAX
from golden.topology import Topology
from sim.harness.base import ScoreboardError
from sim.harness.fabric import make_triangle

# Link 0-1 cut both ways for good: both ends' traffic goes round through node 2, at a load its
# forward queues of 2 cannot absorb at once, on a route that never changes again (so a frame
# lost on it is never sent again, 10.7).
CUT = 4000


class _DroppingNode(Node):
    """Seeded defect: a frame for a full forward queue is dropped instead of waiting."""

    def _sources(self):
        return dataclasses.replace(super()._sources(), full=frozenset())

    def _forward(self, frame, dest, cls, front):
        if len(self.fwd[dest, cls].queue) >= self.forward_depth:
            self.counters.forward_holds += 1
            return
        super()._forward(frame, dest, cls, front)


class _AckWatchingNode(Node):
    """Counts the ACKs made while the forward queue their stream's frames would take was full."""

    acks_beside_full_queue = 0

    def _ack(self, key, expected, by_control=False):
        cls = self.control_class if key[2] == NodeKind.CONTROL else key[1]
        _AckWatchingNode.acks_beside_full_queue += self.outbound.full(key[0], cls)
        super()._ack(key, expected, by_control)


def _cut(depth, seed=3, drain=60_000):
    h = make_triangle(8, load=0.15, ait_rate=0.05, seed=seed, forward_depth=depth)
    h.run_until(lambda h: h.all_ports_up(), 20_000)
    h.run(300)
    start = h.cycle + 3
    for d in ("ab", "ba"):
        getattr(h.channels[0], d).cuts = [(start, None)]
    h.run(CUT)
    h.load, h.ait_rate = 0.0, 0.0
    h.run_until(lambda h: h.delivered_all(), drain)
    return h


@pytest.mark.slow
def test_frames_wait_for_a_full_forward_queue_and_all_arrive_once_in_order(monkeypatch):
    """The scoreboard checks each delivery (once, in order, uncorrupted); ``delivered_all``
    that every frame the users handed in arrived."""
    monkeypatch.setattr(sim.harness.fabric, "Node", _AckWatchingNode)
    monkeypatch.setattr(_AckWatchingNode, "acks_beside_full_queue", 0)
    h = _cut(2)
    relay = h.nodes[2]
    assert relay.counters.forward_holds > 100, "the relay's queues never filled: the test tests nothing"
    assert max(n.counters.forward_max for n in h.nodes) == 2
    assert _AckWatchingNode.acks_beside_full_queue > 0, "no ACK was made beside a full queue"
    assert all(h.got[key] == sent for key, sent in h.sent.items())
    assert h.tables_agree() and not h.nodes[0].table[0].up
    # The waiting reached the relay's receive memories (its inboxes), which refused frames; the
    # peers sent them again by recovery, and no link to the relay trained again (4.6).
    assert relay.counters.memory_full > 0, "the relay's memories never filled"
    peers = [h.nodes[n].ports[h.topology.link_between(n, 2)] for n in (0, 1)]
    assert all(p.counters.recoveries > 0 for p in peers)
    assert all(p.counters.trainings == 0 for p in [*peers, *relay.ports.values()])


@pytest.mark.slow
def test_a_node_that_drops_for_a_full_queue_loses_frames(monkeypatch):
    monkeypatch.setattr(sim.harness.fabric, "Node", _DroppingNode)
    # The node that waits delivers everything within about 10,000 cycles of the load's end; the
    # one that drops has not in twice that, and never will: nothing sends a lost frame again
    # while its route stays the same (10.7).
    with pytest.raises(ScoreboardError, match="condition not reached"):
        _cut(2, drain=20_000)


def _relayed(depth, load=0.3):
    """Link 0-1 cut for good: the traffic between nodes 0 and 1 goes round through node 2."""
    h = make_triangle(8, load=load, ait_rate=0.0, seed=1, forward_depth=depth)
    h.run_until(lambda h: h.all_ports_up(), 20_000)
    h.run(300)
    for d in ("ab", "ba"):
        getattr(h.channels[0], d).cuts = [(h.cycle + 3, None)]
    h.run(1500)
    return h


@pytest.mark.slow
def test_frames_for_a_dead_node_never_hold_back_the_live_streams_behind_them():
    """Node 1 dies while node 2 relays for it: node 2 has no path to it, and the frames for it
    that keep arriving from node 0 would fill their queue and then hold node 0's frames for
    node 2 behind them in the same inbox, for good."""
    h = _relayed(8)
    h.kill(1, h.cycle + 1)
    h.run(600)
    assert h.nodes[2].counters.forward_dropped > 0
    h.load = 0.0
    h.run_until(lambda h: h.delivered_all(), 20_000)
    assert all(h.got[key] == sent for key, sent in h.sent.items() if 1 not in key)


@pytest.mark.slow
def test_frames_dropped_for_a_node_cut_off_go_again_when_it_is_back():
    """Node 1 is cut off from node 2 too for a while, then every link heals: node 2 dropped
    frames for it meanwhile, and their origin sends them again when its route changes."""
    h = _relayed(8, load=0.15)
    link = h.topology.link_between(1, 2)
    start = h.cycle + 3
    for d in ("ab", "ba"):
        getattr(h.channels[link], d).cuts = [(start, start + 2000)]
        getattr(h.channels[0], d).cuts = [(start - 1500, start + 2500)]
    h.run(5500)
    assert h.nodes[2].counters.forward_dropped > 0
    h.load = 0.0
    h.run_until(lambda h: h.delivered_all(), 60_000)
    assert all(h.got[key] == sent for key, sent in h.sent.items())


def test_the_default_depth_holds_nothing_back_in_a_light_cut():
    h = make_triangle(8, load=0.04, ait_rate=0.05, seed=1)
    h.run_until(lambda h: h.all_ports_up(), 20_000)
    for d in ("ab", "ba"):
        getattr(h.channels[0], d).cuts = [(h.cycle + 3, h.cycle + 1500)]
    h.run(2500)
    assert all(n.forward_depth == FORWARD_DEPTH for n in h.nodes)
    assert sum(n.counters.forward_holds for n in h.nodes) == 0
    assert 0 < max(n.counters.forward_max for n in h.nodes) < FORWARD_DEPTH
    # No port's receive memory filled: none refused a frame.
    assert all(n.counters.memory_full == 0 for n in h.nodes)


@pytest.mark.parametrize("depth", [0, 1, 3, 48, FORWARD_DEPTH_MAX * 2, True, 2.0, "32"])
def test_a_bad_forward_depth_is_refused(depth):
    with pytest.raises(ValueError, match="forward_depth"):
        Node(0, Topology.triangle(), forward_depth=depth)


def _replay(seed, latency, load, depth, cuts, event_messages=None, monkeypatch=None):
    """A random fault schedule found by a campaign, replayed: the harness as it built it, the
    cuts ``[(link, direction, start, end or None)]`` from the ports' first UP, then traffic
    stops once the last cut ends and everything must arrive."""
    if event_messages is not None:
        # Room for that many messages: the engine's event queue and the node's wait for room.
        for module in (node_module, control_engine_module):
            monkeypatch.setattr(module, "EVENT_MESSAGES", event_messages)
    h = make_triangle(latency, load=load, ait_rate=0.05, seed=seed, forward_depth=depth)
    h.run_until(lambda h: h.all_ports_up(), 20_000)
    h.run(200)
    for link, direction, start, end in cuts:
        getattr(h.channels[link], direction).cuts.append((start, end))
    h.run(max(max(s, e or 0) for _, _, s, e in cuts) + 1 - h.cycle)
    h.load, h.ait_rate = 0.0, 0.0
    h.run_until(lambda h: h.delivered_all(), 60_000)
    return h


def _both(link, start, end):
    return [(link, "ab", start, end), (link, "ba", start, end)]


@pytest.mark.slow
def test_frames_a_settle_takes_out_never_wait_for_the_port_that_settles():
    """Link 1-2 cut and flapping while link 0-1 flaps, queues of 2: node 1's port on link 1-2
    settled and offered a frame for node 2, whose control queue was full. While its take-out is
    busy the port takes no frame (10.6), and it was the only way out of that queue: the offer
    waited for good, and the inbox behind it. A settle's frames now never wait."""
    cuts = [
        *_both(0, 1120, 1160),
        *[(2, "ba", s, e) for s, e in ((435, 437), (700, 800), (1021, 1026), (1056, 1059), (1078, 1118))],
        *_both(1, 1218, 1318),
        *_both(1, 1479, 1519),
        *_both(1, 1563, 1575),
        *_both(1, 1666, 1766),
        *_both(0, 2166, 2266),
        *_both(0, 2533, 2536),
        *_both(0, 2835, 2837),
        *_both(0, 2880, 2882),
        (1, "ab", 1462, 1502),
    ]
    h = _replay(23, 4, 0.02, 2, cuts)
    assert sum(n.counters.failed_over for n in h.nodes) > 0


@pytest.mark.slow
def test_control_frames_never_wait_for_a_port_that_is_not_up(monkeypatch):
    """Link 0-1 cut for good after flaps on every link, queues of 2, room for one message among
    the events: node 0's table still held link 0-1 UP, its port was down, and a control frame
    for node 1 relayed by node 0 waited at the head of its control inbox for a queue that could
    not drain; the VERDICT that would take the link DOWN waited behind it. Control frames now
    have no path when no UP port gives one, and their full queue drops its oldest."""
    cuts = [
        *_both(0, 1004, 1154),
        (1, "ba", 1956, 2106),
        *_both(0, 2368, 2380),
        *_both(2, 2368, 2380),
        *_both(0, 2487, None),
        (1, "ab", 2487, 2987),
        (1, "ba", 2487, 2527),
        (2, "ba", 1094, 1594),
    ]
    h = _replay(105, 4, 0.2, 2, cuts, event_messages=1, monkeypatch=monkeypatch)
    h.run_until(lambda h: all(not n.table[0].up for n in h.nodes), 20_000)
    assert h.tables_agree()


def test_a_port_takes_the_ack_slot_and_the_queue_in_turn():
    """PROTOCOL.md 10.11: while the ACK slot and the forward queue both wait, a port takes them in
    turn. An ACK taken first always, for a stream acknowledged every frame, refills the slot
    before every take and holds the relayed frames back."""
    node = Node(0, Topology.triangle())
    for seq in range(2):
        node.fwd[1, 0].queue.push(node_frame(NodeKind.USER, 2, 1, 0, seq, b""))
    taken = []
    for expected in range(1, 6):
        node._ack((1, 0, NodeKind.USER), expected)  # the slot refilled before every take
        taken.append(parse_header(node.fwd[1, 0].take(), 3, 1).kind)
    assert taken == [NodeKind.ACK, NodeKind.USER, NodeKind.ACK, NodeKind.USER, NodeKind.ACK]
    assert node.counters.acks_replaced == 2  # made while a relayed frame took the turn
