"""What a node forwards to one destination in one port class (PROTOCOL.md 10.11): a forward
queue (:class:`ForwardQueue`) and, beside it, the ACK slot of the node's own stream from that
destination (:class:`Forwards`).

The frame engine writes it, one frame a clock: a frame relayed for another node at its tail, or
a frame a settled port took out at its head (it is older than every frame queued). A port takes
its head. It holds ``depth`` frames, and beyond them room for the frames settles take out
(``room``): a frame taken out never waits, being perhaps the only way out of the queue.

While the destination has no path (``no_path``), no port takes from the queue, and a frame for a
full queue does not wait: a relayed frame makes room by dropping the oldest, and a frame taken
out is dropped itself, being older than the queue's.

The ACK slot holds the node's newest ACK of its one stream from the destination whose ACKs take
this port class (a user stream's its class, a control stream's the control class) until a port
takes it; a later ACK replaces it, saying all it said. A port takes the slot's ACK and the
queue's head in turn while both wait.

Failure behaviour: a relayed frame for a full queue that has a path, or a frame taken out beyond
``depth + room``, raises OverflowError (the node checks the room first: the frame stays in its
inbox); a take with nothing waiting raises IndexError; bad parameters raise ValueError.
"""

from collections import deque

from golden import encoding as enc
from golden.encoding import NodeKind
from golden.fabric.message import node_frame
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


class Forwards:
    """What node ``node_id`` forwards to node ``dest`` in one port class: the queue (``depth``,
    ``room``: :class:`ForwardQueue`) and the ACK slot of the node's stream from ``dest`` in class
    ``stream_cls`` of kind ``kind`` (USER, or CONTROL with class 0)."""

    def __init__(self, node_id: int, dest: int, stream_cls: int, kind: NodeKind, depth: int, room: int):
        if kind not in (NodeKind.USER, NodeKind.CONTROL) or (kind == NodeKind.CONTROL and stream_cls):
            raise ValueError(
                f"an ACK slot is for a user stream or a control stream of class 0, not {kind!r} {stream_cls}"
            )
        self.node_id, self.dest, self.stream_cls, self.kind = node_id, dest, stream_cls, kind
        self.queue = ForwardQueue(depth, room)
        self.slot = None  # the sequence the waiting ACK carries, or None
        self.slot_last = False  # the last take was the slot's

    @property
    def waiting(self) -> bool:
        return self.slot is not None or bool(self.queue.frames)

    def ack(self, expected: int) -> bool:
        """The stream's ACK up to ``expected`` waits in the slot. True if it replaced one."""
        replaced = self.slot is not None
        self.slot = expected
        return replaced

    def ack_frame(self) -> bytes:
        """The ACK in the slot, as a frame."""
        payload = enc.ACK_BODY.pack(stream=int(self.kind)).to_bytes(8, "little")
        return node_frame(NodeKind.ACK, self.node_id, self.dest, self.stream_cls, self.slot, payload)

    def take(self) -> bytes:
        """What a port takes: the slot's ACK or the queue's head, in turn while both wait."""
        if self.slot is not None and not (self.slot_last and self.queue.frames):
            frame, self.slot, self.slot_last = self.ack_frame(), None, True
            return frame
        if not self.queue.frames:
            raise IndexError("take: nothing waits")
        self.slot_last = False
        return self.queue.pop()
