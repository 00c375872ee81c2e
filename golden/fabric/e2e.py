"""End-to-end sequence arithmetic (PROTOCOL.md 10.7, 10.10): what a destination does with a
numbered frame, when it acknowledges, and how many held frames an ACK releases at the origin.

Sequences are 32 bits and wrap; "ahead" and "behind" are read in a half of the sequence space,
which the end-to-end window (at most 2^16 frames) never comes near.
"""

from dataclasses import dataclass

from golden import encoding as enc

SEQ_MOD = 1 << enc.E2E_SEQ_BITS
HALF = SEQ_MOD >> 1


@dataclass(frozen=True)
class Arrival:
    """What a destination does with a frame of a stream it expects ``expected`` of next.

    ``duplicate``: behind the expected one (a copy sent again; dropped); ``ahead``: how far past
    the expected one it is (0: it is the next, delivered now; more: held until the gap fills);
    ``ack_copy``: a duplicate that is acknowledged again (10.7)."""

    duplicate: bool
    ahead: int
    ack_copy: bool


def arrival(seq: int, expected: int, acked: int | None) -> Arrival:
    """The frame ``seq`` arriving where ``expected`` is next and the last ACK carried ``acked``
    (None: none sent yet). A duplicate is acknowledged again when the last ACK did not carry
    what is expected now, or when it is the copy of the newest frame delivered: that ACK may be
    the one that died, and an origin whose window is full (10.10) sends nothing new that would
    make the destination acknowledge again."""
    ahead = (seq - expected) % SEQ_MOD
    if ahead >= HALF:
        newest = (expected - 1) % SEQ_MOD
        return Arrival(True, 0, acked != expected or seq == newest)
    return Arrival(False, ahead, False)


def ack_due(expected: int, acked: int, every: int) -> bool:
    """After delivering up to ``expected``, an ACK is due: ``every`` frames or more were
    delivered since the last ACK carried ``acked`` (0 before the first)."""
    return (expected - acked) % SEQ_MOD >= every


def released(ack: int, head: int, held: int) -> int:
    """How many of the ``held`` frames an origin holds for a stream, from sequence ``head`` up,
    an ACK carrying ``ack`` releases: the frames below ``ack``, when ``ack`` is ahead of
    ``head`` by at most half the sequence space (an older ACK releases nothing)."""
    d = (ack - head) % SEQ_MOD
    return min(d, held) if 0 < d <= HALF else 0
