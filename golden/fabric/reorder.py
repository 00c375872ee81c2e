"""The reorder buffer of one stream at its destination (PROTOCOL.md 10.7, 10.10).

A frame that arrives ahead of the one its stream expects next waits here until the gap fills.
The origin holds at most its window of the stream's frames unacknowledged, and the destination
expects no less than the oldest of them, so a waiting frame is less than a window ahead: its
slot is its sequence's low bits, and no two waiting frames share one. :class:`Reorder` keeps
``window`` slots, each empty or holding one frame with its sequence.

Failure behaviour: :meth:`hold` refuses (returns False, changes nothing) a frame a window or
more ahead, which no origin keeping its window can have sent; bad arguments raise ValueError.
"""

from golden.fabric.e2e import SEQ_MOD
from golden.params import check_int, check_window


class Reorder:
    """The reorder buffer of one stream with ``window`` slots (a power of two)."""

    def __init__(self, window: int):
        self.window = check_window("window", window)
        self.slots = [None] * window  # (seq, frame) or None

    def __len__(self) -> int:
        return sum(s is not None for s in self.slots)

    def hold(self, seq: int, frame: bytes, expected: int) -> bool:
        """Keep ``frame``, sequence ``seq``, ahead of ``expected`` by 1 to ``window - 1``. False for
        one further ahead (nothing kept). A copy of a frame already held replaces it."""
        check_int("seq", seq, 0, SEQ_MOD - 1)
        ahead = (seq - expected) % SEQ_MOD
        if not 0 < ahead < self.window:
            return False
        self.slots[seq % self.window] = (seq, frame)
        return True

    def holds(self, seq: int) -> bool:
        s = self.slots[seq % self.window]
        return s is not None and s[0] == seq

    def take(self, seq: int) -> bytes:
        """The frame ``seq``, out of the buffer (ValueError if it is not held)."""
        if not self.holds(seq):
            raise ValueError(f"take: frame {seq} is not held")
        frame = self.slots[seq % self.window][1]
        self.slots[seq % self.window] = None
        return frame
