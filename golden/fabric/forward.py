"""A forward queue of a node: the frames it forwards to one destination in one port class
(PROTOCOL.md 10.11).

The frame engine writes it, one frame a clock: a frame relayed for another node at its tail, or
a frame a settled port took out at its head (it is older than every frame queued). A port takes
its head. It holds ``depth`` frames, and beyond them room for the frames settles take out
(``room``): a frame taken out never waits, being perhaps the only way out of the queue.

While the destination has no path (``no_path``), no port takes from the queue, and a frame for a
full queue does not wait: a relayed frame makes room by dropping the oldest, and a frame taken
out is dropped itself, being older than the queue's.

Failure behaviour: a relayed frame for a full queue that has a path, or a frame taken out beyond
``depth + room``, raises OverflowError (the node checks the room first: the frame stays in its
inbox); bad parameters raise ValueError.
"""

from collections import deque

from golden.params import check_int


class ForwardQueue:
    """The frames to forward to one (destination, port class), oldest first."""

    def __init__(self, depth: int, room: int):
        self.depth = check_int("depth", depth, 1)
        self.capacity = depth + check_int("room", room, 0)
        self.frames = deque()

    def __len__(self) -> int:
        return len(self.frames)

    def __iter__(self):
        return iter(self.frames)

    @property
    def full(self) -> bool:
        return len(self.frames) >= self.depth

    def pop(self) -> bytes:
        """The oldest frame, taken by a port."""
        return self.frames.popleft()

    def push(self, frame: bytes, front: bool = False, no_path: bool = False) -> bool:
        """Queue ``frame``: at the tail, or at the head (``front``: taken out of a settled port).
        True when a frame was dropped to keep the depth (``no_path`` and the queue full): the
        oldest, or ``frame`` itself at the head."""
        if self.full:
            if no_path:
                if front:
                    return True
                self.frames.popleft()
                self.frames.append(frame)
                return True
            if not front:
                raise OverflowError(f"a relayed frame for a full forward queue ({self.depth} frames)")
            if len(self.frames) >= self.capacity:
                raise OverflowError(f"the frames settles took out overflow a forward queue ({self.capacity} frames)")
        (self.frames.appendleft if front else self.frames.append)(frame)
        return False
