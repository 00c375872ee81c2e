"""Tag encoding and the word/frame codec: golden.common.slice against rtl.common.slice (Amaranth simulator)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from golden import encoding as enc
from golden.common.slice import (
    Tag,
    control_tag,
    data_tag,
    decode_tag,
    echo_tag,
    frame_to_slices,
    make_word,
    slices_to_frame,
    split_word,
)
from golden.encoding import Ctl, Kind
from rtl.common import slice as rslice
from rtl.common.slice import TagDecoder
from sim.harness.amaranth_sim import simulate


def _hamming_weight(x):
    return bin(x).count("1")


def test_every_valid_tag_has_odd_parity():
    for tag in range(256):
        if not decode_tag(tag).malformed:
            assert _hamming_weight(tag) % 2 == 1, hex(tag)


def test_valid_tag_census():
    """32 data (4 classes x 8 slices), 32 echo, one per assigned control code; all else malformed."""
    kinds = [decode_tag(t).kind for t in range(256)]
    assert kinds.count(Kind.DATA) == enc.MAX_CLASSES * enc.SLICES_PER_FRAME
    assert kinds.count(Kind.ECHO) == enc.MAX_CLASSES * enc.SLICES_PER_FRAME
    assert kinds.count(Kind.CONTROL) == len(Ctl)
    assert kinds.count(Kind.MALFORMED) == 256 - 64 - len(Ctl)


@pytest.mark.parametrize("stuck", [0x00, 0xFF])
def test_stuck_lines_are_malformed(stuck):
    assert decode_tag(stuck).malformed


def test_single_bit_flip_of_any_valid_tag_is_malformed():
    for tag in range(256):
        if decode_tag(tag).malformed:
            continue
        for bit in range(8):
            assert decode_tag(tag ^ (1 << bit)).malformed, (hex(tag), bit)


def test_data_last_must_match_index_seven():
    for cls in range(enc.MAX_CLASSES):
        for index in range(8):
            tag = data_tag(cls, index)
            assert decode_tag(tag) == Tag(Kind.DATA, cls=cls, index=index, last=index == 7)
            # Flip last and repair parity: a well-formed-looking but inconsistent tag.
            forged = tag ^ (1 << enc.DATA_LAST_BIT) ^ 1
            assert decode_tag(forged).malformed


def test_encode_decode_round_trip():
    for cls in range(enc.MAX_CLASSES):
        for index in range(8):
            assert decode_tag(echo_tag(cls, index)) == Tag(Kind.ECHO, cls=cls, index=index)
    for code in Ctl:
        assert decode_tag(control_tag(code)) == Tag(Kind.CONTROL, code=code)


def test_reserved_control_codes_are_malformed():
    assigned = {int(c) for c in Ctl}
    for code in range(32):
        info = code
        tag = info << 1 | enc.parity_bit(info)
        assert decode_tag(tag).malformed == (code not in assigned), code


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: data_tag(4, 0), "cls"),
        (lambda: data_tag(0, 8), "index"),
        (lambda: echo_tag(-1, 0), "cls"),
        (lambda: control_tag(0x1F), "code"),
        (lambda: decode_tag(256), "tag"),
        (lambda: make_word(256, 0), "tag"),
        (lambda: make_word(0, 1 << 64), "slice_"),
        (lambda: split_word(1 << 72), "word"),
        (lambda: frame_to_slices(b"x" * 63), "frame"),
        (lambda: slices_to_frame([0] * 7), "slices"),
        (lambda: enc.parity_bit(128), "info7"),
    ],
)
def test_bad_arguments_raise_value_error_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{name} "):
        call()


@given(st.binary(min_size=64, max_size=64))
def test_frame_slices_round_trip_little_endian(frame):
    slices = frame_to_slices(frame)
    assert slices_to_frame(slices) == frame
    assert slices[0] & 0xFF == frame[0]
    assert slices[7] >> 56 == frame[63]


@given(st.integers(0, 255), st.integers(0, (1 << 64) - 1))
def test_word_pack_unpack(tag, slice_):
    word = make_word(tag, slice_)
    assert split_word(word) == (tag, slice_)
    assert word >> 64 == tag


def test_rtl_decoder_matches_golden_for_all_256_tags():
    dut = TagDecoder()

    async def bench(ctx):
        for tag in range(256):
            ctx.set(dut.tag, tag)
            got = ctx.get(dut.decoded)
            want = decode_tag(tag)
            assert (got.kind, got.cls, got.index, got.last, got.code) == (
                want.kind,
                want.cls,
                want.index,
                int(want.last),
                want.code,
            ), hex(tag)

    simulate(dut, bench, clock=None)


def test_rtl_tag_builders_match_golden():
    from amaranth.hdl import Const, Module, Signal

    cls = Signal(2)
    index = Signal(3)
    d_tag = Signal(8)
    e_tag = Signal(8)
    m = Module()
    m.d.comb += [d_tag.eq(rslice.data_tag(cls, index)), e_tag.eq(rslice.echo_tag(cls, index))]

    async def bench(ctx):
        for c in range(4):
            for i in range(8):
                ctx.set(cls, c)
                ctx.set(index, i)
                assert ctx.get(d_tag) == data_tag(c, i)
                assert ctx.get(e_tag) == echo_tag(c, i)
        for code in Ctl:
            assert rslice.control_tag(code).value == control_tag(code)
        assert isinstance(rslice.control_tag(Ctl.IDLE), Const)

    simulate(m, bench, clock=None)
    with pytest.raises(ValueError, match="^code "):
        rslice.control_tag(0)


def test_link_word_layout_puts_tag_above_slice():
    layout = rslice.LinkWord.as_shape()
    assert layout.size == enc.WORD_BITS
    assert layout["slice"].offset == 0 and layout["tag"].offset == enc.SLICE_BITS


# --- docs/PROTOCOL.md section 1 and golden/encoding.py say the same thing ----------------------

PROTOCOL = __import__("pathlib").Path(__file__).resolve().parent.parent / "docs" / "PROTOCOL.md"


def test_protocol_code_table_matches_encoding():
    import re

    rows = re.findall(r"^\| (0x[0-9A-F]{2}) \| `(\w+)`", PROTOCOL.read_text(), re.M)
    assert {name: int(code, 16) for code, name in rows} == {c.name: int(c) for c in Ctl}


def test_protocol_example_tags_match_encoding():
    import re

    examples = re.findall(r"`(\w+)` = `(0x[0-9a-f]{2})`", PROTOCOL.read_text())
    assert examples, "no example tags found in PROTOCOL.md"
    for name, value in examples:
        assert control_tag(Ctl[name]) == int(value, 16), name
    valid = sum(not decode_tag(t).malformed for t in range(256))
    assert valid == 64 + len(Ctl)
    assert f"There are {valid} valid tags: 32 DATA, 32 ECHO and {len(Ctl)} CONTROL." in PROTOCOL.read_text()
