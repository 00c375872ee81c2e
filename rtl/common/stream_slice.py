"""Register stages for an amaranth.lib.stream, cutting every combinational path through them."""

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


class StreamSkid(wiring.Component):
    """Two-entry stream buffer at full rate whose outputs are all registers.

    Ports: ``sink`` (in) and ``source`` (out), streams of ``shape``. ``source.valid`` and
    ``source.payload`` are registers; ``sink.ready`` is "the skid register is empty", also a
    register. A word taken while ``source`` is stalled waits in the skid register, so one
    transfer per cycle flows when ``source`` never stalls. Latency one cycle. Nothing is dropped.
    Use it where the two sides of a narrow stream are placed apart; :class:`StreamSlice` is the
    cheaper choice for a wide one that needs only half rate.
    """

    def __init__(self, shape):
        self._shape = shape
        super().__init__({"sink": In(stream.Signature(shape)), "source": Out(stream.Signature(shape))})

    def elaborate(self, platform):
        m = Module()
        skid_valid = Signal(name="skid_valid")
        skid = Signal(self._shape, name="skid")
        m.d.comb += self.sink.ready.eq(~skid_valid)
        with m.If(~self.source.valid | self.source.ready):
            with m.If(skid_valid):
                m.d.sync += [self.source.payload.eq(skid), skid_valid.eq(0)]
            with m.Else():
                m.d.sync += [self.source.payload.eq(self.sink.payload), self.source.valid.eq(self.sink.valid)]
        with m.Elif(self.sink.valid & ~skid_valid):
            m.d.sync += [skid.eq(self.sink.payload), skid_valid.eq(1)]
        return m
