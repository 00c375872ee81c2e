"""The data plane of one end in hardware: twin of golden/link/framer.py (docs/PROTOCOL.md 4).

Preemptible 64-byte frames per class with Perfect Information Feedback: replay memories
(frames until their digest matches), the window, the ECHO/DIGEST words owed to the peer (the
reverse queue) and the words the peer must return (the expect queue), in the pipeline of
PROTOCOL.md 2.2, and frame-level recovery (go-back-N with RESYNC, RESYNC_ACK and NAK,
PROTOCOL.md 4.6; selective repeat with REPLAY).

The framer is composed of parts along the seams of golden/link/framer.py, each a component with
its port table, latency and failure behaviour in its docstring:

- :class:`~rtl.link.framer.sender.ReplayStore` (sender.py): the replay memories and the data
  slice of stages B1 and B2;
- :class:`~rtl.link.framer.receiver.Delivery` and :class:`~rtl.link.framer.receiver.Reconcile`
  (receiver.py): the receive memories, delivery to the user, and reconciliation;
- :class:`~rtl.link.framer.returns.ExpectRecorder` (returns.py): what the peer must return,
  recorded as slices leave;
- :class:`~rtl.link.framer.recovery.Recovery` (recovery.py): RESYNC, RESYNC_ACK, NAK, the
  watchdog and the count of failed recoveries;
- :class:`~rtl.link.takeout.TakeOut` (rtl/link/takeout.py): the frames a settle takes out of the
  replay memory (PROTOCOL.md 10.6);
- :class:`~rtl.link.framer.selective.SelectiveRepeat` (selective.py), one per class, built only
  with ``params.recovery == "selective"``: the good frames, the scan and the redo queue.

:class:`Framer` keeps the return queues (reverse and expect), the counts and pointers the
stages share, and the decisions that move several of them at once; its ``elaborate`` lists the
seams in pipeline order: the user side, stage A (a data slice; the returns against the expected
head; recovery; a token's commit counts; the receiver's flags), stage S (the choice and its
commit), B and the record, and the end of the cycle.

Hand-retimed registers (computed a cycle ahead, so that stage A or S only selects a registered
result) end in ``_ahead``. In this module: ``sendable_ahead``, ``first_slice_ahead``,
``room_ahead``, ``ready_ahead``, ``mem_full_ahead``, ``window_full_ahead``, ``count<c>_is_reconciled_ahead``, the
count checks of ``_rx_counts`` (``count<c>_<flag>_<move>_ahead``, ``replay<c>_<flag>_<move>_ahead``),
and the comparisons with every candidate head of the expect queue made by the ``ahead`` helper of
``_rx_returns`` (``<test>_ahead_held``, ``<test>_ahead_successor``, ``<test>_ahead_pushed`` for the
tests ``digest_equal``, ``payload_hit<c>``, ``digest_unnamed``, ``echo_equal``, ``first_match<c>``,
``head_late``). Beside them, registers kept equal to a sum of others keep their names
(``confirmed_after``, ``confirmed_end``, ``commit_end``, ``send_seq_after``, ``next_seq_after``,
``cycle_after``, ``pending_frames``, ``occupancy``, ``unconfirmed``, ``at_last``). The parts list
theirs (recovery.py, selective.py).
"""

from types import SimpleNamespace

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for, ceil_log2

from golden import encoding as enc
from golden.encoding import Ctl
from golden.params import LinkParams, require, window_in_use_terms
from rtl.common import fields
from rtl.common.crc import crc32_advance, crc32_first
from rtl.common.queue import Queue

# The module, not the class: rtl/link/takeout.py imports this package's sender.py, so either can
# be imported first.
from rtl.link import takeout as take_out
from rtl.link.framer.receiver import Delivery, Reconcile
from rtl.link.framer.recovery import Recovery
from rtl.link.framer.returns import ExpectRecorder, return_layout
from rtl.link.framer.selective import SelectiveRepeat
from rtl.link.framer.sender import FRAME_BITS, ReplayStore

_LAST = enc.SLICES_PER_FRAME - 1


def _digest_name(entry, K):
    """The frame a return entry's DIGEST names, as the body's seq and cls fields carry it: the
    sequence in the field's low ``K`` bits, the bits above them zero, then the class."""
    return Cat(entry.seq[:K], Const(0, enc.DIGEST_BODY.width("seq") - K), entry.cls)


def _digest_body(entry, K):
    """A return entry's DIGEST body below its reserved bits, in the table's order: CRC, name."""
    return Cat(entry.crc, _digest_name(entry, K))


def _class_count(counts, c, C):
    """Class ``c``'s count in a counts field (token, READY, RESYNC) of a ``C``-class build."""
    lsb, width = enc.class_count_field(c, C)
    return counts[lsb : lsb + width]


class Framer(wiring.Component):
    """Sender and receiver of frames on one end (golden ``Framer``).

    User ports (link clock domain): ``frames_in[c]`` (stream of 512-bit frames, ready while the
    class has room in its window), ``frames_out[c]`` (stream of delivered frames, each valid
    once read, in P = 8 / ``read_slices`` reads a cycle each from the cycle after its delivery,
    at most one every P + 1 cycles, PROTOCOL.md 4.6; delivery is not
    flow-controlled by the protocol, so a user that leaves frames untaken for about W' frame
    times makes the receiver refuse slices (overrun, recovered by a RESYNC, PROTOCOL.md 4.6):
    nothing is lost).

    A stage (the word the endpoint applies, judged on the registers as at the start of the
    cycle): ``rx_data``/``rx_echo`` with ``rx_cls``, ``rx_index``, ``rx_last``, ``rx_slice``,
    ``rx_nslice`` (the slice's CRC-32 contribution, computed in stage C); ``rx_digest``,
    ``rx_token``, ``rx_resync``, ``rx_ack`` or ``rx_nak`` with ``rx_body``; ``rx_token_up`` (equal to
    ``rx_token & up``, which the endpoint derives from fewer, registered terms); ``live`` (UP and not
    the restart cycle: the recovery deadlines are judged); ``peer_store`` (training stores ``peer_half_in`` as the
    peer's READY body at this edge); ``rx_data_class`` (one-hot: a DATA word of the class, applied
    or not: the running receive digest follows it); ``entangle`` (reconcile with ``peer_half``; a token in the
    same cycle is the follower's entangling token); ``restart`` (the restart cycle); ``up`` (UP
    since the start of the cycle). Settling (PROTOCOL.md 10.6): ``settle_load`` (a settle is
    asked: the endpoint hands its peer half-state to reconciliation's stages as ``peer_half_in``
    with ``peer_store``), ``settle`` (two cycles later, not UP and not entangling: reconcile as at
    entangle, without entering UP, and hand the unconfirmed frames to the take-out, numbering the
    next frame from the confirmed count), ``settle_due`` (the cycle a settle applies or is
    skipped: a register), ``settle_pending`` (a settle was asked in one of the two
    cycles before: from the request through the cycle after it applies, and while the take-out
    is busy, no frame is handed in); ``taken[c]`` (per class, stream of the frames
    taken out, newest first, the highest class first: rtl/link/takeout.py). C stage (the word A
    applies in the next cycle, as stage C
    decoded it): ``c_cls``, ``c_index``, ``c_slice``; the framer compares it with the returns
    it expects a cycle ahead. Outputs, combinational: ``malformed``, ``anomaly`` (one
    recovery cannot mend: a commit count beyond the frames received, on a token or a RESYNC),
    ``recovery_anomalies`` (data-plane anomalies found this cycle, 0 to 2: the receiver's and the
    sender's, each recovered), ``recovery_sent`` (S sends a RESYNC or a REPLAY), ``conflicts``
    (classes reconciliation could not account for), ``overdue`` (the oldest expected return is
    late), ``degrade`` (recovery failed RECOVERY_LIMIT times and another is due now: the end must
    retrain), with ``degraded`` its register (sticky until the restart); frames delivered this cycle:
    ``delivered_token`` when
    ``token_took`` (a token's commits), plus ``delivered_recon`` when entangling.

    S stage: the data-plane word the end would send now, from the registers: ``s_valid``,
    ``s_is_data`` (a slice of class ``s_cls``, index ``s_index``) or a control word
    (``s_is_control``: code ``s_code`` - a recovery word or a DIGEST - with body ``s_payload``),
    else an ECHO of slice ``s_payload`` with ``s_cls`` and ``s_index``; ``commit`` (S's turn is the framer's: it
    sends its choice, if it has one), ``token_send`` (S sends the token: its
    counts are now acked-pending). B2 stage: ``b_slice``, the slice of the data word S chose
    two cycles before, read from the replay memory in B1.

    Registers: ``counts`` (confirmed count of every class, ``params.count_bits`` each), ``queue_overflow``
    (sticky), ``slice_sent``/``frame_sent`` (combinational pulses with ``commit``). For a fabric
    node, from registers: ``unsent`` (per class, a frame handed in has slices not yet sent: golden
    ``Framer.unsent``) and ``takeout_busy`` (golden ``TakeOut.busy``).

    Latency and memories (PROTOCOL.md 2.2): returns enter the reverse queue the cycle after A
    took their slice; a slice S sends is read (B1) and built (B2) in the next two cycles and on
    the wire in the one after; the frame's digest runs over the slices on the wire the cycle
    after, and the expect queue records them the cycle after that. Per class a replay memory of
    W' frames and a receive memory of 2W' (W' = window rounded up to a power of two), both read
    through synchronous ports so that large windows map to block RAM. Both return queues hold
    ``params.return_queue_entries``, the most that can be owed or expected at once (PROTOCOL.md
    4.5), so ``queue_overflow`` never rises.

    ``params``: a :class:`golden.params.LinkParams` (num_classes, window, echo_mode; max_rtt and
    margin size the echo deadline).
    """

    def __init__(self, params: LinkParams):
        require(params)
        C, W = params.num_classes, params.window
        self._C, self._W, self._full = C, W, params.full_echo
        self._slot_bits = max(1, ceil_log2(W))
        # Counters are compared only by differences, at most 2 W' apart, and meet the counts of
        # the wire (count_bits wide) modulo 2**count_bits.
        self._count_bits = K = params.count_bits
        self._seq_bits = max(K, self._slot_bits + 2)
        self._margin = params.margin
        self._margin_slack = params.margin + params.echo_slack
        self._margin_quiet = params.margin + params.quiet_slack
        self._entries = params.return_queue_entries
        # A deadline lies at most the largest bound ahead of the cycle counter and is judged
        # every cycle while it is the oldest, so a signed difference of these bits never wraps.
        self._time_bits = bits_for(params.rtt_limit + max(self._margin_slack, self._margin_quiet) + 4) + 1
        self._rtt_bits = params.rtt_bits
        self._selective = params.selective
        self._read_slices = params.read_slices
        self.reverse_layout = return_layout(self._full, K)
        # Selective repeat: the sender keeps the whole sequence of each frame it expects a digest
        # for (it marks the frame good, or queues it to be sent again, by that sequence).
        self.expect_layout = return_layout(self._full, self._seq_bits if self._selective else K, self._time_bits)
        super().__init__(
            {
                "frames_in": In(stream.Signature(FRAME_BITS)).array(C),
                "frames_out": Out(stream.Signature(FRAME_BITS)).array(C),
                "peer_half": In(enc.CTL_BODY_BITS),
                "peer_half_in": In(enc.CTL_BODY_BITS),
                "peer_store": In(1),
                "rtt": In(params.rtt_bits),
                "up": In(1),
                "entangle": In(1),
                "settle_load": In(1),
                "settle": In(1),
                "settle_pending": In(1),
                "settle_due": In(1),
                "taken": Out(stream.Signature(FRAME_BITS)).array(C),
                "restart": In(1),
                "rx_data": In(1),
                "rx_data_class": In(C),
                "rx_echo": In(1),
                "rx_digest": In(1),
                "rx_token": In(1),
                "rx_token_up": In(1),
                "rx_resync": In(1),
                "rx_ack": In(1),
                "rx_nak": In(1),
                "rx_replay": In(1),
                "live": In(1),
                "rx_cls": In(enc.CLASS_BITS),
                "rx_index": In(enc.INDEX_BITS),
                "rx_last": In(1),
                "rx_slice": In(enc.SLICE_BITS),
                "rx_nslice": In(enc.DIGEST_CRC_BITS),
                "rx_body": In(enc.CTL_BODY_BITS),
                "c_cls": In(enc.CLASS_BITS),
                "c_index": In(enc.INDEX_BITS),
                "c_slice": In(enc.SLICE_BITS),
                "commit": In(1),
                "token_send": In(1),
                "malformed": Out(1),
                "anomaly": Out(1),
                "conflicts": Out(range(C + 1)),
                "overdue": Out(1),
                "recovery_anomalies": Out(2),
                "recovery_sent": Out(1),
                "degraded": Out(1),
                "degrade": Out(1),
                "window": Out(range(W + 1)),
                "delivered_token": Out(range(C * W + 1)),
                "token_took": Out(1),
                "delivered_recon": Out(range(C * (2 << self._slot_bits) + 1)),
                "s_valid": Out(1),
                "s_is_data": Out(1),
                "s_is_control": Out(1),
                "s_code": Out(enc.CONTROL_CODE_BITS),
                "s_cls": Out(enc.CLASS_BITS),
                "s_index": Out(enc.INDEX_BITS),
                "s_payload": Out(enc.SLICE_BITS),
                "b_slice": Out(enc.SLICE_BITS),
                "counts": Out(K * C),
                "queue_overflow": Out(1),
                "slice_sent": Out(1),
                "frame_sent": Out(1),
                "unsent": Out(C),
                "takeout_busy": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        n = SimpleNamespace()  # what the seams share
        # The seams of golden/link/framer.py, in pipeline order.
        self._registers(m, n)
        self._parts(m, n)
        self._user_side(m, n)
        self._reconcile(m, n)
        self._rx_data(m, n)
        self._rx_returns(m, n)
        self._rx_confirm(m, n)
        self._recovery(m, n)
        self._rx_counts(m, n)
        self._rx_commit(m, n)
        self._rx_flags(m, n)
        self._s_choice(m, n)
        self._s_commit(m, n)
        self._b_and_record(m, n)
        self._end_of_cycle(m, n)
        self._settle(m, n)
        return m

    def _per_class(self, name, width, **kw):
        return [Signal(width, name=f"{name}{c}", **kw) for c in range(self._C)]

    def _registers(self, m, n):
        """The counts and pointers the seams share (golden ``Framer``'s fields), and the cycle counter."""
        C, W, N = self._C, self._W, self._seq_bits
        per_class = self._per_class
        n.next_seq, n.confirmed, n.last_commit = (per_class(x, N) for x in ("next_seq", "confirmed", "last_commit"))
        # The window in use (golden ``window_now``, PROTOCOL.md 4.4): it follows the measured
        # round trip outside UP and stands still from the cycle before entangling, so every
        # window end below is the count it is added to plus this one value all through UP.
        n.window_now = Signal(range(W + 1), name="window_now", init=W)
        # confirmed + 1 and confirmed + window_now, kept as registers beside it.
        n.confirmed_after = per_class("confirmed_after", N, init=1)
        n.confirmed_end = per_class("confirmed_end", N, init=W % (1 << N))
        # The first frame the window does not allow yet: acked + window_now (golden ``acked``). A
        # class sends only below it, so its send pointer is never past it and S tests equality.
        n.window_end = per_class("window_end", N)
        # last_commit + window_now, kept as a register beside last_commit: where a token moves the window.
        n.commit_end = per_class("commit_end", N, init=W % (1 << N))
        n.commit_from_confirmed = [
            x for c in range(C) for x in (n.last_commit[c].eq(n.confirmed[c]), n.commit_end[c].eq(n.confirmed_end[c]))
        ]
        # Outside UP the window may just have moved: the ends are computed from the counts.
        n.window_from_confirmed = per_class("window_from_confirmed", N)
        m.d.comb += [n.window_from_confirmed[c].eq(n.confirmed[c] + n.window_now) for c in range(C)]
        n.commit_from_window = [
            x
            for c in range(C)
            for x in (n.last_commit[c].eq(n.confirmed[c]), n.commit_end[c].eq(n.window_from_confirmed[c]))
        ]
        self._window_follows_rtt(m, n)
        m.d.comb += self.window.eq(n.window_now)
        n.send_seq, n.send_slice = per_class("send_seq", N), per_class("send_slice", enc.INDEX_BITS)
        n.rx_count, n.delivered = per_class("rx_count", N), per_class("delivered", N)
        n.pending_frames = per_class("pending_frames", N)  # rx_count - delivered, kept as a register
        # rx_count - out_ptr, kept as a register: at most 2 W' frames, so slot_bits + 2 bits (its
        # increments and full tests then meet a 6-bit carry chain in the default build, not 12).
        n.occupancy = per_class("occupancy", self._slot_bits + 2)
        n.rx_index = per_class("rx_index", enc.INDEX_BITS)
        n.rx_crc = per_class("rx_crc", enc.DIGEST_CRC_BITS)
        n.rr = Signal()
        # The cycle counter, and beside it the next cycle's number, which the deadlines are
        # judged against (one carry chain each, not two).
        n.cycle, n.cycle_after = Signal(self._time_bits), Signal(self._time_bits, name="cycle_after", init=1)
        m.d.sync += [n.cycle.eq(n.cycle_after), n.cycle_after.eq(n.cycle_after + 1)]
        m.d.comb += self.counts.eq(Cat(*[n.confirmed[c][: self._count_bits] for c in range(C)]))
        # The replay buffer's frames not yet confirmed (next_seq - confirmed) and whether it has
        # room (golden frame_ready), registers: ``frames_in.ready`` comes from one.
        # (At most W frames: slot_bits + 1 bits.)
        n.unconfirmed = per_class("unconfirmed", self._slot_bits + 1)
        n.room_ahead = per_class("room_ahead", 1, init=1)
        # room_ahead, less a settle under way (10.6): frames_in.ready, kept as a register beside it.
        n.ready_ahead = per_class("ready_ahead", 1, init=1)
        # The pointers plus one, kept as registers beside them: S compares them without a carry chain.
        n.send_seq_after = per_class("send_seq_after", N, init=1)
        n.next_seq_after = per_class("next_seq_after", N, init=1)
        n.adv = Signal(C)  # S sends the last slice of class c's frame
        # Registered, per class: the receive memory holds 2 W' frames not yet taken (overrun),
        # and the window's frames are all pending (golden "frame beyond the window").
        n.mem_full_ahead, n.window_full_ahead = per_class("mem_full_ahead", 1), per_class("window_full_ahead", 1)

    def _window_follows_rtt(self, m, n):
        """golden ``Framer.follow_rtt``: min(W, (3 RTT + offset) >> shift) (``window_in_use_terms``),
        taken in every cycle that is neither UP, entangling nor a restart, from the RTT of two
        cycles before: RTT + offset, 2 RTT and the comparison take a register stage, their sum,
        the shift and the choice another (PROTOCOL.md 4.4); 0 is no RTT measured."""
        W = self._W
        offset, shift = window_in_use_terms(self._full)
        # From ``enough`` cycles of round trip on the window is the whole memory: the terms
        # and the shift are taken on the low bits only, beside one comparison of all of them.
        enough = min(max(0, -(-((W << shift) - offset) // 3)), 1 << len(self.rtt))
        rtt_seen, measured = Signal(name="window_rtt_seen"), Signal(name="window_rtt_measured")
        needed = Signal(range(W + 1), name="window_needed", init=W)
        m.d.sync += [rtt_seen.eq(self.rtt != 0), measured.eq(rtt_seen)]
        if enough:
            low = self.rtt[: bits_for(enough)]
            # 3 RTT + offset as (RTT + offset) + 2 RTT: one carry chain a stage.
            plus = Signal(range((1 << len(low)) + offset), name="window_rtt_plus")
            twice = Signal(len(low) + 1, name="window_rtt_twice")
            big = Signal(name="window_rtt_big")
            m.d.sync += [
                plus.eq(low + offset),
                twice.eq(low << 1),
                big.eq(self.rtt >= enough),
                needed.eq(Mux(big, W, (plus + twice) >> shift)),
            ]
        with m.If(~self.up & ~self.entangle & ~self.restart & measured):
            m.d.sync += n.window_now.eq(needed)

    def _parts(self, m, n):
        """The parts: recovery, selective repeat (per class), the return queues, the memories,
        the record of what the peer must return."""
        C, N, K, sb = self._C, self._seq_bits, self._count_bits, self._slot_bits
        Wp = 1 << sb
        m.submodules.recovery = n.rec = rec = Recovery(
            time_bits=self._time_bits, rtt_bits=self._rtt_bits, margin=self._margin, selective=self._selective
        )
        m.d.comb += [self.degraded.eq(rec.degraded), self.degrade.eq(rec.degrade)]
        n.sent_replay = Signal(name="sent_replay")  # S sends REPLAY (selective repeat)
        m.d.comb += self.recovery_sent.eq(rec.sent_resync | n.sent_replay)
        n.rewind = self.restart | rec.sent_resync
        n.srs, n.redo = [], []
        if self._selective:
            # Counters less than 2 W' apart differ exactly in their low D bits.
            D = min(K, sb + 2)
            for c in range(C):
                m.submodules[f"selective{c}"] = s = SelectiveRepeat(
                    seq_bits=N, slot_bits=sb, window_slots=Wp, diff_bits=D
                )
                m.d.comb += [
                    s.restart.eq(self.restart),
                    s.sent_resync.eq(rec.sent_resync),
                    s.live.eq(self.live),
                    s.resync_due.eq(rec.resync_due),
                    s.confirmed.eq(n.confirmed[c]),
                    s.confirmed_after.eq(n.confirmed_after[c]),
                ]
                # The redo queue of the class (the frames to send again), driven by its part.
                m.submodules[f"redo{c}"] = redo = Queue(width=N, depth=Wp)
                m.d.comb += [
                    redo.clear.eq(s.redo_clear),
                    redo.push.eq(s.redo_push),
                    redo.data.eq(s.redo_data),
                    redo.pop.eq(s.redo_pop),
                    s.redo_head.eq(redo.head),
                ]
                n.srs.append(s)
                n.redo.append(redo)
            # A RESYNC resumes each class at its top; a restart at the first unconfirmed frame.
            n.resume = [Mux(self.restart, n.confirmed[c], n.srs[c].top) for c in range(C)]
            # The frame each class sends from: the one named by its REPLAY while it is sent again.
            n.frame_seq = [Mux(n.srs[c].replaying, n.srs[c].replay_seq, n.send_seq[c]) for c in range(C)]
            for c in range(C):
                m.d.comb += n.srs[c].resume.eq(n.resume[c])
        else:
            n.resume, n.frame_seq = n.confirmed, n.send_seq

        m.submodules.reverse = n.reverse = reverse = Queue(width=self.reverse_layout.size, depth=self._entries)
        m.submodules.expect = n.expect = expect = Queue(
            width=self.expect_layout.size, depth=self._entries, lookahead=True
        )
        n.rev_head = data.View(self.reverse_layout, reverse.head)
        n.exp_head = data.View(self.expect_layout, expect.head)
        # Full mode: the echo part of a last-slice entry has left (reverse) or been matched (expect).
        n.rev_half, n.exp_half = Signal(name="rev_half"), Signal(name="exp_half")
        sticky = Signal()
        m.d.sync += sticky.eq(
            sticky
            | reverse.overflow
            | expect.overflow
            | (Cat(*[q_.overflow for q_ in n.redo]).any() if self._selective else 0)
        )
        m.d.comb += [
            self.queue_overflow.eq(sticky),
            reverse.clear.eq(self.restart | self.rx_resync),
            expect.clear.eq(self.restart | rec.sent_resync),
        ]
        m.submodules.replay_store = n.store = ReplayStore(num_classes=C, seq_bits=N, window_slots=Wp, window=self._W)
        m.submodules.takeout = n.takeout = take_out.TakeOut(num_classes=C, seq_bits=N)
        # No frame is handed in from a settle's request through the cycle after it applies, nor
        # while its take-out is busy (10.6): the hold of the next cycle, into ready_ahead, from
        # early signals only (a take-out that a settle starts is covered by the cycle after it).
        n.hold_next = self.settle_load | self.settle_pending | n.takeout.busy_stays
        # Entangling or settling: the receiver reconciles (3.5, 10.6).
        n.recon_apply = self.entangle | self.settle
        m.submodules.delivery = n.delivery = Delivery(
            num_classes=C, seq_bits=N, slot_bits=sb, read_slices=self._read_slices
        )
        m.submodules.reconcile = n.recon = Reconcile(num_classes=C, count_bits=K, seq_bits=N, slot_bits=sb)
        m.submodules.record = n.record = ExpectRecorder(
            num_classes=C,
            full=self._full,
            seq_bits=N,
            expect_layout=self.expect_layout,
            time_bits=self._time_bits,
            rtt_bits=self._rtt_bits,
            margin_slack=self._margin_slack,
            margin_quiet=self._margin_quiet,
        )
        # The expect queue's entry to push, a register (PROTOCOL.md 2.2): the recorder's.
        m.d.comb += [expect.push.eq(n.record.push), expect.data.eq(n.record.e_entry)]
        # The head is the tight entry (golden ``expect[0].tight``): the first pushed after the
        # RESYNC that cleared the queue, until it leaves.
        n.head_tight = Signal(name="head_tight")
        with m.If(expect.clear | expect.pop):
            m.d.sync += n.head_tight.eq(0)
        with m.Elif(expect.push & n.record.e_tight):
            m.d.sync += n.head_tight.eq(1)

    def _user_side(self, m, n):
        """The user side: frames handed in (the replay store writes them) and delivered."""
        C, store, delivery = self._C, n.store, n.delivery
        n.send_seq_next = []
        for c in range(C):
            wiring.connect(m, wiring.flipped(self.frames_in[c]), store.frames_in[c])
            wiring.connect(m, delivery.frames_out[c], wiring.flipped(self.frames_out[c]))
            port = self.frames_in[c]
            m.d.comb += [
                store.room[c].eq(n.ready_ahead[c]),
                store.next_seq[c].eq(n.next_seq[c]),
                store.frame_seq[c].eq(n.frame_seq[c]),
                delivery.delivered[c].eq(n.delivered[c]),
            ]
            with m.If(port.valid & port.ready):
                m.d.sync += [n.next_seq[c].eq(n.next_seq_after[c]), n.next_seq_after[c].eq(n.next_seq_after[c] + 1)]
            # The send pointer's next value: back to the resume point on a RESYNC or restart,
            # one frame on when S sends a frame's last slice.
            send_seq_next = Signal(self._seq_bits, name=f"send_seq_next{c}")
            m.d.comb += send_seq_next.eq(Mux(n.rewind, n.resume[c], Mux(n.adv[c], n.send_seq_after[c], n.send_seq[c])))
            n.send_seq_next.append(send_seq_next)
            m.d.sync += n.send_seq_after[c].eq(
                Mux(n.rewind, n.resume[c] + 1, Mux(n.adv[c], n.send_seq_after[c] + 1, n.send_seq_after[c]))
            )
        n.takes = [delivery.take[c] for c in range(C)]

    def _reconcile(self, m, n):
        """Reconciliation, computed ahead: its inputs do not move in training (receiver.py)."""
        recon = n.recon
        m.d.comb += [
            recon.peer_half.eq(self.peer_half),
            recon.peer_half_in.eq(self.peer_half_in),
            recon.peer_store.eq(self.peer_store),
            recon.entangle.eq(self.entangle),
            recon.settle.eq(self.settle),
            recon.settle_due.eq(self.settle_due),
            self.delivered_recon.eq(recon.delivered_recon),
            self.conflicts.eq(recon.conflicts),
        ]
        for c in range(self._C):
            m.d.comb += [recon.delivered[c].eq(n.delivered[c]), recon.pending[c].eq(n.pending_frames[c])]
        n.recon_delivered = list(recon.recon_delivered)
        n.delivers = list(recon.delivers)

    def _rx_data(self, m, n):
        """A: a data slice (golden ``Framer.rx_data``), and a REPLAY that announces a frame sent again."""
        C, K, sel, full = self._C, self._count_bits, self._selective, self._full
        per_class = self._per_class
        cls, index, sl = self.rx_cls, self.rx_index, self.rx_slice
        rx_index, rx_count, rx_crc, discard = n.rx_index, n.rx_count, n.rx_crc, n.rec.discard
        mem_full, window_full = n.mem_full_ahead, n.window_full_ahead
        # Selective repeat, receiver: the frame being assembled replaces the held copy of
        # sequence ``replace_seq`` (``replace_valid``). (The replaced frame's count: K bits, as
        # the memory address and the digest's sequence are no wider.)
        if sel:
            replace_valid, replace_seq = per_class("replace_valid", 1), per_class("replace_seq", K)
        # Judged per class, without selecting the class first: a slice of class c (``mine``) is
        # taken when it is next in sequence and the memory has room.
        mine = [self.rx_data & self.rx_data_class[c] for c in range(C)]
        in_seq = [index == rx_index[c] for c in range(C)]
        # A frame sent again (selective repeat) is a new frame for neither the memory nor the
        # window: it is written over the copy held.
        new = [~replace_valid[c] for c in range(C)] if sel else [Const(1)] * C
        took_c = [mine[c] & in_seq[c] & ~(mem_full[c] & new[c]) & ~discard for c in range(C)]
        complete_c = [took_c[c] & self.rx_last & new[c] & ~window_full[c] for c in range(C)]
        replaced_c = [took_c[c] & self.rx_last & ~new[c] for c in range(C)]
        took, complete, replaced = Cat(*took_c).any(), Cat(*complete_c).any(), Cat(*replaced_c).any()
        # While discarding, a slice of a class the end has is dropped silently, not malformed.
        n.data_malformed = self.rx_data & ~Cat(*[mine[c] & (in_seq[c] | discard) for c in range(C)]).any()
        # REPLAY (golden Framer.rx_replay): the next frame of the class replaces the one named,
        # which must be pending, at a frame boundary, with no replacement under way; otherwise a
        # slice was lost. A go-back-N end never receives one (malformed).
        replay_lost = Const(0)
        if sel:
            replay = fields.view(enc.REPLAY_BODY, self.rx_body)
            r_cls, r_seq = replay.cls, replay.seq[:K]
            n.replay_malformed = self.rx_replay & (r_cls >= C)
            n.replay_pending = per_class("replay_pending", 1)
            lost = []
            for c in range(C):
                asked = self.rx_replay & (r_cls == c) & ~discard
                # The frame named is pending (judged a cycle ahead, in stage C, in _rx_counts).
                in_place = (rx_index[c] == 0) & ~replace_valid[c] & n.replay_pending[c]
                with m.If(asked & in_place):
                    m.d.sync += [replace_valid[c].eq(1), replace_seq[c].eq(r_seq)]
                with m.If(replaced_c[c] | self.rx_resync | self.restart):
                    m.d.sync += replace_valid[c].eq(0)
                lost.append(asked & ~in_place)
            replay_lost = Cat(*lost).any()
        else:
            n.replay_malformed = self.rx_replay
        # A slice lost (one out of sequence), no room for it, a frame beyond the window or a
        # REPLAY out of place: the receiver drops data until the peer's RESYNC and asks for it,
        # again at each frame's end.
        n.rx_lost = (
            ~discard
            & Cat(
                *[
                    mine[c] & (~in_seq[c] | (mem_full[c] & new[c]) | (self.rx_last & new[c] & window_full[c]))
                    for c in range(C)
                ]
            ).any()
        ) | replay_lost
        n.nak_set = n.rx_lost | (discard & self.rx_data & Cat(*mine).any() & self.rx_last)
        first = crc32_first()
        # The slice enters the receive memory a cycle later, from registers (receiver.py).
        delivery = n.delivery
        m.d.comb += [delivery.took.eq(Cat(*took_c)), delivery.index.eq(index), delivery.slice.eq(sl)]
        for c in range(C):
            addr = Mux(replace_valid[c], replace_seq[c], rx_count[c]) if sel else rx_count[c]
            m.d.comb += delivery.addr[c].eq(addr)
            with m.If(took_c[c]):
                m.d.sync += rx_index[c].eq(index + 1)
            # Any DATA word of the class moves the running digest, also one not taken or outside
            # a session: a frame's digest starts afresh at its slice 0, and a frame completed
            # with a digest so spoilt is completed in the cycle before a restart cycle, whose
            # return the restart drops (a slice not taken always restarts the end).
            with m.If(self.rx_data_class[c]):
                m.d.sync += rx_crc[c].eq(Mux(index == 0, first, crc32_advance(m, rx_crc[c])) ^ self.rx_nslice)
            with m.If(complete_c[c]):
                m.d.sync += rx_count[c].eq(rx_count[c] + 1)
        # The returns of this word enter the reverse queue next cycle, with the frame's digest
        # taken from the class's running CRC after its last slice.
        n.ret_valid, ret = Signal(name="ret_valid"), Signal(self.reverse_layout, name="ret")
        ret_seq = Signal(K)
        for c in range(C):
            with m.If(cls == c):
                m.d.comb += ret_seq.eq(Mux(replace_valid[c], replace_seq[c], rx_count[c]) if sel else rx_count[c])
        m.d.sync += [n.ret_valid.eq(took if full else complete | replaced), ret.cls.eq(cls), ret.seq.eq(ret_seq)]
        if full:
            m.d.sync += [ret.index.eq(index), ret.slice.eq(sl), ret.digest.eq(complete | replaced)]
        ret_crc = Signal(enc.DIGEST_CRC_BITS)
        for c in range(C):
            with m.If(ret.cls == c):
                m.d.comb += ret_crc.eq(rx_crc[c] ^ enc.CRC32_XOROUT)
        push = Signal(self.reverse_layout)
        m.d.comb += [
            push.eq(ret),
            push.crc.eq(ret_crc),
            n.reverse.push.eq(n.ret_valid),
            n.reverse.data.eq(push),
        ]  # dropped if the queue clears
        n.complete_c = complete_c

    def _rx_returns(self, m, n):
        """A: an echo or a digest against the oldest expected return (golden ``Framer.rx_echo``,
        ``rx_digest``)."""
        C, K, sel, full = self._C, self._count_bits, self._selective, self._full
        expect, exp_head, exp_half, rec = n.expect, n.exp_head, n.exp_half, n.rec
        head_digest = exp_half if full else Const(1)
        head_slice = expect.head_valid & ~head_digest
        n.popped = popped = Signal()
        echo_in, digest_in = self.rx_echo & ~rec.stale, self.rx_digest & ~rec.stale
        n.echo_malformed = echo_in & ~head_slice
        n.digest_malformed = digest_in & ~(expect.head_valid & head_digest)
        echo_mismatch = echo_in & head_slice
        # The word's fields are compared with the head a cycle ahead, in stage C, against every
        # entry that can be the head when A applies the word (this head, its successor in the
        # queue, the entry being pushed into an empty queue), into registers; A selects by where
        # the head came from. The wide equalities so stay off A's paths.
        candidates = (exp_head, data.View(self.expect_layout, expect.successor), n.record.e_entry)

        def ahead(name, test):
            flags = [Signal(name=f"{name}_ahead_{source}") for source in ("held", "successor", "pushed")]
            m.d.sync += [flag.eq(test(entry)) for flag, entry in zip(flags, candidates)]
            return Mux(expect.loaded.from_memory, flags[1], Mux(expect.loaded.from_push, flags[2], flags[0]))

        n.ahead = ahead

        def matches_head(name, word, key):
            return ahead(name, lambda entry: word == key(entry))

        n.c_body = c_body = self.c_slice[: enc.CTL_BODY_BITS]
        # The digest's fields (its reserved bits are judged apart: digest_malformed).
        fields_in = fields.view(enc.DIGEST_BODY, c_body)
        got = Cat(fields_in.crc, fields_in.seq, fields_in.cls)
        name_lsb = enc.DIGEST_BODY.lsb("seq")  # the seq and cls fields name the frame
        n.digest_ok = digest_ok = digest_in & ~n.digest_malformed
        n.digest_names = lambda e: got == _digest_body(e, K)
        digest_equal = ahead("digest_equal", n.digest_names)
        n.digest_match = digest_match = digest_ok & digest_equal
        # Selective repeat: a digest that names the frame expected with another CRC (its payload
        # was hit) queues that frame to be sent again, unless recovery keeps failing.
        # Judged per class: that class's frame is queued.
        n.payload_hit = Const(0)
        if sel:
            named = got[name_lsb:]  # the frame the digest names, whatever its CRC

            def hit_in(c):
                return lambda e: (named == _digest_name(e, K)) & (got[:name_lsb] != e.crc) & (e.cls == c)

            can_replay = rec.can_replay
            n.payload_hits = [digest_ok & ahead(f"payload_hit{c}", hit_in(c)) & can_replay for c in range(C)]
            n.payload_hit = Cat(*n.payload_hits).any()
            # The digest's anomaly, ~match & ~hit, from flags of its own: it names another frame
            # (judged ahead like the others), or it names this one with another CRC when no
            # replay may be sent. So recovery does not wait for the per-class hits.
            unnamed = ahead("digest_unnamed", lambda e: named != _digest_name(e, K))
            n.digest_anomaly = digest_ok & (unnamed | (~digest_equal & ~can_replay))
        else:
            n.digest_anomaly = digest_ok & ~digest_match
        if full:
            echo_mismatch = echo_mismatch & ~matches_head(
                "echo_equal", Cat(self.c_cls, self.c_index, self.c_slice), lambda e: Cat(e.cls, e.index, e.slice)
            )
        n.echo_mismatch = echo_mismatch
        with m.If((echo_in & head_slice) | digest_ok):
            m.d.comb += popped.eq(1)
        if full:
            # An echo of a last slice leaves its entry's digest behind; a digest ends the entry.
            with m.If(self.rx_echo & head_slice & exp_head.digest):
                m.d.sync += exp_half.eq(1)
            with m.Elif(popped):
                m.d.comb += expect.pop.eq(1)
                m.d.sync += exp_half.eq(0)
        else:
            m.d.comb += expect.pop.eq(popped)

    def _rx_confirm(self, m, n):
        """A: a digest confirms a frame (golden ``Framer.advance``); the window's room."""
        C, W, sel = self._C, self._W, self._selective
        exp_head, confirmed, confirmed_after = n.exp_head, n.confirmed, n.confirmed_after
        unconfirmed, room = n.unconfirmed, n.room_ahead
        for c in range(C):
            hit = n.digest_match & (exp_head.cls == c)
            if not sel:
                # Go-back-N: digests come in order, so a match is always the first unconfirmed.
                confirm = hit
            else:
                # golden Framer.advance: the first unconfirmed frame is confirmed when its digest
                # matches now or matched before (good), one a cycle, not while a RESYNC is due
                # (the register: golden judges it at the start of the cycle).
                # Whether the head will be this class's first unconfirmed frame when A applies the
                # next word is judged a cycle ahead for each candidate head, against the count as
                # it stands after this cycle's confirm, into registers (as ``matches_head``). The
                # flag holds the digest's equality too, so the confirm selects one flag, not two.
                s = n.srs[c]
                confirm = Signal(name=f"confirm{c}")
                first_match = n.ahead(
                    f"first_match{c}",
                    lambda e: (
                        n.digest_names(e)
                        & (e.cls == c)
                        & Mux(confirm, e.seq == confirmed_after[c], e.seq == confirmed[c])
                    ),
                )
                m.d.comb += confirm.eq(self.live & ~n.rec.resync_due & ((n.digest_ok & first_match) | s.good_first))
                # A frame a digest queues enters the redo queue a cycle later, from registers
                # (golden ``_redo_named``, ``_redo_entering``); a RESYNC or restart drops it.
                entering = Signal(name=f"redo_entering{c}")
                entering_seq = Signal(self._seq_bits, name=f"redo_entering_seq{c}")
                m.d.sync += [entering.eq(n.payload_hits[c] & ~s.redo_clear), entering_seq.eq(exp_head.seq)]
                m.d.comb += [
                    s.hit.eq(hit),
                    s.head_seq.eq(exp_head.seq),
                    s.confirm.eq(confirm),
                    s.queued.eq(entering),
                    s.queued_seq.eq(entering_seq),
                ]
            with m.If(confirm):
                m.d.sync += [
                    confirmed[c].eq(confirmed_after[c]),
                    confirmed_after[c].eq(confirmed_after[c] + 1),
                    n.confirmed_end[c].eq(n.confirmed_end[c] + 1),
                ]
            # Nothing confirms outside UP, where the window may move.
            with m.If(~self.up):
                m.d.sync += n.confirmed_end[c].eq(n.window_from_confirmed[c])
            # Both outcomes of a digest are prepared from the early inputs (a frame handed in) and
            # the late one, whether this digest confirms, selects between them last.
            handed = self.frames_in[c].valid & self.frames_in[c].ready
            left = {k: Signal(len(unconfirmed[c]), name=f"unconfirmed_{k}{c}") for k in ("more", "less")}
            m.d.comb += [left["more"].eq(unconfirmed[c] + 1), left["less"].eq(unconfirmed[c] - 1)]
            if_not = (
                Mux(handed, left["more"], unconfirmed[c]),
                Mux(handed, unconfirmed[c] < W - 1 if W > 1 else 0, room[c]),
            )
            if_confirm = (Mux(handed, unconfirmed[c], left["less"]), Mux(handed, room[c], 1))
            room_next = Mux(confirm, if_confirm[1], if_not[1])
            m.d.sync += [
                unconfirmed[c].eq(Mux(confirm, if_confirm[0], if_not[0])),
                room[c].eq(room_next),
                n.ready_ahead[c].eq(room_next & ~n.hold_next),
            ]

        # The head is late when the cycle passed its deadline. The comparison is made a cycle
        # ahead for every candidate head (as the digest's), into registers, so the recovery it
        # starts meets no carry chain. (A new head can be late at once: its predecessor may
        # have been popped in the cycle it was late, and it was sent a cycle after it.)
        def passed_next_cycle(deadline, name):
            """The next cycle is past ``deadline``: cycle + 1 - deadline, signed, is positive."""
            behind = Signal(self._time_bits, name=name)
            m.d.comb += behind.eq(n.cycle_after - deadline)
            return (behind != 0) & ~behind[-1]

        head_late = n.ahead("head_late", lambda e: passed_next_cycle(e.deadline, "late_next"))
        m.d.comb += self.overdue.eq(n.expect.head_valid & ~n.popped & head_late)

    def _recovery(self, m, n):
        """A: recovery (recovery.py): the word's anomalies and the deadlines start one."""
        rec = n.rec
        tx_word_anomaly = (
            n.echo_malformed | n.echo_mismatch | n.digest_malformed | n.digest_anomaly | (self.rx_nak & ~rec.stale)
        )
        n.resync_take = Signal(name="resync_take")
        m.d.comb += [
            rec.restart.eq(self.restart),
            rec.live.eq(self.live),
            rec.rx_resync.eq(self.rx_resync),
            rec.resync_take.eq(n.resync_take),
            rec.rx_resync_number.eq(fields.view(enc.RESYNC_BODY, self.rx_body).number),
            rec.rx_ack.eq(self.rx_ack),
            rec.c_ack_number.eq(fields.view(enc.RESYNC_ACK_BODY, n.c_body).number),
            rec.rx_lost.eq(n.rx_lost),
            rec.nak_set.eq(n.nak_set),
            rec.word_anomaly.eq(tx_word_anomaly),
            rec.overdue.eq(self.overdue),
            rec.head_tight.eq(n.head_tight),
            rec.popped.eq(n.popped),
            rec.all_confirmed.eq(~Cat(*[u.any() for u in n.unconfirmed]).any()),
            rec.digest_match.eq(n.digest_match),
            rec.commit.eq(self.commit),
            rec.sent_replay.eq(n.sent_replay),
            rec.cycle.eq(n.cycle),
            rec.cycle_after.eq(n.cycle_after),
            rec.rtt.eq(self.rtt),
            self.recovery_anomalies.eq(n.rx_lost + rec.tx_anomaly + n.payload_hit),
        ]
        # The assembly restarts on any RESYNC (the rest of the receiver only on one taken).
        with m.If(self.rx_resync):
            for c in range(self._C):
                m.d.sync += n.rx_index[c].eq(0)

    def _rx_counts(self, m, n):
        """A: the checks of a token's (or a RESYNC's) commit counts (golden ``Framer.rx_token``,
        ``rx_resync``), made a cycle ahead."""
        C, K, sel = self._C, self._count_bits, self._selective
        D = min(K, self._slot_bits + 2)
        delivered, rx_count, recon_delivered = n.delivered, n.rx_count, n.recon_delivered
        c_body = n.c_body
        # A token applied while not UP is the follower's entangling token: it counts from the
        # reconciled state (pending frames all delivered or dropped). A RESYNC carries the same
        # counts and commits the same way, then forgets the frames beyond them.
        # The frames a count commits are at most the window when the count is taken (and none
        # for the follower's entangling token), so they are exact in D bits.
        n.owed_t = owed_t = self._per_class("owed_t", D)
        base = [Mux(self.up, delivered[c], recon_delivered[c]) for c in range(C)]
        # The count must lie in the cyclic range [delivered, rx_count] of the pending frames (at
        # most the window, less than 2**(D-1)): the low D bits within the range's low D bits, and
        # the high bits the low end's, plus one when the low bits wrapped below it. After
        # reconciling nothing is pending: it must equal the count. The range's ends move at
        # this edge in one of five ways (``moves``: each end held, one more frame completed, a
        # token's count committed, a RESYNC's count committed at both ends, both reconciled).
        # The check is made a cycle ahead, in stage C, on the count of the word A applies next,
        # for each of the five, into registers; A selects by the way the ends moved. A count
        # equals an end when it is neither below nor above it in the low bits and the high bits
        # agree.
        moved = {
            "token": Signal(name="moved_token"),
            "resync": Signal(name="moved_resync"),
            "reconciled": Signal(name="moved_reconciled"),
        }
        bad, n.counts_in, n.exact = [], [], []
        for c in range(C):
            count = _class_count(fields.view(enc.TOKEN_BODY, self.rx_body).counts, c, C)
            n.counts_in.append(count)
            owed_up = Signal(D, name=f"owed_up{c}")
            owed_recon = Signal(D, name=f"owed_recon{c}")
            m.d.comb += [
                owed_up.eq(count[:D] - delivered[c][:D]),
                owed_recon.eq(count[:D] - recon_delivered[c][:D]),
                owed_t[c].eq(Mux(self.up, owed_up, owed_recon)),
            ]
            c_count = _class_count(fields.view(enc.TOKEN_BODY, c_body).counts, c, C)
            rx_count_after = Signal(K, name=f"rx_count_after{c}")
            m.d.comb += rx_count_after.eq(rx_count[c][:K] + 1)
            values = {
                "delivered": delivered[c][:K],
                "rx_count": rx_count[c][:K],
                "completed": rx_count_after,
                "committed": count,
                "reconciled": recon_delivered[c][:K],
            }
            # (low end, high end, whether the low bits wrap) for each way the ends move.
            moves = {
                "held": ("delivered", "rx_count", values["delivered"][:D] > values["rx_count"][:D]),
                "completed": ("delivered", "completed", values["delivered"][:D] > rx_count_after[:D]),
                "token": ("committed", "rx_count", count[:D] > values["rx_count"][:D]),
                # Selective: the frames below the count stay pending; go-back-N commits them.
                "resync": (
                    ("delivered", "committed", values["delivered"][:D] > count[:D])
                    if sel
                    else ("committed", "committed", Const(0))
                ),
                "reconciled": ("reconciled", "reconciled", Const(0)),
            }
            completed_q = Signal(name=f"moved_completed{c}")
            m.d.sync += completed_q.eq(n.complete_c[c])

            def judge(word, tag):
                """Where the count ``word`` of the C-stage word lies against the range's ends
                after each move, into registers; returns the selector by the move made."""
                rel = {}
                for name, value in values.items():
                    rel[name] = {
                        "ge": word[:D] >= value[:D],
                        "le": word[:D] <= value[:D],
                        "hi": word[D:] == value[D:] if K > D else Const(1),
                        "hi1": word[D:] == (value[D:] + 1)[: K - D] if K > D else Const(1),
                    }
                judged = {}
                for move, (lo, hi, wraps) in moves.items():
                    lo, hi = rel[lo], rel[hi]
                    flags = {
                        "within": Signal(name=f"{tag}{c}_within_{move}_ahead"),
                        "at_low": Signal(name=f"{tag}{c}_at_low_{move}_ahead"),
                        "at_high": Signal(name=f"{tag}{c}_at_high_{move}_ahead"),
                    }
                    m.d.sync += [
                        flags["within"].eq(
                            Mux(wraps, lo["ge"] | hi["le"], lo["ge"] & hi["le"]) & Mux(lo["ge"], lo["hi"], lo["hi1"])
                        ),
                        flags["at_low"].eq(lo["ge"] & lo["le"] & lo["hi"]),
                        flags["at_high"].eq(hi["ge"] & hi["le"] & hi["hi"]),
                    ]
                    judged[move] = flags

                def select(key):
                    return Mux(
                        moved["reconciled"],
                        judged["reconciled"][key],
                        Mux(
                            moved["resync"],
                            judged["resync"][key],
                            Mux(
                                moved["token"],
                                judged["token"][key],
                                Mux(completed_q, judged["completed"][key], judged["held"][key]),
                            ),
                        ),
                    )

                return select

            select = judge(c_count, "count")
            if sel:
                # A REPLAY names a pending frame: one in [delivered, rx_count), the same range.
                named = judge(fields.view(enc.REPLAY_BODY, c_body).seq[:K], "replay")
                m.d.comb += n.replay_pending[c].eq(named("within") & ~named("at_high"))
            # Reconciliation's next value is computed every cycle (_reconcile); a token of the
            # follower entangling must equal it.
            recon_equal_ahead = Signal(name=f"count{c}_is_reconciled_ahead")
            m.d.sync += recon_equal_ahead.eq(c_count == (delivered[c] + n.delivers[c])[:K])
            bad.append(Mux(self.up, ~select("within"), ~recon_equal_ahead))
            # (count == delivered, count == rx_count), for the flags below.
            n.exact.append((select("at_low"), select("at_high")))
        n.bad, n.base, n.moved = bad, base, moved

    def _rx_commit(self, m, n):
        """A: a token or a RESYNC whose counts are good commits them: the receive counts move."""
        C, sel = self._C, self._selective
        bad, base, moved, owed_t = n.bad, n.base, n.moved, n.owed_t
        delivered, rx_count, recon_delivered = n.delivered, n.rx_count, n.recon_delivered
        commit_in = self.rx_token | self.rx_resync
        token_bad = commit_in & Cat(*bad).any()
        n.token_take = token_take = commit_in & ~Cat(*bad).any()
        m.d.comb += n.resync_take.eq(self.rx_resync & ~Cat(*bad).any())
        # Entangling (also on the follower's token) moves both ends to the reconciled count; a
        # RESYNC taken, both to its count; a token taken, the low end.
        m.d.sync += [
            moved["reconciled"].eq(n.recon_apply),
            moved["resync"].eq(n.resync_take),
            moved["token"].eq(token_take & ~self.rx_resync),
        ]
        for c in range(C):
            with m.If(n.recon_apply):
                m.d.sync += [delivered[c].eq(recon_delivered[c]), rx_count[c].eq(recon_delivered[c])]
            # Entangling moves the window to confirmed + window_now. Nothing confirms while the end
            # is not UP and window_now stands still from the cycle before entangling, so the
            # window already stands there when the end entangles: S's window test never waits for
            # the entangle decision.
            with m.If(~self.up):
                m.d.sync += n.window_end[c].eq(n.window_from_confirmed[c])
            # A selective RESYNC commits nothing: its counts are where the peer resumes.
            with m.If(token_take & ~self.rx_resync if sel else token_take):
                m.d.sync += delivered[c].eq(base[c] + owed_t[c])
            with m.If(n.resync_take):
                m.d.sync += rx_count[c].eq(base[c] + owed_t[c])
            with m.If(self.rx_token_up):
                m.d.sync += n.window_end[c].eq(n.commit_end[c])
        m.d.comb += [
            self.delivered_token.eq(sum(owed_t)),
            self.token_took.eq(token_take & ~self.rx_resync if sel else token_take),
            # Data-plane anomalies are recovered; what recovery cannot mend restarts the end.
            self.malformed.eq(n.data_malformed | n.echo_malformed | n.digest_malformed | n.replay_malformed),
            self.anomaly.eq(token_bad),
        ]

    def _rx_flags(self, m, n):
        """The receiver's registered flags for the next cycle: each case computed from registers,
        then selected by what happened (a frame completed, a token delivered, entangling, a frame
        taken)."""
        C, W, sel = self._C, self._W, self._selective
        Wp, D = 1 << self._slot_bits, min(self._count_bits, self._slot_bits + 2)
        mem_full, window_full = n.mem_full_ahead, n.window_full_ahead
        resync_take, owed_t = n.resync_take, n.owed_t
        for c in range(C):
            done, taken = n.complete_c[c], n.takes[c]
            out_ptr = n.delivery.out_ptr[c]
            # The memory's frames not yet taken (rx_count - out_ptr), kept as a register: the
            # cases of a frame completed and one taken are compared ahead and selected last.
            held = n.occupancy[c]
            # At most 2 W' frames, so exact in the low slot_bits + 2 bits of the two counters.
            after_entangle = Signal(self._slot_bits + 2, name=f"held_recon{c}")
            m.d.comb += after_entangle.eq(n.recon_delivered[c][: self._slot_bits + 2] - out_ptr[: self._slot_bits + 2])
            full_if = {(d, t): held >= 2 * Wp - d + t for d in (0, 1) for t in (0, 1)}
            held_if = {1: Signal(len(held), name=f"held_more{c}"), -1: Signal(len(held), name=f"held_less{c}")}
            m.d.comb += [held_if[1].eq(held + 1), held_if[-1].eq(held - 1)]
            # After a RESYNC the memory holds the frames delivered and not yet taken: all it held
            # when the count is the received count, else fewer than it held (at most 2 W'), so
            # the difference is exact in D bits. Only then can it still be full. The cases of a
            # frame taken or not are computed side by side, from the word and registers.
            count_all = n.exact[c][1]
            after_resync = {t: Signal(D, name=f"held_resync{t}_{c}") for t in (0, 1)}
            m.d.comb += [
                after_resync[0].eq(n.counts_in[c][:D] - out_ptr[:D]),
                after_resync[1].eq(n.counts_in[c][:D] + ~out_ptr[:D]),
            ]
            with m.If(n.recon_apply):
                m.d.sync += [
                    held.eq(after_entangle - taken),
                    mem_full[c].eq(Mux(taken, after_entangle >= 2 * Wp + 1, after_entangle >= 2 * Wp)),
                ]
            with m.Elif(resync_take):
                m.d.sync += [
                    held.eq(
                        Mux(count_all, Mux(taken, held_if[-1], held), Mux(taken, after_resync[1], after_resync[0]))
                    ),
                    mem_full[c].eq(count_all & mem_full[c] & ~taken),
                ]
            with m.Else():
                m.d.sync += [
                    held.eq(Mux(done, Mux(taken, held, held_if[1]), Mux(taken, held_if[-1], held))),
                    mem_full[c].eq(
                        Mux(done, Mux(taken, full_if[1, 1], full_if[1, 0]), Mux(taken, full_if[0, 1], full_if[0, 0]))
                    ),
                ]
            pend = n.pending_frames[c]
            # After a RESYNC the frames below its count stay pending with selective repeat;
            # go-back-N delivered them.
            pend_resync, full_resync = (owed_t[c], owed_t[c] >= W) if sel else (0, 0)
            with m.If(n.recon_apply):
                m.d.sync += [window_full[c].eq(0), pend.eq(0)]
            with m.Elif(resync_take):
                m.d.sync += [window_full[c].eq(full_resync), pend.eq(pend_resync)]
            with m.Elif(n.token_take):
                # A token that delivers frames leaves room; one that delivers none changes nothing.
                # Here the end is UP (a follower's entangling token comes with ``entangle``), so
                # what stays pending is rx_count - count, fewer than half the count space, and
                # none is delivered when count == delivered: no difference of differences.
                m.d.sync += [
                    window_full[c].eq(window_full[c] & n.exact[c][0]),
                    pend.eq((n.rx_count[c][:D] - n.counts_in[c][:D])[:D]),
                ]
            with m.Elif(done):
                m.d.sync += [window_full[c].eq(pend >= W - 1 if W > 1 else 1), pend.eq(pend + 1)]

    def _s_choice(self, m, n):
        """S: the data-plane word of this cycle's choice (golden ``Framer.choose``, PROTOCOL.md 4.2)."""
        C, K, N, sel, full = self._C, self._count_bits, self._seq_bits, self._selective, self._full
        D = min(K, self._slot_bits + 2)
        rec, srs, reverse, rev_head, rev_half = n.rec, n.srs, n.reverse, n.rev_head, n.rev_half
        send_seq, send_seq_after, next_seq, next_seq_after = n.send_seq, n.send_seq_after, n.next_seq, n.next_seq_after
        # Whether each class has a slice to send, (send_seq != next_seq) & (send_seq != window_end)
        # (golden _data_class), kept as a register: its next value is compared ahead for each
        # case of the pointer advancing (S), a frame handed in (the user) and the window moving
        # (A), and selected last.
        n.sendable_ahead = sendable = Signal(C, name="sendable_ahead")
        for c in range(C):
            # After a RESYNC the pointer is back at the resume point (S sent no slice then, so the
            # three cases exclude each other).
            pointer = {0: send_seq[c], 1: send_seq_after[c], "resync": srs[c].top if sel else n.confirmed[c]}
            handed = self.frames_in[c].valid & self.frames_in[c].ready
            limit_if = {0: next_seq[c], 1: next_seq_after[c]}

            # (Entangling leaves the window where it stands: see window_end in _rx_counts.)
            # Every pointer and limit compared lies within W + 1 of the other (the pointer never
            # passes the frames handed in or the window's end, and both are within W of the
            # confirmed count), so they are equal exactly when their low D bits are.
            def differ(x, y):
                return x[:D] != y[:D]

            def sendable_if(h):
                """The next value when a frame is handed in (``h``) or not: the user's handshake,
                the latest of the inputs, is the last select."""
                ok = {
                    a: differ(pointer[a], limit_if[h])
                    & Mux(self.rx_token_up, differ(pointer[a], n.commit_end[c]), differ(pointer[a], n.window_end[c]))
                    for a in pointer
                }
                return Mux(rec.sent_resync, ok["resync"], Mux(n.adv[c], ok[1], ok[0]))

            m.d.sync += sendable[c].eq(Mux(handed, sendable_if(1), sendable_if(0)))
        # Selective repeat: a class also has a word when it is sending a frame again, or has one
        # to send again and is at a frame boundary (then the word is REPLAY).
        # send_slice == 0, kept as a register beside it (it starts S's longest chain).
        n.first_slice_ahead = first_slice = Signal(C, name="first_slice_ahead", init=(1 << C) - 1)
        if sel:
            n.replay_word_c = [n.redo[c].head_valid & ~srs[c].replaying & first_slice[c] for c in range(C)]
            n.avail = avail = Cat(*[sendable[c] | srs[c].replaying | n.replay_word_c[c] for c in range(C)])
        else:
            n.avail = avail = sendable
        n.data_cls = data_cls = Signal(enc.CLASS_BITS)
        for c in range(C):  # highest class wins
            with m.If(avail[c]):
                m.d.comb += data_cls.eq(c)
        any_data = avail.any()
        n.replay_word = replay_word = Signal(name="replay_word")  # the class's word is REPLAY
        replay_head = Signal(N, name="replay_head")  # the sequence it names
        if sel:
            for c in range(C):
                with m.If(data_cls == c):
                    m.d.comb += [replay_word.eq(n.replay_word_c[c]), replay_head.eq(n.redo[c].head)]
        n.rev_digest = rev_digest = rev_half if full else Const(1)
        # A recovery word goes first (golden Framer.choose): RESYNC, RESYNC_ACK, NAK.
        resync_due, ack_due, nak_due = rec.resync_due, rec.ack_due, rec.nak_due
        n.recovery_word = recovery_word = resync_due | ack_due | nak_due
        n.take_return = take_return = ~recovery_word & reverse.head_valid & (rev_digest | ~any_data | n.rr)
        n.cur_slice, n.cur_seq = Signal(enc.INDEX_BITS, name="cur_slice"), Signal(N, name="cur_seq")
        for c in range(C):
            with m.If(data_cls == c):
                m.d.comb += [
                    n.cur_slice.eq(
                        Mux(srs[c].replaying, srs[c].replay_slice, n.send_slice[c]) if sel else n.send_slice[c]
                    ),
                    n.cur_seq.eq(n.frame_seq[c]),
                ]
        digest_body = _digest_body(rev_head, K)
        n.data_turn = data_turn = ~recovery_word & ~take_return & any_data
        m.d.comb += [
            self.s_valid.eq(recovery_word | take_return | any_data),
            self.s_is_data.eq(data_turn & ~replay_word),
            self.s_is_control.eq(recovery_word | (take_return & rev_digest) | (data_turn & replay_word)),
            self.s_code.eq(
                Mux(
                    resync_due,
                    Ctl.RESYNC,
                    Mux(
                        ack_due,
                        Ctl.RESYNC_ACK,
                        Mux(nak_due, Ctl.NAK, Mux(take_return | ~replay_word, Ctl.DIGEST, Ctl.REPLAY)),
                    ),
                )
            ),
        ]
        # RESYNC carries where each class resumes: with selective repeat, past the frames known good.
        resume_counts = Cat(*[srs[c].top[:K] for c in range(C)]) if sel else self.counts
        with m.If(resync_due):
            number = (rec.resync_number + 1)[: enc.RESYNC_BODY.width("number")]
            m.d.comb += self.s_payload.eq(fields.pack(enc.RESYNC_BODY, counts=resume_counts, number=number))
        with m.Elif(ack_due):
            m.d.comb += self.s_payload.eq(fields.pack(enc.RESYNC_ACK_BODY, number=rec.ack_number))
        with m.Elif(nak_due):
            m.d.comb += self.s_payload.eq(0)
        with m.Elif(take_return):
            m.d.comb += self.s_cls.eq(rev_head.cls)
            if full:
                m.d.comb += [
                    self.s_index.eq(rev_head.index),
                    self.s_payload.eq(Mux(rev_half, digest_body, rev_head.slice)),
                ]
            else:
                m.d.comb += self.s_payload.eq(digest_body)
        with m.Else():
            m.d.comb += [self.s_cls.eq(data_cls), self.s_index.eq(n.cur_slice)]
            if sel:
                m.d.comb += self.s_payload.eq(fields.pack(enc.REPLAY_BODY, seq=replay_head[:K], cls=data_cls))

    def _s_commit(self, m, n):
        """S commits its choice (``commit``): the return popped, the pointers moved."""
        C, sel, full = self._C, self._selective, self._full
        srs, reverse, rev_head, rev_half, rr = n.srs, n.reverse, n.rev_head, n.rev_half, n.rr
        send_slice, first_slice, avail = n.send_slice, n.first_slice_ahead, n.avail
        sent_return = self.commit & n.take_return
        n.sent_data = sent_data = self.commit & n.data_turn & ~n.replay_word
        m.d.comb += n.sent_replay.eq(self.commit & n.data_turn & n.replay_word)
        with m.If(sent_return):
            m.d.sync += rr.eq(0)
            if full:
                with m.If(~rev_half & rev_head.digest):
                    m.d.sync += rev_half.eq(1)
                with m.Else():
                    m.d.comb += reverse.pop.eq(1)
                    m.d.sync += rev_half.eq(0)
            else:
                m.d.comb += reverse.pop.eq(1)
        with m.If(sent_data | n.sent_replay):
            m.d.sync += rr.eq(1)
        # Whether each class's next slice is its frame's last, kept as a register beside the slice
        # index: the pointer's advance then waits only for the class choice.
        n.at_last = at_last = Signal(C, name="at_last")
        last = Signal()
        for c in range(C):
            with m.If(n.data_cls == c):
                m.d.comb += last.eq(Mux(srs[c].replaying, srs[c].replay_last, at_last[c]) if sel else at_last[c])
        m.d.comb += [self.slice_sent.eq(sent_data), self.frame_sent.eq(sent_data & last)]
        # Whether S sends class c's slice (``sent_data & (data_cls == c)``) or its REPLAY word,
        # spelled out from registers and ``commit``: a class that is sending a frame again has a
        # word and it is no REPLAY, a return goes first only when it is a digest or its turn, and
        # a higher class with a word wins. So the pointer and queue updates of the class wait
        # for neither the class choice nor the return's turn.
        free = self.commit & ~n.recovery_word & ~(reverse.head_valid & (n.rev_digest | rr))
        sends_slice, sends_replay = [], []
        for c in range(C):
            wins = free & ~avail[c + 1 :].any() if c + 1 < C else free
            if sel:
                sends_slice.append(wins & (srs[c].replaying | (n.sendable_ahead[c] & ~n.replay_word_c[c])))
                sends_replay.append(wins & n.replay_word_c[c])
            else:
                sends_slice.append(wins & n.sendable_ahead[c])
        for c in range(C):
            normal = sends_slice[c] & ~srs[c].replaying if sel else sends_slice[c]
            with m.If(normal):
                m.d.comb += n.adv[c].eq(at_last[c])
                m.d.sync += [
                    send_slice[c].eq(Mux(at_last[c], 0, send_slice[c] + 1)),
                    at_last[c].eq(~at_last[c] & (send_slice[c] == _LAST - 1)),
                    first_slice[c].eq(at_last[c]),
                ]
            m.d.sync += n.send_seq[c].eq(n.send_seq_next[c])
            if sel:
                # REPLAY, then the frame's slices from the head of the redo queue (selective.py).
                m.d.comb += [srs[c].sends_replay.eq(sends_replay[c]), srs[c].sends_slice.eq(sends_slice[c])]
        with m.If(self.token_send):
            m.d.sync += n.commit_from_confirmed

    def _b_and_record(self, m, n):
        """B1 and B2: the slice of the data word S chose (sender.py); then, as it leaves, what the
        peer must return (returns.py)."""
        store, record = n.store, n.record
        m.d.comb += [
            store.sent_data.eq(n.sent_data),
            store.data_cls.eq(n.data_cls),
            store.cur_slice.eq(n.cur_slice),
            store.cur_seq.eq(n.cur_seq),
            self.b_slice.eq(store.b_slice),
            record.b_valid.eq(store.b_valid),
            record.b_cls.eq(store.b_cls),
            record.b_index.eq(store.b_index),
            record.b_seq.eq(store.b_seq),
            record.b_slice.eq(self.b_slice),
            record.cycle.eq(n.cycle),
            record.rtt.eq(self.rtt),
            record.up.eq(self.up),
            record.restart.eq(self.restart),
            record.sent_resync.eq(n.rec.sent_resync),
        ]

    def _end_of_cycle(self, m, n):
        """The end of the cycle: a RESYNC (the receiver forgets what it owed, the sender what it
        expected), the restart cycle (golden ``leave_session``), entangling."""
        with m.If(self.rx_resync):
            m.d.sync += n.rev_half.eq(0)
        with m.If(n.rec.sent_resync):
            # The slices chosen before it are never recorded (golden: an older epoch; returns.py).
            m.d.sync += n.exp_half.eq(0)
            for c in range(self._C):
                m.d.sync += [n.send_slice[c].eq(0), n.at_last[c].eq(0), n.first_slice_ahead[c].eq(1)]
        with m.If(self.restart):
            m.d.sync += [n.rr.eq(0), n.rev_half.eq(0), n.exp_half.eq(0), n.ret_valid.eq(0)]
            for c in range(self._C):
                m.d.sync += [
                    n.rx_index[c].eq(0),
                    n.send_slice[c].eq(0),
                    n.at_last[c].eq(0),
                    n.first_slice_ahead[c].eq(1),
                ]
            m.d.sync += n.commit_from_window
        with m.If(n.recon_apply):
            m.d.sync += n.commit_from_window

    def _settle(self, m, n):
        """Settling (golden ``Framer.settle_take``, PROTOCOL.md 10.6), last in the cycle so that
        its writes stand: the unconfirmed frames go to the take-out, and the next frame of each
        class is numbered from the confirmed count. Not UP, so nothing is sent or confirmed in
        this cycle, and no frame is handed in (``settle_hold``)."""
        C, takeout, store = self._C, n.takeout, n.store
        m.d.comb += [
            takeout.load.eq(self.settle),
            self.takeout_busy.eq(takeout.busy),
            store.take_reading.eq(takeout.reading),
            store.take_addr.eq(takeout.addr),
        ]
        for c in range(C):
            m.d.comb += [
                takeout.next_seq[c].eq(n.next_seq[c]),
                takeout.confirmed[c].eq(n.confirmed[c]),
                takeout.stored[c].eq(store.stored[c]),
                self.unsent[c].eq(n.send_seq[c] != n.next_seq[c]),
            ]
        for c in range(C):
            wiring.connect(m, takeout.taken[c], wiring.flipped(self.taken[c]))
        with m.If(self.settle):
            for c in range(C):
                m.d.sync += [
                    n.next_seq[c].eq(n.confirmed[c]),
                    n.next_seq_after[c].eq(n.confirmed_after[c]),
                    n.unconfirmed[c].eq(0),
                    n.room_ahead[c].eq(1),
                    n.ready_ahead[c].eq(~n.hold_next),
                    n.sendable_ahead[c].eq(0),
                ]
