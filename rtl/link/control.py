"""Control words in hardware: building them, and checking every received word.

Twin of golden/link/control.py (docs/PROTOCOL.md 1.4, 2.1).
"""

from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden import encoding as enc
from rtl.common import fields
from rtl.common.crc import ControlCRC
from rtl.common.slice import DecodedTag, LinkPortSignature, LinkWord, TagDecoder, odd_parity_tag


class WordChecker(wiring.Component):
    """Tells a well-formed received word from a malformed one (golden ``check_word``).

    Ports: ``rx`` (in, link port): the received word and whether there is a signal.
    ``signal`` (out): a word arrived (``rx.valid``). ``wellformed`` (out): it arrived and is
    well-formed; ``decoded``, ``slice`` and ``body`` describe it and are meaningful only then.
    Latency: combinational. Failure behaviour: a malformed word only lowers ``wellformed``.
    """

    rx: In(LinkPortSignature())
    signal: Out(1)
    wellformed: Out(1)
    decoded: Out(DecodedTag)
    slice: Out(enc.SLICE_BITS)
    body: Out(enc.CTL_BODY_BITS)

    def elaborate(self, platform):
        m = Module()
        m.submodules.tags = tags = TagDecoder()
        m.submodules.crc = crc = ControlCRC()
        word = self.rx.word
        m.d.comb += [
            tags.tag.eq(word.tag),
            crc.tag.eq(word.tag),
            crc.body.eq(word.slice[: enc.CTL_BODY_BITS]),
            self.signal.eq(self.rx.valid),
            self.decoded.eq(tags.decoded),
            self.slice.eq(word.slice),
            self.body.eq(word.slice[: enc.CTL_BODY_BITS]),
        ]
        control_ok = Signal()
        with m.Switch(tags.decoded.code):
            with m.Case(enc.Ctl.IDLE):
                m.d.comb += control_ok.eq(word.slice == 0)
            for code, table in enc.BODY_TABLES.items():
                with m.Case(code):
                    m.d.comb += control_ok.eq(
                        (word.slice[enc.CTL_CRC_LSB :] == crc.crc) & (fields.view(table, self.body).reserved == 0)
                    )
        kind = tags.decoded.kind
        m.d.comb += self.wellformed.eq(
            self.rx.valid & (kind != enc.Kind.MALFORMED) & ((kind != enc.Kind.CONTROL) | control_ok)
        )
        return m


class ControlWordBuilder(wiring.Component):
    """Builds the CONTROL word for an assigned ``code`` and ``body`` (golden ``control_word``).

    Ports: ``code`` (in, 5), ``body`` (in, 48), ``word`` (out, LinkWord). For IDLE the slice is
    zero. Latency: combinational. The caller keeps reserved body bits zero and uses assigned
    codes only; this block does not check (the golden builder raises on both).
    """

    code: In(enc.CONTROL_CODE_BITS)
    body: In(enc.CTL_BODY_BITS)
    word: Out(LinkWord)

    def elaborate(self, platform):
        m = Module()
        m.submodules.crc = crc = ControlCRC()
        tag = odd_parity_tag(Cat(self.code, Const(enc.CONTROL_PREFIX, 2)))
        m.d.comb += [crc.tag.eq(tag), crc.body.eq(self.body), self.word.tag.eq(tag)]
        with m.If(self.code != enc.Ctl.IDLE):
            m.d.comb += self.word.slice.eq(Cat(self.body, crc.crc))
        return m
