"""The event queue of a node's control engine (PROTOCOL.md 10.11).

Several parts of the node write it in one clock, in a fixed order: each port's change of state
(link order), each port found never to have come UP (link order), then the frame engine's
control message. The control engine reads one event a clock, from those queued before it. A
port's changes never wait (they are what the node must report), so the queue is sized for them:
``EVENTS_PER_PORT`` a port and ``EVENT_MESSAGES`` control messages (``golden.params``); a
control message waits in its inbox while ``EVENT_MESSAGES`` events are queued.

Failure behaviour: an event beyond ``depth`` raises OverflowError (the events written before it
in the clock are kept); bad parameters raise ValueError.
"""

from collections import deque

from golden.params import check_int


class EventQueue:
    """Up to ``depth`` events, oldest first."""

    def __init__(self, depth: int):
        self.depth = check_int("depth", depth, 1)
        self.events = deque()

    def __len__(self) -> int:
        return len(self.events)

    def append(self, event) -> None:
        if len(self.events) >= self.depth:
            raise OverflowError(f"the event queue overflowed ({self.depth} events)")
        self.events.append(event)

    def popleft(self):
        return self.events.popleft()
