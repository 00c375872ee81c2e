"""Reliable Link Failure Detector of one end in hardware: twin of golden/rlfd.py."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import enum, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for

from .params import check_int


class Reason(enum.Enum, shape=2):
    NONE = 0
    LOSS_OF_SIGNAL = 1
    TOKEN_OVERDUE = 2
    REMOTE_FAULT = 3        # decoded by the endpoint: the peer's HELLO carries the fault flag


class Rlfd(wiring.Component):
    """Loss of signal and token deadline (docs/PROTOCOL.md 5.2).

    Inputs, for the current cycle: ``up`` (the end is UP), ``wellformed`` (a well-formed word
    arrived), ``token_received`` (it was the awaited token), ``arm`` (a token leaves next cycle,
    or the end entangles as follower this cycle: either way the token is due ``rtt`` + margin
    cycles after the next one), ``clear`` (training starts or the end entangles), ``rtt``.
    Outputs: ``suspect`` with its ``reason`` (combinational, this cycle), ``waiting`` (a token is
    due), ``los_run`` and ``remaining`` (registers, for observation).

    Latency: ``suspect`` rises in the deadline cycle itself, as in the golden model. Failure
    behaviour: none of its own; ``rtt`` beyond ``max_rtt`` is clamped by the counter width.
    """

    def __init__(self, *, margin=8, los_cycles=8, max_rtt=4096):
        for name, value, low in (("margin", margin, 1), ("los_cycles", los_cycles, 2), ("max_rtt", max_rtt, 3)):
            check_int(name, value, low)
        self._margin = margin
        self._los_cycles = los_cycles
        width = bits_for(max_rtt + margin)
        super().__init__({
            "up": In(1), "wellformed": In(1), "token_received": In(1), "arm": In(1), "clear": In(1),
            "rtt": In(bits_for(max_rtt)),
            "suspect": Out(1), "reason": Out(Reason), "waiting": Out(1),
            "los_run": Out(bits_for(los_cycles)), "remaining": Out(width),
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
