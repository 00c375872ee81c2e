"""The data plane of one end in hardware: twin of golden/link/framer.py (docs/PROTOCOL.md 4).

Preemptible 64-byte frames per class with Perfect Information Feedback: replay memories
(frames until their digest matches), the window, the ECHO/DIGEST words owed to the peer (the
reverse queue) and the words the peer must return (the expect queue), in the pipeline of
PROTOCOL.md 2.2, and frame-level recovery (go-back-N with RESYNC, RESYNC_ACK and NAK,
PROTOCOL.md 4.6).
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for, ceil_log2

from golden import encoding as enc
from golden.encoding import Ctl
from golden.params import ACK_SLACK, RECOVERY_LIMIT, WIRE_DELAY, LinkParams, require
from rtl.common.crc import crc32_advance, crc32_first, crc32_of_slice
from rtl.common.queue import Queue

FRAME_BITS = enc.SLICES_PER_FRAME * enc.SLICE_BITS
_LAST = enc.SLICES_PER_FRAME - 1


def _return_layout(full, seq_bits, time_bits=0):
    """A reverse-queue entry (``time_bits`` = 0) or an expect-queue entry: a frame's digest, and
    in full mode a slice whose entry also carries its frame's digest when it is the last one.
    ``seq_bits``: the count's width, or wider where the sender needs the whole sequence."""
    fields = {"cls": enc.CLASS_BITS, "seq": seq_bits, "crc": enc.DIGEST_CRC_BITS}
    if full:
        fields.update({"index": enc.INDEX_BITS, "slice": enc.SLICE_BITS, "digest": 1})
    if time_bits:
        fields["deadline"] = time_bits
    return data.StructLayout(fields)


class Framer(wiring.Component):
    """Sender and receiver of frames on one end (golden ``Framer``).

    User ports (link clock domain): ``frames_in[c]`` (stream of 512-bit frames, ready while the
    class has room in its window), ``frames_out[c]`` (stream of delivered frames, each valid
    from the cycle after its delivery, at most one every two cycles; delivery is not
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
    since the start of the cycle). C stage (the word A applies in the next cycle, as stage C
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
    counts are now acked-pending). B stage: ``b_slice``, the slice of the data word S chose in
    the previous cycle, read from the replay memory.

    Registers: ``counts`` (confirmed count of every class, ``params.count_bits`` each), ``queue_overflow``
    (sticky), ``slice_sent``/``frame_sent`` (combinational pulses with ``commit``).

    Latency and memories (PROTOCOL.md 2.2): returns enter the reverse queue the cycle after A
    took their slice; a slice S sends is built the next cycle and on the wire the one after; the
    frame's digest runs over the slices on the wire the cycle after, and the expect queue records
    them the cycle after that. Per class a replay memory of W' frames and a receive memory of
    2W' (W' = window rounded up to a power of two), both read through synchronous ports so that
    large windows map to block RAM. Both return queues hold ``params.return_queue_entries``, the most that can
    be owed or expected at once
    (PROTOCOL.md 4.5), so ``queue_overflow`` never rises.

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
        self._entries = params.return_queue_entries
        # A deadline lies at most the largest bound ahead of the cycle counter and is judged
        # every cycle while it is the oldest, so a signed difference of these bits never wraps.
        self._time_bits = bits_for(params.rtt_limit + self._margin_slack + 4) + 1
        self._rtt_bits = params.rtt_bits
        self._selective = params.selective
        self.reverse_layout = _return_layout(self._full, K)
        # Selective repeat: the sender keeps the whole sequence of each frame it expects a digest
        # for (it marks the frame good, or queues it to be sent again, by that sequence).
        self.expect_layout = _return_layout(self._full, self._seq_bits if self._selective else K, self._time_bits)
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
            }
        )

    def elaborate(self, platform):
        m = Module()
        C, W, full, N, K = self._C, self._W, self._full, self._seq_bits, self._count_bits
        Wp = 1 << self._slot_bits
        # Counts less than 2 W' apart (so less than 2**K apart, as 2 W' <= 2**K) differ exactly
        # in their low D bits: the hot paths subtract those, not the whole K-bit counts.
        D = min(K, self._slot_bits + 2)

        def counts_field(body, lsb, c):
            return body[lsb + K * c : lsb + K * (c + 1)]

        def digest_fields(entry):
            """A return entry's digest as the DIGEST body carries it (crc, seq, class): the
            sequence field is MAX_COUNT_BITS wide, its bits above the count zero."""
            return Cat(entry.crc, entry.seq[:K], Const(0, enc.MAX_COUNT_BITS - K), entry.cls)

        def per_class(name, width, **kw):
            return [Signal(width, name=f"{name}{c}", **kw) for c in range(C)]

        next_seq, confirmed, last_commit = (per_class(n, N) for n in ("next_seq", "confirmed", "last_commit"))
        # confirmed + 1 and confirmed + W, kept as registers beside it.
        confirmed_after, confirmed_end = (
            per_class("confirmed_after", N, init=1),
            per_class("confirmed_end", N, init=W % (1 << N)),
        )
        # The first frame the window does not allow yet: acked + W (golden ``acked``). A class
        # sends only below it, so its send pointer is never past it and S tests equality.
        window_end = per_class("window_end", N)
        # last_commit + W, kept as a register beside last_commit: the window a token moves to.
        commit_end = per_class("commit_end", N, init=W % (1 << N))
        commit_from_confirmed = [
            x for c in range(C) for x in (last_commit[c].eq(confirmed[c]), commit_end[c].eq(confirmed_end[c]))
        ]
        send_seq, send_slice = per_class("send_seq", N), per_class("send_slice", enc.INDEX_BITS)
        rx_count, delivered, out_ptr = (per_class(n, N) for n in ("rx_count", "delivered", "out_ptr"))
        pending_frames = per_class("pending_frames", N)  # rx_count - delivered, kept as a register
        # rx_count - out_ptr, kept as a register: at most 2 W' frames, so slot_bits + 2 bits (its
        # increments and full tests then meet a 6-bit carry chain in the default build, not 12).
        occupancy = per_class("occupancy", self._slot_bits + 2)
        rx_index = per_class("rx_index", enc.INDEX_BITS)
        rx_crc, tx_crc = per_class("rx_crc", enc.DIGEST_CRC_BITS), per_class("tx_crc", enc.DIGEST_CRC_BITS)
        recon_delivered, recon_conflict = per_class("recon_delivered", N), per_class("recon_conflict", 1)
        rr = Signal()
        # The cycle counter, and beside it the next cycle's number, which the deadlines are
        # judged against (one carry chain each, not two).
        cycle, cycle_after = Signal(self._time_bits), Signal(self._time_bits, name="cycle_after", init=1)
        m.d.sync += [cycle.eq(cycle_after), cycle_after.eq(cycle_after + 1)]

        # Recovery (PROTOCOL.md 4.6). Sender: a RESYNC to send, then its acknowledgement awaited
        # by a deadline; returns arriving meanwhile are stale. Receiver: data dropped until the
        # peer's RESYNC; a NAK and a RESYNC_ACK owed.
        resync_due, awaiting = Signal(name="resync_due"), Signal(name="awaiting_ack")
        resync_number = Signal(enc.RESYNC_NUMBER_BITS, name="resync_number")
        ack_deadline = Signal(self._time_bits, name="ack_deadline")
        failed = Signal(range(RECOVERY_LIMIT + 1), name="failed_recoveries")
        degraded = Signal(name="degraded")
        discard, nak_due, ack_due = Signal(name="discard"), Signal(name="nak_due"), Signal(name="ack_due")
        ack_number = Signal(enc.RESYNC_NUMBER_BITS, name="ack_number")
        stale = Signal(name="stale")
        sent_resync, sent_ack, sent_nak = Signal(name="sent_resync"), Signal(name="sent_ack"), Signal(name="sent_nak")
        resync_take = Signal(name="resync_take")
        sent_replay = Signal(name="sent_replay")  # S sends REPLAY (selective repeat)
        m.d.comb += [
            stale.eq(resync_due | awaiting),
            self.degraded.eq(degraded),
            self.recovery_sent.eq(sent_resync | sent_replay),
        ]
        m.d.comb += self.counts.eq(Cat(*[confirmed[c][:K] for c in range(C)]))

        # Selective repeat (PROTOCOL.md 4.6), per class. Sender: the frames confirmed out of order
        # (``good``, one bit per sequence modulo W'), the resume point max(confirmed, last good
        # + 1) (``top``), the frames to send again, oldest first (``redo``), the one being sent
        # again (``replaying``, at ``replay_slice``) and the frames a RESYNC left to look at
        # (``scan`` up to ``scan_end``). Receiver: the frame being assembled replaces the held copy
        # of sequence ``replace_seq`` (``replace_valid``).
        sel = self._selective
        sb = self._slot_bits
        if sel:
            replaying, replace_valid = per_class("replaying", 1), per_class("replace_valid", 1)
            good, top = per_class("good", Wp), per_class("top", N)
            scan, scan_end = per_class("scan", N), per_class("scan_end", N)
            # The replaced frame's count (K bits: the memory address and the digest's sequence
            # are no wider).
            replace_seq = per_class("replace_seq", K)
            replay_slice, replay_last = per_class("replay_slice", enc.INDEX_BITS), per_class("replay_last", 1)
            # Registers beside them, so that no wide multiplexer of ``good`` lies on a late path:
            # scan + 1, and the good bits at the confirmed count and at the scan position.
            scan_after = per_class("scan_after", N, init=1)
            good_first, good_at_scan = per_class("good_first", 1), per_class("good_at_scan", 1)
            redo = []
            for c in range(C):
                m.submodules[f"redo{c}"] = q_ = Queue(width=N, depth=Wp)
                m.d.comb += q_.clear.eq(self.restart | sent_resync)
                redo.append(q_)
            # A RESYNC resumes each class at its top; a restart at the first unconfirmed frame.
            resume = [Mux(self.restart, confirmed[c], top[c]) for c in range(C)]
            # The frame each class sends from: the redo queue's head while it is sent again.
            frame_seq = [Mux(replaying[c], redo[c].head, send_seq[c]) for c in range(C)]
        else:
            resume, frame_seq = confirmed, send_seq

        m.submodules.reverse = reverse = Queue(width=self.reverse_layout.size, depth=self._entries)
        m.submodules.expect = expect = Queue(width=self.expect_layout.size, depth=self._entries, lookahead=True)
        rev_head = data.View(self.reverse_layout, reverse.head)
        # The expect queue's entry to push, a register (PROTOCOL.md 2.2; written at the end).
        e_valid, e_entry = Signal(name="e_valid"), Signal(self.expect_layout, name="e_entry")
        exp_head = data.View(self.expect_layout, expect.head)
        # Full mode: the echo part of a last-slice entry has left (reverse) or been matched (expect).
        rev_half, exp_half = Signal(name="rev_half"), Signal(name="exp_half")
        sticky = Signal()
        m.d.sync += sticky.eq(
            sticky | reverse.overflow | expect.overflow | (Cat(*[q_.overflow for q_ in redo]).any() if sel else 0)
        )
        m.d.comb += [
            self.queue_overflow.eq(sticky),
            reverse.clear.eq(self.restart | self.rx_resync),
            expect.clear.eq(self.restart | sent_resync),
        ]

        # --- memories ------------------------------------------------------------------------
        adv = Signal(C)  # S sends the last slice of class c's frame
        # The replay buffer's frames not yet confirmed (next_seq - confirmed) and whether it has
        # room (golden frame_ready), registers: ``frames_in.ready`` comes from one.
        # (At most W frames: slot_bits + 1 bits.)
        unconfirmed, room = per_class("unconfirmed", self._slot_bits + 1), per_class("room", 1, init=1)
        # The pointers plus one, kept as registers beside them: S compares them without a carry chain.
        send_seq_after, next_seq_after = per_class("send_seq_after", N, init=1), per_class("next_seq_after", N, init=1)
        send_seq_next = per_class("send_seq_next", N)
        frame_q = per_class("frame_q", FRAME_BITS)
        pending_write, pending_read, takes = [], [], []
        for c in range(C):
            replay = Memory(shape=FRAME_BITS, depth=Wp, init=[])
            pending = Memory(shape=FRAME_BITS, depth=2 * Wp, init=[])
            m.submodules[f"replay{c}"], m.submodules[f"pending{c}"] = replay, pending
            hand_in = replay.write_port()
            port = self.frames_in[c]
            m.d.comb += [
                port.ready.eq(room[c]),
                hand_in.addr.eq(next_seq[c]),
                hand_in.data.eq(port.payload),
                hand_in.en.eq(port.valid & port.ready),
            ]
            with m.If(port.valid & port.ready):
                m.d.sync += [next_seq[c].eq(next_seq_after[c]), next_seq_after[c].eq(next_seq_after[c] + 1)]
            # The frame of the send pointer, read at its register by a synchronous port (block
            # RAM): what B reads the slice S chose from. A frame handed in one cycle is written at
            # its end, before the read of the next cycle that may choose it, so no write-through
            # is needed. The address never waits for S's decision.
            send = replay.read_port(domain="sync")
            rewind = self.restart | sent_resync
            m.d.comb += [
                send_seq_next[c].eq(Mux(rewind, resume[c], Mux(adv[c], send_seq_after[c], send_seq[c]))),
                send.addr.eq(frame_seq[c]),
            ]
            m.d.sync += send_seq_after[c].eq(
                Mux(rewind, resume[c] + 1, Mux(adv[c], send_seq_after[c] + 1, send_seq_after[c]))
            )
            m.d.comb += frame_q[c].eq(send.data)
            pending_write.append(pending.write_port(granularity=enc.SLICE_BITS))
            # The memory is read at the registered pointer and ``valid`` is a register: a frame
            # shows the cycle after it is delivered, and after one is taken its successor shows a
            # cycle later (at most one frame every two cycles; the link delivers one in eight).
            out = pending.read_port(domain="sync")
            out_valid = Signal(name=f"out_valid{c}")
            take = out_valid & self.frames_out[c].ready
            m.d.comb += [
                out.addr.eq(out_ptr[c]),
                self.frames_out[c].payload.eq(out.data),
                self.frames_out[c].valid.eq(out_valid),
            ]
            m.d.sync += out_valid.eq((out_ptr[c] != delivered[c]) & ~take)
            takes.append(take)
            with m.If(take):
                m.d.sync += out_ptr[c].eq(out_ptr[c] + 1)
            pending_read.append(out)

        # --- reconciliation, computed ahead: its inputs do not move in training ----------------
        # Two register stages: the peer's confirmed counts against what this end delivered (from
        # the READY body in the cycle training stores it), then what reconciling delivers. Both
        # are ready two cycles after the first READY of a round, the earliest an end entangles.
        recon_now = self.delivered_recon  # frames reconciliation delivers
        delivers = []
        for c in range(C):
            pend = pending_frames[c]
            owed_q, conflict_q = Signal(K, name=f"recon_owed{c}"), Signal(name=f"recon_over{c}")
            owed = {}
            for name, half in (("stored", self.peer_half), ("arriving", self.peer_half_in)):
                owed[name] = Signal(K, name=f"recon_owed_{name}{c}")
                m.d.comb += owed[name].eq(counts_field(half, enc.READY_CONFIRMED_LSB, c) - delivered[c])
            m.d.sync += [
                owed_q.eq(Mux(self.peer_store, owed["arriving"], owed["stored"])),
                conflict_q.eq(Mux(self.peer_store, owed["arriving"] > pend, owed["stored"] > pend)),
            ]
            delivers.append(Mux(conflict_q, pend, owed_q))
            m.d.sync += [recon_conflict[c].eq(conflict_q), recon_delivered[c].eq(delivered[c] + delivers[c])]
        m.d.sync += recon_now.eq(sum(delivers))
        m.d.comb += self.conflicts.eq(Mux(self.entangle, sum(recon_conflict), 0))

        # --- A: a data slice --------------------------------------------------------------------
        cls, index, sl = self.rx_cls, self.rx_index, self.rx_slice
        # Registered, per class: the receive memory holds 2 W' frames not yet taken (overrun),
        # and the window's frames are all pending (golden "frame beyond the window").
        mem_full, window_full = per_class("mem_full", 1), per_class("window_full", 1)
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
        data_malformed = self.rx_data & ~Cat(*[mine[c] & (in_seq[c] | discard) for c in range(C)]).any()
        # REPLAY (golden Framer.rx_replay): the next frame of the class replaces the one named,
        # which must be pending, at a frame boundary, with no replacement under way; otherwise a
        # slice was lost. A go-back-N end never receives one (malformed).
        replay_lost = Const(0)
        if sel:
            r_cls = self.rx_body[enc.REPLAY_CLASS_LSB : enc.REPLAY_CLASS_LSB + enc.CLASS_BITS]
            r_seq = self.rx_body[enc.REPLAY_SEQ_LSB : enc.REPLAY_SEQ_LSB + K]
            replay_malformed = self.rx_replay & (r_cls >= C)
            replay_pending = per_class("replay_pending", 1)
            lost = []
            for c in range(C):
                asked = self.rx_replay & (r_cls == c) & ~discard
                # The frame named is pending (judged a cycle ahead, in stage C, below).
                in_place = (rx_index[c] == 0) & ~replace_valid[c] & replay_pending[c]
                with m.If(asked & in_place):
                    m.d.sync += [replace_valid[c].eq(1), replace_seq[c].eq(r_seq)]
                with m.If(replaced_c[c] | self.rx_resync | self.restart):
                    m.d.sync += replace_valid[c].eq(0)
                lost.append(asked & ~in_place)
            replay_lost = Cat(*lost).any()
        else:
            replay_malformed = self.rx_replay
        # A slice lost (one out of sequence), no room for it, a frame beyond the window or a
        # REPLAY out of place: the receiver drops data until the peer's RESYNC and asks for it,
        # again at each frame's end.
        rx_lost = (
            ~discard
            & Cat(
                *[
                    mine[c] & (~in_seq[c] | (mem_full[c] & new[c]) | (self.rx_last & new[c] & window_full[c]))
                    for c in range(C)
                ]
            ).any()
        ) | replay_lost
        nak_set = rx_lost | (discard & self.rx_data & Cat(*mine).any() & self.rx_last)
        first = crc32_first()
        # The slice enters the receive memory a cycle later, from registers: its frame is
        # delivered only after a digest round trip.
        w_en, w_addr, w_data = (
            Signal(C * enc.SLICES_PER_FRAME, name="w_en"),
            Signal(self._slot_bits + 1, name="w_addr"),
            Signal(enc.SLICE_BITS, name="w_data"),
        )
        m.d.sync += [w_en.eq(0), w_data.eq(sl)]
        for c in range(C):
            wr = pending_write[c]
            m.d.comb += [
                wr.addr.eq(w_addr),
                wr.data.eq(w_data.replicate(enc.SLICES_PER_FRAME)),
                wr.en.eq(w_en.word_select(c, enc.SLICES_PER_FRAME)),
            ]
            with m.If(took_c[c]):
                m.d.sync += [
                    w_en.word_select(c, enc.SLICES_PER_FRAME).eq(1 << index),
                    # A frame sent again overwrites the held copy slice by slice (golden
                    # swaps it whole at its end): a replacement cut short leaves a mix,
                    # which no count delivers, as the frame is not good until a whole
                    # replacement's digest matches.
                    w_addr.eq(Mux(replace_valid[c], replace_seq[c], rx_count[c]) if sel else rx_count[c]),
                    rx_index[c].eq(index + 1),
                ]
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
        ret_valid, ret = Signal(name="ret_valid"), Signal(self.reverse_layout, name="ret")
        ret_seq = Signal(K)
        for c in range(C):
            with m.If(cls == c):
                m.d.comb += ret_seq.eq(Mux(replace_valid[c], replace_seq[c], rx_count[c]) if sel else rx_count[c])
        m.d.sync += [ret_valid.eq(took if full else complete | replaced), ret.cls.eq(cls), ret.seq.eq(ret_seq)]
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
            reverse.push.eq(ret_valid),
            reverse.data.eq(push),
        ]  # dropped if the queue clears

        # --- A: an echo or a digest against the oldest expected return ------------------------------
        head_digest = exp_half if full else Const(1)
        head_slice = expect.head_valid & ~head_digest
        popped = Signal()
        echo_in, digest_in = self.rx_echo & ~stale, self.rx_digest & ~stale
        echo_malformed = echo_in & ~head_slice
        digest_malformed = digest_in & ~(expect.head_valid & head_digest)
        echo_mismatch = echo_in & head_slice
        # The word's fields are compared with the head a cycle ahead, in stage C, against every
        # entry that can be the head when A applies the word (this head, its successor in the
        # queue, the entry being pushed into an empty queue), into registers; A selects by where
        # the head came from. The wide equalities so stay off A's paths.
        candidates = (exp_head, data.View(self.expect_layout, expect.successor), e_entry)

        def ahead(name, test):
            flags = [Signal(name=f"{name}_{source}") for source in ("held", "successor", "pushed")]
            m.d.sync += [flag.eq(test(entry)) for flag, entry in zip(flags, candidates)]
            return Mux(expect.loaded.from_memory, flags[1], Mux(expect.loaded.from_push, flags[2], flags[0]))

        def matches_head(name, word, key):
            return ahead(name, lambda entry: word == key(entry))

        c_body = self.c_slice[: enc.CTL_BODY_BITS]
        got = Cat(
            c_body[enc.DIGEST_CRC_LSB : enc.DIGEST_CRC_LSB + enc.DIGEST_CRC_BITS],
            c_body[enc.DIGEST_SEQ_LSB : enc.DIGEST_SEQ_LSB + enc.MAX_COUNT_BITS],
            c_body[enc.DIGEST_CLASS_LSB : enc.DIGEST_CLASS_LSB + enc.CLASS_BITS],
        )
        digest_ok = digest_in & ~digest_malformed
        digest_equal = matches_head("digest_equal", got, digest_fields)
        digest_match = digest_ok & digest_equal
        # Selective repeat: a digest that names the frame expected with another CRC (its payload
        # was hit) queues that frame to be sent again, unless recovery keeps failing.
        # Judged per class: that class's frame is queued.
        payload_hit = Const(0)
        if sel:

            def hit_in(c):
                return lambda e: (
                    (got[enc.DIGEST_CRC_BITS :] == Cat(e.seq[:K], Const(0, enc.MAX_COUNT_BITS - K), e.cls))
                    & (got[: enc.DIGEST_CRC_BITS] != e.crc)
                    & (e.cls == c)
                )

            can_replay = failed != RECOVERY_LIMIT
            payload_hits = [digest_ok & ahead(f"payload_hit{c}", hit_in(c)) & can_replay for c in range(C)]
            payload_hit = Cat(*payload_hits).any()
            # The digest's anomaly, ~match & ~hit, from flags of its own: it names another frame
            # (judged ahead like the others), or it names this one with another CRC when no
            # replay may be sent. So recovery does not wait for the per-class hits.
            unnamed = ahead(
                "digest_unnamed",
                lambda e: got[enc.DIGEST_CRC_BITS :] != Cat(e.seq[:K], Const(0, enc.MAX_COUNT_BITS - K), e.cls),
            )
            digest_anomaly = digest_ok & (unnamed | (~digest_equal & ~can_replay))
        else:
            digest_anomaly = digest_ok & ~digest_match
        if full:
            echo_mismatch = echo_mismatch & ~matches_head(
                "echo_equal", Cat(self.c_cls, self.c_index, self.c_slice), lambda e: Cat(e.cls, e.index, e.slice)
            )
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
        for c in range(C):
            hit = digest_match & (exp_head.cls == c)
            if not sel:
                # Go-back-N: digests come in order, so a match is always the first unconfirmed.
                confirm = hit
            else:
                # golden Framer.advance: the first unconfirmed frame is confirmed when its digest
                # matches now or matched before (good), one a cycle, not while a RESYNC is due
                # (the register: golden judges it at the start of the cycle).
                # Whether the head will be this class's first unconfirmed frame when A applies the
                # next word is judged a cycle ahead for each candidate head, against the count as
                # it stands after this cycle's confirm, into registers (as ``matches_head``).
                confirm = Signal(name=f"confirm{c}")
                head_first = ahead(
                    f"head_first{c}",
                    lambda e: (e.cls == c) & Mux(confirm, e.seq == confirmed_after[c], e.seq == confirmed[c]),
                )
                m.d.comb += confirm.eq(self.live & ~resync_due & ((digest_match & head_first) | good_first[c]))
                mark = Mux(hit, Const(1, Wp) << exp_head.seq[:sb], 0)
                unmark = Mux(confirm, Const(1, Wp) << confirmed[c][:sb], 0)
                m.d.sync += good[c].eq((good[c] | mark) & ~unmark)

                # The next cycle's good bit at a position, (good | mark) & ~unmark there: the bit
                # is read from the register, and the late terms only select and combine.
                def good_next(pos, unmarked=True):
                    bit = good[c].bit_select(pos[:sb], 1) | (hit & (exp_head.seq[:sb] == pos[:sb]))
                    return bit & ~(confirm & (confirmed[c][:sb] == pos[:sb])) if unmarked else bit

                # At confirmed + 1 the frame confirmed now is not unmarked (W' >= 2); when nothing
                # is confirmed nothing is unmarked.
                held_good = good_next(confirmed[c], unmarked=False)
                m.d.sync += good_first[c].eq(Mux(confirm, good_next(confirmed_after[c], unmarked=False), held_good))
                # The resume point moves past a frame marked good, at or above it (seq - top in
                # [0, 2**(D-1) - 1), the range in which seq + 1 - top is positive). It never
                # falls below confirmed: a frame is confirmed only after its digest matched,
                # which moved the point past it.
                from_top = Signal(D, name=f"good_from_top{c}")
                m.d.comb += from_top.eq(exp_head.seq[:D] - top[c][:D])
                with m.If(hit & ~from_top[-1] & (from_top != (1 << (D - 1)) - 1)):
                    m.d.sync += top[c].eq(exp_head.seq + 1)
                # The scan looks at one frame a cycle, in a cycle in which the word queued none of
                # its class. (A digest never marks the frame the scan is at: those frames were sent
                # before the RESYNC, so their digests are stale.)
                queued = payload_hits[c]
                look = self.live & ~resync_due & (scan[c] != scan_end[c]) & ~queued
                with m.If(look):
                    m.d.sync += [scan[c].eq(scan_after[c]), scan_after[c].eq(scan_after[c] + 1)]
                # A RESYNC (which never confirms in its cycle) moves the scan to confirmed. Ahead of
                # it the good bits come from the register alone: no digest marks a frame the scan
                # has yet to look at (golden Framer.rx_digest asserts it), and a frame confirmed
                # now is behind the scan next cycle, which ``behind`` below tells.
                m.d.sync += good_at_scan[c].eq(
                    Mux(
                        sent_resync,
                        held_good,
                        Mux(look, good[c].bit_select(scan_after[c][:sb], 1), good[c].bit_select(scan[c][:sb], 1)),
                    )
                )
                # A frame the confirmed count passed while the scan waited was good: not again.
                behind = Signal(D, name=f"scan_behind{c}")
                m.d.comb += behind.eq(scan[c][:D] - confirmed[c][:D])
                again = look & ~good_at_scan[c] & ~behind[-1]
                m.d.comb += [redo[c].push.eq(queued | again), redo[c].data.eq(Mux(queued, exp_head.seq, scan[c]))]
            with m.If(confirm):
                m.d.sync += [
                    confirmed[c].eq(confirmed_after[c]),
                    confirmed_after[c].eq(confirmed_after[c] + 1),
                    confirmed_end[c].eq(confirmed_end[c] + 1),
                ]
            # Both outcomes of a digest are prepared from the early inputs (a frame handed in) and
            # the late one, whether this digest confirms, selects between them last.
            handed = self.frames_in[c].valid & room[c]
            left = {k: Signal(len(unconfirmed[c]), name=f"unconfirmed_{k}{c}") for k in ("more", "less")}
            m.d.comb += [left["more"].eq(unconfirmed[c] + 1), left["less"].eq(unconfirmed[c] - 1)]
            if_not = (
                Mux(handed, left["more"], unconfirmed[c]),
                Mux(handed, unconfirmed[c] < W - 1 if W > 1 else 0, room[c]),
            )
            if_confirm = (Mux(handed, unconfirmed[c], left["less"]), Mux(handed, room[c], 1))
            m.d.sync += [
                unconfirmed[c].eq(Mux(confirm, if_confirm[0], if_not[0])),
                room[c].eq(Mux(confirm, if_confirm[1], if_not[1])),
            ]

        # The head is late when the cycle passed its deadline. The comparison is made a cycle
        # ahead for every candidate head (as the digest's), into registers, so the recovery it
        # starts meets no carry chain. (A new head can be late at once: its predecessor may
        # have been popped in the cycle it was late, and it was sent a cycle after it.)
        def passed_next_cycle(deadline, name):
            """The next cycle is past ``deadline``: cycle + 1 - deadline, signed, is positive."""
            behind = Signal(self._time_bits, name=name)
            m.d.comb += behind.eq(cycle_after - deadline)
            return (behind != 0) & ~behind[-1]

        head_late = ahead("head_late", lambda e: passed_next_cycle(e.deadline, "late_next"))
        m.d.comb += self.overdue.eq(expect.head_valid & ~popped & head_late)

        # --- A: recovery, sender side (golden Framer.recover, rx_ack, rx_nak, watchdog) ------------
        ack_match = Signal(name="ack_match")
        # Whether the acknowledgement's deadline has passed, judged a cycle ahead (as the head's).
        ack_late = Signal(name="ack_late")
        # The acknowledgement's number is compared a cycle ahead, in stage C, with the RESYNC
        # number A will hold (one more when a RESYNC leaves now), into a register.
        ack_number_ok = Signal(name="ack_number_ok")
        c_number = c_body[enc.ACK_NUMBER_LSB : enc.ACK_NUMBER_LSB + enc.RESYNC_NUMBER_BITS]
        m.d.sync += ack_number_ok.eq(
            Mux(sent_resync, c_number == (resync_number + 1)[: enc.RESYNC_NUMBER_BITS], c_number == resync_number)
        )
        m.d.comb += ack_match.eq(self.rx_ack & awaiting & ack_number_ok)
        m.d.sync += ack_late.eq(~sent_resync & passed_next_cycle(ack_deadline, "ack_late_next"))
        tx_word_anomaly = echo_malformed | echo_mismatch | digest_malformed | digest_anomaly | (self.rx_nak & ~stale)
        # At most one recovery a cycle, counted once: the word's anomaly and the deadlines are
        # one event (golden Framer.watchdog gives way to a recovery the word started). The
        # ``~tx_word_anomaly`` below changes no value of ``tx_anomaly`` (the OR holds the word's
        # anomaly already) but the synthesized structure: without it make synth gave link_core
        # 153.3 MHz on its best seed, with it 157.8 on seed 1.
        overdue_act = self.live & ~stale & self.overdue & ~tx_word_anomaly
        ack_overdue = self.live & awaiting & ~ack_match & ack_late
        tx_anomaly = tx_word_anomaly | overdue_act | ack_overdue
        # The end must retrain in the cycle the anomaly is found (PROTOCOL.md 2.2), hence the
        # pulse ``degrade`` beside the register.
        m.d.comb += self.degrade.eq(tx_anomaly & (failed == RECOVERY_LIMIT))
        with m.If(tx_anomaly):
            with m.If(failed == RECOVERY_LIMIT):
                m.d.sync += degraded.eq(1)
            with m.Else():
                m.d.sync += [resync_due.eq(1), awaiting.eq(0)]
        # The count of failed recoveries saturates at the limit, which is all recovery compares it
        # with. (Only selective repeat reaches it with a RESYNC due: a REPLAY sent in the cycle
        # the RESYNC became due.)
        failed_more = Mux(failed == RECOVERY_LIMIT, RECOVERY_LIMIT, failed + 1) if sel else failed + 1
        with m.If(sent_resync):
            m.d.sync += [
                resync_due.eq(0),
                awaiting.eq(1),
                resync_number.eq(resync_number + 1),
                failed.eq(failed_more),
                ack_deadline.eq(cycle + (WIRE_DELAY + self._margin + ACK_SLACK + 1) + self.rtt),
            ]
        with m.If(ack_match):
            m.d.sync += awaiting.eq(0)
            with m.If(~Cat(*[u.any() for u in unconfirmed]).any()):
                m.d.sync += failed.eq(0)
        with m.If(digest_match):
            m.d.sync += failed.eq(0)
        m.d.comb += self.recovery_anomalies.eq(rx_lost + tx_anomaly + payload_hit)

        # --- A: recovery, receiver side (golden Framer.rx_resync, _lost_slice) ---------------------
        # The assembly restarts and discarding ends on any RESYNC; the rest only on one taken.
        with m.If(self.rx_resync):
            m.d.sync += [discard.eq(0), nak_due.eq(0)]
            for c in range(C):
                m.d.sync += rx_index[c].eq(0)
        with m.Else():
            m.d.sync += [discard.eq(discard | rx_lost), nak_due.eq(nak_set | (nak_due & ~sent_nak))]
        with m.If(resync_take):
            m.d.sync += [
                ack_due.eq(1),
                ack_number.eq(self.rx_body[enc.RESYNC_NUMBER_LSB : enc.RESYNC_NUMBER_LSB + enc.RESYNC_NUMBER_BITS]),
            ]
        with m.Else():
            m.d.sync += ack_due.eq(ack_due & ~sent_ack)

        # --- A: a token's commit counts ----------------------------------------------------------
        # A token applied while not UP is the follower's entangling token: it counts from the
        # reconciled state (pending frames all delivered or dropped). A RESYNC carries the same
        # counts and commits the same way, then forgets the frames beyond them.
        # The frames a count commits are at most the window when the count is taken (and none
        # for the follower's entangling token), so they are exact in D bits.
        owed_t = per_class("owed_t", D)
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
        bad, counts_in, exact = [], [], []
        for c in range(C):
            count = counts_field(self.rx_body, enc.TOKEN_COMMIT_LSB, c)
            counts_in.append(count)
            owed_up = Signal(D, name=f"owed_up{c}")
            owed_recon = Signal(D, name=f"owed_recon{c}")
            m.d.comb += [
                owed_up.eq(count[:D] - delivered[c][:D]),
                owed_recon.eq(count[:D] - recon_delivered[c][:D]),
                owed_t[c].eq(Mux(self.up, owed_up, owed_recon)),
            ]
            ahead = counts_field(c_body, enc.TOKEN_COMMIT_LSB, c)
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
            m.d.sync += completed_q.eq(complete_c[c])

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
                        "within": Signal(name=f"{tag}{c}_within_{move}"),
                        "at_low": Signal(name=f"{tag}{c}_at_low_{move}"),
                        "at_high": Signal(name=f"{tag}{c}_at_high_{move}"),
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

            select = judge(ahead, "count")
            if sel:
                # A REPLAY names a pending frame: one in [delivered, rx_count), the same range.
                named = judge(c_body[enc.REPLAY_SEQ_LSB : enc.REPLAY_SEQ_LSB + K], "replay")
                m.d.comb += replay_pending[c].eq(named("within") & ~named("at_high"))
            # Reconciliation's next value is computed every cycle (above); a token of the
            # follower entangling must equal it.
            recon_equal = Signal(name=f"count{c}_is_reconciled")
            m.d.sync += recon_equal.eq(ahead == (delivered[c] + delivers[c])[:K])
            bad.append(Mux(self.up, ~select("within"), ~recon_equal))
            # (count == delivered, count == rx_count), for the flags below.
            exact.append((select("at_low"), select("at_high")))
        commit_in = self.rx_token | self.rx_resync
        token_bad = commit_in & Cat(*bad).any()
        token_take = commit_in & ~Cat(*bad).any()
        m.d.comb += resync_take.eq(self.rx_resync & ~Cat(*bad).any())
        # Entangling (also on the follower's token) moves both ends to the reconciled count; a
        # RESYNC taken, both to its count; a token taken, the low end.
        m.d.sync += [
            moved["reconciled"].eq(self.entangle),
            moved["resync"].eq(resync_take),
            moved["token"].eq(token_take & ~self.rx_resync),
        ]
        for c in range(C):
            with m.If(self.entangle):
                m.d.sync += [delivered[c].eq(recon_delivered[c]), rx_count[c].eq(recon_delivered[c])]
            # Entangling moves the window to confirmed + W. Nothing confirms while the end is not
            # UP, so the window follows confirmed_end all through training and already stands
            # there when the end entangles: S's window test never waits for the entangle decision.
            with m.If(~self.up):
                m.d.sync += window_end[c].eq(confirmed_end[c])
            # A selective RESYNC commits nothing: its counts are where the peer resumes.
            with m.If(token_take & ~self.rx_resync if sel else token_take):
                m.d.sync += delivered[c].eq(base[c] + owed_t[c])
            with m.If(resync_take):
                m.d.sync += rx_count[c].eq(base[c] + owed_t[c])
            with m.If(self.rx_token_up):
                m.d.sync += window_end[c].eq(commit_end[c])
        m.d.comb += [
            self.delivered_token.eq(sum(owed_t)),
            self.token_took.eq(token_take & ~self.rx_resync if sel else token_take),
        ]

        # The two flags for the next cycle: each case computed from registers, then selected by
        # what happened (a frame completed, a token delivered, entangling, a frame taken).
        for c in range(C):
            done, taken = complete_c[c], takes[c]
            # The memory's frames not yet taken (rx_count - out_ptr), kept as a register: the
            # cases of a frame completed and one taken are compared ahead and selected last.
            held = occupancy[c]
            # At most 2 W' frames, so exact in the low slot_bits + 2 bits of the two counters.
            after_entangle = Signal(self._slot_bits + 2, name=f"held_recon{c}")
            m.d.comb += after_entangle.eq(recon_delivered[c][: self._slot_bits + 2] - out_ptr[c][: self._slot_bits + 2])
            full_if = {(d, t): held >= 2 * Wp - d + t for d in (0, 1) for t in (0, 1)}
            held_if = {1: Signal(len(held), name=f"held_more{c}"), -1: Signal(len(held), name=f"held_less{c}")}
            m.d.comb += [held_if[1].eq(held + 1), held_if[-1].eq(held - 1)]
            # After a RESYNC the memory holds the frames delivered and not yet taken: all it held
            # when the count is the received count, else fewer than it held (at most 2 W'), so
            # the difference is exact in D bits. Only then can it still be full. The cases of a
            # frame taken or not are computed side by side, from the word and registers.
            count_all = exact[c][1]
            after_resync = {t: Signal(D, name=f"held_resync{t}_{c}") for t in (0, 1)}
            m.d.comb += [
                after_resync[0].eq(counts_in[c][:D] - out_ptr[c][:D]),
                after_resync[1].eq(counts_in[c][:D] + ~out_ptr[c][:D]),
            ]
            with m.If(self.entangle):
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
            pend = pending_frames[c]
            # After a RESYNC the frames below its count stay pending with selective repeat;
            # go-back-N delivered them.
            pend_resync, full_resync = (owed_t[c], owed_t[c] >= W) if sel else (0, 0)
            with m.If(self.entangle):
                m.d.sync += [window_full[c].eq(0), pend.eq(0)]
            with m.Elif(resync_take):
                m.d.sync += [window_full[c].eq(full_resync), pend.eq(pend_resync)]
            with m.Elif(token_take):
                # A token that delivers frames leaves room; one that delivers none changes nothing.
                # Here the end is UP (a follower's entangling token comes with ``entangle``), so
                # what stays pending is rx_count - count, fewer than half the count space, and
                # none is delivered when count == delivered: no difference of differences.
                m.d.sync += [
                    window_full[c].eq(window_full[c] & exact[c][0]),
                    pend.eq((rx_count[c][:D] - counts_in[c][:D])[:D]),
                ]
            with m.Elif(done):
                m.d.sync += [window_full[c].eq(pend >= W - 1 if W > 1 else 1), pend.eq(pend + 1)]

        # Data-plane anomalies are recovered (above); what recovery cannot mend restarts the end.
        m.d.comb += [
            self.malformed.eq(data_malformed | echo_malformed | digest_malformed | replay_malformed),
            self.anomaly.eq(token_bad),
        ]

        # --- S: the data-plane word of this cycle's choice (PROTOCOL.md 4.2) ---------------------
        # Whether each class has a slice to send, (send_seq != next_seq) & (send_seq != window_end)
        # (golden _data_class), kept as a register: its next value is compared ahead for each
        # case of the pointer advancing (S), a frame handed in (the user) and the window moving
        # (A), and selected last.
        sendable = Signal(C, name="sendable")
        for c in range(C):
            # After a RESYNC the pointer is back at the resume point (S sent no slice then, so the
            # three cases exclude each other).
            pointer = {0: send_seq[c], 1: send_seq_after[c], "resync": top[c] if sel else confirmed[c]}
            handed = self.frames_in[c].valid & self.frames_in[c].ready
            limit_if = {0: next_seq[c], 1: next_seq_after[c]}

            # (Entangling leaves the window where it stands: see window_end above.)
            # Every pointer and limit compared lies within W + 1 of the other (the pointer never
            # passes the frames handed in or the window's end, and both are within W of the
            # confirmed count), so they are equal exactly when their low D bits are.
            def differ(x, y):
                return x[:D] != y[:D]

            ok = {
                a: Mux(handed, differ(pointer[a], limit_if[1]), differ(pointer[a], limit_if[0]))
                & Mux(self.rx_token_up, differ(pointer[a], commit_end[c]), differ(pointer[a], window_end[c]))
                for a in pointer
            }
            m.d.sync += sendable[c].eq(Mux(sent_resync, ok["resync"], Mux(adv[c], ok[1], ok[0])))
        # Selective repeat: a class also has a word when it is sending a frame again, or has one
        # to send again and is at a frame boundary (then the word is REPLAY).
        # send_slice == 0, kept as a register beside it (it starts S's longest chain).
        first_slice = Signal(C, name="first_slice", init=(1 << C) - 1)
        if sel:
            replay_word_c = [redo[c].head_valid & ~replaying[c] & first_slice[c] for c in range(C)]
            avail = Cat(*[sendable[c] | replaying[c] | replay_word_c[c] for c in range(C)])
        else:
            avail = sendable
        data_cls = Signal(enc.CLASS_BITS)
        for c in range(C):  # highest class wins
            with m.If(avail[c]):
                m.d.comb += data_cls.eq(c)
        any_data = avail.any()
        replay_word = Signal(name="replay_word")  # the class's word is REPLAY
        replay_head = Signal(N, name="replay_head")  # the sequence it names
        if sel:
            for c in range(C):
                with m.If(data_cls == c):
                    m.d.comb += [replay_word.eq(replay_word_c[c]), replay_head.eq(redo[c].head)]
        rev_digest = rev_half if full else Const(1)
        # A recovery word goes first (golden Framer.choose): RESYNC, RESYNC_ACK, NAK.
        recovery_word = resync_due | ack_due | nak_due
        take_return = ~recovery_word & reverse.head_valid & (rev_digest | ~any_data | rr)
        cur_slice, cur_seq = Signal(enc.INDEX_BITS, name="cur_slice"), Signal(N, name="cur_seq")
        for c in range(C):
            with m.If(data_cls == c):
                m.d.comb += [
                    cur_slice.eq(Mux(replaying[c], replay_slice[c], send_slice[c]) if sel else send_slice[c]),
                    cur_seq.eq(frame_seq[c]),
                ]
        digest_body = digest_fields(rev_head)
        data_turn = ~recovery_word & ~take_return & any_data
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
        resume_counts = Cat(*[top[c][:K] for c in range(C)]) if sel else self.counts
        with m.If(resync_due):
            m.d.comb += self.s_payload.eq(
                resume_counts << enc.RESYNC_COUNTS_LSB
                | (resync_number + 1)[: enc.RESYNC_NUMBER_BITS] << enc.RESYNC_NUMBER_LSB
            )
        with m.Elif(ack_due):
            m.d.comb += self.s_payload.eq(ack_number << enc.ACK_NUMBER_LSB)
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
            m.d.comb += [self.s_cls.eq(data_cls), self.s_index.eq(cur_slice)]
            if sel:
                m.d.comb += self.s_payload.eq(replay_head[:K] << enc.REPLAY_SEQ_LSB | data_cls << enc.REPLAY_CLASS_LSB)

        sent_return = self.commit & take_return
        sent_data = self.commit & data_turn & ~replay_word
        m.d.comb += sent_replay.eq(self.commit & data_turn & replay_word)
        with m.If(sent_replay):
            # A frame sent again is a recovery too (golden Framer.commit), counted after this
            # cycle's digest (which may have reset the count).
            m.d.sync += failed.eq(Mux(digest_match, 1, failed_more))
        m.d.comb += [
            sent_resync.eq(self.commit & resync_due),
            sent_ack.eq(self.commit & ~resync_due & ack_due),
            sent_nak.eq(self.commit & ~resync_due & ~ack_due & nak_due),
        ]
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
        with m.If(sent_data | sent_replay):
            m.d.sync += rr.eq(1)
        # Whether each class's next slice is its frame's last, kept as a register beside the slice
        # index: the pointer's advance then waits only for the class choice.
        at_last = Signal(C, name="at_last")
        last = Signal()
        for c in range(C):
            with m.If(data_cls == c):
                m.d.comb += last.eq(Mux(replaying[c], replay_last[c], at_last[c]) if sel else at_last[c])
        m.d.comb += [self.slice_sent.eq(sent_data), self.frame_sent.eq(sent_data & last)]
        # Whether S sends class c's slice (``sent_data & (data_cls == c)``) or its REPLAY word,
        # spelled out from registers and ``commit``: a class that is sending a frame again has a
        # word and it is no REPLAY, a return goes first only when it is a digest or its turn, and
        # a higher class with a word wins. So the pointer and queue updates of the class wait
        # for neither the class choice nor the return's turn.
        free = self.commit & ~recovery_word & ~(reverse.head_valid & (rev_digest | rr))
        sends_slice, sends_replay = [], []
        for c in range(C):
            wins = free & ~avail[c + 1 :].any() if c + 1 < C else free
            if sel:
                sends_slice.append(wins & (replaying[c] | (sendable[c] & ~replay_word_c[c])))
                sends_replay.append(wins & replay_word_c[c])
            else:
                sends_slice.append(wins & sendable[c])
        for c in range(C):
            normal = sends_slice[c] & ~replaying[c] if sel else sends_slice[c]
            with m.If(normal):
                m.d.comb += adv[c].eq(at_last[c])
                m.d.sync += [
                    send_slice[c].eq(Mux(at_last[c], 0, send_slice[c] + 1)),
                    at_last[c].eq(~at_last[c] & (send_slice[c] == _LAST - 1)),
                    first_slice[c].eq(at_last[c]),
                ]
            m.d.sync += send_seq[c].eq(send_seq_next[c])
            if sel:
                # REPLAY, then the frame's slices from the head of the redo queue.
                with m.If(sends_replay[c]):
                    m.d.sync += [replaying[c].eq(1), replay_slice[c].eq(0), replay_last[c].eq(0)]
                with m.If(sends_slice[c] & replaying[c]):
                    m.d.sync += [
                        replay_slice[c].eq(replay_slice[c] + 1),
                        replay_last[c].eq(replay_slice[c] == _LAST - 1),
                    ]
                    with m.If(replay_last[c]):
                        m.d.comb += redo[c].pop.eq(1)
                        m.d.sync += replaying[c].eq(0)
                with m.If(self.restart | sent_resync):
                    m.d.sync += replaying[c].eq(0)
                    # golden _forget_replays: a restart forgets the frames known good; a RESYNC
                    # keeps them and looks at every frame below its resume point.
                    m.d.sync += [
                        scan[c].eq(confirmed[c]),
                        scan_after[c].eq(confirmed_after[c]),
                        scan_end[c].eq(resume[c]),
                    ]
                with m.If(self.restart):
                    m.d.sync += [good[c].eq(0), top[c].eq(confirmed[c]), good_first[c].eq(0), good_at_scan[c].eq(0)]
        with m.If(self.token_send):
            m.d.sync += commit_from_confirmed

        # --- B: the slice of the data word chosen last cycle -------------------------------------
        b_valid, b_cls, b_index, b_seq = (
            Signal(name="b_valid"),
            Signal(enc.CLASS_BITS, name="b_cls"),
            Signal(enc.INDEX_BITS, name="b_index"),
            Signal(N, name="b_seq"),
        )
        m.d.sync += [b_valid.eq(sent_data), b_cls.eq(data_cls), b_index.eq(cur_slice), b_seq.eq(cur_seq)]
        frame = Signal(FRAME_BITS)
        for c in range(C):
            with m.If(b_cls == c):
                m.d.comb += frame.eq(frame_q[c])
        m.d.comb += self.b_slice.eq(frame.word_select(b_index, enc.SLICE_BITS))

        # --- on the wire: the sender's running digest over the slices that leave ------------------
        w_valid, w_cls, w_index, w_seq = (
            Signal(name="w_valid"),
            Signal(enc.CLASS_BITS, name="w_cls"),
            Signal(enc.INDEX_BITS, name="w_index"),
            Signal(N, name="w_seq"),
        )
        w_slice = Signal(enc.SLICE_BITS)
        m.d.sync += [
            w_valid.eq(b_valid),
            w_cls.eq(b_cls),
            w_index.eq(b_index),
            w_seq.eq(b_seq),
            w_slice.eq(self.b_slice),
        ]

        # --- a cycle later: what the peer must return, recorded the cycle after (PROTOCOL.md 2.2) --
        # The slice's share of the digest is computed on the wire cycle and registered; the running
        # digest takes it here, where the record reads it (two short XOR trees, not one deep one).
        r_valid, r_cls, r_index, r_seq = (
            Signal(name="r_valid"),
            Signal(enc.CLASS_BITS, name="r_cls"),
            Signal(enc.INDEX_BITS, name="r_index"),
            Signal(N, name="r_seq"),
        )
        r_slice, r_share = Signal(enc.SLICE_BITS), Signal(enc.DIGEST_CRC_BITS, name="r_share")
        m.d.sync += [
            r_valid.eq(w_valid),
            r_cls.eq(w_cls),
            r_index.eq(w_index),
            r_seq.eq(w_seq),
            r_slice.eq(w_slice),
            r_share.eq(crc32_of_slice(m, w_slice)),
        ]
        entry = Signal(self.expect_layout)
        r_crc = Signal(enc.DIGEST_CRC_BITS)
        # Each class's digest advances on its own (the class picks only which one the record
        # reads), with a one-hot enable: the class number would otherwise fan out into every
        # digest bit's logic (placed, such a path took 3.4 ns of routing alone).
        running = Signal(enc.DIGEST_CRC_BITS, name="r_running")
        r_hot = Signal(C, name="r_class")
        m.d.sync += r_hot.eq(Mux(w_valid, 1 << w_cls, 0))
        for c in range(C):
            running_c = Signal(enc.DIGEST_CRC_BITS, name=f"r_running{c}")
            m.d.comb += running_c.eq(Mux(r_index == 0, first, crc32_advance(m, tx_crc[c])) ^ r_share)
            with m.If(r_cls == c):
                m.d.comb += running.eq(running_c)
            with m.If(r_hot[c]):
                m.d.sync += tx_crc[c].eq(running_c)
        m.d.comb += r_crc.eq(running ^ enc.CRC32_XOROUT)
        m.d.comb += [
            entry.cls.eq(r_cls),
            entry.seq.eq(r_seq),
            entry.crc.eq(r_crc),
            entry.deadline.eq(cycle + self.rtt + self._margin_slack),
        ]
        if full:
            m.d.comb += [entry.index.eq(r_index), entry.slice.eq(r_slice), entry.digest.eq(r_index == _LAST)]
        record = r_valid & (Const(1) if full else (r_index == _LAST))
        # The entry waits a cycle in a register before it enters the queue, so the digest's XOR
        # trees end there and not in the queue's memory and head (PROTOCOL.md 2.2).
        recording = self.up & ~self.restart
        m.d.sync += [e_valid.eq(record & recording), e_entry.eq(entry)]
        m.d.comb += [expect.push.eq(e_valid & recording), expect.data.eq(e_entry)]

        # --- a RESYNC: the receiver forgets what it owed, the sender what it expected -------------
        with m.If(self.rx_resync):
            m.d.sync += rev_half.eq(0)
        with m.If(sent_resync):
            # The slices chosen before it are never recorded (golden: an older epoch).
            m.d.sync += [exp_half.eq(0), w_valid.eq(0), r_valid.eq(0), r_hot.eq(0), e_valid.eq(0)]
            for c in range(C):
                m.d.sync += [send_slice[c].eq(0), at_last[c].eq(0), first_slice[c].eq(1)]

        # --- the restart cycle: leave the session (golden leave_session) ----------------------------
        with m.If(self.restart):
            m.d.sync += [
                rr.eq(0),
                rev_half.eq(0),
                exp_half.eq(0),
                ret_valid.eq(0),
                resync_due.eq(0),
                awaiting.eq(0),
                failed.eq(0),
                degraded.eq(0),
                discard.eq(0),
                nak_due.eq(0),
                ack_due.eq(0),
            ]
            for c in range(C):
                m.d.sync += [rx_index[c].eq(0), send_slice[c].eq(0), at_last[c].eq(0), first_slice[c].eq(1)]
            m.d.sync += commit_from_confirmed
        with m.If(self.entangle):
            m.d.sync += commit_from_confirmed
        return m
