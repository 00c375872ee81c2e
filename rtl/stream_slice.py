"""A register stage for an amaranth.lib.stream, cutting every combinational path through it."""

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out


class StreamSlice(wiring.Component):
    """One-entry stream buffer whose outputs are all registers.

    Ports: ``sink`` (in) and ``source`` (out), streams of ``shape``. ``sink.ready`` is "empty"
    and ``source.valid`` is "full", so neither side's handshake reaches the other's logic in the
    same cycle (what lets a wide FIFO and the endpoint core be placed apart on an FPGA). Latency
    one cycle; throughput one transfer every two cycles, four times what a class of frames can
    use (a frame leaves in eight). Nothing is dropped: a full slice refuses the next transfer.
    """

    def __init__(self, shape):
        super().__init__({"sink": In(stream.Signature(shape)), "source": Out(stream.Signature(shape))})

    def elaborate(self, platform):
        m = Module()
        full = Signal(name="full")
        m.d.comb += [self.sink.ready.eq(~full), self.source.valid.eq(full)]
        with m.If(self.sink.valid & self.sink.ready):
            m.d.sync += [self.source.payload.eq(self.sink.payload), full.eq(1)]
        with m.If(self.source.valid & self.source.ready):
            m.d.sync += full.eq(0)
        return m
