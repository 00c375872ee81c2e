"""The contrast link's transaction layer, as far as failure detection needs it: a requester with
a completion timeout, and a completer that answers after a fixed delay (docs/CONTRAST.md 6).

The requester's belief "the completer is alive" is what a PCIe driver can know: it falls when a
request's completion timeout expires and rises when a completion arrives. Nothing else tells it
that the far end is gone.
"""

from collections import deque

from .encoding import STP_REQ_TAG_BITS, TlpType
from .pcie_params import PcieParams


def request_payload(tag: int, number: int) -> bytes:
    """The payload of request ``number`` (it names its tag and number; the completion returns it)."""
    return (number.to_bytes(8, "little") + bytes([tag])).ljust(64, b"\x5a")


class Requester:
    """Issues read requests and times them out. Ports in the endpoint: :meth:`request` (user),
    :meth:`next_request` (the data link layer asks for a TLP), :meth:`complete` (a COMPLETION
    arrived), :meth:`tick`. Events go to ``events``: (cycle, "timeout" | "completion" |
    "unexpected", tag)."""

    def __init__(self, params: PcieParams):
        self.timeout = params.cycles("completion_timeout")
        self.free = deque(range(min(params.outstanding, 1 << STP_REQ_TAG_BITS)))
        self.queued = deque()           # (tag, number) waiting for the link
        self.deadlines = deque()        # (deadline, tag) of requests sent, in send order
        self.in_flight = {}             # tag -> (number, sent cycle)
        self.numbers = 0
        self.completer_alive = True
        self.counters = {"requests": 0, "completions": 0, "completion_timeouts": 0, "unexpected_completions": 0,
                         "bad_completions": 0}
        self.events = []
        self.latencies = []

    def request(self) -> int | None:
        """Queue a read request; its tag, or None when every tag is in use."""
        if not self.free:
            return None
        tag = self.free.popleft()
        self.queued.append((tag, self.numbers))
        self.numbers += 1
        self.counters["requests"] += 1
        return tag

    def next_request(self, now: int):
        """(REQUEST, tag, payload) for the data link layer, or None. The timer starts now: when the
        request goes on the wire the first time."""
        if not self.queued:
            return None
        tag, number = self.queued.popleft()
        self.in_flight[tag] = (number, now)
        self.deadlines.append((now + self.timeout, tag, number))
        return TlpType.REQUEST, tag, request_payload(tag, number)

    def complete(self, tag: int, payload: bytes, now: int) -> None:
        entry = self.in_flight.get(tag)
        if entry is None:
            self.counters["unexpected_completions"] += 1
            self.events.append((now, "unexpected", tag))
            return
        number, sent = entry
        if payload != request_payload(tag, number):
            self.counters["bad_completions"] += 1
        del self.in_flight[tag]
        self.free.append(tag)
        self.counters["completions"] += 1
        self.latencies.append(now - sent)
        self.completer_alive = True
        self.events.append((now, "completion", tag))

    def tick(self, now: int) -> None:
        while self.deadlines and self.deadlines[0][0] <= now:
            _, tag, number = self.deadlines.popleft()
            entry = self.in_flight.get(tag)
            if entry is None or entry[0] != number:
                continue                # completed in time
            del self.in_flight[tag]
            self.free.append(tag)
            self.counters["completion_timeouts"] += 1
            self.completer_alive = False
            self.events.append((now, "timeout", tag))


class Completer:
    """Answers each read request ``delay`` cycles after it arrived, in order. A link reset
    (DL_Down) drops the answers not yet sent."""

    def __init__(self, params: PcieParams):
        self.delay = params.completer_delay
        self.pending = deque()          # (ready cycle, tag, payload)

    def receive(self, tag: int, payload: bytes, now: int) -> None:
        self.pending.append((now + self.delay, tag, payload))

    def next_completion(self, now: int):
        if self.pending and self.pending[0][0] <= now:
            _, tag, payload = self.pending.popleft()
            return TlpType.COMPLETION, tag, payload
        return None

    def reset(self) -> None:
        self.pending.clear()
