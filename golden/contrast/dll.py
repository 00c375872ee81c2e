"""The contrast link's data link layer: TLP sequence numbers, LCRC, ACK/NAK, the replay buffer,
REPLAY_TIMER and REPLAY_NUM (docs/CONTRAST.md 5).

A TLP is ten words on the wire: STP (sequence number, type, request tag), the eight slices of a
64-byte payload, LCRC (CRC-32 over the STP slice and the payload). ACK and NAK are one word each,
with a CRC-16. The layer sends and receives only while the LTSSM is in L0; its state holds through
Recovery, and DL_Down (the LTSSM entering Detect) discards it, the replay buffer included: those
TLPs are lost, as in PCIe.

Failure behaviour: a corrupted or missing TLP is NAKed (once until a good one arrives) and
replayed from the buffer; a lost ACK is covered by REPLAY_TIMER; the fourth replay in a row
without progress (REPLAY_NUM rollover) directs the LTSSM to Recovery and replays after it.
"""

import zlib
from collections import deque
from dataclasses import dataclass

from golden import encoding as enc
from golden.common.crc import control_crc
from golden.encoding import PcieCode as P
from golden.pcie_params import REPLAY_NUM_ROLLOVER, PcieParams

SEQ_MOD = 1 << enc.PCIE_SEQ_BITS
_SLICE_MASK = (1 << enc.SLICE_BITS) - 1


@dataclass(frozen=True)
class Tlp:
    seq: int
    type: int  # encoding.TlpType
    tag: int  # request tag (REQUEST, COMPLETION); 0 for POSTED
    payload: bytes  # 64 bytes

    def stp_body(self) -> int:
        return self.seq << enc.STP_SEQ_LSB | self.type << enc.STP_TYPE_LSB | self.tag << enc.STP_REQ_TAG_LSB

    def words(self) -> list[tuple[int, int]]:
        """(code, slice) of the ten words, in order."""
        stp = self.stp_body()
        out = [(P.STP, stp)]
        out += [
            (P.TLP_DATA + k, int.from_bytes(self.payload[8 * k : 8 * k + 8], "little"))
            for k in range(enc.SLICES_PER_FRAME)
        ]
        out.append((P.LCRC, lcrc(stp, self.payload)))
        return out


def lcrc(stp_body: int, payload: bytes) -> int:
    return zlib.crc32(stp_body.to_bytes(8, "little") + payload)


def dllp_body(code: int, seq: int) -> int:
    """The slice of an ACK or NAK for ``seq``: the sequence number and its CRC-16."""
    low = seq << enc.DLLP_SEQ_LSB
    tag = enc.pcie_tag(code)
    return control_crc(tag, low) << enc.CTL_CRC_LSB | low


def dllp_valid(code: int, body: int) -> bool:
    low = body & ((1 << enc.CTL_CRC_LSB) - 1)
    return not low >> enc.DLLP_RESERVED_LSB and body >> enc.CTL_CRC_LSB == control_crc(enc.pcie_tag(code), low)


def _before(a: int, b: int) -> bool:
    """Sequence ``a`` precedes ``b`` (modulo SEQ_MOD, within half the space)."""
    return 0 < (b - a) % SEQ_MOD < SEQ_MOD // 2


class DataLinkLayer:
    """One end's data link layer. ``params``: a :class:`golden.pcie_params.PcieParams`."""

    def __init__(self, params: PcieParams):
        self.p = params
        self.replay_timeout = params.cycles("replay_timer")
        self.ack_timeout = params.cycles("ack_latency")
        self.counters = {
            "tlps_sent": 0,
            "tlps_replayed": 0,
            "replays": 0,
            "replay_timeouts": 0,
            "replay_rollovers": 0,
            "naks_sent": 0,
            "naks_received": 0,
            "bad_tlps": 0,
            "duplicate_tlps": 0,
            "bad_dllps": 0,
            "dllps_out_of_range": 0,
            "tlps_discarded": 0,
        }
        self.divisor = 1  # slots per word at the current rate: timers are in symbol times
        self.reset()

    def reset(self) -> list[Tlp]:
        """DL_Down: forget everything; return the TLPs that were waiting for an ACK (lost)."""
        lost = list(getattr(self, "replay", ()))
        self.counters["tlps_discarded"] += len(lost)
        self.replay = deque()  # sent, not yet acknowledged, oldest first
        self.next_seq = 0  # NEXT_TRANSMIT_SEQ
        self.replay_num = 0
        self.replay_timer = None  # cycles left; None = not running
        self.replay_next = None  # index in ``replay`` of the next TLP to replay
        self.sending = deque()  # words of the TLP on the wire now
        self.next_rcv = 0  # NEXT_RCV_SEQ
        self.nak_scheduled = False
        self.dllp_due = None  # P.ACK or P.NAK
        self.unacked_rx = 0  # good TLPs taken since the last ACK
        self.ack_timer = None
        self.rx_words = None  # the TLP being received: [(code, slice), ...]
        return lost

    # --- Transmit -------------------------------------------------------------------------------
    def choose(self, next_tlp) -> tuple[int, int]:
        """The word for this L0 slot. ``next_tlp()`` gives (type, tag, payload) of a new TLP, or
        None; it is asked only when the replay buffer has room."""
        if self.sending:
            word = self.sending.popleft()
            if word[0] == P.LCRC and self.replay_timer is None:
                # REPLAY_TIMER starts when a TLP's last word is on the wire.
                self.replay_timer = self.replay_timeout * self.divisor
            return word
        if self.dllp_due is not None:
            code, self.dllp_due = self.dllp_due, None
            if code == P.NAK:
                self.counters["naks_sent"] += 1
            else:
                self.unacked_rx, self.ack_timer = 0, None
            return code, dllp_body(code, (self.next_rcv - 1) % SEQ_MOD)
        if self.replay_next is not None:
            tlp = self.replay[self.replay_next]
            self.replay_next += 1
            if self.replay_next == len(self.replay):
                self.replay_next = None
            self.counters["tlps_replayed"] += 1
            return self._start(tlp)
        if len(self.replay) < self.p.replay_tlps:
            new = next_tlp()
            if new is not None:
                tlp = Tlp(self.next_seq, *new)
                self.next_seq = (self.next_seq + 1) % SEQ_MOD
                self.replay.append(tlp)
                self.counters["tlps_sent"] += 1
                return self._start(tlp)
        return P.IDL, 0

    def _start(self, tlp: Tlp) -> tuple[int, int]:
        words = tlp.words()
        self.sending.extend(words[1:])
        return words[0]

    def _replay(self) -> bool:
        """Replay every unacknowledged TLP (the timer restarts with the first one's last word);
        True when REPLAY_NUM rolled over (retrain first). Nothing to replay counts nothing."""
        self.replay_timer = None
        if not self.replay:
            return False
        self.counters["replays"] += 1
        self.replay_next = 0
        self.replay_num = (self.replay_num + 1) % REPLAY_NUM_ROLLOVER
        if self.replay_num == 0:
            self.counters["replay_rollovers"] += 1
            return True
        return False

    def _acknowledge(self, seq: int) -> None:
        """Purge the TLPs up to ``seq``; progress resets REPLAY_NUM and restarts the timer."""
        purged = 0
        while self.replay and not _before(seq, self.replay[0].seq):
            self.replay.popleft()
            purged += 1
        if purged:
            self.replay_num = 0
            self.replay_timer = self.replay_timeout * self.divisor if self.replay else None
            if self.replay_next is not None:
                self.replay_next = max(0, self.replay_next - purged)
                if self.replay_next >= len(self.replay):
                    self.replay_next = None

    # --- Receive --------------------------------------------------------------------------------
    def receive(self, code, body) -> tuple[list[Tlp], bool]:
        """A word that arrived in L0 (PAD and SKP removed; ``code`` None = no signal,
        "MALFORMED" = not a word of this link). Returns (TLPs accepted in order, whether
        REPLAY_NUM rolled over)."""
        if self.rx_words is not None:
            expected = P.TLP_DATA + len(self.rx_words) - 1 if len(self.rx_words) <= enc.SLICES_PER_FRAME else P.LCRC
            if code == expected:
                self.rx_words.append((code, body))
                if code == P.LCRC:
                    return self._tlp_complete(), False
                return [], False
            self._bad_tlp()
            if code == "MALFORMED":
                return [], False
        if code == P.STP:
            self.rx_words = [(code, body)]
        elif code in (P.ACK, P.NAK):
            return [], self._dllp(code, body)
        elif code == "MALFORMED" or (isinstance(code, int) and P.TLP_DATA <= code <= P.LCRC):
            self._bad_tlp()  # a TLP whose start was lost
        return [], False

    def _bad_tlp(self) -> None:
        self.rx_words = None
        self.counters["bad_tlps"] += 1
        if not self.nak_scheduled:
            self.nak_scheduled = True
            self.dllp_due = P.NAK

    def _tlp_complete(self) -> list[Tlp]:
        words, self.rx_words = self.rx_words, None
        stp = words[0][1]
        payload = b"".join(w[1].to_bytes(8, "little") for w in words[1:-1])
        if (
            words[-1][1] != lcrc(stp, payload)
            or stp >> enc.STP_RESERVED_LSB
            or (stp >> enc.STP_TYPE_LSB) & 3 > enc.TlpType.COMPLETION
        ):
            self._bad_tlp()
            return []
        seq = (stp >> enc.STP_SEQ_LSB) % SEQ_MOD
        if seq == self.next_rcv:
            self.next_rcv = (self.next_rcv + 1) % SEQ_MOD
            self.nak_scheduled = False
            self.unacked_rx += 1
            if self.ack_timer is None:
                self.ack_timer = self.ack_timeout * self.divisor
            if self.unacked_rx >= self.p.ack_every and self.dllp_due is None:
                self.dllp_due = P.ACK
            tag = (stp >> enc.STP_REQ_TAG_LSB) & ((1 << enc.STP_REQ_TAG_BITS) - 1)
            return [Tlp(seq, (stp >> enc.STP_TYPE_LSB) & 3, tag, payload)]
        if _before(seq, self.next_rcv):
            self.counters["duplicate_tlps"] += 1
            if self.dllp_due is None:
                self.dllp_due = P.ACK
            return []
        self._bad_tlp()  # a sequence number ahead: TLPs were lost
        return []

    def _dllp(self, code, body) -> bool:
        if not dllp_valid(code, body):
            self.counters["bad_dllps"] += 1
            return False
        seq = (body >> enc.DLLP_SEQ_LSB) % SEQ_MOD
        # Valid: the sequence number of a TLP in the buffer, or the one just before the oldest
        # (nothing new acknowledged). Anything else is a DLLP protocol error: ignored.
        oldest = self.replay[0].seq if self.replay else self.next_seq
        if (seq - oldest + 1) % SEQ_MOD > len(self.replay):
            self.counters["dllps_out_of_range"] += 1
            return False
        self._acknowledge(seq)
        if code == P.NAK:
            self.counters["naks_received"] += 1
            return self._replay()
        return False

    # --- Timers ---------------------------------------------------------------------------------
    def tick(self) -> bool:
        """End of an L0 cycle. True when the replay timer's replay rolled REPLAY_NUM over."""
        if self.ack_timer is not None:
            self.ack_timer -= 1
            if self.ack_timer <= 0:
                self.ack_timer = None
                if self.dllp_due is None and self.unacked_rx:
                    self.dllp_due = P.ACK
        if self.replay_timer is not None:
            self.replay_timer -= 1
            if self.replay_timer <= 0:
                self.counters["replay_timeouts"] += 1
                return self._replay()
        return False

    def leave_l0(self) -> None:
        """The LTSSM left L0: a TLP half received or half sent is abandoned. A half-sent one stays
        in the replay buffer; REPLAY_TIMER (held outside L0) resends it after the link is back."""
        self.rx_words = None
        self.sending.clear()
