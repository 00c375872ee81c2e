"""Resume after a suspicion (PROTOCOL.md 2.3), golden model: two ends of one session that both
suspect resume it, one sample of the round trip and one exchange of half-states, and believe the
link down for at most 2 x RTT + 16 cycles after the line is back; a peer that does not resume
makes the end train in full. The harness checks every frame, every token value and the balance
invariant throughout."""

import pytest

from golden.encoding import LinkState, Reason
from golden.params import ACK_SLACK, TURNAROUND, WIRE_DELAY, LinkParams, window_for_rtt, window_in_use
from sim.harness.link import LinkHarness, Traffic, make_link, run_flap

LAT = 16
TRAFFIC = Traffic(frame_load=(0.3,), ait_rate=0.2, withdraw_rate=0.05, take_rate=0.8)
LIVENESS = LinkParams().liveness_bound(2 * LAT + TURNAROUND)


def up_link(**kw):
    h = make_link(LAT, traffic_a=TRAFFIC, traffic_b=TRAFFIC, num_classes=1, check_balance=True, **kw)
    h.run_until(LinkHarness.both_up, 10_000)
    h.run(1000)
    return h


@pytest.mark.parametrize("length", [1, 7, 8, 9, 20, 2 * LAT + TURNAROUND, 100, 1000, LIVENESS])
@pytest.mark.parametrize("directions", [("ab", "ba"), ("ab",)])
def test_after_a_flap_each_end_is_up_within_two_round_trips_of_the_line(length, directions):
    """Both directions: 2 x RTT + 16 (PROTOCOL.md 2.3). One direction: the end whose own line was
    cut may have sent its probe into the cut, and sends the next one after the probe's bound:
    3 x RTT + 16."""
    h = up_link()
    rtt = h.a.rtt
    down_after, phases = run_flap(h, length, directions)
    bound = (2 if len(directions) == 2 else 3) * rtt + 16
    assert max(down_after.values()) <= bound, down_after
    # Resumed: no end measured the round trip with the probes of a full training.
    assert LinkState.PROBE not in phases["a"] | phases["b"]
    assert h.a.rtt == h.b.rtt == rtt
    h.quiesce()


def test_a_peer_that_lost_its_session_is_trained_with_in_full():
    """B forgets its session during the flap, as a restarted end would: its HELLOs carry no
    resume flag, so A does not resume either and both measure the round trip in PROBE."""
    h = up_link()
    h.b.training.session = None
    _, phases = run_flap(h, 200)
    assert LinkState.PROBE in phases["a"] and LinkState.PROBE in phases["b"]
    h.quiesce()


def test_a_degraded_link_is_not_resumed():
    """Every DATA word A sends has a payload bit flipped until A suspects a degraded link: its
    round is not a resume round, so B, which suspects on A's remote fault, trains in full too."""
    from golden import encoding as enc
    from golden.common.slice import DECODE_TABLE
    from golden.encoding import Kind

    h = up_link()
    line = h.channel.ab
    seen = set()
    for _ in range(20_000):
        if DECODE_TABLE[h.a.tx_word >> enc.SLICE_BITS].kind == Kind.DATA and not h.a.counters.suspicions:
            line.bit_flips[line.cycle + line.latency] = 1 << 5
        h.step()
        if not h.a.up:
            seen.add(h.a.state)
        if seen and h.both_up():
            break
    assert ("suspect", Reason.DEGRADED) in [(e[1], e[2]) for e in h.stats["a"].events]
    assert LinkState.PROBE in seen
    h.quiesce()


def test_a_slower_line_is_measured_when_the_link_resumes():
    """The round trip grows by more than the margin: the token deadline passes, both ends resume
    with one sample, and that sample is the new round trip."""
    h = up_link()
    for d in (h.channel.ab, h.channel.ba):
        d.latency_changes = [(d.cycle + 100, LAT + 12)]
    h.run(4000)
    assert h.both_up()
    assert h.a.rtt == h.b.rtt == 2 * (LAT + 12) + TURNAROUND
    assert h.a.counters.suspicions >= 1
    h.quiesce()


@pytest.mark.parametrize("mode", ["drop", "corrupt"])
def test_a_gray_line_is_held_down_until_it_carries_data_again(mode):
    """Every data word A sends is dropped (or has a payload bit flipped) for a while, everything
    else passing: the data plane calls the link degraded, and training's data-path check
    (PROTOCOL.md 2.3) keeps it out of UP, believed down, until the line carries data again."""
    from golden import encoding as enc

    h = up_link()
    start = h.channel.ab.cycle + 10
    end = start + 20_000
    h.channel.ab.gray = ((start, end, 0x80, 0x80, mode),)
    degraded, down, up_cycles = False, False, 0
    while h.channel.ab.cycle < end:
        h.step()
        degraded = degraded or ("suspect", Reason.DEGRADED) in [(e[1], e[2]) for e in h.stats["a"].events]
        # From the cycle both ends left UP (B on A's remote fault), neither is UP again.
        down = down or (degraded and not h.a.up and not h.b.up)
        if down:
            up_cycles += h.a.up + h.b.up
    assert degraded and down
    assert up_cycles == 0, "a gray line was believed up again"
    assert not h.a.training.checks_done or not h.b.training.checks_done
    h.run_until(LinkHarness.both_up, 20_000)
    assert enc.SLICES_PER_FRAME == 8
    h.quiesce()


def _degraded_at(h, name="a"):
    return [e[0] for e in h.stats[name].events if (e[1], e[2]) == ("suspect", Reason.DEGRADED)]


@pytest.mark.parametrize("load", [1.0, 0.3])
def test_a_line_that_returns_nothing_is_found_in_a_few_round_trips(load):
    """Every data word A sends is dropped: the first return after each RESYNC has the quiet bound
    (PROTOCOL.md 4.5), and QUIET_LIMIT of them late in a row make the link degraded (4.6), long
    before RECOVERY_LIMIT failed recoveries would. The bound: the first overdue return (echo
    slack), then per quiet failure the acknowledgement's round trip and the quiet bound."""
    from golden.params import QUIET_LIMIT, RECOVERY_LIMIT

    traffic = Traffic(frame_load=(load,), ait_rate=0.2, take_rate=0.8)
    h = make_link(LAT, traffic_a=traffic, traffic_b=traffic, num_classes=1, check_balance=True)
    h.run_until(LinkHarness.both_up, 10_000)
    h.run(1000)
    p, rtt = h.a.p, h.a.rtt
    start = h.channel.ab.cycle + 10
    h.channel.ab.gray = ((start, start + 5000, 0x80, 0x80, "drop"),)
    h.run(3000)
    (found,) = _degraded_at(h)
    first = rtt + p.margin + p.echo_slack + 9 + 4
    each = (rtt + p.margin + ACK_SLACK + WIRE_DELAY) + (rtt + p.margin + p.quiet_slack + 4)
    assert found - start <= first + QUIET_LIMIT * each, found - start
    assert h.a.counters.recoveries <= QUIET_LIMIT < RECOVERY_LIMIT
    h.channel.ab.gray = ()
    h.quiesce()


def _degrade_and_return(h):
    """Drop A's data words for 600 cycles; run until the degraded link is UP again. Returns (the
    restart cycle of the verdict, the cycle it was UP again, whether status showed degraded)."""
    from golden.params import DEGRADED_HOLD, RESTART_DELAY

    seen = len(_degraded_at(h))
    start = h.channel.ab.cycle + 10
    h.channel.ab.gray = ((start, start + 600, 0x80, 0x80, "drop"),)
    h.run_until(lambda hh: len(_degraded_at(hh)) > seen, 5000)
    restart = _degraded_at(h)[-1] + RESTART_DELAY
    h.run_until(lambda hh: not hh.a.up, 10)
    shown, b_left = h.a.degraded, False
    while not h.a.up:
        h.step()
        # Heard-ready is not said while the hold is on, so the peer cannot entangle either.
        b_left |= not h.b.up
        assert h.a.degraded and not (b_left and h.b.up) or h.a.cycle >= restart + DEGRADED_HOLD, "entangled while held"
    assert not h.a.degraded
    return restart, h.a.cycle, shown


@pytest.mark.slow
def test_a_degraded_link_is_held_down_and_backs_off_while_it_keeps_failing():
    """A line that drops A's data words again each time it comes back: each degraded verdict
    holds the link down (status ``degraded``, no heard-ready) for DEGRADED_HOLD cycles from its
    restart, doubling with each verdict in a row (PROTOCOL.md 5.2); a link UP for DEGRADED_HEAL
    cycles starts the count again. Nothing is lost (the harness checks every frame)."""
    from golden.params import DEGRADED_HEAL, DEGRADED_HOLD

    h = up_link()
    holds = []
    for _ in range(3):
        restart, up_again, shown = _degrade_and_return(h)
        assert shown
        holds.append(up_again - restart)
        h.run(200)
    # The hold, then the READY exchange that entangles (two cycles).
    assert holds == [(DEGRADED_HOLD << k) + 2 for k in range(3)], holds
    h.run(DEGRADED_HEAL)
    restart, up_again, _ = _degrade_and_return(h)
    assert up_again - restart == DEGRADED_HOLD + 2
    h.quiesce()


def test_the_window_in_use_covers_the_round_trip_and_never_the_memory():
    """PROTOCOL.md 4.4: at least the window the round trip needs, at most the replay memory."""
    for full in (False, True):
        for rtt in range(6, 3000, 7):
            needed = window_for_rtt(rtt, full)
            assert window_in_use(rtt, 10_000, full) >= needed
            assert window_in_use(rtt, 10_000, full) <= needed + -(-needed // (16 if full else 8)) + 1
            assert window_in_use(rtt, needed - 1, full) == needed - 1


@pytest.mark.parametrize("before,after", [(LAT, LAT + 24), (LAT + 24, LAT)])
def test_the_window_follows_the_measured_round_trip(before, after):
    """A build whose replay memory is sized for the longer line (window 31, RTT 85): on the
    shorter line it sends with the window that round trip needs; the line changes, the ends
    resume at the new round trip and the window follows it, up or down. S never has more
    frames beyond those the peer is known to have committed than the window in use, also in
    the cycles after the window shrank. A saturated class keeps about a round trip's frames in
    flight, fewer than the window; the window binds when the commit loop stalls, here on token
    words lost to bit errors (1e-4), and then S stops at the window in use."""
    memory = window_for_rtt(2 * (LAT + 24) + TURNAROUND)
    saturated = Traffic(frame_load=(1.0,), ait_rate=0.2, take_rate=0.9)
    errors = {"bit_error_rate": 1e-4}
    h = make_link(
        before,
        traffic_a=saturated,
        traffic_b=saturated,
        num_classes=1,
        window=memory,
        check_balance=True,
        faults_ab=errors,
        faults_ba=errors,
        seed=3,
    )
    h.run_until(LinkHarness.both_up, 10_000)
    h.run(2000)
    rtt = 2 * before + TURNAROUND
    assert h.a.window == h.b.window == window_in_use(rtt, memory)
    for d in (h.channel.ab, h.channel.ba):
        d.latency_changes = [(d.cycle + 100, after)]
    windows, most_ahead = set(), {}
    for _ in range(20_000):
        h.step()
        for ep in (h.a, h.b):
            windows.add(ep.window)
            if ep.up:
                ahead = ep.framer.send_seq[0] - ep.framer.acked[0]
                assert ahead <= ep.window, (ep.cycle, ahead, ep.window)
                most_ahead[ep.window] = max(most_ahead.get(ep.window, 0), ahead)
    assert h.both_up()
    for ep in (h.a, h.b):
        # A sample taken while the line changed may be off by up to the margin (no suspicion then).
        assert abs(ep.rtt - (2 * after + TURNAROUND)) <= ep.p.margin
        assert ep.window == window_in_use(ep.rtt, memory)
    assert window_in_use(2 * before + TURNAROUND, memory) in windows and len(windows) >= 2
    # The window of each line binds (samples taken while the line changed may give others).
    first, last = window_in_use(2 * before + TURNAROUND, memory), h.a.window
    assert most_ahead[first] == first and most_ahead[last] == last, most_ahead
    h.quiesce()
