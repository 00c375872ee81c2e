"""What the peer must return, recorded on the sender's side (docs/PROTOCOL.md 2.2, 4.5): the
slices that leave on the wire, the sender's running digest over them, and the expect-queue entry
of each (a frame's digest, and in full mode each slice) with the deadline of its return.

(The return queues themselves, the reverse queue of what this end owes and the expect queue of
what it awaits, are :class:`rtl.common.queue.Queue` instances of the framer, which matches the
words A applies against their heads.)
"""

from amaranth.hdl import Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from golden import encoding as enc
from rtl.common.crc import crc32_advance, crc32_first, crc32_of_slice

_LAST = enc.SLICES_PER_FRAME - 1


def return_layout(full, seq_bits, time_bits=0):
    """A reverse-queue entry (``time_bits`` = 0) or an expect-queue entry: a frame's digest, and
    in full mode a slice whose entry also carries its frame's digest when it is the last one.
    ``seq_bits``: the count's width, or wider where the sender needs the whole sequence."""
    fields = {"cls": enc.CLASS_BITS, "seq": seq_bits, "crc": enc.DIGEST_CRC_BITS}
    if full:
        fields.update({"index": enc.INDEX_BITS, "slice": enc.SLICE_BITS, "digest": 1})
    if time_bits:
        fields["deadline"] = time_bits
    return data.StructLayout(fields)


class ExpectRecorder(wiring.Component):
    """The slices B built, followed onto the wire and into an expect-queue entry.

    ===============  ===  ======================  =====================================================
    port             dir  width                   meaning
    ===============  ===  ======================  =====================================================
    ``b_valid``      in   1                       B1 reads a data slice this cycle (S chose it last cycle)
    ``b_cls``        in   CLASS_BITS              its class
    ``b_index``      in   INDEX_BITS              its index in the frame
    ``b_seq``        in   seq_bits                its frame's sequence
    ``b_slice``      in   SLICE_BITS              the slice B2 builds this cycle (B1's of last cycle)
    ``cycle``        in   time_bits               the cycle counter (the deadline's base)
    ``rtt``          in   rtt_bits                the measured round trip
    ``up``           in   1                       the end is UP (entries are recorded only then)
    ``restart``      in   1                       the restart cycle (nothing is recorded)
    ``sent_resync``  in   1                       S sends a RESYNC: slices chosen before it are never recorded
    ``e_valid``      out  1                       register: an entry to push into the expect queue
    ``e_entry``      out  expect layout           register: the entry (cls, seq, crc, deadline; full: slice)
    ``e_tight``      out  1                       register: the entry is the first after a RESYNC (quiet bound)
    ``push``         out  1                       ``e_valid`` while recording (UP, not the restart cycle)
    ===============  ===  ======================  =====================================================

    Latency: a slice B1 reads is built by B2 the next cycle and on the wire the cycle after
    (the recorder follows it through B2 in registers of its own); its share of the digest is
    registered then, the running digest takes it the cycle after, where the entry is formed, and
    the entry waits a cycle in ``e_entry`` before the queue takes it (``push``): the XOR trees so
    end in registers. Each class's running digest restarts at slice 0. Failure behaviour: none
    of its own; a RESYNC drops the slices in flight.
    """

    def __init__(self, *, num_classes, full, seq_bits, expect_layout, time_bits, rtt_bits, margin_slack, margin_quiet):
        self._C, self._full, self._margin_slack, self._margin_quiet = num_classes, full, margin_slack, margin_quiet
        super().__init__(
            {
                "b_valid": In(1),
                "b_cls": In(enc.CLASS_BITS),
                "b_index": In(enc.INDEX_BITS),
                "b_seq": In(seq_bits),
                "b_slice": In(enc.SLICE_BITS),
                "cycle": In(time_bits),
                "rtt": In(rtt_bits),
                "up": In(1),
                "restart": In(1),
                "sent_resync": In(1),
                "e_valid": Out(1),
                "e_entry": Out(expect_layout),
                "e_tight": Out(1),
                "push": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        C, full = self._C, self._full
        N = len(self.b_seq)
        # --- B2: the slice B1 read last cycle is built ------------------------------------------
        b2_valid, b2_cls, b2_index, b2_seq = (
            Signal(name="b2_valid"),
            Signal(enc.CLASS_BITS, name="b2_cls"),
            Signal(enc.INDEX_BITS, name="b2_index"),
            Signal(N, name="b2_seq"),
        )
        m.d.sync += [
            b2_valid.eq(self.b_valid),
            b2_cls.eq(self.b_cls),
            b2_index.eq(self.b_index),
            b2_seq.eq(self.b_seq),
        ]

        # --- on the wire: the sender's running digest over the slices that leave ------------------
        w_valid, w_cls, w_index, w_seq = (
            Signal(name="w_valid"),
            Signal(enc.CLASS_BITS, name="w_cls"),
            Signal(enc.INDEX_BITS, name="w_index"),
            Signal(N, name="w_seq"),
        )
        w_slice = Signal(enc.SLICE_BITS)
        m.d.sync += [
            w_valid.eq(b2_valid),
            w_cls.eq(b2_cls),
            w_index.eq(b2_index),
            w_seq.eq(b2_seq),
            w_slice.eq(self.b_slice),
        ]

        # --- a cycle later: what the peer must return, recorded the cycle after (PROTOCOL.md 2.2) --
        # The slice's share of the digest is computed on the wire cycle and registered; the running
        # digest takes it here, where the record reads it (two short XOR trees, not one deep one).
        r_valid, r_cls, r_index, r_seq = (
            Signal(name="r_valid"),
            Signal(enc.CLASS_BITS, name="r_cls"),
            Signal(enc.INDEX_BITS, name="r_index"),
            Signal(N, name="r_seq"),
        )
        r_slice, r_share = Signal(enc.SLICE_BITS), Signal(enc.DIGEST_CRC_BITS, name="r_share")
        m.d.sync += [
            r_valid.eq(w_valid),
            r_cls.eq(w_cls),
            r_index.eq(w_index),
            r_seq.eq(w_seq),
            r_slice.eq(w_slice),
            r_share.eq(crc32_of_slice(m, w_slice)),
        ]
        entry = Signal(self.e_entry.shape())
        tight = Signal(name="tight_next")
        r_crc = Signal(enc.DIGEST_CRC_BITS)
        # Each class's digest advances on its own (the class picks only which one the record
        # reads), with a one-hot enable: the class number would otherwise fan out into every
        # digest bit's logic (placed, such a path took 3.4 ns of routing alone).
        first = crc32_first()
        tx_crc = [Signal(enc.DIGEST_CRC_BITS, name=f"tx_crc{c}") for c in range(C)]
        running = Signal(enc.DIGEST_CRC_BITS, name="r_running")
        r_hot = Signal(C, name="r_class")
        m.d.sync += r_hot.eq(Mux(w_valid, 1 << w_cls, 0))
        for c in range(C):
            running_c = Signal(enc.DIGEST_CRC_BITS, name=f"r_running{c}")
            m.d.comb += running_c.eq(Mux(r_index == 0, first, crc32_advance(m, tx_crc[c])) ^ r_share)
            with m.If(r_cls == c):
                m.d.comb += running.eq(running_c)
            with m.If(r_hot[c]):
                m.d.sync += tx_crc[c].eq(running_c)
        m.d.comb += r_crc.eq(running ^ enc.CRC32_XOROUT)
        m.d.comb += [
            entry.cls.eq(r_cls),
            entry.seq.eq(r_seq),
            entry.crc.eq(r_crc),
            entry.deadline.eq(self.cycle + self.rtt + Mux(tight, self._margin_quiet, self._margin_slack)),
        ]
        if full:
            m.d.comb += [entry.index.eq(r_index), entry.slice.eq(r_slice), entry.digest.eq(r_index == _LAST)]
        record = r_valid & (Const(1) if full else (r_index == _LAST))
        # The entry waits a cycle in a register before it enters the queue, so the digest's XOR
        # trees end there and not in the queue's memory and head (PROTOCOL.md 2.2).
        recording = self.up & ~self.restart
        e_valid, e_entry = self.e_valid, self.e_entry
        m.d.sync += [e_valid.eq(record & recording), e_entry.eq(entry), self.e_tight.eq(tight)]
        m.d.comb += self.push.eq(e_valid & recording)

        # --- a RESYNC: the slices chosen before it are never recorded (golden: an older epoch) ----
        # The first entry recorded after it is tight: the peer's reverse queue is empty (4.5).
        with m.If(self.sent_resync):
            m.d.sync += [b2_valid.eq(0), w_valid.eq(0), r_valid.eq(0), r_hot.eq(0), e_valid.eq(0), tight.eq(1)]
        with m.Elif(self.restart | (record & recording)):
            m.d.sync += tight.eq(0)
        return m
