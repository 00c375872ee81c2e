"""One OAE link endpoint in hardware: twin of golden/link.py (docs/PROTOCOL.md 2-5).

:class:`LinkCore` composes training, the token plane, the framer and the RLFD in the link clock
domain and owns what joins them, in the golden order within each clock edge: receive (route the
checked word), the user's inputs, the watchdogs (entangle, suspicion, echo deadline), and the
choice of the next word. :class:`LinkEndpoint` adds the clock crossing: user streams in the
core domain, joined to the link domain by bisynchronous FIFOs.
"""

from amaranth.hdl import DomainRenamer, Module, Mux, Signal, signed
from amaranth.lib import stream, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out, connect, flipped

from golden import encoding as enc
from golden.encoding import Ctl, Kind, LinkState, Reason, RxPhase, TxPhase
from golden.params import LinkParams

from .cdc import BisyncFIFO, check_depth
from .control import ControlWordBuilder, WordChecker
from .framer import FRAME_BITS, Framer
from .rlfd import Rlfd
from .slice import LinkPortSignature, LinkWord
from .token_plane import TokenPlane
from .training import Training


class CountersSignature(wiring.Signature):
    """The event counters of an end, named as the golden ``Counters`` fields
    (``golden.encoding.STATUS_COUNTERS``), each wrapping at 2**STATUS_COUNTER_BITS."""

    def __init__(self):
        super().__init__({name: Out(enc.STATUS_COUNTER_BITS) for name in enc.STATUS_COUNTERS})


class StatusSignature(wiring.Signature):
    """What an endpoint tells its user, every cycle of the link clock.

    ``state`` (LinkState), ``leader``, ``rtt``/``rtt_valid``, ``balance`` (-1/0/+1: the
    token-plane balance), ``tx_phase``/``rx_phase`` (the two halves of the token transfer),
    ``waiting`` (a token is due from the peer), the event pulses ``up``, ``anomaly``,
    ``suspect`` (with ``reason``), and ``counters`` (:class:`CountersSignature`).
    ``queue_overflow`` is sticky and must never rise (the queues are sized by PROTOCOL.md 4.5).
    """

    def __init__(self, params: LinkParams):
        super().__init__({
            "state": Out(LinkState), "leader": Out(1), "rtt": Out(params.rtt_bits), "rtt_valid": Out(1),
            "balance": Out(signed(2)), "tx_phase": Out(TxPhase), "rx_phase": Out(RxPhase), "waiting": Out(1),
            "up": Out(1), "anomaly": Out(1), "suspect": Out(1), "reason": Out(Reason), "queue_overflow": Out(1),
            "counters": Out(CountersSignature()),
        })


class LinkCore(wiring.Component):
    """The endpoint in the link clock domain (golden ``LinkEndpoint``, cycle for cycle).

    Ports: ``rx``/``tx`` (link words, one per cycle; ``tx`` is a register, as golden
    ``tx_word``); ``frames_in[c]``/``frames_out[c]`` (streams of 512-bit frames per class, byte
    0 in bits 7..0); ``ait_in`` (stream of 16-bit token values, ready when the end holds no
    token to send); ``withdraw`` (level: take back the token being offered if it is accepted);
    ``ait_out`` (the delivered token, held until taken; while held, offers are rejected);
    ``returned``/``returned_value`` (pulse: a withdrawn token given back); ``status``.

    Latency: a received word acts in the cycle it arrives; the reply word leaves one cycle
    later (the ``tx`` register). Frames and tokens delivered in an edge appear on ``frames_out``
    and ``ait_out`` after it. Failure behaviour: as golden/link.py: malformed words are counted
    and dropped, anomalies and suspicions retrain and reconcile; nothing handed in is lost or
    delivered twice.

    ``params``: a :class:`golden.params.LinkParams`, or its fields as keyword arguments; a bad
    value raises ValueError naming it before any hardware exists.
    """

    def __init__(self, params: LinkParams | None = None, **kwargs):
        self.params = p = LinkParams.resolve(params, kwargs)
        super().__init__({
            "rx": In(LinkPortSignature()), "tx": Out(LinkPortSignature()),
            "frames_in": In(stream.Signature(FRAME_BITS)).array(p.num_classes),
            "frames_out": Out(stream.Signature(FRAME_BITS)).array(p.num_classes),
            "ait_in": In(stream.Signature(enc.AIT_VALUE_BITS)), "withdraw": In(1),
            "ait_out": Out(stream.Signature(enc.AIT_VALUE_BITS)),
            "returned": Out(1), "returned_value": Out(enc.AIT_VALUE_BITS),
            "status": Out(StatusSignature(p)),
        })

    def elaborate(self, platform):
        m = Module()
        p = self.params
        C = p.num_classes
        m.submodules.checker = chk = WordChecker()
        m.submodules.training = tr = Training(p)
        m.submodules.tokens = tok = TokenPlane()
        m.submodules.framer = fr = Framer(p)
        m.submodules.rlfd = rlfd = Rlfd(p)
        m.submodules.token_word = token_word = ControlWordBuilder()
        m.submodules.training_word = training_word = ControlWordBuilder()

        up = Signal()
        connect(m, flipped(self.rx), chk.rx)
        for c in range(C):
            connect(m, flipped(self.frames_in[c]), fr.frames_in[c])
            connect(m, fr.frames_out[c], flipped(self.frames_out[c]))

        # --- receive: route the checked word ----------------------------------------------------
        d = chk.decoded
        code = d.code
        is_ctl = d.kind == Kind.CONTROL
        word = chk.wellformed & ~(is_ctl & (code == Ctl.IDLE))
        training_code = is_ctl & code.matches(*enc.TRAINING_CODES)
        token_code = is_ctl & code.matches(*enc.TOKEN_CODES)
        plain = is_ctl & ((code == Ctl.TICK) | (code == Ctl.TOCK))
        body = chk.body

        entangle_rx = Signal()
        m.d.comb += [
            tr.rx_valid.eq(word & ~up & training_code), tr.rx_code.eq(code), tr.rx_body.eq(body),
            # The leader is UP already: our READY reached it, its READY(heard) did not reach us.
            entangle_rx.eq(word & ~up & plain & (tr.phase == LinkState.READY) & tr.heard_ready & ~tr.leader),
        ]
        token_word_rx = word & token_code & (up | entangle_rx)
        waiting = entangle_rx | rlfd.waiting
        own_plain = code == Mux(tr.leader, Ctl.TICK, Ctl.TOCK)
        token_bad = token_word_rx & (tok.due_rx | ~waiting | own_plain)
        token_ok = token_word_rx & ~token_bad
        m.d.comb += [
            fr.rx_data.eq(word & up & (d.kind == Kind.DATA)),
            fr.rx_echo.eq(word & up & (d.kind == Kind.ECHO)),
            fr.rx_digest.eq(word & up & is_ctl & (code == Ctl.DIGEST)),
            fr.rx_token.eq(token_ok),
            fr.rx_cls.eq(d.cls), fr.rx_index.eq(d.index), fr.rx_last.eq(d.last),
            fr.rx_slice.eq(chk.slice), fr.rx_body.eq(body),
            tok.rx_token.eq(token_ok & ~fr.anomaly),
            tok.rx_code.eq(code),
            tok.rx_seq.eq(body[enc.TOKEN_AIT_SEQ_LSB:enc.TOKEN_AIT_SEQ_LSB + enc.AIT_SEQ_BITS]),
            tok.rx_value.eq(body[enc.TOKEN_AIT_VALUE_LSB:enc.TOKEN_AIT_VALUE_LSB + enc.AIT_VALUE_BITS]),
        ]
        token_received = token_ok & ~fr.anomaly & ~tok.rx_anomaly
        remote_fault = word & up & is_ctl & (code == Ctl.TRAIN_HELLO) & body[enc.HELLO_FAULT_BIT]
        # READY may still come from a peer finishing its handshake; other training words mean
        # the peer dropped out of UP.
        peer_training = word & up & training_code & (code != Ctl.TRAIN_READY) & ~remote_fault
        anomaly_rx = tr.anomaly | token_bad | fr.anomaly | (tok.rx_token & tok.rx_anomaly) | peer_training
        restart_rx = anomaly_rx | remote_fault
        up_rx = (up | entangle_rx) & ~restart_rx

        # --- watchdogs --------------------------------------------------------------------------
        entangle_wd = ~up_rx & tr.ready_to_entangle
        restart_wd = up_rx & (rlfd.suspect | fr.overdue)
        up_final = (up_rx | entangle_wd) & ~restart_wd
        suspect = remote_fault | (restart_wd & rlfd.suspect)
        m.d.sync += up.eq(up_final)

        m.d.comb += [
            tr.start.eq((restart_rx & ~tr.anomaly) | restart_wd), tr.remeasure.eq(suspect), tr.fault_in.eq(suspect),
            tr.up.eq(up), tr.entangle.eq(up_final & ~up),
            tr.half_state.eq(tok.half_state | fr.counts << enc.READY_CONFIRMED_LSB),
        ]
        for block in (tok, fr):
            m.d.comb += [block.entangle_rx.eq(entangle_rx), block.entangle_wd.eq(entangle_wd),
                         block.restart_rx.eq(restart_rx), block.restart_wd.eq(restart_wd),
                         block.peer_half.eq(tr.peer_half_rx), block.up_final.eq(up_final)]
        m.d.comb += [
            tok.leader.eq(tr.leader),
            tok.withdraw.eq(self.withdraw),
            self.ait_in.ready.eq(tok.ait_ready),
            tok.ait_in_valid.eq(self.ait_in.valid & self.ait_in.ready), tok.ait_in_value.eq(self.ait_in.payload),
            self.ait_out.valid.eq(tok.ait_out_valid), self.ait_out.payload.eq(tok.ait_out_value),
            tok.ait_out_taken.eq(self.ait_out.valid & self.ait_out.ready),
            self.returned.eq(tok.returned), self.returned_value.eq(tok.returned_value),
            fr.rtt.eq(tr.rtt), fr.token_send.eq(tok.send),
            rlfd.up.eq(up_rx), rlfd.wellformed.eq(chk.wellformed), rlfd.token_received.eq(token_received),
            rlfd.clear.eq(restart_rx | restart_wd | entangle_rx | entangle_wd), rlfd.rtt.eq(tr.rtt),
            # The token leaves next cycle, or a follower entangled and awaits the first one.
            rlfd.arm.eq(tok.send | (up_final & ~up & ~tr.leader & ~token_received)),
        ]

        # --- the next word ----------------------------------------------------------------------
        tx_word = Signal(LinkWord)
        from_training = Signal(init=1)
        m.d.comb += [
            token_word.code.eq(tok.tx_code),
            token_word.body.eq(fr.counts << enc.TOKEN_COMMIT_LSB | tok.tx_seq << enc.TOKEN_AIT_SEQ_LSB
                               | tok.tx_value << enc.TOKEN_AIT_VALUE_LSB),
            training_word.code.eq(tr.tx_code), training_word.body.eq(tr.tx_body),
        ]
        m.d.sync += from_training.eq(~up_final)
        with m.If(up_final):
            m.d.sync += tx_word.eq(Mux(tok.send, token_word.word, fr.tx_word))
        m.d.comb += [self.tx.valid.eq(1), self.tx.word.eq(Mux(from_training, training_word.word, tx_word))]

        # --- status -------------------------------------------------------------------------------
        st = self.status
        sticky = Signal()
        m.d.sync += sticky.eq(sticky | fr.queue_overflow)
        m.d.comb += [
            st.state.eq(Mux(up, LinkState.UP, tr.phase)), st.leader.eq(tr.leader), st.rtt.eq(tr.rtt),
            st.rtt_valid.eq(tr.rtt_valid), st.balance.eq(tok.balance), st.waiting.eq(rlfd.waiting),
            st.tx_phase.eq(tok.tx_phase), st.rx_phase.eq(tok.rx_phase),
            st.up.eq(entangle_rx | entangle_wd), st.anomaly.eq((anomaly_rx | (restart_wd & ~rlfd.suspect))),
            st.suspect.eq(suspect), st.reason.eq(Mux(remote_fault, Reason.REMOTE_FAULT,
                                                           Mux(restart_wd & rlfd.suspect, rlfd.reason, Reason.NONE))),
            st.queue_overflow.eq(sticky), st.counters.ties.eq(tr.ties), st.counters.frames_delivered.eq(fr.delivered),
        ]
        increments = {"malformed": (self.rx.valid & ~chk.wellformed) | fr.malformed,
                      "anomalies": st.anomaly, "suspicions": st.suspect,
                      "trainings": restart_rx | restart_wd,
                      "reconcile_conflicts": Mux(entangle_rx | entangle_wd, tok.conflict + fr.conflicts, 0),
                      "frames_sent": fr.frame_sent, "slices_sent": fr.slice_sent}
        for name, inc in increments.items():
            counter = getattr(st.counters, name)
            m.d.sync += counter.eq(counter + inc)
        return m


class LinkEndpoint(wiring.Component):
    """:class:`LinkCore` with its user side in the ``core`` clock domain.

    ``rx``/``tx`` and ``status`` are in the ``link`` domain; ``frames_in``, ``frames_out``,
    ``ait_in``, ``ait_out``, ``returned`` (a stream here) and ``withdraw`` are in the ``core``
    domain. Each stream crosses in a :class:`BisyncFIFO` of ``fifo_depth`` entries; ``withdraw``
    is a level and crosses in a two-stage synchronizer. Latency: a FIFO adds 2-3 cycles of the
    receiving clock. A token given back waits in a holding register until its FIFO has room, and
    no new token enters the core meanwhile, so none is dropped; likewise a delivered token stays
    in the core (offers are then rejected) until its FIFO takes it. Failure behaviour: as
    :class:`LinkCore`.
    """

    def __init__(self, params: LinkParams | None = None, *, fifo_depth=4, **kwargs):
        check_depth("fifo_depth", fifo_depth)
        self.core = LinkCore(LinkParams.resolve(params, kwargs))
        self.params = self.core.params
        self._fifo_depth = fifo_depth
        C = self.params.num_classes
        super().__init__({
            "rx": In(LinkPortSignature()), "tx": Out(LinkPortSignature()),
            "frames_in": In(stream.Signature(FRAME_BITS)).array(C),
            "frames_out": Out(stream.Signature(FRAME_BITS)).array(C),
            "ait_in": In(stream.Signature(enc.AIT_VALUE_BITS)), "withdraw": In(1),
            "ait_out": Out(stream.Signature(enc.AIT_VALUE_BITS)),
            "returned": Out(stream.Signature(enc.AIT_VALUE_BITS)),
            "status": Out(StatusSignature(self.params)),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.core = core = DomainRenamer("link")(self.core)
        depth = self._fifo_depth

        def fifo(name, shape, w, r):
            f = BisyncFIFO(depth=depth, w_domain=w, r_domain=r, shape=shape)
            m.submodules[name] = f
            return f

        connect(m, flipped(self.rx), core.rx)
        connect(m, core.tx, flipped(self.tx))
        connect(m, core.status, flipped(self.status))
        for c in range(self.params.num_classes):
            f_in = fifo(f"frames_in{c}", FRAME_BITS, "core", "link")
            connect(m, flipped(self.frames_in[c]), f_in.sink)
            connect(m, f_in.source, core.frames_in[c])
            f_out = fifo(f"frames_out{c}", FRAME_BITS, "link", "core")
            connect(m, core.frames_out[c], f_out.sink)
            connect(m, f_out.source, flipped(self.frames_out[c]))
        a_in = fifo("ait_in", enc.AIT_VALUE_BITS, "core", "link")
        connect(m, flipped(self.ait_in), a_in.sink)
        a_out = fifo("ait_out", enc.AIT_VALUE_BITS, "link", "core")
        connect(m, core.ait_out, a_out.sink)
        connect(m, a_out.source, flipped(self.ait_out))
        # The core gives a token back in the cycle the protocol decides it and cannot wait. Only
        # the token inside the core can come back, so a one-entry holding register suffices if
        # no new token enters while it is full.
        ret = fifo("returned", enc.AIT_VALUE_BITS, "link", "core")
        held, held_value = Signal(), Signal(enc.AIT_VALUE_BITS)
        with m.If(core.returned):
            m.d.link += [held.eq(1), held_value.eq(core.returned_value)]
        with m.Elif(ret.sink.ready):
            m.d.link += held.eq(0)
        m.d.comb += [ret.sink.valid.eq(held), ret.sink.payload.eq(held_value),
                     core.ait_in.valid.eq(a_in.source.valid & ~held), core.ait_in.payload.eq(a_in.source.payload),
                     a_in.source.ready.eq(core.ait_in.ready & ~held)]
        connect(m, ret.source, flipped(self.returned))
        m.submodules.withdraw_cdc = FFSynchronizer(self.withdraw, core.withdraw, o_domain="link")
        return m
