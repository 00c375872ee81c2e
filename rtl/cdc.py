"""Bisynchronous FIFO carrying link words between two clock domains."""

from amaranth.hdl import ClockDomain, ClockSignal, Module, ResetSignal, Shape, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.fifo import AsyncFIFO
from amaranth.lib.wiring import In, Out

from .slice import LinkWord

# A reset epoch crosses as a Gray code, so the wrap-around count bounds how many write resets may
# start while one handshake (about 5 read + 4 write cycles) is still under way.
_EPOCH_BITS = 4


def _gray(value):
    return value ^ (value >> 1)


def check_depth(name, depth):
    """A FIFO depth must be a power of two >= 4 (ValueError naming ``name`` otherwise)."""
    if not isinstance(depth, int) or isinstance(depth, bool) or depth < 4 or depth & (depth - 1):
        raise ValueError(f"{name} must be a power of two >= 4, not {depth!r}")


class BisyncFIFO(wiring.Component):
    """Bisynchronous FIFO of ``shape`` (a :class:`LinkWord` unless told) from ``w_domain`` to ``r_domain``.

    Built on :class:`amaranth.lib.fifo.AsyncFIFO` (Cummings style #2: Gray-coded pointers, each
    crossed by a two-stage synchronizer), plus a reset handshake of our own (see Reset).

    Ports:
        sink (in, stream of LinkWord, ``w_domain``); source (out, stream of LinkWord, ``r_domain``);
        flushed (out, ``r_domain``): high for at least one read cycle after a write-side reset
        emptied the FIFO, so the reader knows words may have been discarded.

    Depth: ``depth`` words, a power of two >= 4 (ValueError otherwise; no silent rounding).

    Latency: a word written into an empty FIFO at a write-clock edge is presented on ``source``
    after exactly 2 read-clock edges in simulation (the pointer synchronizer), 3 at most in
    silicon where the first synchronizer stage may resolve late.

    Reset:
        * write-side reset: every word not yet taken by the reader when the reset asserts is
          discarded, and ``flushed`` pulses. ``sink.ready`` then stays low until the read side
          has acknowledged the reset, so no word written after it is lost and no stale word is
          replayed. Bare AsyncFIFO does both wrong, which is why this wrapper exists: a word
          written while the read side is still flushing is skipped, and a one-cycle write reset
          can release the read side before the reset write pointer has crossed, replaying old
          memory. The handshake needs the read clock running; about 5 read plus 4 write cycles.
        * read-side reset: the FIFO keeps its words; ``source.valid`` is low while the read
          reset is asserted, and afterwards delivery resumes with the next word not yet taken.
          Nothing is lost or duplicated.
    """

    def __init__(self, *, depth=16, w_domain="w", r_domain="r", shape=LinkWord):
        check_depth("depth", depth)
        for name, value in (("w_domain", w_domain), ("r_domain", r_domain)):
            if not isinstance(value, str) or not value:
                raise ValueError(f"{name} must be a non-empty domain name, not {value!r}")
        if w_domain == r_domain:
            raise ValueError(f"w_domain and r_domain must differ, both are {w_domain!r}")
        self._depth = depth
        self._shape = shape
        self._w_domain = w_domain
        self._r_domain = r_domain
        super().__init__({
            "sink": In(stream.Signature(shape)),
            "source": Out(stream.Signature(shape)),
            "flushed": Out(1),
        })

    @property
    def depth(self):
        return self._depth

    def elaborate(self, platform):
        m = Module()
        wd, rd = self._w_domain, self._r_domain
        w_rst = ResetSignal(wd)
        r_rst = ResetSignal(rd)

        # Write side: each write reset starts a new epoch; the FIFO's own write reset is held
        # until the read side has seen that epoch, and writes wait until it has left its flush.
        rst_prev = Signal(reset_less=True)
        epoch_bin = Signal(_EPOCH_BITS, reset_less=True)
        epoch = Signal(_EPOCH_BITS, reset_less=True)
        m.d[wd] += rst_prev.eq(w_rst)
        with m.If(w_rst & ~rst_prev):
            m.d[wd] += [epoch_bin.eq(epoch_bin + 1), epoch.eq(_gray(epoch_bin + 1))]

        epoch_r = Signal(_EPOCH_BITS)
        seen_r = Signal(_EPOCH_BITS, reset_less=True)
        done_r = Signal(_EPOCH_BITS, reset_less=True)
        seen_w = Signal(_EPOCH_BITS)
        done_w = Signal(_EPOCH_BITS)
        # Three stages for the epoch, one more than the FIFO's pointer synchronizer, so the reset
        # write pointer has crossed before the read side reports the epoch as seen.
        m.submodules.epoch_cdc = FFSynchronizer(epoch, epoch_r, o_domain=rd, stages=3)
        m.submodules.seen_cdc = FFSynchronizer(seen_r, seen_w, o_domain=wd)
        m.submodules.done_cdc = FFSynchronizer(done_r, done_w, o_domain=wd)

        m.domains.fifo_w = fifo_w = ClockDomain("fifo_w", local=True)
        m.d.comb += [
            ClockSignal("fifo_w").eq(ClockSignal(wd)),
            ResetSignal("fifo_w").eq(w_rst | (seen_w != epoch)),
        ]
        fifo = m.submodules.fifo = AsyncFIFO(width=Shape.cast(self._shape).width, depth=self._depth,
                                             r_domain=rd, w_domain=fifo_w.name, exact_depth=True)

        m.d[rd] += seen_r.eq(epoch_r)
        with m.If(~fifo.r_rst):
            m.d[rd] += done_r.eq(seen_r)

        m.d.comb += [
            fifo.w_data.eq(self.sink.payload),
            fifo.w_en.eq(self.sink.valid & self.sink.ready),
            self.sink.ready.eq(fifo.w_rdy & (done_w == epoch) & ~w_rst),
            self.source.payload.eq(fifo.r_data),
            self.source.valid.eq(fifo.r_rdy & ~r_rst),
            fifo.r_en.eq(self.source.ready & ~r_rst),
            self.flushed.eq(fifo.r_rst),
        ]
        return m
