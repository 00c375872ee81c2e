"""The sender's frame store (docs/PROTOCOL.md 4.2, 4.4): per class a replay memory of W' frames,
holding the frames the user handed in until their digest matches, read at the send pointer for
stage B1, which takes the chosen slice out of each class's frame; B2 takes the class.

(The send pointers, the window and the choice of stage S stay in the framer, beside the
recovery and selective-repeat decisions that move them.)
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from golden import encoding as enc
from golden.params import check_int

FRAME_BITS = enc.SLICES_PER_FRAME * enc.SLICE_BITS


class ReplayStore(wiring.Component):
    """Replay memories and the data slice's part of stages B1 and B2.

    ===============  ===  ============================  ===================================================
    port             dir  width                         meaning
    ===============  ===  ============================  ===================================================
    ``frames_in[c]`` in   stream of FRAME_BITS          the user's frames of class c; ready is ``room[c]``
    ``room``         in   C                             register: class c's window has room for a frame
    ``next_seq[c]``  in   seq_bits                      where class c's next frame handed in is written
    ``frame_seq[c]`` in   seq_bits                      the frame class c sends from (read address)
    ``sent_data``    in   1                             S sends a data slice
    ``data_cls``     in   CLASS_BITS                    its class
    ``cur_slice``    in   INDEX_BITS                    its index
    ``cur_seq``      in   seq_bits                      its frame's sequence
    ``b_valid``      out  1                             register: B1 reads the slice S chose last cycle
    ``b_cls``        out  CLASS_BITS                    register: its class
    ``b_index``      out  INDEX_BITS                    register: its index
    ``b_seq``        out  seq_bits                      register: its frame's sequence
    ``b_slice``      out  SLICE_BITS                    B2's slice (S chose it two cycles ago), from registers
    ``take_reading`` in   1                             register: the settle's take-out reads (PROTOCOL.md 10.6)
    ``take_addr``    in   seq_bits                      register: the frame it reads
    ``stored[c]``    out  FRAME_BITS                    class c's frame read, as stored (bit-interleaved)
    ===============  ===  ============================  ===================================================

    Latency: a frame handed in is written at the end of its cycle, so the read of the next
    cycle, which may choose it, sees it (no write-through). The read port is synchronous (block
    RAM for large windows): its address ``frame_seq`` never waits for S's decision, and the
    frame read is there in B1, the cycle after S chose the slice. B1 picks the slice at
    ``b_index`` out of every class's frame into a register; B2, the next cycle, selects the
    class (``b_slice``), so the memory's output meets one 8:1 select before a register and the
    transmit word one small select (PROTOCOL.md 2.2). While the take-out reads, the
    port reads ``take_addr`` instead (nothing is sent then: no frame waits to be).

    Parameters: ``window_slots`` (W', the memory's depth) and ``window`` (W, the most frames
    unconfirmed, at most W'); a bad one raises ValueError naming it. Failure behaviour: none; a
    frame's slot is written again only once it is free (with W = W', while ``room``; else on a
    frame handed in).
    """

    def __init__(self, *, num_classes, seq_bits, window_slots, window):
        check_int("window_slots", window_slots, 1)
        check_int("window", window, 1, window_slots)
        self._C, self._Wp, self._W = num_classes, window_slots, window
        super().__init__(
            {
                "frames_in": In(stream.Signature(FRAME_BITS)).array(num_classes),
                "room": In(num_classes),
                "next_seq": In(seq_bits).array(num_classes),
                "frame_seq": In(seq_bits).array(num_classes),
                "sent_data": In(1),
                "data_cls": In(enc.CLASS_BITS),
                "cur_slice": In(enc.INDEX_BITS),
                "cur_seq": In(seq_bits),
                "b_valid": Out(1),
                "b_cls": Out(enc.CLASS_BITS),
                "b_index": Out(enc.INDEX_BITS),
                "b_seq": Out(seq_bits),
                "b_slice": Out(enc.SLICE_BITS),
                "take_reading": In(1),
                "take_addr": In(seq_bits),
                "stored": Out(FRAME_BITS).array(num_classes),
            }
        )

    def elaborate(self, platform):
        m = Module()
        C, Wp = self._C, self._Wp
        frame_q = [Signal(FRAME_BITS, name=f"frame_q{c}") for c in range(C)]
        for c in range(C):
            replay = Memory(shape=FRAME_BITS, depth=Wp, init=[])
            m.submodules[f"replay{c}"] = replay
            hand_in = replay.write_port()
            port = self.frames_in[c]
            m.d.comb += [
                port.ready.eq(self.room[c]),
                hand_in.addr.eq(self.next_seq[c]),
                hand_in.data.eq(_interleave(port.payload)),
                # With W = W' the slot at ``next_seq`` is free whenever the class may take a
                # frame (fewer than W unconfirmed): it is written then, whether or not a frame is
                # handed in, and a frame handed in later overwrites it, so the handshake drives
                # no block RAM's write enable. With W < W' (the long build) the handshake does:
                # placed with a constant enable or the ready register instead, the long build's
                # framer missed the target at every seed (docs/FPGA.md).
                hand_in.en.eq(port.ready if self._W == self._Wp else port.valid & port.ready),
            ]
            # The frame of the send pointer, read at its register by a synchronous port (block
            # RAM): what B reads the slice S chose from.
            send = replay.read_port(domain="sync")
            m.d.comb += [
                send.addr.eq(Mux(self.take_reading, self.take_addr, self.frame_seq[c])),
                frame_q[c].eq(send.data),
                self.stored[c].eq(send.data),
            ]

        # --- B1: the slice of the data word chosen last cycle, out of each class's frame ----------
        b_cls, b_index = self.b_cls, self.b_index
        m.d.sync += [
            self.b_valid.eq(self.sent_data),
            b_cls.eq(self.data_cls),
            b_index.eq(self.cur_slice),
            self.b_seq.eq(self.cur_seq),
        ]
        picked = [Signal(enc.SLICE_BITS, name=f"picked{c}") for c in range(C)]
        for c in range(C):
            m.d.sync += picked[c].eq(_slice_of(frame_q[c], b_index))
        # --- B2: the class (a 64-bit select of registers, not 512 bits of memory output) -------
        built_cls = Signal(enc.CLASS_BITS, name="built_cls")
        m.d.sync += built_cls.eq(b_cls)
        for c in range(C):
            with m.If(built_cls == c):
                m.d.comb += self.b_slice.eq(picked[c])
        return m


# A frame is stored bit-interleaved: bit j of slice k at memory bit j * SLICES + k. The eight
# bits a slice's bit j is picked from then sit side by side in one block RAM, with the 8:1
# select beside it. Stored slice after slice, each output bit was gathered from eight block
# RAMs down a column (make synth, framer_long: 5.6 ns of routing on a 7.5 ns path).
def _interleave(frame):
    S, B = enc.SLICES_PER_FRAME, enc.SLICE_BITS
    return Cat(*[frame[k * B + j] for j in range(B) for k in range(S)])


def deinterleave(stored):
    """The frame as the user handed it in, from its stored copy (the inverse of _interleave)."""
    S, B = enc.SLICES_PER_FRAME, enc.SLICE_BITS
    return Cat(*[stored[j * S + k] for k in range(S) for j in range(B)])


def _slice_of(stored, index):
    S, B = enc.SLICES_PER_FRAME, enc.SLICE_BITS
    return Cat(*[stored.word_select(j, S).bit_select(index, 1) for j in range(B)])
