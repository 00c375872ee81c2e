"""The data plane of one end: preemptible frames with Perfect Information Feedback
(docs/PROTOCOL.md 4). Twin of rtl/framer.py.

Sender: replay buffers per class (frames until their digest matches), the window, the send
pointers and what the peer must return, in order. Receiver: slice assembly per class, pending
frames until committed, and the ECHO and DIGEST words owed to the peer. The endpoint routes
words here, carries the commit counts on its token words and reports anomalies.
"""

from collections import deque
from dataclasses import dataclass

from . import encoding as enc
from .control import control_word
from .crc import frame_crc
from .encoding import Ctl, Kind
from .slice import DECODE_TABLE, data_tag, echo_tag, frame_to_slices, make_word, slices_to_frame


@dataclass
class _TxFrame:
    seq: int
    slices: list
    crc: int


class Framer:
    """``params``: the endpoint's :class:`golden.params.LinkParams` (num_classes, window,
    echo_mode). ``counters``: the endpoint's counters (frames and slices sent are counted there)."""

    def __init__(self, params, counters):
        self.num_classes, self.window, self.full = params.num_classes, params.window, params.full_echo
        self.counters = counters
        C = params.num_classes
        self.replay = [deque() for _ in range(C)]   # unconfirmed frames, oldest first
        self.next_seq = [0] * C                     # sequence of the next frame from the user
        self.confirmed = [0] * C                    # frames whose digest matched
        self.acked = [0] * C                        # commit counts the peer is known to have applied
        self.rx_count = [0] * C                     # frames received complete (next rx sequence)
        self.delivered = [0] * C
        self.pending = [deque() for _ in range(C)]  # (seq, bytes) received, not yet committed
        self.leave_session()

    def leave_session(self):
        """Training starts: words in flight are forgotten; unconfirmed frames will be resent."""
        C = self.num_classes
        self.reverse = deque()          # ECHO / DIGEST words owed to the peer
        self.expect = deque()           # what the peer must echo, in order
        self.rx_index = [0] * C
        self.rx_slices = [[] for _ in range(C)]
        self.send_frame = [0] * C       # index into replay of the frame being sent
        self.send_slice = [0] * C
        self.rr_echo_turn = False
        self.last_commit_sent = list(self.confirmed)

    # --- the user --------------------------------------------------------------------------

    def frame_ready(self, c) -> bool:
        return len(self.replay[c]) < self.window

    def hand_in(self, c, frame):
        self.replay[c].append(_TxFrame(self.next_seq[c], frame_to_slices(frame), frame_crc(frame)))
        self.next_seq[c] += 1

    def _deliver(self, c, n, out):
        for _ in range(n):
            _, frame = self.pending[c].popleft()
            self.delivered[c] += 1
            out.append((c, frame))

    # --- counts on token and READY words --------------------------------------------------

    def counts_body(self, lsb) -> int:
        """The confirmed count of every class, 6 bits each from ``lsb``."""
        body = 0
        for c in range(self.num_classes):
            body |= (self.confirmed[c] % enc.COUNT_MOD) << (lsb + enc.COUNT_BITS * c)
        return body

    def token_sent(self):
        self.last_commit_sent = list(self.confirmed)

    def token_received(self, body) -> tuple:
        """The peer's token: its commit counts. Returns (anomaly or None, frames delivered)."""
        # The peer has applied the commit counts of the token it is answering.
        self.acked = list(self.last_commit_sent)
        out = []
        for c in range(self.num_classes):
            count = enc.field(body, enc.TOKEN_COMMIT_LSB + enc.COUNT_BITS * c, enc.COUNT_BITS)
            owed = (count - self.delivered[c]) % enc.COUNT_MOD
            if owed > len(self.pending[c]):
                return "commit count beyond the frames received", out
            self._deliver(c, owed, out)
        return None, out

    def reconcile(self, peer) -> tuple:
        """Deliver what the peer confirmed, forget the rest (it resends): (frames, conflicts)."""
        out, conflicts = [], 0
        for c in range(self.num_classes):
            confirmed = enc.field(peer, enc.READY_CONFIRMED_LSB + enc.COUNT_BITS * c, enc.COUNT_BITS)
            owed = (confirmed - self.delivered[c]) % enc.COUNT_MOD
            if owed > len(self.pending[c]):
                conflicts += 1
                owed = len(self.pending[c])
            self._deliver(c, owed, out)
            self.pending[c].clear()
            self.rx_count[c] = self.delivered[c]
            self.acked[c] = self.confirmed[c]
        self.last_commit_sent = list(self.confirmed)
        return out, conflicts

    # --- received words: each returns (malformed, anomaly or None) -------------------------

    def rx_data(self, tag, slice_) -> tuple:
        c, i = tag.cls, tag.index
        if c >= self.num_classes:
            return True, None
        if i != self.rx_index[c]:
            return True, "slice index out of sequence"
        self.rx_slices[c].append(slice_)
        self.rx_index[c] = (i + 1) % enc.SLICES_PER_FRAME
        if self.full:
            self.reverse.append(make_word(echo_tag(c, i), slice_))
        if tag.last:
            frame = slices_to_frame(self.rx_slices[c])
            self.rx_slices[c] = []
            if len(self.pending[c]) >= self.window:
                return False, "frame beyond the window"
            seq = self.rx_count[c]
            self.rx_count[c] += 1
            self.pending[c].append((seq, frame))
            body = (frame_crc(frame) << enc.DIGEST_CRC_LSB | (seq % enc.COUNT_MOD) << enc.DIGEST_SEQ_LSB
                    | c << enc.DIGEST_CLASS_LSB)
            self.reverse.append(control_word(Ctl.DIGEST, body))
        return False, None

    def rx_echo(self, tag, slice_) -> tuple:
        if not self.full or not self.expect or self.expect[0][0] != "slice":
            return True, "echo of nothing sent"
        _, c, i, value, _ = self.expect.popleft()
        if (tag.cls, tag.index, slice_) != (c, i, value):
            return False, "echo mismatch"
        return False, None

    def rx_digest(self, body) -> tuple:
        if not self.expect or self.expect[0][0] != "digest":
            return True, "digest of nothing sent"
        _, c, seq, crc, _ = self.expect.popleft()
        got = (enc.field(body, enc.DIGEST_CLASS_LSB, enc.CLASS_BITS),
               enc.field(body, enc.DIGEST_SEQ_LSB, enc.COUNT_BITS),
               enc.field(body, enc.DIGEST_CRC_LSB, enc.DIGEST_CRC_BITS))
        if got != (c, seq % enc.COUNT_MOD, crc):
            return False, "digest mismatch"
        frame = self.replay[c].popleft()
        assert frame.seq == self.confirmed[c]
        self.confirmed[c] += 1
        self.send_frame[c] -= 1
        return False, None

    def echo_overdue(self, cycle, bound) -> bool:
        return bool(self.expect) and cycle - self.expect[0][4] > bound

    # --- sending ---------------------------------------------------------------------------

    def _data_class(self):
        """Highest class with a slice it may send now, or None."""
        for c in reversed(range(self.num_classes)):
            k = self.send_frame[c]
            if k < len(self.replay[c]) and self.replay[c][k].seq < self.acked[c] + self.window:
                return c
        return None

    def _send_slice(self, c, cycle):
        frame = self.replay[c][self.send_frame[c]]
        i = self.send_slice[c]
        value = frame.slices[i]
        if self.full:
            self.expect.append(("slice", c, i, value, cycle))
        self.counters.slices_sent += 1
        if i == enc.SLICES_PER_FRAME - 1:
            self.expect.append(("digest", c, frame.seq, frame.crc, cycle))
            self.send_frame[c] += 1
            self.send_slice[c] = 0
            self.counters.frames_sent += 1
        else:
            self.send_slice[c] = i + 1
        return make_word(data_tag(c, i), value)

    def next_word(self, cycle):
        """The data-plane word on the wire at ``cycle`` (PROTOCOL.md 4.2), or None for IDLE."""
        data_cls = self._data_class()
        head_is_digest = bool(self.reverse) and DECODE_TABLE[self.reverse[0] >> enc.SLICE_BITS].kind == Kind.CONTROL
        if self.reverse and (head_is_digest or data_cls is None or self.rr_echo_turn):
            self.rr_echo_turn = False
            return self.reverse.popleft()
        if data_cls is not None:
            self.rr_echo_turn = True
            return self._send_slice(data_cls, cycle)
        return None
