"""Frame-level recovery of one end (golden ``Framer.recover``, ``rx_ack``, ``rx_nak``, ``rx_resync``,
``watchdog``; docs/PROTOCOL.md 4.6): the RESYNC, RESYNC_ACK and NAK owed, the acknowledgement
awaited and its deadline, the count of failed recoveries and the degraded flag.

Hand-retimed registers (suffix ``_ahead``): ``ack_number_ok_ahead`` (the RESYNC_ACK's number, compared in
stage C with the number A will hold) and ``ack_late_ahead`` (the acknowledgement's deadline passes
next cycle).
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden import encoding as enc
from golden.params import ACK_SLACK, QUIET_LIMIT, RECOVERY_LIMIT, WIRE_DELAY


class Recovery(wiring.Component):
    """Recovery, sender side (RESYNC and its acknowledgement, the watchdog) and receiver side
    (data dropped until the peer's RESYNC, a NAK and a RESYNC_ACK owed).

    ===================  ===  ==========================  ==================================================
    port                 dir  width                       meaning
    ===================  ===  ==========================  ==================================================
    ``restart``          in   1                           the restart cycle: leave the session
    ``live``             in   1                           UP and not the restart cycle: deadlines are judged
    ``rx_resync``        in   1                           A applies a RESYNC (taken or not)
    ``resync_take``      in   1                           A takes the RESYNC (its counts are good)
    ``rx_resync_number`` in   number_bits                 the RESYNC's number (A)
    ``rx_ack``           in   1                           A applies a RESYNC_ACK
    ``c_ack_number``     in   number_bits                 the number of the word stage C decodes
    ``rx_lost``          in   1                           the receiver lost a slice (A)
    ``nak_set``          in   1                           a NAK is owed from this word (A)
    ``word_anomaly``     in   1                           the word is a sender-side anomaly (A)
    ``overdue``          in   1                           the oldest expected return is late
    ``head_tight``       in   1                           it is the first recorded after a RESYNC
    ``popped``           in   1                           a return arrived for the oldest entry (A)
    ``all_confirmed``    in   1                           no class has a frame unconfirmed
    ``digest_match``     in   1                           a digest matched (A)
    ``commit``           in   1                           S's turn is the framer's
    ``sent_replay``      in   1                           S sends a REPLAY (selective repeat)
    ``cycle``            in   time_bits                   the cycle counter
    ``cycle_after``      in   time_bits                   ``cycle + 1``
    ``rtt``              in   rtt_bits                    the measured round trip
    ``stale``            out  1                           returns arriving now are stale
    ``resync_due``       out  1                           register: a RESYNC is to be sent
    ``ack_due``          out  1                           register: a RESYNC_ACK is owed
    ``nak_due``          out  1                           register: a NAK is owed
    ``discard``          out  1                           register: data dropped until the peer's RESYNC
    ``resync_number``    out  number_bits                 register: the last RESYNC's number
    ``ack_number``       out  number_bits                 register: the number the RESYNC_ACK carries
    ``can_replay``       out  1                           recovery has not failed RECOVERY_LIMIT times
    ``sent_resync``      out  1                           S sends the RESYNC (``commit & resync_due``)
    ``sent_ack``         out  1                           S sends the RESYNC_ACK
    ``sent_nak``         out  1                           S sends the NAK
    ``tx_anomaly``       out  1                           a sender-side anomaly this cycle (0 or 1)
    ``degrade``          out  1                           recovery failed (the two limits) and another is due
    ``degraded``         out  1                           register of ``degrade``, sticky until the restart
    ===================  ===  ==========================  ==================================================

    ``number_bits`` is the width of the RESYNC and RESYNC_ACK number field, ``RESYNC_BODY.width("number")``.
    Latency: the outputs that are registers change at the edge after their cause; ``sent_*``,
    ``tx_anomaly``, ``degrade`` and ``stale`` are combinational. Failure behaviour: at most one
    recovery a cycle; the RECOVERY_LIMIT-th failure in a row, or the QUIET_LIMIT-th tight return
    overdue with none arriving in between (4.6), raises ``degrade`` (the end must retrain) instead
    of another RESYNC.
    """

    def __init__(self, *, time_bits, rtt_bits, margin, selective):
        self._margin, self._selective = margin, selective
        number = enc.RESYNC_BODY.width("number")
        super().__init__(
            {
                "restart": In(1),
                "live": In(1),
                "rx_resync": In(1),
                "resync_take": In(1),
                "rx_resync_number": In(number),
                "rx_ack": In(1),
                "c_ack_number": In(number),
                "rx_lost": In(1),
                "nak_set": In(1),
                "word_anomaly": In(1),
                "overdue": In(1),
                "head_tight": In(1),
                "popped": In(1),
                "all_confirmed": In(1),
                "digest_match": In(1),
                "commit": In(1),
                "sent_replay": In(1),
                "cycle": In(time_bits),
                "cycle_after": In(time_bits),
                "rtt": In(rtt_bits),
                "stale": Out(1),
                "resync_due": Out(1),
                "ack_due": Out(1),
                "nak_due": Out(1),
                "discard": Out(1),
                "resync_number": Out(number),
                "ack_number": Out(number),
                "can_replay": Out(1),
                "sent_resync": Out(1),
                "sent_ack": Out(1),
                "sent_nak": Out(1),
                "tx_anomaly": Out(1),
                "degrade": Out(1),
                "degraded": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        sel, number = self._selective, enc.RESYNC_BODY.width("number")
        resync_due, awaiting = Signal(name="resync_due"), Signal(name="awaiting_ack")
        resync_number = Signal(number, name="resync_number")
        ack_deadline = Signal(len(self.cycle), name="ack_deadline")
        failed = Signal(range(RECOVERY_LIMIT + 1), name="failed_recoveries")
        degraded = Signal(name="degraded")
        discard, nak_due, ack_due = Signal(name="discard"), Signal(name="nak_due"), Signal(name="ack_due")
        ack_number = Signal(number, name="ack_number")
        sent_resync, sent_ack, sent_nak = self.sent_resync, self.sent_ack, self.sent_nak
        stale = self.stale
        m.d.comb += [
            stale.eq(resync_due | awaiting),
            self.degraded.eq(degraded),
            self.resync_due.eq(resync_due),
            self.ack_due.eq(ack_due),
            self.nak_due.eq(nak_due),
            self.discard.eq(discard),
            self.resync_number.eq(resync_number),
            self.ack_number.eq(ack_number),
            self.can_replay.eq(failed != RECOVERY_LIMIT),
        ]

        # --- sender side (golden Framer.recover, rx_ack, rx_nak, watchdog) ----------------------
        ack_match = Signal(name="ack_match")
        # Whether the acknowledgement's deadline has passed, judged a cycle ahead (as the head's).
        ack_late_ahead = Signal(name="ack_late_ahead")
        # The acknowledgement's number is compared a cycle ahead, in stage C, with the RESYNC
        # number A will hold (one more when a RESYNC leaves now), into a register.
        ack_number_ok_ahead = Signal(name="ack_number_ok_ahead")
        c_number = self.c_ack_number
        m.d.sync += ack_number_ok_ahead.eq(
            Mux(sent_resync, c_number == (resync_number + 1)[:number], c_number == resync_number)
        )
        m.d.comb += ack_match.eq(self.rx_ack & awaiting & ack_number_ok_ahead)
        ack_behind = Signal(len(self.cycle), name="ack_late_next")
        m.d.comb += ack_behind.eq(self.cycle_after - ack_deadline)
        m.d.sync += ack_late_ahead.eq(~sent_resync & ((ack_behind != 0) & ~ack_behind[-1]))
        tx_word_anomaly = self.word_anomaly
        # At most one recovery a cycle, counted once: the word's anomaly and the deadlines are
        # one event (golden Framer.watchdog gives way to a recovery the word started). The
        # ``~tx_word_anomaly`` below changes no value of ``tx_anomaly`` (the OR holds the word's
        # anomaly already) but the synthesized structure: without it make synth gave link_core
        # 153.3 MHz on its best seed, with it 157.8 on seed 1.
        overdue_act = self.live & ~stale & self.overdue & ~tx_word_anomaly
        ack_overdue = self.live & awaiting & ~ack_match & ack_late_ahead
        tx_anomaly = self.tx_anomaly
        m.d.comb += tx_anomaly.eq(tx_word_anomaly | overdue_act | ack_overdue)
        # The end must retrain in the cycle the anomaly is found (PROTOCOL.md 2.2), hence the
        # pulse ``degrade`` beside the register.
        # A line that returns nothing (4.6): tight returns overdue in a row, none arriving between.
        quiet = Signal(range(QUIET_LIMIT + 1), name="quiet_failures")
        quiet_act = overdue_act & self.head_tight
        with m.If(self.popped):
            m.d.sync += quiet.eq(0)
        with m.Elif(quiet_act):
            m.d.sync += quiet.eq(quiet + 1)
        spent = (failed == RECOVERY_LIMIT) | (quiet == QUIET_LIMIT) | (quiet_act & (quiet == QUIET_LIMIT - 1))
        m.d.comb += self.degrade.eq(tx_anomaly & spent)
        with m.If(tx_anomaly):
            with m.If(spent):
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
                ack_deadline.eq(self.cycle + (WIRE_DELAY + self._margin + ACK_SLACK + 1) + self.rtt),
            ]
        with m.If(ack_match):
            m.d.sync += awaiting.eq(0)
            with m.If(self.all_confirmed):
                m.d.sync += failed.eq(0)
        with m.If(self.digest_match):
            m.d.sync += failed.eq(0)

        # --- receiver side (golden Framer.rx_resync, _lost_slice) --------------------------------
        # The assembly restarts and discarding ends on any RESYNC; the rest only on one taken.
        with m.If(self.rx_resync):
            m.d.sync += [discard.eq(0), nak_due.eq(0)]
        with m.Else():
            m.d.sync += [discard.eq(discard | self.rx_lost), nak_due.eq(self.nak_set | (nak_due & ~sent_nak))]
        with m.If(self.resync_take):
            m.d.sync += [ack_due.eq(1), ack_number.eq(self.rx_resync_number)]
        with m.Else():
            m.d.sync += ack_due.eq(ack_due & ~sent_ack)

        # --- S: a recovery word goes first (golden Framer.choose): RESYNC, RESYNC_ACK, NAK ------
        with m.If(self.sent_replay):
            # A frame sent again is a recovery too (golden Framer.commit), counted after this
            # cycle's digest (which may have reset the count).
            m.d.sync += failed.eq(Mux(self.digest_match, 1, failed_more))
        m.d.comb += [
            sent_resync.eq(self.commit & resync_due),
            sent_ack.eq(self.commit & ~resync_due & ack_due),
            sent_nak.eq(self.commit & ~resync_due & ~ack_due & nak_due),
        ]

        # --- the restart cycle: leave the session (golden leave_session) -------------------------
        with m.If(self.restart):
            m.d.sync += [
                resync_due.eq(0),
                awaiting.eq(0),
                failed.eq(0),
                quiet.eq(0),
                degraded.eq(0),
                discard.eq(0),
                nak_due.eq(0),
                ack_due.eq(0),
            ]
        return m
