"""The token plane of one end: the circulating token and the atomic token transfer
(docs/PROTOCOL.md 3). Twin of rtl/link/token_plane.py.

The endpoint decides whether a token word may be accepted at all (it must be due, and not
the end's own plain kind) and handles the commit counts it carries; this module owns the
transfer: both halves (sender and receiver), their sequences, the reply the next token word
carries, and reconciliation of the halves at entangle.

Pipeline (PROTOCOL.md 2.2): :meth:`user_give`, :meth:`receive`, :meth:`user_take` and
:meth:`reconcile` are the A stage; :meth:`choose` is S's decision, made from the state at the
start of the cycle without changing it, and :meth:`commit` makes it after A.
"""

from dataclasses import dataclass

from golden import encoding as enc
from golden.encoding import Ctl, RxPhase, TxPhase

_SEQ_MOD = 1 << enc.AIT_SEQ_BITS


@dataclass(frozen=True)
class TokenChoice:
    """The token word S chose: code, AIT sequence and value; ``offer``: it starts a transfer."""

    code: Ctl
    seq: int = 0
    value: int = 0
    offer: bool = False


class TokenPlane:
    def __init__(self):
        self.tx_phase, self.tx_seq, self.tx_value = TxPhase.NONE, 0, None
        self.rx_phase, self.rx_seq, self.rx_value = RxPhase.NONE, 0, None
        self.ait_out = None  # delivered value the user has not taken yet
        self.leave_session()

    # --- sessions ---------------------------------------------------------------------------

    def leave_session(self):
        """Training starts: nothing is due; the half-states stay for reconciliation."""
        self.due, self.reply, self.peer_token_seen = False, None, False

    def enter_session(self, leader: bool):
        """Entangled: the leader holds the first token."""
        self.due, self.reply = leader, None

    @property
    def balance(self) -> int:
        return (-1 if self.tx_phase == TxPhase.OFFERED else 0) + (1 if self.rx_phase == RxPhase.ACCEPTED else 0)

    def half_state(self) -> int:
        """The AIT bits of the READY body."""
        return enc.READY_BODY.pack(
            tx_phase=self.tx_phase, tx_seq=self.tx_seq, rx_phase=self.rx_phase, rx_seq=self.rx_seq
        )

    def _deliver(self):
        self.rx_phase = RxPhase.DELIVERED
        self.ait_out, self.rx_value = self.rx_value, None
        return self.ait_out

    def reconcile(self, peer) -> tuple:
        """PROTOCOL.md 3.5 from the peer's READY body: (value delivered now or None, conflict)."""
        p_tx_phase = TxPhase(enc.READY_BODY.get(peer, "tx_phase"))
        p_tx_seq = enc.READY_BODY.get(peer, "tx_seq")
        p_rx_phase = RxPhase(enc.READY_BODY.get(peer, "rx_phase"))
        p_rx_seq = enc.READY_BODY.get(peer, "rx_seq")
        # My transfer to the peer.
        if self.tx_phase == TxPhase.OFFERED:
            # DELIVERED: the peer reconciled this transfer in an earlier round that I missed.
            if p_rx_seq == self.tx_seq and p_rx_phase in (RxPhase.ACCEPTED, RxPhase.DELIVERED):
                self.tx_phase, self.tx_value = TxPhase.COMMITTED, None
            else:
                self.tx_phase = TxPhase.NONE  # the token stays here; it will be offered again
        # The peer's transfer to me.
        delivered, conflict = None, False
        if self.rx_phase == RxPhase.ACCEPTED:
            if p_tx_seq == self.rx_seq and p_tx_phase in (TxPhase.OFFERED, TxPhase.COMMITTED):
                delivered = self._deliver()
            else:
                conflict = not (p_tx_seq == self.rx_seq and p_tx_phase == TxPhase.RETRACTED)
                self.rx_phase, self.rx_value = RxPhase.DROPPED, None
        return delivered, conflict

    # --- the token words ----------------------------------------------------------------------

    def receive(self, code, seq, value, withdraw) -> tuple:
        """A due token word from the peer: (anomaly or None, value delivered, value returned)."""
        self.peer_token_seen = True
        reply, delivered, returned = None, None, None
        if code == Ctl.AIT_OFFER:
            if self.rx_phase != RxPhase.ACCEPTED and self.ait_out is None:
                self.rx_phase, self.rx_seq, self.rx_value = RxPhase.ACCEPTED, seq, value
                reply = (Ctl.AIT_ACCEPT, seq)
            else:
                reply = (Ctl.AIT_REJECT, seq)
        elif code in (Ctl.AIT_ACCEPT, Ctl.AIT_REJECT):
            if self.tx_phase != TxPhase.OFFERED or seq != self.tx_seq:
                return "AIT answer to no offer", None, None
            if code == Ctl.AIT_REJECT:
                self.tx_phase = TxPhase.NONE
            elif withdraw:
                self.tx_phase = TxPhase.RETRACTED
                returned, self.tx_value = self.tx_value, None
                reply = (Ctl.AIT_RETRACT, seq)
            else:
                self.tx_phase, self.tx_value = TxPhase.COMMITTED, None
                reply = (Ctl.AIT_COMMIT, seq)
        elif code in (Ctl.AIT_COMMIT, Ctl.AIT_RETRACT):
            if self.rx_phase != RxPhase.ACCEPTED or seq != self.rx_seq:
                return "AIT decision on nothing accepted", None, None
            if code == Ctl.AIT_COMMIT:
                delivered = self._deliver()
            else:
                self.rx_phase, self.rx_value = RxPhase.DROPPED, None
        self.due, self.reply = True, reply
        return None, delivered, returned

    def choose(self, leader: bool) -> TokenChoice:
        """The token word S sends now, if the end holds the token; changes nothing."""
        if self.reply is not None:
            code, seq = self.reply
            return TokenChoice(code, seq)
        # A new transfer waits for a token from the peer in this session: that proves the peer
        # reconciled against the same half-states, so the outcome of my last transfer is known
        # to both ends before my half-state forgets it.
        if self.tx_value is not None and self.tx_phase != TxPhase.OFFERED and self.peer_token_seen:
            # The sequence moves on only after a completed transfer; a retry after a reject or
            # an aborted reconciliation reuses it. Sender and receiver sequences then differ by
            # at most one, so a 4-bit sequence can never alias a transfer long past.
            seq = self.tx_seq
            if self.tx_phase in (TxPhase.COMMITTED, TxPhase.RETRACTED):
                seq = (seq + 1) % _SEQ_MOD
            return TokenChoice(Ctl.AIT_OFFER, seq, self.tx_value, offer=True)
        return TokenChoice(Ctl.TICK if leader else Ctl.TOCK)

    def commit(self, choice: TokenChoice):
        """S sent ``choice``: the token has left."""
        self.due, self.reply = False, None
        if choice.offer:
            self.tx_seq, self.tx_phase = choice.seq, TxPhase.OFFERED

    # --- the user ------------------------------------------------------------------------------

    @property
    def ait_ready(self) -> bool:
        return self.tx_value is None

    def user_give(self, ait, withdraw, offering: bool):
        """This cycle's hand-in and withdrawal, judged on the state at the start of the cycle:
        a value that is offered, or that S offers in this cycle, is not given back here (the
        withdrawal then acts through the retract move). Returns the value given back, or None."""
        if ait is not None:
            self.tx_value = ait
        if withdraw and self.tx_value is not None and self.tx_phase != TxPhase.OFFERED and not offering:
            returned, self.tx_value = self.tx_value, None
            return returned
        return None

    def user_take(self, taken: bool):
        """The user takes the value that was delivered before this cycle (``taken`` is only
        meaningful then); this cycle's word saw it still held."""
        if taken:
            self.ait_out = None
