"""The token plane of one end in hardware: twin of golden/link/token_plane.py (docs/PROTOCOL.md 3)."""

from amaranth.hdl import Cat, Module, Mux, Signal, signed
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from golden import encoding as enc
from golden.encoding import Ctl, RxPhase, TxPhase
from rtl.common import fields

_SEQ = enc.AIT_SEQ_BITS
_VALUE = enc.AIT_VALUE_BITS


class TokenKind(data.Struct):
    """Which token word a received word is, one bit per AIT code (none set: a plain token);
    decoded by the endpoint's stage C so the token plane starts from single bits."""

    offer: 1
    accept: 1
    reject: 1
    commit: 1
    retract: 1

    @staticmethod
    def of(code) -> dict:
        """The field values for a received ``code`` (an Amaranth value or an int)."""
        return {
            "offer": code == Ctl.AIT_OFFER,
            "accept": code == Ctl.AIT_ACCEPT,
            "reject": code == Ctl.AIT_REJECT,
            "commit": code == Ctl.AIT_COMMIT,
            "retract": code == Ctl.AIT_RETRACT,
        }


class TokenPlane(wiring.Component):
    """Both halves of the atomic token transfer, the reply owed, and reconciliation.

    A stage (this cycle's events, all judged on the registers as they were at the start of the
    cycle, PROTOCOL.md 2.2): ``rx_token`` (a due token word applied: ``rx_kind``, a
    :class:`TokenKind`, with ``rx_seq``/``rx_value``, and the user's ``withdraw`` level), ``entangle``
    (reconcile with ``peer_half``
    and enter the session; the ``leader`` holds the first token), ``settle`` (a settle is due outside
    UP, PROTOCOL.md 10.6: reconcile with ``settle_half`` unless the end entangles in the same
    cycle, whose reconciliation with ``peer_half`` stands for it), ``restart`` (the restart
    cycle: leave the session), ``c_seq`` (stage C: the sequence number of the word A applies in
    the next cycle, compared a cycle ahead), the user (``ait_in_valid``/``ait_in_value``, ``withdraw``,
    ``ait_out_taken``). S stage: ``s_code``, ``s_seq``, ``s_value``, ``s_offer`` (the token
    word S would send now, from the registers) and ``send`` (S sends it this cycle).

    Outputs: ``due`` (the end holds the token), ``due_next`` (combinational: the value ``due``
    takes at the edge unless the end restarts, for a look-ahead register), ``rx_anomaly`` (combinational: an answer or
    decision about nothing; the word then changes nothing but ``seen``), ``conflict``
    (combinational: reconciliation found a transfer the peer cannot account for),
    ``returned``/``returned_value`` (combinational: a value goes back to the user this cycle;
    the value means nothing without ``returned``),
    ``half_state`` (READY bits, from the registers), ``ait_ready``,
    ``ait_out_valid``/``ait_out_value`` (the delivered value until the user takes it; the value
    means nothing while not valid),
    ``tx_phase``, ``rx_phase``, ``balance`` (-1, 0, +1).

    The events of one cycle never change the same register in conflicting ways (the golden
    step applies them in sequence): an answer or a reconciliation of my transfer needs it
    offered, a hand-in or a withdrawal needs it not offered, and S offers only what was handed
    in before the cycle and sends only while A cannot take a token; a withdrawal in the cycle S
    offers the value is held back (``s_offer``). Latency: registers change at the edge; S's
    choice is combinational from them.
    """

    def __init__(self):
        super().__init__(
            {
                "leader": In(1),
                "peer_half": In(enc.CTL_BODY_BITS),
                "entangle": In(1),
                "settle": In(1),
                "settle_half": In(enc.CTL_BODY_BITS),
                "restart": In(1),
                "rx_token": In(1),
                "rx_kind": In(TokenKind),
                "rx_seq": In(_SEQ),
                "rx_value": In(_VALUE),
                "c_seq": In(_SEQ),
                "withdraw": In(1),
                "ait_in_valid": In(1),
                "ait_in_value": In(_VALUE),
                "ait_out_taken": In(1),
                "send": In(1),
                "due": Out(1),
                "due_next": Out(1),
                "rx_anomaly": Out(1),
                "conflict": Out(1),
                "returned": Out(1),
                "returned_value": Out(_VALUE),
                "half_state": Out(enc.READY_BODY.lsb("counts")),
                "s_code": Out(enc.CONTROL_CODE_BITS),
                "s_seq": Out(_SEQ),
                "s_value": Out(_VALUE),
                "s_offer": Out(1),
                "ait_ready": Out(1),
                "ait_out_valid": Out(1),
                "ait_out_value": Out(_VALUE),
                "tx_phase": Out(TxPhase),
                "rx_phase": Out(RxPhase),
                "balance": Out(signed(2)),
            }
        )

    def elaborate(self, platform):
        m = Module()
        tx_seq, tx_value, tx_has = Signal(_SEQ, name="tx_seq"), Signal(_VALUE, name="tx_value"), Signal(name="tx_has")
        rx_seq, rx_value = Signal(_SEQ, name="rx_seq"), Signal(_VALUE, name="rx_value")
        reply, reply_code, reply_seq, seen = (
            Signal(name="reply"),
            Signal(enc.CONTROL_CODE_BITS, name="reply_code"),
            Signal(_SEQ, name="reply_seq"),
            Signal(name="seen"),
        )
        tx_phase, rx_phase = self.tx_phase, self.rx_phase
        m.d.comb += self.ait_ready.eq(~tx_has)

        # --- S: the token word the end would send now ---------------------------------------
        completed = (tx_phase == TxPhase.COMMITTED) | (tx_phase == TxPhase.RETRACTED)
        # A new transfer waits for a token from the peer in this session (golden choose).
        can_offer = tx_has & (tx_phase != TxPhase.OFFERED) & seen
        with m.If(reply):
            m.d.comb += [self.s_code.eq(reply_code), self.s_seq.eq(reply_seq)]
        with m.Elif(can_offer):
            m.d.comb += [
                self.s_code.eq(Ctl.AIT_OFFER),
                self.s_seq.eq(Mux(completed, tx_seq + 1, tx_seq)),
                self.s_value.eq(tx_value),
                self.s_offer.eq(1),
            ]
        with m.Else():
            m.d.comb += self.s_code.eq(Mux(self.leader, Ctl.TICK, Ctl.TOCK))
        offer_sent = self.send & self.s_offer

        # --- A: the user's hand-in and withdrawal ---------------------------------------------
        has = tx_has | self.ait_in_valid
        value = Mux(self.ait_in_valid, self.ait_in_value, tx_value)
        give_back = self.withdraw & has & (tx_phase != TxPhase.OFFERED) & ~offer_sent
        with m.If(self.ait_in_valid):
            m.d.sync += [tx_value.eq(self.ait_in_value), tx_has.eq(1)]
        # Whatever goes back is this value: a hand-in comes only while nothing is held, so an
        # accepted offer's withdrawal returns tx_value too. The value so waits for no decision.
        m.d.comb += self.returned_value.eq(value)
        with m.If(give_back):
            m.d.comb += self.returned.eq(1)
            m.d.sync += tx_has.eq(0)

        # --- A: a due token word --------------------------------------------------------------
        kind, seq = self.rx_kind, self.rx_seq
        answer = kind.accept | kind.reject
        decision = kind.commit | kind.retract
        # The word's sequence number is compared a cycle ahead (stage C, ``c_seq``) with each
        # value tx_seq and rx_seq can take at this edge, into registers; A selects by whether
        # an offer left (tx_seq) or one was accepted (rx_seq) in the previous cycle.
        same = {name: Signal(name=f"seq_is_{name}") for name in ("tx_held", "tx_offered", "rx_held", "rx_accepted")}
        offered_q, accepted_q = Signal(name="offer_left"), Signal(name="offer_accepted")
        m.d.sync += [
            same["tx_held"].eq(self.c_seq == tx_seq),
            same["tx_offered"].eq(self.c_seq == self.s_seq),
            same["rx_held"].eq(self.c_seq == rx_seq),
            same["rx_accepted"].eq(self.c_seq == seq),
        ]
        seq_is_tx = Mux(offered_q, same["tx_offered"], same["tx_held"])
        seq_is_rx = Mux(accepted_q, same["rx_accepted"], same["rx_held"])
        m.d.comb += self.rx_anomaly.eq(
            self.rx_token
            & (
                (answer & ((tx_phase != TxPhase.OFFERED) | ~seq_is_tx))
                | (decision & ((rx_phase != RxPhase.ACCEPTED) | ~seq_is_rx))
            )
        )
        delivering, accepting = Signal(), Signal()
        m.d.sync += [offered_q.eq(offer_sent), accepted_q.eq(accepting)]
        with m.If(self.rx_token):
            m.d.sync += seen.eq(1)
        taken_token = self.rx_token & ~self.rx_anomaly
        with m.If(taken_token):
            m.d.sync += reply.eq(0)
            with m.If(kind.offer):
                m.d.sync += [reply.eq(1), reply_seq.eq(seq)]
                with m.If((rx_phase != RxPhase.ACCEPTED) & ~self.ait_out_valid):
                    m.d.comb += accepting.eq(1)
                    m.d.sync += [
                        rx_phase.eq(RxPhase.ACCEPTED),
                        rx_seq.eq(seq),
                        rx_value.eq(self.rx_value),
                        reply_code.eq(Ctl.AIT_ACCEPT),
                    ]
                with m.Else():
                    m.d.sync += reply_code.eq(Ctl.AIT_REJECT)
            with m.If(kind.reject):
                m.d.sync += tx_phase.eq(TxPhase.NONE)
            with m.If(kind.accept):
                m.d.sync += [tx_has.eq(0), reply.eq(1), reply_seq.eq(seq)]
                with m.If(self.withdraw):
                    m.d.comb += self.returned.eq(1)
                    m.d.sync += [tx_phase.eq(TxPhase.RETRACTED), reply_code.eq(Ctl.AIT_RETRACT)]
                with m.Else():
                    m.d.sync += [tx_phase.eq(TxPhase.COMMITTED), reply_code.eq(Ctl.AIT_COMMIT)]
            with m.If(kind.commit):
                m.d.comb += delivering.eq(1)
            with m.If(kind.retract):
                m.d.sync += rx_phase.eq(RxPhase.DROPPED)

        # --- A: the user takes the delivered value ----------------------------------------------
        with m.If(self.ait_out_taken):
            m.d.sync += self.ait_out_valid.eq(0)

        # --- A: reconciliation (PROTOCOL.md 3.5) --------------------------------------------------
        # Settling (PROTOCOL.md 10.6) reconciles the same way with the half-state it is given,
        # outside UP (no reply can be owed there: the restart dropped it).
        # Each half-state is judged on its own, from registers, and the entangle decision only
        # picks the judgement: a 1-bit select, not 64 bits before the compares. ``settle`` comes
        # from registers, not after the entangle decision, so that decision reaches the phases
        # through no gate of the settle's.
        def judged(half):
            peer = fields.view(enc.READY_BODY, half)
            # Accepted or delivered at the peer: it reconciled this transfer, maybe in a round
            # this end missed.
            took = (peer.rx_seq == tx_seq) & (
                (peer.rx_phase == RxPhase.ACCEPTED) | (peer.rx_phase == RxPhase.DELIVERED)
            )
            same = peer.tx_seq == rx_seq
            sent = same & ((peer.tx_phase == TxPhase.OFFERED) | (peer.tx_phase == TxPhase.COMMITTED))
            retracted = same & (peer.tx_phase == TxPhase.RETRACTED)
            return Cat(took, sent, retracted)

        judgement = Mux(self.entangle, judged(self.peer_half), judged(self.settle_half))
        peer_took, peer_sent, peer_retracted = judgement[0], judgement[1], judgement[2]
        with m.If(self.entangle):
            m.d.sync += reply.eq(0)
        with m.If(self.entangle | self.settle):
            with m.If(tx_phase == TxPhase.OFFERED):
                with m.If(peer_took):
                    m.d.sync += [tx_phase.eq(TxPhase.COMMITTED), tx_has.eq(0)]
                with m.Else():
                    m.d.sync += tx_phase.eq(TxPhase.NONE)
            with m.If(rx_phase == RxPhase.ACCEPTED):
                with m.If(peer_sent):
                    m.d.comb += delivering.eq(1)
                with m.Else():
                    m.d.comb += self.conflict.eq(~peer_retracted)
                    m.d.sync += rx_phase.eq(RxPhase.DROPPED)
        with m.If(delivering):
            m.d.sync += [rx_phase.eq(RxPhase.DELIVERED), self.ait_out_valid.eq(1)]
        # Only an accepted value can be delivered, and none is accepted while one waits for the
        # user, so the output follows rx_value until it is valid: a register's enable, not the
        # decision to deliver.
        with m.If(~self.ait_out_valid):
            m.d.sync += self.ait_out_value.eq(rx_value)

        # --- who holds the token: entangling (the leader), a token taken (also by a follower
        # entangling on it), the token leaving (S), a restart -------------------------------------
        with m.If(self.entangle):
            m.d.sync += self.due.eq(self.leader)
        with m.If(taken_token):
            m.d.sync += self.due.eq(1)
        with m.If(self.send):
            m.d.sync += [self.due.eq(0), reply.eq(0)]
            with m.If(self.s_offer):
                m.d.sync += [tx_seq.eq(self.s_seq), tx_phase.eq(TxPhase.OFFERED)]
        with m.If(self.restart):
            m.d.sync += [self.due.eq(0), reply.eq(0), seen.eq(0)]
        # The same choices as above, the restart left out.
        m.d.comb += self.due_next.eq(~self.send & (taken_token | Mux(self.entangle, self.leader, self.due)))

        # The READY body's fields below the counts: the endpoint adds the counts.
        m.d.comb += self.half_state.eq(
            fields.pack(enc.READY_BODY, tx_phase=tx_phase, tx_seq=tx_seq, rx_phase=rx_phase, rx_seq=rx_seq)
        )
        offered, accepted = tx_phase == TxPhase.OFFERED, rx_phase == RxPhase.ACCEPTED
        m.d.comb += self.balance.eq(Mux(offered & ~accepted, -1, Mux(accepted & ~offered, 1, 0)))
        return m
