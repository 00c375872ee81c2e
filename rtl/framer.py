"""The data plane of one end in hardware: twin of golden/framer.py (docs/PROTOCOL.md 4).

Preemptible 64-byte frames per class with Perfect Information Feedback: replay memories
(frames until their digest matches), the window, the ECHO/DIGEST words owed to the peer and the
words the peer must return, in order.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for, ceil_log2

from golden import encoding as enc
from golden.encoding import Ctl

from golden.params import LinkParams, require

from .control import ControlWordBuilder
from .crc import frame_crc_step
from .queue import Queue
from .slice import LinkWord, control_tag, data_tag, echo_tag
from .steps import Steps

FRAME_BITS = enc.SLICES_PER_FRAME * enc.SLICE_BITS
_SEQ_BITS = 16          # frame counters; only differences (at most 2 * window) are ever used
_IDLE = Const(control_tag(Ctl.IDLE).value << enc.SLICE_BITS, enc.WORD_BITS)


def _expect_layout(slot_bits, time_bits):
    return data.StructLayout({
        "digest": 1, "cls": enc.CLASS_BITS, "index": enc.INDEX_BITS, "slot": slot_bits,
        "seq": enc.COUNT_BITS, "crc": enc.DIGEST_CRC_BITS, "sent": time_bits})


class Framer(wiring.Component):
    """Sender and receiver of frames on one end (golden ``Framer``).

    User ports (link clock domain): ``frames_in[c]`` (stream of 512-bit frames, ready while the
    class has room in its window), ``frames_out[c]`` (stream of delivered frames; delivery is not
    flow-controlled by the protocol, so the user must take a frame within ``window`` frame times
    of its delivery or the end raises an overrun anomaly and retrains; nothing is lost).

    Per-cycle events from the endpoint, applied in the golden order: ``entangle_rx`` (reconcile
    with ``peer_half``), one received word (``rx_data``/``rx_echo`` with ``rx_cls``,
    ``rx_index``, ``rx_last``, ``rx_slice``; ``rx_digest`` or ``rx_token`` with ``rx_body``),
    ``restart_rx``, the user's frames, ``entangle_wd`` (reconcile) or ``restart_wd``, and last,
    when ``up_final``, either ``token_send`` (the token carries ``counts``) or the data-plane
    word of the next cycle (``tx_word``).

    Outputs (combinational, this cycle): ``malformed``, ``anomaly`` (receive step),
    ``conflicts`` (classes reconciliation could not account for), ``overdue`` (the oldest word
    the peer must return is late, judged after the receive step), ``counts`` (confirmed count of
    every class after all steps, 6 bits each), ``tx_word`` with ``slice_sent``/``frame_sent``
    (it is a data slice / a frame's last slice); ``delivered`` (register): frames delivered so
    far, all classes, modulo 2**16; ``queue_overflow``.

    Latency: a received word acts within its cycle; a frame handed in can leave as the next
    cycle's word; a delivered frame is on ``frames_out`` from the next cycle. Memories: per class
    a replay memory of W' frames and a receive memory of 2W' (W' = window rounded up to a power
    of two); the ECHO/DIGEST queue and the expect queue hold ``params.return_queue_depth``
    entries (C x window x (1 + 8 in full mode)), the most that can be owed or expected at once
    (PROTOCOL.md 4.5), so ``queue_overflow`` never rises.

    ``params``: a :class:`golden.params.LinkParams` (num_classes, window, echo_mode; max_rtt and
    margin size the echo deadline).
    """

    def __init__(self, params: LinkParams):
        require(params)
        num_classes, window = params.num_classes, params.window
        self._C, self._W, self._full = num_classes, window, params.full_echo
        self._slot_bits = max(1, ceil_log2(window))
        self._slack = params.echo_slack
        self._margin = params.margin
        self._queue_depth = params.return_queue_depth
        # The oldest expected word is checked every UP cycle and is overdue once its age passes
        # the bound, so no age exceeds the largest bound + 1 and none wraps in these bits.
        self._time_bits = bits_for(params.rtt_limit + params.margin + self._slack + 2)
        self.expect_layout = _expect_layout(self._slot_bits, self._time_bits)
        super().__init__({
            "frames_in": In(stream.Signature(FRAME_BITS)).array(num_classes),
            "frames_out": Out(stream.Signature(FRAME_BITS)).array(num_classes),
            "peer_half": In(enc.CTL_BODY_BITS), "rtt": In(params.rtt_bits),
            "entangle_rx": In(1), "entangle_wd": In(1), "restart_rx": In(1), "restart_wd": In(1),
            "rx_data": In(1), "rx_echo": In(1), "rx_digest": In(1), "rx_token": In(1),
            "rx_cls": In(enc.CLASS_BITS), "rx_index": In(enc.INDEX_BITS), "rx_last": In(1),
            "rx_slice": In(enc.SLICE_BITS), "rx_body": In(enc.CTL_BODY_BITS),
            "up_final": In(1), "token_send": In(1),
            "malformed": Out(1), "anomaly": Out(1), "conflicts": Out(3), "overdue": Out(1),
            "counts": Out(enc.COUNT_BITS * num_classes), "tx_word": Out(LinkWord),
            "queue_overflow": Out(1), "delivered": Out(_SEQ_BITS),
            "slice_sent": Out(1), "frame_sent": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        C, W, full = self._C, self._W, self._full
        Wp = 1 << self._slot_bits
        m.submodules.reverse = reverse = Queue(width=enc.WORD_BITS, depth=self._queue_depth)
        m.submodules.expect = expect = Queue(width=self.expect_layout.size, depth=self._queue_depth)
        m.submodules.digest_word = digest_word = ControlWordBuilder()
        cycle = Signal(self._time_bits)
        m.d.sync += cycle.eq(cycle + 1)

        regs = {"rr": Signal()}
        names = ("next_seq", "confirmed", "acked", "last_commit", "send_seq", "rx_count", "delivered", "out_ptr")
        for c in range(C):
            for name in names:
                regs[f"{name}{c}"] = Signal(_SEQ_BITS, name=f"{name}{c}")
            regs[f"send_slice{c}"] = Signal(enc.INDEX_BITS, name=f"send_slice{c}")
            regs[f"rx_index{c}"] = Signal(enc.INDEX_BITS, name=f"rx_index{c}")
            regs[f"tx_crc{c}"] = Signal(enc.DIGEST_CRC_BITS, name=f"tx_crc{c}")
            regs[f"rx_crc{c}"] = Signal(enc.DIGEST_CRC_BITS, name=f"rx_crc{c}")
        s = Steps(m, regs, "fr")

        def diff(a, b):
            return (a - b)[:_SEQ_BITS]

        def counts_field(body, lsb, c):
            return body[lsb + enc.COUNT_BITS * c: lsb + enc.COUNT_BITS * (c + 1)]

        # --- memories ----------------------------------------------------------------------
        replay_send, replay_check, pending_write = [], [], []
        for c in range(C):
            replay = Memory(shape=FRAME_BITS, depth=Wp, init=[])
            pending = Memory(shape=FRAME_BITS, depth=2 * Wp, init=[])
            m.submodules[f"replay{c}"], m.submodules[f"pending{c}"] = replay, pending
            hand_in = replay.write_port()
            port = self.frames_in[c]
            m.d.comb += [port.ready.eq(diff(regs[f"next_seq{c}"], regs[f"confirmed{c}"]) < W),
                         hand_in.addr.eq(regs[f"next_seq{c}"]), hand_in.data.eq(port.payload),
                         hand_in.en.eq(port.valid & port.ready)]
            replay_send.append(replay.read_port(domain="comb"))
            replay_check.append(replay.read_port(domain="comb"))
            pending_write.append(pending.write_port(granularity=enc.SLICE_BITS))
            out = pending.read_port(domain="comb")
            out_ptr, delivered = regs[f"out_ptr{c}"], regs[f"delivered{c}"]
            m.d.comb += [out.addr.eq(out_ptr), self.frames_out[c].payload.eq(out.data),
                         self.frames_out[c].valid.eq(out_ptr != delivered)]

        # --- reconciliation (golden reconcile), used by two steps ----------------------------
        def reconcile(cur):
            n = s.now
            conflicts = []
            for c in range(C):
                conf = counts_field(self.peer_half, enc.READY_CONFIRMED_LSB, c)
                delivered = cur[f"delivered{c}"]
                pend = diff(cur[f"rx_count{c}"], delivered)
                owed = (conf - delivered)[:enc.COUNT_BITS]
                conflict = Signal(name=f"conflict{c}")
                m.d.comb += conflict.eq(owed > pend)
                conflicts.append(conflict)
                new_delivered = (delivered + Mux(conflict, pend, owed))[:_SEQ_BITS]
                m.d.comb += [n[f"delivered{c}"].eq(new_delivered), n[f"rx_count{c}"].eq(new_delivered),
                             n[f"acked{c}"].eq(cur[f"confirmed{c}"]), n[f"last_commit{c}"].eq(cur[f"confirmed{c}"])]
            m.d.comb += self.conflicts.eq(sum(conflicts))

        def leave(cur):
            n = s.now
            m.d.comb += n["rr"].eq(0)
            for c in range(C):
                m.d.comb += [n[f"rx_index{c}"].eq(0), n[f"send_seq{c}"].eq(cur[f"confirmed{c}"]),
                             n[f"send_slice{c}"].eq(0), n[f"last_commit{c}"].eq(cur[f"confirmed{c}"])]

        with s.step("entangle_rx", self.entangle_rx) as cur:
            reconcile(cur)

        # --- receive --------------------------------------------------------------------------
        with s.step("rx_data", self.rx_data) as cur:
            n = s.now
            cls, index, sl = self.rx_cls, self.rx_index, self.rx_slice
            rx_crc, rx_state = Signal(enc.DIGEST_CRC_BITS), Signal(enc.DIGEST_CRC_BITS)
            for c in range(C):
                with m.If(cls == c):
                    m.d.comb += rx_state.eq(cur[f"rx_crc{c}"])
            m.d.comb += rx_crc.eq(frame_crc_step(m, rx_state, index == 0, sl))
            with m.If(cls >= C):
                m.d.comb += self.malformed.eq(1)
            for c in range(C):
                with m.Elif(cls == c):
                    rx_count, delivered = cur[f"rx_count{c}"], cur[f"delivered{c}"]
                    with m.If(index != cur[f"rx_index{c}"]):
                        m.d.comb += [self.malformed.eq(1), self.anomaly.eq(1)]  # slice out of sequence
                    with m.Elif(diff(rx_count, cur[f"out_ptr{c}"]) >= 2 * Wp):
                        m.d.comb += self.anomaly.eq(1)                         # overrun (RTL only)
                    with m.Else():
                        wr = pending_write[c]
                        m.d.comb += [wr.addr.eq(rx_count), wr.data.eq(sl.replicate(enc.SLICES_PER_FRAME)),
                                     wr.en.eq(1 << index), n[f"rx_index{c}"].eq(index + 1), n[f"rx_crc{c}"].eq(rx_crc)]
                        if full:
                            m.d.comb += [reverse.push_a.eq(1), reverse.data_a.eq(Cat(sl, echo_tag(cls, index)))]
                        with m.If(self.rx_last):
                            with m.If(diff(rx_count, delivered) >= W):
                                m.d.comb += self.anomaly.eq(1)                 # frame beyond the window
                            with m.Else():
                                m.d.comb += [n[f"rx_count{c}"].eq(rx_count + 1),
                                             digest_word.code.eq(Ctl.DIGEST),
                                             digest_word.body.eq(Cat(rx_crc ^ enc.CRC32_XOROUT, rx_count[:enc.COUNT_BITS],
                                                                     Const(c, enc.CLASS_BITS)))]
                                push = reverse.push_b if full else reverse.push_a
                                data_ = reverse.data_b if full else reverse.data_a
                                m.d.comb += [push.eq(1), data_.eq(digest_word.word)]

        head = data.View(self.expect_layout, expect.head)
        with s.step("rx_echo", self.rx_echo):
            if not full:
                m.d.comb += [self.malformed.eq(1), self.anomaly.eq(1)]
            else:
                with m.If((expect.count == 0) | head.digest):
                    m.d.comb += [self.malformed.eq(1), self.anomaly.eq(1)]     # echo of nothing sent
                with m.Else():
                    m.d.comb += expect.pop.eq(1)
                    sent = Signal(enc.SLICE_BITS)
                    for c in range(C):
                        m.d.comb += replay_check[c].addr.eq(head.slot)
                        with m.If(head.cls == c):
                            m.d.comb += sent.eq(replay_check[c].data.word_select(head.index, enc.SLICE_BITS))
                    with m.If((self.rx_cls != head.cls) | (self.rx_index != head.index) | (self.rx_slice != sent)):
                        m.d.comb += self.anomaly.eq(1)                         # echo mismatch

        with s.step("rx_digest", self.rx_digest) as cur:
            n = s.now
            with m.If((expect.count == 0) | ~head.digest):
                m.d.comb += [self.malformed.eq(1), self.anomaly.eq(1)]         # digest of nothing sent
            with m.Else():
                m.d.comb += expect.pop.eq(1)
                body = self.rx_body
                got_cls = body[enc.DIGEST_CLASS_LSB:enc.DIGEST_CLASS_LSB + enc.CLASS_BITS]
                got_seq = body[enc.DIGEST_SEQ_LSB:enc.DIGEST_SEQ_LSB + enc.COUNT_BITS]
                got_crc = body[enc.DIGEST_CRC_LSB:enc.DIGEST_CRC_LSB + enc.DIGEST_CRC_BITS]
                with m.If((got_cls != head.cls) | (got_seq != head.seq) | (got_crc != head.crc)):
                    m.d.comb += self.anomaly.eq(1)                             # digest mismatch
                for c in range(C):
                    with m.Elif(head.cls == c):
                        m.d.comb += n[f"confirmed{c}"].eq(cur[f"confirmed{c}"] + 1)

        with s.step("rx_token", self.rx_token) as cur:
            n = s.now
            bad_so_far = Const(0)
            for c in range(C):
                delivered = cur[f"delivered{c}"]
                owed = (counts_field(self.rx_body, enc.TOKEN_COMMIT_LSB, c) - delivered)[:enc.COUNT_BITS]
                bad = owed > diff(cur[f"rx_count{c}"], delivered)
                m.d.comb += n[f"acked{c}"].eq(cur[f"last_commit{c}"])
                with m.If(~bad_so_far & ~bad):
                    m.d.comb += n[f"delivered{c}"].eq(delivered + owed)
                bad_so_far = bad_so_far | bad
            m.d.comb += self.anomaly.eq(bad_so_far)                            # commit beyond received

        # Echo deadline, after this cycle's word (golden echo_overdue).
        left = expect.count - expect.pop
        oldest = data.View(self.expect_layout, Mux(expect.pop, expect.second, expect.head))
        bound = self.rtt + self._margin + self._slack
        m.d.comb += self.overdue.eq((left != 0) & ((cycle - oldest.sent)[:self._time_bits] > bound))

        with s.step("restart_rx", self.restart_rx) as cur:
            leave(cur)

        with s.step("user", 1) as cur:
            for c in range(C):
                port = self.frames_in[c]
                with m.If(port.valid & port.ready):
                    m.d.comb += s.now[f"next_seq{c}"].eq(cur[f"next_seq{c}"] + 1)
                with m.If(self.frames_out[c].valid & self.frames_out[c].ready):
                    m.d.comb += s.now[f"out_ptr{c}"].eq(cur[f"out_ptr{c}"] + 1)

        with s.step("entangle_wd", self.entangle_wd) as cur:
            reconcile(cur)
        with s.step("restart_wd", self.restart_wd) as cur:
            leave(cur)
        m.d.comb += [reverse.clear.eq(self.restart_rx | self.restart_wd),
                     expect.clear.eq(self.restart_rx | self.restart_wd)]

        # --- the next word --------------------------------------------------------------------
        with s.step("token_sent", self.up_final & self.token_send) as cur:
            for c in range(C):
                m.d.comb += s.now[f"last_commit{c}"].eq(cur[f"confirmed{c}"])

        cur = s.now
        sendable = []
        for c in range(C):
            avail = diff(cur[f"send_seq{c}"], cur[f"confirmed{c}"]) < diff(cur[f"next_seq{c}"], cur[f"confirmed{c}"])
            in_window = diff(cur[f"send_seq{c}"], cur[f"acked{c}"]) < W
            ok = Signal(name=f"sendable{c}")
            m.d.comb += ok.eq(avail & in_window)
            sendable.append(ok)
        data_cls = Signal(enc.CLASS_BITS)
        for c in range(C):                                   # highest class wins
            with m.If(sendable[c]):
                m.d.comb += data_cls.eq(c)
        any_data = Cat(*sendable).any()
        rev_pushed = reverse.push_a | reverse.push_b
        rev_head = Mux(reverse.count == 0, reverse.data_a, reverse.head)
        rev_nonempty = (reverse.count != 0) | rev_pushed
        head_is_digest = rev_head[enc.SLICE_BITS + 6:enc.SLICE_BITS + 8] == enc.CONTROL_PREFIX
        # The slice the chosen class sends, and its running digest: one CRC network for all
        # classes, since one slice leaves per cycle.
        send_seq, send_index, send_value, tx_state = (
            Signal(_SEQ_BITS), Signal(enc.INDEX_BITS), Signal(enc.SLICE_BITS), Signal(enc.DIGEST_CRC_BITS))
        for c in range(C):
            with m.If(data_cls == c):
                seq = cur[f"send_seq{c}"]
                # A frame handed in this cycle may go out at once, before its write lands.
                port = self.frames_in[c]
                fresh = port.valid & port.ready & (seq == regs[f"next_seq{c}"])
                m.d.comb += [replay_send[c].addr.eq(seq), send_seq.eq(seq), send_index.eq(cur[f"send_slice{c}"]),
                             send_value.eq(Mux(fresh, port.payload, replay_send[c].data)
                                           .word_select(cur[f"send_slice{c}"], enc.SLICE_BITS)),
                             tx_state.eq(cur[f"tx_crc{c}"])]
        tx_crc = Signal(enc.DIGEST_CRC_BITS)
        m.d.comb += tx_crc.eq(frame_crc_step(m, tx_state, send_index == 0, send_value))
        last = send_index == enc.SLICES_PER_FRAME - 1
        slice_entry, digest_entry = Signal(self.expect_layout), Signal(self.expect_layout)
        m.d.comb += [slice_entry.eq(0), digest_entry.eq(0),           # fields an entry does not use
                     slice_entry.index.eq(send_index), slice_entry.slot.eq(send_seq), slice_entry.sent.eq(cycle + 1),
                     slice_entry.cls.eq(data_cls), digest_entry.digest.eq(1), digest_entry.cls.eq(data_cls),
                     digest_entry.seq.eq(send_seq), digest_entry.crc.eq(tx_crc ^ enc.CRC32_XOROUT),
                     digest_entry.sent.eq(cycle + 1)]
        with s.step("next_word", self.up_final & ~self.token_send) as cur:
            n = s.now
            with m.If(rev_nonempty & (head_is_digest | ~any_data | cur["rr"])):
                m.d.comb += [reverse.pop.eq(1), n["rr"].eq(0), self.tx_word.eq(rev_head)]
            with m.Elif(any_data):
                m.d.comb += [n["rr"].eq(1), self.tx_word.eq(Cat(send_value, data_tag(data_cls, send_index))),
                             self.slice_sent.eq(1), self.frame_sent.eq(last)]
                if full:
                    m.d.comb += [expect.push_a.eq(1), expect.data_a.eq(slice_entry),
                                 expect.push_b.eq(last), expect.data_b.eq(digest_entry)]
                else:
                    m.d.comb += [expect.push_a.eq(last), expect.data_a.eq(digest_entry)]
                for c in range(C):
                    with m.If(data_cls == c):
                        m.d.comb += n[f"tx_crc{c}"].eq(tx_crc)
                        with m.If(last):
                            m.d.comb += [n[f"send_seq{c}"].eq(send_seq + 1), n[f"send_slice{c}"].eq(0)]
                        with m.Else():
                            m.d.comb += n[f"send_slice{c}"].eq(send_index + 1)
            with m.Else():
                m.d.comb += self.tx_word.eq(_IDLE)

        m.d.comb += self.queue_overflow.eq(reverse.overflow | expect.overflow)
        m.d.comb += self.delivered.eq(sum(regs[f"delivered{c}"] for c in range(C)))
        m.d.comb += self.counts.eq(Cat(*[s.now[f"confirmed{c}"][:enc.COUNT_BITS] for c in range(C)]))
        s.commit()
        return m
