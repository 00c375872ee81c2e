"""AXI4-Stream user ports for the link endpoint: 64-byte frames as packets of eight 64-bit beats.

A frame's byte k travels as AXI byte lane k % 8 of beat k // 8 (``tdata`` bits 8(k%8) .. +7,
little-endian), which is byte k of the endpoint's 512-bit ``payload`` (bits 8k .. 8k+7): beat i
is slice i of PROTOCOL.md 3. ``tlast`` marks beat 7 of every packet.

Packets that are not a frame (docs/PROTOCOL.md 7, item 4): a packet whose ``tlast`` comes before its
eighth beat (short), one without ``tlast`` on its eighth beat (long), and one with any beat whose
``tkeep`` is not all ones (a null or position byte: a gap) are dropped whole, at their ``tlast``,
and counted. Nothing of them reaches the link; the packets around them are unaffected.
"""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden import encoding as enc
from golden.params import check_int

BEAT_BYTES = enc.SLICE_BITS // 8
BEATS = enc.SLICES_PER_FRAME
_ALL_KEPT = (1 << BEAT_BYTES) - 1


# The AXI4-Stream sideband signals a port may carry, by the name of their field in a beat layout.
_SIDEBAND = {"dest": "tdest", "id": "tid"}


def beat_layout(dest_bits: int = 0, id_bits: int = 0) -> data.StructLayout:
    """A beat as a stream payload, with ``dest`` and ``id`` fields when the port has ``tdest``
    and ``tid`` (:data:`Beat` has neither)."""
    fields = {"data": enc.SLICE_BITS, "keep": BEAT_BYTES, "last": 1}
    fields.update({name: bits for name, bits in (("dest", dest_bits), ("id", id_bits)) if bits})
    return data.StructLayout(fields)


# One beat as an amaranth.lib.stream payload: what a bisynchronous FIFO carries across clocks.
Beat = beat_layout()


class AxiStreamSignature(wiring.Signature):
    """An AXI4-Stream port of 64-bit beats, from the transmitter's side: ``tdata``, ``tkeep``,
    ``tlast``, ``tvalid`` out and ``tready`` in; ``tdest`` of ``dest_bits`` and ``tid`` of
    ``id_bits`` out when they are not 0 (no ``tuser`` or ``tstrb``)."""

    def __init__(self, dest_bits: int = 0, id_bits: int = 0):
        members = {"tdata": Out(enc.SLICE_BITS), "tkeep": Out(BEAT_BYTES), "tlast": Out(1)}
        members.update({name: Out(bits) for name, bits in (("tdest", dest_bits), ("tid", id_bits)) if bits})
        members.update({"tvalid": Out(1), "tready": In(1)})
        super().__init__(members)


def _sideband(beats):
    return [(field, axis) for field, axis in _SIDEBAND.items() if field in beats.payload.shape().members]


def axis_into_stream(m, axis, beats):
    """Drive the stream of beats ``beats`` (:func:`beat_layout`) from the AXI4-Stream port
    ``axis`` (wires only)."""
    m.d.comb += [
        beats.payload.data.eq(axis.tdata),
        beats.payload.keep.eq(axis.tkeep),
        beats.payload.last.eq(axis.tlast),
        beats.valid.eq(axis.tvalid),
        axis.tready.eq(beats.ready),
    ]
    m.d.comb += [beats.payload[field].eq(getattr(axis, name)) for field, name in _sideband(beats)]


def stream_into_axis(m, beats, axis):
    """Drive the AXI4-Stream port ``axis`` from the stream of beats ``beats`` (:func:`beat_layout`)
    (wires only)."""
    m.d.comb += [
        axis.tdata.eq(beats.payload.data),
        axis.tkeep.eq(beats.payload.keep),
        axis.tlast.eq(beats.payload.last),
        axis.tvalid.eq(beats.valid),
        beats.ready.eq(axis.tready),
    ]
    m.d.comb += [getattr(axis, name).eq(beats.payload[field]) for field, name in _sideband(beats)]


class AxisToFrames(wiring.Component):
    """Packets on ``s_axis`` to frames on ``frames`` (an amaranth.lib.stream of ``beats`` x 64
    bits; 512 for the link's frames of eight beats).

    Beats 0 to ``beats`` - 2 are kept in a register; the last beat, if the packet is a frame,
    joins them in a holding register that ``frames`` offers. ``tready`` is low only for a last
    beat while the holding register is full (it does not look at ``frames.ready``, so no
    handshake path runs through): a packet per ``beats`` cycles flows without a pause when
    ``frames`` takes a frame within ``beats`` - 1 cycles. Latency: the frame is valid the cycle
    after its last beat. ``bad_packet`` pulses in the cycle a packet that is not a frame ends (its
    ``tlast`` beat); such a packet is dropped whole (see the module docstring). ``restart``
    (level) forgets the packet in progress, without counting it, so that the next beat starts a
    packet: a clock-crossing FIFO raises it when a reset on its write side discarded the
    rest of that packet. A frame already held is kept. With ``dest_bits`` > 0, ``s_axis`` has a
    ``tdest`` and ``frames_dest`` is the held frame's, taken from its last beat (AXI4-Stream
    keeps ``tdest`` the same through a packet).
    """

    def __init__(self, beats: int = BEATS, dest_bits: int = 0):
        check_int("beats", beats, 2)
        check_int("dest_bits", dest_bits, 0)
        self._beats, self._dest_bits = beats, dest_bits
        members = {
            "s_axis": In(AxiStreamSignature(dest_bits=dest_bits)),
            "restart": In(1),
            "frames": Out(stream.Signature(beats * enc.SLICE_BITS)),
            "bad_packet": Out(1),
        }
        if dest_bits:
            members["frames_dest"] = Out(dest_bits)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        s = self.s_axis
        B = self._beats
        beat = Signal(range(B), name="beat")  # the beat of this packet on the bus now
        bad = Signal(name="bad")  # the packet so far is not a frame
        kept = [Signal(enc.SLICE_BITS, name=f"kept{i}") for i in range(B - 1)]
        held = Signal(B * enc.SLICE_BITS, name="held")
        held_valid = Signal(name="held_valid")
        m.d.comb += [
            self.frames.payload.eq(held),
            self.frames.valid.eq(held_valid),
            s.tready.eq(~((beat == B - 1) & held_valid)),
        ]
        with m.If(self.frames.valid & self.frames.ready):
            m.d.sync += held_valid.eq(0)
        # The wide registers load without looking at the handshake (their enables fan out to 448
        # and 512 flip-flops): a beat register follows the bus while the packet is at its beat,
        # and the frame register while no frame is offered. What they take when no beat moves
        # is overwritten before it is used.
        for i in range(B - 1):
            with m.If(beat == i):
                m.d.sync += kept[i].eq(s.tdata)
        with m.If(~held_valid):
            m.d.sync += held.eq(Cat(*kept, s.tdata))
            if self._dest_bits:
                m.d.sync += self.frames_dest.eq(s.tdest)
        gap = s.tkeep != _ALL_KEPT
        with m.If(self.restart):
            m.d.sync += [beat.eq(0), bad.eq(0)]
        with m.Elif(s.tvalid & s.tready):
            with m.If(s.tlast):
                m.d.sync += [beat.eq(0), bad.eq(0)]
                with m.If((beat == B - 1) & ~bad & ~gap):
                    m.d.sync += held_valid.eq(1)
                with m.Else():
                    m.d.comb += self.bad_packet.eq(1)
            with m.Elif(beat == B - 1):
                m.d.sync += bad.eq(1)  # long: all its beats and no tlast yet
            with m.Else():
                m.d.sync += [beat.eq(beat + 1), bad.eq(bad | gap)]
        return m


class FramesToAxis(wiring.Component):
    """Frames on ``frames`` (``beats`` x 64 bits; 512 for the link's) to packets of ``beats``
    beats on ``m_axis`` (``tkeep`` all ones, ``tlast`` on the last). The next frame is taken in
    the cycle the last beat goes, so back-to-back frames leave back to back. Latency: a frame's
    first beat is valid the cycle after it is taken. ``m_axis`` may pause at any beat for as long
    as it likes; nothing is lost. With ``id_bits`` > 0, ``m_axis`` has a ``tid``: every beat of
    a packet carries the ``frames_id`` that came with its frame."""

    def __init__(self, beats: int = BEATS, id_bits: int = 0):
        check_int("beats", beats, 2)
        check_int("id_bits", id_bits, 0)
        self._beats, self._id_bits = beats, id_bits
        members = {"frames": In(stream.Signature(beats * enc.SLICE_BITS))}
        if id_bits:
            members["frames_id"] = In(id_bits)
        members["m_axis"] = Out(AxiStreamSignature(id_bits=id_bits))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        a = self.m_axis
        B = self._beats
        frame = Signal(B * enc.SLICE_BITS, name="frame")
        busy = Signal(name="busy")
        beat = Signal(range(B), name="beat")
        going = a.tvalid & a.tready
        last_going = going & (beat == B - 1)
        m.d.comb += [
            a.tdata.eq(frame.word_select(beat, enc.SLICE_BITS)),
            a.tkeep.eq(_ALL_KEPT),
            a.tlast.eq(beat == B - 1),
            a.tvalid.eq(busy),
            self.frames.ready.eq(~busy | last_going),
        ]
        with m.If(going):
            m.d.sync += beat.eq(beat + 1)
        with m.If(last_going):
            m.d.sync += busy.eq(0)
        # The frame register loads whenever it is free, offered or not (its enable fans out to
        # 512 flip-flops; a frame not taken is never sent).
        with m.If(self.frames.ready):
            m.d.sync += frame.eq(self.frames.payload)
            if self._id_bits:
                m.d.sync += a.tid.eq(self.frames_id)
        with m.If(self.frames.valid & self.frames.ready):
            m.d.sync += [busy.eq(1), beat.eq(0)]
        return m
