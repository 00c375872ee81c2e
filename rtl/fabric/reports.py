"""The REPORTs a node keeps, in hardware (PROTOCOL.md 10.5); twin of golden/fabric/reports.py."""

from amaranth.hdl import Array, Module, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from golden import encoding as enc
from golden.topology import Topology, check_topology
from rtl.common.fields import layout

# The latest REPORT of one end of a link: its slice 1 and its half-state (slice 2).
ENTRY = data.StructLayout(
    {"valid": 1, "head": layout(enc.REPORT_HEAD), "half": enc.HALF_STATE_BITS},
)


class Reports(wiring.Component):
    """Per end of each link of ``topology``, the latest REPORT (golden :meth:`latest`), and per
    link whether an incident is open (golden :meth:`is_open`), in registers.

    Ports (in): ``record``, ``record_head`` (``enc.REPORT_HEAD``), ``record_half`` (golden
    :meth:`record`; the writer is one of the link's ends, as the message check makes sure);
    ``close``, ``close_link`` (golden :meth:`close`); ``link``, the link read. Out, from the
    registers: ``ends`` (``ENTRY`` of the link's lower node id, then of the higher, as
    ``topology.links`` names them) and ``open``.

    A record and a close in one clock: the close acts first, so a REPORT of leaving UP opens
    the link again. Latency: what a clock records is read from the next. Failure behaviour:
    none (a record whose writer is not an end of its link, or a link outside the fabric, is the
    caller's error and records nothing); ValueError at construction for a bad topology.
    """

    def __init__(self, topology: Topology):
        self._topology = check_topology(topology)
        link_range = range(len(topology.links))
        super().__init__(
            {
                "record": In(1),
                "record_head": In(layout(enc.REPORT_HEAD)),
                "record_half": In(enc.HALF_STATE_BITS),
                "close": In(1),
                "close_link": In(link_range),
                "link": In(link_range),
                "ends": Out(data.ArrayLayout(ENTRY, 2)),
                "open": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        links = self._topology.links
        entries = [Array(Signal(ENTRY, name=f"report_{link}_{end}") for link in range(len(links))) for end in range(2)]
        opened = Signal(len(links), name="opened")
        m.d.comb += [
            self.ends[0].eq(entries[0][self.link]),
            self.ends[1].eq(entries[1][self.link]),
            self.open.eq(opened.bit_select(self.link, 1)),
        ]
        head = self.record_head
        with m.If(self.close):
            m.d.sync += opened.bit_select(self.close_link, 1).eq(0)
        with m.If(self.record):
            with m.Switch(head.link):
                for link, (lo, hi) in enumerate(links):
                    with m.Case(link):
                        for end, node in enumerate((lo, hi)):
                            with m.If(head.writer == node):
                                entry = entries[end][link]
                                m.d.sync += [entry.valid.eq(1), entry.head.eq(head), entry.half.eq(self.record_half)]
                        with m.If(~head.up & ((head.writer == lo) | (head.writer == hi))):
                            m.d.sync += opened[link].eq(1)
        return m
