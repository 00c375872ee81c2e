"""A fabric node with AXI4-Stream user ports in a clock domain of the user's (docs/PORTS.md).

:class:`AxisNode` puts :class:`rtl.fabric.node.Node` and its link ports in the ``link`` domain
and its user streams in the ``core`` domain. A user frame of the fabric is 56 bytes (PROTOCOL.md
10.2: the first slice of a fabric frame is its header), so a packet is seven 64-bit beats, laid
out as rtl/link/axis.py lays out a link frame's eight: byte k in lane k % 8 of beat k // 8.
"""

from amaranth.hdl import Cat, DomainRenamer, Module
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from golden import encoding as enc
from golden.params import check_int
from rtl.common.cdc import BisyncFIFO, check_depth
from rtl.common.queue import Queue
from rtl.common.stream_slice import StreamSkid
from rtl.fabric.node import Node
from rtl.fabric.outbound import PAYLOAD_BITS
from rtl.link.axis import (
    AxisToFrames,
    AxiStreamSignature,
    FramesToAxis,
    axis_into_stream,
    beat_layout,
    stream_into_axis,
)

PAYLOAD_BEATS = PAYLOAD_BITS // enc.SLICE_BITS
BAD_PACKET_BITS = 16
DEFAULT_FIFO_DEPTH = 16
DEFAULT_DELIVERY_DEPTH = 4
VERDICT_PORTS = ("verdict", "verdict_link", "verdict_code", "verdict_subject")


class AxisNode(wiring.Component):
    """:class:`Node` ``node_id`` of ``topology`` with an AXI4-Stream port pair per user class in
    the ``core`` domain; every other parameter is :class:`Node`'s (validated there).

    Ports, ``core`` domain: ``s_axis[c]``, packets of class ``c`` to send, each seven beats with
    ``tdest`` the node it goes to (NODE_ID_BITS, the same on every beat; the last beat's counts);
    ``m_axis[c]``, packets of class ``c`` delivered, with ``tid`` the node that sent them. ``link``
    domain: the node's link ports (``rx``, ``tx``, ``ait_in``, ``withdraw``, ``ait_out``,
    ``returned``, ``returned_value``, one each per port: every port of a node runs on the node's
    clock), its status (``port_up``, ``table_up``, ``verdict`` with ``verdict_link``,
    ``verdict_code``, ``verdict_subject``, ``fault``), and ``bad_packets``: packets dropped
    because they are not seven full beats (rtl/link/axis.py says which) or their ``tdest`` is not
    another node of the fabric, all classes, wrapping at 2**16. ``flushed`` (``core`` domain)
    pulses when a reset of the link domain discarded delivered beats the user had not taken: a
    packet in progress on ``m_axis`` then ends without its remaining beats, and the next beat
    starts a new packet.

    Sending: beats cross in a :class:`BisyncFIFO` of ``fifo_depth`` beats per class and are
    assembled in the ``link`` domain; the assembled payload waits until the node takes it for its
    destination, while that stream's end-to-end window has room (PROTOCOL.md 10.10), and holds
    the class's later packets behind it meanwhile. Delivering: the node delivers at most one
    frame a clock and cannot wait; each class queues ``delivery_depth`` frames, cut into beats
    that cross back in a :class:`BisyncFIFO`. A class's port carries at most one beat per cycle
    of the slower clock, seven per frame, while the node's ports together may deliver more (each
    port receives at most a frame per eight link clocks): a user that takes every beat and a
    class fed by one port at a time never fill the queue. A frame that finds its class's queue
    full is refused and raises ``fault`` (sticky), as :class:`Node` says.

    Latency, on top of the node's: a packet is offered to the node 1 core cycle plus 5-6 link
    cycles after its last beat (skid 1; FIFO 3-4, skid 1, assembly 1); a delivered frame's first
    beat is on ``m_axis`` 3 link cycles plus 4-5 core cycles after the node delivered it.

    Failure behaviour: the node's. A reset of one domain while the other runs loses what the
    FIFOs held, whole packets only (rtl/link/endpoint.py says how); a destination that is not a
    peer loses nothing but the packet. ValueError at construction for a bad parameter.
    """

    def __init__(
        self, *, fifo_depth: int = DEFAULT_FIFO_DEPTH, delivery_depth: int = DEFAULT_DELIVERY_DEPTH, **node_params
    ):
        check_depth("fifo_depth", fifo_depth)
        check_int("delivery_depth", delivery_depth, 1)
        self.node = Node(**node_params)
        self.topology, self.node_id = self.node.topology, self.node.node_id
        self._fifo_depth, self._delivery_depth = fifo_depth, delivery_depth
        self._classes = C = len(self.node.user_in) // (self.topology.num_nodes - 1)
        node = self.node.signature.members
        members = {
            name: node[name] for name in ("rx", "tx", "ait_in", "withdraw", "ait_out", "returned", "returned_value")
        }
        members.update(
            {
                "s_axis": In(AxiStreamSignature(dest_bits=enc.NODE_ID_BITS)).array(C),
                "m_axis": Out(AxiStreamSignature(id_bits=enc.NODE_ID_BITS)).array(C),
            }
        )
        members.update({name: node[name] for name in ("port_up", "table_up", *VERDICT_PORTS, "fault")})
        members["bad_packets"] = Out(BAD_PACKET_BITS)
        members["flushed"] = Out(1)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        m.submodules.node = node = DomainRenamer("link")(self.node)
        C, depth = self._classes, self._fifo_depth
        me, n = self.node_id, self.topology.num_nodes
        others = [o for o in range(n) if o != me]
        for p in range(len(self.rx)):
            connect(m, flipped(self.rx[p]), node.rx[p])
            connect(m, flipped(self.ait_in[p]), node.ait_in[p])
            connect(m, node.tx[p], flipped(self.tx[p]))
            connect(m, node.ait_out[p], flipped(self.ait_out[p]))
        m.d.comb += node.withdraw.eq(self.withdraw)
        for name in ("returned", "returned_value", "port_up", "table_up", "fault", *VERDICT_PORTS):
            m.d.comb += getattr(self, name).eq(getattr(node, name))

        bad = []
        sent_beat = beat_layout(dest_bits=enc.NODE_ID_BITS)
        for c in range(C):
            m.submodules[f"s_axis_skid{c}"] = u_in = DomainRenamer("core")(StreamSkid(sent_beat))
            m.submodules[f"beats_in{c}"] = f_in = BisyncFIFO(
                depth=depth, w_domain="core", r_domain="link", shape=sent_beat
            )
            m.submodules[f"beats_in_skid{c}"] = k_in = DomainRenamer("link")(StreamSkid(sent_beat))
            m.submodules[f"packets_in{c}"] = assemble = DomainRenamer("link")(
                AxisToFrames(beats=PAYLOAD_BEATS, dest_bits=enc.NODE_ID_BITS)
            )
            axis_into_stream(m, self.s_axis[c], u_in.sink)
            connect(m, u_in.source, f_in.sink)
            connect(m, f_in.source, k_in.sink)
            stream_into_axis(m, k_in.source, assemble.s_axis)
            m.d.comb += assemble.restart.eq(f_in.flushed)
            # The payload goes to the stream of its destination; one for no other node is dropped.
            dest = assemble.frames_dest
            taken = 0
            for d, other in enumerate(others):
                k = d * C + c
                m.d.comb += [
                    node.user_in[k].valid.eq(assemble.frames.valid & (dest == other)),
                    node.user_in[k].payload.eq(assemble.frames.payload),
                ]
                taken |= (dest == other) & node.user_in[k].ready
            unknown = Cat(dest == other for other in others) == 0
            m.d.comb += assemble.frames.ready.eq(taken | unknown)
            bad += [assemble.bad_packet, assemble.frames.valid & unknown]

        delivered = node.user_out.payload
        entry = data.StructLayout({"origin": enc.NODE_ID_BITS, "payload": PAYLOAD_BITS})
        room, flushed = [], []
        for c in range(C):
            m.submodules[f"delivered{c}"] = queue = DomainRenamer("link")(
                Queue(width=entry.size, depth=self._delivery_depth)
            )
            m.submodules[f"packets_out{c}"] = cut = DomainRenamer("link")(
                FramesToAxis(beats=PAYLOAD_BEATS, id_bits=enc.NODE_ID_BITS)
            )
            out_beat = beat_layout(id_bits=enc.NODE_ID_BITS)
            m.submodules[f"beats_out_skid{c}"] = k_out = DomainRenamer("link")(StreamSkid(out_beat))
            m.submodules[f"beats_out{c}"] = f_out = BisyncFIFO(
                depth=depth, w_domain="link", r_domain="core", shape=out_beat
            )
            m.submodules[f"m_axis_skid{c}"] = u_out = DomainRenamer("core")(StreamSkid(out_beat))
            head = data.View(entry, queue.head)
            mine_with_room = (delivered.cls == c) & (queue.count < self._delivery_depth)
            room.append(mine_with_room)
            m.d.comb += [
                queue.push.eq(node.user_out.valid & mine_with_room),
                queue.data.eq(Cat(delivered.origin, delivered.payload)),
                cut.frames.valid.eq(queue.head_valid),
                cut.frames.payload.eq(head.payload),
                cut.frames_id.eq(head.origin),
                queue.pop.eq(queue.head_valid & cut.frames.ready),
            ]
            axis_into_stream(m, cut.m_axis, k_out.sink)
            connect(m, k_out.source, f_out.sink)
            connect(m, f_out.source, u_out.sink)
            stream_into_axis(m, u_out.source, self.m_axis[c])
            flushed.append(f_out.flushed)
        m.d.comb += node.user_out.ready.eq(Cat(*room).any())
        m.d.link += self.bad_packets.eq(self.bad_packets + sum(bad))
        m.d.comb += self.flushed.eq(Cat(*flushed).any())
        return m
