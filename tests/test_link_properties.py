"""Properties of the golden link under random traffic and random faults (PROTOCOL.md 7).

Every run is checked cycle by cycle by the harness scoreboard (frames exactly once, in order per
class, bit for bit; tokens at most once; the balance invariant) and must then settle: once the
faults end and the users stop, everything handed in is delivered or returned.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from golden import encoding as enc
from golden.common.slice import data_tag, echo_tag
from golden.encoding import Reason
from golden.link.core import LinkCore
from golden.params import TURNAROUND, window_for_rtt
from sim.harness.base import ScoreboardError
from sim.harness.healthy_runs import LATENCY, PROFILES, TOTAL_CYCLES, run_profile
from sim.harness.link import LinkHarness, Traffic, make_link
from sim.tools.seeds import examples

MARGIN = 8


# --- random traffic, random faults ----------------------------------------------------------


@st.composite
def faults(draw, latency, horizon):
    f = {}
    cuts = []
    for _ in range(draw(st.integers(0, 2))):
        start = draw(st.integers(300, horizon - 1500))
        cuts.append((start, start + draw(st.integers(1, 800))))
    if cuts:
        f["cuts"] = cuts
    ber = draw(st.sampled_from([0.0, 0.0, 1e-5, 1e-4, 1e-3]))
    if ber:
        f["bit_error_rate"] = ber
    if draw(st.booleans()):
        start = draw(st.integers(300, horizon - 1500))
        f["garbage"] = [(start, start + draw(st.integers(1, 60)))]
    if draw(st.booleans()):
        start = draw(st.integers(300, horizon - 1500))
        word = draw(st.sampled_from([0, (1 << 72) - 1, 0x02 << 64]))
        f["stuck"] = [(start, start + draw(st.integers(1, 60)), word)]
    if draw(st.booleans()):
        # Drift inside the margin: at most +3 per direction, so RTT grows by at most 6 < MARGIN.
        steps = sorted(draw(st.lists(st.integers(300, horizon - 1500), min_size=1, max_size=4)))
        f["latency_changes"] = [(t, latency + draw(st.integers(0, 3))) for t in steps]
    return f


@st.composite
def traffic(draw, classes):
    return Traffic(
        frame_load=tuple(draw(st.sampled_from([0.0, 0.005, 0.02, 0.1])) for _ in range(classes)),
        ait_rate=draw(st.sampled_from([0.0, 0.05, 0.5])),
        withdraw_rate=draw(st.sampled_from([0.0, 0.0, 0.01])),
        take_rate=draw(st.sampled_from([1.0, 0.5, 0.1])),
    )


@st.composite
def scenarios(draw):
    latency = draw(st.integers(1, 24))
    classes = draw(st.integers(1, 3))
    horizon = 6000
    return dict(
        latency=latency,
        seed=draw(st.integers(0, 2**16)),
        horizon=horizon,
        faults_ab=draw(faults(latency, horizon)),
        faults_ba=draw(faults(latency, horizon)),
        traffic_a=draw(traffic(classes)),
        traffic_b=draw(traffic(classes)),
        params=dict(
            num_classes=classes,
            echo_mode=draw(st.sampled_from(["digest", "full"])),
            window=draw(st.sampled_from([1, 2, 4, 16])),
            margin=MARGIN,
            recovery=draw(st.sampled_from(["go_back_n", "selective"])),
            token_copies=draw(st.booleans()),
        ),
    )


@pytest.mark.slow
@settings(max_examples=examples(75), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_random_traffic_and_faults_lose_and_duplicate_nothing(sc):
    h = make_link(
        sc["latency"],
        seed=sc["seed"],
        faults_ab=sc["faults_ab"],
        faults_ba=sc["faults_ba"],
        traffic_a=sc["traffic_a"],
        traffic_b=sc["traffic_b"],
        check_balance=True,
        **sc["params"],
    )
    h.run(sc["horizon"])
    h.quiesce(limit=600_000)


def test_a_copy_separated_from_its_original_by_a_malformed_fill_word_is_dropped():
    """The case the search above found: B's token word arrives, the B-to-A latency then grows by
    two (two fill words inserted, the first hit by a bit error: malformed), and the copy follows.
    Judged by position (the word before it, fill words aside, was lost), the copy stood for a
    lost original and was applied a second time: the balance went to +1. Judged by its turn
    (PROTOCOL.md 3.1), it follows an applied original and is dropped. (The seed and the cycles
    put the drift on a token word and its copy with this training's duration and pipeline: a
    change to either moves them, and the harness's count below says whether the case still
    happens.)"""
    h = make_link(
        12,
        seed=12,
        faults_ba={"bit_error_rate": 1e-4, "latency_changes": [(392, 14), (412, 12)]},
        traffic_a=Traffic(frame_load=(0.0, 0.0, 0.0)),
        traffic_b=Traffic(frame_load=(0.0, 0.0, 0.0), ait_rate=0.5),
        check_balance=True,
        num_classes=3,
        window=1,
        margin=MARGIN,
        recovery="go_back_n",
        token_copies=True,
    )
    h.run(416)
    assert h.copies_across_loss == 1
    h.run(6000 - 416)
    h.quiesce(limit=600_000)


@pytest.mark.parametrize("wrong", ["drops every copy", "drops no copy"])
def test_the_harness_catches_a_receiver_that_judges_copies_wrongly(monkeypatch, wrong):
    """The oracle behind the two tests above, against a receiver whose copy rule is wrong either
    way: taking a copy after its applied original breaks the balance invariant; dropping a copy
    whose original the line destroyed is seen by following the two through the line."""

    def next_is_copy(self):
        q = self.checked
        flagged = (
            q is not None
            and q.tag.kind == enc.Kind.CONTROL
            and q.tag.code in enc.TOKEN_CODES
            and bool(enc.TOKEN_BODY.get(q.body, "copy"))
        )
        return flagged and wrong == "drops every copy"

    monkeypatch.setattr(LinkCore, "next_is_copy", property(next_is_copy))
    noisy = {"bit_error_rate": 1e-3}
    h = make_link(
        16,
        seed=3,
        faults_ab=noisy,
        faults_ba=noisy,
        traffic_a=Traffic(frame_load=(0.05,), ait_rate=0.3),
        traffic_b=Traffic(frame_load=(0.05,), ait_rate=0.3),
        check_balance=True,
        num_classes=1,
    )
    with pytest.raises(ScoreboardError, match="dropped" if wrong == "drops every copy" else "balances"):
        h.run(20_000)


# --- detection ------------------------------------------------------------------------------


def suspect_cycles(h, name):
    return [e[0] for e in h.stats[name].events if e[1] == "suspect"]


@pytest.mark.slow
@pytest.mark.parametrize("latency", [1, 4, 16, 50])
@pytest.mark.parametrize("dirs", [("ab",), ("ba",), ("ab", "ba")], ids=["A-to-B", "B-to-A", "both"])
def test_a_cut_is_suspected_at_both_ends_within_rtt_plus_margin(latency, dirs):
    """Cut starts at every cycle of one token period, with data and tokens flowing."""
    rtt = 2 * latency + TURNAROUND
    traffic = Traffic(frame_load=(0.05, 0.01), ait_rate=0.3)
    base = make_link(latency, traffic_a=traffic, traffic_b=traffic)
    base.run_until(LinkHarness.both_up, 10_000)
    start = base.cycle + 500
    worst = 0
    for offset in range(rtt + 1):
        c = start + offset
        f = {"cuts": [(c, None)]}
        h = make_link(
            latency,
            traffic_a=traffic,
            traffic_b=traffic,
            faults_ab=f if "ab" in dirs else None,
            faults_ba=f if "ba" in dirs else None,
        )
        h.run(c + rtt + MARGIN + 5)
        for name in "ab":
            hits = [t for t in suspect_cycles(h, name) if t >= c]
            assert hits, f"end {name} never suspected the cut at {c}"
            worst = max(worst, hits[0] - c)
            assert hits[0] - c <= rtt + MARGIN, f"end {name}: {hits[0] - c} > RTT + margin"
    assert worst > 0


def test_a_silent_stuck_idle_line_is_caught_by_the_token_deadline():
    """A line stuck at a valid IDLE has signal but carries no token: the RLFD catches it."""
    latency = 10
    rtt = 2 * latency + TURNAROUND
    h = make_link(latency, faults_ab={"stuck": [(3000, None, 0x02 << 64)]})
    h.run(3000 + 2 * rtt + MARGIN + 2)
    reasons = {e[2] for n in "ab" for e in h.stats[n].events if e[1] == "suspect"}
    assert Reason.TOKEN_OVERDUE in reasons
    first = min(t for n in "ab" for t in suspect_cycles(h, n))
    # The token may have just crossed before the fault: one more token period, at most.
    assert first - 3000 <= 2 * rtt + MARGIN + 1


# --- healthy links: no false suspicion ------------------------------------------------------
# Each profile of sim/harness/healthy_runs.py at a twentieth of its length here (5 * 10**5 cycles
# in all); make bench runs them whole, 10**7 cycles (bench.json healthy_links).


@pytest.mark.slow
@pytest.mark.parametrize("name", [p[0] for p in PROFILES])
def test_healthy_link_never_suspects(name):
    r = run_profile(name, fraction=0.05)
    assert r["suspicions"] == 0 and r["anomalies"] == 0 and r["malformed"] == 0 and r["trainings"] == 0, r
    assert r["both_up"]
    if name.startswith("drift"):
        assert set(r["latencies"]) > {LATENCY}, "the drift never moved"


def test_the_full_healthy_runs_add_up_to_ten_million_cycles():
    assert TOTAL_CYCLES >= 10**7


def test_a_healthy_run_rejects_an_unknown_profile_or_fraction():
    with pytest.raises(ValueError, match="unknown healthy profile"):
        run_profile("busy")
    with pytest.raises(ValueError, match="fraction"):
        run_profile("idle", fraction=0)


def test_drift_beyond_the_margin_is_suspected_and_the_link_retrains_at_the_new_rtt():
    latency = 16
    traffic = Traffic(frame_load=(0.02,), ait_rate=0.2)
    steps = [(3000 + 200 * k, latency + k) for k in range(1, 7)]  # +6 per direction: RTT +12
    h = make_link(
        latency,
        faults_ab={"latency_changes": steps},
        faults_ba={"latency_changes": steps},
        traffic_a=traffic,
        traffic_b=traffic,
    )
    h.run(8000)
    reasons = {e[2] for n in "ab" for e in h.stats[n].events if e[1] == "suspect"}
    assert Reason.TOKEN_OVERDUE in reasons
    h.quiesce()
    # The round trip is measured when the drift passes the margin, and it may grow a little
    # more after that: each end holds an RTT within the margin of the true one (PROTOCOL.md 7).
    true_rtt = 2 * (latency + 6) + TURNAROUND
    assert all(true_rtt - h.a.p.margin <= ep.rtt <= true_rtt for ep in (h.a, h.b))


@pytest.mark.parametrize("mode", ["digest", "full"])
def test_flaps_retrain_and_resume_with_nothing_lost(mode):
    traffic = Traffic(frame_load=(0.05, 0.02), ait_rate=0.3, take_rate=0.8)
    flaps = [(2000, 2300), (4000, 4010), (6000, 7000), (9000, 9150)]
    h = make_link(
        12,
        faults_ab={"cuts": flaps},
        faults_ba={"cuts": flaps[1:]},
        traffic_a=traffic,
        traffic_b=traffic,
        check_balance=True,
        echo_mode=mode,
    )
    h.run(12_000)
    assert h.a.counters.trainings >= 3
    h.quiesce()
    assert h.a.rtt == h.b.rtt == 2 * 12 + TURNAROUND
    assert min(h.stats["b"].frames_out) > 50 and len(h.stats["b"].ait_out) > 50


RECOVERIES = [dict(recovery="go_back_n", token_copies=False), dict(recovery="selective", token_copies=True)]


@pytest.mark.slow
@pytest.mark.parametrize("scheme", RECOVERIES, ids=["go-back-N", "selective+copies"])
@pytest.mark.parametrize("mode", ["digest", "full"])
@pytest.mark.parametrize("ber", [1e-5, 1e-4, 1e-3])
def test_bit_errors_never_corrupt_lose_or_duplicate(ber, mode, scheme):
    traffic = Traffic(frame_load=(0.02, 0.02), ait_rate=0.2, take_rate=0.9)
    f = {"bit_error_rate": ber}
    h = make_link(
        16,
        seed=int(ber * 1e6),
        faults_ab=f,
        faults_ba=f,
        traffic_a=traffic,
        traffic_b=traffic,
        check_balance=True,
        echo_mode=mode,
        **scheme,
    )
    h.run(60_000)
    h.quiesce(limit=600_000)
    assert h.channel.ab.bits_flipped > 0
    delivered = sum(h.stats["b"].frames_out) + sum(h.stats["a"].frames_out)
    assert delivered >= 100, "too few frames got through for the test to mean anything"


def test_full_echo_alone_would_miss_a_cancelling_double_error_but_the_digest_catches_it():
    """A forward bit error and the same bit flipped back in the echo: the echo matches."""
    latency = 6
    h = make_link(latency, traffic_a=Traffic(frame_load=(0.05,)), num_classes=1, echo_mode="full")
    h.run(3000)
    while h.a.tx_word >> 64 != data_tag(0, 2):
        h.step()
    h.channel.ab.bit_flips[h.cycle + latency] = 1 << 9
    # The echo of that slice carries the slice as B received it (another frame's echo may be
    # on B's wire now).
    echoed = echo_tag(0, 2) << 64 | (h.a.tx_word & (1 << 64) - 1) ^ 1 << 9
    while h.b.tx_word != echoed:
        h.step()
    h.channel.ba.bit_flips[h.cycle + latency] = 1 << 9
    h.run(3 * latency)
    events = [e[2] for e in h.stats["a"].events if e[1] == "recovery"]
    assert "echo mismatch" not in events and "digest mismatch" in events
    h.quiesce()


# --- liveness (PROTOCOL.md 7.5) ---------------------------------------------------------------


@st.composite
def any_faults(draw, latency, horizon):
    """Every fault of PROTOCOL.md 6, the latency far up and down, all over by ``horizon``."""

    def interval(longest):
        start = draw(st.integers(200, horizon - 400))
        return start, start + draw(st.integers(1, longest))

    f = {
        "cuts": [interval(500) for _ in range(draw(st.integers(0, 2)))],
        "garbage": [interval(60) for _ in range(draw(st.integers(0, 1)))],
        "freezes": [interval(90) for _ in range(draw(st.integers(0, 2)))],
        "stuck": [
            (*interval(60), draw(st.sampled_from([0, 0x02 << 64, (1 << 72) - 1])))
            for _ in range(draw(st.integers(0, 1)))
        ],
        "bit_flips": {t: 1 << draw(st.integers(0, 71)) for t in draw(st.lists(st.integers(200, horizon), max_size=40))},
    }
    steps = sorted(draw(st.lists(st.integers(200, horizon - 300), max_size=4)))
    f["latency_changes"] = [(t, draw(st.integers(1, latency + 30))) for t in steps] + [(horizon - 200, latency)]
    for name in ("cuts", "garbage", "freezes", "stuck"):
        f[name] = sorted(f[name])
    return f


@st.composite
def liveness_runs(draw):
    latency = draw(st.integers(1, 24))
    horizon = 5000
    return dict(
        latency=latency,
        seed=draw(st.integers(0, 2**16)),
        horizon=horizon,
        faults_ab=draw(any_faults(latency, horizon)),
        faults_ba=draw(any_faults(latency, horizon)),
        load=draw(st.sampled_from([0.02, 0.3, 1.0])),
        mode=draw(st.sampled_from(["digest", "full"])),
        scheme=draw(st.sampled_from(RECOVERIES)),
    )


@pytest.mark.slow
@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(liveness_runs())
def test_after_any_faults_a_healthy_stable_channel_brings_the_link_up_within_the_bound(run):
    """Freezes, stuck words, garbage, cuts, flips and latency far up and down, with traffic of
    every weight (saturated: no idle slot but the fill words); then the channel heals."""
    latency = run["latency"]
    traffic = Traffic(frame_load=(run["load"],), ait_rate=0.2, withdraw_rate=0.01)
    h = make_link(
        latency,
        seed=run["seed"],
        faults_ab=run["faults_ab"],
        faults_ba=run["faults_ba"],
        traffic_a=traffic,
        traffic_b=traffic,
        check_balance=True,
        num_classes=1,
        max_rtt=256,
        echo_mode=run["mode"],
        margin=MARGIN,
        **run["scheme"],
    )
    h.run(run["horizon"])
    # Stable: the fill words let the line come back to its latency, whatever the traffic.
    h.run_until(lambda x: x.channel.ab.latency == x.channel.ba.latency == latency, 60_000)
    rtt = 2 * latency + TURNAROUND
    # From the channel's healing, or the end of a degraded link's hold if later (PROTOCOL.md 7.5).
    healthy = max(h.cycle, h.a.held_until, h.b.held_until)
    h.run(healthy - h.cycle)
    bound = h.a.p.liveness_bound(rtt)
    h.run_until(lambda x: x.both_up() and all(abs(e.rtt - rtt) <= MARGIN for e in (x.a, x.b)), bound + 1)
    assert h.cycle - healthy <= bound
    before = [h.stats[n].frames_out[0] for n in "ab"]
    # Long enough that the user hands in frames at this load (0.98**1240 < 1e-10 at 2%).
    h.run(40 * rtt + int(20 / run["load"]))
    assert all(h.stats[n].frames_out[0] > b for n, b in zip("ab", before)), "UP but not delivering"


@pytest.mark.parametrize("copies", [False, True], ids=["", "copies"])
@pytest.mark.parametrize("k", [1, 2, 5, 40, 120])
@pytest.mark.parametrize("code", ["TICK", "TOCK", "AIT_OFFER", "AIT_ACCEPT", "AIT_COMMIT", "AIT_RETRACT"])
def test_a_line_frozen_on_a_token_plane_word_never_leaves_a_second_token(code, k, copies):
    """The channel repeats a token-plane word k times: a copy is never taken as an answer
    (PROTOCOL.md 5.2); the balance invariant holds throughout and the link works after."""
    from golden import encoding as enc

    latency = 8
    traffic = Traffic(frame_load=(0.2,), ait_rate=0.5, withdraw_rate=0.05, take_rate=0.5)
    h = make_link(latency, traffic_a=traffic, traffic_b=traffic, num_classes=1, check_balance=True, token_copies=copies)
    h.run_until(LinkHarness.both_up, 10_000)
    if copies:  # noise at both ends: each asks for copies
        for d in (h.channel.ab, h.channel.ba):
            d.bit_flips = {d.cycle + 1: 1 << 70}
        h.run(3 * (2 * latency + TURNAROUND))
    for _ in range(20_000):
        tags = [(w >> enc.SLICE_BITS) >> 1 for w in (h.a.tx_word, h.b.tx_word)]
        if enc.Ctl[code] in tags:
            break
        h.step()
    else:
        pytest.fail(f"no {code} word in 20,000 cycles of this traffic")
    direction = h.channel.ab if tags[0] == enc.Ctl[code] else h.channel.ba
    arrives = h.cycle + latency
    direction.freezes = [(arrives + 1, arrives + 1 + k)]
    h.run(200 + k)
    h.quiesce()
    assert h.both_up() and h.a.rtt == h.b.rtt == 2 * latency + TURNAROUND
    before = h.stats["b"].frames_out[0]
    h.traffic["a"] = traffic
    h.run(2000)
    assert h.stats["b"].frames_out[0] > before


# --- distance (PROTOCOL.md 4.4) --------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("latency, cycles", [(256, 20_000), (1024, 30_000)])
def test_a_long_link_with_the_window_its_round_trip_needs_is_not_window_bound(latency, cycles):
    # With window_for_rtt the sender never waits for its window: every class always has a frame
    # to send, and each direction carries more frames than the largest 6-bit window (31) allows
    # in the same time, whatever the bit errors resend.
    window = window_for_rtt(2 * latency + TURNAROUND)
    saturated = Traffic(frame_load=(1.0,), ait_rate=0.2, take_rate=1.0)
    f = {"bit_error_rate": 1e-5}
    h = make_link(
        latency,
        num_classes=1,
        window=window,
        traffic_a=saturated,
        traffic_b=saturated,
        faults_ab=f,
        faults_ba=f,
        check_balance=True,
    )
    h.run_until(LinkHarness.both_up, 100_000)
    start = [h.stats[e].frames_out[0] for e in "ab"]
    h.run(cycles)
    small_window_frames = 31 * cycles / (3 * (2 * latency + TURNAROUND))
    for e, s in zip("ab", start):
        assert h.stats[e].frames_out[0] - s > 2 * small_window_frames
    h.quiesce(limit=200_000)


@pytest.mark.slow
def test_counts_wrap_with_the_largest_window_in_flight():
    # 12-bit counts, 2047 frames unconfirmed at once over a 3100-cycle line: the counts on the
    # wire wrap (more than 4096 frames) while a full window is outstanding.
    latency = 3100
    window = (1 << 11) - 1
    assert window_for_rtt(2 * latency + TURNAROUND) > window
    saturated = Traffic(frame_load=(1.0,), take_rate=1.0)
    h = make_link(latency, num_classes=1, window=window, max_rtt=8192, traffic_a=saturated, traffic_b=saturated)
    h.run_until(LinkHarness.both_up, 200_000)
    h.run_until(lambda hh: min(hh.stats[e].frames_out[0] for e in "ab") > (1 << 12) + window, 120_000)
    assert max(len(end.framer.replay[0]) for end in (h.a, h.b)) == window
    h.quiesce(limit=100_000)
