"""The control word field tables of golden/encoding.py: well formed, packing and reading back,
the hardware layouts built from them, and the bit ranges of docs/PROTOCOL.md 2.1."""

import random
import re
from pathlib import Path

import pytest

from golden import encoding as enc
from golden.encoding import Ctl

DOC = (Path(__file__).resolve().parent.parent / "docs" / "PROTOCOL.md").read_text()
# The control word bodies (48 bits) and the fabric's slices (64 bits: PROTOCOL.md 10.2, 10.3).
NODE_TABLES = [enc.NODE_HEADER, enc.ACK_BODY, enc.REPORT_HEAD, enc.VERDICT_HEAD]
TABLES = sorted(set(enc.BODY_TABLES.values()), key=lambda t: t.name) + NODE_TABLES


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.name)
def test_fields_tile_the_body_below_the_reserved_bits(table):
    bit = 0
    for _, lsb, width in table.fields:
        assert lsb == bit and width > 0
        bit += width
    assert bit == table.reserved_lsb <= table.bits
    assert table.bits == (enc.SLICE_BITS if table in NODE_TABLES else enc.CTL_BODY_BITS)
    assert table.reserved_mask == ((1 << table.bits) - 1) ^ ((1 << table.reserved_lsb) - 1)
    for name, lsb, width in table.fields:
        assert (table.lsb(name), table.width(name)) == (lsb, width)


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.name)
def test_pack_and_get_round_trip(table):
    rng = random.Random(table.name)
    for _ in range(200):
        values = {name: rng.getrandbits(width) for name, _, width in table.fields}
        body = table.pack(**values)
        assert 0 <= body < 1 << table.reserved_lsb and not body & table.reserved_mask
        assert {name: table.get(body, name) for name in values} == values
        # Reading ignores the bits of the other fields, the reserved bits and the CRC above.
        noisy = body | table.reserved_mask | rng.getrandbits(enc.SLICE_BITS) << table.bits
        assert {name: table.get(noisy, name) for name in values} == values
    assert table.pack() == 0


@pytest.mark.parametrize("table", [t for t in TABLES if t.fields], ids=lambda t: t.name)
def test_a_value_too_wide_or_negative_names_the_field(table):
    for name, _, width in table.fields:
        for bad in (1 << width, -1):
            with pytest.raises(ValueError, match=rf"\b{table.name}\.{name}\b"):
                table.pack(**{name: bad})
    with pytest.raises(KeyError):
        table.pack(no_such_field=0)


def test_reserved_lsb_and_masks_come_from_the_tables():
    assert set(enc.BODY_TABLES) == set(enc.RESERVED_LSB) == {c for c in Ctl if c != Ctl.IDLE}
    for code, table in enc.BODY_TABLES.items():
        assert enc.RESERVED_LSB[code] == table.reserved_lsb
        assert enc.reserved_mask(code) == table.reserved_mask


def test_class_counts_tile_the_counts_field():
    for num_classes in range(1, enc.MAX_CLASSES + 1):
        k = enc.count_bits(num_classes)
        spans = [enc.class_count_field(c, num_classes) for c in range(num_classes)]
        assert spans == [(k * c, k) for c in range(num_classes)]
        assert spans[-1][0] + k <= enc.COUNTS_BITS
        with pytest.raises(ValueError):
            enc.class_count_field(num_classes, num_classes)
    for table in (enc.TOKEN_BODY, enc.READY_BODY, enc.RESYNC_BODY):
        assert table.width("counts") == enc.COUNTS_BITS


def test_rtl_layouts_match_the_tables():
    from amaranth.hdl import Const, Module, Signal
    from amaranth.sim import Simulator

    from rtl.common import fields

    rng = random.Random(7)
    for table in TABLES:
        layout = fields.layout(table)
        assert layout.size == table.bits
        offsets = {name: (f.offset, f.shape.width) for name, f in layout}
        assert offsets == {
            **{n: (lsb, w) for n, lsb, w in table.fields},
            "reserved": (table.reserved_lsb, table.bits - table.reserved_lsb),
        }
        values = {name: rng.getrandbits(width) for name, _, width in table.fields}
        packed = fields.pack(table, **{name: Const(v, w) for (name, _, w), v in zip(table.fields, values.values())})
        body = Signal(table.bits)
        view = fields.view(table, body)
        sim = Simulator(Module())

        async def bench(ctx, packed=packed, body=body, view=view, values=values, table=table):
            assert ctx.get(packed) == table.pack(**values)
            ctx.set(body, table.pack(**values))
            assert {name: ctx.get(getattr(view, name)) for name in values} == values
            assert ctx.get(view.reserved) == 0

        sim.add_testbench(bench)
        sim.run()
    with pytest.raises(ValueError, match=r"TRAIN_HELLO\.heard\b"):
        fields.pack(enc.HELLO_BODY, heard=Signal(2))


# docs/PROTOCOL.md 2.1: the bit ranges of each word's row, against the table's fields. Ranges
# written with k (the per-class counts) stand for the table's ``counts`` field.
_ROWS = {
    "`TRAIN_HELLO`": enc.HELLO_BODY,
    "`TRAIN_PROBE`, `TRAIN_PROBE_ECHO`": enc.PROBE_BODY,
    "`TRAIN_READY`": enc.READY_BODY,
    "`TICK`, `TOCK`, `AIT_*`": enc.TOKEN_BODY,
    "`DIGEST`": enc.DIGEST_BODY,
    "`RESYNC`": enc.RESYNC_BODY,
    "`RESYNC_ACK`": enc.RESYNC_ACK_BODY,
    "`NAK`": enc.NAK_BODY,
    "`REPLAY`": enc.REPLAY_BODY,
}


def _doc_row(word):
    section = DOC[DOC.index("### 2.1 Control word bodies") : DOC.index("### 2.2")]
    (line,) = [line for line in section.splitlines() if line.startswith(f"| {word} |")]
    return line.split("|")[2]


@pytest.mark.parametrize("word", list(_ROWS))
def test_bit_ranges_match_protocol_md(word):
    table = _ROWS[word]
    text = _doc_row(word)
    spans = set()
    for hi, lo in re.findall(r"\[(\d+)(?::(\d+))?\]", text):
        lo = hi if not lo else lo
        spans.add((int(lo), int(hi) - int(lo) + 1))
    expected = {(lsb, width) for name, lsb, width in table.fields if name != "counts"}
    if table.reserved_lsb < enc.CTL_BODY_BITS:
        expected.add((table.reserved_lsb, enc.CTL_BODY_BITS - table.reserved_lsb))
        top = enc.CTL_BODY_BITS - 1
        assert f"reserved [{top}{'' if top == table.reserved_lsb else f':{table.reserved_lsb}'}]" in text
    assert spans == expected
    if any(name == "counts" for name, _, _ in table.fields):
        lsb = table.lsb("counts")
        offset = f"{lsb}+" if lsb else ""
        assert f"[{offset}k(c+1)−1 : {offset}kc]" in text


# docs/PROTOCOL.md 10.2 (a table) and 10.3 (prose): where each field of the fabric's slices is.
_NODE_TEXT = [
    (enc.NODE_HEADER, "kind", "| {r} | kind:"),
    (enc.NODE_HEADER, "origin", "| {r} | origin node |"),
    (enc.NODE_HEADER, "dest", "| {r} | destination node |"),
    (enc.NODE_HEADER, "cls", "| {r} | user class |"),
    (enc.NODE_HEADER, "seq", "| {r} | end-to-end sequence"),
    (enc.NODE_HEADER, "reserved", "| {r} | zero |"),
    (enc.REPORT_HEAD, "type", "bits {r} the type"),
    (enc.REPORT_HEAD, "link", "{r} the link id"),
    (enc.REPORT_HEAD, "writer", "{r} the node that wrote the message"),
    (enc.REPORT_HEAD, "up", "bit {r} the state"),
    (enc.REPORT_HEAD, "hears", "bit {r} *hears*"),
    (enc.REPORT_HEAD, "incident", "bits {r} the port's incident number"),
    (enc.REPORT_HEAD, "session", "bits {r} its session number"),
    (enc.REPORT_HEAD, "reserved", "slice 1 bits {r}, slice 2"),
    (enc.VERDICT_HEAD, "verdict", "bits {r} the verdict"),
    (enc.VERDICT_HEAD, "subject", "bits {r} the subject node"),
    (enc.VERDICT_HEAD, "epoch", "bits {r} the epoch count"),
    (enc.ACK_BODY, "stream", "Slice 1 bits {r} give the stream's kind"),
]


@pytest.mark.parametrize("table,name,text", _NODE_TEXT, ids=lambda x: x if isinstance(x, str) else None)
def test_fabric_fields_match_protocol_md(table, name, text):
    section = " ".join(DOC[DOC.index("### 10.2 The node frame") : DOC.index("### 10.4")].split())
    if name == "reserved":
        lsb, width = table.reserved_lsb, table.bits - table.reserved_lsb
    else:
        lsb, width = table.lsb(name), table.width(name)
    r = str(lsb) if width == 1 else f"{lsb + width - 1}:{lsb}"
    assert text.format(r=r) in section
