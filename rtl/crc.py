"""The protocol's two checks in hardware (docs/PROTOCOL.md 2.1): twin of golden/crc.py.

Both are combinational XOR networks unrolled bit by bit, because the receiver must know in the
cycle a word arrives whether it counts (the golden model decides in that same cycle);
``amaranth.lib.crc.Processor`` registers its result and would add a cycle.
"""

from amaranth.hdl import Const, Module, Mux, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden import encoding as enc


# Each unrolled step reads the previous state twice; a signal per step keeps the expression
# linear in size (as an expression tree it would double with every bit).

def _materialize(m: Module, value: Value, width: int, name: str) -> Signal:
    """``value`` in a signal of its own: each step reads single bits of it, and a bit of an
    expression would otherwise copy the whole expression into the netlist once per bit."""
    sig = Signal(width, name=name)
    m.d.comb += sig.eq(value)
    return sig


def crc16_msb_first(m: Module, value: Value, width: int) -> Value:
    """CRC-16/CCITT-FALSE of the ``width``-bit ``value``, most significant bit first."""
    value = _materialize(m, value, width, "crc16_in")
    crc = Const(enc.CRC16_INIT, enc.CTL_CRC_BITS)
    for i in reversed(range(width)):
        step = Signal(enc.CTL_CRC_BITS, name=f"crc16_{i}")
        m.d.comb += step.eq((crc << 1)[:enc.CTL_CRC_BITS]
                            ^ ((crc[-1] ^ value[i]).replicate(enc.CTL_CRC_BITS) & enc.CRC16_POLY))
        crc = step
    return crc


def crc32_update(m: Module, crc: Value, slice_: Value) -> Value:
    """Reflected CRC-32 state after the 64 bits of ``slice_``, bit 0 first (= its eight bytes,
    little-endian, each least significant bit first). No init or final XOR here."""
    slice_ = _materialize(m, slice_, enc.SLICE_BITS, "crc32_in")
    crc = _materialize(m, crc, enc.DIGEST_CRC_BITS, "crc32_start")
    for i in range(enc.SLICE_BITS):
        step = Signal(enc.DIGEST_CRC_BITS, name=f"crc32_{i}")
        m.d.comb += step.eq((crc >> 1) ^ ((crc[0] ^ slice_[i]).replicate(enc.DIGEST_CRC_BITS) & enc.CRC32_POLY_REFLECTED))
        crc = step
    return crc


class ControlCRC(wiring.Component):
    """CRC-16 of a control word: over the tag then body bits 47..0 (golden ``control_crc``).

    Ports: ``tag`` (in, 8), ``body`` (in, 48), ``crc`` (out, 16). Latency: combinational.
    """

    tag: In(enc.TAG_BITS)
    body: In(enc.CTL_BODY_BITS)
    crc: Out(enc.CTL_CRC_BITS)

    def elaborate(self, platform):
        m = Module()
        value = self.body | (self.tag.as_unsigned() << enc.CTL_BODY_BITS)
        m.d.comb += self.crc.eq(crc16_msb_first(m, value, enc.TAG_BITS + enc.CTL_BODY_BITS))
        return m


def frame_crc_step(m: Module, state: Value, first: Value, slice_: Value) -> Value:
    """Running CRC-32 of a frame, one slice at a time (golden ``frame_crc`` after 8 slices):
    the state after ``slice_``, starting afresh when ``first``. The frame's digest is the state
    after its last slice XOR ``CRC32_XOROUT`` (golden/encoding.py). The caller keeps the state (one per class)."""
    return crc32_update(m, Mux(first, enc.CRC32_INIT, state), slice_)
