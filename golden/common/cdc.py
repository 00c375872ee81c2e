"""Transaction-level twin of rtl/common/cdc.py: what a bisynchronous FIFO may and may not deliver.

It does not predict synchronizer phase; it checks. Feed it, in time order, the transfers seen on
each side (``write``/``read``, times in any unit, read-edge indices for latency) and the resets;
it raises :class:`CdcViolation` on the first delivery the docstring of rtl/cdc.BisyncFIFO
forbids:

* order is kept; nothing is duplicated; nothing is lost except, on a write-side reset, the words
  not yet read when the reset asserted;
* a word is presented no sooner than ``min_latency`` and, when nothing is ahead of it, no later
  than ``max_latency`` read edges after its write;
* a read-side reset loses nothing (the head word's latency bound restarts at its release).
"""

from collections import deque
from dataclasses import dataclass, field


class CdcViolation(AssertionError):
    """The FIFO delivered something its specification forbids."""


@dataclass
class _InFlight:
    word: int
    write_edge: int  # read edges that had happened when the word was written
    eligible_edge: int  # read edge from which its latency bound runs (nothing ahead of it)


@dataclass
class BisyncFIFOModel:
    """Golden checker for one FIFO. ``min_latency``/``max_latency`` are in read-clock edges."""

    min_latency: int = 3
    max_latency: int = 4
    in_flight: deque = field(default_factory=deque)
    delivered: int = 0
    discarded: int = 0
    latencies: list = field(default_factory=list)
    _head_presented: bool = False

    def __post_init__(self):
        if not 0 <= self.min_latency <= self.max_latency:
            raise ValueError("min_latency and max_latency must satisfy 0 <= min_latency <= max_latency")

    def write(self, word: int, read_edges: int) -> None:
        """The write side transferred ``word`` after ``read_edges`` read-clock edges had passed."""
        self.in_flight.append(_InFlight(word, read_edges, read_edges))

    def present(self, word: int, read_edges: int) -> None:
        """After ``read_edges`` read edges the read side shows ``word`` as valid (any number of times)."""
        if not self.in_flight:
            raise CdcViolation(f"word {word:#x} presented but nothing is in flight")
        head = self.in_flight[0]
        if word != head.word:
            raise CdcViolation(f"presented {word:#x}, expected {head.word:#x} (order, loss or replay)")
        if self._head_presented:
            return
        self._head_presented = True
        latency = read_edges - head.write_edge
        if latency < self.min_latency:
            raise CdcViolation(
                f"word {word:#x} presented {latency} read edges after its write, "
                f"sooner than the synchronizer allows ({self.min_latency})"
            )
        late = read_edges - head.eligible_edge
        if late > self.max_latency:
            raise CdcViolation(
                f"word {word:#x} presented {late} read edges after it could have been, bound is {self.max_latency}"
            )
        self.latencies.append(latency)

    def take(self, word: int, read_edges: int) -> None:
        """The reader takes the presented ``word`` at the read edge after ``read_edges`` edges."""
        self.present(word, read_edges)
        self.in_flight.popleft()
        self.delivered += 1
        self._head_presented = False
        if self.in_flight:
            nxt = self.in_flight[0]
            nxt.eligible_edge = max(nxt.write_edge, read_edges + 1)

    def write_reset(self) -> None:
        """The write side asserted reset: every word not yet read is discarded."""
        self.discarded += len(self.in_flight)
        self.in_flight.clear()
        self._head_presented = False

    def read_reset_released(self, read_edges: int) -> None:
        """The read side left reset after ``read_edges`` edges. Nothing was lost; the head word
        could not be presented during the reset, so its latency bound runs from now."""
        if self.in_flight:
            head = self.in_flight[0]
            head.eligible_edge = max(head.eligible_edge, read_edges)

    def finish(self) -> None:
        """End of test: everything written must have been delivered or discarded by a reset."""
        if self.in_flight:
            raise CdcViolation(
                f"{len(self.in_flight)} words written but never delivered, first {self.in_flight[0].word:#x}"
            )
