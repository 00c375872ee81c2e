"""The REPORTs a node keeps (PROTOCOL.md 10.5): per end of each link, the latest it received.

An arbiter decides a link's verdict from the latest REPORT of each of its ends, and carries
them in a LINK_DOWN; an end standing in for arbiters it cannot reach reads its peer's. A REPORT
of leaving UP opens an incident on its link, which stays open until the arbiter decides on it
(a verdict, or the link found healed). A later REPORT of an end replaces its earlier one:
REPORTs of one end arrive in the order it wrote them (one stream, 10.7).

Failure behaviour: a REPORT about a link outside the fabric, or written by a node that is not
one of the link's ends, raises ValueError (the node's message check never passes one).
"""

from golden.fabric.message import Report
from golden.topology import Topology, check_topology


class Reports:
    """The latest REPORT of each end of every link of ``topology``, and the open incidents."""

    def __init__(self, topology: Topology):
        self.topology = check_topology(topology)
        self._latest = {}  # (link, end) -> Report
        self._open = set()  # links with a report of leaving UP not yet decided on

    def record(self, report: Report):
        """``report`` is the latest of its writer's port on its link."""
        links = self.topology.links
        if not 0 <= report.link < len(links) or report.writer not in links[report.link]:
            raise ValueError(f"a REPORT on link {report.link} by node {report.writer}: not an end of the link")
        self._latest[report.link, report.writer] = report
        if not report.up:
            self._open.add(report.link)

    def latest(self, link: int, end: int) -> Report | None:
        """The latest REPORT of node ``end``'s port on ``link``, or None before the first."""
        return self._latest.get((link, end))

    def is_open(self, link: int) -> bool:
        return link in self._open

    def close(self, link: int):
        """The arbiter decided on ``link``'s incident."""
        self._open.discard(link)
