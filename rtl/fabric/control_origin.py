"""Where a control message a node writes goes, in hardware (PROTOCOL.md 10.10); twin of
golden/fabric/control_origin.py."""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden import encoding as enc
from golden.encoding import MsgType, NodeKind
from golden.topology import Topology, check_topology
from rtl.common import fields
from rtl.fabric.message import PAYLOAD, node_header
from rtl.fabric.waiting import WaitingMessages
from rtl.link.framer import FRAME_BITS

SEQ = enc.E2E_SEQ_BITS


class ControlOrigin(wiring.Component):
    """Node ``node_id``'s control stream to ``dest`` on ``topology``: the messages waiting for a
    slot of its window (:class:`rtl.fabric.waiting.WaitingMessages`, a slot per REPORT about
    each of the node's ports, in link order, then per VERDICT about each link of the fabric),
    and the frame each message written is numbered into. The stream's store is the caller's.

    Ports (in): ``write`` with ``payload`` (``PAYLOAD``: golden :meth:`write`, a message the
    control engine writes); ``flush`` (golden :meth:`flush`; nothing when no message waits or
    the window is full); ``store_full`` and ``next_seq``, the store's. One of ``write`` and
    ``flush`` a clock (one control action). Out, combinational: ``store_write`` and
    ``store_frame`` (the frame for the store's write port), ``superseded`` and ``flag``
    (golden ``Written``); ``waiting``, the messages waiting (a register).

    Latency: the frame is combinational; a message parked waits from the next clock. Failure
    behaviour: none; ValueError at construction for bad parameters.
    """

    def __init__(self, *, node_id: int, dest: int, topology: Topology):
        self._topology = check_topology(topology)
        self._node = topology.check_node("node_id", node_id)
        self._dest = topology.check_node("dest", dest)
        if dest == node_id:
            raise ValueError(f"dest must be another node than node_id {node_id}")
        self._links = topology.links_of(node_id)
        self._capacity = len(self._links) + len(topology.links)
        super().__init__(
            {
                "write": In(1),
                "payload": In(PAYLOAD),
                "flush": In(1),
                "store_full": In(1),
                "next_seq": In(SEQ),
                "store_write": Out(1),
                "store_frame": Out(FRAME_BITS),
                "superseded": Out(1),
                "flag": Out(1),
                "waiting": Out(range(self._capacity + 1)),
            }
        )

    def elaborate(self, platform):
        m = Module()
        # A message fills the first CONTROL_MESSAGE_SLICES of the payload; the rest are zeros.
        filled = enc.CONTROL_MESSAGE_SLICES * enc.SLICE_BITS
        m.submodules.waiting = waiting = WaitingMessages(capacity=self._capacity, width=filled)
        payload = self.payload.as_value()
        head = fields.view(enc.REPORT_HEAD, payload[: enc.SLICE_BITS])
        # The slot of what the message is about.
        slot = Signal(range(self._capacity))
        with m.If(head.type == MsgType.REPORT):
            for port, link in enumerate(self._links):
                with m.If(head.link == link):
                    m.d.comb += slot.eq(port)
        with m.Else():
            m.d.comb += slot.eq(len(self._links) + head.link)

        some = waiting.count != 0
        park = self.write & (self.store_full | some)
        flushing = self.flush & some & ~self.store_full
        header = node_header(kind=NodeKind.CONTROL, origin=self._node, dest=self._dest, cls=0, seq=self.next_seq)
        body = Mux(flushing, waiting.oldest_payload, payload[:filled])
        m.d.comb += [
            waiting.park.eq(park),
            waiting.park_slot.eq(slot),
            waiting.park_payload.eq(payload[:filled]),
            waiting.pop.eq(flushing),
            self.waiting.eq(waiting.count),
            self.superseded.eq(waiting.superseded),
            self.flag.eq((park & ~self.store_full) | flushing),
            self.store_write.eq((self.write & ~park) | flushing),
            self.store_frame.eq(Cat(header, body, Const(0, PAYLOAD.size - filled))),
        ]
        return m
