"""Training: detect, nonce exchange with tie handling, RTT by probes, entangle (PROTOCOL.md 2)."""

import pytest

from golden.common.slice import decode_tag, split_word
from golden.encoding import Ctl, LinkState
from golden.link.core import LinkCore, StepResult
from golden.link.training import nonce_lfsr_step
from golden.params import TURNAROUND, LinkParams
from golden.simulation.channel import Channel
from sim.harness.link import LinkHarness, make_link


@pytest.mark.parametrize("lat_ab, lat_ba", [(1, 1), (5, 5), (16, 16), (3, 40), (100, 7)])
def test_rtt_is_both_latencies_plus_the_turnaround(lat_ab, lat_ba):
    h = make_link(lat_ab, latency_ba=lat_ba)
    h.run_until(LinkHarness.both_up, 50 * (lat_ab + lat_ba) + 500)
    assert h.a.rtt == h.b.rtt == lat_ab + lat_ba + TURNAROUND
    assert h.a.balance == h.b.balance == 0
    assert h.a.leader != h.b.leader


def test_leader_is_the_end_with_the_larger_nonce_then_port():
    pa = LinkParams(port_id=9, nonce_seed=0x0000_0100)
    pb = LinkParams(port_id=3, nonce_seed=0x0000_0200)
    h = LinkHarness(pa, pb, Channel(4))
    h.run_until(LinkHarness.both_up, 2000)
    assert h.b.leader and not h.a.leader  # nonce 0x0200 > 0x0100
    assert h.a.counters.ties == h.b.counters.ties == 0


def test_equal_nonces_are_broken_by_port_id_without_a_tie():
    # Different seeds, same low 16 bits: the first nonces collide.
    pa = LinkParams(port_id=1, nonce_seed=0x0001_4321)
    pb = LinkParams(port_id=2, nonce_seed=0x0002_4321)
    h = LinkHarness(pa, pb, Channel(4))
    h.run_until(LinkHarness.both_up, 2000)
    assert h.b.leader and not h.a.leader
    assert h.a.counters.ties == h.b.counters.ties == 0


def test_equal_nonce_and_port_is_a_tie_and_both_draw_again():
    pa = LinkParams(port_id=5, nonce_seed=0x0001_4321)
    pb = LinkParams(port_id=5, nonce_seed=0x0002_4321)
    assert nonce_lfsr_step(0x0001_4321) & 0xFFFF != nonce_lfsr_step(0x0002_4321) & 0xFFFF
    h = LinkHarness(pa, pb, Channel(4))
    h.run_until(LinkHarness.both_up, 2000)
    assert h.a.counters.ties >= 1 and h.b.counters.ties >= 1
    assert h.a.leader != h.b.leader


def test_identical_ends_cannot_break_symmetry_and_never_come_up():
    """Same seed and port: every draw ties again. Documented; the ties counter shows it."""
    p = LinkParams(port_id=5, nonce_seed=77)
    h = LinkHarness(p, p, Channel(4))
    h.run(3000)
    assert h.a.state == h.b.state == LinkState.HELLO
    assert h.a.counters.ties > 100


def test_a_dead_peer_leaves_the_link_in_hello_forever_without_a_timeout():
    ch = Channel(8, faults_ba={"cuts": [(0, None)]})
    h = LinkHarness(LinkParams(port_id=1), LinkParams(port_id=2, nonce_seed=9), ch)
    h.run(5000)
    assert h.a.state == LinkState.HELLO
    assert h.a.counters.suspicions == 0 and h.a.rtt is None


def test_lost_probe_is_resent_and_rtt_still_exact():
    # Destroy the first probe echo B sends (found by running once without faults).
    h0 = make_link(6)
    first_echo = None
    while first_echo is None:
        tag = decode_tag(split_word(h0.b.tx_word)[0])
        if tag.kind.name == "CONTROL" and tag.code == Ctl.TRAIN_PROBE_ECHO:
            first_echo = h0.cycle
        h0.step()
    h = make_link(6, faults_ba={"bit_flips": {first_echo + 6: 1 << 70}})
    h.run_until(LinkHarness.both_up, 20000)
    assert h.a.rtt == h.b.rtt == 6 + 6 + TURNAROUND
    assert h.a.counters.malformed + h.b.counters.malformed >= 1


def _first_samples(h):
    """Step ``h`` until both ends hold an RTT sample; the cycle that happened in."""
    while h.a.training.probes_done == 0 or h.b.training.probes_done == 0:
        h.step()
    return h.cycle


@pytest.mark.parametrize("growth", [10, 11, 40, 300])
def test_round_trip_growing_during_probe_restarts_the_samples(growth):
    """PROTOCOL.md 2.3: the round trip grows by more than the margin (8) after the first sample,
    so every later probe is declared lost before its echo returns. The late echo discards the
    samples and the end measures again against max_rtt, instead of probing for ever."""
    grown = _first_samples(make_link(16)) + 1
    h = make_link(16, faults_ab={"latency_changes": [(grown, 16 + growth)]})
    h.run_until(LinkHarness.both_up, 40_000)
    assert h.a.rtt == h.b.rtt == 16 + growth + 16 + TURNAROUND
    assert h.a.counters.probes_late >= 1 and h.b.counters.probes_late >= 1
    assert h.a.counters.trainings == h.b.counters.trainings == 0


def test_growth_within_the_margin_keeps_the_samples():
    grown = _first_samples(make_link(16)) + 1
    h = make_link(16, faults_ab={"latency_changes": [(grown, 16 + 7)]})
    h.run_until(LinkHarness.both_up, 40_000)
    assert h.a.counters.probes_late == h.b.counters.probes_late == 0
    assert h.a.rtt == h.b.rtt == 16 + 7 + 16 + TURNAROUND


def test_a_channel_longer_than_max_rtt_is_counted_not_silent():
    """Round trip 64 + 4 > max_rtt = 40: no probe can return within its bound. Training never
    ends (the RTT registers are sized for max_rtt), and every echo counts as late."""
    h = make_link(32, max_rtt=40)
    h.run(6000)
    assert h.a.state == h.b.state == LinkState.PROBE
    assert h.a.counters.probes_late >= 6000 // (2 * 68) and h.b.counters.probes_late >= 6000 // (2 * 68)


def test_endpoint_starts_in_hello_sending_hello():
    ep = LinkCore(port_id=3)
    assert ep.state == LinkState.HELLO
    assert decode_tag(split_word(ep.tx_word)[0]).code == Ctl.TRAIN_HELLO


@pytest.mark.parametrize("latency", [4, 8, 16])
@pytest.mark.parametrize("offset", range(0, 30, 3))
def test_one_end_restarting_while_its_peer_trains_converges(latency, offset):
    """PROTOCOL.md 2.3: A restarts (as after a data-plane anomaly) ``offset`` cycles after both
    ends reached PROBE. A's old probes, still in flight, used to take A's new HELLO straight to
    PROBE; B's answer to A's restart (a new HELLO) then restarted A again, and so on: the ends
    restarted each other for good (24 of these 30 cases) on a healthy channel. A probe is
    echoed in any phase now but ends nobody's HELLO."""
    h = make_link(latency, seed=1)
    h.run_until(lambda h: h.a.training.phase == h.b.training.phase == LinkState.PROBE, 5000)
    h.run(offset)
    if h.a.state == LinkState.UP:
        pytest.skip("A was UP already: no training to interrupt at this offset")
    restart_at = h.cycle
    h.a._decide_restart(StepResult(), "test")
    rtt = 2 * latency + TURNAROUND
    bound = 2 * h.a.p.liveness_bound(rtt)  # B learns of the restart, then both train
    h.run_until(LinkHarness.both_up, bound)
    assert h.cycle - restart_at <= bound
    assert h.a.counters.trainings <= 2 and h.b.counters.trainings <= 2
