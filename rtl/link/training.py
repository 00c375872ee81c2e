"""Training of one end in hardware: HELLO, PROBE, READY. Twin of golden/link/training.py."""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for

from golden import encoding as enc
from golden.encoding import Ctl, LinkState
from golden.params import APPLY_DELAY, WIRE_DELAY, LinkParams, require
from rtl.common import fields

# A probe S sends in cycle s is on the wire at s + WIRE_DELAY; its echo, applied in A cycle a,
# arrived at a - APPLY_DELAY. The age counter starts at 0 in cycle s + 1, so the sample is the
# age less this.
_AGE_OFFSET = WIRE_DELAY + APPLY_DELAY - 1


def check_slice(nonce, cls, index):
    """Slice ``index`` of the check frame of class ``cls`` an end with ``nonce`` sends (golden
    ``encoding.check_slice``): the nonce in each 16-bit lane, XOR (cls << 3 | index)."""
    return Cat(*[nonce] * enc.CHECK_LANES) ^ Cat(index, cls)


def _lfsr_step(state):
    return Mux(state[0], (state >> 1) ^ enc.NONCE_LFSR_TAPS, state >> 1)


class Training(wiring.Component):
    """HELLO / PROBE / READY state of one end (docs/PROTOCOL.md 2.3).

    A stage: ``rx_valid`` with ``rx_code``/``rx_body`` (a well-formed training word applied
    while not UP), then the probe bound; ``anomaly`` (combinational) flags a word showing that
    the peer began a new round; the endpoint restarts. ``restart`` (the restart cycle: begin a
    new round; ``remeasure`` forgets the RTT, ``fault_in`` sets the remote-fault flag of its
    HELLOs, ``resume_in`` makes it a round that resumes the last session if the peer does).
    ``entangle`` (the end entangles: the session's tag is kept). ``hold``: a degraded link's hold
    is on, so READY does not say heard-ready (5.2). ``rx_data`` with ``rx_cls`` and
    ``rx_index``: a well-formed DATA word applied while not UP, perhaps a slice of the peer's
    check frame (2.3), which stage C compared a cycle ahead: ``c_body`` is the body of the word
    C checks, ``c_cls``, ``c_index`` and ``c_slice`` its class, index and slice as a DATA word.
    ``ready_to_entangle`` (READY, heard-ready, the peer heard me and I said so) and
    ``follower_ready`` (READY, heard-ready, not the leader: a TICK or TOCK entangles) are
    registers, set from the next values of the registers they judge: the endpoint's entangle
    decision, which everything in the cycle waits for, is then one gate on the received word.

    S stage: ``s_code``/``s_body`` (combinational: the training word S would send now, from the
    registers; in the restart cycle the first HELLO of the new round), or with ``s_check`` a
    slice of a check frame (``s_check_cls``, ``s_check_index``, ``s_check_slice``: a DATA
    word), and ``send`` (S sends it this cycle: an echo owed is then paid, a probe starts its
    clock, a READY saying heard-ready counts, the next check slice is due). ``half_state``: the
    endpoint's READY bits below the heard-ready bit.

    Outputs (registers): ``phase``, ``rtt``/``rtt_valid``, ``leader``, ``heard_ready``,
    ``peer_nonce``, ``peer_half`` (the peer's READY body), ``check_match`` (the word A applies
    is the peer's check slice of its class and index, under the peer nonce held when C checked
    it: the endpoint's check grace drops such a word); combinational: ``tie`` (the word applied was a tie),
    ``late`` (it was the echo of a probe already declared lost: the samples are discarded and the
    bound is ``max_rtt`` again), ``peer_store`` (it is a READY of this round: ``peer_half`` takes its body at the edge).

    ``params``: a :class:`golden.params.LinkParams` (port_id, nonce_seed, probes, max_rtt, margin).
    """

    def __init__(self, params: LinkParams):
        require(params)
        p = params
        self._port, self._seed, self._probes, self._max_rtt, self._margin = (
            p.port_id,
            p.nonce_seed,
            p.probes,
            p.max_rtt,
            p.margin,
        )
        self._rtt_bits = p.rtt_bits
        self._classes = p.num_classes
        # The age of a probe grows until it is lost: at most its bound + 1 after the offset.
        self._age_bits = bits_for(p.rtt_limit + _AGE_OFFSET + 1)
        super().__init__(
            {
                "rx_valid": In(1),
                "rx_code": In(enc.CONTROL_CODE_BITS),
                "rx_body": In(enc.CTL_BODY_BITS),
                "c_body": In(enc.CTL_BODY_BITS),
                "restart": In(1),
                "remeasure": In(1),
                "fault_in": In(1),
                "keep_in": In(1),
                "resume_in": In(1),
                "hold": In(1),
                "entangle": In(1),
                "rx_data": In(1),
                "rx_cls": In(enc.CLASS_BITS),
                "rx_index": In(enc.INDEX_BITS),
                "c_cls": In(enc.CLASS_BITS),
                "c_index": In(enc.INDEX_BITS),
                "c_slice": In(enc.SLICE_BITS),
                "send": In(1),
                "half_state": In(enc.READY_BODY.lsb("heard")),
                "phase": Out(LinkState),
                "rtt": Out(self._rtt_bits),
                "rtt_valid": Out(1),
                "leader": Out(1),
                "peer_half": Out(enc.CTL_BODY_BITS),
                "heard_ready": Out(1),
                "ready_to_entangle": Out(1),
                "follower_ready": Out(1),
                "anomaly": Out(1),
                "tie": Out(1),
                "late": Out(1),
                "peer_store": Out(1),
                "s_code": Out(enc.CONTROL_CODE_BITS),
                "s_body": Out(enc.CTL_BODY_BITS),
                "s_echo": Out(1),
                "s_check": Out(1),
                "s_check_cls": Out(enc.CLASS_BITS),
                "s_check_index": Out(enc.INDEX_BITS),
                "s_check_slice": Out(enc.SLICE_BITS),
                "peer_nonce": Out(enc.NONCE_BITS),
                "check_match": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        lfsr = Signal(enc.NONCE_LFSR_BITS, init=self._seed)
        fault, keep = Signal(), Signal(name="keep")
        peer_nonce = self.peer_nonce
        peer_port = Signal(enc.PORT_ID_BITS)
        heard = Signal()
        left = Signal()  # the peer has left HELLO
        number = Signal(enc.PROBE_NUMBER_BITS)
        outstanding = Signal()
        age = Signal(self._age_bits)
        done = Signal(range(self._probes + 1))
        max_sample = Signal(self._rtt_bits)
        have_sample = Signal()
        echo_due = Signal()
        echo_body = Signal(enc.CTL_BODY_BITS)
        peer_heard_me = Signal()
        sent_heard = Signal()
        cycle_odd = Signal()  # parity of the current cycle number
        # The tag of the last session entangled in, and whether this round resumes it (2.3).
        session_bits = enc.HELLO_BODY.width("session")
        session, have_session, resume = Signal(session_bits, name="session"), Signal(), Signal(name="resume")
        nonce = lfsr[: enc.NONCE_BITS]
        body, code, phase = self.rx_body, self.rx_code, self.phase
        # The registers the entangle judgements read, assigned through their next values (comb,
        # the register's value by default): the judgements are registered from those.
        judged = {"phase": phase, "heard_ready": self.heard_ready, "leader": self.leader}
        judged.update(peer_heard_me=peer_heard_me, sent_heard=sent_heard)
        nxt = {k: Signal.like(v, name=f"{k}_next") for k, v in judged.items()}
        m.d.comb += [nxt[k].eq(v) for k, v in judged.items()]
        m.d.sync += [v.eq(nxt[k]) for k, v in judged.items()]
        # PROBE, or READY of a resumed round until its one sample: a probe may be out.
        measuring = (phase == LinkState.PROBE) | ((phase == LinkState.READY) & ~self.rtt_valid)
        # The data-path check (2.3): per class, the peer's check frame arrived whole, and the index
        # of its next slice; the next slice of mine to send; one whole pass of mine sent.
        C = self._classes
        checked = Signal(C, name="checked")
        check_next = [Signal(enc.INDEX_BITS, name=f"check_next{c}") for c in range(C)]
        check_cls, check_index = Signal(enc.CLASS_BITS, name="check_cls"), Signal(enc.INDEX_BITS, name="check_index")
        check_pass = Signal(name="check_pass")
        checks_done = checked.all()
        # Heard-ready: the RTT known, the peer's check frames come, no degraded link's hold (5.2).
        heard_ok = self.heard_ready & self.rtt_valid & checks_done & ~self.hold
        m.d.sync += cycle_odd.eq(~cycle_odd)
        # ``sent_heard`` implies READY: S sends READY only in READY, which only a restart leaves,
        # and a restart clears it. So READY is not judged again for ``ready_to_entangle``, whose
        # phase would come after the HELLO checks.
        m.d.sync += [
            self.ready_to_entangle.eq(nxt["sent_heard"] & nxt["heard_ready"] & nxt["peer_heard_me"]),
            self.follower_ready.eq((nxt["phase"] == LinkState.READY) & nxt["heard_ready"] & ~nxt["leader"]),
        ]

        # --- S: the training word of this cycle's choice --------------------------------------
        hello_port = Const(self._port << enc.HELLO_BODY.lsb("port"), enc.CTL_BODY_BITS)
        resuming = self.resume_in & have_session
        with m.If(self.restart):
            # The first HELLO of the new round: the state 2.3(1) gives, with the next nonce.
            m.d.comb += [
                self.s_code.eq(Ctl.TRAIN_HELLO),
                self.s_body.eq(
                    _lfsr_step(lfsr)[: enc.NONCE_BITS] << enc.HELLO_BODY.lsb("nonce")
                    | hello_port
                    | self.fault_in << enc.HELLO_BODY.lsb("fault")
                    | self.keep_in << enc.HELLO_BODY.lsb("keep")
                    | resuming << enc.HELLO_BODY.lsb("resume")
                    | Mux(resuming, session, 0) << enc.HELLO_BODY.lsb("session")
                ),
            ]
        with m.Elif(echo_due):
            m.d.comb += [self.s_code.eq(Ctl.TRAIN_PROBE_ECHO), self.s_body.eq(echo_body), self.s_echo.eq(1)]
        with m.Elif(measuring & ~outstanding):
            m.d.comb += [
                self.s_code.eq(Ctl.TRAIN_PROBE),
                self.s_body.eq(number << enc.PROBE_BODY.lsb("number") | nonce << enc.PROBE_BODY.lsb("nonce")),
            ]
        with m.Elif((phase == LinkState.READY) & ~peer_heard_me & (~check_pass | (left & cycle_odd))):
            m.d.comb += [
                self.s_code.eq(Ctl.TRAIN_READY),
                self.s_check.eq(1),
                self.s_check_cls.eq(check_cls),
                self.s_check_index.eq(check_index),
                self.s_check_slice.eq(check_slice(nonce, check_cls, check_index)),
            ]
        with m.Elif((phase == LinkState.READY) & (left | ~cycle_odd)):
            m.d.comb += [
                self.s_code.eq(Ctl.TRAIN_READY),
                self.s_body.eq(
                    self.half_state
                    | heard_ok << enc.READY_BODY.lsb("heard")
                    | nonce[: enc.READY_BODY.width("nonce")] << enc.READY_BODY.lsb("nonce")
                ),
            ]
        with m.Else():
            m.d.comb += [
                self.s_code.eq(Ctl.TRAIN_HELLO),
                self.s_body.eq(
                    nonce << enc.HELLO_BODY.lsb("nonce")
                    | peer_nonce << enc.HELLO_BODY.lsb("peer_nonce")
                    | heard << enc.HELLO_BODY.lsb("heard")
                    | hello_port
                    | fault << enc.HELLO_BODY.lsb("fault")
                    | keep << enc.HELLO_BODY.lsb("keep")
                    | resume << enc.HELLO_BODY.lsb("resume")
                    | Mux(resume, session, 0) << enc.HELLO_BODY.lsb("session")
                ),
            ]
        sending = self.send & ~self.restart
        with m.If(sending & (self.s_code == Ctl.TRAIN_PROBE_ECHO)):
            m.d.sync += echo_due.eq(0)
        with m.If(sending & (self.s_code == Ctl.TRAIN_PROBE)):
            m.d.sync += outstanding.eq(1)
        with m.If(sending & (self.s_code == Ctl.TRAIN_READY) & ~self.s_check & heard_ok):
            m.d.comb += nxt["sent_heard"].eq(1)
        with m.If(sending & self.s_check):
            m.d.sync += check_index.eq(check_index + 1)
            with m.If(check_index == enc.SLICES_PER_FRAME - 1):
                last_class = check_cls == C - 1
                m.d.sync += check_cls.eq(Mux(last_class, 0, check_cls + 1))
                with m.If(last_class):
                    m.d.sync += check_pass.eq(1)
        # The probe's age: from the cycle after S sent it, saturating.
        probe_sent = sending & (self.s_code == Ctl.TRAIN_PROBE)
        m.d.sync += age.eq(Mux(probe_sent, 0, Mux(age.all(), age, age + 1)))
        # The sample an echo applied now gives, (age - _AGE_OFFSET) truncated to the RTT's bits,
        # kept as a register beside the age: the echo's path meets one carry chain, not two.
        sample_at_send = -_AGE_OFFSET % (1 << self._rtt_bits)
        age_sample = Signal(self._rtt_bits, name="age_sample", init=sample_at_send)
        m.d.sync += age_sample.eq(Mux(probe_sent, sample_at_send, Mux(age.all(), age_sample, age_sample + 1)))

        # --- A: the word applied ----------------------------------------------------------------
        # The RTT of the last round while this one measures again (``hint``, set when a
        # suspicion starts a new measurement; its probe bound kept ready in ``hint_after``).
        hint_valid, hint_after = Signal(name="hint_valid"), Signal(self._age_bits, name="hint_after")
        hint = Signal(self._rtt_bits, name="hint")
        # A peer HELLO saying the lost token was corrupted (fault and keep-RTT flags): the round
        # trip did not change, the hint is the RTT again.
        hello, ready = (fields.view(t, body) for t in (enc.HELLO_BODY, enc.READY_BODY))
        restore = hello.fault & hello.keep & ~self.rtt_valid & hint_valid

        def after_hello(restoring=0):
            return Mux(self.rtt_valid | restoring, LinkState.READY, LinkState.PROBE)

        pn, pport = hello.nonce, hello.port
        # The nonce comparisons of the word A applies are made a cycle ahead, in stage C, on
        # ``c_body`` (the word checked now), into registers. They compare with the nonces A will
        # hold: for my nonce both the current and the next LFSR value (it steps on a restart or
        # a tie), for the peer's both the current one and the one of the HELLO A applies now (A
        # takes it when the HELLO is accepted); ``nonce_moved`` and ``peer_moved`` select.
        c_hello, c_probe, c_ready = (
            fields.view(t, self.c_body) for t in (enc.HELLO_BODY, enc.PROBE_BODY, enc.READY_BODY)
        )
        nonce_moved, peer_moved = Signal(name="nonce_moved"), Signal(name="peer_moved")
        nonce_after = _lfsr_step(lfsr)[: enc.NONCE_BITS]
        ready_bits = enc.READY_BODY.width("nonce")

        def ahead(name, field, now, after, moved, same=None):
            """``field == now`` and ``field == after`` registered (the first into ``same`` if
            given); ``moved`` picks the one A needs."""
            same = Signal(name=f"{name}_ahead") if same is None else same
            same_after = Signal(name=f"{name}_after_ahead")
            m.d.sync += [same.eq(field == now), same_after.eq(field == after)]
            return Mux(moved, same_after, same)

        hello_mine = ahead("hello_mine", c_hello.nonce, nonce, nonce_after, nonce_moved)
        hello_heard_mine = ahead("hello_heard_mine", c_hello.peer_nonce, nonce, nonce_after, nonce_moved)
        echo_mine = ahead("echo_mine", c_probe.nonce, nonce, nonce_after, nonce_moved)
        hello_peer = ahead("hello_peer", c_hello.nonce, peer_nonce, pn, peer_moved)
        probe_peer = ahead("probe_peer", c_probe.nonce, peer_nonce, pn, peer_moved)
        ready_peer = ahead("ready_peer", c_ready.nonce, peer_nonce[:ready_bits], pn[:ready_bits], peer_moved)
        check_peer = ahead(
            "check_peer",
            self.c_slice,
            check_slice(peer_nonce, self.c_cls, self.c_index),
            check_slice(pn, self.c_cls, self.c_index),
            peer_moved,
            same=self.check_match,
        )
        # The echo's probe number against the number A will hold: the current one, one more
        # (an echo taken or a probe lost now), or 0 (a restart now).
        number_now, number_next, number_zero = (Signal(name=f"echo_number_{k}_ahead") for k in ("now", "next", "zero"))
        m.d.sync += [
            number_now.eq(c_probe.number == number),
            number_next.eq(c_probe.number == (number + 1)[: len(number)]),
            number_zero.eq(c_probe.number == 0),
        ]
        number_stepped, number_reset = Signal(name="number_stepped"), Signal(name="number_reset")
        took_echo = Signal(name="took_echo")
        accept_hello = Signal(name="accept_hello")
        m.d.sync += [nonce_moved.eq(self.restart | self.tie), peer_moved.eq(accept_hello)]
        with m.If(self.rx_valid):
            with m.Switch(code):
                with m.Case(Ctl.TRAIN_HELLO):
                    with m.If(phase != LinkState.HELLO):
                        m.d.comb += self.anomaly.eq(~hello_peer)
                    with m.Elif(hello_mine & (pport == self._port)):
                        m.d.comb += self.tie.eq(1)
                        m.d.sync += [lfsr.eq(_lfsr_step(lfsr)), heard.eq(0)]
                    with m.Else():
                        m.d.comb += accept_hello.eq(1)
                        m.d.sync += [peer_nonce.eq(pn), peer_port.eq(pport), heard.eq(1)]
                        m.d.comb += nxt["leader"].eq((nonce > pn) | ((nonce == pn) & (self._port > pport)))
                        with m.If(restore):
                            m.d.sync += [self.rtt.eq(hint), self.rtt_valid.eq(1)]
                        with m.If(resume & hello.resume & (hello.session == session)):
                            # The peer resumes the same session (golden Training.receive).
                            m.d.comb += nxt["phase"].eq(LinkState.READY)
                        with m.Elif(hello.heard & hello_heard_mine):
                            m.d.comb += nxt["phase"].eq(after_hello(restore))
                with m.Case(Ctl.TRAIN_PROBE):
                    # Echoed in any phase; it does not take the end out of HELLO (golden
                    # Training.receive says why).
                    with m.If(heard & probe_peer):
                        # A probe applied now is owed its echo even if S pays an older one now.
                        m.d.sync += [left.eq(1), echo_due.eq(1), echo_body.eq(body)]
                with m.Case(Ctl.TRAIN_PROBE_ECHO):
                    mine = echo_mine
                    current = Mux(number_reset, number_zero, Mux(number_stepped, number_next, number_now))
                    with m.If(mine & measuring & ~current):
                        m.d.comb += self.late.eq(1)
                    with m.If(mine & measuring & outstanding & current):
                        sample = age_sample
                        new_max = Mux(have_sample & (max_sample > sample), max_sample, sample)
                        m.d.comb += took_echo.eq(1)
                        m.d.sync += [
                            outstanding.eq(0),
                            number.eq(number + 1),
                            done.eq(done + 1),
                            max_sample.eq(new_max),
                            have_sample.eq(1),
                        ]
                        # A resumed round takes one sample, in READY (2.3).
                        with m.If((phase == LinkState.READY) | (done + 1 == self._probes)):
                            m.d.sync += [self.rtt.eq(new_max), self.rtt_valid.eq(1)]
                            m.d.comb += nxt["phase"].eq(LinkState.READY)
                with m.Case(Ctl.TRAIN_READY):
                    with m.If(heard & ready_peer):
                        m.d.comb += self.peer_store.eq(1)
                        m.d.sync += [self.peer_half.eq(body), left.eq(1)]
                        m.d.comb += nxt["heard_ready"].eq(1)
                        with m.If(ready.heard):
                            m.d.comb += nxt["peer_heard_me"].eq(1)

        # A slice of the peer's check frame (golden Training.receive_check).
        with m.If(self.rx_data & heard):
            match = check_peer
            for c in range(C):
                with m.If(self.rx_cls == c):
                    with m.If(match & ((self.rx_index == check_next[c]) | (self.rx_index == 0))):
                        m.d.sync += check_next[c].eq(self.rx_index + 1)
                        with m.If(self.rx_index == enc.SLICES_PER_FRAME - 1):
                            m.d.sync += checked[c].eq(1)
                    with m.Else():
                        m.d.sync += check_next[c].eq(0)

        # A probe not answered within its bound was lost (golden tick, after the word): until one
        # sample exists the bound is max_rtt, then min(largest sample, max_rtt) + margin. The
        # bound is computed a cycle ahead: a sample moves it only in a cycle that also ends the
        # outstanding probe, and S sends the next one a cycle later at the earliest.
        # Until one sample of this round exists, the RTT of the last round stands in for it.
        capped = Mux(max_sample > self._max_rtt, self._max_rtt, max_sample)
        lost_after = Signal(self._age_bits)
        m.d.sync += lost_after.eq(
            Mux(
                have_sample,
                capped + (self._margin + _AGE_OFFSET),
                Mux(hint_valid, hint_after, self._max_rtt + _AGE_OFFSET),
            )
        )
        # The echo of a probe already declared lost: the round trip outgrew the bound the samples
        # set. They are discarded, and from the next cycle the bound is max_rtt again; lost_after
        # follows a cycle later, so for that one cycle ``bound_reset`` picks max_rtt (a constant
        # compare beside lost_after's, not a longer path into it).
        bound_reset = Signal()
        m.d.sync += bound_reset.eq(self.late)
        with m.If(self.late):
            m.d.sync += [done.eq(0), max_sample.eq(0), have_sample.eq(0), hint_valid.eq(0)]
        # A probe lost in the cycle its echo matches changes nothing the echo does not (the probe
        # is over and the next number is due), so the echo need not be waited for here.
        overdue = Mux(bound_reset, age > self._max_rtt + _AGE_OFFSET, age > lost_after)
        lost = measuring & outstanding & overdue
        with m.If(lost):
            m.d.sync += [outstanding.eq(0), number.eq(number + 1)]
        m.d.sync += [number_stepped.eq(took_echo | lost), number_reset.eq(self.restart)]

        # --- the restart cycle: a new round (golden Training.start) -------------------------------
        with m.If(self.restart):
            for sig in (
                heard,
                peer_nonce,
                peer_port,
                left,
                echo_due,
                echo_body,
                outstanding,
                number,
                done,
                max_sample,
                have_sample,
                self.peer_half,
                checked,
                *check_next,
                check_cls,
                check_index,
                check_pass,
            ):
                m.d.sync += sig.eq(0)
            m.d.comb += [nxt["leader"].eq(0), nxt["heard_ready"].eq(0), nxt["peer_heard_me"].eq(0)]
            m.d.comb += [nxt["sent_heard"].eq(0), nxt["phase"].eq(LinkState.HELLO)]
            m.d.sync += [
                lfsr.eq(_lfsr_step(lfsr)),
                fault.eq(self.fault_in),
                keep.eq(self.keep_in),
                resume.eq(resuming),
            ]
            with m.If(self.remeasure):
                m.d.sync += [self.rtt.eq(0), self.rtt_valid.eq(0)]
                with m.If(self.rtt_valid):
                    rtt_capped = Mux(self.rtt > self._max_rtt, self._max_rtt, self.rtt)
                    m.d.sync += [
                        hint_valid.eq(1),
                        hint.eq(self.rtt),
                        hint_after.eq(rtt_capped + (self._margin + _AGE_OFFSET)),
                    ]
        with m.If(self.entangle):
            m.d.sync += [session.eq((nonce ^ peer_nonce)[:session_bits]), have_session.eq(1)]
        return m
