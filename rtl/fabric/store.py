"""One stream's end-to-end store in hardware (PROTOCOL.md 10.7, 10.10, 10.11); twin of
golden/fabric/store.py."""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for

from golden import encoding as enc
from golden.params import check_int, check_window
from rtl.fabric.e2e import Release
from rtl.link.framer import FRAME_BITS

SEQ = enc.E2E_SEQ_BITS


def slot_of(seq, window: int):
    """The slot of sequence ``seq`` in a memory of ``window`` slots (a power of two): its low bits."""
    bits = (window - 1).bit_length()
    return seq[:bits] if bits else 0


class Store(wiring.Component):
    """The frames of one stream not yet acknowledged, in ``window`` slots of a memory (the slot
    of a frame the low bits of its sequence), and the stream's sequences: ``next_seq`` (the next
    to number), ``base`` (the oldest not acknowledged), ``send`` (the next to hand to a port),
    and ``via``/``via_valid``, the port the frames from ``base`` to ``send`` left by.

    The memory holds a frame's payload alone, its first ``payload_slices`` slices after the
    header (the rest are zero): ``header(seq=...)`` gives slice 0 of the frame numbered ``seq``
    (the stream's kind, origin, destination and class are fixed), so the header is built from
    ``send`` as the frame leaves. A 64-deep store of user frames then takes 13 ECP5 block RAMs
    of 36 bits, not 15; a control stream's five slices take 80 distributed-RAM blocks, not 128.

    Ports, with the golden method each stands for, applied in one cycle in this order:

    * ``write``, ``write_payload`` (:meth:`write`; the caller numbered the frame ``next_seq``
      and writes only when not ``full``);
    * ``take``, ``take_link`` (:meth:`take`; only when ``unsent``): ``frame`` is the frame at
      ``send``;
    * ``settle``, ``settle_link``, ``settle_hop``/``settle_hop_valid`` (:meth:`settled`):
      ``settled`` says whether the stream's frames left by the settled port;
    * ``taken``, ``taken_seq`` (:meth:`taken`);
    * ``ack_valid``, ``ack`` (:meth:`release`);
    * ``resend`` (:meth:`resend`: a settle the port skipped, found in its step);
    * ``hop``/``hop_valid`` (:meth:`rewind`, every cycle, on the stream's next hop as the
      cycle leaves it).

    ``again`` is how many frames go again in the cycle, by ``resend`` or the rewind (never both:
    after a resend no frame is sent, so nothing rewinds).

    Outputs read the registers: ``held``, ``full``, ``unsent`` and ``frame`` before this cycle's
    inputs act, except that with ``bypass`` a frame written while nothing waits to be sent is
    ``frame`` and ``unsent`` in the same cycle (a user stream: the user's frame comes before the
    port's choice, 10.11). ``window``: slots, a power of two. Latency: the memory is read a cycle
    ahead, at the ``send`` the cycle leaves. Failure behaviour: a write when ``full`` or a take
    when not ``unsent`` is the caller's error (the golden model raises); ValueError at
    construction for a bad ``window``.
    """

    def __init__(self, window: int, *, header, payload_slices: int = enc.SLICES_PER_FRAME - 1, bypass: bool = False):
        self._window, self._bypass = check_window("window", window), bool(bypass)
        if not callable(header):
            raise ValueError(f"header must be a function of the sequence giving slice 0, not {header!r}")
        self._header = header
        self._payload_bits = check_int("payload_slices", payload_slices, 1, enc.SLICES_PER_FRAME - 1) * enc.SLICE_BITS
        width = bits_for(window)
        link = enc.LINK_ID_BITS
        super().__init__(
            {
                "write": In(1),
                "write_payload": In(self._payload_bits),
                "take": In(1),
                "take_link": In(link),
                "settle": In(1),
                "settle_link": In(link),
                "settle_hop": In(link),
                "settle_hop_valid": In(1),
                "taken": In(1),
                "taken_seq": In(SEQ),
                "ack_valid": In(1),
                "ack": In(SEQ),
                "resend": In(1),
                "hop": In(link),
                "hop_valid": In(1),
                "next_seq": Out(SEQ),
                "base": Out(SEQ),
                "send": Out(SEQ),
                "via": Out(link),
                "via_valid": Out(1),
                "held": Out(width),
                "full": Out(1),
                "unsent": Out(1),
                "frame": Out(FRAME_BITS),
                "settled": Out(1),
                "again": Out(width),
            }
        )

    def elaborate(self, platform):
        m = Module()
        window = self._window
        w = bits_for(window)  # an offset from ``base``: 0 to window
        m.submodules.mem = mem = memory.Memory(shape=self._payload_bits, depth=window, init=[])
        m.submodules.release = release = Release(window)
        wr = mem.write_port()
        rd = mem.read_port(domain="sync", transparent_for=[wr])

        next_seq, base, send = Signal(SEQ), Signal(SEQ), Signal(SEQ)
        via, via_valid = Signal(enc.LINK_ID_BITS), Signal()
        # ``next_seq - base`` and ``send - base``, kept beside the sequences: both lie within
        # the window, so the cycle's steps below work on offsets from ``base`` of ``w`` bits,
        # not on 32-bit sequences one after another (the golden order is kept).
        held, sent = Signal(w, name="held_count"), Signal(w, name="sent_count")
        m.d.comb += [
            self.next_seq.eq(next_seq),
            self.base.eq(base),
            self.send.eq(send),
            self.via.eq(via),
            self.via_valid.eq(via_valid),
            self.held.eq(held),
            self.full.eq(held >= window),
            wr.addr.eq(slot_of(next_seq, window)),
            wr.data.eq(self.write_payload),
            wr.en.eq(self.write),
        ]
        # The frame at ``send``: its slot was read at the ``send`` the last cycle left.
        payload = rd.data
        if self._bypass:
            fresh = self.write & (sent == held)
            payload = Mux(fresh, self.write_payload, rd.data)
            m.d.comb += self.unsent.eq((sent != held) | self.write)
        else:
            m.d.comb += self.unsent.eq(sent != held)
        zeros = Const(0, FRAME_BITS - enc.SLICE_BITS - self._payload_bits)
        m.d.comb += self.frame.eq(Cat(self._header(seq=send), payload, zeros))

        held1 = Signal(w)
        m.d.comb += held1.eq(held + self.write)
        # take
        sent1, via1, via_valid1 = Signal(w), Signal(enc.LINK_ID_BITS), Signal()
        m.d.comb += [
            sent1.eq(sent + self.take),
            via1.eq(Mux(self.take, self.take_link, via)),
            via_valid1.eq(via_valid | self.take),
        ]
        # settle: the frames that left by the settled port go on by the new hop
        via2, via_valid2 = Signal(enc.LINK_ID_BITS), Signal()
        m.d.comb += [
            self.settled.eq(self.settle & (sent1 != 0) & via_valid1 & (via1 == self.settle_link)),
            via2.eq(Mux(self.settled, self.settle_hop, via1)),
            via_valid2.eq(Mux(self.settled, self.settle_hop_valid, via_valid1)),
        ]
        # taken: a frame the settled port took out goes again, and what follows it
        index, lowered, sent2 = Signal(SEQ), Signal(), Signal(w)
        m.d.comb += [
            index.eq(self.taken_seq - base),
            lowered.eq(self.taken & self._below(index, sent1)),
            sent2.eq(Mux(lowered, index[:w], sent1)),
        ]
        # release: ``n`` frames acknowledged; ``send`` moves up to the new base if below it
        n, caught_up, sent3 = Signal(w), Signal(), Signal(w)
        m.d.comb += [
            release.ack.eq(self.ack),
            release.head.eq(base),
            release.held.eq(held1),
            n.eq(Mux(self.ack_valid, release.released, 0)),
            caught_up.eq(n >= sent2),
            sent3.eq(Mux(caught_up, n, sent2)),
        ]
        # resend: every frame not yet acknowledged goes again, by the same port
        sent5 = Signal(w)
        m.d.comb += sent5.eq(Mux(self.resend, n, sent3))
        # rewind, on the hop the cycle leaves
        left, to_base = Signal(w), Signal()
        same = (self.hop_valid == via_valid2) & (~self.hop_valid | (self.hop == via2))
        rewind = Signal()
        m.d.comb += [
            left.eq(sent5 - n),
            rewind.eq((left != 0) & ~same),
            to_base.eq(self.resend | caught_up | (rewind & self.hop_valid)),
            self.again.eq(Mux(self.resend, sent3 - n, Mux(rewind & self.hop_valid, left, 0))),
        ]
        # ``send`` as the cycle leaves it, an offset from the old base and as a sequence: the new
        # base, the frame taken out, or where the take left it.
        sent4 = Signal(w)
        base3 = Signal(SEQ)
        m.d.comb += [
            sent4.eq(Mux(rewind & self.hop_valid, n, sent5)),
            base3.eq(base + n),
            rd.addr.eq(slot_of(base + sent4, window)),
        ]
        m.d.sync += [
            next_seq.eq(next_seq + self.write),
            base.eq(base3),
            send.eq(Mux(to_base, base3, Mux(lowered, self.taken_seq, send + self.take))),
            held.eq(held1 - n),
            sent.eq(sent4 - n),
        ]
        with m.If(rewind):
            m.d.sync += [via.eq(self.hop), via_valid.eq(self.hop_valid)]
        with m.Else():
            m.d.sync += [via.eq(via2), via_valid.eq(via_valid2)]
        return m

    @staticmethod
    def _below(index, sent):
        """``index`` (32 bits) is below ``sent`` (``w`` bits, at most the window): its high bits
        are zero and its low bits below ``sent``."""
        w = len(sent)
        return (index[w:] == 0) & (index[:w] < sent)
