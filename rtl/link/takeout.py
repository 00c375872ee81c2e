"""The frames a settled end takes out of its replay memory (docs/PROTOCOL.md 10.6). Twin of
golden/link/takeout.py.

Settling a failed link hands the end's unconfirmed frames, per class those from the confirmed
count up to the next to be handed in, to the fabric. They are read out of the replay memory
through the port stage B1 reads slices from (nothing is sent while they are taken: no frame is
handed in from the settle until the last is taken, and the settle numbers the next frame from the
confirmed count), newest first and the highest class first, one at a time.
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import enum, stream, wiring
from amaranth.lib.wiring import In, Out

from golden import encoding as enc
from rtl.link.framer.sender import FRAME_BITS, deinterleave


class TakeState(enum.Enum, shape=2):
    """golden ``TakeState``: idle; a frame chosen (the memory reads it next cycle); offered."""

    IDLE = 0
    LOAD = 1
    SHOW = 2


class TakeOut(wiring.Component):
    """The take-out of a ``num_classes`` end (golden ``TakeOut``).

    =================  ===  ===================  ==============================================================
    port               dir  width                meaning
    =================  ===  ===================  ==============================================================
    ``load``           in   1                    the settle applies at this edge: the frames from
                                                 ``confirmed[c]`` to ``next_seq[c]`` are to be taken (those
                                                 of a take-out under way stay; none is added then)
    ``next_seq[c]``    in   seq_bits             register: the next frame of class c to be handed in
    ``confirmed[c]``   in   seq_bits             register: class c's confirmed count
    ``stored[c]``      in   FRAME_BITS           the replay memory's output for class c, as stored
                                                 (bit-interleaved), a cycle after ``addr``
    ``reading``        out  1                    register: the replay memory's read port is the take-out's
    ``addr``           out  seq_bits             register: the frame it reads
    ``busy``           out  1                    register: frames are left to take, or one is on its way
    ``busy_stays``     out  1                    ``busy`` in the next cycle, unless a ``load`` starts a take-out
    ``taken[c]``       out  stream of FRAME_BITS class c's frame offered (byte 0 in bits 7..0), until ready
    =================  ===  ===================  ==============================================================

    Latency: with nothing on its way, a frame is chosen (its address latched, ``LOAD``); the
    memory reads it in the next cycle; it is offered from the cycle after that (``SHOW``) until
    taken. So one frame every third cycle at most, the first offered three cycles after the
    ``load`` edge. ``busy`` falls at the edge that takes the last. Failure behaviour: none; the
    ``load`` of a take-out under way adds nothing (no frame was handed in since its own).
    """

    def __init__(self, *, num_classes, seq_bits):
        self._C, self._N = num_classes, seq_bits
        super().__init__(
            {
                "load": In(1),
                "next_seq": In(seq_bits).array(num_classes),
                "confirmed": In(seq_bits).array(num_classes),
                "stored": In(FRAME_BITS).array(num_classes),
                "reading": Out(1),
                "addr": Out(seq_bits),
                "busy": Out(1),
                "busy_stays": Out(1),
                "taken": Out(stream.Signature(FRAME_BITS)).array(num_classes),
            }
        )

    def elaborate(self, platform):
        m = Module()
        C, N = self._C, self._N
        state = Signal(TakeState)
        cls = Signal(enc.CLASS_BITS, name="take_cls")
        # Per class the frame above the newest left to take: while busy, those left are
        # [confirmed, top).
        top = [Signal(N, name=f"take_top{c}") for c in range(C)]
        left = Cat(*[self.busy & (top[c] != self.confirmed[c]) for c in range(C)])
        # The highest class with a frame left (priority by assignment order: the last If wins).
        # At least one bit: range(1) would be none, which Verilator refuses as a [-1:0] vector.
        pick = Signal(range(max(C, 2)), name="take_pick")
        for c in range(C):
            with m.If(left[c]):
                m.d.comb += pick.eq(c)
        # One stream per class, straight from its memory: the fabric, which chooses among all its
        # frames' sources anyway, selects the class, and the end needs no frame-wide multiplexer.
        for c in range(C):
            m.d.comb += [
                self.taken[c].valid.eq((state == TakeState.SHOW) & (cls == c)),
                self.taken[c].payload.eq(deinterleave(self.stored[c])),
            ]
        accepted = Cat(*[t.valid & t.ready for t in self.taken]).any()
        # busy's next value, beside the register (the framer's ready is computed from it).
        last_taken = accepted & ~left.any()
        loaded = Cat(*[self.next_seq[c] != self.confirmed[c] for c in range(C)]).any()
        m.d.comb += self.busy_stays.eq(self.busy & ~last_taken)
        with m.Switch(state):
            with m.Case(TakeState.IDLE):
                with m.If(left.any()):
                    m.d.sync += [state.eq(TakeState.LOAD), cls.eq(pick), self.reading.eq(1)]
                    for c in range(C):
                        with m.If(pick == c):
                            m.d.sync += [top[c].eq(top[c] - 1), self.addr.eq(top[c] - 1)]
            with m.Case(TakeState.LOAD):
                m.d.sync += state.eq(TakeState.SHOW)
            with m.Case(TakeState.SHOW):
                with m.If(accepted):
                    m.d.sync += [state.eq(TakeState.IDLE), self.reading.eq(0)]
        # A load with no take-out under way: the unconfirmed frames are left to take. (With one
        # under way nothing was handed in since its own load: next_seq is the confirmed count.)
        with m.If(self.load & ~self.busy):
            m.d.sync += [top[c].eq(self.next_seq[c]) for c in range(C)]
        m.d.sync += self.busy.eq(Mux(self.busy, ~last_taken, self.load & loaded))
        return m
