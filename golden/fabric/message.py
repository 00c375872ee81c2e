"""Node frames and control messages on the wire: building them and checking them (PROTOCOL.md
10.2, 10.3).

A node frame is 64 bytes: slice 0 the node header (``enc.NODE_HEADER``), slices 1-7 the payload.
A control frame's payload is a REPORT (``enc.REPORT_HEAD`` and the port's half-state) or a
VERDICT (``enc.VERDICT_HEAD`` and, for a LINK_DOWN, the reports it rests on); an ACK's is
``enc.ACK_BODY``. The parsers return None for a frame or message 10.2 and 10.3 call malformed;
the node counts it and drops it.
"""

from dataclasses import dataclass

from golden import encoding as enc
from golden.common.slice import frame_to_slices, slices_to_frame
from golden.encoding import MsgType, NodeKind, Verdict
from golden.topology import Topology

_SEQ_MOD = 1 << enc.E2E_SEQ_BITS


def node_frame(kind: NodeKind, origin: int, dest: int, cls: int, seq: int, payload: bytes) -> bytes:
    header = enc.NODE_HEADER.pack(kind=int(kind), origin=origin, dest=dest, cls=cls, seq=seq % _SEQ_MOD)
    body = bytes(payload).ljust(enc.NODE_PAYLOAD_BYTES, b"\0")
    return slices_to_frame([header] + frame_to_slices(bytes(8) + body)[1:])


@dataclass(frozen=True)
class Header:
    kind: NodeKind
    origin: int
    dest: int
    cls: int
    seq: int


def parse_header(frame: bytes, num_nodes: int, user_classes: int) -> Header | None:
    """The node header of ``frame``, or None if it is malformed (10.2; a control frame's class is
    0, 10.3; no node sends a frame to itself)."""
    h = frame_to_slices(frame)[0]
    get = enc.NODE_HEADER.get
    kind, origin, dest, cls = get(h, "kind"), get(h, "origin"), get(h, "dest"), get(h, "cls")
    if (
        kind not in {k.value for k in NodeKind}
        or origin >= num_nodes
        or dest >= num_nodes
        or origin == dest
        or cls >= user_classes
        or (kind == NodeKind.CONTROL and cls)
        or h & enc.NODE_HEADER.reserved_mask
    ):
        return None
    return Header(NodeKind(kind), origin, dest, cls, get(h, "seq"))


@dataclass(frozen=True)
class Report:
    """A REPORT (10.3): ``writer``'s port on ``link`` left UP (``up`` False) or entered it."""

    link: int
    writer: int
    up: bool
    hears: bool
    incident: int
    session: int
    half: int

    def slices(self) -> list:
        return [
            enc.REPORT_HEAD.pack(
                type=MsgType.REPORT,
                link=self.link,
                writer=self.writer,
                up=int(self.up),
                hears=int(self.hears),
                incident=self.incident % (1 << enc.INCIDENT_BITS),
                session=wire_session(self.session),
            ),
            self.half,
        ]

    @classmethod
    def from_slices(cls, s0: int, s1: int) -> "Report":
        get = enc.REPORT_HEAD.get
        return cls(
            get(s0, "link"),
            get(s0, "writer"),
            bool(get(s0, "up")),
            bool(get(s0, "hears")),
            get(s0, "incident"),
            get(s0, "session"),
            s1,
        )


@dataclass(frozen=True)
class VerdictMsg:
    """A VERDICT (10.3): the arbiter's ``verdict`` on ``link`` with epoch (``count``, ``arbiter``);
    for LINK_DOWN the reports it rests on: both ends' (lower node id first), or one end's that
    never heard the link (10.5)."""

    link: int
    arbiter: int
    verdict: Verdict
    subject: int
    count: int
    reports: tuple = ()

    @property
    def epoch(self) -> tuple:
        return (self.count, self.arbiter)

    def slices(self) -> list:
        head = enc.VERDICT_HEAD.pack(
            type=MsgType.VERDICT,
            link=self.link,
            writer=self.arbiter,
            verdict=int(self.verdict),
            subject=self.subject,
            epoch=self.count % (1 << enc.EPOCH_BITS),
        )
        out = [head]
        for report in self.reports:
            out.extend(report.slices())
        return out


def wire_session(count: int) -> int:
    """A port's session count as a REPORT carries it (10.3): 0 only before the port first
    entangled, then 1 .. 2^16 - 1 wrapping to 1, so 0 keeps meaning "never entangled"."""
    return 0 if count == 0 else (count - 1) % ((1 << enc.SESSION_BITS) - 1) + 1


def message_payload(slices) -> bytes:
    return b"".join(s.to_bytes(8, "little") for s in slices)


def never_heard(report) -> bool:
    """A report of a port that never entangled (session 0) and hears nothing (10.3, 10.5)."""
    return not report.up and report.session == 0 and not report.hears


def parse_message(payload: bytes, topology: Topology):
    """A :class:`Report` or :class:`VerdictMsg` from a control frame's payload, or None if it
    is malformed (10.3)."""
    s = [int.from_bytes(payload[8 * i : 8 * i + 8], "little") for i in range(len(payload) // 8)]
    kind = enc.REPORT_HEAD.get(s[0], "type")
    link = enc.REPORT_HEAD.get(s[0], "link")
    writer = enc.REPORT_HEAD.get(s[0], "writer")
    if link >= len(topology.links) or writer >= topology.num_nodes:
        return None
    if kind == MsgType.REPORT:
        if (
            writer not in topology.links[link]
            or s[1] >> enc.HALF_STATE_BITS
            or s[0] & enc.REPORT_HEAD.reserved_mask
            or any(s[2:])
        ):
            return None
        return Report.from_slices(s[0], s[1])
    if kind != MsgType.VERDICT:
        return None
    code = enc.VERDICT_HEAD.get(s[0], "verdict")
    subject = enc.VERDICT_HEAD.get(s[0], "subject")
    count = enc.VERDICT_HEAD.get(s[0], "epoch")
    # NONE is never sent (the table does not change); counts start at 1 (10.4).
    if code not in {v.value for v in Verdict} or code == Verdict.NONE or count == 0 or any(s[5:]):
        return None
    ends = topology.links[link]
    if code in (Verdict.NODE_DOWN, Verdict.UNREACHABLE):
        # The subject is an end of the link, and not the arbiter that writes about it.
        if subject not in ends or subject == writer:
            return None
    elif subject:
        return None
    reports = ()
    if code == Verdict.LINK_DOWN:

        def leaving(lo, hi):
            """Slices lo, hi are a REPORT of an end of this link leaving UP."""
            if (
                enc.REPORT_HEAD.get(s[lo], "type") != MsgType.REPORT
                or s[lo] & enc.REPORT_HEAD.reserved_mask
                or s[hi] >> enc.HALF_STATE_BITS
            ):
                return None
            r = Report.from_slices(s[lo], s[hi])
            return r if r.link == link and r.writer in ends and not r.up else None

        if s[3] == s[4] == 0:
            # Resting on the report of an end that never heard the link (10.5).
            reports = (leaving(1, 2),)
            if reports[0] is None or not never_heard(reports[0]):
                return None
        else:
            reports = (leaving(1, 2), leaving(3, 4))
            if None in reports or [r.writer for r in reports] != sorted(ends):
                return None
    elif any(s[1:5]):
        return None
    # Only an arbiter of the link writes a verdict on it, or one of its ends a LINK_UP (10.5).
    if writer not in topology.arbiters(link) and not (code == Verdict.LINK_UP and writer in ends):
        return None
    return VerdictMsg(link, writer, Verdict(code), subject, count, reports)


def acked_kind(frame: bytes) -> int:
    """The kind of stream an ACK frame acknowledges (slice 1 bits 1:0, 10.3), unchecked: the
    node routes an ACK by it before the ACK's destination checks it."""
    return enc.ACK_BODY.get(int.from_bytes(frame[8:16], "little"), "stream")


def parse_ack(frame: bytes) -> NodeKind | None:
    """The kind of stream (USER or CONTROL) an ACK frame acknowledges, or None if it is
    malformed: another kind, any other payload bit set, or a control stream's ACK whose header
    class is not 0 (10.3)."""
    kind = acked_kind(frame)
    s1 = int.from_bytes(frame[8:16], "little")
    cls = enc.NODE_HEADER.get(int.from_bytes(frame[:8], "little"), "cls")
    if (
        kind not in (NodeKind.USER, NodeKind.CONTROL)
        or s1 & enc.ACK_BODY.reserved_mask
        or any(frame[16:])
        or (kind == NodeKind.CONTROL and cls)
    ):
        return None
    return NodeKind(kind)
