"""A node's frame engine: one frame every other clock (PROTOCOL.md 10.7, 10.11).

From what its sources show at the start of the clock (the frame at the head of each inbox, the
frame each settled port offers, the stream draining its reorder buffer) the engine takes one
frame (:func:`golden.fabric.frame_choice.pick`): the port gives it up in that clock. In the next
clock it handles the frame, on the state at the start of that clock, and says what the node
does with it (:class:`Handled`); it takes nothing in a clock that handles, so every choice sees
what the frame before did. A stream draining its reorder buffer gives up its frame as the
engine handles it:

* a frame for another node, or one a settled port offers, goes into a forward queue (the
  offered one at its head), unless it is a frame of my own stream taken out of a port: that
  one is still in its store, which is told;
* an ACK of my stream releases frames of the stream's store;
* a frame of a stream I receive goes to the :class:`golden.fabric.destination.Destination`:
  a duplicate (acknowledged again: a user stream's ACK now, a control stream's by the control
  engine), a frame held early, or one delivered: a user frame to the user, with the stream's
  ACK when due, a control message to the control engine as an event (acknowledged by it once
  handled, 10.7);
* anything malformed (10.2, 10.3) is counted and dropped.

The engine owns the inboxes' turns; the destination is the node's, which the control engine
also reads and writes (its ACKs' records, at the end of the clock).
"""

from dataclasses import dataclass

from golden.encoding import NodeKind
from golden.fabric.destination import Destination
from golden.fabric.frame_choice import EngineView, pick
from golden.fabric.message import parse_ack, parse_message
from golden.fabric.receive import Hold, Way, hold, route
from golden.topology import Topology


@dataclass(frozen=True)
class Sources:
    """What the frame engine sees at the start of a clock. ``control_heads``: per port, in link
    order, the frame at the head of its control inbox, or None; ``user_heads``: per user inbox
    (port ``p``'s class ``c`` at ``p * user_classes + c``); ``offers``: per port, the frame a
    settled port offers, or None; ``full``: the (destination, port class) pairs whose forward
    queue is full; ``pathless``: the (destination, control) pairs with no path;
    ``messages_wait``: the event queue has no room for a message."""

    control_heads: tuple
    user_heads: tuple
    offers: tuple
    full: frozenset
    pathless: frozenset
    messages_wait: bool


@dataclass
class Handled:
    """What the node does in a clock with the frame the engine handles (None: nothing of that).
    ``source``: the frame taken in the clock, as :class:`golden.fabric.frame_choice.EngineChoice`
    says, handled in the next; ``handled``: the source of the frame handled. ``forward``: (frame,
    destination, port class, at the head); ``release``: (origin, class, kind, sequence), an
    ACK of my stream; ``taken``: (destination, class, kind, sequence), my own frame a settled
    port took out; ``deliver``: (origin, class, payload), a user frame; ``event``: (message,
    origin, last of a drain), a control message for the control engine; ``ack``: (stream,
    expected), a user stream's ACK for its slot; ``ack_due``: a control stream whose ACK the
    control engine owes; ``held``: a frame went into a reorder buffer. Counts: ``malformed``,
    ``duplicates``, ``event_holds``, ``forward_holds`` (every frame that waits, each clock)."""

    source: object = None
    handled: object = None
    forward: tuple | None = None
    release: tuple | None = None
    taken: tuple | None = None
    deliver: tuple | None = None
    event: tuple | None = None
    ack: tuple | None = None
    ack_due: tuple | None = None
    held: bool = False
    malformed: int = 0
    duplicates: int = 0
    event_holds: int = 0
    forward_holds: int = 0


class FrameEngine:
    """The frame engine of node ``node_id`` of ``topology`` with ``user_classes`` user classes,
    delivering to ``destination``."""

    def __init__(self, node_id: int, topology: Topology, user_classes: int, destination: Destination):
        self.node_id, self.topology, self.user_classes = node_id, topology, user_classes
        self.destination = destination
        self.turn = (0, 0)
        # The frame taken in the last clock, to handle in this one: (source, frame; None for a
        # drain, whose frame the reorder buffer gives up as it is handled).
        self.taken = None

    def _route(self, frame):
        return route(frame, self.node_id, self.topology.num_nodes, self.user_classes)

    def step(self, s: Sources) -> Handled:
        out = Handled()
        cc = self.user_classes

        # Each head's route, read once: whether it waits, and where the one taken goes.
        control_routes = [None if f is None else self._route(f) for f in s.control_heads]
        user_routes = [None if f is None else self._route(f) for f in s.user_heads]

        def waits(r, control_inbox):
            why = hold(
                r,
                control_inbox,
                lambda d, c: (d, c) in s.full,
                lambda d, c: (d, c == cc) in s.pathless,
                s.messages_wait,
            )
            out.forward_holds += why == Hold.FORWARD
            out.event_holds += why == Hold.EVENT
            return why != Hold.NONE

        draining = self.destination.draining
        drain_waits = draining is not None and draining[2] == NodeKind.CONTROL and s.messages_wait
        out.event_holds += drain_waits
        view = EngineView(
            draining=draining is not None,
            drain_waits=drain_waits,
            control_valid=tuple(f is not None for f in s.control_heads),
            control_waits=tuple(r is not None and waits(r, True) for r in control_routes),
            offer_valid=tuple(f is not None for f in s.offers),
            user_valid=tuple(f is not None for f in s.user_heads),
            user_waits=tuple(r is not None and waits(r, False) for r in user_routes),
        )
        if self.taken is not None:
            (out.handled, frame), self.taken = self.taken, None
            self._handle(out.handled, frame, out)
            return out
        choice = pick(view, self.turn)
        self.turn = choice.turn
        out.source = choice.source
        if choice.source is not None:
            frame = None
            if choice.source != "drain":
                what, i = choice.source
                frame = {"control": s.control_heads, "offer": s.offers, "user": s.user_heads}[what][i]
            self.taken = (choice.source, frame)
        return out

    def _handle(self, source, frame, out):
        if source == "drain":
            key, frame, got = self.destination.drain()
            self._deliver(key, frame, got, out)
        elif source[0] == "offer":
            r = self._route(frame)
            h = r.header
            # A frame of my own stream is still in its store, and goes again from there (the
            # stream's route changed: the link is DOWN and its port not UP); the rest go again
            # ahead of the frames forwarded after them.
            if h.origin != self.node_id or h.kind == NodeKind.ACK:
                out.forward = (frame, h.dest, r.port_class, True)
            else:
                out.taken = (h.dest, h.cls, h.kind, h.seq)
        else:
            self._receive(frame, self._route(frame), out)

    def receive(self, frame: bytes) -> Handled:
        """What the engine does with ``frame`` taken from an inbox, outside its choice."""
        out = Handled()
        self._receive(frame, self._route(frame), out)
        return out

    def _receive(self, frame, r, out):
        if r.way == Way.MALFORMED:
            out.malformed += 1
            return
        h = r.header
        if r.way == Way.FORWARD:
            out.forward = (frame, h.dest, r.port_class, False)
            return
        if r.way == Way.ACK:
            kind = parse_ack(frame)
            if kind is None:
                out.malformed += 1
            else:
                out.release = (h.origin, h.cls, kind, h.seq)
            return
        key = (h.origin, h.cls, h.kind)
        got = self.destination.arrive(key, h.seq, frame)
        if got.duplicate:
            # A copy sent again: its origin may not know how far I am (its ACK died on the way).
            out.duplicates += 1
            if got.ack_copy:
                self._ack(key, self.destination.expected[key], out)
        elif got.refused:
            # A window or more ahead: no origin that keeps its window sent it (10.10).
            out.malformed += 1
        elif got.held:
            out.held = True
            out.duplicates += got.copy
        else:
            self._deliver(key, frame, got, out)

    def _deliver(self, key, frame, got, out):
        """Frame ``frame`` of stream ``key``, the next expected, delivered (``got``): to the user, or
        a control message to the control engine. The stream drains its reorder buffer one frame at a
        time, and is acknowledged when the gap is filled (10.7)."""
        origin, cls, kind = key
        payload = frame[8:]
        if kind == NodeKind.USER:
            out.deliver = (origin, cls, payload)
            if got.ack_due:
                out.ack = (key, got.expected)
            return
        msg = parse_message(payload, self.topology)
        if msg is not None:
            # Acknowledged by the control engine once it has handled the message (10.7).
            out.event = (msg, origin, got.last)
            return
        out.malformed += 1
        if got.last:
            out.ack_due = key

    @staticmethod
    def _ack(key, expected, out):
        """A stream acknowledged again: a user stream's ACK leaves now, a control stream's is
        due from the control engine, whose ACKs leave after what it writes (10.7)."""
        if key[2] == NodeKind.CONTROL:
            out.ack_due = key
        else:
            out.ack = (key, expected)
