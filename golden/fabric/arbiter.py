"""The arbiter's rules: what an arbiter of link XY decides from the ends' REPORTs and its own
ports (PROTOCOL.md 10.5), as a function of what it knows.

The node gathers, per end of the link, an :class:`EndView`, and calls :func:`decide` whenever a
REPORT of the link arrives or one of its own ports changes; it writes the verdict, numbers its
epoch and sends it. The rules are the table of 10.5, applied in its order; the first that
holds decides.
"""

from dataclasses import dataclass

from golden.encoding import Verdict


@dataclass(frozen=True)
class EndView:
    """What the arbiter knows of one end of the link.

    ``reported``: it holds a REPORT of this end (none counts as UP); ``up``, ``hears``,
    ``entangled`` (session not 0): that report's fields; ``port_up``: the arbiter's own port to
    this end is UP; ``heard``: that port applied a well-formed word in its last ``los_cycles``."""

    reported: bool = False
    up: bool = False
    hears: bool = False
    entangled: bool = False
    port_up: bool = True
    heard: bool = True

    @property
    def left(self) -> bool:
        """The end's latest report is of leaving UP."""
        return self.reported and not self.up

    @property
    def never_heard(self) -> bool:
        """The end reported leaving UP from a port that never entangled and hears nothing."""
        return self.left and not self.entangled and not self.hears


@dataclass(frozen=True)
class Decision:
    """``verdict`` None: nothing to write. ``subject``: the end (0 for X, 1 for Y) a NODE_DOWN or
    UNREACHABLE names. ``reports``: the ends (0, 1) whose reports a LINK_DOWN carries.
    ``healed``: the suspicion of an open incident healed (verdict NONE, counted, not sent)."""

    verdict: Verdict | None = None
    subject: int | None = None
    reports: tuple = ()
    healed: bool = False


NOTHING = Decision()


def decide(committed_up: bool, committed: Verdict, x: EndView, y: EndView, open_incident: bool) -> Decision:
    """The first rule of 10.5 that holds for link XY, whose table entry is UP or DOWN by the
    verdict ``committed``; ``open_incident``: a report of leaving UP is pending."""
    ends = (x, y)
    if committed_up:
        if x.left and y.left:
            return Decision(Verdict.LINK_DOWN, reports=(0, 1))
        for end, other in ((0, 1), (1, 0)):
            if ends[end].left and not ends[other].port_up and not ends[other].left:
                silent = not ends[end].hears and not ends[other].heard
                return Decision(Verdict.NODE_DOWN if silent else Verdict.UNREACHABLE, subject=other)
        for end, other in ((0, 1), (1, 0)):
            if ends[end].never_heard and ends[other].port_up and ends[end].port_up:
                # One end never heard the link, and I hear both ends alive: the line to it is
                # dead. The other end, which may hear it, never reports (10.5).
                return Decision(Verdict.LINK_DOWN, reports=(end,))
        if open_incident and not x.left and not y.left:
            return Decision(healed=True)
        return NOTHING
    if committed in (Verdict.NODE_DOWN, Verdict.UNREACHABLE) and x.left and y.left:
        return Decision(Verdict.LINK_DOWN, reports=(0, 1))
    if x.reported and x.up and y.reported and y.up:
        return Decision(Verdict.LINK_UP)
    return NOTHING
