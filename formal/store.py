"""The end-to-end store on rtl/fabric/store.py: its counts of frames held and sent, kept beside
the 32-bit sequences, give the sequences the golden store's steps give (docs/PROTOCOL.md 10.11)."""

from amaranth.asserts import AnySeq, Initial
from amaranth.hdl import Assert, Assume, Cat, Const, Cover, Elaboratable, Module, Mux, Signal
from amaranth.utils import bits_for

from formal import observe
from formal.runner import Proof
from golden import encoding as enc
from rtl.fabric.store import Store, slot_of

SEQ = enc.E2E_SEQ_BITS
LINK = enc.LINK_ID_BITS
# (window, bypass): a user stream's store (the user's frame may leave in the clock it is written)
# and a control stream's.
SIZES = ((4, True), (8, False))


class _WideIndex(Store):
    """Seeded bug: a frame taken out is compared with the frames sent on the low bits of its
    index alone, so a frame far behind ``base`` (acknowledged long ago) moves ``send``."""

    @staticmethod
    def _below(index, sent):
        return index[: len(sent)] < sent


def _diff(a, b):
    """``a - b`` modulo 2**32, as sequences are."""
    return (a - b)[:SEQ]


def _header(seq):
    return Cat(seq, Const(0, enc.SLICE_BITS - SEQ))


class StoreSequences(Elaboratable):
    """Proves, for every sequence of inputs within the caller's rules (a write only while not
    ``full``, a take only of a frame ``unsent`` offers), every sequence, link and hop free:

    * ``next_seq``, ``base``, ``send``, ``via`` and ``via_valid`` are those of a model that
      applies the cycle's steps in the golden order on 32-bit sequences (write, take, settle,
      taken, release, resend, rewind: golden ``Store``); ``held``, ``full``, ``unsent``,
      ``settled``, ``again`` and the memory's read address (the slot of ``send`` as the cycle
      leaves it) are the model's;
    * the counts the store keeps are ``next_seq - base`` and ``send - base``, with
      ``send - base <= next_seq - base <= window`` (for the induction).
    """

    def __init__(self, dut):
        self.dut = dut

    def elaborate(self, platform):
        m = Module()
        dut = self.dut
        window = dut._window
        m.submodules.dut = fragment = observe.elaborate(dut, platform)
        regs = observe.registers(fragment)

        inputs = {
            "write": 1,
            "take": 1,
            "take_link": LINK,
            "settle": 1,
            "settle_link": LINK,
            "settle_hop": LINK,
            "settle_hop_valid": 1,
            "taken": 1,
            "taken_seq": SEQ,
            "ack_valid": 1,
            "ack": SEQ,
            "resend": 1,
            "hop": LINK,
            "hop_valid": 1,
        }
        i = {}
        for name, width in inputs.items():
            i[name] = AnySeq(width)
            m.d.comb += getattr(dut, name).eq(i[name])
        m.d.comb += dut.write_payload.eq(AnySeq(len(dut.write_payload)))

        # The model: golden Store's steps in order, on 32-bit sequences.
        nxt, base, send = Signal(SEQ), Signal(SEQ), Signal(SEQ)
        via, via_valid = Signal(LINK), Signal()
        held = Signal(SEQ)
        m.d.comb += held.eq(nxt - base)
        unsent = (send != nxt) | (i["write"] if dut._bypass else 0)
        m.d.comb += [Assume(~i["write"] | (held < window)), Assume(~i["take"] | unsent)]

        nxt1, send1 = Signal(SEQ), Signal(SEQ)
        via1, via_valid1 = Signal(LINK), Signal()
        m.d.comb += [
            nxt1.eq(nxt + i["write"]),
            send1.eq(send + i["take"]),
            via1.eq(Mux(i["take"], i["take_link"], via)),
            via_valid1.eq(via_valid | i["take"]),
        ]
        settled = Signal()
        via2, via_valid2 = Signal(LINK), Signal()
        m.d.comb += [
            settled.eq(i["settle"] & (send1 != base) & via_valid1 & (via1 == i["settle_link"])),
            via2.eq(Mux(settled, i["settle_hop"], via1)),
            via_valid2.eq(Mux(settled, i["settle_hop_valid"], via_valid1)),
        ]
        index, sent_a, send2 = Signal(SEQ), Signal(SEQ), Signal(SEQ)
        m.d.comb += [
            index.eq(i["taken_seq"] - base),
            sent_a.eq(send1 - base),
            send2.eq(Mux(i["taken"] & (index < sent_a), i["taken_seq"], send1)),
        ]
        d, held1, n = Signal(SEQ), Signal(SEQ), Signal(SEQ)
        m.d.comb += [
            d.eq(i["ack"] - base),
            held1.eq(nxt1 - base),
            n.eq(Mux(i["ack_valid"] & (d != 0) & (d <= 1 << (SEQ - 1)), Mux(d < held1, d, held1), 0)),
        ]
        base3, sent_b, send3, send5 = Signal(SEQ), Signal(SEQ), Signal(SEQ), Signal(SEQ)
        m.d.comb += [
            base3.eq(base + n),
            sent_b.eq(send2 - base),
            send3.eq(Mux(n >= sent_b, base3, send2)),
            send5.eq(Mux(i["resend"], base3, send3)),
        ]
        left, send4 = Signal(SEQ), Signal(SEQ)
        same = (i["hop_valid"] == via_valid2) & (~i["hop_valid"] | (i["hop"] == via2))
        rewind = Signal()
        moved = rewind & i["hop_valid"]
        m.d.comb += [
            left.eq(send5 - base3),
            rewind.eq((left != 0) & ~same),
            send4.eq(Mux(moved, base3, send5)),
        ]
        again = Mux(i["resend"], _diff(send3, base3), Mux(moved, left, 0))
        m.d.sync += [nxt.eq(nxt1), base.eq(base3), send.eq(send4)]
        with m.If(rewind):
            m.d.sync += [via.eq(i["hop"]), via_valid.eq(i["hop_valid"])]
        with m.Else():
            m.d.sync += [via.eq(via2), via_valid.eq(via_valid2)]

        with m.If(Initial()):
            m.d.comb += Assume((nxt == 0) & (base == 0) & (send == 0) & ~via_valid & (via == 0))

        m.d.comb += [
            Assert(dut.next_seq == nxt),
            Assert(dut.base == base),
            Assert(dut.send == send),
            Assert(dut.via_valid == via_valid),
            Assert(dut.via == via),
            Assert(dut.held == held),
            Assert(dut.full == (held >= window)),
            Assert(dut.unsent == unsent),
            Assert(dut.settled == settled),
            Assert(dut.again == again),
            Assert(regs["rd__addr"] == slot_of(send4, window)),
            # The counts beside the sequences, and the window they lie in.
            Assert(held <= window),
            Assert(_diff(send, base) <= held),
            Assert(regs["held_count"] == held),
            Assert(regs["sent_count"] == _diff(send, base)),
        ]

        # Not vacuous: a frame taken out far behind the base, one whose index has high bits set
        # and low bits below the frames sent, one within the frames sent; an ACK that catches
        # ``send`` up; a full store; a settle; a resend and a rewind that send frames again; a
        # rewind to no path.
        w = bits_for(window)
        m.d.comb += [
            Cover(i["taken"] & (index >= 1 << (SEQ - 1)) & (sent_a != 0)),
            Cover(i["taken"] & (index[w:] != 0) & (index[:w] < sent_a) & (sent_a != 0)),
            Cover(i["taken"] & (index < sent_a) & (index != 0)),
            Cover((n != 0) & (n >= sent_b) & (send2 != base)),
            Cover(held == window),
            Cover(settled),
            Cover(i["resend"] & (again != 0)),
            Cover(moved),
            Cover(rewind & ~i["hop_valid"]),
        ]
        if dut._bypass:
            m.d.comb += Cover(i["write"] & i["take"] & (send == nxt) & (held != 0))
        return m


def _build(window, bypass):
    def build(mutant):
        cls = _WideIndex if mutant else Store
        return StoreSequences(cls(window, header=_header, payload_slices=1, bypass=bypass)), []

    return build


def proofs():
    return [
        Proof(
            name=f"store_w{window}{'_bypass' if bypass else ''}",
            block=f"Store(window={window}, bypass={bypass})",
            prop="next_seq, base, send, via and the outputs as golden Store's steps on 32-bit sequences",
            build=_build(window, bypass),
            mode="prove",
            depth=3,
            cover_depth=2 * window + 6,
            mutant="a frame taken out is compared with the frames sent on its index's low bits alone",
        )
        for window, bypass in SIZES
    ]
