"""A node's frame engine in hardware: one frame every other clock, taken in one and handled in
the next (PROTOCOL.md 10.7, 10.11); twin of golden/fabric/frame_engine.py."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for

from golden import encoding as enc
from golden.encoding import NodeKind
from golden.params import check_int
from golden.topology import Topology, check_topology
from rtl.fabric.destination import Destination
from rtl.fabric.frame_choice import FrameEngineChoice, Source
from rtl.fabric.message import MessageParser
from rtl.fabric.receive import FrameRoute, Hold, Way
from rtl.link.framer import FRAME_BITS

SEQ = enc.E2E_SEQ_BITS


class FrameEngine(wiring.Component):
    """The frame engine of node ``node_id`` of ``topology``, with ``user_classes`` user classes,
    and the streams it receives (:class:`rtl.fabric.destination.Destination`, ``e2e_window``
    and ``ack_every`` as the node's). Peers are numbered as the node's forward queues and
    streams are: node ``n`` is peer ``n`` below ``node_id`` and ``n - 1`` above it.

    Ports (in), the sources at the start of the clock (golden ``Sources``): ``control_heads``
    and ``control_valid`` (per port, in link order), ``user_heads`` and ``user_valid`` (port
    ``p``'s class ``c`` at ``p * user_classes + c``), ``offers`` and ``offer_valid`` (per
    port); ``full`` (a bit per forward queue, as :class:`rtl.fabric.receive.FrameRoute` reads
    it), ``pathless`` (its ``no_path``), ``messages_wait``; and the control engine's ACK of a
    control stream, ``control_ack`` and ``control_ack_origin`` (recorded at the edge; its
    ``control_ack_expected`` out).

    Out: ``take`` (combinational, golden ``Handled.source``), the source whose frame the clock
    takes (its port gives it up in the clock); ``choice`` (a register, golden
    ``Handled.handled``), the source of the frame taken in the last clock, which this clock
    handles; combinational, what the handling does (golden ``Handled``): ``frame``, the frame
    handled (the one forwarded, a user frame delivered with its payload in slices 1-7, or an
    event's message); ``forward`` with ``forward_peer``, ``forward_class``, ``forward_front``;
    ``release`` with ``release_peer``, ``release_cls``, ``release_kind``, ``release_seq``;
    ``taken`` with ``taken_peer``, ``taken_cls``, ``taken_kind``, ``taken_seq``; ``deliver``
    with ``deliver_peer``, ``deliver_cls``; ``event`` with ``event_peer``, ``event_last``;
    ``ack`` with ``ack_stream`` (the stream's number in the destination) and ``ack_expected``;
    ``ack_due`` with ``ack_due_peer``; ``held``, ``duplicate`` and ``malformed`` (one frame a
    clock: a bit each); ``event_holds`` and ``forward_holds`` (the frames that wait this clock).

    Latency: a frame is taken in one clock (its copy registered) and handled in the next,
    combinationally on the registered state of that clock; the streams' state moves at the edge
    of the second. Nothing is taken in a clock that handles, so every choice sees what the frame
    before did; the turns move as a frame is taken. A stream draining its reorder buffer gives
    up its frame in the clock that handles it. Failure behaviour: a malformed frame is
    ``malformed`` and dropped; ValueError at construction for bad parameters.
    """

    def __init__(self, *, node_id: int, topology: Topology, user_classes: int, e2e_window: int, ack_every: int):
        self._topology = check_topology(topology)
        self._node = topology.check_node("node_id", node_id)
        self._classes = check_int("user_classes", user_classes, 1, enc.MAX_CLASSES - 1)
        self._ports = len(topology.links_of(node_id))
        if not self._ports:
            raise ValueError(f"node_id {node_id} has no link in the fabric")
        others = topology.num_nodes - 1
        self._destination = Destination(others, user_classes, e2e_window, ack_every)
        P, C = self._ports, user_classes
        U, S = P * C, others * (C + 1)
        self._streams = S
        peer, cls = range(others), range(C + 1)
        choice_layout = data.StructLayout({"source": Source, "index": bits_for(U - 1)})
        super().__init__(
            {
                "control_heads": In(data.ArrayLayout(FRAME_BITS, P)),
                "control_valid": In(P),
                "user_heads": In(data.ArrayLayout(FRAME_BITS, U)),
                "user_valid": In(U),
                "offers": In(data.ArrayLayout(FRAME_BITS, P)),
                "offer_valid": In(P),
                "full": In(S),
                "pathless": In(others * 2),
                "messages_wait": In(1),
                "control_ack": In(1),
                "control_ack_origin": In(peer),
                "control_ack_expected": Out(SEQ),
                "take": Out(choice_layout),
                "choice": Out(choice_layout),
                "frame": Out(FRAME_BITS),
                "forward": Out(1),
                "forward_peer": Out(peer),
                "forward_class": Out(cls),
                "forward_front": Out(1),
                "release": Out(1),
                "release_peer": Out(peer),
                "release_cls": Out(cls),
                "release_kind": Out(2),
                "release_seq": Out(SEQ),
                "taken": Out(1),
                "taken_peer": Out(peer),
                "taken_cls": Out(cls),
                "taken_kind": Out(2),
                "taken_seq": Out(SEQ),
                "deliver": Out(1),
                "deliver_peer": Out(peer),
                "deliver_cls": Out(cls),
                "event": Out(1),
                "event_peer": Out(peer),
                "event_last": Out(1),
                "ack": Out(1),
                "ack_stream": Out(range(S)),
                "ack_expected": Out(SEQ),
                "ack_due": Out(1),
                "ack_due_peer": Out(peer),
                "held": Out(1),
                "duplicate": Out(1),
                "malformed": Out(1),
                "event_holds": Out(range(P + 2)),
                "forward_holds": Out(range(P + U + 1)),
            }
        )

    def _route(self, m, name, frame):
        route = FrameRoute(node_id=self._node, num_nodes=self._topology.num_nodes, user_classes=self._classes)
        m.submodules[name] = route
        m.d.comb += [
            route.header.eq(frame[: enc.SLICE_BITS]),
            route.ack.eq(frame[enc.SLICE_BITS : 2 * enc.SLICE_BITS]),
            route.queue_full.eq(self.full),
            route.no_path.eq(self.pathless),
            route.messages_wait.eq(self.messages_wait),
        ]
        return route

    def elaborate(self, platform):
        m = Module()
        P, C = self._ports, self._classes
        m.submodules.destination = dest = self._destination
        m.submodules.choice = choice = FrameEngineChoice(P, C)

        # Why each head waits, if it does.
        forward_holds, event_holds = [], []
        for name, heads, valid, waits, control in [
            ("control", self.control_heads, self.control_valid, choice.control_waits, 1),
            ("user", self.user_heads, self.user_valid, choice.user_waits, 0),
        ]:
            for i in range(len(valid)):
                route = self._route(m, f"{name}_route{i}", heads[i])
                m.d.comb += [route.control_inbox.eq(control), waits[i].eq(route.hold != Hold.NONE)]
                forward_holds.append(valid[i] & (route.hold == Hold.FORWARD))
                event_holds.append(valid[i] & (route.hold == Hold.EVENT))
        drain_waits = dest.draining & dest.draining_control & self.messages_wait
        m.d.comb += [
            choice.draining.eq(dest.draining),
            choice.drain_waits.eq(drain_waits),
            choice.control_valid.eq(self.control_valid),
            choice.offer_valid.eq(self.offer_valid),
            choice.user_valid.eq(self.user_valid),
            self.take.eq(choice.choice),
            self.forward_holds.eq(sum(forward_holds)),
            self.event_holds.eq(sum(event_holds) + drain_waits),
        ]

        # The frame taken, copied as its port gives it up; handled in the next clock.
        taken_frame = Signal(FRAME_BITS)
        take, at = self.take.source, self.take.index
        m.d.comb += choice.enable.eq(self.choice.source == Source.NONE)
        m.d.sync += self.choice.eq(self.take)
        with m.Switch(take):
            with m.Case(Source.CONTROL):
                m.d.sync += taken_frame.eq(self.control_heads[at])
            with m.Case(Source.USER):
                m.d.sync += taken_frame.eq(self.user_heads[at])
            with m.Case(Source.OFFER):
                m.d.sync += taken_frame.eq(self.offers[at])

        # The frame handled: the drain's, or the copy taken. Only the copy taken is routed and
        # checked here: a drained frame was routed as it arrived, and whether it is a message
        # was judged then and kept beside it (``drain_message_ok``), so the reorder memory's
        # output feeds data alone, no decision of the clock.
        source = self.choice.source
        frame = self.frame
        drain = source == Source.DRAIN
        m.d.comb += frame.eq(Mux(drain, dest.drain_frame, taken_frame))
        route = self._route(m, "route", taken_frame)
        m.submodules.parser = parser = MessageParser(self._topology, C)
        m.d.comb += parser.frame.eq(taken_frame)
        message_ok = Mux(drain, dest.drain_message_ok, parser.message_ok)
        h = route.header
        inbox = (source == Source.CONTROL) | (source == Source.USER)
        offer = source == Source.OFFER
        # A frame of my own stream taken out of a port is still in its store (10.7).
        own = (h.origin == self._node) & (h.kind != NodeKind.ACK)

        arriving = Signal(range(self._streams))
        m.d.comb += [
            arriving.eq(route.peer * (C + 1) + route.port_class),
            dest.arrive.eq(inbox & (route.way == Way.ARRIVE)),
            dest.stream.eq(arriving),
            dest.seq.eq(h.seq),
            dest.frame.eq(taken_frame),
            dest.message_ok.eq(parser.message_ok),
            dest.drain.eq(drain),
            dest.control_ack.eq(self.control_ack),
            dest.control_ack_origin.eq(self.control_ack_origin),
            self.control_ack_expected.eq(dest.control_ack_expected),
        ]
        # The stream of a delivery: the arriving one, or the draining one.
        now = Signal(range(self._streams))
        now_peer, now_cls = Signal(range(self._topology.num_nodes - 1)), Signal(range(C + 1))
        m.d.comb += now.eq(Mux(dest.drain, dest.drain_stream, arriving))
        with m.Switch(now):
            for k in range(self._streams):
                with m.Case(k):
                    m.d.comb += [now_peer.eq(k // (C + 1)), now_cls.eq(k % (C + 1))]
        user_delivered = dest.delivered & (now_cls != C)
        control_delivered = dest.delivered & (now_cls == C)
        ack_copy_user = dest.ack_copy & (route.port_class != C)

        m.d.comb += [
            self.forward.eq((inbox & (route.way == Way.FORWARD)) | (offer & ~own)),
            self.forward_peer.eq(route.peer),
            self.forward_class.eq(route.port_class),
            self.forward_front.eq(offer),
            self.taken.eq(offer & own),
            self.taken_peer.eq(route.peer),
            self.taken_cls.eq(h.cls),
            self.taken_kind.eq(h.kind),
            self.taken_seq.eq(h.seq),
            self.release.eq(inbox & (route.way == Way.ACK) & parser.ack_ok),
            self.release_peer.eq(route.peer),
            self.release_cls.eq(h.cls),
            self.release_kind.eq(route.ack.stream),
            self.release_seq.eq(h.seq),
            self.deliver.eq(user_delivered),
            self.deliver_peer.eq(now_peer),
            self.deliver_cls.eq(now_cls),
            self.event.eq(control_delivered & message_ok),
            self.event_peer.eq(now_peer),
            self.event_last.eq(dest.last),
            # A user stream's ACK: due on a delivery, or again for a duplicate.
            self.ack.eq((user_delivered & dest.ack_due) | ack_copy_user),
            self.ack_stream.eq(Mux(ack_copy_user, arriving, now)),
            self.ack_expected.eq(Mux(ack_copy_user, dest.stream_expected, dest.expected)),
            # A control stream's ACK the control engine owes: for a duplicate, or after the
            # last frame of a drain that was no message.
            self.ack_due.eq((dest.ack_copy & ~ack_copy_user) | (control_delivered & ~message_ok & dest.last)),
            self.ack_due_peer.eq(now_peer),
            self.held.eq(dest.held),
            self.duplicate.eq(dest.duplicate | (dest.held & dest.copy)),
            self.malformed.eq(
                (inbox & (route.way == Way.MALFORMED))
                | (inbox & (route.way == Way.ACK) & ~parser.ack_ok)
                | dest.refused
                | (control_delivered & ~message_ok)
            ),
        ]
        return m
