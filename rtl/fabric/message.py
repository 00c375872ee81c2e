"""Node frames and control messages checked and built in hardware (PROTOCOL.md 10.2, 10.3); twin
of golden/fabric/message.py (``parse_header``, ``parse_message``, ``parse_ack``;
``Report.slices``, ``VerdictMsg.slices``, ``message_payload``)."""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from golden import encoding as enc
from golden.encoding import MsgType, NodeKind, Verdict
from golden.params import check_int
from golden.topology import Topology, check_topology
from rtl.common import fields
from rtl.common.fields import layout
from rtl.fabric.reports import ENTRY

FRAME = data.ArrayLayout(enc.SLICE_BITS, enc.SLICES_PER_FRAME)
PAYLOAD = data.ArrayLayout(enc.SLICE_BITS, enc.SLICES_PER_FRAME - 1)  # slices 1-7


class MessageParser(wiring.Component):
    """Checks a received node frame and reads its fields.

    ``frame`` (in, ``FRAME``: slice i in bits 64i..64i+63, as a link port delivers it). Outputs
    (combinational): ``header`` (slice 0 through ``enc.NODE_HEADER``) and ``header_ok`` (10.2:
    a kind 0-2, node ids in the fabric, a user class the fabric has, class 0 for a control
    frame, reserved bits zero); ``report`` and ``verdict`` (slice 1 through ``enc.REPORT_HEAD``
    and ``enc.VERDICT_HEAD``) and ``message_ok`` (slices 1-7 are a well-formed REPORT or VERDICT
    on this fabric: the rules of 10.3); ``ack_ok`` (an ACK's payload is well formed: a stream
    kind USER or CONTROL, every other bit zero, and class 0 in the header for a control
    stream's). ``message_ok`` and ``ack_ok`` judge the frame as those messages: the node reads
    the one the header's kind calls for.

    ``topology``: the fabric (which links exist, their ends and arbiters); ``user_classes``: the
    user classes (1..3).

    Latency: none (logic only). Failure behaviour: none; ValueError at construction for bad
    parameters.
    """

    def __init__(self, topology: Topology, user_classes: int):
        check_topology(topology)
        check_int("user_classes", user_classes, 1, enc.MAX_CLASSES - 1)
        self._topology, self._user_classes = topology, user_classes
        super().__init__(
            {
                "frame": In(FRAME),
                "header": Out(layout(enc.NODE_HEADER)),
                "header_ok": Out(1),
                "report": Out(layout(enc.REPORT_HEAD)),
                "verdict": Out(layout(enc.VERDICT_HEAD)),
                "message_ok": Out(1),
                "ack_ok": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        t = self._topology
        s = [Value.cast(self.frame[i]) for i in range(enc.SLICES_PER_FRAME)]
        h = self.header
        m.d.comb += [h.eq(s[0]), self.report.eq(s[1]), self.verdict.eq(s[1])]
        m.d.comb += self.header_ok.eq(header_ok(h, t.num_nodes, self._user_classes))

        ack = s[1]
        ack_kind = ack[: enc.ACK_BODY.width("stream")]
        m.d.comb += self.ack_ok.eq(
            ((ack_kind == NodeKind.USER) | (ack_kind == NodeKind.CONTROL))
            & ~(ack & enc.ACK_BODY.reserved_mask).any()
            & ~any_bits(s[2:])
            & ((ack_kind != NodeKind.CONTROL) | (h.cls == 0))
        )

        def half_ok(value):
            return value[enc.HALF_STATE_BITS :] == 0

        # Facts about the message's link, read off the graph: its ends and arbiters.
        r, v = self.report, self.verdict
        end_lo, end_hi = Signal(enc.NODE_ID_BITS), Signal(enc.NODE_ID_BITS)
        writer_is_end, writer_is_arbiter, subject_is_end = Signal(), Signal(), Signal()
        link_ok = Signal()
        with m.Switch(r.link):
            for link, (a, b) in enumerate(t.links):
                with m.Case(link):
                    m.d.comb += [
                        link_ok.eq(1),
                        end_lo.eq(a),
                        end_hi.eq(b),
                        writer_is_arbiter.eq(is_one_of(r.writer, t.arbiters(link))),
                    ]
        m.d.comb += [
            writer_is_end.eq((r.writer == end_lo) | (r.writer == end_hi)),
            subject_is_end.eq((v.subject == end_lo) | (v.subject == end_hi)),
        ]

        report_ok = writer_is_end & half_ok(s[2]) & (r.reserved == 0) & ~any_bits(s[3:])

        def leaving(head, half):
            """Slices ``head``, ``half`` are a REPORT of an end of this link leaving UP."""
            carried = data.View(layout(enc.REPORT_HEAD), head)
            return (
                (carried.type == MsgType.REPORT)
                & (carried.reserved == 0)
                & half_ok(half)
                & (carried.link == r.link)
                & ((carried.writer == end_lo) | (carried.writer == end_hi))
                & ~carried.up,
                carried,
            )

        first_ok, first = leaving(s[2], s[3])
        second_ok, second = leaving(s[4], s[5])
        one_report = (s[4] == 0) & (s[5] == 0)
        never_heard = ~first.up & (first.session == 0) & ~first.hears
        down_ok = Signal()
        with m.If(one_report):
            # Resting on the report of an end that never heard the link (10.5).
            m.d.comb += down_ok.eq(first_ok & never_heard)
        with m.Else():
            m.d.comb += down_ok.eq(first_ok & second_ok & (first.writer == end_lo) & (second.writer == end_hi))

        code = v.verdict
        by_node = (code == Verdict.NODE_DOWN) | (code == Verdict.UNREACHABLE)
        link_down, link_up = code == Verdict.LINK_DOWN, code == Verdict.LINK_UP
        verdict_ok = (
            (code != Verdict.NONE)
            & (code <= max(Verdict))
            & (v.epoch != 0)
            & ~any_bits(s[6:])
            & (~by_node | (subject_is_end & (v.subject != v.writer)))
            & (by_node | (v.subject == 0))
            & (~link_down | down_ok)
            & (link_down | ~any_bits(s[2:6]))
            & (writer_is_arbiter | (link_up & writer_is_end))
        )

        with m.If(link_ok & (r.writer < t.num_nodes)):
            with m.If(r.type == MsgType.REPORT):
                m.d.comb += self.message_ok.eq(report_ok)
            with m.Elif(r.type == MsgType.VERDICT):
                m.d.comb += self.message_ok.eq(verdict_ok)
        return m


class MessageBuilder(wiring.Component):
    """The payload (slices 1-7) of a control message node ``node_id`` writes: a REPORT of one of
    its ports, or a VERDICT it decides (as an arbiter, or a LINK_UP as an end standing in, 10.5)
    with the REPORTs a LINK_DOWN rests on. (A verdict the node passes on leaves as it arrived.)

    Ports (in): ``verdict`` (build a VERDICT; else a REPORT) and ``link``. For a REPORT: ``up``,
    ``hears``, ``incident`` and ``session`` (the port's counts as a REPORT carries them: wrapped
    to the field, the session never 0 once entangled, golden ``wire_session``) and ``half`` (the
    port's half-state). For a VERDICT: ``code`` (``Verdict``), ``subject`` (a node id; 0 unless
    NODE_DOWN or UNREACHABLE), ``epoch`` (the count, wrapped to the field), ``ends`` (the
    link's entries in :class:`rtl.fabric.reports.Reports`) and ``carry`` (bit 0: the lower
    end's REPORT goes, bit 1: the higher end's; the lower first). Out: ``payload``
    (``PAYLOAD``, slice 1 first; the slices after the message zero).

    Latency: none (logic only). Failure behaviour: none (the fields are the caller's, and the
    golden model builds what they give); ValueError at construction for a bad ``node_id``.
    """

    def __init__(self, *, node_id: int):
        self._node = check_int("node_id", node_id, 0, enc.MAX_NODES - 1)
        super().__init__(
            {
                "verdict": In(1),
                "link": In(enc.LINK_ID_BITS),
                "up": In(1),
                "hears": In(1),
                "incident": In(enc.INCIDENT_BITS),
                "session": In(enc.SESSION_BITS),
                "half": In(enc.HALF_STATE_BITS),
                "code": In(Verdict),
                "subject": In(enc.NODE_ID_BITS),
                "epoch": In(enc.EPOCH_BITS),
                "ends": In(data.ArrayLayout(ENTRY, 2)),
                "carry": In(2),
                "payload": Out(PAYLOAD),
            }
        )

    def elaborate(self, platform):
        m = Module()
        report = [
            fields.pack(
                enc.REPORT_HEAD,
                type=int(MsgType.REPORT),
                link=self.link,
                writer=self._node,
                up=self.up,
                hears=self.hears,
                incident=self.incident,
                session=self.session,
            )[: enc.SLICE_BITS],
            self.half,
        ]
        head = fields.pack(
            enc.VERDICT_HEAD,
            type=int(MsgType.VERDICT),
            link=self.link,
            writer=self._node,
            verdict=self.code,
            subject=self.subject,
            epoch=self.epoch,
        )[: enc.SLICE_BITS]
        pad = Const(0, enc.SLICE_BITS - enc.HALF_STATE_BITS)
        carried = [Cat(e.head.as_value(), e.half, pad) for e in self.ends]
        # The first carried REPORT: the lower end's if it goes, else the higher end's; the
        # second only when both go.
        first = Mux(self.carry[0], carried[0], Mux(self.carry[1], carried[1], 0))
        second = Mux(self.carry == 0b11, carried[1], 0)
        verdict = Cat(head, first, second)
        m.d.comb += self.payload.eq(Mux(self.verdict, verdict, Cat(*report)))
        return m


def node_header(*, kind: NodeKind, origin: int, dest: int, cls: int, seq) -> Value:
    """Slice 0 of a frame node ``origin`` sends (``enc.NODE_HEADER``, golden ``node_frame``):
    ``kind``, ``origin``, ``dest`` and ``cls`` fixed, ``seq`` a value."""
    return fields.pack(enc.NODE_HEADER, kind=int(kind), origin=origin, dest=dest, cls=cls, seq=seq)[: enc.SLICE_BITS]


def header_ok(h, num_nodes: int, user_classes: int) -> Value:
    """Node header ``h`` (a view through ``layout(enc.NODE_HEADER)``) is well formed (10.2): a
    kind 0-2, node ids in a fabric of ``num_nodes``, origin and destination apart, a user class
    of ``user_classes``, class 0 for a control frame, reserved bits zero."""
    return (
        (h.kind <= NodeKind.ACK)
        & (h.origin < num_nodes)
        & (h.dest < num_nodes)
        & (h.origin != h.dest)
        & (h.cls < user_classes)
        & ((h.kind != NodeKind.CONTROL) | (h.cls == 0))
        & (h.reserved == 0)
    )


def any_bits(slices):
    """Some bit of ``slices`` (a list of slice values) is set."""
    bits = 0
    for value in slices:
        bits = bits | value.any()
    return bits


def is_one_of(value, constants):
    """``value`` equals one of ``constants`` (no constants: 0)."""
    hit = 0
    for c in constants:
        hit = hit | (value == c)
    return hit
