"""The good bits selective repeat keeps beside the confirmed count, on rtl/link/framer/selective.py
(docs/PROTOCOL.md 4.6)."""

from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Cover, Elaboratable, Module, Mux, Signal

from formal import observe
from formal.runner import Proof
from rtl.link.framer.selective import SelectiveRepeat

# W' = 8 (the bits at c + 2 and c + 3 are distinct from c's), sequences of 6 bits.
SEQ_BITS, SLOT_BITS = 6, 3


class _StaleRead(SelectiveRepeat):
    """Seeded bug: the bit at c + 2 read a cycle early ignores that cycle's confirm, so after a
    confirm the next frame's good bit is the one the confirm moved past."""

    def _read_third(self, m, good, marked, slots):
        bit = Signal(name="good_read2")
        m.d.sync += bit.eq(good.bit_select(slots[0], 1))
        return bit


class GoodBits(Elaboratable):
    """Proves, for every sequence of digests (``hit`` at any ``head_seq``), confirms, restarts and
    RESYNCs (all inputs free; the confirmed count moves by one on a confirm, as the framer moves
    it, and ``confirmed_after`` is one more): ``good_first`` is the good bit at the confirmed
    count, and ``good_second_ahead`` the bit at the count plus one, in every cycle. Those two
    registers and the bit read a cycle early stand in for wide selects of ``good`` after the
    digest; a confirm must see the bit after them as ``good`` holds it. The registers kept beside
    the counts equal what they stand for: the slots c + 2 and c + 3 read early, ``scan + 1``,
    ``scan != scan_end`` and ``scan - confirmed``."""

    def __init__(self, dut):
        self.dut = dut

    def elaborate(self, platform):
        m = Module()
        dut = self.dut
        m.submodules.dut = fragment = observe.elaborate(dut, platform)
        regs = observe.registers(fragment)
        good, second = regs["good"], regs["good_second_ahead"]
        for port in ("restart", "sent_resync", "live", "resync_due", "hit", "confirm", "queued"):
            m.d.comb += getattr(dut, port).eq(AnySeq(1))
        for port in ("head_seq", "resume", "queued_seq", "redo_head"):
            m.d.comb += getattr(dut, port).eq(AnySeq(SEQ_BITS))
        for port in ("sends_replay", "sends_slice"):
            m.d.comb += getattr(dut, port).eq(AnySeq(1))
        confirmed = Signal(SEQ_BITS, name="confirmed")
        m.d.sync += confirmed.eq(Mux(dut.confirm, confirmed + 1, confirmed))
        m.d.comb += [dut.confirmed.eq(confirmed), dut.confirmed_after.eq(confirmed + 1)]
        m.d.comb += [
            Assert(dut.good_first == good.bit_select(confirmed[:SLOT_BITS], 1)),
            Assert(second == good.bit_select((confirmed + 1)[:SLOT_BITS], 1)),
            Assert(regs["good_read_slot2"] == (confirmed + 2)[:SLOT_BITS]),
            Assert(regs["good_read_slot3"] == (confirmed + 3)[:SLOT_BITS]),
            Assert(regs["scan_after"] == (regs["scan"] + 1)[:SEQ_BITS]),
            Assert(regs["scan_more"] == (regs["scan"] != regs["scan_end"])),
            Assert(regs["scan_behind"] == (regs["scan"] - confirmed)[: len(regs["scan_behind"])]),
        ]
        # Not vacuous: two confirms in a row over frames known good.
        was = Signal(name="confirmed_good")
        m.d.sync += was.eq(dut.confirm & dut.good_first)
        m.d.comb += Cover(was & dut.confirm & dut.good_first)
        return m


def _build(mutant):
    cls = _StaleRead if mutant else SelectiveRepeat
    dut = cls(seq_bits=SEQ_BITS, slot_bits=SLOT_BITS, window_slots=1 << SLOT_BITS, diff_bits=SLOT_BITS + 2)
    return GoodBits(dut), []


def proofs():
    return [
        Proof(
            name="selective",
            block=f"SelectiveRepeat(W'={1 << SLOT_BITS}, seq_bits={SEQ_BITS})",
            prop="the good bits at the confirmed count and the one after it, kept in registers (PROTOCOL.md 4.6)",
            build=_build,
            mode="prove",
            depth=4,
            cover_depth=8,
            mutant="the bit at c + 2 read a cycle early ignores that cycle's confirm",
        )
    ]
