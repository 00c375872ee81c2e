"""AXI4-Stream user ports for the link endpoint: 64-byte frames as packets of eight 64-bit beats.

A frame's byte k travels as AXI byte lane k % 8 of beat k // 8 (``tdata`` bits 8(k%8) .. +7,
little-endian), which is byte k of the endpoint's 512-bit ``payload`` (bits 8k .. 8k+7): beat i
is slice i of PROTOCOL.md 3. ``tlast`` marks beat 7 of every packet.

Packets that are not a frame (docs/PROTOCOL.md 7, item 4): a packet whose ``tlast`` comes before its
eighth beat (short), one without ``tlast`` on its eighth beat (long), and one with any beat whose
``tkeep`` is not all ones (a null or position byte: a gap) are dropped whole, at their ``tlast``,
and counted. Nothing of them reaches the link; the packets around them are unaffected.
"""

from amaranth.hdl import Cat, DomainRenamer, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from golden import encoding as enc
from golden.params import LinkParams

from .framer import FRAME_BITS
from .link import LinkEndpoint, StatusSignature
from .slice import LinkPortSignature

BEAT_BYTES = enc.SLICE_BITS // 8
BEATS = enc.SLICES_PER_FRAME
BAD_PACKET_BITS = 16
_ALL_KEPT = (1 << BEAT_BYTES) - 1


class AxiStreamSignature(wiring.Signature):
    """An AXI4-Stream port of 64-bit beats, from the transmitter's side: ``tdata``, ``tkeep``,
    ``tlast``, ``tvalid`` out and ``tready`` in (no ``tid``, ``tdest``, ``tuser``, ``tstrb``)."""

    def __init__(self):
        super().__init__({"tdata": Out(enc.SLICE_BITS), "tkeep": Out(BEAT_BYTES), "tlast": Out(1),
                          "tvalid": Out(1), "tready": In(1)})


class AxisToFrames(wiring.Component):
    """Packets on ``s_axis`` to frames on ``frames`` (an amaranth.lib.stream of 512 bits).

    Beats 0 to 6 are kept in a register; beat 7, if the packet is a frame, joins them in a holding
    register that ``frames`` offers. ``tready`` is low only for a beat 7 while the holding register
    is full (it does not look at ``frames.ready``, so no handshake path runs through): a packet
    per eight cycles flows without a pause when ``frames`` takes a frame within seven cycles. Latency: the frame
    is valid the cycle after its last beat. ``bad_packet`` pulses in the cycle a packet that is not
    a frame ends (its ``tlast`` beat); such a packet is dropped whole (see the module docstring).
    """

    s_axis: In(AxiStreamSignature())
    frames: Out(stream.Signature(FRAME_BITS))
    bad_packet: Out(1)

    def elaborate(self, platform):
        m = Module()
        s = self.s_axis
        beat = Signal(range(BEATS), name="beat")        # the beat of this packet on the bus now
        bad = Signal(name="bad")                          # the packet so far is not a frame
        kept = [Signal(enc.SLICE_BITS, name=f"kept{i}") for i in range(BEATS - 1)]
        held = Signal(FRAME_BITS, name="held")
        held_valid = Signal(name="held_valid")
        m.d.comb += [self.frames.payload.eq(held), self.frames.valid.eq(held_valid),
                     s.tready.eq(~((beat == BEATS - 1) & held_valid))]
        with m.If(self.frames.valid & self.frames.ready):
            m.d.sync += held_valid.eq(0)
        gap = s.tkeep != _ALL_KEPT
        with m.If(s.tvalid & s.tready):
            with m.If(s.tlast):
                m.d.sync += [beat.eq(0), bad.eq(0)]
                with m.If((beat == BEATS - 1) & ~bad & ~gap):
                    m.d.sync += [held.eq(Cat(*kept, s.tdata)), held_valid.eq(1)]
                with m.Else():
                    m.d.comb += self.bad_packet.eq(1)
            with m.Elif(beat == BEATS - 1):
                m.d.sync += bad.eq(1)                     # long: eight beats and no tlast yet
            with m.Else():
                m.d.sync += [beat.eq(beat + 1), bad.eq(bad | gap)]
                for i in range(BEATS - 1):
                    with m.If(beat == i):
                        m.d.sync += kept[i].eq(s.tdata)
        return m


class FramesToAxis(wiring.Component):
    """Frames on ``frames`` to packets of eight beats on ``m_axis`` (``tkeep`` all ones, ``tlast``
    on beat 7). The next frame is taken in the cycle beat 7 goes, so back-to-back frames leave
    back to back. Latency: a frame's first beat is valid the cycle after it is taken. ``m_axis``
    may pause at any beat for as long as it likes; nothing is lost."""

    frames: In(stream.Signature(FRAME_BITS))
    m_axis: Out(AxiStreamSignature())

    def elaborate(self, platform):
        m = Module()
        a = self.m_axis
        frame = Signal(FRAME_BITS, name="frame")
        busy = Signal(name="busy")
        beat = Signal(range(BEATS), name="beat")
        going = a.tvalid & a.tready
        last_going = going & (beat == BEATS - 1)
        m.d.comb += [a.tdata.eq(frame.word_select(beat, enc.SLICE_BITS)), a.tkeep.eq(_ALL_KEPT),
                     a.tlast.eq(beat == BEATS - 1), a.tvalid.eq(busy),
                     self.frames.ready.eq(~busy | last_going)]
        with m.If(going):
            m.d.sync += beat.eq(beat + 1)
        with m.If(last_going):
            m.d.sync += busy.eq(0)
        with m.If(self.frames.valid & self.frames.ready):
            m.d.sync += [frame.eq(self.frames.payload), busy.eq(1), beat.eq(0)]
        return m


class AxisLinkEndpoint(wiring.Component):
    """:class:`LinkEndpoint` with an AXI4-Stream port pair per traffic class.

    Ports, core domain: ``s_axis`` (array, one per class: packets to send), ``m_axis`` (array:
    packets delivered), ``ait_in``, ``ait_out``, ``returned``, ``withdraw`` (as LinkEndpoint),
    ``bad_packets`` (packets dropped because they are not a frame, all classes, wrapping at
    2**16). Link domain: ``rx``, ``tx``, ``status``. Latency: the endpoint's, plus one core cycle
    in and one out. Failure behaviour: as :class:`LinkEndpoint`; a bad packet costs only itself.
    """

    def __init__(self, params: LinkParams | None = None, *, fifo_depth=4, **kwargs):
        self.endpoint = LinkEndpoint(params, fifo_depth=fifo_depth, **kwargs)
        self.params = self.endpoint.params
        C = self.params.num_classes
        super().__init__({
            "rx": In(LinkPortSignature()), "tx": Out(LinkPortSignature()),
            "s_axis": In(AxiStreamSignature()).array(C), "m_axis": Out(AxiStreamSignature()).array(C),
            "ait_in": In(stream.Signature(enc.AIT_VALUE_BITS)), "withdraw": In(1),
            "ait_out": Out(stream.Signature(enc.AIT_VALUE_BITS)),
            "returned": Out(stream.Signature(enc.AIT_VALUE_BITS)),
            "status": Out(StatusSignature(self.params)),
            "bad_packets": Out(BAD_PACKET_BITS),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.endpoint = ep = self.endpoint
        for name in ("rx", "ait_in"):
            connect(m, flipped(getattr(self, name)), getattr(ep, name))
        for name in ("tx", "status", "ait_out", "returned"):
            connect(m, getattr(ep, name), flipped(getattr(self, name)))
        m.d.comb += ep.withdraw.eq(self.withdraw)
        bad = []
        for c in range(self.params.num_classes):
            m.submodules[f"packets_in{c}"] = pin = DomainRenamer("core")(AxisToFrames())
            m.submodules[f"packets_out{c}"] = pout = DomainRenamer("core")(FramesToAxis())
            connect(m, flipped(self.s_axis[c]), pin.s_axis)
            connect(m, pin.frames, ep.frames_in[c])
            connect(m, ep.frames_out[c], pout.frames)
            connect(m, pout.m_axis, flipped(self.m_axis[c]))
            bad.append(pin.bad_packet)
        m.d.core += self.bad_packets.eq(self.bad_packets + sum(bad))
        return m
