"""The control messages a node's stream to one destination holds back (PROTOCOL.md 10.10).

A control message written while its stream's window is full, or while others of its stream
wait, waits unnumbered. A newer message of the same type about the same link replaces the one
waiting (it says a newer state) and goes last; when ACKs free slots of the window, the waiting
messages are numbered and sent oldest first. So at most one message per (type, link) waits: a
REPORT per link of the node and a VERDICT per link of the fabric.

Failure behaviour: a message beyond ``capacity`` raises OverflowError, and a pop with nothing
waiting ValueError (the node never does either); a bad capacity raises ValueError.
"""

from golden.params import check_int


class WaitingMessages:
    """Up to ``capacity`` messages, each about a different (type, link), oldest first."""

    def __init__(self, capacity: int):
        self.capacity = check_int("capacity", capacity, 1)
        self.messages = {}  # about -> payload, oldest first

    def __len__(self) -> int:
        return len(self.messages)

    def payloads(self) -> list:
        return list(self.messages.values())

    def park(self, about, payload: bytes) -> bool:
        """``payload`` about ``about`` waits, last. True if it replaced one about the same."""
        superseded = self.messages.pop(about, None) is not None
        if len(self.messages) >= self.capacity:
            raise OverflowError(f"more than {self.capacity} control messages wait")
        self.messages[about] = payload
        return superseded

    def pop(self) -> bytes:
        """The oldest message waiting, which leaves."""
        if not self.messages:
            raise ValueError("pop: no message waits")
        return self.messages.pop(next(iter(self.messages)))
