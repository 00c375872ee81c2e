# amaranth: UnusedElaboratable=no
"""rtl/fabric/message.py against golden/fabric/message.py (PROTOCOL.md 10.2, 10.3): well-formed
frames of every kind, REPORTs and VERDICTs of every code, and the same with one field or bit
made wrong, judged and read alike."""

import pytest
from amaranth.hdl import Value

from golden import encoding as enc
from golden.common.slice import frame_to_slices, slices_to_frame
from golden.encoding import MsgType, NodeKind, Verdict
from golden.fabric.message import (
    Report,
    VerdictMsg,
    message_payload,
    node_frame,
    parse_ack,
    parse_header,
    parse_message,
    wire_session,
)
from golden.topology import Topology
from rtl.fabric.message import MessageBuilder, MessageParser
from sim.harness.amaranth_sim import simulate
from sim.tools.seeds import examples, seeded_rng

TOPOLOGIES = {
    "triangle": Topology.triangle(),
    "mesh4": Topology.full_mesh(4),
    "line3": Topology(3, [(0, 1), (1, 2)]),
    "ring5_chords": Topology(5, [(0, 1), (1, 2), (2, 3), (3, 4), (0, 4), (0, 2), (1, 3)]),
}
FRAMES = 1500


def _report(rng, t, link, leaving=None, never=False):
    ends = t.links[link]
    up = (not leaving) if leaving is not None else rng.random() < 0.5
    session = 0 if never or rng.random() < 0.2 else rng.getrandbits(enc.SESSION_BITS)
    hears = False if never else rng.random() < 0.5
    half = rng.getrandbits(enc.HALF_STATE_BITS)
    return Report(link, rng.choice(ends), up, hears, rng.getrandbits(enc.INCIDENT_BITS), session, half)


def _message(rng, t):
    """A well-formed REPORT or VERDICT on ``t`` (one a node could send)."""
    link = rng.randrange(len(t.links))
    ends = t.links[link]
    if rng.random() < 0.3:
        return _report(rng, t, link).slices()
    code = rng.choice([v for v in Verdict if v != Verdict.NONE])
    writers = list(t.arbiters(link)) + (list(ends) if code == Verdict.LINK_UP else [])
    if not writers:
        code, writers = Verdict.LINK_UP, list(ends)
    writer = rng.choice(writers)
    subject, reports = 0, ()
    if code in (Verdict.NODE_DOWN, Verdict.UNREACHABLE):
        subject = rng.choice([e for e in ends if e != writer])
    if code == Verdict.LINK_DOWN:
        if rng.random() < 0.3:
            reports = (_report(rng, t, link, leaving=True, never=True),)
        else:
            reports = tuple(
                Report(
                    link, end, False, rng.random() < 0.5, rng.getrandbits(16), rng.getrandbits(16), rng.getrandbits(36)
                )
                for end in ends
            )
    return VerdictMsg(link, writer, code, subject, rng.randrange(1, 1 << enc.EPOCH_BITS), reports).slices()


def _spoil(rng, t, slices):
    """One thing made wrong, of the kinds 10.2 and 10.3 name (or, now and then, nothing)."""
    s = list(slices) + [0] * (enc.SLICES_PER_FRAME - len(slices))
    what = rng.randrange(14)
    if what == 0:
        i = rng.randrange(enc.SLICES_PER_FRAME)
        s[i] ^= 1 << rng.randrange(enc.SLICE_BITS)
    elif what == 1:
        s[1] = enc.VERDICT_HEAD.pack(**{**_fields(enc.VERDICT_HEAD, s[1]), "writer": rng.randrange(t.num_nodes + 1)})
    elif what == 2:
        s[1] = enc.VERDICT_HEAD.pack(**{**_fields(enc.VERDICT_HEAD, s[1]), "link": rng.randrange(len(t.links) + 1)})
    elif what == 3:
        s[1] = enc.VERDICT_HEAD.pack(**{**_fields(enc.VERDICT_HEAD, s[1]), "subject": rng.randrange(t.num_nodes)})
    elif what == 4:
        s[1] = enc.VERDICT_HEAD.pack(**{**_fields(enc.VERDICT_HEAD, s[1]), "epoch": 0})
    elif what == 5:
        s[1] = enc.VERDICT_HEAD.pack(**{**_fields(enc.VERDICT_HEAD, s[1]), "verdict": rng.randrange(16)})
    elif what == 6:
        s[4] = s[5] = 0  # a LINK_DOWN resting on one report
    elif what == 7:
        s[2:4], s[4:6] = s[4:6], s[2:4]  # its two reports the wrong way round
    elif what == 8:
        s[4:6] = s[2:4]  # one end's report twice
    elif what == 9:
        i = rng.choice((2, 4))  # a carried report of entering UP
        s[i] |= 1 << enc.REPORT_HEAD.lsb("up")
    elif what == 10:
        i = rng.choice((2, 4))  # a carried report written by another node
        s[i] = enc.REPORT_HEAD.pack(**{**_fields(enc.REPORT_HEAD, s[i]), "writer": rng.randrange(t.num_nodes)})
    elif what == 11:
        i = rng.choice((1, 2, 4))  # reserved bits of a REPORT, carried or not
        s[i] |= 1 << rng.randrange(enc.REPORT_HEAD.reserved_lsb, enc.SLICE_BITS)
    return s


def _fields(table, value):
    return {name: table.get(value, name) for name, _, _ in table.fields}


def _frames(rng, t, user_classes, count):
    for _ in range(count):
        kind = rng.choice([NodeKind.USER, NodeKind.CONTROL, NodeKind.CONTROL, NodeKind.ACK])
        origin, dest = rng.randrange(t.num_nodes), rng.randrange(t.num_nodes)
        cls = rng.randrange(user_classes) if rng.random() < 0.9 else rng.randrange(enc.MAX_CLASSES)
        if kind == NodeKind.CONTROL:
            payload = message_payload(_spoil(rng, t, [0] + _message(rng, t))[1:])
        elif kind == NodeKind.ACK:
            s1 = enc.ACK_BODY.pack(stream=rng.randrange(4)) if rng.random() < 0.8 else rng.getrandbits(64)
            rest = bytearray(enc.NODE_PAYLOAD_BYTES - 8)
            if rng.random() < 0.2:  # one bit set in any of slices 2-7
                bit = rng.randrange(len(rest) * 8)
                rest[bit // 8] |= 1 << bit % 8
            payload = s1.to_bytes(8, "little") + bytes(rest)
        else:
            payload = rng.randbytes(enc.NODE_PAYLOAD_BYTES)
        frame = node_frame(kind, origin, dest, cls, rng.getrandbits(32), payload)
        if rng.random() < 0.1:
            s = frame_to_slices(frame)
            s[0] ^= 1 << rng.randrange(enc.SLICE_BITS)
            frame = slices_to_frame(s)
        yield frame


@pytest.mark.parametrize("user_classes", [1, 3])
@pytest.mark.parametrize("name", list(TOPOLOGIES))
def test_parser_matches_golden(name, user_classes):
    t = TOPOLOGIES[name]
    rng = seeded_rng(name, user_classes)
    dut = MessageParser(t, user_classes)
    seen = {}

    async def bench(ctx):
        for frame in _frames(rng, t, user_classes, examples(FRAMES)):
            s = frame_to_slices(frame)
            ctx.set(dut.frame, s)
            h = parse_header(frame, t.num_nodes, user_classes)
            assert ctx.get(dut.header_ok) == (h is not None), hex(s[0])
            if h is not None:
                header = ctx.get(dut.header)
                got = (header.kind, header.origin, header.dest, header.cls, header.seq)
                assert got == (h.kind, h.origin, h.dest, h.cls, h.seq)
            msg = parse_message(frame[8:], t)
            assert ctx.get(dut.message_ok) == (msg is not None), [hex(x) for x in s]
            if isinstance(msg, Report):
                r = ctx.get(dut.report)
                assert (r.type, r.link, r.writer, r.up, r.hears, r.incident, r.session) == (
                    MsgType.REPORT,
                    msg.link,
                    msg.writer,
                    msg.up,
                    msg.hears,
                    msg.incident,
                    msg.session,
                )
            elif msg is not None:
                v = ctx.get(dut.verdict)
                assert (v.link, v.writer, v.verdict, v.subject, v.epoch) == (
                    msg.link,
                    msg.arbiter,
                    msg.verdict,
                    msg.subject,
                    msg.count,
                )
            assert ctx.get(dut.ack_ok) == (parse_ack(frame) is not None)
            key = (
                h.kind if h else None,
                type(msg).__name__ if msg else None,
                getattr(msg, "verdict", None),
                len(getattr(msg, "reports", ())),
            )
            seen[key] = seen.get(key, 0) + 1

    simulate(dut, bench, clock=None)
    # Both judgements came up for every kind, and every verdict a fabric can have was read whole.
    kinds = {k[0] for k in seen}
    assert {None, *NodeKind} <= kinds
    assert ("Report" in {k[1] for k in seen}) and (None in {k[1] for k in seen})
    codes = {k[2] for k in seen if k[1] == "VerdictMsg"}
    assert Verdict.LINK_UP in codes
    if any(t.arbiters(link) for link in range(len(t.links))):
        assert codes >= {Verdict.LINK_DOWN, Verdict.NODE_DOWN, Verdict.UNREACHABLE}
        assert {k[3] for k in seen if k[2] == Verdict.LINK_DOWN} == {1, 2}


@pytest.mark.parametrize("user_classes", [0, 4, True, "1"])
def test_bad_user_classes_are_refused(user_classes):
    with pytest.raises(ValueError, match="user_classes"):
        MessageParser(Topology.triangle(), user_classes)


def test_a_bad_topology_is_refused():
    with pytest.raises(ValueError, match="topology"):
        MessageParser([(0, 1)], 1)


@pytest.mark.parametrize("name", list(TOPOLOGIES))
def test_builder_matches_golden(name):
    """MessageBuilder against golden ``Report.slices`` and ``VerdictMsg.slices``: REPORTs with
    counts past their fields' width, and VERDICTs of every code carrying none, one or both of
    the link's REPORTs as the reports table holds them."""
    t = TOPOLOGIES[name]
    rng = seeded_rng("builder", name)
    node = rng.randrange(t.num_nodes)
    dut = MessageBuilder(node_id=node)
    seen = set()

    async def bench(ctx):
        for _ in range(examples(FRAMES)):
            link = rng.randrange(len(t.links))
            ctx.set(dut.link, link)
            if rng.random() < 0.4:
                up, hears = rng.random() < 0.5, rng.random() < 0.5
                incident = rng.getrandbits(enc.INCIDENT_BITS + 2)
                session = rng.choice([0, rng.getrandbits(enc.SESSION_BITS + 2)])
                half = rng.getrandbits(enc.HALF_STATE_BITS)
                ctx.set(dut.verdict, 0)
                ctx.set(dut.up, up)
                ctx.set(dut.hears, hears)
                ctx.set(dut.incident, incident % (1 << enc.INCIDENT_BITS))
                ctx.set(dut.session, wire_session(session))
                ctx.set(dut.half, half)
                want = Report(link, node, up, hears, incident, session, half).slices()
                seen.add("report")
            else:
                ends = [_report(rng, t, link) for _ in range(2)]
                carry = rng.randrange(4)
                code = rng.choice(list(Verdict))
                subject = rng.randrange(t.num_nodes)
                count = rng.getrandbits(enc.EPOCH_BITS + 2)
                ctx.set(dut.verdict, 1)
                ctx.set(dut.code, code)
                ctx.set(dut.subject, subject)
                ctx.set(dut.epoch, count % (1 << enc.EPOCH_BITS))
                ctx.set(dut.carry, carry)
                for e, report in enumerate(ends):
                    s1, s2 = report.slices()
                    ctx.set(dut.ends[e].valid, 1)
                    ctx.set(dut.ends[e].head.as_value(), s1)
                    ctx.set(dut.ends[e].half, s2)
                carried = tuple(ends[e] for e in (0, 1) if carry >> e & 1)
                want = VerdictMsg(link, node, code, subject, count, carried).slices()
                seen.add(("verdict", len(carried)))
            payload = ctx.get(Value.cast(dut.payload))
            assert payload == int.from_bytes(message_payload(want), "little"), (link, want)

    simulate(dut, bench, clock=None)
    assert seen == {"report", ("verdict", 0), ("verdict", 1), ("verdict", 2)}
