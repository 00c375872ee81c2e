"""Where a node's frame engine sends a frame it takes from an inbox, and whether the frame at the
head of an inbox has to wait there (PROTOCOL.md 10.7, 10.11).

A frame whose header is malformed (10.2) is dropped. A frame for another node goes into the
forward queue of its (destination, port class); an ACK for this node releases frames of one of
its streams; any other frame for this node arrives at its destination's stream (10.7). The port
class of a frame is its class, but a control frame, and the ACK of a control stream, take the
control class: the origin's next message may wait for that ACK (10.10), so it must get out of a
node whose table has no path for user frames, as the message got in.

A frame waits in its inbox while its forward queue is full and its destination has a path (a
frame with no path never waits: it could wait for ever, and its queue drops its oldest to make
room); a control frame for this node waits in a control inbox while the event queue has no
room for a message. Both are read from the state at the start of the clock (10.11).
"""

from dataclasses import dataclass
from enum import Enum

from golden.encoding import NodeKind
from golden.fabric.message import Header, acked_kind, parse_header


class Way(Enum):
    MALFORMED = 0
    FORWARD = 1
    ACK = 2  # an ACK of one of my streams
    ARRIVE = 3  # a frame of a stream I receive


class Hold(Enum):
    NONE = 0
    FORWARD = 1  # its forward queue is full (``forward_holds``)
    EVENT = 2  # the event queue has no room for a message (``event_holds``)


@dataclass(frozen=True)
class Route:
    way: Way
    header: Header | None
    port_class: int  # FORWARD: the class of its forward queue (10.11)


def port_class(h: Header, frame: bytes, control_class: int) -> int:
    """The class frame ``frame`` (header ``h``) takes at a port (10.7): its own, but a control
    frame's and a control stream's ACK's is ``control_class``. An ACK is classed by the stream
    kind it names, unchecked: its destination checks it."""
    if h.kind == NodeKind.CONTROL or (h.kind == NodeKind.ACK and acked_kind(frame) == NodeKind.CONTROL):
        return control_class
    return h.cls


def route(frame: bytes, node_id: int, num_nodes: int, user_classes: int) -> Route:
    """Where node ``node_id`` sends ``frame`` (a fabric of ``num_nodes`` nodes, ``user_classes``
    user classes; the control class is ``user_classes``)."""
    h = parse_header(frame, num_nodes, user_classes)
    if h is None:
        return Route(Way.MALFORMED, None, 0)
    cls = port_class(h, frame, user_classes)
    if h.dest != node_id:
        return Route(Way.FORWARD, h, cls)
    return Route(Way.ACK if h.kind == NodeKind.ACK else Way.ARRIVE, h, cls)


def hold(r: Route, control_inbox: bool, queue_full, no_path, messages_wait: bool) -> Hold:
    """Why the frame of route ``r`` at the head of an inbox (a control inbox: ``control_inbox``)
    waits, if it does. ``queue_full(dest, cls)`` and ``no_path(dest, cls)``: the forward queue
    (dest, port class) is full, and the frames of that port class have no path to dest, both at
    the start of the clock; ``messages_wait``: the event queue has no room for a message."""
    if r.way == Way.FORWARD:
        d, cls = r.header.dest, r.port_class
        return Hold.FORWARD if queue_full(d, cls) and not no_path(d, cls) else Hold.NONE
    if r.way == Way.ARRIVE and control_inbox and r.header.kind == NodeKind.CONTROL and messages_wait:
        return Hold.EVENT
    return Hold.NONE
