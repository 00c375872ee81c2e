"""One OAE link endpoint in hardware: twin of golden/link/core.py (docs/PROTOCOL.md 2-5).

:class:`LinkCore` composes training, the token plane, the framer and the RLFD in the link clock
domain as the pipeline of PROTOCOL.md 2.2: stage C checks the received word into a register,
stage A applies it with the user's inputs and decides restarts, stage S chooses the next word
into a register, stage B1 builds it into a register and B2 into ``tx``. rtl/link/endpoint.py
adds the clock crossing to the user's clock domain.

:meth:`LinkCore.elaborate` lists the pipeline in order, one method per stage: ``_blocks``,
``_stage_c``, ``_stage_a_word``, ``_stage_a_restart``, ``_stage_s_choice``, ``_stage_s_words``,
``_stage_b``, then the blocks' ``_events``, ``_status`` and ``_counters``.

Hand-retimed registers (computed a cycle ahead, so that the stage that uses them only selects
or gates with a registered result) end in ``_ahead``: ``watch_ahead`` (the data plane applies
the word: UP and not the restart cycle; ``framer_unwatched_ahead`` is its inverted copy for
the framer, and ``framer_rx_<kind>`` each data-plane word it gates: DATA, ECHO, DIGEST,
RESYNC, RESYNC_ACK, NAK, REPLAY), ``training_live_ahead`` (training applies it),
``fill_due_ahead`` (a fill word is due: ``since_fill == FILL_INTERVAL - 1``),
``framer_turn_ahead`` (S's turn is the framer's unless a fill word is due) and
``data_class_ahead`` (the class of a DATA word, one-hot, decoded in C). Registers kept equal
to another plus one end in ``_after``: ``suspicions_after`` and ``trainings_after`` (the
status counters, which a decision only selects). The framer's are listed in
rtl/link/framer/__init__.py.
"""

from types import SimpleNamespace

from amaranth.hdl import Cat, Const, Module, Mux, Signal, signed
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from golden import encoding as enc
from golden.encoding import Ctl, Kind, LinkState, Reason, RxPhase, TxPhase
from golden.params import (
    CHECK_GRACE,
    DEGRADED_HEAL,
    DEGRADED_HOLD,
    DEGRADED_STEPS,
    FILL_INTERVAL,
    NOISE_WINDOW,
    LinkParams,
)
from rtl.common import fields
from rtl.common.crc import control_crc_value, crc32_of_slice
from rtl.common.slice import LinkPortSignature, LinkWord, control_tag, data_tag, echo_tag
from rtl.link.control import ControlWordBuilder, WordChecker
from rtl.link.framer import FRAME_BITS, Framer
from rtl.link.rlfd import Rlfd
from rtl.link.token_plane import TokenKind, TokenPlane
from rtl.link.training import Training

# A settle's half-state: a READY body below its heard-ready bit (PROTOCOL.md 10.6).
SETTLE_HALF_BITS = enc.READY_BODY.lsb("heard")


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
    ``suspect`` (with ``reason``), ``degraded`` (from a degraded verdict's restart until the link is
    UP again: PROTOCOL.md 5.2), ``window`` (the frames per class the end sends beyond those the
    peer is known to have committed: the window the measured round trip needs, up to the replay
    memory; PROTOCOL.md 4.4) and ``counters`` (:class:`CountersSignature`).
    ``queue_overflow`` is sticky and must never rise (the queues are sized by PROTOCOL.md 4.5).
    """

    def __init__(self, params: LinkParams):
        super().__init__(
            {
                "state": Out(LinkState),
                "leader": Out(1),
                "rtt": Out(params.rtt_bits),
                "rtt_valid": Out(1),
                "balance": Out(signed(2)),
                "tx_phase": Out(TxPhase),
                "rx_phase": Out(RxPhase),
                "waiting": Out(1),
                "up": Out(1),
                "anomaly": Out(1),
                "suspect": Out(1),
                "reason": Out(Reason),
                "degraded": Out(1),
                "window": Out(range(params.window + 1)),
                "queue_overflow": Out(1),
                "counters": Out(CountersSignature()),
            }
        )


class _Checked(data.Struct):
    """The word stage C registered for A: whether it is well-formed and, if so, what it is (each
    flag already includes well-formedness, so A starts from single bits)."""

    ok: 1
    present: 1
    data: 1
    echo: 1
    digest: 1
    resync: 1
    ack: 1
    nak: 1
    token: 1
    peer_token: 1
    replay: 1
    idle: 1
    tick: 1
    tock: 1
    entangling: 1  # a TICK or TOCK a follower in READY may entangle on (not a copy to drop)
    copy_turn: 2  # a token copy of turn 0 (bit 0) or of turn 1 (bit 1)
    again: 1  # a token word with the again flag: the peer asks for my last token word (3.1)
    kind: TokenKind
    training: 1
    ready: 1
    hello_fault: 1
    hello_keep: 1
    code: enc.CONTROL_CODE_BITS
    cls: enc.CLASS_BITS
    index: enc.INDEX_BITS
    last: 1
    slice: enc.SLICE_BITS
    nslice: enc.DIGEST_CRC_BITS


class _Causes(data.Struct):
    """The causes of a restart A found in a cycle (PROTOCOL.md 2.2): anomalies of the word
    (training, token, commit counts, token plane, a peer training word), a remote fault, an RLFD
    suspicion with its reason, a degraded data plane (PROTOCOL.md 4.6)."""

    word: 5
    remote_fault: 1
    suspect: 1
    reason: Reason
    degraded: 1
    keep: 1  # the suspicion keeps the RTT (a token lost to corruption, PROTOCOL.md 5.2)


class _Source(enum.Enum, shape=3):
    """What S chose for B to build."""

    IDLE = 0
    TRAINING = 1
    TOKEN = 2
    RETURN = 3  # an ECHO, a DIGEST or a recovery word
    DATA = 4  # a slice B reads from the replay memory
    COPY = 5  # the token word again, flagged as its copy (PROTOCOL.md 3.1)
    AGAIN = 6  # the last token word, as an ask or sent again as a copy (PROTOCOL.md 3.1)


def _idle_word() -> int:
    return control_tag(Ctl.IDLE).value << enc.SLICE_BITS


def _first_hello(params: LinkParams) -> tuple:
    """(body, word) of the HELLO an end drives from reset (PROTOCOL.md 2.2, 2.3)."""
    nonce = params.nonce_seed & ((1 << enc.HELLO_BODY.width("nonce")) - 1)
    body = enc.HELLO_BODY.pack(nonce=nonce, port=params.port_id)
    tag = control_tag(Ctl.TRAIN_HELLO).value
    word = tag << enc.SLICE_BITS | control_crc_value(tag, body) << enc.CTL_CRC_LSB | body
    return body, word


class LinkCore(wiring.Component):
    """The endpoint in the link clock domain (golden ``LinkCore``, cycle for cycle).

    Ports: ``rx``/``tx`` (link words, one per cycle; ``tx`` is a register, as golden
    ``tx_word``); ``frames_in[c]``/``frames_out[c]`` (streams of 512-bit frames per class, byte
    0 in bits 7..0); ``ait_in`` (stream of 16-bit token values, ready when the end holds no
    token to send); ``withdraw`` (level: take back the token being offered if it is accepted);
    ``ait_out`` (the delivered token, held until taken; while held, offers are rejected);
    ``returned``/``returned_value`` (pulse: a withdrawn token given back); ``status``. For a
    fabric (PROTOCOL.md 10.6): ``settle`` (stream of the peer's half-state: settle this end
    without entering UP), ``settle_applied``/``settle_skipped`` (pulses, two cycles after the
    request) and ``taken[c]`` (per class, stream of the unconfirmed frames the settle took out,
    newest first, one class's at a time); what a node watches of its port: ``heard`` (a
    well-formed word arrives now), ``half_state`` (this end's half-state as a REPORT carries
    it), ``unsent`` (per class, a frame handed in has slices not yet sent) and ``takeout_busy``
    (frames a settle took out are left to take).

    Latency (PROTOCOL.md 2.2): a received word is checked in the cycle it arrives and applied in
    the next; the earliest word that reflects it is on ``tx`` TURNAROUND = 5 cycles after it
    arrived. User inputs act in the cycle they are presented; a frame handed in can be chosen
    in the next cycle and is on ``tx`` three cycles later. Frames and tokens delivered in a cycle
    appear on ``frames_out`` and ``ait_out`` after its edge. Failure behaviour: as
    golden/link/core.py: malformed words are counted and dropped; data-plane anomalies are recovered
    at frame level with the link UP (PROTOCOL.md 4.6) and a lost token word is asked again (3.1);
    other anomalies, suspicions and a degraded data plane restart the end two cycles after they
    are decided, and it trains again (resuming the session after a suspicion when the peer does,
    2.3) and reconciles; nothing handed in is lost or delivered twice. The status event pulses (``up``
    aside) and the restart's
    counters follow the decision by one cycle.

    ``params``: a :class:`golden.params.LinkParams`, or its fields as keyword arguments; a bad
    value raises ValueError naming it before any hardware exists.
    """

    def __init__(self, params: LinkParams | None = None, **kwargs):
        self.params = p = LinkParams.resolve(params, kwargs)
        super().__init__(
            {
                "rx": In(LinkPortSignature()),
                "tx": Out(LinkPortSignature()),
                "frames_in": In(stream.Signature(FRAME_BITS)).array(p.num_classes),
                "frames_out": Out(stream.Signature(FRAME_BITS)).array(p.num_classes),
                "ait_in": In(stream.Signature(enc.AIT_VALUE_BITS)),
                "withdraw": In(1),
                "ait_out": Out(stream.Signature(enc.AIT_VALUE_BITS)),
                "returned": Out(1),
                "returned_value": Out(enc.AIT_VALUE_BITS),
                "status": Out(StatusSignature(p)),
                "settle": In(stream.Signature(SETTLE_HALF_BITS)),
                "settle_applied": Out(1),
                "settle_skipped": Out(1),
                "taken": Out(stream.Signature(FRAME_BITS)).array(p.num_classes),
                "heard": Out(1),
                "half_state": Out(SETTLE_HALF_BITS),
                "unsent": Out(p.num_classes),
                "takeout_busy": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        n = SimpleNamespace(p=self.params, C=self.params.num_classes)  # what the stages share
        # The pipeline of PROTOCOL.md 2.2, in order: each stage reads what the ones before it made.
        self._blocks(m, n)
        self._stage_c(m, n)
        self._stage_a_word(m, n)
        self._stage_a_restart(m, n)
        self._stage_s_choice(m, n)
        self._stage_s_words(m, n)
        self._stage_b(m, n)
        self._settle(m, n)
        self._events(m, n)
        self._status(m, n)
        self._counters(m, n)
        return m

    def _blocks(self, m, n):
        """The blocks of the end (word checker, training, token plane, framer, RLFD) and the user's frame
        ports."""
        C, p = n.C, n.p
        m.submodules.checker = chk = WordChecker()
        m.submodules.training = tr = Training(p)
        m.submodules.tokens = tok = TokenPlane()
        m.submodules.framer = fr = Framer(p)
        m.submodules.rlfd = rlfd = Rlfd(p)
        connect(m, flipped(self.rx), chk.rx)
        m.d.comb += self.heard.eq(self.rx.valid & chk.wellformed)
        for c in range(C):
            connect(m, flipped(self.frames_in[c]), fr.frames_in[c])
            connect(m, fr.frames_out[c], flipped(self.frames_out[c]))
        n.chk, n.fr, n.rlfd, n.tok, n.tr = chk, fr, rlfd, tok, tr

    def _stage_c(self, m, n):
        """Stage C: the received word, checked and decoded into registers for A."""
        C, chk, p, tr = n.C, n.chk, n.p, n.tr
        d, code, body = chk.decoded, chk.decoded.code, chk.body
        ok = chk.wellformed
        ctl = ok & (d.kind == Kind.CONTROL)
        q = Signal(_Checked)
        token_code = ctl & code.matches(*enc.TOKEN_CODES)
        token, hello = fields.view(enc.TOKEN_BODY, body), fields.view(enc.HELLO_BODY, body)
        copy_turn = Cat(token_code & token.copy & ~token.turn, token_code & token.copy & token.turn)
        copy_of_turn_1 = copy_turn[1] if p.token_copies else Const(0)
        # The data plane's words, also registered for the framer gated by whether it applies
        # them (A, ``_stage_a_restart``).
        n.c_framer_words = words = {
            "data": ok & (d.kind == Kind.DATA),
            "echo": ok & (d.kind == Kind.ECHO),
            "digest": ctl & (code == Ctl.DIGEST),
            "resync": ctl & (code == Ctl.RESYNC),
            "ack": ctl & (code == Ctl.RESYNC_ACK),
            "nak": ctl & (code == Ctl.NAK),
            "replay": ctl & (code == Ctl.REPLAY),
        }
        m.d.sync += [
            q.ok.eq(ok),
            q.present.eq(self.rx.valid),
            *[getattr(q, name).eq(value) for name, value in words.items()],
            q.token.eq(token_code),
            # Any token word but the end's own plain kind; used only while UP, when the leader
            # has been fixed since before entangling.
            q.peer_token.eq(token_code & (code != Mux(tr.leader, Ctl.TICK, Ctl.TOCK))),
            q.idle.eq(ctl & (code == Ctl.IDLE)),
            q.tick.eq(ctl & (code == Ctl.TICK)),
            q.tock.eq(ctl & (code == Ctl.TOCK)),
            # Outside UP the turn expected is 0 (PROTOCOL.md 3.1), so a copy to drop there has
            # turn 1: judged here, from the word alone, off the entangle decision's path.
            q.entangling.eq(ctl & code.matches(Ctl.TICK, Ctl.TOCK) & ~copy_of_turn_1),
            q.copy_turn.eq(copy_turn),
            q.again.eq(token_code & token.again),
            *[getattr(q.kind, k).eq(v) for k, v in TokenKind.of(code).items()],
            q.training.eq(ctl & code.matches(*enc.TRAINING_CODES)),
            q.ready.eq(ctl & (code == Ctl.TRAIN_READY)),
            q.hello_fault.eq(ctl & (code == Ctl.TRAIN_HELLO) & hello.fault),
            q.hello_keep.eq(hello.keep),
            q.code.eq(code),
            q.cls.eq(d.cls),
            q.index.eq(d.index),
            q.last.eq(d.last),
            q.slice.eq(chk.slice),
            q.nslice.eq(crc32_of_slice(m, chk.slice)),
        ]
        q_body = q.slice[: enc.CTL_BODY_BITS]
        # The class of a DATA word, one-hot: the framer's running digests take it as an enable.
        data_class_ahead = Signal(C, name="data_class_ahead")
        m.d.sync += data_class_ahead.eq(Mux(ok & (d.kind == Kind.DATA), 1 << d.cls, 0))
        n.body, n.d, n.q, n.q_body, n.data_class_ahead = body, d, q, q_body, data_class_ahead

    def _stage_a_word(self, m, n):
        """Stage A, first half: the checked word applied to training, the token plane and the framer, gated
        by ``watch_ahead`` and ``training_live_ahead``; the entangle decision."""
        body, chk, d, fr, p, q, q_body = n.body, n.chk, n.d, n.fr, n.p, n.q, n.q_body
        data_class_ahead, rlfd, tok, tr = n.data_class_ahead, n.rlfd, n.tok, n.tr
        up, restart, restart_fault = Signal(name="up"), Signal(name="restart"), Signal(name="restart_fault")
        restart_keep = Signal(name="restart_keep")
        restart_resume = Signal(name="restart_resume")
        # The word is applied unless this is the restart cycle (which drops it): by the data
        # plane while UP (``watch_ahead``), by training otherwise (``training_live_ahead``). Both are
        # registers computed a cycle ahead from the decisions that set ``up`` and ``restart``, so
        # each gate on the received word is one LUT input.
        watch_ahead, training_live_ahead = Signal(name="watch_ahead"), Signal(name="training_live_ahead", init=1)
        # The framer's copy of ``watch_ahead``, kept inverted so that synthesis does not merge the
        # two registers: one register drove the framer's enables and the token plane's gates
        # across the die (make synth: 5.6 to 5.9 ns of routing from it at seed 1).
        framer_unwatched_ahead = Signal(name="framer_unwatched_ahead", init=1)
        framer_watch = ~framer_unwatched_ahead
        n.framer_unwatched_ahead = framer_unwatched_ahead
        # Each data-plane word the framer applies (``framer_watch`` & its flag in ``q``), a
        # register of its own: the framer's enables on a word no longer all start at one register.
        n.framer_rx = rx_w = {name: Signal(name=f"framer_rx_{name}") for name in n.c_framer_words}
        own_plain = Mux(tr.leader, q.tick, q.tock)
        token_up = watch_ahead & q.token
        # A token it may take: none held, one awaited, and not before the round trip allows
        # (an early one is a suspicion, not a word anomaly: PROTOCOL.md 5.2).
        # Token copies (PROTOCOL.md 3.1): a word with the copy flag is dropped unless its turn is
        # the turn expected (its original was lost); then it stands for its original.
        # ``rx_turn`` is the turn of the peer's next token word: 0 in a new session, flipped by
        # every token word taken (one that is not taken ends the session).
        rx_turn, is_copy = Signal(name="rx_turn"), Const(0)
        if p.token_copies:
            is_copy = Signal(name="token_copy")
            # The copy flag and the turn are decoded in C, so the decision is a 2-to-1 select.
            m.d.comb += is_copy.eq(Mux(rx_turn, q.copy_turn[0], q.copy_turn[1]))
        entangle_rx = training_live_ahead & q.entangling & tr.follower_ready
        token_in = token_up & ~tok.due & rlfd.waiting & ~is_copy
        token_ok = ((token_in & ~rlfd.too_soon) | entangle_rx) & ~own_plain & ~is_copy
        # token_ok & up from five registers: an entangling token comes only while training (not
        # UP), and ``watch_ahead`` implies UP.
        token_ok_up = watch_ahead & q.peer_token & ~tok.due & rlfd.waiting & ~rlfd.too_soon & ~is_copy
        token_bad = (token_up | entangle_rx) & ~token_ok & ~rlfd.early & ~is_copy
        remote_fault = watch_ahead & q.hello_fault
        # READY may still come from a peer finishing its handshake; other training words mean
        # the peer dropped out of UP.
        peer_training = watch_ahead & q.training & ~q.ready & ~q.hello_fault
        entangle_wd = training_live_ahead & tr.ready_to_entangle & ~entangle_rx
        entangle = entangle_rx | entangle_wd
        with m.If(restart | entangle_wd):
            m.d.sync += rx_turn.eq(0)
        with m.Elif(entangle_rx):
            m.d.sync += rx_turn.eq(1)
        with m.Elif(token_up & ~is_copy):
            m.d.sync += rx_turn.eq(~rx_turn)
        # A lost token word asked again (PROTOCOL.md 3.1): a malformed or missing word where the
        # peer's answer may have been is an ask; the peer's ask (a copy with the again flag whose
        # original was applied) is my last token word sent again. Both while waiting, past the
        # earliest cycle, with a token word of the session sent (``have_last``).
        ask_due, resend_due, have_last = Signal(name="ask_due"), Signal(name="resend_due"), Signal(name="have_last")
        ask_set, resend_set = Const(0), Const(0)
        if p.token_copies:
            may_ask = watch_ahead & rlfd.may_ask & have_last
            ask_set = may_ask & ~q.ok & ~ask_due
            resend_set = may_ask & is_copy & q.again & ~resend_due & ~tok.due
        n.ask_due, n.ask_set, n.have_last, n.resend_due, n.resend_set = (
            ask_due,
            ask_set,
            have_last,
            resend_due,
            resend_set,
        )
        # Cycles left in which a DATA word like the peer's check slice is one (golden
        # ``_check_grace_until``): RTT + margin + CHECK_GRACE A cycles from entangling.
        # ``check_grace`` is ``grace_left != 0``, registered a cycle ahead: it gates the data word
        # into the framer, whose delivery path is the longest in the core.
        grace_left = Signal(range(p.rtt_limit + p.margin + CHECK_GRACE + 1), name="check_grace_left")
        check_grace = Signal(name="check_grace_ahead")
        with m.If(entangle):
            m.d.sync += [grace_left.eq(tr.rtt + (p.margin + CHECK_GRACE - 1)), check_grace.eq(1)]
        with m.Elif(check_grace):
            m.d.sync += [grace_left.eq(grace_left - 1), check_grace.eq(grace_left != 1)]
        m.d.comb += [
            tr.rx_data.eq(training_live_ahead & q.data),
            tr.rx_cls.eq(q.cls),
            tr.rx_index.eq(q.index),
            tr.rx_valid.eq(training_live_ahead & q.training),
            tr.rx_code.eq(q.code),
            tr.rx_body.eq(q_body),
            tr.c_body.eq(body),
            tr.c_cls.eq(n.d.cls),
            tr.c_index.eq(n.d.index),
            tr.c_slice.eq(n.chk.slice),
            # The peer's check slices may follow entangling for a round trip (2.3): not data.
            fr.rx_data.eq(rx_w["data"] & ~(check_grace & tr.check_match)),
            fr.rx_data_class.eq(data_class_ahead),
            fr.rx_echo.eq(rx_w["echo"]),
            fr.rx_digest.eq(rx_w["digest"]),
            fr.rx_token.eq(token_ok),
            fr.rx_token_up.eq(token_ok_up),
            fr.rx_resync.eq(rx_w["resync"]),
            fr.rx_ack.eq(rx_w["ack"]),
            fr.rx_nak.eq(rx_w["nak"]),
            fr.rx_replay.eq(rx_w["replay"]),
            fr.live.eq(framer_watch),
            fr.rx_cls.eq(q.cls),
            fr.rx_index.eq(q.index),
            fr.rx_last.eq(q.last),
            fr.rx_slice.eq(q.slice),
            fr.rx_nslice.eq(q.nslice),
            fr.rx_body.eq(q_body),
            fr.c_cls.eq(d.cls),
            fr.c_index.eq(d.index),
            fr.c_slice.eq(chk.slice),
            # The data plane and the token plane act on a token independently (PROTOCOL.md 4.3).
            tok.rx_token.eq(token_ok),
            tok.rx_kind.eq(q.kind),
            tok.rx_seq.eq(fields.view(enc.TOKEN_BODY, q_body).ait_seq),
            tok.rx_value.eq(fields.view(enc.TOKEN_BODY, q_body).ait_value),
            tok.c_seq.eq(fields.view(enc.TOKEN_BODY, body).ait_seq),
        ]
        n.entangle, n.peer_training, n.remote_fault, n.restart = entangle, peer_training, remote_fault, restart
        n.restart_fault, n.restart_keep, n.token_bad, n.token_in = restart_fault, restart_keep, token_bad, token_in
        n.restart_resume = restart_resume
        n.token_ok, n.training_live_ahead, n.up, n.watch_ahead = token_ok, training_live_ahead, up, watch_ahead

    def _stage_a_restart(self, m, n):
        """Stage A, second half: the causes of a restart, the decision, and the next cycle's gates
        (``up``, ``watch_ahead``, ``training_live_ahead``)."""
        entangle, fr, peer_training, q, remote_fault = n.entangle, n.fr, n.peer_training, n.q, n.remote_fault
        restart, restart_fault, restart_keep, rlfd, tok = n.restart, n.restart_fault, n.restart_keep, n.rlfd, n.tok
        token_bad, tr, training_live_ahead, up = n.token_bad, n.tr, n.training_live_ahead, n.up
        (watch_ahead,) = (n.watch_ahead,)
        # Each cause of a restart is registered where it is found; the next cycle combines them
        # (the word's cause first, then loss of signal and the token deadline, then a degraded
        # data plane), unless a restart is under way, and the restart cycle follows (PROTOCOL.md 2.2).
        cause = Signal(_Causes)
        m.d.sync += [
            cause.word.eq(Cat(tr.anomaly, token_bad, fr.anomaly, tok.rx_anomaly, peer_training)),
            cause.remote_fault.eq(remote_fault),
            cause.suspect.eq(watch_ahead & rlfd.suspect),
            cause.reason.eq(rlfd.reason),
            cause.degraded.eq(watch_ahead & fr.degrade),
            cause.keep.eq(Mux(remote_fault, q.hello_keep, rlfd.keep)),
        ]
        word_anomaly = cause.word.any()
        decide_suspect = ~restart & (cause.remote_fault | (~word_anomaly & (cause.suspect | cause.degraded)))
        decide_anomaly = ~restart & word_anomaly
        decide = decide_suspect | decide_anomaly
        # Only a remote fault or the token deadline keep the RTT; a degraded link does not.
        keep = Mux(cause.remote_fault, cause.keep, ~word_anomaly & cause.suspect & cause.keep)
        # Every suspicion but a degraded link starts a round that may resume the session (2.3).
        resume = decide_suspect & (cause.remote_fault | cause.suspect)
        m.d.sync += [
            restart.eq(decide),
            restart_fault.eq(decide_suspect),
            restart_keep.eq(decide_suspect & keep),
            n.restart_resume.eq(resume),
        ]
        self._degraded_hold(m, n, decide_suspect & ~cause.remote_fault & ~cause.suspect)
        with m.If(restart):
            m.d.sync += up.eq(0)
        with m.Elif(entangle):
            m.d.sync += up.eq(1)
        m.d.sync += [
            watch_ahead.eq(~decide & ~restart & (up | entangle)),
            n.framer_unwatched_ahead.eq(decide | restart | ~(up | entangle)),
            training_live_ahead.eq(~decide & (restart | (~up & ~entangle))),
            *[
                n.framer_rx[name].eq(word & ~decide & ~restart & (up | entangle))
                for name, word in n.c_framer_words.items()
            ],
        ]
        n.cause, n.decide, n.decide_anomaly, n.decide_suspect = cause, decide, decide_anomaly, decide_suspect

    def _stage_s_choice(self, m, n):
        """Stage S: which source the word three cycles from now comes from, into ``source``."""
        fr, p, restart, tok, tr, up, watch_ahead = n.fr, n.p, n.restart, n.tok, n.tr, n.up, n.watch_ahead
        # S registers which source it chose and, whatever it chose, every source's candidate
        # word as it was at the start of the cycle; B1 selects. The decision so drives a few bits,
        # not the whole word.
        # A fill word at least every FILL_INTERVAL cycles (PROTOCOL.md 6), but never in place of
        # a token or a probe echo, whose timing the round trip depends on.
        # ``fill_due_ahead`` (since_fill == FILL_INTERVAL - 1) is kept as a register beside the count.
        since_fill = Signal(range(FILL_INTERVAL), name="since_fill")
        fill_due_ahead = Signal(name="fill_due_ahead")
        s_training_word = ~up | restart
        s_token = watch_ahead & tok.due
        # The copy of the token word S chose in the previous cycle, when the peer asked for copies
        # (built only with token copies: B1 then keeps its code and body registers for a cycle).
        copy_due = Signal(name="copy_due")
        s_copy = watch_ahead & copy_due if p.token_copies else Const(0)
        # Then an ask, then the last token word sent again (PROTOCOL.md 3.1): never in place of
        # the token, which ends the wait.
        ask_due, resend_due = n.ask_due, n.resend_due
        s_again = watch_ahead & ~tok.due & ~copy_due & (ask_due | resend_due) if p.token_copies else Const(0)
        s_ask = s_again & ask_due
        s_fill = fill_due_ahead & ~s_token & ~s_copy & ~s_again & ~(s_training_word & tr.s_echo)
        s_training = s_training_word & ~s_fill
        # S's turn is the framer's; what the framer then sends is its own choice (none: IDLE).
        # ``watch_ahead`` implies UP and no restart, so no training word (and no probe echo) competes
        # with the fill word here: its terms are registers, not training's echo decision.
        # That is watch_ahead & ~tok.due & ~fill_due_ahead & ~copy_due & ~ask_due & ~resend_due;
        # all but the fill are judged a cycle ahead into ``framer_turn_ahead``, since the turn is
        # the framer's commit, which moves its queues and pointers. A restart clears watch_ahead,
        # and training follows it, so the other registers' values after one never matter.
        framer_turn_ahead = Signal(name="framer_turn_ahead")
        framer_turn = framer_turn_ahead & ~fill_due_ahead
        s_framer = framer_turn & fr.s_valid
        chose_idle = s_fill | (~s_training_word & ~s_token & ~s_framer & ~s_copy & ~s_again)
        if p.token_copies:
            with m.If(restart | n.entangle | s_token):
                m.d.sync += [ask_due.eq(0), resend_due.eq(0)]
            with m.Else():
                with m.If(n.ask_set):
                    m.d.sync += ask_due.eq(1)
                with m.Elif(s_ask):
                    m.d.sync += ask_due.eq(0)
                with m.If(n.resend_set):
                    m.d.sync += resend_due.eq(1)
                with m.Elif(s_again & ~ask_due):
                    m.d.sync += resend_due.eq(0)
            with m.If(restart | n.entangle):
                m.d.sync += n.have_last.eq(0)
            with m.Elif(s_token):
                m.d.sync += n.have_last.eq(1)
        busy_next = tok.due_next
        if p.token_copies:
            n.peer_wants = Signal(name="peer_wants_copies")
            cleared = n.entangle | s_token
            ask_next = ~cleared & (n.ask_set | (ask_due & ~s_ask))
            resend_next = ~cleared & (n.resend_set | (resend_due & ~(s_again & ~ask_due)))
            busy_next = busy_next | (s_token & n.peer_wants) | ask_next | resend_next
        m.d.sync += framer_turn_ahead.eq(~n.decide & ~restart & (up | n.entangle) & ~busy_next)
        m.d.sync += [
            since_fill.eq(Mux(chose_idle, 0, Mux(fill_due_ahead, since_fill, since_fill + 1))),
            fill_due_ahead.eq(~chose_idle & (since_fill >= FILL_INTERVAL - 2)),
        ]
        first_body, first_word = _first_hello(p)
        source = Signal(_Source, init=_Source.TRAINING)
        with m.If(s_fill):
            m.d.sync += source.eq(_Source.IDLE)
        with m.Elif(s_training):
            m.d.sync += source.eq(_Source.TRAINING)
        with m.Elif(s_token):
            m.d.sync += source.eq(_Source.TOKEN)
        if p.token_copies:
            with m.Elif(s_copy):
                m.d.sync += source.eq(_Source.COPY)
            with m.Elif(s_again):
                m.d.sync += source.eq(_Source.AGAIN)
        with m.Elif(s_framer & fr.s_is_data):
            m.d.sync += source.eq(_Source.DATA)
        with m.Elif(s_framer):
            m.d.sync += source.eq(_Source.RETURN)
        with m.Else():
            m.d.sync += source.eq(_Source.IDLE)
        n.copy_due, n.first_body, n.first_word, n.framer_turn = copy_due, first_body, first_word, framer_turn
        b_ask = Signal(name="b_ask")  # B1 flags an ask, not a word sent again
        m.d.sync += b_ask.eq(ask_due)
        n.s_token, n.s_training, n.source = s_token, s_training, source
        n.b_ask, n.s_again, n.s_ask = b_ask, s_again, s_ask

    def _stage_s_words(self, m, n):
        """Stage S: every source's candidate word, registered (or registered as code and body for B1)."""
        copy_due, entangle, first_body, fr, p, q = n.copy_due, n.entangle, n.first_body, n.fr, n.p, n.q
        (q_body,) = (n.q_body,)
        restart, s_token, tok, token_ok, tr = n.restart, n.s_token, n.tok, n.token_ok, n.tr

        # Control words whose code and body follow a deep choice in S are registered as code and
        # body; B1 selects one, and B2 builds it (its CRC-16 from B1's registers).
        def built_in_b(name, code, body, code_init=0, body_init=0):
            q_code = Signal(enc.CONTROL_CODE_BITS, name=f"{name}_code", init=code_init)
            q_body = Signal(enc.CTL_BODY_BITS, name=f"{name}_body", init=body_init)
            m.d.sync += [q_code.eq(code), q_body.eq(body)]
            return q_code, q_body

        w_training = built_in_b("training", tr.s_code, tr.s_body, Ctl.TRAIN_HELLO, first_body)
        # A slice of a check frame (2.3), registered whole: B1 selects it for training's turn.
        w_check, b_check = Signal(LinkWord, name="check_word"), Signal(name="b_check")
        m.d.sync += [
            w_check.tag.eq(data_tag(tr.s_check_cls, tr.s_check_index)),
            w_check.slice.eq(tr.s_check_slice),
            b_check.eq(tr.s_check),
        ]
        n.w_check, n.b_check = w_check, b_check
        # Token copies: "copies wanted" while a malformed word was applied in the last
        # NOISE_WINDOW - 1 cycles; copies sent while the peer's last token wanted them.
        noisy, peer_wants = Const(0), Const(0)
        if p.token_copies:
            noise_left = Signal(range(NOISE_WINDOW), name="noise_left")
            noisy, peer_wants = noise_left != 0, n.peer_wants
            with m.If(q.present & ~q.ok & ~restart):
                m.d.sync += noise_left.eq(NOISE_WINDOW - 1)
            with m.Elif(noisy):
                m.d.sync += noise_left.eq(noise_left - 1)
            with m.If(restart):
                m.d.sync += peer_wants.eq(0)
            with m.Elif(token_ok):
                m.d.sync += peer_wants.eq(fields.view(enc.TOKEN_BODY, q_body).copies)
        if p.token_copies:
            m.d.sync += copy_due.eq(s_token & peer_wants)
        # The turn of the next token word S sends (PROTOCOL.md 3.1): 0 in a new session.
        tx_turn = Signal(name="tx_turn")
        with m.If(restart | entangle):
            m.d.sync += tx_turn.eq(0)
        with m.Elif(s_token):
            m.d.sync += tx_turn.eq(~tx_turn)
        # The token's code and body follow the token plane's phase decisions: registered as such
        # and built in B, like the framer's control word.
        w_token = built_in_b(
            "token",
            tok.s_code,
            fields.pack(
                enc.TOKEN_BODY, counts=fr.counts, ait_seq=tok.s_seq, ait_value=tok.s_value, copies=noisy, turn=tx_turn
            ),
        )
        # The framer's control word (DIGEST, REPLAY, recovery) follows S's class choice.
        w_digest = built_in_b("framer", fr.s_code, fr.s_payload[: enc.CTL_BODY_BITS])
        w_echo = Signal(LinkWord, name="echo_word")
        c_digest, c_cls, c_index = (
            Signal(name="c_digest"),
            Signal(enc.CLASS_BITS, name="c_cls"),
            Signal(enc.INDEX_BITS, name="c_index"),
        )
        m.d.sync += [
            w_echo.tag.eq(echo_tag(fr.s_cls, fr.s_index)),
            w_echo.slice.eq(fr.s_payload),
            c_digest.eq(fr.s_is_control),
            c_cls.eq(fr.s_cls),
            c_index.eq(fr.s_index),
        ]
        n.c_cls, n.c_digest, n.c_index, n.w_digest, n.w_echo = c_cls, c_digest, c_index, w_digest, w_echo
        n.w_token, n.w_training = w_token, w_training

    def _stage_b(self, m, n):
        """Stages B1 and B2: the chosen word into ``built`` (B1), then into the transmit register
        ``tx`` (B2). A data word's tag is built in B1 and its slice, which the framer reads from
        the replay memory in B1, joins it in B2; a control word's code and body are chosen in B1
        and its tag parity and CRC-16 computed in B2 (PROTOCOL.md 2.2)."""
        c_cls, c_digest, c_index, first_word, fr, p = n.c_cls, n.c_digest, n.c_index, n.first_word, n.fr, n.p
        source, w_digest, w_echo, w_token, w_training = n.source, n.w_digest, n.w_echo, n.w_token, n.w_training
        first = {"slice": first_word & ((1 << enc.SLICE_BITS) - 1), "tag": first_word >> enc.SLICE_BITS}
        # B1 registers a whole word (``built``) or, for a control word, its code and body
        # (``built_code``/``built_body``, with ``built_control``); B2 builds the control word.
        built = Signal(LinkWord, init=first, name="built")
        built_data = Signal(name="built_data")  # B2 takes the slice from the framer
        built_control = Signal(name="built_control")  # B2 builds from code and body
        built_code = Signal(enc.CONTROL_CODE_BITS, name="built_code")
        built_body = Signal(enc.CTL_BODY_BITS, name="built_body")
        # The last token word sent (code and body), for an ask or a word sent again.
        last_code = Signal(enc.CONTROL_CODE_BITS, name="last_token_code")
        last_body = Signal(enc.CTL_BODY_BITS, name="last_token_body")
        m.d.sync += [built_data.eq(source == _Source.DATA), built_control.eq(0)]

        def control(code_body):
            code, body = code_body
            m.d.sync += [built_code.eq(code), built_body.eq(body), built_control.eq(1)]

        with m.Switch(source):
            with m.Case(_Source.TRAINING):
                with m.If(n.b_check):
                    m.d.sync += built.eq(n.w_check)
                with m.Else():
                    control(w_training)
            with m.Case(_Source.TOKEN):
                control(w_token)
                if p.token_copies:
                    m.d.sync += [last_code.eq(w_token[0]), last_body.eq(w_token[1])]
            with m.Case(_Source.RETURN):
                with m.If(c_digest):
                    control(w_digest)
                with m.Else():
                    m.d.sync += built.eq(w_echo)
            if p.token_copies:
                # The copy of the token word B1 chose in the previous cycle: the registers still
                # hold it. The flags are body bits; B2 computes the CRC of the new body.
                with m.Case(_Source.COPY):
                    control((built_code, built_body ^ enc.TOKEN_BODY.pack(copy=1)))
                with m.Case(_Source.AGAIN):
                    flags = Mux(n.b_ask, enc.TOKEN_BODY.pack(copy=1, again=1), enc.TOKEN_BODY.pack(copy=1))
                    control((last_code, last_body ^ flags))
            with m.Case(_Source.DATA):
                m.d.sync += built.tag.eq(data_tag(c_cls, c_index))
            with m.Default():
                m.d.sync += built.eq(_idle_word())
        m.submodules.control_builder = builder = ControlWordBuilder()
        m.d.comb += [builder.code.eq(built_code), builder.body.eq(built_body)]
        tx_word = Signal(LinkWord, init=first, name="tx_word")
        m.d.sync += [
            tx_word.tag.eq(Mux(built_control, builder.word.tag, built.tag)),
            tx_word.slice.eq(Mux(built_data, fr.b_slice, Mux(built_control, builder.word.slice, built.slice))),
        ]
        m.d.comb += [self.tx.valid.eq(1), self.tx.word.eq(tx_word)]

    def _events(self, m, n):
        """The blocks' cycle events: restarts, sends, entangling, and the user's token ports."""
        entangle, fr, framer_turn, q, q_body, restart = n.entangle, n.fr, n.framer_turn, n.q, n.q_body, n.restart
        restart_fault, restart_keep, rlfd, s_token = n.restart_fault, n.restart_keep, n.rlfd, n.s_token
        s_training, tok, token_in, tr, up, watch_ahead = n.s_training, n.tok, n.token_in, n.tr, n.up, n.watch_ahead
        half_state = Signal(SETTLE_HALF_BITS, name="half_state")
        m.d.comb += half_state.eq(tok.half_state | fields.pack(enc.READY_BODY, counts=fr.counts))
        m.d.comb += [
            tr.restart.eq(restart),
            tr.remeasure.eq(restart_fault & ~restart_keep),
            tr.fault_in.eq(restart_fault),
            tr.keep_in.eq(restart_keep),
            tr.resume_in.eq(n.restart_resume),
            tr.entangle.eq(entangle),
            tr.send.eq(s_training),
            tr.half_state.eq(half_state),
            self.half_state.eq(half_state),
            self.unsent.eq(fr.unsent),
            self.takeout_busy.eq(fr.takeout_busy),
            tok.leader.eq(tr.leader),
            tok.peer_half.eq(tr.peer_half),
            tok.entangle.eq(entangle),
            tok.restart.eq(restart),
            tok.send.eq(s_token),
            tok.withdraw.eq(self.withdraw),
            self.ait_in.ready.eq(tok.ait_ready),
            tok.ait_in_valid.eq(self.ait_in.valid & self.ait_in.ready),
            tok.ait_in_value.eq(self.ait_in.payload),
            self.ait_out.valid.eq(tok.ait_out_valid),
            self.ait_out.payload.eq(tok.ait_out_value),
            tok.ait_out_taken.eq(self.ait_out.valid & self.ait_out.ready),
            self.returned.eq(tok.returned),
            self.returned_value.eq(tok.returned_value),
            fr.peer_half.eq(tr.peer_half),
            # A settle's half-state reaches reconciliation as an arriving one (10.6).
            fr.peer_half_in.eq(Mux(n.settle_request, self.settle.payload, q_body)),
            fr.peer_store.eq(tr.peer_store | n.settle_request),
            fr.rtt.eq(tr.rtt),
            fr.up.eq(up),
            fr.entangle.eq(entangle),
            fr.restart.eq(restart),
            fr.commit.eq(framer_turn),
            fr.token_send.eq(s_token),
            rlfd.up.eq(watch_ahead),
            rlfd.wellformed.eq(q.ok),
            rlfd.present.eq(q.present),
            rlfd.token_received.eq(tok.rx_token & ~tok.rx_anomaly),
            rlfd.clear.eq(restart | entangle),
            rlfd.rtt.eq(tr.rtt),
            # The token leaves (S), or a follower entangled and awaits the first one.
            rlfd.arm.eq(s_token | (entangle & ~tr.leader)),
            rlfd.arm_sent.eq(s_token),
            rlfd.rearm.eq(n.s_again),
            rlfd.rearm_ask.eq(n.s_ask),
            rlfd.token_in.eq(token_in),
        ]

    def _settle(self, m, n):
        """Settling a failed link (golden ``LinkCore.settle``, PROTOCOL.md 10.6): a request taken
        (``settle`` valid and ready: none asked in the two cycles before) starts reconciliation's
        two stages on the peer's half-state; at the end of the second cycle after it the end
        settles unless it is UP or entangles then (its entangling reconciled it):
        ``settle_applied`` or ``settle_skipped`` pulses in that cycle."""
        fr, tok, up, entangle = n.fr, n.tok, n.up, n.entangle
        asked, due = Signal(name="settle_asked"), Signal(name="settle_due")
        half = Signal(SETTLE_HALF_BITS, name="settle_half")
        n.settle_request = request = self.settle.valid & self.settle.ready
        m.d.comb += self.settle.ready.eq(~asked & ~due)
        m.d.sync += [asked.eq(request), due.eq(asked)]
        with m.If(request):
            m.d.sync += half.eq(self.settle.payload)
        n.settle_apply = apply = due & ~up & ~entangle
        m.d.comb += [
            self.settle_applied.eq(apply),
            self.settle_skipped.eq(due & (up | entangle)),
            fr.settle_load.eq(request),
            fr.settle.eq(apply),
            fr.settle_pending.eq(asked | due),
            fr.settle_due.eq(due),
            # Due outside UP: the token plane lets entangling stand for it itself.
            tok.settle.eq(due & ~up),
            tok.settle_half.eq(half),
        ]
        for c in range(n.C):
            wiring.connect(m, fr.taken[c], flipped(self.taken[c]))

    def _degraded_hold(self, m, n, degraded_decide):
        """A degraded link is held down (golden ``_hold_until``, PROTOCOL.md 5.2): from the restart
        a degraded verdict decided, training says heard-ready only after DEGRADED_HOLD cycles,
        doubling with each verdict in a row (``degraded_streak``) unless the link was UP for
        DEGRADED_HEAL cycles (``up_run``) before it."""
        restart, up = n.restart, n.up
        restart_degraded = Signal(name="restart_degraded")
        streak = Signal(range(DEGRADED_STEPS + 1), name="degraded_streak")
        up_run = Signal(range(DEGRADED_HEAL + 1), name="up_run")
        hold_left = Signal(range(DEGRADED_HOLD << (DEGRADED_STEPS - 1)), name="hold_left")
        n.degraded = degraded = Signal(name="degraded")
        m.d.sync += [
            restart_degraded.eq(degraded_decide),
            up_run.eq(Mux(up, Mux(up_run == DEGRADED_HEAL, DEGRADED_HEAL, up_run + 1), 0)),
        ]
        with m.If(degraded_decide):
            more = Mux(streak == DEGRADED_STEPS, DEGRADED_STEPS, streak + 1)
            m.d.sync += streak.eq(Mux(up_run == DEGRADED_HEAL, 1, more))
        with m.If(restart & restart_degraded):
            # hold_left counts down to 0 at the cycle the hold ends: the hold minus one.
            with m.Switch(streak):
                for k in range(1, DEGRADED_STEPS + 1):
                    with m.Case(k):
                        m.d.sync += hold_left.eq((DEGRADED_HOLD << (k - 1)) - 1)
            m.d.sync += degraded.eq(1)
        with m.Elif(hold_left != 0):
            m.d.sync += hold_left.eq(hold_left - 1)
        with m.If(n.entangle):
            m.d.sync += degraded.eq(0)
        m.d.comb += n.tr.hold.eq(hold_left != 0)

    def _status(self, m, n):
        """The status port: state and event pulses."""
        cause, decide_anomaly, decide_suspect, entangle = n.cause, n.decide_anomaly, n.decide_suspect, n.entangle
        fr, rlfd, tok, tr, up = n.fr, n.rlfd, n.tok, n.tr, n.up
        st = self.status
        m.d.comb += [
            st.state.eq(Mux(up, LinkState.UP, tr.phase)),
            st.leader.eq(tr.leader),
            st.rtt.eq(tr.rtt),
            st.rtt_valid.eq(tr.rtt_valid),
            st.balance.eq(tok.balance),
            st.waiting.eq(rlfd.waiting),
            st.tx_phase.eq(tok.tx_phase),
            st.rx_phase.eq(tok.rx_phase),
            st.up.eq(entangle),
            st.anomaly.eq(decide_anomaly),
            st.suspect.eq(decide_suspect),
            st.reason.eq(
                Mux(
                    cause.remote_fault,
                    Reason.REMOTE_FAULT,
                    Mux(decide_suspect, Mux(cause.suspect, cause.reason, Reason.DEGRADED), Reason.NONE),
                )
            ),
            st.degraded.eq(n.degraded),
            st.window.eq(fr.window),
            st.queue_overflow.eq(fr.queue_overflow),
        ]

    def _counters(self, m, n):
        """The status counters, registered twice (PROTOCOL.md 2.2)."""
        chk, decide, decide_anomaly, decide_suspect = n.chk, n.decide, n.decide_anomaly, n.decide_suspect
        entangle, fr, tok, tr, st = n.entangle, n.fr, n.tok, n.tr, self.status
        # The counters are registered a second time: they show the events up to the cycle
        # before the last one (PROTOCOL.md 2.2), off every path of the protocol's own logic.
        # Each counter adds (amount, when) terms, both registered first; a restart's are already
        # registered (its causes) and counted as it is decided.
        # Data-plane anomalies are recovered without a restart: counted a cycle after they are
        # found, as a restart's anomaly is counted a cycle after its cause (registered) is found.
        recovered_q = Signal(2, name="recovery_anomalies_q")
        m.d.sync += recovered_q.eq(fr.recovery_anomalies)
        counter = st.counters.anomalies
        m.d.sync += counter.eq(counter + decide_anomaly + recovered_q)
        # A decision is a late signal: it only selects the count plus one, kept in a register
        # beside the count, so the carry chain runs from registers alone.
        for name, decided in (("suspicions", decide_suspect), ("trainings", decide)):
            counter = getattr(st.counters, name)
            after = Signal.like(counter, name=f"{name}_after", init=1)
            with m.If(decided):
                m.d.sync += [counter.eq(after), after.eq(after + 1)]
        increments = {
            "malformed": [((self.rx.valid & ~chk.wellformed) + fr.malformed, 1)],
            "recoveries": [(fr.recovery_sent, 1)],
            "token_asks": [(n.s_ask, 1)],
            "ties": [(tr.tie, 1)],
            "probes_late": [(tr.late, 1)],
            "reconcile_conflicts": [(tok.conflict + fr.conflicts, entangle | n.settle_apply)],
            "frames_sent": [(fr.frame_sent, 1)],
            "slices_sent": [(fr.slice_sent, 1)],
            "frames_delivered": [
                (fr.delivered_token, fr.token_took),
                (fr.delivered_recon, entangle | n.settle_apply),
            ],
        }
        for name, terms in increments.items():
            counter, added = getattr(st.counters, name), []
            for i, (amount, when) in enumerate(terms):
                amount_q, when_q = Signal(len(amount), name=f"{name}_amount{i}"), Signal(name=f"{name}_when{i}")
                m.d.sync += [amount_q.eq(amount), when_q.eq(when)]
                added.append(Mux(when_q, amount_q, 0))
            m.d.sync += counter.eq(counter + sum(added))
