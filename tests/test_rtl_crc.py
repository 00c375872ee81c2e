"""rtl/common/crc.py against golden/common/crc.py in the Amaranth simulator.

A CRC is affine over GF(2): crc(x) = A.x + c. Agreeing on x = 0 and on every single-bit x
fixes A and c, so the basis tests below prove the hardware equal to the golden CRC for all
inputs; a few whole frames then check the frame-level handling (init, final XOR, first, valid).
"""

import random
import zlib

from amaranth.hdl import Module, Mux, Signal

from golden.common.crc import control_crc, frame_crc
from golden.common.slice import frame_to_slices
from golden.encoding import CRC32_XOROUT
from rtl.common.crc import ControlCRC, crc32_advance, crc32_first, crc32_of_slice
from sim.harness.amaranth_sim import simulate


def _software_crc32_update(crc, slice_):
    """Reflected CRC-32 state update over the slice's 8 bytes, little-endian (zlib's core)."""
    return zlib.crc32(slice_.to_bytes(8, "little"), crc ^ 0xFFFFFFFF) ^ 0xFFFFFFFF


def test_control_crc_equals_golden_on_a_basis_of_all_inputs():
    dut = ControlCRC()
    basis = [(0, 0)] + [(1 << i, 0) for i in range(8)] + [(0, 1 << i) for i in range(48)]

    async def bench(ctx):
        for tag, body in basis:
            ctx.set(dut.tag, tag)
            ctx.set(dut.body, body)
            assert ctx.get(dut.crc) == control_crc(tag, body), (hex(tag), hex(body))

    simulate(dut, bench, clock=None)


def test_crc32_update_equals_zlib_on_a_basis_of_all_inputs():
    """The state after a slice is advance(state) XOR contribution(slice)."""
    m = Module()
    crc, slice_ = Signal(32), Signal(64)
    out = Signal(32)
    m.d.comb += out.eq(crc32_advance(m, crc) ^ crc32_of_slice(m, slice_))
    basis = [(0, 0)] + [(1 << i, 0) for i in range(32)] + [(0, 1 << i) for i in range(64)]

    async def bench(ctx):
        for c, s in basis:
            ctx.set(crc, c)
            ctx.set(slice_, s)
            assert ctx.get(out) == _software_crc32_update(c, s), (hex(c), hex(s))

    simulate(m, bench, clock=None)


def test_frame_digest_of_whole_frames_with_gaps():
    """A running digest as the framer keeps one: first slice from crc32_first(), later ones
    from the state, idle cycles in between."""
    rng = random.Random(11)
    frames = [bytes(64), bytes([0xFF] * 64)] + [rng.randbytes(64) for _ in range(3)]
    m = Module()
    state, first, valid, slice_ = Signal(32), Signal(), Signal(), Signal(64)
    after = Signal(32)
    contribution = crc32_of_slice(m, slice_)
    m.d.comb += after.eq(Mux(first, crc32_first(), crc32_advance(m, state)) ^ contribution)
    with m.If(valid):
        m.d.sync += state.eq(after)

    async def bench(ctx):
        for frame in frames:
            for i, s in enumerate(frame_to_slices(frame)):
                if rng.random() < 0.3:  # an idle cycle keeps the state
                    ctx.set(valid, 0)
                    ctx.set(first, 0)
                    await ctx.tick()
                ctx.set(valid, 1)
                ctx.set(first, i == 0)
                ctx.set(slice_, s)
                if i == 7:
                    assert ctx.get(after) ^ CRC32_XOROUT == frame_crc(frame)
                await ctx.tick()

    simulate(m, bench, clock=1e-8)
