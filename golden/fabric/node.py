"""A fabric node: link ports, a topology table, routing, verdicts and failover (PROTOCOL.md 10).

:class:`golden.topology.Topology` is the fixed graph every node knows. :class:`Node` owns one
:class:`golden.link.core.LinkCore` per link it is on (its **ports**, built with one class more than
the user classes: the highest carries control frames) and, above them, composes the parts of
this package (each with a hardware twin of the same path under rtl/):

* the **topology table** (``table.py``): per link, the committed state (UP or DOWN), the epoch
  of the verdict that set it and the verdict itself (10.4);
* routing (``routing.py``): a frame for destination *d* goes over the shortest path of links the
  table holds UP (ties: the lowest next hop), by the port chosen when the frame leaves; a
  frame with no path waits at the node (10.7);
* what the node holds to send (``outbound.py``): its own streams' stores, the forward queues
  with their ACK slots, the routes, and what each port takes;
* end-to-end order at the destination: per (origin, class), duplicates dropped and early frames
  held in a reorder buffer until the gap fills (10.7);
* the end-to-end window: per stream, the frames held for the destination's ACK are at most a
  fixed number, and a user stream whose window is full is held back (10.10);
* REPORTs of its own ports leaving or entering UP, sent to the link's arbiters (10.3), in the
  frames and messages of ``message.py``, which also checks what arrives (10.2, 10.3);
* the arbiter's rules (``arbiter.py``) for every link it is the third node of, on the REPORTs
  it keeps (``reports.py``) (10.5), and the
  adoption and forwarding of verdicts (10.4);
* settling a port of a link a LINK_DOWN holds down, and failing its frames over (10.6);
* what each class of a port takes (``choice.py``), the frame engine (``frame_engine.py``: the
  frame it handles in a cycle, ``frame_choice.py``, and where it sends it, ``receive.py``) and
  the control engine (``control_engine.py``: the table, the port records, the REPORTs, the
  event queue and the control streams' origins, and the action it takes in a cycle,
  ``control_choice.py``) (10.11).

One :meth:`Node.step` is one link clock of every port (the fabric is synchronous here: the
golden model does not model the node's clock crossings), and bounded work in register-transfer
form, as hardware does it (10.11): from the state at the start of the clock, each port chooses
the frames it takes, the control engine takes one action (an event queued before the clock, or
what one set in motion) or acts on the one it took (what the action of the clock before asked,
its frames for the stores and its settle, lands first), and the frame engine handles one
frame; then each port gives up the
frame the engine took from its streams and steps, and what it delivers joins its inbox, the
port's receive memory (the ports are built with ``user_takes``: a full memory refuses frames,
as the hardware's does); at the edge the settles and take-outs asked go to the ports, the
ports' changes are queued as events, and the streams whose route changed rewind. User side:
:meth:`send` offers a frame of up to 56 bytes for a destination and class, which the node takes
unless the stream's end-to-end window is full (:meth:`ready`); ``step`` returns what was
delivered, at most one user frame a cycle.
Failure behaviour: a malformed node frame (10.2) or control message (10.3) is counted and
dropped; a frame the node does not take is left with the user, who offers it again; bad
arguments raise ValueError naming them, before anything changes.
"""

from dataclasses import dataclass, field

from golden import encoding as enc
from golden.encoding import NodeKind
from golden.fabric.control_engine import ControlEngine
from golden.fabric.control_engine import Done as ControlDone
from golden.fabric.control_engine import PortState as ControlPort
from golden.fabric.control_engine import Sources as ControlSources
from golden.fabric.destination import Destination
from golden.fabric.frame_engine import FrameEngine, Handled, Sources
from golden.fabric.outbound import Outbound
from golden.fabric.outbound import PortState as OutboundPort
from golden.fabric.port_watch import PortWatch
from golden.link.control import check_word
from golden.link.core import LinkCore
from golden.params import (
    E2E_ACK_EVERY,
    E2E_WINDOW,
    EVENT_MESSAGES,
    FORWARD_DEPTH,
    NODE_READ_SLICES,
    check_node_params,
    node_port_params,
)
from golden.topology import Topology, check_topology

# PROTOCOL.md 10.8: what one control frame's delivery over a link of round trip R adds to
# 5R/2 + 8 and the P reads of the frame from the receive memory (the frame's and the token's way
# from S to the wire, queueing behind another control frame, the node's step, the restart delay
# before a port leaves UP, the two clocks a port's change takes to reach the control engine, and
# the second clock each engine takes to handle the frame and act on the message, and the clock
# in which the action's frame lands in its store). Fitted where it weighs most, at latencies 1
# to 3 (tests/test_fabric.py: random cuts there come within a few cycles of the bound).
CONTROL_HOP_CONSTANT = 24
# The reads of a frame from a node port's receive memory (PROTOCOL.md 4.6, 10.11).
NODE_READ_PARTS = enc.SLICES_PER_FRAME // NODE_READ_SLICES


def control_hop_bound(rtt: int, read_parts: int = NODE_READ_PARTS) -> int:
    """Cycles from a control frame handed to a port to its delivery at the peer (10.8), the
    ports reading their receive memories in ``read_parts`` parts."""
    return (5 * rtt + 1) // 2 + 8 + read_parts + CONTROL_HOP_CONSTANT


def verdict_bound(rtt_failed: int, rtt_arbiter: int, margin: int, read_parts: int = NODE_READ_PARTS) -> int:
    """Cycles from a single fault to its verdict at every node of a triangle (10.8):
    ``rtt_failed`` the largest RTT of the failed links, ``rtt_arbiter`` the largest of the
    links the REPORTs and the VERDICT cross."""
    return rtt_failed + margin + 2 * control_hop_bound(rtt_arbiter, read_parts)


def failover_bound(rtt_failed: int, rtt_arbiter: int, margin: int, read_parts: int = NODE_READ_PARTS) -> int:
    """Cycles from a link fault to the first frame across it delivered by the third node (10.8)."""
    hops = 2 * control_hop_bound(rtt_arbiter, read_parts)
    return verdict_bound(rtt_failed, rtt_arbiter, margin, read_parts) + hops


# --- the node ---------------------------------------------------------------------------------


@dataclass
class NodeResult:
    """What one node step handed to the user, and what happened."""

    frames: list = field(default_factory=list)  # [(origin, cls, payload bytes)] in order
    ait: list = field(default_factory=list)  # [(link, value)] token values delivered
    ait_returned: list = field(default_factory=list)  # [(link, value)] own values given back
    events: list = field(default_factory=list)  # [(name, detail)]


@dataclass
class NodeCounters:
    malformed: int = 0  # node frames or control messages dropped (10.2, 10.3)
    duplicates: int = 0  # user frames below the next expected sequence (10.7)
    stale_verdicts: int = 0  # verdicts whose epoch was not newer (10.4)
    reorder_max: int = 0  # the reorder buffer's largest occupancy (10.7)
    waiting_max: int = 0  # frames with no path, at most at once (10.7)
    failed_over: int = 0  # frames taken out of settled ports (10.6)
    settles: int = 0
    settle_skipped: int = 0  # LINK_DOWN adopted after the port entangled again (10.6)
    acks_sent: int = 0  # end-to-end ACKs made (10.7), each into its ACK slot (10.11)
    acks_replaced: int = 0  # ACKs a later one of their stream replaced in the slot before they left (10.11)
    resent: int = 0  # frames sent again end to end after a route changed (10.7)
    retained_max: int = 0  # frames held for an end-to-end ACK, at most at once (10.7)
    stream_retained_max: int = 0  # the same for one user stream: at most the window (10.10)
    window_full_cycles: int = 0  # cycles a user stream's offer was refused, summed over streams (10.10)
    control_waiting_max: int = 0  # control messages waiting for a window slot, at most at once (10.10)
    control_retained_max: int = 0  # the same as stream_retained_max for one control stream (10.10)
    control_superseded: int = 0  # waiting control messages a newer one replaced (10.10)
    inbox_max: int = 0  # frames delivered by one port and not yet handled, at most at once (10.11)
    events_max: int = 0  # events waiting for the control engine, at most at once (10.11)
    forward_max: int = 0  # frames in one forward queue (destination, class), at most at once (10.11)
    # Frames left at the head of their inbox because the forward queue they would enter was
    # full, one a cycle each (10.11).
    forward_holds: int = 0
    # Steps in which a port's receive memory of some class was full: the port refuses the slices
    # of new frames, and the peer sends them again (4.6, 10.11).
    memory_full: int = 0
    # Control messages for the node left in their inbox, or a drain paused, because the event
    # queue had no room for a message, one a cycle each (10.11).
    event_holds: int = 0
    # Frames dropped from the front of a full forward queue whose destination has no path (10.11).
    forward_dropped: int = 0


class Node:
    """Node ``node_id`` of ``topology``. ``user_classes``: user traffic classes (1..3; the
    ports get one more, for control frames). ``ack_every``: a destination acknowledges a user
    stream each time it has delivered this many more frames of it (10.7; control messages are
    acknowledged one by one). ``e2e_window``: the frames of one user stream this node holds
    unacknowledged at most, and the slots of its reorder buffer per stream it receives: a power
    of two of at least ``ack_every``, the same at every node of the fabric (10.10; a control
    stream's window is ``E2E_CONTROL_WINDOW``). ``link_params``: :class:`LinkParams` fields for
    every port (``num_classes``, ``port_id`` and ``nonce_seed`` are set per port).

    The cycle (PROTOCOL.md 10.11): from the state at the start of the clock, the ports choose
    their frames, the control engine takes an action or acts on the one it took in the last
    clock, and the frame engine takes a frame or handles the one it took;
    every port steps, and what it delivers joins the port's inboxes; at the edge the ports get
    what the engines asked, their changes become events, and every own stream whose route
    changed since its frames left goes again (:meth:`Store.rewind`). Nothing in a step walks a
    queue or a store: each part is a bounded piece of hardware.
    ``forward_depth``: the frames each forward queue (destination, port class) holds at most, a
    power of two; a frame whose handling would write a full one stays where it is, in its
    port's inbox, until there is room (10.11)."""

    def __init__(
        self,
        node_id: int,
        topology: Topology,
        user_classes: int = 1,
        seed: int = 0,
        ack_every: int = E2E_ACK_EVERY,
        e2e_window: int = E2E_WINDOW,
        forward_depth: int = FORWARD_DEPTH,
        **link_params,
    ):
        check_topology(topology).check_node("node_id", node_id)
        check_node_params(user_classes, ack_every, e2e_window, forward_depth, link_params)
        self.ack_every, self.e2e_window, self.forward_depth = ack_every, e2e_window, forward_depth
        self.id, self.topology, self.user_classes = node_id, topology, user_classes
        self.control_class = user_classes
        self.ports = {}
        for link in topology.links_of(node_id):
            params = node_port_params(node_id, topology.peer(link, node_id), link, user_classes, seed, link_params)
            # The port's receive memories are the node's inboxes (10.11).
            self.ports[link] = LinkCore(params, user_takes=True)
        self.dests = [n for n in range(topology.num_nodes) if n != node_id]
        self.counters = NodeCounters()
        self.cycle = 0
        # Per port: its state last queued as an event, its entries into UP counted as they are
        # queued (``session`` counts them as the control engine handles them: the settle checks
        # the REPORTs against the former, 10.6), and whether it hears its peer (10.3).
        self.watch = {
            link: PortWatch(port.p.los_cycles, port.p.liveness_bound(port.p.max_rtt))
            for link, port in self.ports.items()
        }
        # The frame engine's inputs: per port and class the frames it delivered and the node has
        # not taken (the port's receive memory, 4.6); besides them, each settled port offers
        # the frames it took out (10.6). The engine takes them in turn: the control class of
        # each port, and the user classes of each port.
        self._inboxes = [(link, c) for link in self.ports for c in range(user_classes + 1)]
        # The classes whose stream each port gives up in this clock's step: the frame engine's take.
        self.taking = {link: [] for link in self.ports}
        # Beyond its depth, a forward queue has room for the frames settles take out: at most a
        # window of each port's class (10.11).
        self._takeout_room = sum(p.p.window for p in self.ports.values())
        self.inbox_order = {
            True: [(link, user_classes) for link in self.ports],
            False: [(link, c) for link in self.ports for c in range(user_classes)],
        }
        # What the node holds to send: its own streams' stores (10.10), the forward queues with
        # their ACK slots (10.11), the routes and what each port takes (10.7). The port is
        # chosen when a frame leaves, so a route change moves nothing.
        self.outbound = Outbound(
            node_id, topology, self.ports, user_classes, e2e_window, forward_depth, self._takeout_room
        )
        self.stores, self.fwd, self.settling = self.outbound.stores, self.outbound.fwd, self.outbound.settling
        self._control_stores = [(d, self.stores[d, 0, NodeKind.CONTROL]) for d in self.dests]
        # The streams I receive: per (origin, cls, kind) the next expected, what my last ACK
        # carried, and the reorder buffer (10.7).
        self.destination = Destination(self.dests, user_classes, e2e_window, ack_every)
        self.frame_engine = FrameEngine(node_id, topology, user_classes, self.destination)
        self.held_back = set()  # (dest, cls): user streams whose offer was refused this cycle
        self.control = ControlEngine(
            node_id, topology, {d: self.stores[d, 0, NodeKind.CONTROL] for d in self.dests}, self.destination
        )
        # The control engine's state, by the names the node reads it by: the table (which routing
        # reads), what it keeps of each port (its view of the port, ever UP, absent, the counts a
        # REPORT carries), the REPORTs it keeps as an arbiter, its events and the messages
        # waiting for a window slot.
        self.table, self.records, self.reports = self.control.table, self.control.records, self.control.reports
        self.port_up, self.ever_up, self.absent = self.records.up, self.records.ever_up, self.records.absent
        self.incident, self.session = self.records.incident, self.records.session
        self.events = self.control.events
        self.control_waiting = {d: o.waiting for d, o in self.control.origins.items()}
        self.withdraw_next = set()  # ports whose held token goes back to the user
        # Asked in a clock, handed to the ports after their step (10.6): link -> the peer's
        # half-state to settle with, and the frame a settled port offered that the engine took.
        self._asking, self._taking_out = {}, None
        # What the control engine's action of the last clock asked of the rest of the node: its
        # frames for the control stores and its settle, which land in this clock (10.11).
        self._control_next = None
        # An ACK of my stream the frame engine handled in the last clock: it releases the
        # stream's frames in this one (10.11).
        self._release_next = None
        self._start_of_clock()

    # --- user side ---------------------------------------------------------------------------

    def ready(self, dest: int, cls: int) -> bool:
        """The user port of stream (``dest``, ``cls``) takes a frame now: fewer than
        ``e2e_window`` of the stream's frames wait for the destination's ACK (10.10)."""
        self._check_stream(dest, cls)
        return self.outbound.ready(dest, cls)

    def send(self, dest: int, cls: int, payload: bytes) -> bool:
        """Offer a user frame of at most 56 bytes for node ``dest``, class ``cls``. True: the
        node took it. False: the stream's window is full (10.10); nothing changed, the frame
        stays with the user, who offers it again (the cycle counts in ``window_full_cycles``)."""
        self._check_stream(dest, cls)
        if not isinstance(payload, (bytes, bytearray)) or len(payload) > enc.NODE_PAYLOAD_BYTES:
            raise ValueError(f"payload must be at most {enc.NODE_PAYLOAD_BYTES} bytes")
        if not self.ready(dest, cls):
            self.held_back.add((dest, cls))
            return False
        store = self.outbound.write(dest, cls, bytes(payload))
        self._retained(store)
        self.counters.stream_retained_max = max(self.counters.stream_retained_max, store.held)
        return True

    def _check_stream(self, dest, cls):
        if not isinstance(dest, int) or not 0 <= dest < self.topology.num_nodes or dest == self.id:
            raise ValueError(f"dest must be another node id in [0, {self.topology.num_nodes}), not {dest!r}")
        if not isinstance(cls, int) or not 0 <= cls < self.user_classes:
            raise ValueError(f"cls must be in [0, {self.user_classes}), not {cls!r}")

    def _retained(self, store):
        self.counters.retained_max = max(self.counters.retained_max, sum(s.held for s in self.stores.values()))

    def believes_up(self, link: int) -> bool:
        """G_K of the ghost meter (10.4): held UP by the table and not suspected here (a port of
        mine that is not UP)."""
        return self.table[link].up and (link not in self.ports or self.ports[link].up)

    @property
    def waiting(self) -> list:
        """The frames at this node that have no path now (10.7): forwarded frames, ACKs in their
        slots, and every frame held for a stream of mine whose destination has no path."""
        queues, stores = self._pathless()
        slots = [self.fwd[key].ack_frame() for key in queues if self.fwd[key].slot is not None]
        forwarded = [f for key in queues for f in self.fwd[key].queue]
        return forwarded + slots + [f for s in stores for _, f in s.frames()]

    def _pathless(self) -> tuple:
        """The forward queues (with their ACK slots) and the stores whose destination has no
        path, by the hops of the last clock: ([(destination, port class)], [Store])."""
        queues = [key for key in self.fwd if self.outbound.no_path(*key)]
        ctl = NodeKind.CONTROL
        return queues, [s for (d, _, kind), s in self.stores.items() if self.hops[d, kind == ctl] is None]

    @property
    def hops(self) -> dict:
        """The next hop of every destination by the state the last clock left: {(dest, control):
        link or None}."""
        return self.outbound.hops

    # --- routing -----------------------------------------------------------------------------

    def next_hop(self, dest: int, control: bool = False) -> int | None:
        """The port (link id) towards ``dest`` over links the table held UP at the start of the
        clock, or None; a control frame leaves by a port that was UP here, whatever the table
        says (a frame handed to a port that is not UP waits in it, and waits for good if the
        peer is dead). The routes read the table and the records from registers: what the
        control engine's action changes reaches them a clock later, with its settle (10.11)."""
        return self.outbound.next_hop(dest, control, self.table_up_at_start, self.port_up_at_start)

    def _forward(self, frame, dest, cls, front):
        """Into the forward queue (``dest``, port class ``cls``) (10.11)."""
        self.counters.forward_dropped += self.outbound.forward(frame, dest, cls, front)
        self.counters.forward_max = max(self.counters.forward_max, len(self.fwd[dest, cls].queue))

    def _select(self, link, port) -> dict:
        """The frame each class of port ``link`` takes this cycle: {class: frame} (10.11)."""
        cc, up = self.control_class, self.table[link].up
        return self.outbound.select(
            link,
            OutboundPort(
                control_open=(up or self.port_up[link]) and not port.frames_unsent(cc) and port.frame_ready(cc),
                link_up=up,
                ready=tuple(port.frame_ready(c) for c in range(self.user_classes)),
            ),
        )

    def _rewind(self):
        """Every stream of mine whose next hop changed since its frames left sends them again
        (:meth:`Outbound.rewind`, 10.7)."""
        self.counters.resent += self.outbound.rewind(self.table_up_at_start, self.port_up_at_start)

    # --- one clock ---------------------------------------------------------------------------

    def step(self, rx: dict, ait: dict | None = None, withdraw: frozenset = frozenset()) -> NodeResult:
        """One link clock of every port. ``rx``: {link: word or None}; ``ait``: {link: token value}
        for ports whose ``ait_ready``; ``withdraw``: links whose offered token the user withdraws.

        Register-transfer form (10.11): every choice of the clock reads the state at its start,
        and every write lands at its end. The ports' choices, the control engine and the frame
        engine therefore see the ports before their step, the queues before anything was
        written to them this clock, and the events queued before this clock. What the engines
        ask of a port (a settle, 10.6; a frame taken out) is handed to it after its step, as the
        link lockstep hands the user's requests to a golden end."""
        if set(rx) != set(self.ports):
            raise ValueError(f"rx must give a word (or None) for every port {sorted(self.ports)}, not {sorted(rx)}")
        ait = dict(ait or {})
        for link in ait:
            if link not in self.ports:
                raise ValueError(f"ait names link {link!r}, not a port of node {self.id}")
        res = NodeResult()
        # The user's offers of this cycle came before its step; each refused one held a stream back.
        self.counters.window_full_cycles += len(self.held_back)
        self.held_back.clear()
        self._start_of_clock()
        frames = {link: self._select(link, port) for link, port in self.ports.items()}
        self._control_engine(res)
        self._port_events()
        self._frame_engine(res)
        for link, port in self.ports.items():
            word = rx[link]
            wd = link in withdraw or link in self.withdraw_next
            self.withdraw_next.discard(link)
            taken, self.taking[link] = self.taking[link], []
            out = port.step(word, frames=frames[link], ait=ait.get(link), withdraw=wd, frames_taken=taken)
            self.watch[link].tick(word is not None and check_word(word) is not None)
            res.ait.extend((link, v) for v in out.ait)
            res.ait_returned.extend((link, v) for v in out.ait_returned)
            for name, applied in out.events:
                if name == "settle":
                    self._settled(link, applied)
        self._hand_over()
        self._rewind()
        self._count()
        self.cycle += 1
        return res

    def _start_of_clock(self):
        """The state at the start of the clock, where a write of the same clock would otherwise
        be seen by a choice after it (10.11): the forward queues' occupancy, the events queued,
        the ports that had come UP, the control streams that may have messages to flush, and
        the ports whose settle and take-out are done. ``table_up_at_start`` is the table the
        ports' choices read, for the harness's check of 10.4."""
        self.outbound.start()
        self._events_start = len(self.events)
        self.table_up_at_start = tuple(e.up for e in self.table)
        self.port_up_at_start = dict(self.port_up)
        self._ever_up_start = dict(self.ever_up)
        # An ACK that frees a slot of a control stream flags it for the control engine if
        # messages waited, or could wait: a store full now parks what the engine writes in
        # this clock (10.10).
        self._may_flush = {d for d, store in self._control_stores if self.control_waiting[d] or store.full}
        self._settle_done = (
            {
                link
                for link, port in self.ports.items()
                if link not in self._asking and port.settle_ready and not port.framer.takeout.busy
            }
            if self.settling
            else ()
        )
        self._acked_later = {}

    def _port_events(self):
        """A port whose state (UP or not) differs from the one last queued for it queues an event
        with the new state, read from the port before its step; so does a port that stays out of
        UP while it hears its peer, once another port has come UP (10.3). The control engine sees
        them from the next clock."""
        for link, port in self.ports.items():
            if self.watch[link].change(port.up):
                self._event(("port", link, port.up))
        if any(self._ever_up_start.values()):
            for link in self.ports:
                if self._stuck_in_training(link):
                    self.absent.add(link)
                    self._event(("never_up", link))

    def _hand_over(self):
        """After the ports' step: the settles the control engine asked and the frame the frame
        engine took out go to the ports (10.6), the control engine's ACK records of this clock
        land, and the streams whose port has finished its settle and its take-out send again."""
        for link, half in self._asking.items():
            self.ports[link].settle(half)
        self._asking.clear()
        if self._taking_out is not None:
            link, frame = self._taking_out
            self._taking_out = None
            _, got = self.ports[link].take_out()
            if got != frame:
                raise RuntimeError(f"node {self.id}: port {link} took out a frame other than the one it offered")
        for key, expected in self._acked_later.items():
            self.destination.record(key, expected)
        self.outbound.settled(self._settle_done)

    def _event(self, event):
        """Queue an event for the control engine. A port's never waits: the messages leave it
        ``EVENTS_PER_PORT`` places per port (10.11)."""
        try:
            self.events.append(event)
        except OverflowError as e:
            raise RuntimeError(f"node {self.id}: {e}") from None

    def _messages_wait(self) -> bool:
        """A control message for this node would find no room among the events queued at the
        start of the clock: it waits."""
        return self._events_start >= EVENT_MESSAGES

    def _count(self):
        c = self.counters
        c.inbox_max = max(c.inbox_max, max(self._inbox_len(link, cls) for link, cls in self._inboxes))
        c.memory_full += any(any(p.framer.memory_full) for p in self.ports.values())
        c.events_max = max(c.events_max, len(self.events))
        queues, stores = self._pathless()
        forwards = sum(len(self.fwd[key].queue) + (self.fwd[key].slot is not None) for key in queues)
        c.waiting_max = max(c.waiting_max, forwards + sum(s.held for s in stores))

    def _stuck_in_training(self, link) -> bool:
        """Port ``link`` never came UP, though it has heard its peer for longer than a healthy
        channel lets training take (PROTOCOL.md 7.5, at the largest round trip the port
        accepts): the channel is not healthy (10.3). ``absent`` as the control engine leaves
        it: a port it reports absent in this clock is not reported again (10.11)."""
        return self.watch[link].stuck(self._ever_up_start[link]) and link not in self.absent

    def _hears(self, link) -> bool:
        return self.watch[link].hears

    # --- the control engine: an action taken in one clock, acted on in the next --------------

    def _control_engine(self, res):
        """An action taken, or the one taken in the last clock acted on, as
        :class:`golden.fabric.control_engine.ControlEngine` chooses it, from the state at the start
        of the clock."""
        landing, self._control_next = self._control_next, None
        if landing is not None:
            self._control_land(*landing)
        if not self.control.idle:
            self._control_apply(self.control.step(self._control_sources()), res)

    def _control_sources(self) -> ControlSources:
        """What the control engine reads of the ports at the start of the clock."""
        return ControlSources(
            ports=tuple(
                ControlPort(
                    up=port.up,
                    hears=self.watch[link].hears,
                    half=port.half_state(),
                    settle_ready=port.settle_ready,
                    entangled=self.watch[link].entangled,
                )
                for link, port in self.ports.items()
            )
        )

    def _control_apply(self, out: ControlDone, res):
        """What the control engine asked: its ACK into the stream's slot, a port's settle."""
        c = self.counters
        res.events.extend(out.events)
        c.stale_verdicts += out.stale
        c.settle_skipped += out.settle_skipped
        c.control_superseded += out.superseded
        if out.waits:
            c.control_waiting_max = max(c.control_waiting_max, sum(len(w) for w in self.control_waiting.values()))
        if out.ack is not None:
            self._ack(*out.ack, by_control=True)
        if out.written or out.settle is not None:
            self._control_next = (out.written, out.settle)

    def _control_land(self, written: dict, settle):
        """What the control engine's action of the last clock asked, from registers: its frames
        into the control stores (after the ports' choices of this clock, which see the stores
        as the clock started), and its settle, on the routes that now read the table the
        action left (10.11)."""
        c = self.counters
        for dest, frame in written.items():
            store = self.stores[dest, 0, NodeKind.CONTROL]
            store.write(frame)
            self._retained(store)
            c.control_retained_max = max(c.control_retained_max, store.held)
        if settle is not None:
            self._settle(*settle)

    # --- the frame engine: a frame taken in one clock, handled in the next -------------------

    def _head(self, key):
        """The frame at the head of inbox ``key`` (port, class) at the start of the clock, or
        None: what the port's stream offers; a frame the engine takes, the port gives up in
        this clock's step (4.6)."""
        link, cls = key
        return self.ports[link].frame_out(cls)

    def _inbox_len(self, link, cls) -> int:
        """Frames port ``link`` delivered in class ``cls`` that the node has not handled."""
        return len(self.ports[link].framer.untaken[cls])

    def _sources(self) -> Sources:
        """What the frame engine sees at the start of the clock."""
        return Sources(
            control_heads=tuple(self._head(k) for k in self.inbox_order[True]),
            user_heads=tuple(self._head(k) for k in self.inbox_order[False]),
            offers=tuple(None if port.taken_offer is None else port.taken_offer[1] for port in self.ports.values()),
            full=frozenset(key for key in self.fwd if self.outbound.full(*key)),
            pathless=frozenset(key for key, hop in self.hops.items() if hop is None),
            messages_wait=self._messages_wait(),
        )

    def _frame_engine(self, res):
        """A frame taken (its port gives it up in this clock), or the one taken in the last clock
        handled, as :class:`golden.fabric.frame_engine.FrameEngine` picks it. Every frame that has
        to wait is counted, each cycle. An ACK handled in the last clock releases its frames first."""
        release, self._release_next = self._release_next, None
        if release is not None:
            self._release(*release)
        out = self.frame_engine.step(self._sources())
        self.counters.event_holds += out.event_holds
        self.counters.forward_holds += out.forward_holds
        if out.source is not None and out.source != "drain":
            what, i = out.source
            if what == "offer":
                # The port gives the frame up after its step, as a user's ready acts at the edge.
                link = list(self.ports)[i]
                self._taking_out = (link, self.ports[link].taken_offer[1])
                self.counters.failed_over += 1
            else:
                link, cls = self.inbox_order[what == "control"][i]
                self.taking[link].append(cls)
        self._apply(out, res)

    def _apply(self, out: Handled, res):
        """What the frame engine said to do with its frame."""
        c = self.counters
        c.malformed += out.malformed
        c.duplicates += out.duplicates
        if out.held:
            c.reorder_max = max(c.reorder_max, self.destination.held)
        if out.forward is not None:
            self._forward(*out.forward)
        if out.taken is not None:
            self.outbound.taken(*out.taken)
        if out.release is not None:
            self._release_next = out.release
        if out.deliver is not None:
            res.frames.append(out.deliver)
        if out.event is not None:
            self._event(("msg", *out.event))
        if out.ack is not None:
            self._ack(*out.ack)
        if out.ack_due is not None:
            self.control.to_ack.add(out.ack_due)

    def _release(self, origin, cls, kind, seq):
        """An ACK of my stream (``origin``, ``cls``, ``kind``) up to ``seq``, handled in the last
        clock, from registers: its frames leave the store, and a control stream whose messages
        may wait for the slots is flagged for the control engine (10.10)."""
        self.outbound.release(origin, cls, kind, seq)
        if kind == NodeKind.CONTROL and origin in self._may_flush:
            self.control.to_flush.add(origin)

    def _ack(self, key, expected, by_control=False):
        """Acknowledge stream ``key`` up to ``expected``: the ACK goes into the stream's ACK slot,
        replacing one that has not left yet (an ACK says how far its stream has arrived, so the
        later one says all the earlier said, 10.11). The control engine acknowledges the control
        streams (``by_control``) and the frame engine the user streams, so the two never write
        one slot or one record in a clock. What a user stream's ACK carried the destination
        recorded as it found the ACK due; the control engine's record lands at the end of the
        clock, after the frame engine has read it."""
        if by_control:
            self._acked_later[key] = expected
        self.counters.acks_sent += 1
        self.counters.acks_replaced += self.outbound.ack(key, expected)

    # --- settling (10.6) --------------------------------------------------------------------

    def _settle(self, link, half):
        """The control engine asked port ``link`` to settle with the peer's half-state ``half``."""
        self._asking[link] = half  # handed to the port after this clock's step (10.11)
        # Settling will say which of my frames the link delivered; my streams that sent by the
        # port wait for it, then go on by their new hops (:meth:`Outbound.settle`).
        self.outbound.settle(link, self.next_hop)

    def _settled(self, link, applied):
        """The settle asked of port ``link`` (:meth:`_settle`) took effect at the end of its step,
        or found the port UP, reconciled by its own entangling. What reconciling delivered is in
        the step's result, with the port's other deliveries; the frames taken out follow one by
        one (:meth:`LinkCore.take_out`), and the frame engine sends them on (10.6, 10.7); the
        streams it paused go on once the last is taken (:meth:`_hand_over`)."""
        if not applied:
            # The port entangled again and reconciled by itself: its unconfirmed frames stay
            # with the link, which may fail again before it delivers them, so the streams that
            # sent by it send again end to end, as on any route change (10.7).
            self.counters.settle_skipped += 1
            self.counters.resent += self.outbound.resend(link)
            return
        self.counters.settles += 1
        self.withdraw_next.add(link)
