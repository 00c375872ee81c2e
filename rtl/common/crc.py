"""The protocol's two checks in hardware (docs/PROTOCOL.md 2.1): twin of golden/common/crc.py.

Both CRCs are affine over GF(2), so each output bit is the parity of a fixed subset of the
input bits (plus a constant). The subsets ("masks") are computed once, at elaboration, from a
bit-serial definition that uses only the constants of golden/encoding.py; the hardware is then
one XOR tree per output bit, a few LUT levels deep, instead of a chain of 56 or 64 dependent
steps. tests/test_rtl_crc.py proves every network equal to the golden CRC on a basis of inputs.

The frame digest is split into its two linear parts so the pipeline can compute them in
different cycles: :func:`crc32_of_slice` (what a slice contributes) and :func:`crc32_advance`
(what 64 bits do to the state); the state after a slice is their XOR.
"""

from functools import cache

from amaranth.hdl import Cat, Module, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden import encoding as enc

_CRC16_MASK = (1 << enc.CTL_CRC_BITS) - 1
_CTL_INPUT_BITS = enc.TAG_BITS + enc.CTL_BODY_BITS


def _crc16_serial(value: int) -> int:
    """CRC-16/CCITT-FALSE of the 56-bit value (tag, then body bits 47..0), most significant first."""
    crc = enc.CRC16_INIT
    for i in reversed(range(_CTL_INPUT_BITS)):
        feedback = (crc >> (enc.CTL_CRC_BITS - 1) & 1) ^ (value >> i & 1)
        crc = (crc << 1) & _CRC16_MASK ^ (enc.CRC16_POLY if feedback else 0)
    return crc


def _crc32_serial(state: int, data: int, bits: int) -> int:
    """Reflected CRC-32 state after ``bits`` bits of ``data``, bit 0 first (no init, no final XOR)."""
    for i in range(bits):
        feedback = (state ^ (data >> i)) & 1
        state = state >> 1 ^ (enc.CRC32_POLY_REFLECTED if feedback else 0)
    return state


@cache
def _affine(name: str, inputs: int, outputs: int) -> tuple:
    """(masks, constant) of the affine function ``name``: output bit j is the parity of the
    input bits in masks[j], XOR bit j of the constant."""
    fn = _FUNCTIONS[name]
    const = fn(0)
    masks = [0] * outputs
    for i in range(inputs):
        diff = fn(1 << i) ^ const
        for j in range(outputs):
            if diff >> j & 1:
                masks[j] |= 1 << i
    return tuple(masks), const


_FUNCTIONS = {
    "crc16": _crc16_serial,
    "crc32_slice": lambda x: _crc32_serial(0, x, enc.SLICE_BITS),
    "crc32_state": lambda x: _crc32_serial(x, 0, enc.SLICE_BITS),
}


def _network(m: Module, value: Value, name: str, inputs: int, outputs: int) -> Signal:
    """The affine function ``name`` of ``value`` as one parity per output bit."""
    masks, const = _affine(name, inputs, outputs)
    # Every output bit reads the input: a signal of its own keeps the netlist from copying an
    # input expression once per output bit.
    source = Signal(inputs, name=f"{name}_in")
    m.d.comb += source.eq(value)
    out = Signal(outputs, name=name)
    m.d.comb += out.eq(Cat(*[(source & mask).xor() ^ (const >> j & 1) for j, mask in enumerate(masks)]))
    return out


def control_crc_value(tag: int, body: int) -> int:
    """The CRC-16 of a control word as a number, for reset values built at elaboration."""
    return _crc16_serial(tag << enc.CTL_BODY_BITS | body)


def crc16_control(m: Module, tag: Value, body: Value) -> Signal:
    """CRC-16/CCITT-FALSE of a control word over its tag and body (golden ``control_crc``)."""
    return _network(m, Cat(body, tag), "crc16", _CTL_INPUT_BITS, enc.CTL_CRC_BITS)


def crc32_of_slice(m: Module, slice_: Value) -> Signal:
    """What a 64-bit slice contributes to the reflected CRC-32 state (its eight bytes
    little-endian, each least significant bit first), from a zero state."""
    return _network(m, slice_, "crc32_slice", enc.SLICE_BITS, enc.DIGEST_CRC_BITS)


def crc32_advance(m: Module, state: Value) -> Signal:
    """What 64 more bits do to a CRC-32 state: the state after a zero slice."""
    return _network(m, state, "crc32_state", enc.DIGEST_CRC_BITS, enc.DIGEST_CRC_BITS)


def crc32_first() -> int:
    """The state after a frame's first slice, less that slice's contribution: the advanced
    initial value. A frame's running digest is ``crc32_first() ^ contribution`` after slice 0
    and ``crc32_advance(state) ^ contribution`` after each later one; its digest is the state
    after slice 7 XOR ``CRC32_XOROUT``."""
    return _crc32_serial(enc.CRC32_INIT, 0, enc.SLICE_BITS)


class ControlCRC(wiring.Component):
    """CRC-16 of a control word: over the tag then body bits 47..0 (golden ``control_crc``).

    Ports: ``tag`` (in, 8), ``body`` (in, 48), ``crc`` (out, 16). Latency: combinational.
    """

    tag: In(enc.TAG_BITS)
    body: In(enc.CTL_BODY_BITS)
    crc: Out(enc.CTL_CRC_BITS)

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.crc.eq(crc16_control(m, self.tag, self.body))
        return m
