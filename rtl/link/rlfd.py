"""Reliable Link Failure Detector of one end in hardware: twin of golden/link/rlfd.py."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for

from golden.encoding import Reason
from golden.params import ASK_LIMIT, TOKEN_DEADLINE_AFTER_SEND, LinkParams, require


class Rlfd(wiring.Component):
    """Loss of signal, token deadline and early token (docs/PROTOCOL.md 5.2), judged in the A stage.

    Inputs, for the current cycle: ``up`` (the end has been UP since the start of the cycle and
    is not restarting: suspicions count only then), ``wellformed`` (the word A applies is
    well-formed; a missing or malformed one counts toward loss of signal), ``token_received``
    (it was the awaited token), ``arm`` (S sends the token, or the end entangles as follower:
    the peer's token is due), ``arm_sent`` (with ``arm``: S sent the token, so its answer has an
    earliest cycle), ``token_in`` (A applies a token word it holds none of), ``clear`` (the
    restart cycle, or entangling), ``rtt``, ``rearm`` (S sends an ask or the last token word
    again: the answer is due a round trip later; ignored when the token came) with ``rearm_ask``
    (it is an ask). Outputs: ``suspect`` with its ``reason`` (combinational, this cycle; loss of
    signal first, then the deadline, then an early token), ``early`` (the token applied now is
    early: the endpoint does not take it), ``may_ask`` (past the earliest cycle, and past the
    last ask's, with fewer than ASK_LIMIT asks in this wait: a lost token word may be asked
    again, PROTOCOL.md 3.1), ``waiting`` (a token is due), ``los_run`` and ``remaining``
    (registers, for observation).

    The countdown starts at RTT + margin + TOKEN_DEADLINE_AFTER_SEND - 1 in the cycle after
    ``arm`` and reaches 0 in the cycle A must have applied the answer (golden ``Rlfd.arm``);
    ``token_received`` in that cycle is still in time. When ``arm`` and ``token_received``
    coincide (a follower entangling on the leader's token) the token wins; ``arm`` wins over
    ``clear``.

    ``params``: a :class:`golden.params.LinkParams` (margin, los_cycles; max_rtt and margin
    size ``rtt``, which holds any RTT training can measure, and the countdown).

    Latency: ``suspect`` is combinational from registers and this cycle's inputs. Failure
    behaviour: none of its own.
    """

    def __init__(self, params: LinkParams):
        require(params)
        self._margin = params.margin
        self._los_cycles = params.los_cycles
        super().__init__(
            {
                "up": In(1),
                "wellformed": In(1),
                "token_received": In(1),
                "arm": In(1),
                "clear": In(1),
                "arm_sent": In(1),
                "rearm": In(1),
                "rearm_ask": In(1),
                "token_in": In(1),
                "present": In(1),
                "rtt": In(params.rtt_bits),
                "suspect": Out(1),
                "reason": Out(Reason),
                "waiting": Out(1),
                "early": Out(1),
                "too_soon": Out(1),
                "may_ask": Out(1),
                "keep": Out(1),
                "los_run": Out(bits_for(params.los_cycles)),
                "remaining": Out(params.deadline_bits),
            }
        )

    def elaborate(self, platform):
        m = Module()
        los_next = Signal.like(self.los_run)
        saturated = self.los_run == self._los_cycles
        m.d.comb += los_next.eq(Mux(self.wellformed, 0, Mux(saturated, self.los_run, self.los_run + 1)))
        deadline = self.waiting & (self.remaining == 0)
        overdue = deadline & ~self.token_received
        with m.If(self.up & (los_next >= self._los_cycles)):
            m.d.comb += [self.suspect.eq(1), self.reason.eq(Reason.LOSS_OF_SIGNAL)]
        with m.Elif(self.up & overdue):
            m.d.comb += [self.suspect.eq(1), self.reason.eq(Reason.TOKEN_OVERDUE)]
        with m.Elif(self.early):
            m.d.comb += [self.suspect.eq(1), self.reason.eq(Reason.TOKEN_EARLY)]
        # A token armed by S's send has an earliest cycle: 2 margin before the deadline, i.e.
        # while remaining > 2 margin. ``too_soon`` holds that comparison, made a cycle ahead
        # on the countdown's next value, so a token applied now meets one register.
        too_soon = Signal(name="too_soon")
        # An ask re-arms the countdown; the next ask waits, as a token's answer does, until the
        # countdown is 2 margin from its end (``ask_wait``). The earliest cycle is then past.
        rearm = self.rearm & self.waiting & ~self.token_received
        ask_wait, asks = Signal(name="ask_wait"), Signal(range(ASK_LIMIT + 1), name="asks")
        far = self.remaining > 2 * self._margin + 1
        # The countdown's first value, rtt + margin + TOKEN_DEADLINE_AFTER_SEND - 1, above 2 margin.
        far_at_arm = self.rtt + (TOKEN_DEADLINE_AFTER_SEND - 1) > self._margin
        with m.If(self.arm):
            m.d.sync += [too_soon.eq(self.arm_sent & far_at_arm), ask_wait.eq(0), asks.eq(0)]
        with m.Elif(rearm):
            m.d.sync += too_soon.eq(0)
            with m.If(self.rearm_ask):
                m.d.sync += [ask_wait.eq(far_at_arm), asks.eq(asks + 1)]
        with m.Elif(self.waiting & (self.remaining != 0)):
            m.d.sync += [too_soon.eq(too_soon & far), ask_wait.eq(ask_wait & far)]
        m.d.comb += self.may_ask.eq(self.waiting & ~too_soon & ~ask_wait & (asks < ASK_LIMIT))
        m.d.comb += [self.early.eq(self.up & self.token_in & self.waiting & too_soon), self.too_soon.eq(too_soon)]
        # A malformed word (present, not well-formed) while waiting: an overdue token was lost
        # to corruption, and the retraining keeps the RTT (golden Rlfd.keeps_rtt).
        garbled = Signal(name="garbled")
        garbled_now = self.waiting & self.present & ~self.wellformed
        with m.If(self.arm):
            m.d.sync += garbled.eq(0)
        with m.Elif(garbled_now):
            m.d.sync += garbled.eq(1)
        # ``keep`` is read only with a suspicion: at the deadline (a token arriving then is no
        # suspicion, so the token's arrival need not gate it) and not for loss of signal; an
        # early token comes while the countdown is far from 0.
        m.d.comb += self.keep.eq(deadline & ~(los_next >= self._los_cycles) & (garbled | garbled_now))

        m.d.sync += self.los_run.eq(Mux(self.clear, 0, los_next))
        with m.If(self.arm | rearm):
            m.d.sync += self.remaining.eq(self.rtt + (self._margin + TOKEN_DEADLINE_AFTER_SEND - 1))
        with m.Elif(self.waiting & (self.remaining != 0)):
            m.d.sync += self.remaining.eq(self.remaining - 1)
        with m.If(self.token_received):
            m.d.sync += self.waiting.eq(0)
        with m.Elif(self.arm):
            m.d.sync += self.waiting.eq(1)
        with m.Elif(self.clear):
            m.d.sync += self.waiting.eq(0)
        return m
