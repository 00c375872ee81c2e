"""Delivery of frames on the receive path of rtl/link/framer (docs/PROTOCOL.md 4.3, 4.6, 3.5).

The receiver numbers the frames of each class as they complete (``rx_count``), delivers them up
to a token's commit count (``delivered``) and hands them to the user in that order (``out_ptr``
of the receive memory). The proof follows those three pointers of every class, and one frame,
solver-chosen by class and sequence, through its life: received, committed, taken.
"""

from types import SimpleNamespace

from amaranth.asserts import AnyConst, AnySeq, Initial
from amaranth.hdl import Array, Assert, Assume, Cat, Const, Cover, Elaboratable, Module, Mux, Signal

from formal import observe
from formal.runner import Proof
from golden import encoding as enc
from golden.params import LinkParams
from rtl.link.framer import Framer

# The default build: two classes, window 16 (W' = 16, a receive memory of 32 frames per class),
# digest mode, selective repeat; sequences of 12 bits.
PARAMS = LinkParams()
# A go-back-N build commits on a RESYNC too (PROTOCOL.md 4.6): proven at the same window.
PARAMS_GBN = LinkParams(recovery="go_back_n")


class _Redeliver(Framer):
    """Seeded bug: a token's counts are taken without the check of their range, so a stale
    count (one behind the frames delivered, as a duplicated token word carries) moves
    ``delivered`` back and the frames after it are delivered again."""

    def _rx_commit(self, m, n):
        super()._rx_commit(m, n)
        with m.If(self.rx_token & ~self.rx_resync):
            for c in range(self._C):
                m.d.sync += n.delivered[c].eq(n.base[c] + n.owed_t[c])


def _dist(a, b, bits):
    """How far ``b`` lies ahead of ``a``, modulo 2**bits."""
    return (b - a)[:bits]


class FramerDelivery(Elaboratable):
    """The framer with every received word free (AnySeq: kind, class, index, slice, body and its
    counts), so drops, corruption the word checks let through, duplicated and reordered words,
    stale and future commit counts all occur; the user takes delivered frames whenever it likes.
    The endpoint's contract is assumed: data-plane words are applied only while UP and not in
    the restart cycle, a token outside UP only as the follower's entangling token (with
    ``entangle``), one word per cycle; A applies the word stage C showed the cycle before;
    ``up`` follows ``entangle`` and ``restart``; the end entangles only while not UP, at least
    two cycles after the restart cycle (training takes far longer). Proves, for every class,
    with ``out_ptr`` <= ``delivered`` <= ``rx_count`` meaning positions modulo the sequence space:

    * the frames held are in order: ``out_ptr`` <= ``delivered`` <= ``rx_count`` <= ``out_ptr`` + 2W'
      (the receive memory), pending frames at most the window, the registers kept beside the
      pointers (``pending_frames``, ``occupancy``, the full flags) equal to what they stand for;
    * ``delivered`` moves only on a token, a RESYNC (go-back-N) or entangling, and only forward
      within the frames received; ``out_ptr`` moves by exactly one per frame the user takes, and
      only onto a frame delivered; ``rx_count`` moves by one per frame completed (a DATA word of
      the class), or back to a point at or past ``delivered`` (a RESYNC, entangling);

    and for one frame F (class and sequence chosen by the solver) and F' the one before it:

    * F becomes pending only as the next frame received; it is committed only from pending, on
      a token, a RESYNC or entangling, and with F' committed at the latest in the same cycle; a
      committed frame stays committed until the user takes it, and the take ends it: F is taken
      exactly once per time it is received, never before it is committed and never before F';
      a pending frame is forgotten only by a RESYNC or entangling, never one committed;

    and, on the send side, with selective repeat: a redo queue is popped only while it holds a
    frame (the pop follows the REPLAY by a cycle).
    """

    def __init__(self, dut, params):
        self.dut, self.params = dut, params

    def elaborate(self, platform):
        m = Module()
        dut, p = self.dut, self.params
        C, W = p.num_classes, p.window
        m.submodules.dut = fragment = observe.elaborate(dut, platform)
        own = observe.registers(fragment)
        dl = observe.registers(fragment, "delivery")
        rc = observe.registers(fragment, "reconcile")
        discard = observe.registers(fragment, "recovery")["discard"]
        N, Wp = dut._seq_bits, 1 << dut._slot_bits

        # --- the endpoint's contract ------------------------------------------------------------
        up = Signal()
        restart, entangle = AnySeq(1), AnySeq(1)
        kinds = ("rx_data", "rx_echo", "rx_digest", "rx_token", "rx_resync", "rx_ack", "rx_nak", "rx_replay")
        word = {name: AnySeq(1) for name in kinds}
        live = up & ~restart
        # Cycles not UP since the restart cycle (saturated): training before entangling.
        age = Signal(range(3))
        with m.If(restart | up):
            m.d.sync += age.eq(0)
        with m.Elif(age != 2):
            m.d.sync += age.eq(age + 1)
        with m.If(restart):
            m.d.sync += up.eq(0)
        with m.Elif(entangle):
            m.d.sync += up.eq(1)
        m.d.comb += [
            Assume(~entangle | (~up & ~restart & (age == 2))),
            Assume(sum(word.values()) <= 1),
            *[Assume(~word[name] | live) for name in kinds if name != "rx_token"],
            Assume(~word["rx_token"] | live | entangle),
        ]
        for name, value in word.items():
            m.d.comb += getattr(dut, name).eq(value)
        # Stage C shows the word A applies in the next cycle.
        c_cls, c_index, c_slice = AnySeq(enc.CLASS_BITS), AnySeq(enc.INDEX_BITS), AnySeq(enc.SLICE_BITS)
        rx_cls, rx_index, rx_slice = Signal.like(c_cls), Signal.like(c_index), Signal.like(c_slice)
        m.d.sync += [rx_cls.eq(c_cls), rx_index.eq(c_index), rx_slice.eq(c_slice)]
        data_word = AnySeq(1)  # a well-formed DATA word, applied or not (the running digests)
        m.d.comb += [
            Assume(~word["rx_data"] | data_word),
            dut.c_cls.eq(c_cls),
            dut.c_index.eq(c_index),
            dut.c_slice.eq(c_slice),
            dut.rx_cls.eq(rx_cls),
            dut.rx_index.eq(rx_index),
            dut.rx_last.eq(rx_index == enc.SLICES_PER_FRAME - 1),
            dut.rx_slice.eq(rx_slice),
            dut.rx_body.eq(rx_slice[: enc.CTL_BODY_BITS]),
            dut.rx_nslice.eq(AnySeq(enc.DIGEST_CRC_BITS)),
            dut.rx_data_class.eq(Mux(data_word, (Const(1, C) << rx_cls)[:C], 0)),
            dut.rx_token_up.eq(word["rx_token"] & up),
            dut.up.eq(up),
            dut.live.eq(live),
            dut.restart.eq(restart),
            dut.entangle.eq(entangle),
        ]
        # Training stores the peer's READY body as it arrives.
        peer_half, peer_store = Signal(enc.CTL_BODY_BITS), AnySeq(1)
        with m.If(peer_store):
            m.d.sync += peer_half.eq(dut.rx_body)
        m.d.comb += [dut.peer_half.eq(peer_half), dut.peer_half_in.eq(dut.rx_body), dut.peer_store.eq(peer_store)]
        # The sender's side and the user: free.
        m.d.comb += [dut.rtt.eq(AnySeq(len(dut.rtt))), dut.commit.eq(AnySeq(1)), dut.token_send.eq(AnySeq(1))]
        for c in range(C):
            m.d.comb += [
                dut.frames_in[c].valid.eq(AnySeq(1)),
                dut.frames_in[c].payload.eq(AnySeq(len(dut.frames_in[c].payload))),
                dut.frames_out[c].ready.eq(AnySeq(1)),
            ]

        # --- every class: the pointers and the registers beside them ---------------------------
        ptr = {}
        moved_any = word["rx_token"] | word["rx_resync"] | entangle
        for c in range(C):
            o, d, r = dl[f"out_ptr__{c}"], own[f"delivered{c}"], own[f"rx_count{c}"]
            held, committed, pending = _dist(o, r, N), _dist(o, d, N), _dist(d, r, N)
            occupancy = own[f"occupancy{c}"]
            take = dut.frames_out[c].valid & dut.frames_out[c].ready
            m.d.comb += [
                Assert(held <= 2 * Wp),
                Assert(committed <= held),
                Assert(pending <= W),
                Assert(own[f"pending_frames{c}"] == pending),
                Assert(occupancy == held[: len(occupancy)]),
                Assert(own[f"mem_full_ahead{c}"] == (held >= 2 * Wp)),
                Assert(own[f"window_full_ahead{c}"] == (pending >= W)),
                Assert(~dut.frames_out[c].valid | (committed != 0)),
            ]
            if dut._selective:
                # Selective repeat pops the redo queue a cycle after S sent the REPLAY of its
                # head, from a register: the head is still there (a clear in between drops the pop).
                popping = observe.registers(fragment, f"selective{c}")["redo_popping"]
                m.d.comb += Assert(~popping | observe.registers(fragment, f"redo{c}", "rest")["head_valid"])
            # Reconciliation, ready from the second cycle of training: what it delivers is pending.
            with m.If(~up & (age != 0)):
                m.d.comb += Assert(_dist(d, rc[f"recon_delivered__{c}"], N) <= pending)
            # The moves, judged a cycle later against the pointers as they were.
            prev = {k: Signal(N, name=f"prev_{k}{c}") for k in ("o", "d", "r")}
            took, moves, completes = Signal(name=f"prev_take{c}"), Signal(name=f"prev_moves{c}"), Signal()
            resets = Signal(name=f"prev_resets{c}")  # a RESYNC or entangling: rx_count may go back
            m.d.sync += [
                prev["o"].eq(o),
                prev["d"].eq(d),
                prev["r"].eq(r),
                took.eq(take),
                moves.eq(moved_any),
                completes.eq(word["rx_data"] & (rx_cls == c)),
                resets.eq(word["rx_resync"] | entangle),
            ]
            checked = Signal(name=f"checked{c}")  # the previous cycle is in the trace
            m.d.sync += checked.eq(1)
            with m.If(checked):
                m.d.comb += [
                    Assert(o == (prev["o"] + took)[:N]),
                    Assert((d == prev["d"]) | moves),
                    Assert(_dist(prev["d"], d, N) <= _dist(prev["d"], prev["r"], N)),
                    Assert(
                        (r == prev["r"])
                        | (completes & (r == (prev["r"] + 1)[:N]))
                        | (resets & (_dist(prev["d"], r, N) <= _dist(prev["d"], prev["r"], N)))
                    ),
                ]
            ptr[c] = (o, d, r, take, prev, took, moves, completes, resets, checked)

        # A commit count (a token's; a RESYNC's) is taken exactly when every class's lies within its
        # pending frames, [delivered, rx_count] (modulo the count's K bits); the follower's
        # entangling token's must equal the reconciled count.
        K = p.count_bits
        counts = enc.TOKEN_BODY  # a RESYNC carries its counts in the same field
        assert enc.RESYNC_BODY.lsb("counts") == counts.lsb("counts")
        good = []
        for c in range(C):
            lsb, width = enc.class_count_field(c, C)
            count = dut.rx_body[counts.lsb("counts") + lsb :][:width]
            o, d, r = ptr[c][:3]
            within = _dist(d[:K], count, K) <= _dist(d[:K], r[:K], K)
            good.append(Mux(up, within, count == rc[f"recon_delivered__{c}"][:K]))
        with m.If(word["rx_token"] | word["rx_resync"]):
            m.d.comb += Assert(dut.anomaly == ~Cat(*good).all())

        with m.If(Initial()):
            m.d.comb += Assume(~up & (age == 0) & (peer_half == 0))
            for c in range(C):
                m.d.comb += Assume(~ptr[c][9])

        e = SimpleNamespace(
            dut=dut, own=own, rc=rc, discard=discard, N=N, C=C, K=K, up=up, restart=restart, entangle=entangle,
            word=word, age=age, rx_cls=rx_cls, rx_index=rx_index, peer_half=peer_half, peer_store=peer_store, ptr=ptr,
        )  # fmt: skip
        self.properties(m, e)
        return m

    def properties(self, m, e):
        """F and F': received, committed, taken once, in order; the covers."""
        dut, own, discard, N, C = e.dut, e.own, e.discard, e.N, e.C
        up, entangle, word, rx_cls, rx_index, ptr = e.up, e.entangle, e.word, e.rx_cls, e.rx_index, e.ptr

        # --- one frame, and the one before it ------------------------------------------------------
        cls = AnyConst(range(C)) if C > 1 else 0
        if C > 1:
            m.d.comb += Assume(cls < C)
        seq = AnyConst(N)

        def pick(i):
            return Array(ptr[c][i] for c in range(C))[cls]

        o, d, r = pick(0), pick(1), pick(2)
        prev = {k: Array(ptr[c][4][k] for c in range(C))[cls] for k in ("o", "d", "r")}
        took, moves, completes, resets, checked = (pick(i) for i in range(5, 10))

        def where(x, o, d, r):
            """(held, committed): the frame numbered ``x`` is in the memory; it is delivered."""
            return _dist(o, x, N) < _dist(o, r, N), _dist(o, x, N) < _dist(o, d, N)

        frames = {}
        for name, x in (("f", seq), ("before", (seq - 1)[:N])):
            held_now, comm_now = where(x, o, d, r)
            held_was, comm_was = where(x, prev["o"], prev["d"], prev["r"])
            frames[name] = (x, held_now, comm_now, held_was, comm_was)
            pend_now, pend_was = held_now & ~comm_now, held_was & ~comm_was
            taken_now = took & (prev["o"] == x)
            with m.If(checked):
                m.d.comb += [
                    # Received: only as the next frame numbered.
                    Assert(~(pend_now & ~held_was) | (completes & (prev["r"] == x))),
                    # Committed: only from pending, on a token, a RESYNC or entangling.
                    Assert(~(comm_now & ~comm_was) | (pend_was & moves)),
                    # A committed frame stays until the user takes it; the take ends it.
                    Assert(~comm_was | Mux(taken_now, ~held_now, comm_now)),
                    # Taken only once committed (and so once per time received).
                    Assert(~taken_now | comm_was),
                    # Forgotten while pending only by a RESYNC or entangling.
                    Assert(~(pend_was & ~held_now) | resets),
                ]
        f, before = frames["f"], frames["before"]
        with m.If(checked):
            m.d.comb += [
                # In order: F is committed no earlier than F', and taken after it.
                Assert(~(f[2] & before[1] & ~before[2])),
                Assert(~(took & (prev["o"] == seq)) | ~before[3]),
            ]

        # Not vacuous: F taken after a duplicate of a slice was refused (the receiver then
        # discards until the peer's RESYNC); F taken after a token count out of range was refused; a
        # pending frame committed by reconciliation at entangling; a pending frame forgotten by a
        # RESYNC.
        f_taken = checked & took & (prev["o"] == seq)
        last_index = Array(own[f"rx_index{c}"] for c in range(C))[cls]
        duplicate = word["rx_data"] & (rx_cls == cls) & (last_index != 0) & (rx_index == (last_index - 1)[:3])
        dup_seen, stale_seen = Signal(), Signal()
        with m.If(duplicate & ~discard):
            m.d.sync += dup_seen.eq(1)
        with m.If(word["rx_token"] & up & dut.anomaly & (d != r)):
            m.d.sync += stale_seen.eq(1)
        m.d.comb += [
            Cover(f_taken & dup_seen),
            Cover(f_taken & stale_seen),
            Cover(checked & f[2] & ~f[4] & (prev["r"] != prev["d"]) & entangle_was(m, entangle)),
            Cover(checked & f[3] & ~f[4] & ~f[1] & resets),
        ]
        with m.If(Initial()):
            m.d.comb += Assume(~dup_seen & ~stale_seen)


def entangle_was(m, entangle):
    """``entangle`` in the previous cycle."""
    was = Signal(name="entangle_was")
    m.d.sync += was.eq(entangle)
    return was


def _build(params):
    def build(mutant):
        return FramerDelivery((_Redeliver if mutant else Framer)(params), params), []

    return build


def proofs():
    return [
        Proof(
            name="framer",
            block="Framer (default build: 2 classes, window 16)",
            prop="delivery: pointers in order, each frame committed and taken once, in order",
            build=_build(PARAMS),
            mode="prove",
            depth=4,
            cover_depth=24,
            mutant="a token's counts taken without their range check (a stale count re-delivers)",
            fast=False,
            flatten=True,
        ),
        Proof(
            name="framer_go_back_n",
            block="Framer (default build, go-back-N)",
            prop="the same with go-back-N recovery (a RESYNC commits its counts)",
            build=_build(PARAMS_GBN),
            mode="prove",
            depth=4,
            cover_depth=24,
            mutant="a token's counts taken without their range check (a stale count re-delivers)",
            fast=False,
            flatten=True,
        ),
    ]
