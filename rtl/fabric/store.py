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
        m.submodules.mem = mem = memory.Memory(shape=self._payload_bits, depth=window, init=[])
        m.submodules.release = release = Release(window)
        wr = mem.write_port()
        rd = mem.read_port(domain="sync", transparent_for=[wr])

        next_seq, base, send = Signal(SEQ), Signal(SEQ), Signal(SEQ)
        via, via_valid = Signal(enc.LINK_ID_BITS), Signal()
        m.d.comb += [
            self.next_seq.eq(next_seq),
            self.base.eq(base),
            self.send.eq(send),
            self.via.eq(via),
            self.via_valid.eq(via_valid),
            self.held.eq(next_seq - base),
            self.full.eq(self.held >= window),
            wr.addr.eq(slot_of(next_seq, window)),
            wr.data.eq(self.write_payload),
            wr.en.eq(self.write),
        ]
        # The frame at ``send``: its slot was read at the ``send`` the last cycle left.
        payload = rd.data
        if self._bypass:
            fresh = self.write & (send == next_seq)
            payload = Mux(fresh, self.write_payload, rd.data)
            m.d.comb += self.unsent.eq((send != next_seq) | self.write)
        else:
            m.d.comb += self.unsent.eq(send != next_seq)
        zeros = Const(0, FRAME_BITS - enc.SLICE_BITS - self._payload_bits)
        m.d.comb += self.frame.eq(Cat(self._header(seq=send), payload, zeros))

        next_seq1 = Signal(SEQ)
        m.d.comb += next_seq1.eq(next_seq + self.write)
        # take
        send1, via1, via_valid1 = Signal(SEQ), Signal(enc.LINK_ID_BITS), Signal()
        m.d.comb += [
            send1.eq(send + self.take),
            via1.eq(Mux(self.take, self.take_link, via)),
            via_valid1.eq(via_valid | self.take),
        ]
        # settle: the frames that left by the settled port go on by the new hop
        via2, via_valid2 = Signal(enc.LINK_ID_BITS), Signal()
        m.d.comb += [
            self.settled.eq(self.settle & (send1 != base) & via_valid1 & (via1 == self.settle_link)),
            via2.eq(Mux(self.settled, self.settle_hop, via1)),
            via_valid2.eq(Mux(self.settled, self.settle_hop_valid, via_valid1)),
        ]
        # taken: a frame the settled port took out goes again, and what follows it
        send2, index, sent1 = Signal(SEQ), Signal(SEQ), Signal(SEQ)
        m.d.comb += [
            index.eq(self.taken_seq - base),
            sent1.eq(send1 - base),
            send2.eq(Mux(self.taken & (index < sent1), self.taken_seq, send1)),
        ]
        # release
        base3, send3, sent2 = Signal(SEQ), Signal(SEQ), Signal(SEQ)
        n = Signal.like(release.released)
        m.d.comb += [
            release.ack.eq(self.ack),
            release.head.eq(base),
            release.held.eq(next_seq1 - base),
            n.eq(Mux(self.ack_valid, release.released, 0)),
            base3.eq(base + n),
            sent2.eq(send2 - base),
            send3.eq(Mux(n >= sent2, base3, send2)),
        ]
        # resend: every frame not yet acknowledged goes again, by the same port
        resent, send5 = Signal(SEQ), Signal(SEQ)
        m.d.comb += [
            resent.eq(send3 - base3),
            send5.eq(Mux(self.resend, base3, send3)),
        ]
        # rewind, on the hop the cycle leaves
        sent3, send4 = Signal(SEQ), Signal(SEQ)
        same = (self.hop_valid == via_valid2) & (~self.hop_valid | (self.hop == via2))
        rewind = Signal()
        m.d.comb += [
            sent3.eq(send5 - base3),
            rewind.eq((sent3 != 0) & ~same),
            send4.eq(Mux(rewind & self.hop_valid, base3, send5)),
            self.again.eq(Mux(self.resend, resent, Mux(rewind & self.hop_valid, sent3, 0))),
            rd.addr.eq(slot_of(send4, window)),
        ]
        m.d.sync += [next_seq.eq(next_seq1), base.eq(base3), send.eq(send4)]
        with m.If(rewind):
            m.d.sync += [via.eq(self.hop), via_valid.eq(self.hop_valid)]
        with m.Else():
            m.d.sync += [via.eq(via2), via_valid.eq(via_valid2)]
        return m
