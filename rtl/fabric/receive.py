"""Where a node's frame engine sends a frame, and whether an inbox's head waits, in hardware
(PROTOCOL.md 10.7, 10.11); twin of golden/fabric/receive.py."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import enum, wiring
from amaranth.lib.wiring import In, Out

from golden import encoding as enc
from golden.encoding import NodeKind
from golden.params import check_int
from rtl.common.fields import layout
from rtl.fabric.message import header_ok


class Way(enum.Enum, shape=2):
    MALFORMED = 0
    FORWARD = 1
    ACK = 2
    ARRIVE = 3


class Hold(enum.Enum, shape=2):
    NONE = 0
    FORWARD = 1
    EVENT = 2


class FrameRoute(wiring.Component):
    """Golden :func:`route` and :func:`hold` for node ``node_id`` of a fabric of ``num_nodes``
    nodes with ``user_classes`` user classes. The node's peers are numbered as its forward
    queues and received streams are (golden ``Node.dests``): node ``n`` is peer ``n`` below
    ``node_id`` and ``n - 1`` above it.

    Ports (in): ``header`` (slice 0 of the frame, ``enc.NODE_HEADER``), ``ack`` (slice 1,
    ``enc.ACK_BODY``: the stream kind an ACK names); ``control_inbox`` (the frame heads a
    control inbox); ``queue_full`` (a bit per forward queue: peer ``p``'s class ``c`` at
    ``p * (user_classes + 1) + c``, the control class last), ``no_path`` (a bit per peer and
    kind: ``2p`` for user frames, ``2p + 1`` for control frames) and ``messages_wait``, all
    from the start of the clock. Out: ``way`` (``Way``); ``peer`` (the destination's peer
    number for FORWARD, the origin's for ACK and ARRIVE); ``port_class`` (golden
    :func:`port_class`); ``hold`` (``Hold``).

    Latency: none (logic only). Failure behaviour: none (a malformed header is ``way``
    MALFORMED, its other outputs meaningless); ValueError at construction for bad parameters.
    """

    def __init__(self, *, node_id: int, num_nodes: int, user_classes: int):
        self._nodes = check_int("num_nodes", num_nodes, 2, enc.MAX_NODES)
        self._node = check_int("node_id", node_id, 0, num_nodes - 1)
        self._classes = check_int("user_classes", user_classes, 1, enc.MAX_CLASSES - 1)
        others = num_nodes - 1
        super().__init__(
            {
                "header": In(layout(enc.NODE_HEADER)),
                "ack": In(layout(enc.ACK_BODY)),
                "control_inbox": In(1),
                "queue_full": In(others * (user_classes + 1)),
                "no_path": In(others * 2),
                "messages_wait": In(1),
                "way": Out(Way),
                "peer": Out(range(others)),
                "port_class": Out(range(user_classes + 1)),
                "hold": Out(Hold),
            }
        )

    def elaborate(self, platform):
        m = Module()
        C, h = self._classes, self.header
        ok = Signal()
        mine = Signal()
        control = Signal()  # the frame takes the control class
        node = Signal(range(self._nodes))  # the other end: destination or origin
        m.d.comb += [
            ok.eq(header_ok(h, self._nodes, C)),
            mine.eq(h.dest == self._node),
            control.eq(
                (h.kind == NodeKind.CONTROL) | ((h.kind == NodeKind.ACK) & (self.ack.stream == NodeKind.CONTROL))
            ),
            self.port_class.eq(Mux(control, C, h.cls)),
            node.eq(Mux(mine, h.origin, h.dest)),
        ]
        # Peers are the other nodes in id order; the highest node has no node above it.
        if self._node == self._nodes - 1:
            m.d.comb += self.peer.eq(node)
        else:
            m.d.comb += self.peer.eq(Mux(node > self._node, node - 1, node))
        with m.If(~ok):
            m.d.comb += self.way.eq(Way.MALFORMED)
        with m.Elif(~mine):
            m.d.comb += self.way.eq(Way.FORWARD)
        with m.Elif(h.kind == NodeKind.ACK):
            m.d.comb += self.way.eq(Way.ACK)
        with m.Else():
            m.d.comb += self.way.eq(Way.ARRIVE)

        full = self.queue_full.bit_select(self.peer * (C + 1) + self.port_class, 1)
        pathless = self.no_path.bit_select(self.peer * 2 + control, 1)
        with m.If((self.way == Way.FORWARD) & full & ~pathless):
            m.d.comb += self.hold.eq(Hold.FORWARD)
        with m.Elif((self.way == Way.ARRIVE) & self.control_inbox & (h.kind == NodeKind.CONTROL) & self.messages_wait):
            m.d.comb += self.hold.eq(Hold.EVENT)
        return m
