"""The topology table: per link of the fabric, the committed state and the epoch of the verdict
that set it (PROTOCOL.md 10.4).

A verdict is adopted when its epoch (count, arbiter) is greater than the one held for its link,
ordered by count, then arbiter id; any other is stale. Every entry starts UP at epoch (0, 0).
"""

from dataclasses import dataclass

from golden.encoding import Verdict
from golden.params import check_int

# The verdicts that commit a link DOWN; LINK_UP commits it UP.
DOWN_VERDICTS = frozenset({Verdict.LINK_DOWN, Verdict.NODE_DOWN, Verdict.UNREACHABLE})


@dataclass(frozen=True)
class Entry:
    """One link in a node's topology table (10.4)."""

    up: bool = True
    epoch: tuple = (0, 0)
    verdict: Verdict = Verdict.NONE
    subject: int = 0


class Table:
    """The entries of ``links`` links, read as ``table[link]`` and in link order."""

    def __init__(self, links: int):
        check_int("links", links, 1)
        self._entries = [Entry() for _ in range(links)]

    def __getitem__(self, link: int) -> Entry:
        return self._entries[link]

    def __iter__(self):
        return iter(self._entries)

    def __len__(self):
        return len(self._entries)

    def adopt(self, link: int, verdict: Verdict, subject: int, epoch: tuple) -> bool:
        """Commit ``verdict`` on ``link`` if ``epoch`` is newer than the entry's; False (and
        nothing changes) if it is stale."""
        if epoch <= self._entries[link].epoch:
            return False
        self._entries[link] = Entry(verdict not in DOWN_VERDICTS, epoch, verdict, subject)
        return True
