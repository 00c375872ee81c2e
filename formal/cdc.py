"""The bisynchronous FIFO contract of rtl/common/cdc.py across two free-running clocks."""

from amaranth.asserts import AnySeq, Initial
from amaranth.hdl import Assert, Assume, ClockDomain, Cover, Elaboratable, Module, Mux, ResetSignal, Signal, unsigned

from formal.runner import Proof
from rtl.common.cdc import BisyncFIFO

DEPTH = 4
SEQ_BITS = 6  # more words than a bounded run of DEPTH_BMC steps can write: no wrap
DEPTH_BMC = 28


class _LossyReadReset(BisyncFIFO):
    """Seeded bug: a read-side reset consumes the word on ``source``, which the contract says a
    read reset keeps."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        fifo = m.submodules.fifo
        m.d.comb += fifo.r_en.eq((self.source.ready & self.source.valid) | ResetSignal(self._r_domain))
        return m


class BisyncContract(Elaboratable):
    """Proves, with the write clock ``w`` and the read clock ``r`` free (each solver step either
    clock may rise, at least one changes; any ratio, any phase, either may stop for a while) and
    each domain's reset asserted and released at any edge of its own clock:

    * every word comes out once and in order, nothing invented: the writer writes its sequence
      number, so a word on ``source`` is always the next one expected;
    * a read-side reset keeps the words: ``source.valid`` is low while it lasts, and the next
      word is still the one expected (nothing lost or repeated);
    * a write-side reset discards the words not yet taken when it asserts: from that moment no
      older word is presented, and the next word presented after a skip is the first word
      written after the reset (none written after it is lost), with ``flushed`` seen by the
      reader since its last word, or a read reset (which hides ``flushed``, see docs/FORMAL.md).

    The domain ``gclk`` is the solver's global clock (see :class:`formal.runner.Proof`).
    """

    def __init__(self, dut):
        self.dut = dut
        self.cd_gclk = ClockDomain("gclk", reset_less=True)
        self.cd_w, self.cd_r = ClockDomain("w"), ClockDomain("r")

    def ports(self):
        return [self.cd_gclk.clk, self.cd_w.clk, self.cd_w.rst, self.cd_r.clk, self.cd_r.rst]

    def elaborate(self, platform):
        m = Module()
        m.domains += [self.cd_gclk, self.cd_w, self.cd_r]
        m.submodules.dut = dut = self.dut
        w_clk, w_rst, r_clk, r_rst = self.cd_w.clk, self.cd_w.rst, self.cd_r.clk, self.cd_r.rst

        # --- the clocks and resets, watched from the global clock ----------------------------------
        past = {name: Signal(name=f"past_{name}") for name in ("w_clk", "r_clk", "w_rst", "r_rst")}
        now = {"w_clk": w_clk, "r_clk": r_clk, "w_rst": w_rst, "r_rst": r_rst}
        m.d.gclk += [past[name].eq(now[name]) for name in past]
        w_rise, r_rise = w_clk & ~past["w_clk"], r_clk & ~past["r_clk"]
        with m.If(Initial()):
            m.d.comb += Assume(~w_clk & ~r_clk)
        with m.Else():
            m.d.comb += [
                Assume((w_clk != past["w_clk"]) | (r_clk != past["r_clk"])),  # time moves
                Assume(w_rise | (w_rst == past["w_rst"])),  # resets are synchronous
                Assume(r_rise | (r_rst == past["r_rst"])),
            ]

        # --- the writer: its sequence numbers ---------------------------------------------------------
        wseq = Signal(SEQ_BITS, reset_less=True)  # words written so far, the next word's number
        fence = Signal(SEQ_BITS, reset_less=True)  # words written before the last write reset
        m.d.comb += [dut.sink.valid.eq(AnySeq(1)), dut.sink.payload.eq(wseq)]
        with m.If(dut.sink.valid & dut.sink.ready):
            m.d.w += wseq.eq(wseq + 1)
        with m.If(w_rst):
            m.d.w += fence.eq(wseq)
        # The reset is seen at once (the FIFO's read side is cleared asynchronously).
        fence_now = Mux(w_rst, wseq, fence)
        m.d.comb += Assume(wseq != (1 << SEQ_BITS) - 1)

        # --- the reader ----------------------------------------------------------------------------
        expect = Signal(SEQ_BITS, reset_less=True)  # the next word's number
        # ``flushed``, or a read reset, since the last word taken. ``flushed`` is a register of the
        # read domain and its reset clears it: a write reset that falls within a read reset is not
        # signalled (docs/FORMAL.md), so a read reset stands for it here.
        flushed_seen = Signal(reset_less=True)
        m.d.comb += dut.source.ready.eq(AnySeq(1))
        took = dut.source.valid & dut.source.ready
        with m.If(took):
            m.d.r += [expect.eq(dut.source.payload + 1), flushed_seen.eq(0)]
        with m.Elif(dut.flushed | r_rst):
            m.d.r += flushed_seen.eq(1)
        word = dut.source.payload
        skipped = word != expect
        with m.If(dut.source.valid):
            m.d.comb += [
                Assert(word >= expect),  # never a word taken before, never out of order
                Assert(word < wseq),  # never a word not written
                Assert(word >= fence_now),  # never a word the last write reset discarded
                # A skip only over words a write reset discarded, to the first word after it,
                # and the reader was told.
                Assert(~skipped | ((word == fence_now) & (flushed_seen | dut.flushed))),
            ]
        m.d.comb += Assert(~(r_rst & dut.source.valid))
        with m.If(Initial()):
            m.d.comb += Assume((wseq == 0) & (fence == 0) & (expect == 0) & ~flushed_seen)

        # Not vacuous: words in order, a word kept across a read reset, a skip after a write reset.
        m.d.comb += [
            Cover(took & (word == 2)),
            Cover(dut.source.valid & (word == expect) & past["r_rst"] & ~r_rst & (expect != 0)),
            Cover(dut.source.valid & skipped),
        ]
        return m


def _build(mutant):
    harness = BisyncContract((_LossyReadReset if mutant else BisyncFIFO)(depth=DEPTH, shape=unsigned(SEQ_BITS)))
    return harness, harness.ports()


def proofs():
    return [
        Proof(
            name="cdc",
            block=f"BisyncFIFO(depth={DEPTH})",
            prop="words once and in order across free clocks; read reset keeps, write reset flushes",
            build=_build,
            mode="bmc",
            depth=DEPTH_BMC,
            cover_depth=28,
            mutant="a read-side reset consumes the presented word",
            fast=False,
            multiclock=True,
            global_domain="gclk",
            bounded=(
                "two free clocks let either side stop for any number of steps, and the memory, the "
                "synchronizers and the reset handshake's epochs are not visible at the ports"
            ),
        )
    ]
