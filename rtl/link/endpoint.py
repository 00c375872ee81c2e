"""The link core with its user side in a clock domain of the user's: the clock crossing.

:class:`AxisLinkEndpoint` puts :class:`rtl.link.core.LinkCore` in the ``link`` domain and its user
ports in the ``core`` domain. Frames cross as AXI4-Stream beats of 64 bits in a
:class:`BisyncFIFO` per class and direction and are assembled into (or cut from) 512-bit frames
on the link side. :class:`LinkEndpoint` adds the same gearboxes on the user side, for users who
want whole frames as 512-bit streams.

Why beats and not frames: a FIFO of 512-bit entries spreads over the fabric (128 distributed-RAM
blocks at any depth up to 16 on an ECP5), and its read-address and handshake logic, wired to all
of them, missed 156.25 MHz by a nanosecond and more; a 73-bit beat FIFO is 19 blocks placed
together. The price: each class crosses at most one beat per cycle of the slower clock, so one
class alone fills the link only if the core clock is at least the link clock (the 64-bit
10GBASE-R datapath and a 64-bit AXI4-Stream at 156.25 MHz are exactly that).
"""

from amaranth.hdl import Cat, DomainRenamer, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out, connect, flipped

from golden import encoding as enc
from golden.params import LinkParams
from rtl.common.cdc import BisyncFIFO, check_depth
from rtl.common.slice import LinkPortSignature
from rtl.common.stream_slice import StreamSkid, StreamSlice
from rtl.link.axis import AxisToFrames, AxiStreamSignature, Beat, FramesToAxis, axis_into_stream, stream_into_axis
from rtl.link.core import LinkCore, StatusSignature
from rtl.link.framer import FRAME_BITS

BAD_PACKET_BITS = 16
DEFAULT_FIFO_DEPTH = 16


class AxisLinkEndpoint(wiring.Component):
    """:class:`LinkCore` with an AXI4-Stream port pair per traffic class in the ``core`` domain.

    Ports, ``core`` domain: ``s_axis[c]`` (packets to send), ``m_axis[c]`` (packets delivered),
    ``ait_in``, ``ait_out``, ``returned`` (streams of 16-bit token values), ``withdraw`` (level,
    crosses in a two-stage synchronizer). ``link`` domain: ``rx``, ``tx``, ``status``, and
    ``bad_packets`` (packets dropped because they are not a frame, all classes, wrapping at 2**16;
    rtl/link/axis.py says which). A frame is a packet of eight beats (rtl/link/axis.py). ``flushed``
    (``core`` domain) pulses when a reset of the link domain discarded delivered beats the user
    had not taken: a packet in progress on ``m_axis`` then ends without its remaining beats, and
    the next beat starts a new packet.

    Each stream crosses in a :class:`BisyncFIFO` of ``fifo_depth`` entries (beats for frames,
    values for tokens; a power of two >= 4, default 16: fewer than about 8 slow a class down,
    the pointers take 2-3 cycles each way). Beats are assembled into a frame in the link domain,
    and a delivered frame passes a :class:`StreamSlice` before it is cut into beats; a
    :class:`StreamSkid` sits between each gearbox and its FIFO, and between each FIFO and the
    user's AXI4-Stream port (every output of ``s_axis`` and ``m_axis`` is a register). No
    handshake of the FIFOs reaches into the core's logic, a gearbox's or the user's. A token given back waits in
    a holding
    register until its FIFO has room, and no new token enters the core meanwhile, so none is
    dropped; a delivered token stays in the core (offers are then rejected) until its FIFO takes
    it.

    Latency, on top of the core's: a frame is offered to the core 1 core cycle plus 5-6 link
    cycles after its last beat was taken on ``s_axis`` (skid 1; FIFO 3-4, skid 1, assembly 1); a
    delivered frame's first beat is offered on ``m_axis`` 3 link cycles plus 4-5 core cycles
    after the core delivered it. Throughput: one beat per cycle of the slower clock per class.

    Failure behaviour: as :class:`LinkCore` for the link. A reset of the writing side of a FIFO
    discards the beats it had not handed over, and the assembler on the reading side starts
    afresh at the next beat (``flushed``); a reset of the reading side discards the frame it was
    assembling (its remaining beats arrive as a short packet and are dropped and counted). Nothing
    is ever delivered twice or out of order; a frame cut by a reset is lost whole, never in part.
    """

    def __init__(self, params: LinkParams | None = None, *, fifo_depth=DEFAULT_FIFO_DEPTH, **kwargs):
        check_depth("fifo_depth", fifo_depth)
        self.core = LinkCore(LinkParams.resolve(params, kwargs))
        self.params = self.core.params
        self._fifo_depth = fifo_depth
        C = self.params.num_classes
        super().__init__(
            {
                "rx": In(LinkPortSignature()),
                "tx": Out(LinkPortSignature()),
                "s_axis": In(AxiStreamSignature()).array(C),
                "m_axis": Out(AxiStreamSignature()).array(C),
                "ait_in": In(stream.Signature(enc.AIT_VALUE_BITS)),
                "withdraw": In(1),
                "ait_out": Out(stream.Signature(enc.AIT_VALUE_BITS)),
                "returned": Out(stream.Signature(enc.AIT_VALUE_BITS)),
                "status": Out(StatusSignature(self.params)),
                "bad_packets": Out(BAD_PACKET_BITS),
                "flushed": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        m.submodules.core = core = DomainRenamer("link")(self.core)
        depth = self._fifo_depth

        def fifo(name, shape, w, r):
            f = BisyncFIFO(depth=depth, w_domain=w, r_domain=r, shape=shape)
            m.submodules[name] = f
            return f

        connect(m, flipped(self.rx), core.rx)
        connect(m, core.tx, flipped(self.tx))
        connect(m, core.status, flipped(self.status))
        bad, flushed = [], []
        for c in range(self.params.num_classes):
            # A skid register between each beat FIFO and its gearbox in the link domain: the
            # gearbox's 512-bit registers and the FIFO are placed apart, and neither's handshake
            # may chain into the other's pointer logic.
            f_in = fifo(f"beats_in{c}", Beat, "core", "link")
            m.submodules[f"beats_in_skid{c}"] = k_in = DomainRenamer("link")(StreamSkid(Beat))
            m.submodules[f"packets_in{c}"] = assemble = DomainRenamer("link")(AxisToFrames())
            m.submodules[f"s_axis_skid{c}"] = u_in = DomainRenamer("core")(StreamSkid(Beat))
            axis_into_stream(m, self.s_axis[c], u_in.sink)
            connect(m, u_in.source, f_in.sink)
            connect(m, f_in.source, k_in.sink)
            stream_into_axis(m, k_in.source, assemble.s_axis)
            m.d.comb += assemble.restart.eq(f_in.flushed)
            connect(m, assemble.frames, core.frames_in[c])
            bad.append(assemble.bad_packet)

            m.submodules[f"frames_out_slice{c}"] = s_out = DomainRenamer("link")(StreamSlice(FRAME_BITS))
            m.submodules[f"packets_out{c}"] = cut = DomainRenamer("link")(FramesToAxis())
            m.submodules[f"beats_out_skid{c}"] = k_out = DomainRenamer("link")(StreamSkid(Beat))
            f_out = fifo(f"beats_out{c}", Beat, "link", "core")
            connect(m, core.frames_out[c], s_out.sink)
            connect(m, s_out.source, cut.frames)
            axis_into_stream(m, cut.m_axis, k_out.sink)
            connect(m, k_out.source, f_out.sink)
            m.submodules[f"m_axis_skid{c}"] = u_out = DomainRenamer("core")(StreamSkid(Beat))
            connect(m, f_out.source, u_out.sink)
            stream_into_axis(m, u_out.source, self.m_axis[c])
            flushed.append(f_out.flushed)
        m.d.link += self.bad_packets.eq(self.bad_packets + sum(bad))
        m.d.comb += self.flushed.eq(Cat(*flushed).any())

        a_in = fifo("ait_in", enc.AIT_VALUE_BITS, "core", "link")
        connect(m, flipped(self.ait_in), a_in.sink)
        a_out = fifo("ait_out", enc.AIT_VALUE_BITS, "link", "core")
        connect(m, core.ait_out, a_out.sink)
        connect(m, a_out.source, flipped(self.ait_out))
        # The core gives a token back in the cycle the protocol decides it and cannot wait. Only
        # the token inside the core can come back, so a one-entry holding register suffices if
        # no new token enters while it is full.
        ret = fifo("returned", enc.AIT_VALUE_BITS, "link", "core")
        # The value is taken in every cycle the register is free, whether or not it is given
        # back: ``returned`` is decided late (it waits for the token word's turn), and so
        # reaches one flip-flop instead of enabling sixteen.
        held, held_value = Signal(name="held"), Signal(enc.AIT_VALUE_BITS, name="held_value")
        m.d.link += held.eq(core.returned | (held & ~ret.sink.ready))
        with m.If(~held):
            m.d.link += held_value.eq(core.returned_value)
        m.d.comb += [
            ret.sink.valid.eq(held),
            ret.sink.payload.eq(held_value),
            core.ait_in.valid.eq(a_in.source.valid & ~held),
            core.ait_in.payload.eq(a_in.source.payload),
            a_in.source.ready.eq(core.ait_in.ready & ~held),
        ]
        connect(m, ret.source, flipped(self.returned))
        m.submodules.withdraw_cdc = FFSynchronizer(self.withdraw, core.withdraw, o_domain="link")
        return m


class LinkEndpoint(wiring.Component):
    """:class:`AxisLinkEndpoint` with whole frames: ``frames_in[c]``/``frames_out[c]`` are
    streams of 512-bit frames (byte 0 in bits 7..0) in the ``core`` domain.

    The other ports, their domains and the failure behaviour are :class:`AxisLinkEndpoint`'s
    (no ``bad_packets`` or ``flushed``: every packet here is a frame, the gearboxes make them, and
    a packet cut by a link-domain reset is forgotten by the assembler). A frame handed in
    is cut into beats in the core domain (its first beat the cycle after it is taken, the next
    frame taken as the last beat goes); a delivered frame is assembled there again and offered
    the cycle after its last beat. Throughput: one frame per eight cycles of the slower clock per
    class. Latency: :class:`AxisLinkEndpoint`'s plus 8 core cycles each way.
    """

    def __init__(self, params: LinkParams | None = None, *, fifo_depth=DEFAULT_FIFO_DEPTH, **kwargs):
        # Checked before the inner endpoint exists, so a bad value leaves nothing half built.
        check_depth("fifo_depth", fifo_depth)
        self.crossing = AxisLinkEndpoint(LinkParams.resolve(params, kwargs), fifo_depth=fifo_depth)
        self.params = self.crossing.params
        C = self.params.num_classes
        super().__init__(
            {
                "rx": In(LinkPortSignature()),
                "tx": Out(LinkPortSignature()),
                "frames_in": In(stream.Signature(FRAME_BITS)).array(C),
                "frames_out": Out(stream.Signature(FRAME_BITS)).array(C),
                "ait_in": In(stream.Signature(enc.AIT_VALUE_BITS)),
                "withdraw": In(1),
                "ait_out": Out(stream.Signature(enc.AIT_VALUE_BITS)),
                "returned": Out(stream.Signature(enc.AIT_VALUE_BITS)),
                "status": Out(StatusSignature(self.params)),
            }
        )

    def elaborate(self, platform):
        m = Module()
        m.submodules.crossing = x = self.crossing
        for name in ("rx", "ait_in"):
            connect(m, flipped(getattr(self, name)), getattr(x, name))
        for name in ("tx", "status", "ait_out", "returned"):
            connect(m, getattr(x, name), flipped(getattr(self, name)))
        m.d.comb += x.withdraw.eq(self.withdraw)
        for c in range(self.params.num_classes):
            m.submodules[f"cut_in{c}"] = cut = DomainRenamer("core")(FramesToAxis())
            m.submodules[f"assemble_out{c}"] = assemble = DomainRenamer("core")(AxisToFrames())
            connect(m, flipped(self.frames_in[c]), cut.frames)
            connect(m, cut.m_axis, x.s_axis[c])
            connect(m, x.m_axis[c], assemble.s_axis)
            m.d.comb += assemble.restart.eq(x.flushed)
            connect(m, assemble.frames, flipped(self.frames_out[c]))
        return m
