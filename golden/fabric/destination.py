"""The streams a node receives (PROTOCOL.md 10.7, 10.10, 10.11).

Per stream (origin, class, kind) the node keeps the sequence it expects next, what its last ACK
carried, and a reorder buffer for the frames that arrived ahead of the gap. A frame for the node
is a duplicate (behind the expected one: dropped, perhaps acknowledged again), early (held in the
reorder buffer), or the next expected (delivered). After a delivery the stream drains its reorder
buffer one frame at a time (:meth:`Destination.drain`), and is acknowledged when the gap is filled
and enough frames have arrived since its last ACK (a user stream: ``ack_every``; a control
stream: by the control engine, after it has handled the messages). A user stream's ACK, due on
a delivery or for a duplicate, is recorded here as it is made (what it carried is what a copy
is judged against, 10.7); a control stream's, made by the control engine, is recorded at the
end of the clock (:meth:`Destination.record`).

:class:`Destination` says what happens to each frame; the node does it (hands a user frame to
the user, a control message to the control engine, makes the ACK). Failure behaviour: a frame of
a stream the node does not receive, or a drain with no stream draining, raises ValueError; a
frame a window or more ahead is refused (``Arrived.refused``), which no origin keeping its window
sends.
"""

from dataclasses import dataclass

from golden.encoding import NodeKind
from golden.fabric.e2e import SEQ_MOD, ack_due, arrival
from golden.fabric.reorder import Reorder
from golden.params import E2E_CONTROL_WINDOW, check_int, check_window


@dataclass(frozen=True)
class Arrived:
    """What a frame for this node did to its stream. ``duplicate``: behind the expected one,
    dropped (``ack_copy``: and acknowledged again, 10.7). ``held``: kept in the reorder buffer
    (``copy``: replacing a copy of itself); ``refused``: a window or more ahead, dropped.
    ``delivered``: the next expected, to the user or the control engine; ``expected`` is the
    stream's next expected after it, ``last`` says the reorder buffer does not hold that one
    (else the stream drains it next), and ``ack_due`` (a user stream, ``last``) that its ACK is
    due up to ``expected``."""

    duplicate: bool = False
    ack_copy: bool = False
    held: bool = False
    copy: bool = False
    refused: bool = False
    delivered: bool = False
    expected: int = 0
    last: bool = True
    ack_due: bool = False


def received_streams(others, user_classes: int) -> list:
    """The streams a node receives, in the order the hardware numbers them: for each other node
    in id order, its user classes, then its control stream, as (origin, class, kind)."""
    return [
        (d, c, kind)
        for d in others
        for c, kind in [*((c, NodeKind.USER) for c in range(user_classes)), (0, NodeKind.CONTROL)]
    ]


class Destination:
    """The streams from ``others`` (node ids) in ``user_classes`` user classes and the control
    class: reorder buffers of ``e2e_window`` slots (``E2E_CONTROL_WINDOW`` for a control
    stream), a user stream's ACK every ``ack_every`` frames."""

    def __init__(self, others, user_classes: int, e2e_window: int, ack_every: int):
        check_window("e2e_window", e2e_window)
        self.ack_every = check_int("ack_every", ack_every, 1, e2e_window)
        self.streams = received_streams(others, user_classes)
        self.expected = dict.fromkeys(self.streams, 0)
        self.acked = dict.fromkeys(self.streams)  # what the last ACK carried; None: none sent
        self.reorder = {
            key: Reorder(E2E_CONTROL_WINDOW if key[2] == NodeKind.CONTROL else e2e_window) for key in self.streams
        }
        self.draining = None  # the stream whose reorder buffer holds its next frame

    @property
    def held(self) -> int:
        """Frames held in the reorder buffers."""
        return sum(len(b) for b in self.reorder.values())

    def arrive(self, key, seq: int, frame: bytes) -> Arrived:
        """Frame ``seq`` of stream ``key`` arrives."""
        if key not in self.expected:
            raise ValueError(f"no stream {key} arrives here")
        expected = self.expected[key]
        got = arrival(seq, expected, self.acked[key])
        if got.duplicate:
            if got.ack_copy and key[2] == NodeKind.USER:
                self.acked[key] = expected  # acknowledged again, up to where the stream is
            return Arrived(duplicate=True, ack_copy=got.ack_copy)
        if got.ahead:
            buffer = self.reorder[key]
            copy = buffer.holds(seq)
            if not buffer.hold(seq, frame, expected):
                return Arrived(refused=True)
            return Arrived(held=True, copy=copy)
        return self._delivered(key)

    def drain(self) -> tuple:
        """The next frame of the stream draining its reorder buffer, delivered: (stream, frame,
        :class:`Arrived`)."""
        key = self.draining
        if key is None:
            raise ValueError("drain: no stream is draining")
        frame = self.reorder[key].take(self.expected[key])
        return key, frame, self._delivered(key)

    def _delivered(self, key) -> Arrived:
        expected = (self.expected[key] + 1) % SEQ_MOD
        self.expected[key] = expected
        last = not self.reorder[key].holds(expected)
        self.draining = None if last else key
        due = key[2] == NodeKind.USER and last and ack_due(expected, self.acked[key] or 0, self.ack_every)
        if due:
            self.acked[key] = expected
        return Arrived(delivered=True, expected=expected, last=last, ack_due=due)

    def record(self, key, expected: int) -> None:
        """The control engine acknowledged control stream ``key`` up to ``expected`` (the end of
        its clock)."""
        if key not in self.acked or key[2] != NodeKind.CONTROL:
            raise ValueError(f"record: {key} is not a control stream that arrives here")
        self.acked[key] = expected
