"""Bisynchronous FIFO carrying link words between two clock domains."""

from amaranth.hdl import Cat, ClockDomain, ClockSignal, Elaboratable, Module, Mux, ResetSignal, Shape, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.cdc import AsyncFFSynchronizer, FFSynchronizer
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from rtl.common.slice import LinkWord

# A reset epoch crosses as a Gray code, so the wrap-around count bounds how many write resets may
# start while one handshake (about 5 read + 5 write cycles) is still under way.
_EPOCH_BITS = 4


def _gray(value):
    return value ^ (value >> 1)


class _GrayFIFO(Elaboratable):
    """Cummings style #2 (Gray-coded pointers, each crossed by a two-stage synchronizer) with the
    memory's read address a register: the pointer of the next word to load into the output
    register. Nothing combinational runs from the reader's handshake to the memory, whose
    address fans out to every RAM block of a wide word (amaranth's AsyncFIFO computes the
    address from ``r_en`` in the same cycle, which did not close 156.25 MHz on an ECP5).

    Interface as amaranth's AsyncFIFO (``w_en``/``w_data``/``w_rdy``, ``r_en``/``r_data``/
    ``r_rdy``, ``r_rst``), with ``r_data`` valid while ``r_rdy`` and ``w_rdy`` a register. It
    holds ``depth`` words in memory plus one in the output register; a word written into an empty FIFO is presented 3
    read edges later (4 when the synchronizer resolves late). A write-domain reset empties it
    (the output register too) through ``r_rst``; a read-domain reset keeps every word: the
    output register and the pointers are not reset by it, and nothing loads while it lasts.
    """

    def __init__(self, *, width, depth, w_domain, r_domain):
        self.width, self.depth = width, depth
        self._w, self._r = w_domain, r_domain
        self.w_en, self.w_data, self.w_rdy = Signal(), Signal(width), Signal()
        self.r_en, self.r_data, self.r_rdy = Signal(), Signal(width), Signal()
        self.r_rst = Signal()

    def elaborate(self, platform):
        m = Module()
        bits = (self.depth - 1).bit_length() + 1
        wd, rd = self._w, self._r

        def decode(gray):
            out = [gray[-1]]
            for i in reversed(range(bits - 1)):
                out.insert(0, out[0] ^ gray[i])
            return Cat(*out)

        produce_w_bin, produce_w_gry = Signal(bits), Signal(bits)
        consume_w_gry = Signal(bits)
        do_write = self.w_en & self.w_rdy
        produce_next = Signal(bits)
        m.d.comb += produce_next.eq(produce_w_bin + do_write)
        m.d[wd] += [produce_w_bin.eq(produce_next), produce_w_gry.eq(_gray(produce_next))]

        # Read-domain pointers and the output register survive a read-domain reset (nothing is
        # lost); the write domain's reset clears them through ``r_rst`` instead.
        consume_r_bin = Signal(bits, reset_less=True)
        consume_r_gry = Signal(bits, reset_less=True)
        held = Signal(reset_less=True)
        produce_r_gry = Signal(bits)
        m.submodules.produce_cdc = FFSynchronizer(produce_w_gry, produce_r_gry, o_domain=rd)
        m.submodules.consume_cdc = FFSynchronizer(consume_r_gry, consume_w_gry, o_domain=wd)

        # Full is a register, judged for the next cycle on both outcomes of this cycle's write: the
        # writer's handshake then drives only the pointer's carry chain. The reader's progress
        # reaches it a cycle later, which only holds a write back.
        def full(produce_gry):
            return (
                (produce_gry[-1] != consume_w_gry[-1])
                & (produce_gry[-2] != consume_w_gry[-2])
                & (produce_gry[:-2] == consume_w_gry[:-2])
            )

        w_full = Signal()
        m.d[wd] += w_full.eq(Mux(do_write, full(_gray((produce_w_bin + 1)[:bits])), full(produce_w_gry)))
        m.d.comb += self.w_rdy.eq(~w_full)

        storage = m.submodules.storage = Memory(shape=self.width, depth=self.depth, init=[])
        w_port = storage.write_port(domain=wd)
        r_port = storage.read_port(domain=rd, transparent_for=())
        m.d.comb += [w_port.addr.eq(produce_w_bin[:-1]), w_port.data.eq(self.w_data), w_port.en.eq(do_write)]

        r_rst = Signal()
        m.submodules.rst_cdc = AsyncFFSynchronizer(ResetSignal(wd, allow_reset_less=True), r_rst, o_domain=rd)
        in_reset = ResetSignal(rd, allow_reset_less=True)
        empty = consume_r_gry == produce_r_gry
        load = ~empty & (~held | self.r_en) & ~in_reset & ~r_rst
        m.d.comb += [
            r_port.addr.eq(consume_r_bin[:-1]),
            r_port.en.eq(load),
            self.r_data.eq(r_port.data),
            self.r_rdy.eq(held & ~r_rst),
        ]
        consume_next = Signal(bits)
        m.d.comb += consume_next.eq(consume_r_bin + 1)
        with m.If(r_rst):
            m.d[rd] += [consume_r_gry.eq(produce_r_gry), consume_r_bin.eq(decode(produce_r_gry)), held.eq(0)]
        with m.Elif(load):
            m.d[rd] += [consume_r_bin.eq(consume_next), consume_r_gry.eq(_gray(consume_next)), held.eq(1)]
        with m.Elif(self.r_en):
            m.d[rd] += held.eq(0)
        m.d[rd] += self.r_rst.eq(r_rst)
        return m


def check_depth(name, depth):
    """A FIFO depth must be a power of two >= 4 (ValueError naming ``name`` otherwise)."""
    if not isinstance(depth, int) or isinstance(depth, bool) or depth < 4 or depth & (depth - 1):
        raise ValueError(f"{name} must be a power of two >= 4, not {depth!r}")


class BisyncFIFO(wiring.Component):
    """Bisynchronous FIFO of ``shape`` (a :class:`LinkWord` unless told) from ``w_domain`` to ``r_domain``.

    Cummings style #2 (Gray-coded pointers, each crossed by a two-stage synchronizer) with a
    registered read address and an output register (:class:`_GrayFIFO`), plus a reset handshake
    (see Reset).

    Ports:
        sink (in, stream of LinkWord, ``w_domain``); source (out, stream of LinkWord, ``r_domain``);
        flushed (out, ``r_domain``): high for at least one read cycle after a write-side reset
        emptied the FIFO, so the reader knows words may have been discarded.

    Depth: ``depth`` words in memory, a power of two >= 4 (ValueError otherwise; no silent
    rounding), plus the one presented on ``source``.

    Latency: a word written into an empty FIFO at a write-clock edge is presented on ``source``
    after exactly 3 read-clock edges in simulation (2 for the pointer synchronizer, 1 to load the
    output register), 4 at most in silicon where the first synchronizer stage may resolve late.

    Reset:
        * write-side reset: every word not yet taken by the reader when the reset asserts is
          discarded, and ``flushed`` pulses, unless the read side is in reset while the write
          reset crosses (``flushed`` is a read-domain register its reset clears): the read reset is
          then the reader's only notice (docs/FORMAL.md). ``sink.ready`` then stays low until the
          read side has acknowledged the reset, so no word written after it is lost and no stale word is
          replayed. A bare Cummings FIFO does both wrong, which is why the handshake exists: a word
          written while the read side is still flushing is skipped, and a one-cycle write reset
          can release the read side before the reset write pointer has crossed, replaying old
          memory. The handshake needs the read clock running; about 5 read plus 5 write cycles.
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
        super().__init__(
            {
                "sink": In(stream.Signature(shape)),
                "source": Out(stream.Signature(shape)),
                "flushed": Out(1),
            }
        )

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
        fifo = m.submodules.fifo = _GrayFIFO(
            width=Shape.cast(self._shape).width, depth=self._depth, r_domain=rd, w_domain=fifo_w.name
        )

        # Writes are open once the read side is done with the current epoch; a register, cleared
        # as a new epoch starts.
        open_w = Signal(reset_less=True)
        m.d[wd] += open_w.eq(~(w_rst & ~rst_prev) & (done_w == epoch))

        m.d[rd] += seen_r.eq(epoch_r)
        with m.If(~fifo.r_rst):
            m.d[rd] += done_r.eq(seen_r)

        m.d.comb += [
            fifo.w_data.eq(self.sink.payload),
            fifo.w_en.eq(self.sink.valid & self.sink.ready),
            self.sink.ready.eq(fifo.w_rdy & open_w & ~w_rst),
            self.source.payload.eq(fifo.r_data),
            self.source.valid.eq(fifo.r_rdy & ~r_rst),
            fifo.r_en.eq(self.source.ready & self.source.valid),
            self.flushed.eq(fifo.r_rst),
        ]
        return m
