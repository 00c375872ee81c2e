"""Selective repeat and token copies (PROTOCOL.md 4.6, 3.1), golden model: each mechanism seen
working on a single forged word, each fallback when its own word is lost, and the harness
scoreboard checking every frame and token throughout."""

from types import SimpleNamespace

import pytest

from golden import encoding as enc
from golden.common.slice import data_tag
from golden.encoding import Ctl
from golden.link.control import TOKEN_COPY_DELTA, control_word
from golden.link.framer import Framer
from golden.params import NOISE_WINDOW, TURNAROUND, LinkParams
from sim.harness.link import LinkHarness, Traffic, make_link

LAT = 8
TRAFFIC = Traffic(frame_load=(0.05,), ait_rate=0.2)


def codes_sent(h, name, cycles):
    """Run ``cycles`` cycles; the control codes end ``name`` put on the wire, in order."""
    out = []
    for _ in range(cycles):
        word = getattr(h, name).tx_word
        tag = word >> enc.SLICE_BITS
        if tag >> 6 == 0:
            out.append(tag >> 1)
        h.step()
    return out


def up_link(**params):
    h = make_link(LAT, traffic_a=TRAFFIC, traffic_b=TRAFFIC, num_classes=1, check_balance=True, **params)
    h.run_until(LinkHarness.both_up, 10_000)
    h.run(1000)
    return h


def step_until_a_sends(h, predicate, limit=20_000):
    for _ in range(limit):
        if predicate(h.a.tx_word):
            return h.a.tx_word
        h.step()
    pytest.fail("the word never came")


def forge_slice(h):
    """Flip payload bits of the next slice 4 that A sends: B receives it with a good tag."""
    step_until_a_sends(h, lambda w: w >> enc.SLICE_BITS == data_tag(0, 4))
    h.channel.ab.bit_flips = {h.channel.ab.cycle + LAT: 0xFFFF}


def test_a_corrupted_payload_is_replayed_alone():
    h = up_link(recovery="selective")
    forge_slice(h)
    codes = codes_sent(h, "a", 400)
    assert Ctl.REPLAY in codes and Ctl.RESYNC not in codes
    assert ("recovery", "digest mismatch") in [(e[1], e[2]) for e in h.stats["a"].events]
    h.quiesce()
    assert h.a.counters.trainings == h.b.counters.trainings == 0  # none after the first


def test_go_back_n_resends_the_round_trip_instead():
    h = up_link(recovery="go_back_n")
    forge_slice(h)
    codes = codes_sent(h, "a", 400)
    assert Ctl.RESYNC in codes and Ctl.REPLAY not in codes
    h.quiesce()


def test_a_lost_replay_announcement_falls_back_to_go_back_n():
    """Without its REPLAY the receiver takes the frame sent again for a new one: the digest then
    names another frame, the sender resyncs, and nothing is delivered twice."""
    h = up_link(recovery="selective")
    forge_slice(h)
    step_until_a_sends(h, lambda w: w >> enc.SLICE_BITS >> 1 == Ctl.REPLAY)
    h.channel.ab.bit_flips = {h.channel.ab.cycle + LAT: 1 << 70}
    codes = codes_sent(h, "a", 400)
    assert Ctl.RESYNC in codes
    h.quiesce()
    assert h.b.counters.malformed >= 1


def test_a_go_back_n_end_counts_a_replay_word_malformed():
    h = up_link(recovery="go_back_n")
    h.channel.ab.stuck = [(h.channel.ab.cycle + 1, h.channel.ab.cycle + 2, control_word(Ctl.REPLAY, 0))]
    h.run(200)
    assert h.b.counters.malformed == 1 and h.b.counters.anomalies == 0
    h.quiesce()


def corrupt_next_token(h):
    step_until_a_sends(h, lambda w: (w >> enc.SLICE_BITS >> 1) in enc.TOKEN_CODES)
    h.channel.ab.bit_flips = {h.channel.ab.cycle + LAT: 1 << 3}


@pytest.mark.parametrize("copies", [False, True])
def test_a_corrupted_token_word_costs_a_retraining_unless_copies_were_asked_for(copies):
    h = up_link(token_copies=copies)
    # A malformed word at A: A asks B for copies for NOISE_WINDOW cycles (on its next token).
    h.channel.ba.bit_flips = {h.channel.ba.cycle + 1: 1 << 70}
    h.run(4 * (2 * LAT + TURNAROUND))
    for _ in range(1000):
        if (h.b.tx_word >> enc.SLICE_BITS >> 1) in enc.TOKEN_CODES:
            break
        h.step()
    # Corrupt B's token word on its way: A applies its copy, if B sends one.
    h.channel.ba.bit_flips = {h.channel.ba.cycle + LAT: 1 << 3}
    before = h.a.counters.trainings
    h.run(300)
    assert h.a.counters.trainings == before + (0 if copies else 1)
    h.quiesce()


def test_copies_are_sent_only_while_the_peer_has_seen_noise():
    h = up_link(token_copies=True)
    last = {"original": None, "word": None}  # B's last token original and last word, across calls

    def doubled(cycles):
        """(copies, originals) among the token words B sends in ``cycles`` cycles. A copy is its
        last original with the copy flag alone; it follows it at once, unless A asked for it again
        (a word sent again comes a round trip later and is not counted as a copy)."""
        copies = originals = 0
        previous, original = last["word"], last["original"]
        for _ in range(cycles):
            word = h.b.tx_word
            if (word >> enc.SLICE_BITS >> 1) in enc.TOKEN_CODES:
                if enc.TOKEN_BODY.get(word, "copy"):
                    assert original is not None and original ^ word == TOKEN_COPY_DELTA
                    copies += previous == original
                else:
                    original, originals = word, originals + 1
            previous = word
            h.step()
        last.update(original=original, word=previous)
        return copies, originals

    assert doubled(1000)[0] == 0
    h.channel.ba.bit_flips = {h.channel.ba.cycle + 1: 1 << 70}  # A sees one malformed word
    copies, tokens = doubled(NOISE_WINDOW // 2)
    assert copies >= 1 and tokens >= copies
    h.run(NOISE_WINDOW + 200)
    assert doubled(1000)[0] == 0
    h.quiesce()


@pytest.mark.parametrize("recovery", ["go_back_n", "selective"])
def test_a_line_that_corrupts_every_payload_is_degraded_not_a_silent_ghost(recovery):
    """Every DATA word A sends has a payload bit flipped: no frame ever gets through. Replays count
    toward RECOVERY_LIMIT like RESYNCs, so both schemes end in a suspicion (degraded), not in a
    link UP for good that moves nothing (found by a fault schedule nobody planned)."""
    from golden.common.slice import DECODE_TABLE
    from golden.encoding import Kind, Reason

    h = make_link(
        LAT,
        traffic_a=Traffic(frame_load=(0.02,), ait_rate=0.1),
        traffic_b=Traffic(ait_rate=0.1),
        check_balance=True,
        num_classes=1,
        recovery=recovery,
    )
    h.run_until(LinkHarness.both_up, 20_000)
    h.run(200)
    line = h.channel.ab
    for _ in range(6000):
        if DECODE_TABLE[h.a.tx_word >> enc.SLICE_BITS].kind == Kind.DATA:
            line.bit_flips[line.cycle + line.latency] = 1 << 5
        h.step()
    assert ("suspect", Reason.DEGRADED) in [(e[1], e[2]) for e in h.stats["a"].events]
    h.quiesce()


def test_a_fill_word_between_a_token_and_its_copy_changes_nothing():
    """Latency drift puts a fill word between an AIT_OFFER and its copy: the copy is still dropped
    (by its turn, not by timing or position), so the offer is acted on once (found by a fault
    schedule: the first rule, by timing, took it twice)."""
    tr = Traffic(frame_load=(0.05,), ait_rate=0.5)
    h = make_link(1, traffic_a=tr, traffic_b=tr, check_balance=True, token_copies=True, num_classes=1)
    h.run_until(LinkHarness.both_up, 20_000)
    h.run(500)
    h.channel.ab.bit_flips = {h.channel.ab.cycle + 1: 1 << 70}  # B asks A for copies
    step_until_a_sends(h, lambda w: (w >> enc.SLICE_BITS >> 1) == Ctl.AIT_OFFER and enc.TOKEN_BODY.get(w, "copy"))
    line = h.channel.ab
    line.latency_changes = [(line.cycle + line.latency, line.latency + 1)]
    before = h.b.counters.anomalies + h.b.counters.trainings
    h.run(300)
    assert h.b.counters.anomalies + h.b.counters.trainings == before
    h.quiesce()


def test_a_resync_keeps_the_frames_known_good_and_replays_only_the_others():
    """Two frames' payloads are hit (queued for replays) and, while the frames after them come back
    good, a digest is lost: the sender resyncs. The RESYNC resumes after the last good frame, the
    scan queues for replay only the frames below it that are not good, one per cycle, and new
    frames follow from the resume point; the scoreboard sees every frame once."""
    h = make_link(
        LAT,
        traffic_a=Traffic(frame_load=(1.0,)),
        traffic_b=TRAFFIC,
        num_classes=1,
        check_balance=True,
        recovery="selective",
    )
    h.run_until(LinkHarness.both_up, 10_000)
    h.run(500)
    fr = h.a.framer
    forge_slice(h)  # two frames in a row hit
    first = dict(h.channel.ab.bit_flips)
    h.step()
    forge_slice(h)
    h.channel.ab.bit_flips.update(first)
    for _ in range(2000):
        if len(fr.good[0]) >= 2:
            break
        h.step()
    hit = fr.confirmed[0]
    assert fr.good[0] and hit not in fr.good[0], "no frame came back good behind the hit one"
    # Lose B's next digest: the one after it names another frame than A expects.
    for _ in range(200):
        if h.b.tx_word >> enc.SLICE_BITS >> 1 == Ctl.DIGEST and h.b.tx_word >> enc.SLICE_BITS >> 6 == 0:
            break
        h.step()
    h.channel.ba.bit_flips = {h.channel.ba.cycle + LAT: 1 << 70}
    number = fr.resync_number
    for _ in range(200):
        h.step()
        if fr.resync_number != number:
            break
    # S has just sent the RESYNC: what it kept and what it queues from now on.
    good, confirmed = set(fr.good[0]), fr.confirmed[0]
    expected = [n for n in range(confirmed, max(good) + 1) if n not in good]
    assert hit in expected and len(expected) >= 2
    queued, sent = [len(fr.redo[0])], []
    for _ in range(len(expected) + len(good) + 2):
        sent.append(h.a.tx_word)
        h.step()
        queued.append(len(fr.redo[0]))
    assert queued[0] == 0 and max(b - a for a, b in zip(queued, queued[1:])) <= 1  # one per cycle
    word = next(w for w in sent if w >> enc.SLICE_BITS >> 1 == Ctl.RESYNC)
    resume = enc.RESYNC_BODY.get(word, "counts") % fr.count_mod  # class 0: the low count_bits
    assert resume == (max(good) + 1) % fr.count_mod != confirmed % fr.count_mod
    replayed = []
    for _ in range(400):
        if h.a.tx_word >> enc.SLICE_BITS >> 1 == Ctl.REPLAY:
            replayed.append(enc.REPLAY_BODY.get(h.a.tx_word, "seq") % fr.count_mod)
        h.step()
    assert replayed[: len(expected)] == [n % fr.count_mod for n in expected]
    h.quiesce()
    assert h.a.counters.trainings == h.b.counters.trainings == 0  # none after the first


def test_the_scan_never_queues_a_frame_the_confirmed_count_passed_while_it_waited():
    """After a RESYNC the scan looks at one frame a cycle, but waits in a cycle in which a frame
    a digest queued enters the redo queue, while the confirmed count moves on through good frames. A
    frame the count passed was good and is no longer marked: it must not be sent again (its
    replay-buffer slot may already hold a newer frame)."""
    f = Framer(LinkParams(recovery="selective", num_classes=1, window=8), SimpleNamespace())
    for _ in range(5):
        f.hand_in(0, bytes(enc.FRAME_BYTES))
    f.replay[0].popleft()  # frame 0 confirmed (its replay matched)
    f.confirmed, f.good = [1], [{1, 2, 3}]
    f.scan, f.scan_end = [1], [4]
    for _ in range(2):  # the scan waits twice; the count passes 1 and 2
        f._redo_entering = [7]
        f.advance()
    f._redo_entering = [None]
    assert f.confirmed == [3] and f.scan == [1]
    for _ in range(3):
        f.advance()
    assert f.scan == [4] and f.confirmed == [4] and not f.redo[0]
