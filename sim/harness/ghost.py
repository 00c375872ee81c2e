"""The ghost meter: the paper's Definition 1 as numbers.

A ghost exists while the topology a node believes, G_K(t), differs from the actual one, G_A(t)
(seeds/ghost-in-the-datacenter, Definition 1). The meter is told, at the cycles where they
change, whether each link is actually up (from the channel's fault state and the liveness of the
nodes at its ends: the harness decides what "actually up" means for its faults) and whether each
observer (a node, or one end of a single link) believes it up. It works for any link that
reports a belief: the OAE status, the contrast link's DL_Up, a triangle node's topology table.

Per observer and link, every interval in which belief and fact differ is a **ghost** of one of
two signs:

* ``up_while_down``: believed up while it is down (the paper's ghost: traffic is sent into a
  link that is gone);
* ``down_while_up``: believed down while it is up (a link that works is not used: a slow link
  called dead, or the time a repaired link waits to be believed again).

Each ghost belongs to a **fault event**: a maximal interval in which the link is actually down.
An ``up_while_down`` ghost lies inside its event; a ``down_while_up`` ghost belongs to the last
event of its link that began before it (none: ``spurious``). An event no observer noticed (no
belief of the link changed from its start until the link's next event) and in which the harness
reports nothing lost is **unseen**: a fault too short to be seen that the link hid. Its cycles
are counted apart and not in the ghost totals, so hiding a short flap is not scored as a ghost.

Cycles are integers; an interval ``[start, end)`` holds ``end - start`` cycles. Changes must be
given in non-decreasing cycle order.
"""

from dataclasses import dataclass, field

UP_WHILE_DOWN = "up_while_down"
DOWN_WHILE_UP = "down_while_up"


@dataclass(frozen=True)
class Ghost:
    """One interval in which ``observer`` believed ``link`` to be in the wrong state."""

    observer: str
    link: str
    sign: str
    start: int
    end: int

    @property
    def cycles(self) -> int:
        return self.end - self.start


@dataclass
class FaultEvent:
    """A maximal interval in which ``link`` is actually down (``end`` None: still down)."""

    link: str
    start: int
    end: int | None
    ghosts: list = field(default_factory=list)
    noticed: bool = False  # some observer's belief of the link changed since it began
    lost: int = 0  # frames or tokens the harness reports lost in it

    @property
    def unseen(self) -> bool:
        """Nobody noticed and nothing was lost: the link hid the fault."""
        return self.end is not None and not self.noticed and self.lost == 0

    def cycles(self, sign: str) -> int:
        return sum(g.cycles for g in self.ghosts if g.sign == sign)

    def as_dict(self) -> dict:
        return {
            "link": self.link,
            "start": self.start,
            "end": self.end,
            "unseen": self.unseen,
            "lost": self.lost,
            UP_WHILE_DOWN: self.cycles(UP_WHILE_DOWN),
            DOWN_WHILE_UP: self.cycles(DOWN_WHILE_UP),
            "ghosts": [{"observer": g.observer, "sign": g.sign, "start": g.start, "end": g.end} for g in self.ghosts],
        }


class GhostMeter:
    """Ghost intervals from the actual and believed state of each link.

    ``links``: the link names; ``observers``: ``{observer: [links it holds a belief of]}``.
    Every link starts actually up and believed up at cycle ``start`` (a harness whose links
    start down says so at ``start``). Feed changes with :meth:`actual` and :meth:`believe` (or
    whole states with :meth:`sample`); :meth:`finish` closes the open intervals and returns the
    :class:`GhostReport`. An unknown link or observer raises ValueError, as does a cycle
    earlier than the last one given.
    """

    def __init__(self, links, observers, start: int = 0):
        self._links = list(links)
        if len(set(self._links)) != len(self._links) or not self._links:
            raise ValueError(f"links must be distinct names, at least one, not {links!r}")
        self._views = {}
        for observer, seen in dict(observers).items():
            for link in seen:
                self._check_link(link)
                self._views[observer, link] = True
        if not self._views:
            raise ValueError("at least one observer must hold a belief of a link")
        if not isinstance(start, int) or start < 0:
            raise ValueError(f"start must be a cycle >= 0, not {start!r}")
        self.start = self._now = start
        self._up = {link: True for link in self._links}
        self._events = []
        self._open_event = {}  # link -> its FaultEvent while actually down
        self._last_event = {}  # link -> its latest FaultEvent
        self._since = {}  # (observer, link) -> start of the open ghost
        self._spurious = []
        self._lost_outside = 0
        self._finished = None

    def _check_link(self, link):
        if link not in self._links:
            raise ValueError(f"unknown link {link!r} (links: {', '.join(map(str, self._links))})")

    def _advance(self, cycle):
        if self._finished is not None:
            raise ValueError("the meter has finished")
        if not isinstance(cycle, int) or cycle < self._now:
            raise ValueError(f"cycle must be an integer >= {self._now} (changes come in order), not {cycle!r}")
        self._now = cycle

    def actual(self, cycle: int, link: str, up: bool) -> None:
        """From ``cycle`` on, ``link`` is actually up (``up``) or down."""
        self._advance(cycle)
        self._check_link(link)
        if bool(up) == self._up[link]:
            return
        self._close_views(link, cycle)
        self._up[link] = bool(up)
        if up:
            self._open_event.pop(link).end = cycle
        else:
            event = FaultEvent(link, cycle, None)
            self._events.append(event)
            self._open_event[link] = self._last_event[link] = event
        self._open_views(link, cycle)

    def believe(self, cycle: int, observer: str, link: str, up: bool) -> None:
        """From ``cycle`` on, ``observer`` believes ``link`` up (``up``) or down."""
        self._advance(cycle)
        key = (observer, link)
        if key not in self._views:
            raise ValueError(f"observer {observer!r} holds no belief of link {link!r}")
        if bool(up) == self._views[key]:
            return
        event = self._last_event.get(link)
        if event is not None:
            event.noticed = True
        self._close(key, cycle)
        self._views[key] = bool(up)
        self._open(key, cycle)

    def retire(self, cycle: int, observer: str) -> None:
        """From ``cycle`` on, ``observer`` holds no belief (a node that died): its open ghosts
        end there."""
        self._advance(cycle)
        keys = [key for key in self._views if key[0] == observer]
        if not keys:
            raise ValueError(f"unknown observer {observer!r}")
        for key in keys:
            self._close(key, cycle)
            del self._views[key]

    def sample(self, cycle: int, actual: dict, believed: dict) -> None:
        """The whole state at ``cycle``: ``actual`` {link: up}, ``believed`` {(observer, link): up}."""
        for link, up in actual.items():
            self.actual(cycle, link, up)
        for (observer, link), up in believed.items():
            self.believe(cycle, observer, link, up)

    def lost(self, link: str, count: int = 1) -> None:
        """The harness lost ``count`` frames or tokens on ``link`` in its latest fault event (or
        outside any: they then count against no event and the report shows them apart)."""
        self._check_link(link)
        if not isinstance(count, int) or count < 0:
            raise ValueError(f"count must be an integer >= 0, not {count!r}")
        event = self._last_event.get(link)
        if event is None:
            self._lost_outside += count
        else:
            event.lost += count

    def _views_of(self, link):
        return [key for key in self._views if key[1] == link]

    def _close_views(self, link, cycle):
        for key in self._views_of(link):
            self._close(key, cycle)

    def _open_views(self, link, cycle):
        for key in self._views_of(link):
            self._open(key, cycle)

    def _open(self, key, cycle):
        if self._views[key] != self._up[key[1]]:
            self._since[key] = cycle

    def _close(self, key, cycle):
        start = self._since.pop(key, None)
        if start is None or start == cycle:
            return
        link = key[1]
        sign = UP_WHILE_DOWN if self._views[key] else DOWN_WHILE_UP
        ghost = Ghost(key[0], link, sign, start, cycle)
        event = self._last_event.get(link)
        (event.ghosts if event is not None else self._spurious).append(ghost)

    def finish(self, cycle: int) -> "GhostReport":
        """Close every open interval at ``cycle`` and return the report."""
        self._advance(cycle)
        for key in list(self._since):
            self._close(key, cycle)
        self._finished = GhostReport(self._events, self._spurious, cycle, self._lost_outside)
        return self._finished


@dataclass
class GhostReport:
    """Every fault event with its ghosts, the spurious ghosts (outside any event), and totals."""

    events: list
    spurious: list
    end: int
    lost_outside: int = 0

    def _seen(self):
        return [e for e in self.events if not e.unseen]

    def ghost_cycles(self, sign: str = UP_WHILE_DOWN) -> int:
        """Ghost cycles of ``sign``, summed over observers and the events that were seen (plus
        spurious ghosts)."""
        return sum(e.cycles(sign) for e in self._seen()) + sum(g.cycles for g in self.spurious if g.sign == sign)

    def worst(self, sign: str = UP_WHILE_DOWN) -> int:
        """The longest single ghost of ``sign`` (0 if none), spurious ones included."""
        return max(
            (g.cycles for g in [*(g for e in self._seen() for g in e.ghosts), *self.spurious] if g.sign == sign),
            default=0,
        )

    @property
    def unseen(self) -> list:
        return [e for e in self.events if e.unseen]

    def as_dict(self) -> dict:
        return {
            "end": self.end,
            "totals": {
                UP_WHILE_DOWN: self.ghost_cycles(UP_WHILE_DOWN),
                DOWN_WHILE_UP: self.ghost_cycles(DOWN_WHILE_UP),
                "worst_" + UP_WHILE_DOWN: self.worst(UP_WHILE_DOWN),
                "worst_" + DOWN_WHILE_UP: self.worst(DOWN_WHILE_UP),
                "events": len(self.events),
                "unseen_events": len(self.unseen),
                "unseen_cycles": sum((e.end if e.end is not None else self.end) - e.start for e in self.unseen),
                "lost_outside_events": self.lost_outside,
            },
            "events": [e.as_dict() for e in self.events],
            "spurious": [
                {"observer": g.observer, "link": g.link, "sign": g.sign, "start": g.start, "end": g.end}
                for g in self.spurious
            ],
        }
