"""Where a control message a node writes goes: into its stream's store, or to wait for a slot of
the stream's window (PROTOCOL.md 10.10).

A control message to a destination is numbered and written into the store of my control stream
to it, from which the ports send it, unless the stream's window is full or other messages of it
wait: then it waits, unnumbered, and replaces one waiting about the same (type, link), which it
says a newer state of. Numbered before the older ones, it would reach the destination first, and
the older one, arriving after it, would be taken for the newer. When ACKs free slots, the
control engine flushes the waiting messages one a clock, oldest first.
"""

from dataclasses import dataclass

from golden import encoding as enc
from golden.encoding import NodeKind
from golden.fabric.message import node_frame
from golden.fabric.store import Store
from golden.fabric.waiting import WaitingMessages


@dataclass(frozen=True)
class Written:
    """What became of a message: ``frame``, the frame for the store (None: it waits);
    ``superseded``: waiting, it replaced one about the same; ``flag``: the stream has a slot
    and messages wait, so the control engine is to flush it."""

    frame: bytes | None = None
    superseded: bool = False
    flag: bool = False


def about(payload: bytes) -> tuple:
    """What a control message is about, as the waiting messages key it: (type, link)."""
    head = int.from_bytes(payload[:8], "little")
    return enc.REPORT_HEAD.get(head, "type"), enc.REPORT_HEAD.get(head, "link")


class ControlOrigin:
    """Node ``node_id``'s control stream to ``dest``: its ``store`` and its ``waiting`` messages."""

    def __init__(self, node_id: int, dest: int, store: Store, waiting: WaitingMessages):
        self.node_id, self.dest, self.store, self.waiting = node_id, dest, store, waiting

    def write(self, payload: bytes, flushing: bool = False) -> Written:
        """A message with ``payload`` (slices 1-7) is written; ``flushing``: it is the oldest
        of those waiting, which the others wait behind. The frame is numbered ``next_seq``;
        the caller writes it into the store (the node does, in the next clock: 10.11), before
        this stream's next write."""
        if self.store.full or (self.waiting and not flushing):
            superseded = self.waiting.park(about(payload), payload)
            return Written(superseded=superseded, flag=not self.store.full)
        frame = node_frame(NodeKind.CONTROL, self.node_id, self.dest, 0, self.store.next_seq, payload)
        return Written(frame=frame)

    def flush(self) -> Written | None:
        """The oldest waiting message takes a free slot (None: none waits, or no slot is free),
        and the stream stays flagged, for the next."""
        if not self.waiting or self.store.full:
            return None
        written = self.write(self.waiting.pop(), flushing=True)
        return Written(frame=written.frame, flag=True)
