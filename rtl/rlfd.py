"""Reliable Link Failure Detector of one end in hardware: twin of golden/rlfd.py."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for

from golden.encoding import Reason
from golden.params import LinkParams, require


class Rlfd(wiring.Component):
    """Loss of signal and token deadline (docs/PROTOCOL.md 5.2).

    Inputs, for the current cycle: ``up`` (the end is UP), ``wellformed`` (a well-formed word
    arrived), ``token_received`` (it was the awaited token), ``arm`` (a token leaves next cycle,
    or the end entangles as follower this cycle: either way the token is due ``rtt`` + margin
    cycles after the next one), ``clear`` (training starts or the end entangles), ``rtt``.
    Outputs: ``suspect`` with its ``reason`` (combinational, this cycle), ``waiting`` (a token is
    due), ``los_run`` and ``remaining`` (registers, for observation).

    ``params``: a :class:`golden.params.LinkParams` (margin, los_cycles; max_rtt and margin
    size ``rtt``, which holds any RTT training can measure, and the countdown).

    Latency: ``suspect`` rises in the deadline cycle itself, as in the golden model. Failure
    behaviour: none of its own.
    """

    def __init__(self, params: LinkParams):
        require(params)
        self._margin = params.margin
        self._los_cycles = params.los_cycles
        super().__init__({
            "up": In(1), "wellformed": In(1), "token_received": In(1), "arm": In(1), "clear": In(1),
            "rtt": In(params.rtt_bits),
            "suspect": Out(1), "reason": Out(Reason), "waiting": Out(1),
            "los_run": Out(bits_for(params.los_cycles)), "remaining": Out(params.deadline_bits),
        })

    def elaborate(self, platform):
        m = Module()
        los_next = Signal.like(self.los_run)
        saturated = self.los_run == self._los_cycles
        m.d.comb += los_next.eq(Mux(self.wellformed, 0, Mux(saturated, self.los_run, self.los_run + 1)))
        overdue = self.waiting & (self.remaining == 0) & ~self.token_received
        with m.If(self.up & (los_next >= self._los_cycles)):
            m.d.comb += [self.suspect.eq(1), self.reason.eq(Reason.LOSS_OF_SIGNAL)]
        with m.Elif(self.up & overdue):
            m.d.comb += [self.suspect.eq(1), self.reason.eq(Reason.TOKEN_OVERDUE)]

        m.d.sync += self.los_run.eq(Mux(self.clear, 0, los_next))
        with m.If(self.arm):
            m.d.sync += [self.waiting.eq(1), self.remaining.eq(self.rtt + self._margin)]
        with m.Elif(self.clear | self.token_received):
            m.d.sync += self.waiting.eq(0)
        with m.Elif(self.waiting & (self.remaining != 0)):
            m.d.sync += self.remaining.eq(self.remaining - 1)
        return m
