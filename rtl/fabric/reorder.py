"""The reorder buffer of one stream in hardware (PROTOCOL.md 10.7, 10.10); twin of
golden/fabric/reorder.py. The frames themselves are in the destination's one reorder memory
(:class:`rtl.fabric.destination.Destination`); this is what the stream knows of its slots."""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for

from golden import encoding as enc
from golden.params import check_window
from rtl.fabric.store import slot_of

SEQ = enc.E2E_SEQ_BITS


class Reorder(wiring.Component):
    """Which of a stream's ``window`` slots hold a frame that arrived ahead of ``expected`` (the
    slot of a frame the low bits of its sequence), a valid bit each.

    Ports: ``expected`` (in: the stream's next expected sequence); ``query_seq`` and ``holds``
    (golden :meth:`holds`: the frame is held); ``hold``, ``hold_seq`` and ``accepted`` (golden
    :meth:`hold`: kept, when ``hold_seq`` is 1 to ``window - 1`` ahead of ``expected``; the
    caller writes the frame into the slot when ``accepted``); ``take`` and ``take_seq`` (golden
    :meth:`take`: the slot is emptied); ``count`` (out: frames held).

    Only frames less than a window ahead are held, so a slot's valid bit and ``expected`` tell
    which sequence it holds: the one in [``expected``, ``expected + window``) with those low bits
    (the caller never lets ``expected`` pass a held frame: it takes each as it becomes the next).
    ``window``: slots, a power of two. Latency: combinational, registered at the clock. Failure
    behaviour: a frame a window or more ahead is not kept (``accepted`` low); ValueError at
    construction for a bad ``window``.
    """

    def __init__(self, window: int):
        self._window = check_window("window", window)
        super().__init__(
            {
                "expected": In(SEQ),
                "query_seq": In(SEQ),
                "holds": Out(1),
                "hold": In(1),
                "hold_seq": In(SEQ),
                "accepted": Out(1),
                "take": In(1),
                "take_seq": In(SEQ),
                "count": Out(bits_for(window)),
            }
        )

    def elaborate(self, platform):
        m = Module()
        window = self._window

        def slot(seq):
            return slot_of(seq, window)

        valid = Signal(window)
        query_ahead, hold_ahead = Signal(SEQ), Signal(SEQ)
        m.d.comb += [
            query_ahead.eq(self.query_seq - self.expected),
            self.holds.eq(valid.bit_select(slot(self.query_seq), 1) & (query_ahead < window)),
            hold_ahead.eq(self.hold_seq - self.expected),
            self.accepted.eq(self.hold & (hold_ahead != 0) & (hold_ahead < window)),
            self.count.eq(sum(valid[i] for i in range(window))),
        ]
        for i in range(window):
            with m.If(self.accepted & (slot(self.hold_seq) == i)):
                m.d.sync += valid[i].eq(1)
            with m.Elif(self.take & (slot(self.take_seq) == i)):
                m.d.sync += valid[i].eq(0)
        return m
