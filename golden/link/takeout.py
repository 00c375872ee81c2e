"""The frames a settled end takes out of its replay buffer (docs/PROTOCOL.md 10.6). Twin of
rtl/link/takeout.py.

Settling a failed link hands the end's unconfirmed frames to the fabric, which sends them on by
another path. The hardware reads them out of the replay memory through the port the sender
reads its slices from, one frame at a time, and offers each until the fabric takes it: so the
take-out is a small state machine, and this is it, cycle for cycle.

:class:`TakeOut` holds the frames left to take per class, oldest first. Each cycle
(:meth:`tick`, at the end of the end's step), with no frame on its way: the newest frame of the
highest class that has one is chosen (its address latched, ``LOAD``); the next cycle the replay
memory reads it; from the cycle after that it is offered (``SHOW``, :attr:`offer`) until the
fabric takes it (:meth:`take`, between steps: the hardware's ready in the cycle it is shown).
So one frame goes at most every third cycle, newest first: the fabric puts each at the front of
its queue, and they leave in their order.

Failure behaviour: :meth:`take` with nothing offered raises ValueError and changes nothing.
"""

import enum


class TakeState(enum.IntEnum):
    IDLE = 0
    LOAD = 1  # a frame chosen; the replay memory reads it in the next cycle
    SHOW = 2  # the frame is offered until it is taken


class TakeOut:
    """The take-out of a ``num_classes`` end."""

    def __init__(self, num_classes: int):
        self.frames = [[] for _ in range(num_classes)]  # per class, oldest first
        self.state = TakeState.IDLE
        self._chosen = None  # (cls, frame) on its way or offered

    @property
    def busy(self) -> bool:
        """Frames are left to take, or one is on its way or offered."""
        return self.state != TakeState.IDLE or any(self.frames)

    def load(self, frames) -> None:
        """The settle's frames, per class oldest first, join those left to take."""
        for c, per_class in enumerate(frames):
            self.frames[c].extend(per_class)

    def tick(self) -> None:
        """The end of a cycle."""
        if self.state == TakeState.IDLE:
            for c in reversed(range(len(self.frames))):
                if self.frames[c]:
                    self._chosen = (c, self.frames[c].pop())
                    self.state = TakeState.LOAD
                    return
        elif self.state == TakeState.LOAD:
            self.state = TakeState.SHOW

    @property
    def offer(self):
        """(cls, frame) offered now, or None."""
        return self._chosen if self.state == TakeState.SHOW else None

    def take(self):
        """The fabric takes the frame offered: (cls, frame)."""
        if self.state != TakeState.SHOW:
            raise ValueError("take: no taken-out frame is offered")
        chosen, self._chosen = self._chosen, None
        self.state = TakeState.IDLE
        return chosen
