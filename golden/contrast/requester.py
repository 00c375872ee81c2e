"""The contrast link's transaction layer, as far as failure detection needs it: a requester with
a completion timeout, and a completer that answers after a fixed delay (docs/CONTRAST.md 6).

The requester's belief "the completer is alive" is what a PCIe driver can know: it falls when a
request's completion timeout expires and rises when a completion arrives. Nothing else tells it
that the far end is gone.
"""

from collections import deque

from golden.encoding import STP_REQ_TAG_BITS, TlpType
from golden.pcie_params import PcieParams


def request_payload(tag: int, number: int) -> bytes:
    """The payload of request ``number`` (it names its tag and number; the completion returns it)."""
    return (number.to_bytes(8, "little") + bytes([tag])).ljust(64, b"\x5a")


class Requester:
    """Issues read requests and times them out. Ports in the endpoint: :meth:`request` (user),
    :meth:`next_request` (the data link layer asks for a TLP), :meth:`complete` (a COMPLETION
    arrived), :meth:`tick`. State per tag, as hardware holds it: in flight, the request's number,
    and the cycles left before its timeout. A request takes the lowest free tag. Events go to
    ``events``: (cycle, "timeout" | "completion" | "unexpected", tag)."""

    def __init__(self, params: PcieParams):
        self.timeout = params.cycles("completion_timeout")
        self.tags = min(params.outstanding, 1 << STP_REQ_TAG_BITS)
        self.busy = [False] * self.tags  # allocated: queued or in flight
        self.number = [0] * self.tags  # the request's number (its payload names it)
        self.left = [None] * self.tags  # cycles before the timeout; None: not on the wire yet
        self.queued = deque()  # tags waiting for the link, in request order
        self.numbers = 0
        self.completer_alive = True
        self.counters = {"requests": 0, "completions": 0, "completion_timeouts": 0, "unexpected_completions": 0}
        self.events = []
        self.latencies = []

    def request(self) -> int | None:
        """Queue a read request; its tag, or None when every tag is in use."""
        if all(self.busy):
            return None
        tag = self.busy.index(False)
        self.busy[tag], self.number[tag] = True, self.numbers
        self.queued.append(tag)
        self.numbers += 1
        self.counters["requests"] += 1
        return tag

    def next_request(self, now: int):
        """(REQUEST, tag, payload) for the data link layer, or None. The timer starts now: when the
        request goes on the wire the first time."""
        if not self.queued:
            return None
        tag = self.queued.popleft()
        self.left[tag] = self.timeout
        return TlpType.REQUEST, tag, request_payload(tag, self.number[tag])

    def complete(self, tag: int, payload: bytes, now: int) -> None:
        """A completion arrived. It must answer the request in flight on its tag (the payload
        names the request): a late answer to a request that timed out, on a tag since reused, is
        unexpected too."""
        if tag >= self.tags or self.left[tag] is None or payload != request_payload(tag, self.number[tag]):
            self.counters["unexpected_completions"] += 1
            self.events.append((now, "unexpected", tag))
            return
        self.latencies.append(self.timeout - self.left[tag])
        self.busy[tag], self.left[tag] = False, None
        self.counters["completions"] += 1
        self.completer_alive = True
        self.events.append((now, "completion", tag))

    def tick(self, now: int) -> None:
        for tag in range(self.tags):
            if self.left[tag] is None:
                continue
            self.left[tag] -= 1
            if self.left[tag] == 0:
                self.busy[tag], self.left[tag] = False, None
                self.counters["completion_timeouts"] += 1
                self.completer_alive = False
                self.events.append((now, "timeout", tag))


class Completer:
    """Answers each read request ``delay`` cycles after it arrived, in order (``delay`` may be
    changed at any time, as the RTL's port may: a request takes the value of the cycle it arrives
    in, and answers stay in order, so a fast answer waits behind a slow one). It holds at most
    ``outstanding`` answers (the peer has no more tags); a request beyond that is dropped and
    counted. A link reset (DL_Down) drops the answers not yet sent."""

    def __init__(self, params: PcieParams):
        self.delay = params.completer_delay
        self.capacity = params.outstanding
        self.pending = deque()  # (ready cycle, tag, payload)
        self.dropped = 0

    def receive(self, tag: int, payload: bytes, now: int) -> None:
        if len(self.pending) >= self.capacity:
            self.dropped += 1
            return
        self.pending.append((now + self.delay, tag, payload))

    def next_completion(self, now: int):
        if self.pending and self.pending[0][0] <= now:
            _, tag, payload = self.pending.popleft()
            return TlpType.COMPLETION, tag, payload
        return None

    def reset(self) -> None:
        self.pending.clear()
