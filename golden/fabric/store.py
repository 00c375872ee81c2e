"""The end-to-end store of one stream (PROTOCOL.md 10.7, 10.10, 10.11).

An origin holds every frame of a stream it sends until the destination acknowledges it, and
sends its frames from there. :class:`Store` keeps them in ``window`` slots, the slot of a
frame the low bits of its end-to-end sequence, three sequences, ``next_seq`` (the next to
number), ``base`` (the oldest not yet acknowledged) and ``send`` (the next to hand to a port,
between the two), and ``via``, the port the frames from ``base`` to ``send`` left by. The
stream is full when ``next_seq - base`` is the window; a frame waits to be sent while ``send``
is not ``next_seq``. Sequences wrap at 2^32 (``golden.fabric.e2e.SEQ_MOD``).

Failure behaviour: bad arguments and the calls the stream's state does not allow (a write to a
full store, a read of nothing to send) raise ValueError, and change nothing.
"""

from golden.fabric.e2e import SEQ_MOD, released
from golden.params import check_int, check_window


class Store:
    """The store of one stream with ``window`` slots (a power of two)."""

    def __init__(self, window: int):
        self.window = check_window("window", window)
        self.slots = [None] * window
        self.next_seq = self.base = self.send = 0
        self.via = None

    @property
    def held(self) -> int:
        """Frames not yet acknowledged, sent or not."""
        return (self.next_seq - self.base) % SEQ_MOD

    @property
    def sent(self) -> int:
        """Frames handed to a port since the oldest not yet acknowledged."""
        return (self.send - self.base) % SEQ_MOD

    @property
    def full(self) -> bool:
        return self.held >= self.window

    @property
    def unsent(self) -> bool:
        return self.send != self.next_seq

    def frames(self) -> list:
        """The frames held, oldest first, as (seq, frame)."""
        return [((self.base + i) % SEQ_MOD, self.slots[(self.base + i) % self.window]) for i in range(self.held)]

    def write(self, frame: bytes) -> int:
        """Hold ``frame`` (numbered ``next_seq`` by the caller); returns its sequence."""
        if self.full:
            raise ValueError("write: the store is full (the stream's window)")
        seq = self.next_seq
        self.slots[seq % self.window] = frame
        self.next_seq = (seq + 1) % SEQ_MOD
        return seq

    def take(self, link: int) -> bytes:
        """The next frame to send, handed to the port on ``link``."""
        if not self.unsent:
            raise ValueError("take: nothing to send")
        frame = self.slots[self.send % self.window]
        self.send = (self.send + 1) % SEQ_MOD
        self.via = link
        return frame

    def release(self, ack: int) -> int:
        """An ACK carrying ``ack``: the frames below it are delivered and their slots free.
        Returns how many were released."""
        check_int("ack", ack, 0, SEQ_MOD - 1)
        n = released(ack, self.base, self.held)
        sent = self.sent
        self.base = (self.base + n) % SEQ_MOD
        if n >= sent:
            self.send = self.base
        return n

    def rewind(self, hop) -> int:
        """The stream's next hop is now ``hop`` (a link, or None for no path). Frames that left by
        another port go again from the oldest not yet acknowledged (10.7); with no path, they go
        again by whatever path comes next. Returns how many frames go again."""
        if not self.sent or hop == self.via:
            return 0
        if hop is None:
            self.via = None
            return 0
        again = self.sent
        self.send, self.via = self.base, hop
        return again

    def resend(self) -> int:
        """Send every frame not yet acknowledged again, from the oldest, by the port ``via``
        names. Returns how many go again."""
        again = self.sent
        self.send = self.base
        return again

    def settled(self, link: int, hop) -> bool:
        """The port on ``link`` settled (10.6): if the stream's frames left by it, they go on by
        ``hop`` from the oldest the port took out (:meth:`taken`), not from the oldest not yet
        acknowledged: the frames the link confirmed reached the live peer. True if they did."""
        if self.sent and self.via == link:
            self.via = hop
            return True
        return False

    def taken(self, seq: int) -> None:
        """A settled port took out frame ``seq`` of this stream: send it again, and what follows."""
        check_int("seq", seq, 0, SEQ_MOD - 1)
        index = (seq - self.base) % SEQ_MOD
        if index < self.sent:
            self.send = seq
