"""What a node watches of each of its ports (PROTOCOL.md 10.3, 10.6, 10.11 step 5).

Per port, the node keeps:

* the port's state (UP or not) last queued as an event: a port whose state at the start of a
  clock differs queues an event with the new state (:meth:`PortWatch.change`), and its entries
  into UP are counted there (``entangled``), for the settle's check of 10.6;
* whether it **hears** its peer: a well-formed word arrived in the last ``los_cycles`` cycles
  (the REPORT's ``hears`` bit, and what an arbiter knows of its own port, 10.3, 10.5);
* how long ago it first heard its peer, so that a port that never came UP while hearing it for
  longer than training takes on a healthy channel is reported (10.3, :meth:`stuck`).

:meth:`tick` is the edge: what the clock's word says goes into the counters. The hardware twin
(``rtl/fabric/port_watch.py``) keeps the two counters saturating, since only their comparisons
with the bounds are read.
"""

from golden.params import check_int


class PortWatch:
    """The watch of one port. ``los_cycles``: how long a port hears its peer after a well-formed
    word; ``training_bound``: cycles of hearing its peer after which a port that never came UP
    is stuck (the liveness bound of PROTOCOL.md 7.5 at the largest round trip the port accepts).
    Failure behaviour: ValueError for bad parameters."""

    def __init__(self, los_cycles: int, training_bound: int):
        self.los_cycles = check_int("los_cycles", los_cycles, 1)
        self.training_bound = check_int("training_bound", training_bound, 1)
        self.seen_up = False  # the state last queued as an event
        self.entangled = 0  # entries into UP, counted as they are queued
        self.since_heard = None  # cycles since the last well-formed word at the start of the clock
        self.heard_for = None  # cycles since the first one

    @property
    def hears(self) -> bool:
        return self.since_heard is not None and self.since_heard < self.los_cycles

    def stuck(self, ever_up: bool) -> bool:
        """The port never came UP (``ever_up``: as the node knew at the start of the clock) and
        has heard its peer for longer than a healthy channel lets training take (10.3)."""
        return not ever_up and self.heard_for is not None and self.heard_for > self.training_bound

    def change(self, up: bool) -> bool:
        """The port's state at the start of the clock is ``up``: True when it differs from the
        state last queued, which it now is (an entry into UP is counted)."""
        if up == self.seen_up:
            return False
        self.seen_up = up
        self.entangled += up
        return True

    def tick(self, heard: bool) -> None:
        """The edge: ``heard``, a well-formed word arrived in the clock."""
        if heard:
            self.since_heard = 1
        elif self.since_heard is not None:
            self.since_heard += 1
        if self.heard_for is not None:
            self.heard_for += 1
        elif heard:
            self.heard_for = 1
