"""Reliable Link Failure Detector of one end (docs/PROTOCOL.md 5): twin of rtl/link/rlfd.py.

Two local detectors, both bounded by the design, neither a guessed timeout:

* loss of signal: A applied ``los_cycles`` consecutive words that were missing or malformed;
* token overdue: the token S sent in cycle s has not been applied back by
  s + TOKEN_DEADLINE_AFTER_SEND + RTT + margin (RTT measured in training): on the wire at
  s + WIRE_DELAY, arrived by then + RTT + margin, applied one cycle later. A follower that has just
  entangled in cycle e expects the leader's first token by the same deadline counted from e;
* token early: the answer to a token S sent was applied more than ``margin`` cycles before
  the round trip allows (2 margin before the deadline): the round trip shrank beyond the margin,
  or the channel repeated a word. The bound is two-sided; a follower's first token has no
  earliest cycle.

A lost token word is asked again before the deadline decides (PROTOCOL.md 3.1): a malformed word
applied from the earliest cycle on lets the end ask (at most ASK_LIMIT times a wait, one ask per
round trip); an ask sent, or the peer's last token word sent again in answer to one, moves the
deadline to a round trip after it (:meth:`rearm`), the earliest cycle being past.

The remote-fault detector (a HELLO with the fault flag) is a word the endpoint decodes.
All cycles here are A-stage cycles (PROTOCOL.md 2.2).
"""

from golden.encoding import Reason
from golden.params import ASK_LIMIT, TOKEN_DEADLINE_AFTER_SEND


class Rlfd:
    """``params``: the endpoint's :class:`golden.params.LinkParams` (margin, los_cycles)."""

    def __init__(self, params):
        self.margin = params.margin
        self.los_cycles = params.los_cycles
        self.los_run = 0
        self.deadline = None  # the A cycle by which the token must be applied back, or None
        self.earliest = None  # the first A cycle it may be applied (a token S sent), or None
        self.garbled = False  # a malformed word arrived while waiting: the token may be corrupted
        self.asks = 0  # asks sent in this wait
        self.ask_from = None  # after an ask, the first A cycle of the next one, or None

    @property
    def waiting(self) -> bool:
        """A token is due from the peer."""
        return self.deadline is not None

    def clear(self):
        """Training starts or the end entangles: nothing is due, the signal count restarts."""
        self.los_run = 0
        self.deadline = self.earliest = None

    def observe(self, wellformed: bool, present: bool = True):
        """A applied a well-formed word this cycle, or one that was missing (not ``present``)
        or malformed."""
        self.los_run = 0 if wellformed else self.los_run + 1
        if present and not wellformed and self.deadline is not None:
            self.garbled = True

    def arm(self, cycle: int, rtt: int, sent: bool = True):
        """S sent the token in ``cycle`` (``sent``), or the end entangled as follower in
        ``cycle``: the peer's token is due (PROTOCOL.md 5.2)."""
        self.deadline = cycle + TOKEN_DEADLINE_AFTER_SEND + rtt + self.margin
        self.earliest = self.deadline - 2 * self.margin if sent else None
        self.garbled = False
        self.asks, self.ask_from = 0, None

    def may_ask(self, cycle: int) -> bool:
        """A malformed word applied in ``cycle`` may be the lost answer: ask for it again."""
        return (
            self.deadline is not None
            and self.asks < ASK_LIMIT
            and not self.early(cycle)
            and (self.ask_from is None or cycle >= self.ask_from)
        )

    def rearm(self, cycle: int, rtt: int, asked: bool):
        """S sent an ask (``asked``) or the last token word again in ``cycle``: the answer is
        due a round trip later. Nothing is due if the token came meanwhile."""
        if self.deadline is None:
            return
        self.deadline = cycle + TOKEN_DEADLINE_AFTER_SEND + rtt + self.margin
        self.earliest = None
        if asked:
            self.asks += 1
            self.ask_from = self.deadline - 2 * self.margin
        elif self.ask_from is not None and cycle < self.ask_from:
            # A word sent again while the next ask waits: the ask waits for its answer too, until
            # 2 margin before the deadline it moved (and not before the cycle after next, when
            # the margin exceeds the round trip: the hardware's wait register holds a cycle).
            self.ask_from = max(cycle + 2, self.deadline - 2 * self.margin)

    def early(self, cycle: int) -> bool:
        """A token applied in ``cycle`` comes before its answer could (PROTOCOL.md 5.2)."""
        return self.earliest is not None and cycle < self.earliest

    def token_received(self):
        self.deadline = self.earliest = None

    @property
    def keeps_rtt(self) -> bool:
        """A token overdue now was lost to corruption (a malformed word came while waiting for
        it), not to a longer round trip: the retraining keeps the RTT (PROTOCOL.md 5.2)."""
        return self.garbled

    def check(self, cycle: int) -> Reason | None:
        """For an end UP since the start of A cycle ``cycle``, after that cycle's word: the
        suspicion, if any."""
        if self.los_run >= self.los_cycles:
            return Reason.LOSS_OF_SIGNAL
        if self.deadline is not None and cycle >= self.deadline:
            return Reason.TOKEN_OVERDUE
        return None
