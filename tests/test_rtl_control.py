"""rtl/link/control.py against golden/link/control.py in the Amaranth simulator."""

import random

from golden import encoding as enc
from golden.common.crc import control_crc
from golden.common.slice import make_word
from golden.encoding import Ctl
from golden.link.control import check_word, control_word
from rtl.link.control import ControlWordBuilder, WordChecker
from sim.harness.amaranth_sim import simulate


def _words():
    """Every tag, each with a random slice, a correct CRC, and a correct CRC plus a reserved bit."""
    rng = random.Random(3)
    words = []
    for tag in range(256):
        body = rng.getrandbits(48)
        words.append(make_word(tag, rng.getrandbits(64)))
        words.append(make_word(tag, control_crc(tag, body & 0xFFFF) << 48 | (body & 0xFFFF)))
        words.append(make_word(tag, control_crc(tag, body) << 48 | body))
        words.append(make_word(tag, 0))
    return words


def test_word_checker_agrees_with_golden_on_every_tag():
    dut = WordChecker()

    async def bench(ctx):
        ctx.set(dut.rx.valid, 0)
        assert not ctx.get(dut.wellformed)
        ctx.set(dut.rx.valid, 1)
        for word in _words():
            ctx.set(dut.rx.word.as_value(), word)
            want = check_word(word)
            assert ctx.get(dut.wellformed) == (want is not None), hex(word)
            if want is not None:
                got = ctx.get(dut.decoded)
                assert (got.kind, got.cls, got.index, got.code) == (
                    want.tag.kind,
                    want.tag.cls,
                    want.tag.index,
                    want.tag.code,
                ), hex(word)
                assert ctx.get(dut.body) == want.body and ctx.get(dut.slice) == want.slice

    simulate(dut, bench, clock=None)


def test_builder_agrees_with_golden_for_every_code():
    dut = ControlWordBuilder()
    rng = random.Random(4)

    async def bench(ctx):
        for code in Ctl:
            lsb = enc.RESERVED_LSB.get(code, 0)
            for body in (0, rng.getrandbits(48) & ((1 << lsb) - 1)):
                ctx.set(dut.code, code)
                ctx.set(dut.body, body)
                assert ctx.get(dut.word.as_value()) == control_word(code, body), code.name

    simulate(dut, bench, clock=None)
