"""The good bits selective repeat keeps beside the confirmed count, on rtl/link/framer/selective.py
(docs/PROTOCOL.md 4.6)."""

from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Cover, Elaboratable, Module, Mux, Signal

from formal import observe
from formal.runner import Proof
from rtl.link.framer.selective import SelectiveRepeat

# (sequence bits, slot bits) of each proof: W' = 8 (the bits at c + 2 and c + 3 are distinct
# from c's and read from ``good`` itself), and W' = 64 (read from a pair of groups of 16 bits
# read a cycle earlier, as the long build reads them; four groups, so the pair wraps).
SIZES = {"selective": (6, 3), "selective_w64": (8, 6)}


class _StaleRead(SelectiveRepeat):
    """Seeded bug: the bit at c + 2 read a cycle early ignores that cycle's confirm, so after a
    confirm the next frame's good bit is the one the confirm moved past."""

    def _read_third(self, m, good, marked, slots):
        bit = Signal(name="good_read2")
        m.d.sync += bit.eq(good.bit_select(slots[0], 1))
        return bit


class _LatePick(SelectiveRepeat):
    """Seeded bug in the pair read two cycles ahead (W' >= 64): the bit at c + 2 is picked one
    place late out of it, so the frame after the next is taken for the next."""

    def _read_pair(self, m, good, slots):
        bits = super()._read_pair(m, good, slots)
        return [bits[1], bits[1]]


# Each size's seeded bug: the stale read at W' = 8, the late pick out of the pair at W' = 64.
MUTANTS = {
    "selective": (_StaleRead, "the bit at c + 2 read a cycle early ignores that cycle's confirm"),
    "selective_w64": (_LatePick, "the bit at c + 2 picked one place late out of the pair read two cycles ahead"),
}


class GoodBits(Elaboratable):
    """Proves, for every sequence of digests (``hit`` at any ``head_seq``), confirms, restarts and
    RESYNCs (all inputs free; the confirmed count moves by one on a confirm, as the framer moves
    it, and ``confirmed_after`` is one more): ``good_first`` is the good bit at the confirmed
    count, and ``good_second_ahead`` the bit at the count plus one, in every cycle. Those two
    registers and the bit read a cycle early stand in for wide selects of ``good`` after the
    digest; a confirm must see the bit after them as ``good`` holds it. The registers kept beside
    the counts equal what they stand for: the slots c + 2 and c + 3 read early, ``scan + 1``,
    ``scan != scan_end`` and ``scan - confirmed``."""

    def __init__(self, dut, seq_bits, slot_bits):
        self.dut, self._N, self._sb = dut, seq_bits, slot_bits

    def elaborate(self, platform):
        m = Module()
        dut, N, sb = self.dut, self._N, self._sb
        m.submodules.dut = fragment = observe.elaborate(dut, platform)
        regs = observe.registers(fragment)
        good, second = regs["good"], regs["good_second_ahead"]
        for port in ("restart", "sent_resync", "live", "resync_due", "hit", "confirm", "queued"):
            m.d.comb += getattr(dut, port).eq(AnySeq(1))
        for port in ("head_seq", "resume", "queued_seq", "redo_head"):
            m.d.comb += getattr(dut, port).eq(AnySeq(N))
        for port in ("sends_replay", "sends_slice"):
            m.d.comb += getattr(dut, port).eq(AnySeq(1))
        confirmed = Signal(N, name="confirmed")
        m.d.sync += confirmed.eq(Mux(dut.confirm, confirmed + 1, confirmed))
        m.d.comb += [dut.confirmed.eq(confirmed), dut.confirmed_after.eq(confirmed + 1)]
        m.d.comb += [
            Assert(dut.good_first == good.bit_select(confirmed[:sb], 1)),
            Assert(second == good.bit_select((confirmed + 1)[:sb], 1)),
            Assert(regs["good_read_slot2"] == (confirmed + 2)[:sb]),
            Assert(regs["good_read_slot3"] == (confirmed + 3)[:sb]),
            Assert(regs["scan_after"] == (regs["scan"] + 1)[:N]),
            Assert(regs["scan_more"] == (regs["scan"] != regs["scan_end"])),
            Assert(regs["scan_behind"] == (regs["scan"] - confirmed)[: len(regs["scan_behind"])]),
        ]
        if "good_pair" in regs:
            # The pair read two cycles ahead holds the bits at c + 2 and c + 3 as ``good`` does.
            pair, lo, moved = regs["good_pair"], regs["good_pair_lo"], regs["good_pair_moved"]
            g = len(lo)
            m.d.comb += [
                Assert(regs["good_read_next_group"] == (regs["good_read_slot2"][g:] + 1)[: sb - g]),
                Assert(lo == (regs["good_read_slot2"] - moved)[:g]),
                Assert(pair.bit_select(lo + moved, 1) == good.bit_select((confirmed + 2)[:sb], 1)),
                Assert(pair.bit_select(lo + moved + 1, 1) == good.bit_select((confirmed + 3)[:sb], 1)),
            ]
        # Not vacuous: two confirms in a row over frames known good.
        was = Signal(name="confirmed_good")
        m.d.sync += was.eq(dut.confirm & dut.good_first)
        m.d.comb += Cover(was & dut.confirm & dut.good_first)
        return m


def _builder(name):
    seq_bits, slot_bits = SIZES[name]

    def build(mutant):
        cls = MUTANTS[name][0] if mutant else SelectiveRepeat
        dut = cls(seq_bits=seq_bits, slot_bits=slot_bits, window_slots=1 << slot_bits, diff_bits=slot_bits + 2)
        return GoodBits(dut, seq_bits, slot_bits), []

    return build


def proofs():
    return [
        Proof(
            name=name,
            block=f"SelectiveRepeat(W'={1 << slot_bits}, seq_bits={seq_bits})",
            prop="the good bits at the confirmed count and the one after it, kept in registers (PROTOCOL.md 4.6)",
            build=_builder(name),
            mode="prove",
            depth=4,
            cover_depth=8,
            mutant=MUTANTS[name][1],
        )
        for name, (seq_bits, slot_bits) in SIZES.items()
    ]
