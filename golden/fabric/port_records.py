"""What a node's control engine keeps about each of its ports (PROTOCOL.md 10.3, 10.5).

Per port: the state the engine last handled (UP or not: the node's view of its port, which
routing and the arbiter read), whether it ever came UP, whether it was reported absent (it never
came UP, and heard nothing, or trained for longer than a healthy channel lets it), and the two
counts a REPORT carries: incidents (each exit from UP, and each absence) and sessions (each
entry into UP). And, for an end standing in for arbiters it cannot reach, the REPORT it last
told its peer.

A port's first entry into UP is news only if the port was reported absent, or if the table holds
its link DOWN; otherwise every table already holds it UP (they start so), and the entry only
tells the arbiter rules of this node to look again. The first entry of any port is also when
each port that never came UP and hears nothing is reported absent: from then on this node's
REPORTs may reach the arbiters.
"""

from dataclasses import dataclass

from golden import encoding as enc
from golden.fabric.message import Report, wire_session


@dataclass(frozen=True)
class Change:
    """What handling a port's change asks: ``announce`` the port (its REPORT to the link's
    arbiters, 10.3); ``absent``, the other ports newly reported absent, each to announce;
    ``arbitrate_all``: instead of announcing, apply the arbiter rules to every link this node
    arbitrates."""

    announce: bool
    absent: tuple = ()
    arbitrate_all: bool = False


class PortRecords:
    """The records of the ports on ``links``, in their order."""

    def __init__(self, links):
        self.links = list(links)
        self.up = dict.fromkeys(self.links, False)
        self.ever_up = dict.fromkeys(self.links, False)
        self.absent = set()
        self.incident = dict.fromkeys(self.links, 0)
        self.session = dict.fromkeys(self.links, 0)
        self._told = {}  # link -> (up, incident, session) of the REPORT last told the peer

    def changed(self, link: int, up: bool, hears, table_up: bool) -> Change:
        """The engine handles port ``link``'s change to ``up``; ``hears(l)``: port ``l`` hears its
        peer; ``table_up``: the table holds ``link`` UP."""
        self.up[link] = up
        if not up:
            self.incident[link] += 1
            return Change(announce=True)
        self.session[link] += 1
        if self.ever_up[link]:
            return Change(announce=True)
        self.ever_up[link] = True
        absent = tuple(
            other for other in self.links if not self.ever_up[other] and other not in self.absent and not hears(other)
        )
        for other in absent:
            self.absent.add(other)
            self.incident[other] += 1
        if link not in self.absent and table_up:
            return Change(announce=False, absent=absent, arbitrate_all=True)
        return Change(announce=True, absent=absent)

    def never_up(self, link: int):
        """The engine handles port ``link``'s absence, found as the port trained too long (10.3)."""
        self.incident[link] += 1

    def report(self, node_id: int, link: int, hears: bool, half: int) -> Report:
        """Node ``node_id``'s REPORT of port ``link``, which ``hears`` its peer and holds ``half``."""
        return Report(link, node_id, self.up[link], hears, self.incident[link], self.session[link], half)

    def tell(self, report: Report) -> bool:
        """``report`` is to go to the peer, standing in (10.5): True once per change of the
        port, as the REPORT carries its counts."""
        key = (report.up, report.incident % (1 << enc.INCIDENT_BITS), wire_session(report.session))
        if self._told.get(report.link) == key:
            return False
        self._told[report.link] = key
        return True
