"""The end-to-end window of the golden fabric node (golden/fabric/node.py, PROTOCOL.md 10.10): a
stream whose window is full is held back at the user port while the others flow, the store
towards a dead or cut-off node stops at the window, every frame held back arrives once and in
order when the node is back, control messages wait in a bounded set, and bad values are refused."""

import pytest

from golden.encoding import NodeKind
from golden.fabric.control_engine import Done
from golden.fabric.message import Report, message_payload, node_frame, parse_header
from golden.fabric.node import Node, NodeResult
from golden.params import E2E_CONTROL_WINDOW, E2E_WINDOW, E2E_WINDOW_MAX
from golden.topology import Topology
from sim.harness.fabric import make_triangle

USER, CONTROL = NodeKind.USER, NodeKind.CONTROL


def _up(h):
    h.run_until(lambda h: h.all_ports_up(), 20_000)
    h.run(300)


def _drain(h, limit=40_000):
    h.load, h.ait_rate = 0.0, 0.0
    h.run_until(lambda h: h.delivered_all(), limit)


def _cut_off(h, node, start, end):
    """Both directions of every link of ``node`` cut from ``start`` to ``end``."""
    for link in h.topology.links_of(node):
        for d in ("ab", "ba"):
            getattr(h.channels[link], d).cuts = [(start, end)]


def _held(node, dest, kind=USER):
    return node.stores[dest, 0, kind].held


def _partitioned(window, isolation=3000):
    """Node 1 cut off from both others (a partition: it looks dead from outside, 10.9) for
    ``isolation`` cycles, traffic on every pair; returned just before the heal."""
    h = make_triangle(8, load=0.04, ait_rate=0.05, seed=11, e2e_window=window)
    _up(h)
    start = h.cycle + 5
    _cut_off(h, 1, start, start + isolation)
    h.run(isolation)
    return h


def test_a_full_window_holds_its_stream_back_while_the_others_flow():
    window = 16
    h = _partitioned(window)
    node0 = h.nodes[0]
    # The stream to the cut-off node stopped at its window; its user holds the rest.
    assert _held(node0, 1) == window and node0.counters.stream_retained_max == window
    assert not node0.ready(1, 0) and node0.counters.window_full_cycles > 1000
    assert h.made[0, 1, 0] - h.sent[0, 1, 0] > 50
    # The stream to node 2 flows: the node took every frame its user made, and all but the
    # last round trip's have arrived.
    assert node0.ready(2, 0) and h.sent[0, 2, 0] == h.made[0, 2, 0]
    assert h.made[0, 2, 0] - h.got[0, 2, 0] <= 8
    assert h.got[0, 2, 0] > 100


def test_every_frame_held_back_arrives_once_and_in_order_after_the_heal():
    """The scoreboard checks each delivery (once, in order, uncorrupted); ``delivered_all`` that
    every frame the users made, the held-back ones included, has arrived."""
    window = 16
    h = _partitioned(window)
    held_back = {n.id: n.counters.window_full_cycles for n in h.nodes}
    assert all(held_back.values()), f"a node's stream to or from node 1 never held back: {held_back}"
    h.run_until(lambda h: all(e.up for n in h.nodes for e in n.table), 20_000)
    _drain(h)
    assert h.tables_agree()
    assert all(h.got[key] == made for key, made in h.made.items())
    assert max(n.counters.stream_retained_max for n in h.nodes) == window
    # Resumed: no stream is held back any more.
    before = [n.counters.window_full_cycles for n in h.nodes]
    h.run(100)
    assert [n.counters.window_full_cycles for n in h.nodes] == before


def test_traffic_towards_a_dead_node_stops_at_the_window():
    h = make_triangle(8, load=0.04, ait_rate=0.05, seed=12)
    _up(h)
    h.kill(1, h.cycle + 5)
    survivors = [h.nodes[0], h.nodes[2]]
    worst = 0
    for _ in range(4000):  # 160 frames made per stream, 2.5 windows
        h.step()
        worst = max(worst, *(_held(n, 1) for n in survivors))
    assert worst == E2E_WINDOW
    assert all(n.counters.stream_retained_max == E2E_WINDOW for n in survivors)
    # The store of a node: a window per user stream and per control stream, at most.
    bound = 2 * E2E_WINDOW + 2 * E2E_CONTROL_WINDOW
    assert all(E2E_WINDOW < n.counters.retained_max <= bound for n in survivors)
    assert all(h.made[n.id, 1, 0] - h.sent[n.id, 1, 0] > 50 for n in survivors)
    _drain(h)  # between the survivors everything arrives
    assert h.got[0, 2, 0] == h.made[0, 2, 0] > 100


def test_an_ack_that_died_with_a_relay_is_sent_again_for_the_copy_of_the_newest_frame():
    """Link 0-1 cut, traffic round through node 2, node 2 killed with ACKs on their way: the
    streams 0 <-> 1 are stuck at a full window of 8 until the link heals. Each origin then
    sends its unacknowledged frames again; the destination has them all, and its last ACK
    carried the sequence it expects, so no ACK would leave without the rule that the copy of
    the newest frame delivered is acknowledged (10.10): without it, 18 of seeds 0 to 19 stop
    here for good."""
    h = make_triangle(8, load=0.04, seed=0, e2e_window=8)
    _up(h)
    cut = h.cycle + 3
    for d in ("ab", "ba"):
        getattr(h.channels[0], d).cuts = [(cut, cut + 2000)]
    h.kill(2, cut + 300)
    h.run(2600)
    assert h.nodes[0].counters.window_full_cycles and h.nodes[1].counters.window_full_cycles
    _drain(h, 20_000)


def test_the_copy_of_the_newest_frame_is_acknowledged_again():
    node = Node(1, Topology.triangle(), ack_every=4, e2e_window=4)
    res = NodeResult()
    frames = [node_frame(USER, 0, 1, 0, seq, bytes([seq])) for seq in range(4)]
    for frame in frames:
        node._apply(node.frame_engine.receive(frame), res)
    assert node.counters.acks_sent == 1 and len(res.frames) == 4
    # That ACK died; the origin, its window full, sends the four again.
    for frame in frames[:3]:
        node._apply(node.frame_engine.receive(frame), res)
    assert node.counters.acks_sent == 1, "an older copy says nothing new"
    node._apply(node.frame_engine.receive(frames[3]), res)
    assert node.counters.acks_sent == 2 and node.counters.duplicates == 4 and len(res.frames) == 4
    # No port took the first ACK from its slot: the second replaced it, and says as much (10.11).
    assert node.counters.acks_replaced == 1
    assert parse_header(node.fwd[0, 0].ack_frame(), 3, 1).seq == 4


@pytest.mark.slow
def test_control_messages_towards_a_cut_off_node_wait_and_the_newest_about_each_link_goes():
    """Node 2 is cut off while link 0-1, which it arbitrates, flaps twelve times: each flap
    makes nodes 0 and 1 write two REPORTs to node 2, after the NODE_DOWN verdicts on its links.
    Each control stream to node 2 stops at its window; the messages beyond it wait, one per
    (type, link), the newest replacing the older. When node 2 is back it adopts the NODE_DOWNs
    about itself first, and holds its own links DOWN; its ACKs still get out (those of control
    streams travel like control frames), the LINK_UPs that waited follow, and every table
    agrees."""
    h = make_triangle(8, load=0.02, seed=5)
    _up(h)
    start = h.cycle + 5
    _cut_off(h, 2, start, start + 9000)
    for d in ("ab", "ba"):
        getattr(h.channels[0], d).cuts = [(t, t + 40) for t in range(start + 1500, start + 8700, 600)]
    links = len(h.topology.links)
    while h.cycle < start + 9000:
        h.step()
        for n in h.nodes[:2]:
            assert _held(n, 2, CONTROL) <= E2E_CONTROL_WINDOW
            # At most a REPORT per link of the node and a VERDICT per link of the fabric.
            assert len(n.control_waiting[2]) <= len(n.ports) + links
    for n in h.nodes[:2]:
        assert _held(n, 2, CONTROL) == E2E_CONTROL_WINDOW and n.counters.control_superseded > 0
    h.run_until(lambda h: all(e.up for n in h.nodes for e in n.table), 20_000)
    _drain(h)
    assert h.tables_agree()
    assert not any(n.control_waiting[2] for n in h.nodes[:2])


@pytest.mark.parametrize(("window", "rate"), [(8, (0.043, 0.053)), (64, (0.115, 0.12))])
def test_a_window_smaller_than_the_loop_caps_the_rate_of_its_stream(window, rate):
    """One user saturates stream 0 -> 1 over the direct link (latency 8, RTT 21): its frames
    take about 182 cycles from hand-in to the ACK that frees their slots, so a window of 8
    carries about 8 / 182 frames per cycle, and 64 the class's full rate on the link (0.118)."""
    h = make_triangle(8, load=0.0, seed=1, e2e_window=window)
    _up(h)
    h.made[0, 1, 0] = h.sent.get((0, 1, 0), 0) + 10**6
    h.run(1500)
    got, cycle = h.got.get((0, 1, 0), 0), h.cycle
    h.run(4000)
    assert rate[0] <= (h.got[0, 1, 0] - got) / (h.cycle - cycle) <= rate[1]


def test_the_user_port_refuses_a_frame_when_the_window_is_full_and_nothing_changes():
    node = Node(0, Topology.triangle(), ack_every=2, e2e_window=2)
    assert node.send(1, 0, b"a") and node.send(1, 0, b"b")
    assert not node.ready(1, 0) and node.ready(2, 0)
    sequences = {key: store.next_seq for key, store in node.stores.items()}
    assert not node.send(1, 0, b"c") and not node.send(1, 0, b"c")
    assert {key: store.next_seq for key, store in node.stores.items()} == sequences and _held(node, 1) == 2
    assert node.send(2, 0, b"d"), "another stream flows"
    node.step({link: None for link in node.ports})
    node.step({link: None for link in node.ports})
    # Two refusals in one cycle hold the stream back for that cycle, once.
    assert node.counters.window_full_cycles == 1


def test_bad_window_parameters_are_refused():
    tri = Topology.triangle()
    for window in (0, -4, 3, 48, True, 2.0, "64", E2E_WINDOW_MAX * 2):
        with pytest.raises(ValueError, match="e2e_window"):
            Node(0, tri, e2e_window=window)
    with pytest.raises(ValueError, match=r"ack_every must be at most e2e_window \(8\)"):
        Node(0, tri, ack_every=9, e2e_window=8)
    Node(0, tri, ack_every=8, e2e_window=8)
    Node(0, tri, ack_every=1, e2e_window=1)
    Node(0, tri, ack_every=E2E_WINDOW_MAX, e2e_window=E2E_WINDOW_MAX)
    node = Node(0, tri)
    for dest in (0, 3):
        with pytest.raises(ValueError, match="dest"):
            node.ready(dest, 0)
    with pytest.raises(ValueError, match="cls"):
        node.ready(1, 1)


def test_a_control_message_written_while_older_ones_wait_waits_behind_them():
    """A slot freed by an ACK goes to the oldest waiting message, not to one written after it by
    the control engine before the flush (10.10): numbered first, the newer REPORT would arrive
    first, and the arbiter would keep the older one, arriving after it, as the port's state."""
    node = Node(0, Topology.triangle())
    store = node.stores[2, 0, CONTROL]

    def report(up, incident):
        return message_payload(Report(0, 0, up, True, incident, 1, 0).slices())

    def write(payload):
        """One control action writing ``payload`` for node 2, and the store taking it in the
        next clock."""
        out = Done()
        node.control._write([2], payload, out)
        node._control_land(out.written, None)

    for i in range(E2E_CONTROL_WINDOW):
        write(report(i % 2 == 1, i))
    write(report(False, 99))  # the window is full: it waits
    store.release(1)  # an ACK frees a slot
    write(report(True, 100))  # written before the flush
    assert store.next_seq == E2E_CONTROL_WINDOW, "the newer message took the slot"
    waiting = node.control_waiting[2].payloads()
    assert waiting == [report(True, 100)], "it replaces the older one about the same link, last"
    assert 2 in node.control.to_flush
