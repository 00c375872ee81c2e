"""Selective repeat of one class, sender side (golden ``Framer.advance``, ``rx_digest``,
``_forget_replays``; docs/PROTOCOL.md 4.6). Built only when ``params.recovery == "selective"``.

The frames confirmed out of order (``good``, one bit per sequence modulo W'), the resume point
max(confirmed, last good + 1) (``top``), the frames to send again, oldest first (the ``redo``
queue: a :class:`rtl.common.queue.Queue` of the framer, ``redo<c>``, which this part drives
through its ``redo_*`` ports), the one being sent again (``replaying``, at ``replay_slice``) and
the frames a RESYNC left to look at (``scan`` up to ``scan_end``).

Hand-retimed registers (suffix ``_ahead``): ``good_first_ahead`` and ``good_second_ahead`` (the
good bits at the confirmed count and the frame after it), with the bit after those read a
cycle early (``good_read*``, at c + 2 and c + 3, kept as registers ``good_read_slot*``) out of
two groups of ``good`` read a cycle before that (``good_pair``, from W' = 64), so that no wide
multiplexer of ``good`` lies on a late path and none takes a whole cycle. Beside ``scan``: ``scan_after``
(``scan + 1``), ``scan_more`` (``scan != scan_end``) and ``scan_behind`` (``scan - confirmed``,
whose sign says the confirmed count passed the scan). The scan reads the good bits ahead of
itself, in two registered steps from ``scan_fetch``, a pointer that runs ahead of it
(``_prefetch``): the multiplexers that read ``good`` there depend on registers alone.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden import encoding as enc

_LAST = enc.SLICES_PER_FRAME - 1
# From this W' on, the bits at c + 2 and c + 3 are read out of a pair of groups read a cycle
# earlier (_read_pair). Below it the read is 32-to-1 at most, a path of registers alone of two
# or three LUTs, and the pair's registers only spread the placement: with the pair from W' = 8
# on, make synth placed the default builds (W' = 16) up to 3% lower at some seeds (link_core
# 156.6 MHz at seed 1 against 161.3, link_endpoint 153.9 at seed 2 against 158.0).
PAIR_FROM = 64


class SelectiveRepeat(wiring.Component):
    """The selective-repeat state of one class.

    ==================  ===  ===========  ==============================================================
    port                dir  width        meaning
    ==================  ===  ===========  ==============================================================
    ``restart``         in   1            the restart cycle: forget the frames known good
    ``sent_resync``     in   1            S sends a RESYNC: look at every frame below the resume point
    ``live``            in   1            UP and not the restart cycle
    ``resync_due``      in   1            a RESYNC is due (nothing confirms, the scan waits)
    ``hit``             in   1            A: a digest of this class matched the expected head
    ``head_seq``        in   seq_bits     the expected head's sequence (the frame ``hit`` marks good)
    ``confirm``         in   1            A confirms this class's first unconfirmed frame
    ``confirmed``       in   seq_bits     the confirmed count (register)
    ``confirmed_after`` in   seq_bits     ``confirmed + 1`` (register)
    ``resume``          in   seq_bits     where a RESYNC or restart resumes: ``restart ? confirmed : top``
    ``queued``          in   1            a frame a digest named with another CRC (last cycle) enters the redo queue
    ``queued_seq``      in   seq_bits     that frame
    ``sends_replay``    in   1            S sends this class's REPLAY word
    ``sends_slice``     in   1            S sends a slice of this class
    ``redo_head``       in   seq_bits     the redo queue's head: the oldest frame queued to be sent again
    ``good_first``      out  1            register: the first unconfirmed frame is known good
    ``top``             out  seq_bits     register: the resume point
    ``redo_push``       out  1            push ``redo_data`` into the redo queue
    ``redo_data``       out  seq_bits     the frame queued: the one a digest named, else the scan's
    ``redo_pop``        out  1            register: pop the redo queue's head (its REPLAY was sent last cycle)
    ``redo_clear``      out  1            clear the redo queue (a RESYNC or a restart)
    ``replaying``       out  1            register: the class is sending ``replay_seq`` again
    ``replay_seq``      out  seq_bits     register: the frame sent again (the redo queue's head at its REPLAY)
    ``replay_slice``    out  INDEX_BITS   register: the slice of the frame sent again
    ``replay_last``     out  1            register: ``replay_slice`` is the frame's last
    ==================  ===  ===========  ==============================================================

    Latency: ``good_first``, ``top`` and the ``replay*`` outputs are registers, updated at the
    edge after their cause; the ``redo_*`` outputs act on the queue at that edge (a frame queued
    is at its head the cycle after). The frame a REPLAY names leaves the queue a cycle after the
    REPLAY, from a register (``redo_pop``), and is sent from ``replay_seq``: no decision of S
    reaches the queue's pointers. The queue's head is not read again before the replay's last
    slice, eight cycles on at the earliest, so the order of what is sent is the golden model's,
    which pops at that slice.
    Failure behaviour: a RESYNC or a restart clears the redo queue and the frame being sent
    again; a RESYNC keeps the good frames and scans the frames below its resume point, queueing
    each not known good; a restart forgets them.
    """

    def __init__(self, *, seq_bits, slot_bits, window_slots, diff_bits):
        self._N, self._sb, self._Wp, self._D = seq_bits, slot_bits, window_slots, diff_bits
        N = seq_bits
        super().__init__(
            {
                "restart": In(1),
                "sent_resync": In(1),
                "live": In(1),
                "resync_due": In(1),
                "hit": In(1),
                "head_seq": In(N),
                "confirm": In(1),
                "confirmed": In(N),
                "confirmed_after": In(N),
                "resume": In(N),
                "queued": In(1),
                "queued_seq": In(N),
                "sends_replay": In(1),
                "sends_slice": In(1),
                "redo_head": In(N),
                "good_first": Out(1),
                "top": Out(N),
                "redo_push": Out(1),
                "redo_data": Out(N),
                "redo_pop": Out(1),
                "redo_clear": Out(1),
                "replaying": Out(1),
                "replay_slice": Out(enc.INDEX_BITS),
                "replay_last": Out(1),
                "replay_seq": Out(N),
            }
        )

    def elaborate(self, platform):
        m = Module()
        N, sb, Wp, D = self._N, self._sb, self._Wp, self._D
        hit, head_seq, confirm = self.hit, self.head_seq, self.confirm
        confirmed, confirmed_after = self.confirmed, self.confirmed_after
        replaying, replay_slice, replay_last = Signal(name="replaying"), self.replay_slice, self.replay_last
        good, top = Signal(Wp, name="good"), Signal(N, name="top")
        scan, scan_end = Signal(N, name="scan"), Signal(N, name="scan_end")
        scan_after = Signal(N, name="scan_after", init=1)
        good_first_ahead = Signal(name="good_first_ahead")
        m.d.comb += [
            self.redo_clear.eq(self.restart | self.sent_resync),
            self.replaying.eq(replaying),
            self.good_first.eq(good_first_ahead),
            self.top.eq(top),
        ]

        # --- A: a digest marks its frame good; the confirmed count passes it ----------------------
        mark = Mux(hit, Const(1, Wp) << head_seq[:sb], 0)
        unmark = Mux(confirm, Const(1, Wp) << confirmed[:sb], 0)
        m.d.sync += good.eq((good | mark) & ~unmark)

        # The good bits at the confirmed count c and at c + 1 are kept in registers
        # (``good_first_ahead``, ``good_second_ahead``; c moves only by a confirm, one frame, and
        # a bit only by a mark, an unmark or a restart, which update them too). Their next
        # values are (good | mark) & ~unmark there: a confirm moves both one frame on, so the one
        # read of ``good`` it needs is at c + 2, and that is read a cycle early (_read_third):
        # no wide select of ``good`` lies after the digest. At c + 1 the frame confirmed now is
        # not unmarked (W' >= 2); at c + 2 it is when W' is 2.
        def marked(pos):
            return hit & (head_seq[:sb] == pos[:sb])

        good_second_ahead = Signal(name="good_second_ahead")
        third = 0
        if Wp > 2:
            # c + 2 and c + 3, moved on by a confirm as c is: no adder before the selects.
            slot2, slot3 = Signal(sb, name="good_read_slot2", init=2), Signal(sb, name="good_read_slot3", init=3)
            with m.If(confirm):
                m.d.sync += [slot2.eq(slot3), slot3.eq(slot3 + 1)]
            third = self._read_third(m, good, marked, (slot2, slot3)) | marked(slot2)
        m.d.sync += [
            good_first_ahead.eq(
                Mux(confirm, good_second_ahead | marked(confirmed_after), good_first_ahead | marked(confirmed))
            ),
            good_second_ahead.eq(Mux(confirm, third, good_second_ahead | marked(confirmed_after))),
        ]
        # The resume point moves past a frame marked good, at or above it (seq - top in
        # [0, 2**(D-1) - 1), the range in which seq + 1 - top is positive). It never
        # falls below confirmed: a frame is confirmed only after its digest matched,
        # which moved the point past it.
        from_top = Signal(D, name="good_from_top")
        m.d.comb += from_top.eq(head_seq[:D] - top[:D])
        with m.If(hit & ~from_top[-1] & (from_top != (1 << (D - 1)) - 1)):
            m.d.sync += top.eq(head_seq + 1)
        # The scan looks at one frame a cycle, in a cycle in which no frame a digest queued
        # enters the redo queue. (A digest never marks the frame the scan is at: those frames were sent
        # before the RESYNC, so their digests are stale.)
        queued, rescan = self.queued, self.restart | self.sent_resync
        more = Signal(name="scan_more")
        look = self.live & ~self.resync_due & more & ~queued
        with m.If(look):
            m.d.sync += [scan.eq(scan_after), scan_after.eq(scan_after + 1)]
        m.d.sync += more.eq(Mux(rescan, confirmed != self.resume, Mux(look, scan_after != scan_end, more)))
        good_at_scan = self._prefetch(m, good, good_first_ahead, look)
        # A frame the confirmed count passed while the scan waited was good: not again.
        behind = Signal(D, name="scan_behind")
        # Its four outcomes, chosen by the scan's move and the count's; selected on look ^ confirm
        # instead, the same function maps to 5 more LUTs (W' = 256).
        step = {(0, 0): behind, (1, 0): behind + 1, (0, 1): behind - 1, (1, 1): behind}
        moved = Mux(look, Mux(confirm, step[1, 1], step[1, 0]), Mux(confirm, step[0, 1], step[0, 0]))
        m.d.sync += behind.eq(Mux(rescan, Mux(confirm, -1, 0), moved))
        again = look & ~good_at_scan & ~behind[-1]
        m.d.comb += [self.redo_push.eq(queued | again), self.redo_data.eq(Mux(queued, self.queued_seq, scan))]

        # --- S: REPLAY, then the frame's slices from the head of the redo queue -------------------
        # S's choice arrives late in the cycle; the queue pops at the next edge, from a register.
        popping = Signal(name="redo_popping")
        m.d.comb += self.redo_pop.eq(popping)
        m.d.sync += popping.eq(self.sends_replay & ~rescan)
        with m.If(self.sends_replay):
            m.d.sync += [replaying.eq(1), replay_slice.eq(0), replay_last.eq(0), self.replay_seq.eq(self.redo_head)]
        with m.If(self.sends_slice & replaying):
            m.d.sync += [
                replay_slice.eq(replay_slice + 1),
                replay_last.eq(replay_slice == _LAST - 1),
            ]
            with m.If(replay_last):
                m.d.sync += replaying.eq(0)
        with m.If(rescan):
            m.d.sync += replaying.eq(0)
            # golden _forget_replays: a restart forgets the frames known good; a RESYNC
            # keeps them and looks at every frame below its resume point.
            m.d.sync += [scan.eq(confirmed), scan_after.eq(confirmed_after), scan_end.eq(self.resume)]
        with m.If(self.restart):
            m.d.sync += [good.eq(0), top.eq(confirmed), good_first_ahead.eq(0), good_second_ahead.eq(0)]
        return m

    def _read_third(self, m, good, marked, slots):
        """The good bit at c + 2 (c the confirmed count), as ``good`` holds it now, from registers
        alone: the bits at c + 2 and c + 3 of the last cycle's c are read a cycle early
        (``good_read2``, ``good_read3``), with the marks the last cycle's digest made there; the last
        cycle's confirm (``good_read_moved``) picks one, and its restart (``good_read_cleared``)
        makes it 0. The confirm unmarked the frame at the last cycle's c, which is neither
        (W' >= 4). ``marked(pos)``: this cycle's digest marks ``pos``; ``slots``: c + 2 and c + 3
        (registers)."""
        if self._Wp >= PAIR_FROM:
            bits = self._read_pair(m, good, slots)
        else:
            bits = [good.bit_select(pos, 1) for pos in slots]
        reads = {}
        for k, pos, early in zip((2, 3), slots, bits):
            bit, mark = Signal(name=f"good_read{k}"), Signal(name=f"good_read{k}_marked")
            m.d.sync += [bit.eq(early), mark.eq(marked(pos))]
            reads[k] = bit | mark
        moved, cleared = Signal(name="good_read_moved"), Signal(name="good_read_cleared")
        m.d.sync += [moved.eq(self.confirm), cleared.eq(self.restart)]
        return ~cleared & Mux(moved, reads[3], reads[2])

    def _read_pair(self, m, good, slots):
        """The good bits at c + 2 and c + 3, as ``good`` holds them now, from a narrow register:
        two cycles ahead of their use, the two groups of 2**g bits from c + 2's on are read
        (``good_pair``, with that cycle's marks; its restart clears it), with where c + 2 was in
        them (``good_pair_lo``) and whether that cycle confirmed (``good_pair_moved``). A
        confirm moves c by one, so c + 2 and c + 3 now are two of the three bits from there, and
        the wide select of ``good`` is split over two cycles. A bit of the pair changes after
        it is read only by the unmark at that cycle's c, which is none of the three (W' >= 8).
        ``good_read_next_group`` is the group after c + 2's, kept beside the slots."""
        sb = self._sb
        g = min(4, sb - 2)
        G, hb = 1 << g, sb - g
        slot2, slot3 = slots
        next_group = Signal(hb, name="good_read_next_group", init=((2 >> g) + 1) % (1 << hb))
        with m.If(self.confirm):
            m.d.sync += next_group.eq(slot3[g:] + 1)

        def group(at):
            # The bits of group ``at`` as the next cycle's ``good`` holds them (bar the unmark).
            here = self.hit & (self.head_seq[g:sb] == at)
            return good.word_select(at, G) | Mux(here, Const(1, G) << self.head_seq[:g], 0)[:G]

        pair = Signal(2 * G, name="good_pair")
        lo, moved = Signal(g, name="good_pair_lo", init=2 % G), Signal(name="good_pair_moved")
        m.d.sync += [
            pair.eq(Mux(self.restart, 0, Cat(group(slot2[g:]), group(next_group)))),
            lo.eq(slot2[:g]),
            moved.eq(self.confirm),
        ]
        return [Mux(moved, pair[k + 1 :].bit_select(lo, 1), pair[k:].bit_select(lo, 1)) for k in (0, 1)]

    def _prefetch(self, m, good, good_first_ahead, look):
        """The good bit at the scan position, read ahead of the scan.

        Ahead of the scan the good bits do not change while it runs: no digest marks a frame
        the scan has yet to look at (golden Framer.rx_digest asserts it), and a frame the
        confirmed count passes is behind the scan, which ``behind`` tells. So a bit read
        early is still true when the scan reaches it, and ``good`` is read in two registered
        steps (a group of 16 bits, then the bit), each from registers alone: never on a path
        with whether the scan moves this cycle.

        A RESYNC (which never confirms in its cycle) moves the scan to the confirmed count c,
        whose bit ``good_first_ahead`` holds (``scan_at_first``). The bit of c + 1 is needed
        the cycle after: its group is read every cycle at ``confirmed_after``
        (``scan_first_group``), with the mark a digest makes there in the same cycle. From
        c + 2 on, ``scan_fetch`` reads one group a cycle (``scan_group``) while fewer than three
        bits are read and not yet taken; the bits wait in ``scan_bits``, a ring of four, for
        the scan to take them, one a cycle when it moves.
        """
        sb = self._sb
        lo_bits = min(sb, 4)

        def group_at(pos):
            return good.word_select(pos[lo_bits:sb], 1 << lo_bits) if sb > lo_bits else good

        first_group, first_lo = Signal(1 << lo_bits, name="scan_first_group"), Signal(lo_bits)
        first_marked = Signal(name="scan_first_marked")
        m.d.sync += [
            first_group.eq(group_at(self.confirmed_after)),
            first_lo.eq(self.confirmed_after[:lo_bits]),
            first_marked.eq(self.hit & (self.head_seq[:sb] == self.confirmed_after[:sb])),
        ]
        fetch = Signal(sb, name="scan_fetch")
        fetch_group, fetch_lo = Signal(1 << lo_bits, name="scan_group"), Signal(lo_bits)
        fetch_valid = Signal(name="scan_group_valid")
        bits, rp, wp = Signal(4, name="scan_bits"), Signal(2, name="scan_bits_rp"), Signal(2, name="scan_bits_wp")
        at_first, resumed = Signal(name="scan_at_first"), Signal(name="scan_resumed")

        waiting = Signal(2, name="scan_bits_waiting")
        m.d.comb += waiting.eq(wp - rp)
        read_more = (waiting + fetch_valid) < 3
        m.d.sync += fetch_valid.eq(read_more)
        with m.If(read_more):
            m.d.sync += [fetch_group.eq(group_at(fetch)), fetch_lo.eq(fetch[:lo_bits]), fetch.eq(fetch + 1)]
        with m.If(resumed | fetch_valid):
            bit = Mux(resumed, first_group.bit_select(first_lo, 1) | first_marked, fetch_group.bit_select(fetch_lo, 1))
            m.d.sync += [bits.bit_select(wp, 1).eq(bit), wp.eq(wp + 1)]
        with m.If(look):
            m.d.sync += at_first.eq(0)
            with m.If(~at_first):
                m.d.sync += rp.eq(rp + 1)
        m.d.sync += resumed.eq(self.restart | self.sent_resync)
        with m.If(self.restart | self.sent_resync):
            m.d.sync += [
                at_first.eq(1),
                fetch.eq(self.confirmed_after[:sb] + 1),
                fetch_valid.eq(0),
                rp.eq(0),
                wp.eq(0),
            ]
        return Mux(at_first, good_first_ahead, bits.bit_select(rp, 1))
