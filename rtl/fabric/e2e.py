"""End-to-end sequence arithmetic in hardware (PROTOCOL.md 10.7, 10.10); twin of
golden/fabric/e2e.py."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for

from golden import encoding as enc
from golden.params import E2E_ACK_EVERY_MAX, E2E_WINDOW_MAX, check_int

SEQ = enc.E2E_SEQ_BITS


class Arrival(wiring.Component):
    """What a destination does with a numbered frame of one stream (golden ``arrival`` and
    ``ack_due``).

    Ports (combinational): ``seq`` (in: the frame's), ``expected`` (in: the stream's next),
    ``acked`` and ``acked_valid`` (in: what the last ACK carried, and whether one was sent);
    ``duplicate`` (out: behind ``expected``), ``ahead`` (out: how far past ``expected``, 0 for
    the next frame; read when not ``duplicate``), ``ack_copy`` (out: a duplicate acknowledged
    again), ``ack_due`` (out: ``expected - acked`` is ``every`` or more, with ``acked`` read as
    0 before the first ACK: after a delivery moved ``expected``, an ACK is due).

    ``every``: frames per ACK (1 for a control stream). Latency: none (logic only). Failure
    behaviour: none; ValueError at construction for a bad ``every``.
    """

    def __init__(self, every: int):
        self._every = check_int("every", every, 1, E2E_ACK_EVERY_MAX)
        super().__init__(
            {
                "seq": In(SEQ),
                "expected": In(SEQ),
                "acked": In(SEQ),
                "acked_valid": In(1),
                "duplicate": Out(1),
                "ahead": Out(SEQ - 1),
                "ack_copy": Out(1),
                "ack_due": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        ahead = Signal(SEQ)
        newest = Signal(SEQ)
        since = Signal(SEQ)
        m.d.comb += [
            ahead.eq(self.seq - self.expected),
            newest.eq(self.expected - 1),
            # The top bit: at least half the sequence space ahead reads as behind.
            self.duplicate.eq(ahead[-1]),
            self.ahead.eq(ahead[:-1]),
            self.ack_copy.eq(ahead[-1] & (~self.acked_valid | (self.acked != self.expected) | (self.seq == newest))),
            since.eq(self.expected - Mux(self.acked_valid, self.acked, 0)),
            self.ack_due.eq(since >= self._every),
        ]
        return m


class Release(wiring.Component):
    """How many of the frames an origin holds for a stream an ACK releases (golden ``released``).

    Ports (combinational): ``ack`` (in: the sequence the ACK carries), ``head`` (in: the oldest
    held frame's sequence), ``held`` (in: how many are held, up to ``window``); ``released``
    (out): the held frames below ``ack``, or 0 when ``ack`` is not ahead of ``head`` by 1 to
    half the sequence space.

    ``window``: the most frames held. Latency: none (logic only). Failure behaviour: none;
    ValueError at construction for a bad ``window``.
    """

    def __init__(self, window: int):
        width = bits_for(check_int("window", window, 1, E2E_WINDOW_MAX))
        super().__init__({"ack": In(SEQ), "head": In(SEQ), "held": In(width), "released": Out(width)})

    def elaborate(self, platform):
        m = Module()
        d = Signal(SEQ)
        m.d.comb += d.eq(self.ack - self.head)
        ahead = (d != 0) & (d <= 1 << (SEQ - 1))
        with m.If(ahead):
            m.d.comb += self.released.eq(Mux(d < self.held, d, self.held))
        return m
