"""The token plane of one end in hardware: twin of golden/token_plane.py (docs/PROTOCOL.md 3)."""

from amaranth.hdl import Module, Mux, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden import encoding as enc
from golden.encoding import Ctl, RxPhase, TxPhase

from .steps import Steps

_SEQ = enc.AIT_SEQ_BITS
_VALUE = enc.AIT_VALUE_BITS


class TokenPlane(wiring.Component):
    """Both halves of the atomic token transfer, the reply owed, and reconciliation.

    The endpoint presents one cycle's events; the block applies them in the golden order:
    ``entangle_rx`` (reconcile with ``peer_half``, enter the session as follower), ``rx_token``
    (a due token word ``rx_code``/``rx_seq``/``rx_value``, with ``withdraw``), ``restart_rx``
    (leave the session), the user (``ait_in`` value, ``withdraw``, ``ait_out_taken``),
    ``entangle_wd`` (reconcile and enter the session as ``leader`` says) or ``restart_wd``, and
    last, when ``up_final`` and a token is due, the token word of the next cycle
    (``send``, ``tx_code``, ``tx_seq``, ``tx_value``, combinational).

    Outputs (combinational, this cycle): ``due_rx`` (a token is due after ``entangle_rx``; a token
    word is then not expected), ``rx_anomaly`` (an answer or decision about nothing), ``conflict``
    (reconciliation found a transfer the peer cannot account for), ``returned`` (a withdrawn
    value goes back to the user, ``returned_value``), ``half_state`` (READY bits after all steps).
    Registers: ``ait_ready``, ``ait_out_valid``/``ait_out_value`` (the delivered token until the
    user takes it), ``tx_phase``, ``rx_phase``, ``balance`` (-1, 0, +1 as 2's complement).
    Latency: the next token word is chosen in the edge, as the golden ``next_word``.
    """

    def __init__(self):
        super().__init__({
            "leader": In(1), "peer_half": In(enc.CTL_BODY_BITS),
            "entangle_rx": In(1), "entangle_wd": In(1), "restart_rx": In(1), "restart_wd": In(1),
            "rx_token": In(1), "rx_code": In(enc.CONTROL_CODE_BITS), "rx_seq": In(_SEQ), "rx_value": In(_VALUE),
            "withdraw": In(1), "ait_in_valid": In(1), "ait_in_value": In(_VALUE), "ait_out_taken": In(1),
            "up_final": In(1),
            "due_rx": Out(1), "rx_anomaly": Out(1), "conflict": Out(1),
            "returned": Out(1), "returned_value": Out(_VALUE), "half_state": Out(enc.READY_CONFIRMED_LSB),
            "send": Out(1), "tx_code": Out(enc.CONTROL_CODE_BITS), "tx_seq": Out(_SEQ), "tx_value": Out(_VALUE),
            "ait_ready": Out(1), "ait_out_valid": Out(1), "ait_out_value": Out(_VALUE),
            "tx_phase": Out(2), "rx_phase": Out(2), "balance": Out(signed(2)),
        })

    def elaborate(self, platform):
        m = Module()
        regs = {
            "tx_phase": self.tx_phase, "tx_seq": Signal(_SEQ), "tx_value": Signal(_VALUE), "tx_has": Signal(),
            "rx_phase": self.rx_phase, "rx_seq": Signal(_SEQ), "rx_value": Signal(_VALUE),
            "out_valid": self.ait_out_valid, "out_value": self.ait_out_value,
            "due": Signal(), "reply": Signal(), "reply_code": Signal(enc.CONTROL_CODE_BITS),
            "reply_seq": Signal(_SEQ), "seen": Signal(),
        }
        s = Steps(m, regs, "tok")
        m.d.comb += self.ait_ready.eq(~regs["tx_has"])

        def deliver(n, cur):
            m.d.comb += [n["rx_phase"].eq(RxPhase.DELIVERED), n["out_valid"].eq(1), n["out_value"].eq(cur["rx_value"])]

        def reconcile_and_enter(cur, leader):
            peer = self.peer_half
            p_tx_phase = peer[enc.READY_TX_PHASE_LSB:enc.READY_TX_PHASE_LSB + 2]
            p_tx_seq = peer[enc.READY_TX_SEQ_LSB:enc.READY_TX_SEQ_LSB + _SEQ]
            p_rx_phase = peer[enc.READY_RX_PHASE_LSB:enc.READY_RX_PHASE_LSB + 2]
            p_rx_seq = peer[enc.READY_RX_SEQ_LSB:enc.READY_RX_SEQ_LSB + _SEQ]
            n = s.now
            with m.If(cur["tx_phase"] == TxPhase.OFFERED):
                # Accepted or delivered at the peer: it reconciled this transfer, maybe in a
                # round this end missed.
                with m.If((p_rx_seq == cur["tx_seq"])
                          & ((p_rx_phase == RxPhase.ACCEPTED) | (p_rx_phase == RxPhase.DELIVERED))):
                    m.d.comb += [n["tx_phase"].eq(TxPhase.COMMITTED), n["tx_has"].eq(0)]
                with m.Else():
                    m.d.comb += n["tx_phase"].eq(TxPhase.NONE)
            with m.If(cur["rx_phase"] == RxPhase.ACCEPTED):
                same = p_tx_seq == cur["rx_seq"]
                with m.If(same & ((p_tx_phase == TxPhase.OFFERED) | (p_tx_phase == TxPhase.COMMITTED))):
                    deliver(n, cur)
                with m.Else():
                    m.d.comb += [self.conflict.eq(~(same & (p_tx_phase == TxPhase.RETRACTED))),
                                 n["rx_phase"].eq(RxPhase.DROPPED)]
            m.d.comb += [n["due"].eq(leader), n["reply"].eq(0)]

        def leave(n):
            m.d.comb += [n["due"].eq(0), n["reply"].eq(0), n["seen"].eq(0)]

        with s.step("entangle_rx", self.entangle_rx) as cur:
            reconcile_and_enter(cur, 0)
        m.d.comb += self.due_rx.eq(s.now["due"])

        with s.step("receive", self.rx_token) as cur:
            n = s.now
            seq = self.rx_seq
            m.d.comb += [n["seen"].eq(1), n["due"].eq(1), n["reply"].eq(0)]
            with m.Switch(self.rx_code):
                with m.Case(Ctl.AIT_OFFER):
                    m.d.comb += [n["reply"].eq(1), n["reply_seq"].eq(seq)]
                    with m.If((cur["rx_phase"] != RxPhase.ACCEPTED) & ~cur["out_valid"]):
                        m.d.comb += [n["rx_phase"].eq(RxPhase.ACCEPTED), n["rx_seq"].eq(seq),
                                     n["rx_value"].eq(self.rx_value), n["reply_code"].eq(Ctl.AIT_ACCEPT)]
                    with m.Else():
                        m.d.comb += n["reply_code"].eq(Ctl.AIT_REJECT)
                with m.Case(Ctl.AIT_ACCEPT, Ctl.AIT_REJECT):
                    with m.If((cur["tx_phase"] != TxPhase.OFFERED) | (seq != cur["tx_seq"])):
                        m.d.comb += self.rx_anomaly.eq(1)
                    with m.Elif(self.rx_code == Ctl.AIT_REJECT):
                        m.d.comb += n["tx_phase"].eq(TxPhase.NONE)
                    with m.Elif(self.withdraw):
                        m.d.comb += [n["tx_phase"].eq(TxPhase.RETRACTED), n["tx_has"].eq(0),
                                     self.returned.eq(1), self.returned_value.eq(cur["tx_value"]),
                                     n["reply"].eq(1), n["reply_code"].eq(Ctl.AIT_RETRACT), n["reply_seq"].eq(seq)]
                    with m.Else():
                        m.d.comb += [n["tx_phase"].eq(TxPhase.COMMITTED), n["tx_has"].eq(0),
                                     n["reply"].eq(1), n["reply_code"].eq(Ctl.AIT_COMMIT), n["reply_seq"].eq(seq)]
                with m.Case(Ctl.AIT_COMMIT, Ctl.AIT_RETRACT):
                    with m.If((cur["rx_phase"] != RxPhase.ACCEPTED) | (seq != cur["rx_seq"])):
                        m.d.comb += self.rx_anomaly.eq(1)
                    with m.Elif(self.rx_code == Ctl.AIT_COMMIT):
                        deliver(n, cur)
                    with m.Else():
                        m.d.comb += n["rx_phase"].eq(RxPhase.DROPPED)
            with m.If(self.rx_anomaly):
                # The golden receive returns before changing more; the end then restarts.
                m.d.comb += [n[k].eq(cur[k]) for k in n if k != "seen"]

        with s.step("restart_rx", self.restart_rx):
            leave(s.now)

        with s.step("user", 1) as cur:
            n = s.now
            with m.If(self.ait_in_valid):
                m.d.comb += [n["tx_value"].eq(self.ait_in_value), n["tx_has"].eq(1)]
            has = cur["tx_has"] | self.ait_in_valid
            value = Mux(self.ait_in_valid, self.ait_in_value, cur["tx_value"])
            with m.If(self.withdraw & has & (cur["tx_phase"] != TxPhase.OFFERED)):
                m.d.comb += [n["tx_has"].eq(0), self.returned.eq(1), self.returned_value.eq(value)]
            with m.If(self.ait_out_taken):
                m.d.comb += n["out_valid"].eq(0)

        with s.step("entangle_wd", self.entangle_wd) as cur:
            reconcile_and_enter(cur, self.leader)
        with s.step("restart_wd", self.restart_wd):
            leave(s.now)

        with s.step("send", self.up_final & s.now["due"]) as cur:
            n = s.now
            m.d.comb += [self.send.eq(1), n["due"].eq(0)]
            with m.If(cur["reply"]):
                m.d.comb += [self.tx_code.eq(cur["reply_code"]), self.tx_seq.eq(cur["reply_seq"])]
            with m.Elif(cur["tx_has"] & (cur["tx_phase"] != TxPhase.OFFERED) & cur["seen"]):
                # The sequence moves on only after a completed transfer (golden next_word).
                done = (cur["tx_phase"] == TxPhase.COMMITTED) | (cur["tx_phase"] == TxPhase.RETRACTED)
                seq = Mux(done, cur["tx_seq"] + 1, cur["tx_seq"])[:_SEQ]
                m.d.comb += [n["tx_seq"].eq(seq), n["tx_phase"].eq(TxPhase.OFFERED),
                             self.tx_code.eq(Ctl.AIT_OFFER), self.tx_seq.eq(seq), self.tx_value.eq(cur["tx_value"])]
            with m.Else():
                m.d.comb += self.tx_code.eq(Mux(self.leader, Ctl.TICK, Ctl.TOCK))

        f = s.now
        m.d.comb += self.half_state.eq(f["tx_phase"] << enc.READY_TX_PHASE_LSB | f["tx_seq"] << enc.READY_TX_SEQ_LSB
                                       | f["rx_phase"] << enc.READY_RX_PHASE_LSB | f["rx_seq"] << enc.READY_RX_SEQ_LSB)
        offered, accepted = self.tx_phase == TxPhase.OFFERED, self.rx_phase == RxPhase.ACCEPTED
        m.d.comb += self.balance.eq(Mux(offered & ~accepted, -1, Mux(accepted & ~offered, 1, 0)))
        s.commit()
        return m
