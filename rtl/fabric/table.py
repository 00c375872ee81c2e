"""The topology table in hardware (PROTOCOL.md 10.4); twin of golden/fabric/table.py."""

from amaranth.hdl import Array, Module, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for

from golden import encoding as enc
from golden.encoding import Verdict
from golden.params import check_int

# One entry: the committed state and the epoch (count, arbiter) and verdict that set it.
ENTRY = data.StructLayout(
    {
        "up": 1,
        "count": enc.EPOCH_BITS,
        "arbiter": enc.NODE_ID_BITS,
        "verdict": Verdict,
        "subject": enc.NODE_ID_BITS,
    }
)


def verdict_write(links: int) -> data.StructLayout:
    """A verdict offered to the table: the link it is on, the verdict and its epoch."""
    return data.StructLayout(
        {
            "link": bits_for(links - 1),
            "verdict": Verdict,
            "subject": enc.NODE_ID_BITS,
            "count": enc.EPOCH_BITS,
            "arbiter": enc.NODE_ID_BITS,
        }
    )


class TopologyTable(wiring.Component):
    """Per link of the fabric, the committed state and epoch; adopts newer verdicts.

    Ports: ``write_en`` and ``write`` (in, ``verdict_write(links)``): a verdict offered this
    cycle; ``adopt`` (out, combinational): its epoch (count, arbiter) is greater than the one
    held for its link, so it is committed at the clock edge (DOWN for LINK_DOWN, NODE_DOWN and
    UNREACHABLE, UP otherwise); 0 when stale or ``write_en`` is low. ``up`` (out, one bit per
    link, registered: the committed states). ``read_link`` (in) and ``read`` (out, ``ENTRY``,
    combinational from the registers): one entry, for the arbiter's rules and its next count.

    Every entry starts UP at epoch (0, 0) after reset. Latency: a verdict adopted in cycle t shows
    in ``up`` and ``read`` from cycle t + 1. Failure behaviour: a ``write.link`` past the last
    link is never adopted, and a ``read_link`` past it reads an UP entry at epoch (0, 0).
    ValueError at construction for bad ``links``.
    """

    def __init__(self, links: int):
        check_int("links", links, 1, 1 << enc.LINK_ID_BITS)
        self._links = links
        super().__init__(
            {
                "write_en": In(1),
                "write": In(verdict_write(links)),
                "adopt": Out(1),
                "up": Out(links),
                "read_link": In(bits_for(links - 1)),
                "read": Out(ENTRY),
            }
        )

    def elaborate(self, platform):
        m = Module()
        entries = Array(Signal(ENTRY, name=f"entry{i}", init={"up": 1}) for i in range(self._links))
        w = self.write
        held = entries[w.link]
        newer = (w.count > held.count) | ((w.count == held.count) & (w.arbiter > held.arbiter))
        in_range = w.link < self._links
        m.d.comb += self.adopt.eq(self.write_en & in_range & newer)
        up = (w.verdict != Verdict.LINK_DOWN) & (w.verdict != Verdict.NODE_DOWN) & (w.verdict != Verdict.UNREACHABLE)
        with m.If(self.adopt):
            m.d.sync += [
                held.up.eq(up),
                held.count.eq(w.count),
                held.arbiter.eq(w.arbiter),
                held.verdict.eq(w.verdict),
                held.subject.eq(w.subject),
            ]
        m.d.comb += [self.up[i].eq(entries[i].up) for i in range(self._links)]
        with m.If(self.read_link < self._links):
            m.d.comb += self.read.eq(entries[self.read_link])
        with m.Else():
            m.d.comb += self.read.up.eq(1)
        return m
