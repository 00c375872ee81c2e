"""Link word and tag layouts, tag construction and the tag decoder (docs/PROTOCOL.md, section 1).

Twin of golden/common/slice.py. Field widths and codes come from golden/encoding.py only.
"""

from amaranth.hdl import Cat, Const, Module, Value
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from golden import encoding as enc


class LinkWord(data.Struct):
    """One 72-bit word per link clock: a 64-bit slice (memory bits) and an 8-bit tag."""

    slice: enc.SLICE_BITS
    tag: enc.TAG_BITS


class LinkPortSignature(wiring.Signature):
    """One direction of the wire, seen from the transmitter: a word every cycle, no handshake.

    ``valid`` low means no signal (a cut, or a transmitter not yet driving).
    """

    def __init__(self):
        super().__init__({"valid": Out(1), "word": Out(LinkWord)})


class DecodedTag(data.Struct):
    """What a tag says. ``kind`` is an :class:`golden.encoding.Kind` value; unused fields are 0."""

    kind: 2
    cls: enc.CLASS_BITS
    index: enc.INDEX_BITS
    last: 1
    code: enc.CONTROL_CODE_BITS


def odd_parity_tag(info7: Value) -> Value:
    """The 8-bit tag whose bits [7:1] are ``info7``, with bit 0 giving it odd parity."""
    return Cat(~info7.xor(), info7)


def _bits(value, width) -> Value:
    """``value`` (an Amaranth value or an int) as exactly ``width`` bits, zero-extended."""
    value = Const(value, width) if isinstance(value, int) else Value.cast(value)
    return value[:width] if len(value) >= width else Cat(value, Const(0, width - len(value)))


def data_tag(cls, index) -> Value:
    """Tag of data slice ``index`` of class ``cls`` (Amaranth values or ints); last = index is 7."""
    index = _bits(index, enc.INDEX_BITS)
    last = index == enc.SLICES_PER_FRAME - 1
    return odd_parity_tag(Cat(last, index, _bits(cls, enc.CLASS_BITS), Const(1, 1)))


def echo_tag(cls, index) -> Value:
    """Tag of the full-mode echo of data slice ``index`` of class ``cls``."""
    return odd_parity_tag(Cat(_bits(index, enc.INDEX_BITS), _bits(cls, enc.CLASS_BITS), Const(enc.ECHO_PREFIX, 2)))


def control_tag(code: int) -> Const:
    """Tag constant of an assigned CONTROL code."""
    if code not in set(int(c) for c in enc.Ctl):
        raise ValueError(f"code must be an assigned Ctl code, not {code!r}")
    info = enc.CONTROL_PREFIX << 5 | code
    return Const(info << 1 | enc.parity_bit(info), enc.TAG_BITS)


class TagDecoder(wiring.Component):
    """Decode a tag into kind and fields; reserved codes and bad parity give Kind.MALFORMED.

    Ports: ``tag`` (in, 8 bits), ``decoded`` (out, :class:`DecodedTag`).
    Latency: combinational, 0 cycles. Failure behaviour: every tag that golden.common.slice.decode_tag
    calls malformed yields kind MALFORMED with all other fields 0; nothing else is flagged.
    """

    tag: In(enc.TAG_BITS)
    decoded: Out(DecodedTag)

    def elaborate(self, platform):
        m = Module()
        t = self.tag
        odd = t.xor()
        out = self.decoded
        with m.If(~odd):
            m.d.comb += out.kind.eq(enc.Kind.MALFORMED)
        with m.Elif(t[enc.DATA_FLAG_BIT]):
            index = t[enc.DATA_INDEX_LSB : enc.DATA_INDEX_LSB + enc.INDEX_BITS]
            last = t[enc.DATA_LAST_BIT]
            with m.If(last == (index == enc.SLICES_PER_FRAME - 1)):
                m.d.comb += [
                    out.kind.eq(enc.Kind.DATA),
                    out.cls.eq(t[enc.DATA_CLASS_LSB : enc.DATA_CLASS_LSB + enc.CLASS_BITS]),
                    out.index.eq(index),
                    out.last.eq(last),
                ]
            with m.Else():
                m.d.comb += out.kind.eq(enc.Kind.MALFORMED)
        with m.Elif(t[6:8] == enc.ECHO_PREFIX):
            m.d.comb += [
                out.kind.eq(enc.Kind.ECHO),
                out.cls.eq(t[enc.ECHO_CLASS_LSB : enc.ECHO_CLASS_LSB + enc.CLASS_BITS]),
                out.index.eq(t[enc.ECHO_INDEX_LSB : enc.ECHO_INDEX_LSB + enc.INDEX_BITS]),
            ]
        with m.Else():
            code = t[enc.CONTROL_CODE_LSB : enc.CONTROL_CODE_LSB + enc.CONTROL_CODE_BITS]
            with m.Switch(code):
                with m.Case(*[int(c) for c in enc.Ctl]):
                    m.d.comb += [out.kind.eq(enc.Kind.CONTROL), out.code.eq(code)]
                with m.Default():
                    m.d.comb += out.kind.eq(enc.Kind.MALFORMED)
        return m
