"""A fabric node in hardware: link ports, the topology table, routing, verdicts and failover
(PROTOCOL.md 10); twin of golden/fabric/node.py."""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from golden import encoding as enc
from golden.encoding import NodeKind, Verdict
from golden.params import (
    E2E_ACK_EVERY,
    E2E_WINDOW,
    EVENT_MESSAGES,
    FORWARD_DEPTH,
    check_int,
    check_node_params,
    node_port_params,
)
from golden.topology import Topology, check_topology
from rtl.common.slice import LinkPortSignature
from rtl.fabric.control_engine import ControlEngine
from rtl.fabric.frame_choice import Source
from rtl.fabric.frame_engine import FrameEngine
from rtl.fabric.outbound import PAYLOAD_BITS, Outbound
from rtl.fabric.port_watch import PortWatch
from rtl.link.core import LinkCore

S = enc.SLICE_BITS


def delivery_layout() -> data.StructLayout:
    """A user frame a node delivers: the node it came from, its class and its 56-byte payload
    (byte 0 in bits 7..0)."""
    return data.StructLayout({"origin": enc.NODE_ID_BITS, "cls": enc.CLASS_BITS, "payload": PAYLOAD_BITS})


class Node(wiring.Component):
    """Node ``node_id`` of ``topology`` (golden :class:`golden.fabric.node.Node`, cycle for
    cycle, with the same parameters: ``user_classes``, ``seed``, ``ack_every``, ``e2e_window``,
    ``forward_depth`` and the ports' ``link_params``). One :class:`rtl.link.core.LinkCore` per
    link of the node (its ports, in link order) with a :class:`rtl.fabric.port_watch.PortWatch`
    each, the :class:`rtl.fabric.frame_engine.FrameEngine`, the
    :class:`rtl.fabric.control_engine.ControlEngine` and the :class:`rtl.fabric.outbound.Outbound`
    side, wired as the golden ``Node.step`` orders them (PROTOCOL.md 10.11): every choice reads
    the registers at the start of the clock, every write lands at its edge.

    Ports, per link port ``p`` (in link order): ``rx[p]``/``tx[p]`` (the link's words),
    ``ait_in[p]``, ``withdraw[p]``, ``ait_out[p]``, ``returned[p]`` with ``returned_value[p]``
    (the port's token, as :class:`LinkCore` has them). User side: ``user_in[k]``, a stream of
    56-byte payloads per user stream (destination peer ``d``, class ``c`` at ``k = d *
    user_classes + c``; peers are the other nodes in id order), ready while the stream's
    end-to-end window has room (10.10); ``user_out``, the frames delivered (:func:`delivery_layout`,
    at most one a clock, with no back-pressure: the user keeps ``ready`` high, and a frame it
    does not take raises ``fault``). Status: ``port_up`` (a bit per port), ``table_up`` (a bit
    per link of the fabric), ``verdict`` with ``verdict_link``, ``verdict_code`` and
    ``verdict_subject`` (a pulse: a verdict adopted), ``fault`` (sticky: a queue the node sizes so
    that it cannot overflow did, or the user refused a delivery).

    Latency: a user frame handed in can leave by a port in the same clock; a frame delivered by
    a port is taken by the frame engine from the next, and handled in the clock after it takes
    it. Failure behaviour: as the golden node (malformed frames and messages are dropped);
    ValueError at construction for bad parameters.
    """

    def __init__(
        self,
        *,
        node_id: int,
        topology: Topology,
        user_classes: int = 1,
        seed: int = 0,
        ack_every: int = E2E_ACK_EVERY,
        e2e_window: int = E2E_WINDOW,
        forward_depth: int = FORWARD_DEPTH,
        **link_params,
    ):
        self.topology = check_topology(topology)
        self.node_id = topology.check_node("node_id", node_id)
        check_int("seed", seed, 0)
        check_node_params(user_classes, ack_every, e2e_window, forward_depth, link_params)
        self._links = topology.links_of(node_id)
        if not self._links:
            raise ValueError(f"node_id {node_id} has no link in the fabric")
        self._classes, self._window, self._ack_every, self._depth = user_classes, e2e_window, ack_every, forward_depth
        self.port_params = [
            node_port_params(node_id, topology.peer(link, node_id), link, user_classes, seed, link_params)
            for link in self._links
        ]
        self._others = [n for n in range(topology.num_nodes) if n != node_id]
        P, O, C, L = len(self._links), len(self._others), user_classes, len(topology.links)
        super().__init__(
            {
                "rx": In(LinkPortSignature()).array(P),
                "tx": Out(LinkPortSignature()).array(P),
                "ait_in": In(stream.Signature(enc.AIT_VALUE_BITS)).array(P),
                "withdraw": In(P),
                "ait_out": Out(stream.Signature(enc.AIT_VALUE_BITS)).array(P),
                "returned": Out(P),
                "returned_value": Out(data.ArrayLayout(enc.AIT_VALUE_BITS, P)),
                "user_in": In(stream.Signature(PAYLOAD_BITS)).array(O * C),
                "user_out": Out(stream.Signature(delivery_layout())),
                "port_up": Out(P),
                "table_up": Out(L),
                "verdict": Out(1),
                "verdict_link": Out(range(L)),
                "verdict_code": Out(Verdict),
                "verdict_subject": Out(enc.NODE_ID_BITS),
                "fault": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        t, me, C = self.topology, self.node_id, self._classes
        P, O = len(self._links), len(self._others)
        cc = C  # the control class of every port

        ports = []
        for p, params in enumerate(self.port_params):
            m.submodules[f"port{p}"] = port = LinkCore(params)
            ports.append(port)
            connect(m, flipped(self.rx[p]), port.rx)
            connect(m, port.tx, flipped(self.tx[p]))
            connect(m, flipped(self.ait_in[p]), port.ait_in)
            connect(m, port.ait_out, flipped(self.ait_out[p]))
            m.d.comb += [self.returned[p].eq(port.returned), self.returned_value[p].eq(port.returned_value)]
        watches = [PortWatch(params.los_cycles, params.liveness_bound(params.max_rtt)) for params in self.port_params]
        for p, watch in enumerate(watches):
            m.submodules[f"watch{p}"] = watch
        m.submodules.control = ctl = ControlEngine(node_id=me, topology=t)
        m.submodules.frames = fe = FrameEngine(
            node_id=me, topology=t, user_classes=C, e2e_window=self._window, ack_every=self._ack_every
        )
        m.submodules.outbound = ob = Outbound(
            node_id=me,
            topology=t,
            user_classes=C,
            e2e_window=self._window,
            forward_depth=self._depth,
            takeout_room=sum(params.window for params in self.port_params),
        )

        up = Cat(port.status.state == enc.LinkState.UP for port in ports)

        # --- the ports' watches and what the control engine reads of them ------------------
        for p, (port, watch) in enumerate(zip(ports, watches)):
            m.d.comb += [
                watch.up.eq(up[p]),
                watch.heard.eq(port.heard),
                watch.ever_up.eq(ctl.ever_up[p]),
                ctl.ports[p].up.eq(up[p]),
                ctl.ports[p].hears.eq(watch.hears),
                ctl.ports[p].half.eq(port.half_state),
                ctl.ports[p].settle_ready.eq(port.settle.ready),
                ctl.ports[p].session.eq(watch.session),
            ]
        # A port's change is queued as an event; so is a port stuck out of UP while it hears its
        # peer, once another port has come UP, unless the control engine holds it absent (10.3).
        any_ever_up = ctl.ever_up.any()
        m.d.comb += [
            ctl.port_event.eq(Cat(w.change for w in watches)),
            ctl.port_event_up.eq(up),
            ctl.never_up.eq(Cat(any_ever_up & w.stuck & ~ctl.absent[p] for p, w in enumerate(watches))),
        ]

        # --- the control engine and the outbound side ----------------------------------------
        # What the action of a clock asks of the stores and the ports lands in the next, from
        # registers (10.11): its frames for the control stores (slices 1-5 of each, all a store
        # keeps) and its settle. The routes read the table and the records from their registers
        # too, so the settle's new hops are those of the table the action left.
        kept = slice(S, (1 + enc.CONTROL_MESSAGE_SLICES) * S)
        store_write = Signal(O, name="control_store_write")
        store_frame = Signal(data.ArrayLayout(kept.stop - kept.start, O), name="control_store_frame")
        settle, settle_port = Signal(name="control_settle"), Signal(range(P), name="control_settle_port")
        settle_half = Signal(enc.HALF_STATE_BITS, name="control_settle_half")
        m.d.sync += [
            store_write.eq(ctl.store_write),
            settle.eq(ctl.settle),
            settle_port.eq(ctl.settle_port),
            settle_half.eq(ctl.settle_half),
        ]
        for i in range(O):
            m.d.sync += store_frame[i].eq(ctl.store_frame[i][kept])
            m.d.comb += ob.control_frame[i][kept].eq(store_frame[i])
        m.d.comb += [
            ctl.store_full.eq(ob.store_full),
            ctl.next_seq.eq(ob.next_seq),
            ob.control_write.eq(store_write),
            ob.control_ack.eq(ctl.ack),
            ob.control_ack_peer.eq(ctl.ack_peer),
            ob.control_ack_expected.eq(fe.control_ack_expected),
            fe.control_ack.eq(ctl.ack),
            fe.control_ack_origin.eq(ctl.ack_peer),
            ob.settle.eq(settle),
            ob.settle_port.eq(settle_port),
            # The table and the ports' records as the clock starts: the routes of the rewind
            # and of the settle read them (10.7, 10.11).
            ob.table_up.eq(ctl.table_up),
            ob.port_up.eq(ctl.recorded_up),
        ]
        for p, port in enumerate(ports):
            link = self._links[p]
            m.d.comb += [
                port.settle.valid.eq(settle & (settle_port == p)),
                port.settle.payload.eq(settle_half),
                # What each class of the port takes, from the table and the records at the start
                # of the clock: a control frame goes once the last has left whole (10.11).
                ob.control_open[p].eq(
                    (ctl.table_up[link] | ctl.recorded_up[p]) & ~port.unsent[cc] & port.frames_in[cc].ready
                ),
                ob.link_up[p].eq(ctl.table_up[link]),
                ob.ready[p].eq(Cat(port.frames_in[c].ready for c in range(C))),
                # A settle and its take-out done at the start of the clock release the streams
                # it paused.
                ob.settle_done[p].eq(port.settle.ready & ~port.takeout_busy),
                ob.resend[p].eq(port.settle_skipped),
            ]
            for c in range(C + 1):
                m.d.comb += [
                    port.frames_in[c].valid.eq(ob.take_valid[p][c]),
                    port.frames_in[c].payload.eq(ob.take_frame[p][c]),
                ]
        for k in range(O * C):
            m.d.comb += [
                ob.user_write[k].eq(self.user_in[k].valid & ob.user_ready[k]),
                ob.user_payload[k].eq(self.user_in[k].payload),
                self.user_in[k].ready.eq(ob.user_ready[k]),
            ]

        # --- the frame engine ----------------------------------------------------------------
        for p, port in enumerate(ports):
            m.d.comb += [
                fe.control_heads[p].eq(port.frames_out[cc].payload),
                fe.control_valid[p].eq(port.frames_out[cc].valid),
            ]
            for c in range(C):
                m.d.comb += [
                    fe.user_heads[p * C + c].eq(port.frames_out[c].payload),
                    fe.user_valid[p * C + c].eq(port.frames_out[c].valid),
                ]
            # A settled port offers one class's taken-out frames at a time.
            frame = 0
            for c in range(C + 1):
                frame = Mux(port.taken[c].valid, port.taken[c].payload, frame)
            m.d.comb += [
                fe.offers[p].eq(frame),
                fe.offer_valid[p].eq(Cat(port.taken[c].valid for c in range(C + 1)).any()),
            ]
        m.d.comb += [
            fe.full.eq(ob.full),
            fe.pathless.eq(ob.pathless),
            fe.messages_wait.eq(ctl.events_count >= EVENT_MESSAGES),
        ]
        # The frame the engine takes, its port gives up in this clock.
        source, index = fe.take.source, fe.take.index
        for p, port in enumerate(ports):
            m.d.comb += port.frames_out[cc].ready.eq((source == Source.CONTROL) & (index == p))
            for c in range(C):
                m.d.comb += port.frames_out[c].ready.eq((source == Source.USER) & (index == p * C + c))
            for c in range(C + 1):
                m.d.comb += port.taken[c].ready.eq((source == Source.OFFER) & (index == p) & port.taken[c].valid)

        # What the frame engine said to do with its frame.
        queue = fe.forward_peer * (C + 1) + fe.forward_class
        m.d.comb += [
            ob.forward.eq(fe.forward),
            ob.forward_queue.eq(queue),
            ob.forward_front.eq(fe.forward_front),
            ob.forward_frame.eq(fe.frame),
            ob.taken.eq(fe.taken),
            ob.taken_peer.eq(fe.taken_peer),
            ob.taken_cls.eq(fe.taken_cls),
            ob.taken_kind.eq(fe.taken_kind),
            ob.taken_seq.eq(fe.taken_seq),
            ob.ack.eq(fe.ack),
            ob.ack_queue.eq(fe.ack_stream),
            ob.ack_expected.eq(fe.ack_expected),
            ctl.message_event.eq(fe.event),
            ctl.message.eq(fe.frame[S:]),
            ctl.message_origin.eq(fe.event_peer),
            ctl.message_last.eq(fe.event_last),
            ctl.flag_ack.eq(Mux(fe.ack_due, 1 << fe.ack_due_peer, 0)),
        ]
        # An ACK that frees a slot of a control stream flags it for the control engine if
        # messages waited, or could wait: its store was full at the start of the clock (10.10).
        # An ACK of my stream releases its frames a clock after the frame engine handles it, from
        # registers (10.11), as the control engine's writes land: it ended the node's longest
        # path, from the handled frame through the release into a store's memory address.
        release = Signal(name="release")
        release_peer = Signal.like(fe.release_peer, name="release_peer")
        release_cls = Signal.like(fe.release_cls, name="release_cls")
        release_kind = Signal.like(fe.release_kind, name="release_kind")
        release_seq = Signal.like(fe.release_seq, name="release_seq")
        m.d.sync += [
            release.eq(fe.release),
            release_peer.eq(fe.release_peer),
            release_cls.eq(fe.release_cls),
            release_kind.eq(fe.release_kind),
            release_seq.eq(fe.release_seq),
        ]
        m.d.comb += [
            ob.release.eq(release),
            ob.release_peer.eq(release_peer),
            ob.release_cls.eq(release_cls),
            ob.release_kind.eq(release_kind),
            ob.release_seq.eq(release_seq),
        ]
        may_flush = ctl.waiting | ob.store_full
        control_release = release & (release_kind == NodeKind.CONTROL)
        m.d.comb += ctl.flag_flush.eq(Mux(control_release, may_flush & (1 << release_peer), 0))

        # --- the ports' tokens: a settled port's held token goes back to the user ------------
        withdraw_next = Signal(P)
        m.d.sync += withdraw_next.eq(Cat(port.settle_applied for port in ports))
        for p, port in enumerate(ports):
            m.d.comb += port.withdraw.eq(self.withdraw[p] | withdraw_next[p])

        # --- the user side and the status ----------------------------------------------------
        # Peers are the other nodes in id order: peer d is node d below me, d + 1 from me up.
        origin = fe.deliver_peer + 1 if me == 0 else Mux(fe.deliver_peer >= me, fe.deliver_peer + 1, fe.deliver_peer)
        m.d.comb += [
            self.user_out.valid.eq(fe.deliver),
            self.user_out.payload.origin.eq(origin),
            self.user_out.payload.cls.eq(fe.deliver_cls),
            self.user_out.payload.payload.eq(fe.frame[S:]),
            self.port_up.eq(up),
            self.table_up.eq(ctl.table_up),
            self.verdict.eq(ctl.verdict),
            self.verdict_link.eq(ctl.verdict_link),
            self.verdict_code.eq(ctl.verdict_code),
            self.verdict_subject.eq(ctl.verdict_subject),
        ]
        overflow = ctl.overflow | ob.overflow | Cat(port.status.queue_overflow for port in ports).any()
        overflow |= self.user_out.valid & ~self.user_out.ready
        with m.If(overflow):
            m.d.sync += self.fault.eq(1)
        return m
