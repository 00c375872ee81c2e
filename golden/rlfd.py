"""Reliable Link Failure Detector of one end (docs/PROTOCOL.md 5): twin of rtl/rlfd.py.

Two local detectors, both bounded by the design, neither a guessed timeout:

* loss of signal: ``los_cycles`` consecutive cycles without a well-formed word;
* token overdue: a token sent at cycle s has not come back by s + RTT + margin (RTT measured in
  training). A follower that has just entangled expects the leader's first token by
  t + RTT + 1 + margin.

The remote-fault detector (a HELLO with the fault flag) is a word the endpoint decodes.
"""


from .encoding import Reason


class Rlfd:
    """``params``: the endpoint's :class:`golden.params.LinkParams` (margin, los_cycles)."""

    def __init__(self, params):
        self.margin = params.margin
        self.los_cycles = params.los_cycles
        self.los_run = 0
        self.deadline = None        # cycle by which the token must be back, or None

    @property
    def waiting(self) -> bool:
        """A token is due from the peer."""
        return self.deadline is not None

    def clear(self):
        """Training starts or the end entangles: nothing is due, the signal count restarts."""
        self.los_run = 0
        self.deadline = None

    def observe(self, wellformed: bool):
        """This cycle's received word was well-formed, or was missing or malformed."""
        self.los_run = 0 if wellformed else self.los_run + 1

    def token_sent(self, cycle: int, rtt: int):
        """The token is on the wire at ``cycle``."""
        self.deadline = cycle + rtt + self.margin

    def expect_first_token(self, cycle: int, rtt: int):
        """The end entangled at ``cycle`` as follower: the leader's first token is due."""
        self.deadline = cycle + rtt + 1 + self.margin

    def token_received(self):
        self.deadline = None

    def check(self, cycle: int) -> Reason | None:
        """For an UP end, at ``cycle`` after this cycle's word: the suspicion, if any."""
        if self.los_run >= self.los_cycles:
            return Reason.LOSS_OF_SIGNAL
        if self.deadline is not None and cycle >= self.deadline:
            return Reason.TOKEN_OVERDUE
        return None
