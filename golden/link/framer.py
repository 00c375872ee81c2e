"""The data plane of one end: preemptible frames with Perfect Information Feedback
(docs/PROTOCOL.md 4). Twin of rtl/link/framer/.

Sender: replay buffers per class (frames until their digest matches), the window, the send
pointers and what the peer must return, in order (the expect queue). Receiver: slice assembly
per class, pending frames until committed, and the ECHO and DIGEST words owed to the peer (the
reverse queue). The endpoint routes words here, carries the commit counts on its token words
and reports anomalies.

Recovery (PROTOCOL.md 4.6) runs per direction with the link UP. By default
(``recovery="selective"``) a digest that names the expected frame but not its CRC (the payload
was corrupted) resends that frame alone, announced by ``REPLAY``; the receiver puts it in place
of the copy it holds, and the frames confirmed after it wait, marked good, until it is confirmed
too. Every other error, and every error with ``recovery="go_back_n"``, goes back N: a sender that
sees a return it did not expect, or none in time, or the receiver's ``NAK``, sends ``RESYNC``
(its confirmed counts and a number) and resends every unconfirmed frame; until the matching
``RESYNC_ACK`` it drops the returns that arrive (stale). A receiver that loses a slice drops
every data word (asking again with a ``NAK`` at each frame's end) until the ``RESYNC``, which
commits the frames it confirms and forgets the rest.

Pipeline (PROTOCOL.md 2.2): the ``rx_*`` methods, :meth:`token_received`, :meth:`reconcile`,
:meth:`echo_overdue` and the user's :meth:`hand_in` are the A stage; :meth:`choose` is S's
decision, made from the state at the start of the cycle without changing it, and
:meth:`commit` makes it after A. :meth:`end_cycle` closes a cycle: the returns A owed in the
previous cycle enter the reverse queue, and the data word that was on the wire two cycles before
is recorded in the expect queue.
"""

from collections import deque
from dataclasses import dataclass, replace

from golden import encoding as enc
from golden.common.crc import frame_crc
from golden.common.slice import DATA_WORD_TAGS, DECODE_TABLE, ECHO_WORD_TAGS, frame_to_slices, slices_to_frame
from golden.encoding import Ctl, Kind
from golden.link.control import control_word
from golden.link.takeout import TakeOut
from golden.params import ACK_SLACK, QUIET_LIMIT, RECOVERY_LIMIT, WIRE_DELAY, window_in_use


@dataclass
class _TxFrame:
    seq: int
    slices: list
    crc: int


@dataclass(frozen=True)
class DataChoice:
    """A data-plane word S chose: a return from the reverse queue, a recovery word (``control``:
    its code, with ``number`` for RESYNC and RESYNC_ACK), or a slice (with the class, sequence,
    index, frame digest and resync number the expect queue will need once it has left)."""

    word: int
    is_slice: bool
    cls: int = 0
    seq: int = 0
    index: int = 0
    crc: int = 0
    control: int = 0
    number: int = 0
    resync: int = 0  # a slice: the number of the last RESYNC sent when S chose it
    replayed: bool = False  # a slice of a frame sent again after REPLAY
    resume: tuple = ()  # RESYNC with selective repeat: where each class resumes


@dataclass(frozen=True)
class _Expected:
    """What the peer must return: a slice (``index``, ``value``) or a frame's digest (``seq``,
    ``crc``), with the cycle its slice was on the wire; ``tight``: the first recorded after a
    RESYNC, whose return has the quiet bound (PROTOCOL.md 4.5)."""

    is_digest: bool
    cls: int
    index: int
    value: int
    seq: int
    crc: int
    sent: int
    tight: bool = False


class Framer:
    """``params``: the endpoint's :class:`golden.params.LinkParams` (num_classes, window,
    echo_mode). ``counters``: the endpoint's counters (frames and slices sent are counted there).

    ``user_takes``: model the receive memory as the hardware has it (PROTOCOL.md 4.6), a user
    who takes each delivered frame from a stream per class (:meth:`frame_out`,
    :meth:`take_frame`), and the slices refused while the memory is full. Without it (the
    default) a frame delivered is the user's at once, and the memory never fills."""

    def __init__(self, params, counters, user_takes=False):
        if not isinstance(user_takes, bool):
            raise TypeError(f"user_takes must be a bool, not {type(user_takes).__name__}")
        self.num_classes, self.window, self.full = params.num_classes, params.window, params.full_echo
        self.selective = params.selective
        self.count_bits, self.count_mod = params.count_bits, params.count_mod
        self.counters = counters
        C = params.num_classes
        self.replay = [deque() for _ in range(C)]  # unconfirmed frames, oldest first
        self.next_seq = [0] * C  # sequence of the next frame from the user
        self.confirmed = [0] * C  # frames whose digest matched
        self.acked = [0] * C  # commit counts the peer is known to have applied
        # The frames per class S may have beyond ``acked``: the window the measured round trip
        # needs, up to the replay memory (PROTOCOL.md 4.4); the whole memory until one is measured.
        self.window_now = self.window
        self.rx_count = [0] * C  # frames received complete (next rx sequence)
        self.delivered = [0] * C
        self.pending = [deque() for _ in range(C)]  # (seq, bytes) received, not yet committed
        # The receive memory's user side, with ``user_takes``: frames delivered, not yet taken;
        # how many of them were delivered before this cycle; the parts of the oldest read so far
        # (``read_parts`` make a frame) and whether it is offered (``frames_out.valid``, a
        # register); the classes taken this cycle; and, judged at the end of each cycle for the
        # next, whether the memory holds its 2 W' frames (delivered or pending), when a slice of
        # a new frame is refused.
        self.user_takes, self.memory_slots = user_takes, 2 * params.window_slots
        self.read_parts = params.read_parts
        self.untaken = [deque() for _ in range(C)]
        self._untaken_before = [0] * C
        self._parts_read = [0] * C
        self.out_valid = [False] * C
        self._taken_now = set()
        self.memory_full = [False] * C
        self.resync_number = 0  # number of the last RESYNC sent
        self.takeout = TakeOut(C)  # the frames a settle took out, until the fabric takes them (10.6)
        self.leave_session()

    def leave_session(self):
        """Training starts: words in flight are forgotten; unconfirmed frames will be resent."""
        C = self.num_classes
        self.reverse = deque()  # ECHO / DIGEST words owed to the peer
        self.expect = deque()  # what the peer must return, in order
        self._recording = []  # entries for the expect queue at the end of this cycle
        self._returns_now = []  # returns A owes for this cycle's word
        self._returns_next = []  # returns A owed in the previous cycle
        self._popped = False  # this cycle's word was the oldest expected return
        self.rx_index = [0] * C
        self.rx_slices = [[] for _ in range(C)]
        self.send_seq = list(self.confirmed)  # frame being sent, per class
        self.send_slice = [0] * C
        self._forget_replays()
        self.rx_replace = [None] * C  # receiver: the sequence the frame being assembled replaces
        self.rr_echo_turn = False
        self.last_commit_sent = list(self.confirmed)
        # Recovery, sender: a RESYNC to send; sent, its acknowledgement awaited (by a deadline).
        self.resync_due = False
        self._resync_was_due = False  # resync_due at the start of the cycle
        self.awaiting_ack = False
        self.ack_deadline = 0
        self.failed_recoveries = 0  # RESYNCs sent since a frame was last confirmed
        self.quiet_failures = 0  # returns after a RESYNC late in a row, none expected arriving
        self._tight_next = False  # a RESYNC was sent: the next entry recorded is tight
        self.degraded = False  # recovery failed (RECOVERY_LIMIT or QUIET_LIMIT): the end must retrain
        # Recovery, receiver: dropping data until the peer's RESYNC; words owed to the peer.
        self.discard = False
        self.nak_due = False
        self.ack_due = None  # number of the RESYNC to acknowledge
        self._set_now = set()  # flags A set this cycle: S sending the word does not clear them
        self._rewind_returns = False  # A applied a RESYNC: returns owed so far are dropped at the cycle's end
        self._ack_matched = None  # A applied the awaited RESYNC_ACK: (failures forgiven,) at the cycle's end
        self._recovered_now = False  # this cycle's word started a recovery (or found the link degraded)

    def _forget_replays(self, keep_good=False):
        """Selective repeat, sender: frames confirmed out of order (kept with ``keep_good``),
        frames to send again (in the order they were queued), the one being sent again (slice
        by slice), and the frames a RESYNC left to queue (``scan`` up to ``scan_end``)."""
        C = self.num_classes
        if not keep_good:
            self.good = [set() for _ in range(C)]
        self.redo = [deque() for _ in range(C)]
        self.scan, self.scan_end = list(self.confirmed), list(self.confirmed)
        # A frame a digest queues to be sent again enters the redo queue at the end of the next
        # cycle (the hardware registers the push): named this cycle (``_redo_named``), then
        # entering (``_redo_entering``), in which cycle the scan queues none of its class.
        self._redo_named = [None] * C
        self._redo_entering = [None] * C
        self.replaying = [False] * C
        self.replay_slice = [0] * C

    # --- the user --------------------------------------------------------------------------

    def follow_rtt(self, rtt):
        """The end of a cycle that began and ended outside UP, not a restart cycle: the window in
        use follows the round trip as it stood at the start of the cycle two before (None: not
        measured; the hardware computes it in two register stages).
        It is fixed from the cycle before entangling until the session ends, so it never moves
        while frames are in flight (PROTOCOL.md 4.4)."""
        if rtt is not None:
            self.window_now = window_in_use(rtt, self.window, self.full)

    def frame_ready(self, c) -> bool:
        return len(self.replay[c]) < self.window

    def unsent(self, c) -> int:
        """Frames of class ``c`` handed in whose last slice has not been sent yet."""
        return self.next_seq[c] - self.send_seq[c]

    def hand_in(self, c, frame):
        self.replay[c].append(_TxFrame(self.next_seq[c], frame_to_slices(frame), frame_crc(frame)))
        self.next_seq[c] += 1

    def _deliver(self, c, n, out):
        for _ in range(n):
            _, frame = self.pending[c].popleft()
            self.delivered[c] += 1
            out.append((c, frame))
            if self.user_takes:
                self.untaken[c].append(frame)

    def frame_out(self, c):
        """The frame class ``c``'s stream offers the user now (``user_takes``), or None: the
        oldest delivered and not taken, once its ``read_parts`` reads are done, a read a cycle
        from the cycle after its delivery, or after the last one was taken (at most one every
        1 + ``read_parts`` cycles, as the hardware reads its memory)."""
        return self.untaken[c][0] if self.out_valid[c] else None

    def take_frame(self, c) -> bytes:
        """The user takes :meth:`frame_out` of class ``c`` in this cycle (ValueError if none)."""
        if self.frame_out(c) is None:
            raise ValueError(f"take_frame({c}): class {c} offers no frame now")
        self._taken_now.add(c)
        return self.untaken[c].popleft()

    def end_delivery(self):
        """With ``user_takes``, the end of a cycle, after everything that delivers (a settle's
        reconciliation included): the user streams' ``valid`` and the memory's fullness for the
        next cycle."""
        for c in range(self.num_classes):
            if c in self._taken_now:
                self.out_valid[c], self._parts_read[c] = False, 0
            elif not self.out_valid[c] and self._untaken_before[c] > 0:
                # A part of the oldest frame is read in this cycle; the last makes it offered.
                if self._parts_read[c] == self.read_parts - 1:
                    self.out_valid[c] = True
                else:
                    self._parts_read[c] += 1
            self._untaken_before[c] = len(self.untaken[c])
            self.memory_full[c] = len(self.pending[c]) + len(self.untaken[c]) >= self.memory_slots
        self._taken_now.clear()

    # --- counts on token and READY words --------------------------------------------------

    def counts_field(self, counts=None) -> int:
        """The counts field of a token, READY or RESYNC body (``enc.class_count_field``) holding
        ``counts`` (default: the confirmed count of every class)."""
        field = 0
        for c, count in enumerate(self.confirmed if counts is None else counts):
            lsb, _ = enc.class_count_field(c, self.num_classes)
            field |= (count % self.count_mod) << lsb
        return field

    def _owed(self, counts, c) -> int:
        """Frames of class ``c`` the counts field ``counts`` commits beyond those delivered."""
        lsb, bits = enc.class_count_field(c, self.num_classes)
        return ((counts >> lsb & (1 << bits) - 1) - self.delivered[c]) % self.count_mod

    def token_sent(self, confirmed):
        """S sent the token carrying ``confirmed`` (the counts when it chose the word)."""
        self.last_commit_sent = list(confirmed)

    def token_received(self, body) -> tuple:
        """The peer's token: its commit counts. Returns (anomaly or None, frames delivered);
        a count beyond the frames received, in any class, delivers nothing."""
        # The peer has applied the commit counts of the token it is answering.
        self.acked = list(self.last_commit_sent)
        owed = []
        for c in range(self.num_classes):
            owed.append(self._owed(enc.TOKEN_BODY.get(body, "counts"), c))
            if owed[c] > len(self.pending[c]):
                return "commit count beyond the frames received", []
        out = []
        for c in range(self.num_classes):
            self._deliver(c, owed[c], out)
        return None, out

    def reconcile(self, peer) -> tuple:
        """Deliver what the peer confirmed, forget the rest (it resends): (frames, conflicts)."""
        out, conflicts = [], 0
        for c in range(self.num_classes):
            owed = self._owed(enc.READY_BODY.get(peer, "counts"), c)
            if owed > len(self.pending[c]):
                conflicts += 1
                owed = len(self.pending[c])
            self._deliver(c, owed, out)
            self.pending[c].clear()
            self.rx_count[c] = self.delivered[c]
            self.acked[c] = self.confirmed[c]
        self.last_commit_sent = list(self.confirmed)
        return out, conflicts

    def settle_take(self) -> None:
        """Settling a failed link (PROTOCOL.md 10.6), after :meth:`reconcile`: the unconfirmed
        frames leave the replay buffer for the take-out (:attr:`takeout`), and the next frame of
        each class is numbered from its confirmed count, as the peer's reconciliation expects.
        No frame is handed in while the take-out is busy, so a second settle in that time finds
        the replay buffer empty."""
        self.takeout.load([[slices_to_frame(f.slices) for f in self.replay[c]] for c in range(self.num_classes)])
        for c in range(self.num_classes):
            self.replay[c].clear()
            self.next_seq[c] = self.confirmed[c]
        self.send_seq = list(self.confirmed)
        self.send_slice = [0] * self.num_classes
        self._forget_replays()

    # --- recovery (PROTOCOL.md 4.6) -----------------------------------------------------------

    @property
    def stale_returns(self) -> bool:
        """Returns arriving now belong to frames a RESYNC (chosen or sent) has taken back."""
        return self.resync_due or self.awaiting_ack

    def recover(self):
        """A sender-side anomaly: resend from the first unconfirmed frame (S sends RESYNC next),
        unless recovery has failed RECOVERY_LIMIT times in a row, or the line returned nothing
        QUIET_LIMIT times (4.6): then ``degraded``."""
        self._recovered_now = True
        if self.failed_recoveries >= RECOVERY_LIMIT or self.quiet_failures >= QUIET_LIMIT:
            self.degraded = True
        else:
            self.resync_due = True
            self.awaiting_ack = False

    def _lost_slice(self):
        """A receiver-side anomaly: drop data until the peer's RESYNC, and ask for it."""
        self.discard = True
        self._flag("nak_due")

    def _flag(self, name, value=True):
        setattr(self, name, value)
        self._set_now.add(name)

    def rx_resync(self, body) -> tuple:
        """The peer rewinds: commit what it confirmed, forget the rest, acknowledge. A count
        beyond the frames received is an anomaly that recovery cannot mend (the end restarts):
        then only the assembly has restarted. Returns (anomaly or None, frames delivered), as
        :meth:`token_received` does."""
        # The assembly restarts, discarding ends and the returns owed are dropped whatever the
        # counts say (the peer resends from slice 0; a bad count restarts the end anyway).
        self.rx_index = [0] * self.num_classes
        self.rx_slices = [[] for _ in range(self.num_classes)]
        self.rx_replace = [None] * self.num_classes
        self.discard = False
        self.nak_due = False
        self._rewind_returns = True
        owed = []
        for c in range(self.num_classes):
            owed.append(self._owed(enc.RESYNC_BODY.get(body, "counts"), c))
            if owed[c] > len(self.pending[c]):
                return "resync count beyond the frames received", []
        out = []
        for c in range(self.num_classes):
            if self.selective:
                # The count is where the peer resumes: keep the frames below it, commit none.
                while len(self.pending[c]) > owed[c]:
                    self.pending[c].pop()
                self.rx_count[c] = self.delivered[c] + owed[c]
                continue
            self._deliver(c, owed[c], out)
            self.pending[c].clear()
            self.rx_count[c] = self.delivered[c]
        self._flag("ack_due", enc.RESYNC_BODY.get(body, "number"))
        return None, out

    def rx_ack(self, body):
        """The peer has rewound: returns from now on answer the frames sent since the RESYNC."""
        number = enc.RESYNC_ACK_BODY.get(body, "number")
        if self.awaiting_ack and number == self.resync_number:
            # Takes effect at the end of the cycle: the deadlines are judged on the state at its
            # start. A recovery with nothing to resend cannot confirm a frame: it succeeded here.
            self._ack_matched = (not any(self.replay),)

    def rx_nak(self) -> str | None:
        """The peer lost a slice. A NAK that arrives before the RESYNC_ACK was sent before the
        peer saw the RESYNC: stale, ignored. Returns the anomaly, if any."""
        if self.stale_returns:
            return None
        self.recover()
        return "peer lost a slice"

    def _resume_points(self) -> tuple:
        """Selective repeat: per class, the frame after the last one known good (the receiver
        holds every frame below it, PROTOCOL.md 4.6), or the first unconfirmed one."""
        return tuple(max(self.good[c]) + 1 if self.good[c] else self.confirmed[c] for c in range(self.num_classes))

    def rx_replay(self, body) -> tuple:
        """The peer sends a frame again: the next frame of its class replaces the one it names,
        which must be held and not yet committed, at a frame boundary of that class. Otherwise a
        slice was lost (a replay's own slices out of order) or the word is one the sender cannot
        have sent: either way the receiver asks for a RESYNC. Returns (malformed, anomaly)."""
        c = enc.REPLAY_BODY.get(body, "cls")
        if not self.selective or c >= self.num_classes:
            return True, None  # a word a go-back-N peer never sends
        if self.discard:
            return False, None
        offset = (enc.REPLAY_BODY.get(body, "seq") % self.count_mod - self.delivered[c]) % self.count_mod
        if self.rx_index[c] != 0 or self.rx_replace[c] is not None or offset >= len(self.pending[c]):
            self._lost_slice()
            return False, "replay out of place"
        self.rx_replace[c] = self.delivered[c] + offset
        return False, None

    def advance(self):
        """A, each cycle while UP, after the word: each class whose first unconfirmed frame is
        marked good confirms it (one frame per class per cycle), and the scan a selective RESYNC
        left looks at one frame, queueing it to be sent again unless it is good, in a cycle in
        which no frame a digest queued enters the redo queue. Not while a RESYNC is due (at the
        start of the cycle, so that hardware judges it on a register): it carries the resume
        points as S chose it and the send pointers go back to them. (One this cycle's word makes
        due is chosen next cycle, from the state this cycle leaves.)"""
        queued = [seq is not None for seq in self._redo_entering]
        if self._resync_was_due:
            return
        for c in range(self.num_classes):
            if self.scan[c] < self.scan_end[c] and not queued[c]:
                # A frame the confirmed count passed while the scan waited was good: not again.
                if self.scan[c] >= self.confirmed[c] and self.scan[c] not in self.good[c]:
                    self.redo[c].append(self.scan[c])
                self.scan[c] += 1
            if self.confirmed[c] in self.good[c]:
                self.good[c].discard(self.confirmed[c])
                frame = self.replay[c].popleft()
                assert frame.seq == self.confirmed[c]
                self.confirmed[c] += 1

    def watchdog(self, arrived, echo_bound, quiet_bound) -> str | None:
        """A's deadlines, each cycle while UP (PROTOCOL.md 4.5, 4.6): the RESYNC_ACK by its
        deadline, else the oldest expected return by ``echo_bound`` (``quiet_bound`` if it is
        the first after a RESYNC). Returns the anomaly, if any: none when this cycle's word
        already started a recovery (one event, counted once)."""
        if self._recovered_now:
            return None
        if self.awaiting_ack:
            if self._ack_matched is None and arrived > self.ack_deadline:
                self.recover()
                return "resync acknowledgement overdue"
            return None
        if not self.resync_due and self.echo_overdue(arrived, echo_bound, quiet_bound):
            self.quiet_failures += self.expect[0].tight
            self.recover()
            return "echo overdue"
        return None

    # --- received words (A): each returns (malformed, anomaly or None) --------------------

    def rx_data(self, tag, slice_) -> tuple:
        c, i = tag.cls, tag.index
        if c >= self.num_classes:
            return True, None
        if self.discard:
            if tag.last:
                self._flag("nak_due")
            return False, None
        if i != self.rx_index[c]:
            self._lost_slice()
            return True, "slice index out of sequence"
        if self.memory_full[c] and self.rx_replace[c] is None:
            # No room for a new frame (a frame sent again takes the place of its copy).
            self._lost_slice()
            return False, "receive memory full"
        self.rx_slices[c].append(slice_)
        self.rx_index[c] = (i + 1) % enc.SLICES_PER_FRAME
        if self.full:
            self._returns_now.append(ECHO_WORD_TAGS[c][i] | slice_)
        if tag.last:
            frame = slices_to_frame(self.rx_slices[c])
            self.rx_slices[c] = []
            if self.rx_replace[c] is not None:
                # A frame sent again: it takes the place of the copy held (still pending: the
                # sender has not confirmed it, so no count has delivered it).
                seq, self.rx_replace[c] = self.rx_replace[c], None
                self.pending[c][seq - self.delivered[c]] = (seq, frame)
            else:
                if len(self.pending[c]) >= self.window:
                    self._lost_slice()
                    return False, "frame beyond the window"
                seq = self.rx_count[c]
                self.rx_count[c] += 1
                self.pending[c].append((seq, frame))
            body = enc.DIGEST_BODY.pack(crc=frame_crc(frame), seq=seq % self.count_mod, cls=c)
            self._returns_now.append(control_word(Ctl.DIGEST, body))
        return False, None

    def rx_echo(self, tag, slice_) -> tuple:
        if self.stale_returns:
            return False, None
        if not self.full or not self.expect or self.expect[0].is_digest:
            self.recover()
            return True, "echo of nothing sent"
        head = self.expect.popleft()
        self._popped = True
        self.quiet_failures = 0
        if (tag.cls, tag.index, slice_) != (head.cls, head.index, head.value):
            self.recover()
            return False, "echo mismatch"
        return False, None

    def rx_digest(self, body) -> tuple:
        if self.stale_returns:
            return False, None
        if not self.expect or not self.expect[0].is_digest:
            self.recover()
            return True, "digest of nothing sent"
        head = self.expect.popleft()
        self._popped = True
        self.quiet_failures = 0
        got = tuple(enc.DIGEST_BODY.get(body, name) for name in ("cls", "seq", "crc"))
        if got != (head.cls, head.seq % self.count_mod, head.crc):
            if (
                self.selective
                and got[:2] == (head.cls, head.seq % self.count_mod)
                and self.failed_recoveries < RECOVERY_LIMIT
            ):
                # The frame expected, with another CRC: its payload was hit. Send it alone again.
                self._redo_named[head.cls] = head.seq
            else:
                # (A replay that keeps failing ends here too: recover() finds the link degraded.)
                self.recover()
            return False, "digest mismatch"
        # Frames the scan has yet to look at were all sent before the RESYNC that started it,
        # and their digests were forgotten with it: the RTL reads their good bits as they stand.
        assert not self.scan[head.cls] <= head.seq < self.scan_end[head.cls], "a digest marks a frame ahead of the scan"
        self.good[head.cls].add(head.seq)
        self.failed_recoveries = 0
        return False, None

    def echo_overdue(self, arrived, bound, quiet_bound) -> bool:
        """The oldest return expected at the start of A's cycle, unless this cycle's word was
        it, is still missing in arrival cycle ``arrived`` and was due by its slice's wire cycle
        + ``bound``, or + ``quiet_bound`` for the first after a RESYNC (PROTOCOL.md 4.5)."""
        if self._popped or not self.expect:
            return False
        head = self.expect[0]
        return arrived - head.sent > (quiet_bound if head.tight else bound)

    # --- sending (S) ------------------------------------------------------------------------

    def _data_class(self):
        """Highest class with a slice it may send now, or None."""
        for c in reversed(range(self.num_classes)):
            seq = self.send_seq[c]
            if self.replaying[c] or (self.redo[c] and self.send_slice[c] == 0):
                return c
            if seq < self.next_seq[c] and seq < self.acked[c] + self.window_now:
                return c
        return None

    def choose(self) -> DataChoice | None:
        """The data-plane word S sends now (PROTOCOL.md 4.2), or None for IDLE; changes nothing."""
        if self.resync_due:
            number = (self.resync_number + 1) % (1 << enc.RESYNC_BODY.width("number"))
            resume = self._resume_points() if self.selective else tuple(self.confirmed)
            body = enc.RESYNC_BODY.pack(counts=self.counts_field(resume), number=number)
            return DataChoice(control_word(Ctl.RESYNC, body), False, control=Ctl.RESYNC, number=number, resume=resume)
        if self.ack_due is not None:
            body = enc.RESYNC_ACK_BODY.pack(number=self.ack_due)
            return DataChoice(control_word(Ctl.RESYNC_ACK, body), False, control=Ctl.RESYNC_ACK)
        if self.nak_due:
            return DataChoice(control_word(Ctl.NAK, 0), False, control=Ctl.NAK)
        data_cls = self._data_class()
        if self.reverse:
            head = self.reverse[0]
            if DECODE_TABLE[head >> enc.SLICE_BITS].kind == Kind.CONTROL or data_cls is None or self.rr_echo_turn:
                return DataChoice(head, is_slice=False)
        if data_cls is None:
            return None
        c = data_cls
        replayed = self.replaying[c]
        if self.redo[c] and not replayed and self.send_slice[c] == 0:
            seq = self.redo[c][0]
            body = enc.REPLAY_BODY.pack(seq=seq % self.count_mod, cls=c)
            return DataChoice(control_word(Ctl.REPLAY, body), False, cls=c, seq=seq, control=Ctl.REPLAY)
        if replayed:
            seq, i = self.redo[c][0], self.replay_slice[c]
        else:
            seq, i = self.send_seq[c], self.send_slice[c]
        frame = self.replay[c][seq - self.confirmed[c]]
        return DataChoice(
            DATA_WORD_TAGS[c][i] | frame.slices[i],
            is_slice=True,
            cls=c,
            seq=seq,
            index=i,
            crc=frame.crc,
            resync=self.resync_number,
            replayed=replayed,
        )

    def commit(self, choice: DataChoice, cycle: int, rtt: int, margin: int):
        """After A: S sent ``choice`` in ``cycle`` (``rtt`` and ``margin`` time a RESYNC's
        acknowledgement)."""
        if choice.control == Ctl.RESYNC:
            # Go back N: every unconfirmed frame is sent again, and the slices chosen before
            # this cycle (under the previous resync number) are never recorded.
            self.counters.recoveries += 1
            self.failed_recoveries += 1
            self.resync_number = choice.number
            self.resync_due, self.awaiting_ack = False, True
            self.ack_deadline = cycle + WIRE_DELAY + rtt + margin + ACK_SLACK
            self.send_slice = [0] * self.num_classes
            self.send_seq = list(choice.resume)
            self._forget_replays(keep_good=self.selective)
            if self.selective:
                # The peer keeps the frames below the resume point: those not known good are
                # queued to be sent again, one frame looked at per cycle (advance).
                self.scan_end = list(choice.resume)
            self.expect.clear()
            self._recording = []
            self._tight_next = True
            return
        if choice.control == Ctl.REPLAY:
            # A frame sent again is a recovery too: a frame that never gets through is degraded.
            self.counters.recoveries += 1
            self.failed_recoveries += 1
            self.replaying[choice.cls], self.replay_slice[choice.cls] = True, 0
            self.rr_echo_turn = True
            return
        if choice.control:
            name = "ack_due" if choice.control == Ctl.RESYNC_ACK else "nak_due"
            if name not in self._set_now:
                setattr(self, name, None if name == "ack_due" else False)
            return
        if not choice.is_slice:
            self.reverse.popleft()
            self.rr_echo_turn = False
            return
        self.rr_echo_turn = True
        c = choice.cls
        self.counters.slices_sent += 1
        if choice.replayed:
            if choice.index == enc.SLICES_PER_FRAME - 1:
                self.redo[c].popleft()
                self.replaying[c] = False
                self.counters.frames_sent += 1
            else:
                self.replay_slice[c] = choice.index + 1
            return
        if choice.index == enc.SLICES_PER_FRAME - 1:
            self.send_seq[c] += 1
            self.send_slice[c] = 0
            self.counters.frames_sent += 1
        else:
            self.send_slice[c] = choice.index + 1

    def _record(self, entry: _Expected):
        if self._tight_next:
            entry, self._tight_next = replace(entry, tight=True), False
        self._recording.append(entry)

    # --- the end of a cycle --------------------------------------------------------------------

    def end_cycle(self, up: bool, wire_prev: DataChoice | None, cycle: int):
        """Close A cycle ``cycle``. While ``up``: the returns A owed in the previous cycle enter
        the reverse queue; what the peer must return for the data-plane word on the wire in
        cycle - 2 enters the expect queue, and that for ``wire_prev`` (the word on the wire in
        cycle - 1, or None) is made ready to enter it at the end of the next cycle (PROTOCOL.md
        2.2)."""
        recorded, self._recording = self._recording, []
        for c in range(self.num_classes):
            if self._redo_entering[c] is not None:
                self.redo[c].append(self._redo_entering[c])
            self._redo_entering[c], self._redo_named[c] = self._redo_named[c], None
        if self._rewind_returns:
            # A applied a RESYNC: what it owed the peer answered frames the peer takes back.
            self.reverse.clear()
            self._returns_next = []
            self._rewind_returns = False
        self._set_now.clear()
        self._recovered_now = False
        if self._ack_matched is not None:
            self.awaiting_ack = False
            if self._ack_matched[0]:
                self.failed_recoveries = 0
            self._ack_matched = None
        if up:
            self.reverse.extend(self._returns_next)
            self.expect.extend(recorded)
            if wire_prev is not None and wire_prev.is_slice and wire_prev.resync == self.resync_number:
                c, i, sent = wire_prev.cls, wire_prev.index, cycle - 1
                value = wire_prev.word & ((1 << enc.SLICE_BITS) - 1)
                if self.full:
                    self._record(_Expected(False, c, i, value, 0, 0, sent))
                if i == enc.SLICES_PER_FRAME - 1:
                    self._record(_Expected(True, c, 0, 0, wire_prev.seq, wire_prev.crc, sent))
        self._returns_next, self._returns_now = self._returns_now, []
        self._popped = False
        self._resync_was_due = self.resync_due
