"""What a node watches of each of its ports in hardware (PROTOCOL.md 10.3, 10.6, 10.11 step 5);
twin of golden/fabric/port_watch.py."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden import encoding as enc
from golden.params import check_int

# The widest bound a watch counts to: the liveness bound of PROTOCOL.md 7.5 at the largest
# max_rtt LinkParams accepts stays far below it.
MAX_BOUND = (1 << 24) - 2


class PortWatch(wiring.Component):
    """The watch of one port.

    Ports (in): ``up`` (the port is UP, its registered state), ``heard`` (a well-formed word
    arrived in the cycle), ``ever_up`` (the node's flag: the port has come UP, as the control
    engine handled it). Out: ``change`` (the port's state differs from the one last queued: the
    node queues an event this cycle), ``hears`` (a well-formed word arrived in the last
    ``los_cycles`` cycles), ``stuck`` (the port never came UP and has heard its peer for more
    than ``training_bound`` cycles), ``session`` (the port's entries into UP as a REPORT
    carries them: 0 before the first, then 1 .. 2^16 - 1 wrapping to 1).

    ``los_cycles``, ``training_bound``: 1 .. 2^24 - 2. Latency: the outputs are combinational
    from registers, which move at the clock (``change`` moves the state last queued, and counts
    an entry into UP). Failure behaviour: none; ValueError at construction for bad parameters.
    """

    def __init__(self, los_cycles: int, training_bound: int):
        self._los = check_int("los_cycles", los_cycles, 1, MAX_BOUND)
        self._bound = check_int("training_bound", training_bound, 1, MAX_BOUND)
        super().__init__(
            {
                "up": In(1),
                "heard": In(1),
                "ever_up": In(1),
                "change": Out(1),
                "hears": Out(1),
                "stuck": Out(1),
                "session": Out(enc.SESSION_BITS),
            }
        )

    def elaborate(self, platform):
        m = Module()
        los, bound = self._los, self._bound
        seen_up = Signal()
        # Both counters saturate: only their comparisons with the bounds are read. ``since``
        # starts saturated (never heard); ``heard_for`` counts once ``ever_heard`` is set.
        since = Signal(range(los + 1), init=los)
        ever_heard = Signal()
        heard_for = Signal(range(bound + 2))
        wrap = (1 << enc.SESSION_BITS) - 1
        m.d.comb += [
            self.change.eq(self.up != seen_up),
            self.hears.eq(since < los),
            self.stuck.eq(~self.ever_up & ever_heard & (heard_for > bound)),
        ]
        m.d.sync += seen_up.eq(self.up)
        with m.If(self.change & self.up):
            m.d.sync += self.session.eq(Mux(self.session == wrap, 1, self.session + 1))
        with m.If(self.heard):
            m.d.sync += since.eq(1)
        with m.Elif(since != los):
            m.d.sync += since.eq(since + 1)
        with m.If(ever_heard):
            with m.If(heard_for != bound + 1):
                m.d.sync += heard_for.eq(heard_for + 1)
        with m.Elif(self.heard):
            m.d.sync += [ever_heard.eq(1), heard_for.eq(1)]
        return m
