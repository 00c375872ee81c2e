"""The receiver's frame store and delivery (docs/PROTOCOL.md 4.3): per class a receive memory of
2W' frames, written a slice at a time the cycle after A took it and read out to the user as
tokens deliver frames; and reconciliation (PROTOCOL.md 3.3), computed ahead while training.

(The receive counts, the slice sequence, the running receive digest and the checks of the
commit counts stay in the framer: the token and RESYNC decisions move them together.)
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from golden import encoding as enc
from golden.params import check_read_slices
from rtl.common import fields

FRAME_BITS = enc.SLICES_PER_FRAME * enc.SLICE_BITS


class Delivery(wiring.Component):
    """Receive memories and the user's ``frames_out`` streams.

    ================  ===  =====================  ==========================================================
    port              dir  width                  meaning
    ================  ===  =====================  ==========================================================
    ``took``          in   C                      A takes the data slice of class c (one-hot)
    ``index``         in   INDEX_BITS             the slice's index
    ``slice``         in   SLICE_BITS             the slice
    ``addr[c]``       in   slot_bits + 1          the frame slot class c's slice goes to
    ``delivered[c]``  in   seq_bits               register: the frames of class c delivered so far
    ``frames_out[c]`` out  stream of FRAME_BITS   delivered frames of class c
    ``out_ptr[c]``    out  seq_bits               register: the frames of class c the user took
    ``take``          out  C                      the user takes a frame of class c now
    ================  ===  =====================  ==========================================================

    The memory is ``read_slices`` slices wide: a frame is read in P = 8 / ``read_slices`` parts,
    a part a cycle at the registered pointer, the first P - 1 into registers and the last shown
    straight from the memory. A block RAM row serves 36 bits a clock whatever its depth, so a
    memory a frame wide takes 16 DP16KD and one two slices wide 4 (docs/FPGA.md).

    Latency: a slice taken in A is written from registers the next cycle; a frame delivered
    shows on ``frames_out`` P cycles after its delivery (``valid`` is a register), and after one
    is taken its successor shows P cycles later: at most one frame every P + 1 cycles, within
    the eight a frame takes on the wire. Failure behaviour: delivery is not flow-controlled; the
    framer refuses slices while the memory is full (``mem_full``), which the peer's RESYNC
    recovers.
    """

    def __init__(self, *, num_classes, seq_bits, slot_bits, read_slices=enc.SLICES_PER_FRAME):
        self._read_slices = check_read_slices(read_slices)
        self._C, self._Wp = num_classes, 1 << slot_bits
        super().__init__(
            {
                "took": In(num_classes),
                "index": In(enc.INDEX_BITS),
                "slice": In(enc.SLICE_BITS),
                "addr": In(slot_bits + 1).array(num_classes),
                "delivered": In(seq_bits).array(num_classes),
                "frames_out": Out(stream.Signature(FRAME_BITS)).array(num_classes),
                "out_ptr": Out(seq_bits).array(num_classes),
                "take": Out(num_classes),
            }
        )

    def elaborate(self, platform):
        m = Module()
        C, Wp, R = self._C, self._Wp, self._read_slices
        parts = enc.SLICES_PER_FRAME // R
        part_bits, row_bits = (parts - 1).bit_length(), (R - 1).bit_length()
        # The slice enters the receive memory a cycle later, from registers: its frame is
        # delivered only after a digest round trip.
        w_en, w_addr, w_data = (
            Signal(C * R, name="w_en"),
            Signal(len(self.addr[0]), name="w_addr"),
            Signal(enc.SLICE_BITS, name="w_data"),
        )
        # The part of its frame the slice goes to (none when a read is a whole frame).
        w_part = Signal(part_bits, name="w_part") if part_bits else Cat()
        m.d.sync += [w_en.eq(0), w_data.eq(self.slice)]
        for c in range(C):
            # Block RAM at every window: written a slice at a time, read a part at a time at the
            # registered pointer into the user's port. In LUT RAM its 512-bit read mux and the
            # pointer's fanout would spread the framer over the die (docs/FPGA.md).
            pending = Memory(shape=R * enc.SLICE_BITS, depth=2 * Wp * parts, init=[], attrs={"ram_style": "block"})
            m.submodules[f"pending{c}"] = pending
            wr = pending.write_port(granularity=enc.SLICE_BITS)
            out = pending.read_port(domain="sync")
            out_valid = Signal(name=f"out_valid{c}")
            out_ptr = self.out_ptr[c]
            take = out_valid & self.frames_out[c].ready
            m.d.comb += [
                self.frames_out[c].valid.eq(out_valid),
                self.take[c].eq(take),
            ]
            if parts == 1:
                m.d.comb += [out.addr.eq(out_ptr), self.frames_out[c].payload.eq(out.data)]
                m.d.sync += out_valid.eq((out_ptr != self.delivered[c]) & ~take)
            else:
                # A part is read each cycle the pointer's frame is delivered and not yet whole;
                # the part number stays at the last while the frame is offered, so the memory
                # shows it.
                fetch = (out_ptr != self.delivered[c]) & ~out_valid
                part = Signal(part_bits, name=f"out_part{c}")
                # The part read in the previous cycle, into its register (never the last).
                latch = Signal(name=f"out_latch{c}")
                held = [Signal(R * enc.SLICE_BITS, name=f"out_part{c}_{j}") for j in range(parts - 1)]
                m.d.comb += [
                    out.addr.eq(Cat(part, out_ptr[: len(out.addr) - part_bits])),
                    self.frames_out[c].payload.eq(Cat(*held, out.data)),
                ]
                m.d.sync += latch.eq(fetch & (part != parts - 1))
                with m.If(latch):
                    with m.Switch(part):
                        for j in range(parts - 1):
                            with m.Case(j + 1):
                                m.d.sync += held[j].eq(out.data)
                with m.If(take):
                    m.d.sync += [out_valid.eq(0), part.eq(0)]
                with m.Elif(fetch):
                    with m.If(part == parts - 1):
                        m.d.sync += out_valid.eq(1)
                    with m.Else():
                        m.d.sync += part.eq(part + 1)
            with m.If(take):
                m.d.sync += out_ptr.eq(out_ptr + 1)
            m.d.comb += [
                wr.addr.eq(Cat(w_part, w_addr)),
                wr.data.eq(w_data.replicate(R)),
                wr.en.eq(w_en.word_select(c, R)),
            ]
        for c in range(C):
            with m.If(self.took[c]):
                # A frame sent again overwrites the held copy slice by slice (golden swaps it
                # whole at its end): a replacement cut short leaves a mix, which no count
                # delivers, as the frame is not good until a whole replacement's digest matches.
                m.d.sync += [w_en.word_select(c, R).eq(1 << self.index[:row_bits]), w_addr.eq(self.addr[c])]
                if part_bits:
                    m.d.sync += w_part.eq(self.index[row_bits:])
        return m


class Reconcile(wiring.Component):
    """Reconciliation computed ahead (golden ``Framer.reconcile``): its inputs do not move in training.

    ======================  ===  ==================  ==============================================
    port                    dir  width               meaning
    ======================  ===  ==================  ==============================================
    ``peer_half``           in   CTL_BODY_BITS       the peer's READY body stored by training
    ``peer_half_in``        in   CTL_BODY_BITS       the READY body arriving (stored at this edge)
    ``peer_store``          in   1                   training stores ``peer_half_in`` at this edge
    ``entangle``            in   1                   the end entangles now
    ``settle``              in   1                   a settle applies now (PROTOCOL.md 10.6)
    ``settle_due``          in   1                   a settle applies or is skipped now (a register)
    ``delivered[c]``        in   seq_bits            register: frames of class c delivered
    ``pending[c]``          in   seq_bits            register: frames of class c received, not delivered
    ``delivers[c]``         out  seq_bits            frames of class c reconciling delivers
    ``recon_delivered[c]``  out  seq_bits            register: ``delivered + delivers``
    ``delivered_recon``     out  range(C 2W' + 1)    register: frames reconciling delivers, all classes
    ``conflicts``           out  range(C + 1)        when entangling: classes not accounted for
    ======================  ===  ==================  ==============================================

    Latency: two register stages, the peer's confirmed counts against what this end delivered
    (from the READY body in the cycle training stores it), then what reconciling delivers. Both
    are ready two cycles after the first READY of a round, the earliest an end entangles. A
    settle's half-state comes in as an arriving half (``peer_half_in`` with ``peer_store``, from
    the endpoint) and applies two cycles later (``settle``); its counts are the peer's confirmed
    counts, which the READY bodies of the session carry too, so an end entangling meanwhile
    reconciles to the same counts. As a settle applies, the stages take the values that follow
    it (nothing more to deliver), since their inputs move. Failure behaviour: a peer count beyond
    the frames pending is a conflict: all pending frames are delivered.
    """

    def __init__(self, *, num_classes, count_bits, seq_bits, slot_bits):
        C = num_classes
        self._C, self._K = C, count_bits
        super().__init__(
            {
                "peer_half": In(enc.CTL_BODY_BITS),
                "peer_half_in": In(enc.CTL_BODY_BITS),
                "peer_store": In(1),
                "entangle": In(1),
                "settle": In(1),
                "settle_due": In(1),
                "delivered": In(seq_bits).array(C),
                "pending": In(seq_bits).array(C),
                "delivers": Out(seq_bits).array(C),
                "recon_delivered": Out(seq_bits).array(C),
                "delivered_recon": Out(range(C * (2 << slot_bits) + 1)),
                "conflicts": Out(range(C + 1)),
            }
        )

    def elaborate(self, platform):
        m = Module()
        C, K = self._C, self._K
        recon_conflict = [Signal(1, name=f"recon_conflict{c}") for c in range(C)]
        delivers = []
        for c in range(C):
            pend, delivered = self.pending[c], self.delivered[c]
            owed_q, conflict_q = Signal(K, name=f"recon_owed{c}"), Signal(name=f"recon_over{c}")
            owed = {}
            for name, half in (("stored", self.peer_half), ("arriving", self.peer_half_in)):
                owed[name] = Signal(K, name=f"recon_owed_{name}{c}")
                lsb, width = enc.class_count_field(c, C)
                count = fields.view(enc.READY_BODY, half).counts[lsb : lsb + width]
                m.d.comb += owed[name].eq(count - delivered)
            m.d.sync += [
                owed_q.eq(Mux(self.peer_store, owed["arriving"], owed["stored"])),
                conflict_q.eq(Mux(self.peer_store, owed["arriving"] > pend, owed["stored"] > pend)),
            ]
            delivers.append(Mux(conflict_q, pend, owed_q))
            m.d.comb += self.delivers[c].eq(delivers[c])
            m.d.sync += [recon_conflict[c].eq(conflict_q), self.recon_delivered[c].eq(delivered + delivers[c])]
            with m.If(self.settle_due):
                # Delivered moves to recon_delivered now, and nothing is pending after it (also
                # when an entangle in this cycle skips the settle: it reconciles the same way).
                m.d.sync += [owed_q.eq(0), conflict_q.eq(0), self.recon_delivered[c].eq(self.recon_delivered[c])]
        m.d.sync += self.delivered_recon.eq(Mux(self.settle_due, 0, sum(delivers)))
        m.d.comb += self.conflicts.eq(Mux(self.entangle | self.settle, sum(recon_conflict), 0))
        return m
