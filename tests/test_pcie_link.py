# amaranth: UnusedElaboratable=no
"""The PCIe-style contrast link, golden model (docs/CONTRAST.md): timers against the spec table,
training, the data link layer's recovery, and what a cut, a flap, a gray failure and a slow
completer do to its beliefs. Timers run at 1/64 of the spec (sim.harness.pcie.TEST_SCALE)."""

import math

import pytest

from golden.contrast.ltssm import Ltssm
from golden.encoding import LtssmState as S
from golden.encoding import PcieCode, PcieRate, pcie_tag
from golden.pcie_params import TIMERS, PcieParams
from sim.harness.base import ScoreboardError
from sim.harness.pcie import TEST_SCALE, make_pcie_link, numbered_frame

CUT = 60_000  # after training (L0 by about cycle 30,000 at this scale)


# --- Timers: the spec values (PCI Express Base Specification 4.0, docs/CONTRAST.md), written out
# here as the oracle, against the table the model uses. --------------------------------------------------------
SPEC_SECONDS = {
    "detect_quiet": 12e-3,
    "polling_active": 24e-3,
    "polling_config": 48e-3,
    "config_linkwidth": 24e-3,
    "config_complete": 2e-3,
    "config_idle": 2e-3,
    "recovery_rcvrlock": 24e-3,
    "recovery_rcvrcfg": 48e-3,
    "recovery_idle": 2e-3,
    "recovery_speed_ei": 6e-6,
    "ei_inference": 128e-6,
    "replay_timer": 24e-6,
}


def _cycles(seconds: float) -> int:
    """Link cycles at 156.25 MHz, rounded up: a timer never fires early (6.4 ns per cycle)."""
    return math.ceil(round(seconds / 6.4e-9, 6))


@pytest.mark.parametrize("name", sorted(SPEC_SECONDS))
def test_timer_is_the_spec_value_in_cycles_at_156_25_mhz(name):
    p = PcieParams()
    assert TIMERS[name].seconds == SPEC_SECONDS[name]
    assert p.cycles(name) == _cycles(SPEC_SECONDS[name])
    # The -0/+50% tolerance stretches LTSSM timers only; the scale shrinks every timer alike.
    stretched = PcieParams(tolerance=0.5).cycles(name)
    assert stretched == _cycles(SPEC_SECONDS[name] * (1.5 if TIMERS[name].ltssm else 1))
    assert PcieParams(time_scale=0.5).cycles(name) == max(1, _cycles(SPEC_SECONDS[name] * 0.5))


def test_the_timer_table_names_a_source_for_every_timer():
    rows = PcieParams().table()
    assert {r["name"] for r in rows} == set(TIMERS)
    assert all(r["source"] and r["cycles"] >= 1 for r in rows)
    assert next(r for r in rows if r["name"] == "recovery_rcvrlock")["cycles"] == 3_750_000


@pytest.mark.parametrize(
    "field, value",
    [
        ("clock_mhz", 0),
        ("time_scale", 0),
        ("time_scale", 2),
        ("tolerance", 0.6),
        ("tolerance", -0.1),
        ("completion_timeout_s", 1e-6),
        ("max_rate", 7),
        ("replay_tlps", 0),
        ("replay_tlps", 4096),
        ("ack_every", 0),
        ("outstanding", 0),
        ("outstanding", 257),
        ("completer_delay", -1),
        ("completer_delay", 1 << 32),
        ("ei_detect", 0),
        ("framing_error_recovery", 1),
        ("skp_interval", 3),
        ("time_scale", True),
        ("tolerance", False),
        ("completion_timeout_s", True),
        ("max_rate", True),
        ("clock_mhz", True),
    ],
)
def test_bad_parameters_raise_value_error_naming_the_parameter(field, value):
    with pytest.raises(ValueError, match=field):
        PcieParams(**{field: value})


def test_a_scale_that_breaks_the_timers_relations_is_refused():
    with pytest.raises(ValueError, match="time_scale"):
        PcieParams(time_scale=1 / 64)  # SKP every 370 words: inference at 312 cycles
    with pytest.raises(ValueError, match="replay timer"):
        PcieParams(time_scale=1 / 128, skp_interval=16)
    with pytest.raises(ValueError, match="replay timer"):
        make_pcie_link(40)  # the round trip outgrows the scaled replay timer


# --- Every LTSSM timeout and its next state, from the anchors' table ------------------------------
# (state, set-up, next state on expiry)
TIMEOUTS = [
    (S.DETECT_QUIET, {}, S.DETECT_ACTIVE),
    (S.POLLING_ACTIVE, {}, S.DETECT_QUIET),  # no lane qualified (no compliance)
    (S.POLLING_ACTIVE, {"qualified": True}, S.POLLING_CONFIG),
    (S.POLLING_CONFIG, {}, S.DETECT_QUIET),
    (S.CONFIG_LINKWIDTH, {}, S.DETECT_QUIET),
    (S.CONFIG_COMPLETE, {"rate": PcieRate.LOW}, S.DETECT_QUIET),
    (S.CONFIG_COMPLETE, {"rate": PcieRate.FULL}, S.CONFIG_IDLE),  # >= 8 GT/s, idle_to_rlock < FFh
    (S.CONFIG_COMPLETE, {"rate": PcieRate.FULL, "idle_to_rlock": 0xFF}, S.DETECT_QUIET),
    (S.CONFIG_IDLE, {}, S.RECOVERY_RCVRLOCK),  # idle_to_rlock < FFh
    (S.CONFIG_IDLE, {"idle_to_rlock": 0xFF}, S.DETECT_QUIET),
    (S.RECOVERY_RCVRLOCK, {"rate": PcieRate.FULL}, S.RECOVERY_SPEED),  # the silent fall-back
    (S.RECOVERY_RCVRLOCK, {"rate": PcieRate.LOW, "heard_any": True}, S.CONFIG_LINKWIDTH),
    (S.RECOVERY_RCVRLOCK, {"rate": PcieRate.LOW}, S.DETECT_QUIET),
    (S.RECOVERY_RCVRCFG, {"rate": PcieRate.LOW}, S.DETECT_QUIET),
    (S.RECOVERY_RCVRCFG, {"rate": PcieRate.FULL}, S.RECOVERY_IDLE),
    (S.RECOVERY_RCVRCFG, {"rate": PcieRate.FULL, "idle_to_rlock": 0xFF}, S.DETECT_QUIET),
    (S.RECOVERY_IDLE, {}, S.RECOVERY_RCVRLOCK),
    (S.RECOVERY_IDLE, {"idle_to_rlock": 0xFF}, S.DETECT_QUIET),
]
TIMER_OF = {
    S.DETECT_QUIET: "detect_quiet",
    S.POLLING_ACTIVE: "polling_active",
    S.POLLING_CONFIG: "polling_config",
    S.CONFIG_LINKWIDTH: "config_linkwidth",
    S.CONFIG_COMPLETE: "config_complete",
    S.CONFIG_IDLE: "config_idle",
    S.RECOVERY_RCVRLOCK: "recovery_rcvrlock",
    S.RECOVERY_RCVRCFG: "recovery_rcvrcfg",
    S.RECOVERY_IDLE: "recovery_idle",
}


@pytest.mark.parametrize("state, setup, after", TIMEOUTS, ids=[f"{s.name}-{i}" for i, (s, _, _) in enumerate(TIMEOUTS)])
@pytest.mark.parametrize("tolerance", [0.0, 0.5])
def test_every_ltssm_timeout_fires_on_time_into_the_spec_next_state(state, setup, after, tolerance):
    p = PcieParams(time_scale=1 / 64, skp_interval=32, tolerance=tolerance)
    ltssm = Ltssm(p)
    ltssm._enter(state)
    for k, v in setup.items():
        setattr(ltssm, k, v)
    cycles = _cycles(SPEC_SECONDS[TIMER_OF[state]] * (1 + tolerance) / 64)
    ltssm.tick(True)  # the cycle the state was entered in
    for _ in range(cycles - 1):
        ltssm.tick(True)
    assert ltssm.state == state, f"{state.name} left {cycles - 1} cycles in, before its timer"
    ltssm.tick(True)
    assert ltssm.state == after
    if state == S.RECOVERY_RCVRLOCK and after == S.RECOVERY_SPEED:
        for _ in range(p.cycles("recovery_speed_ei")):
            ltssm.tick(True)
        assert (ltssm.state, ltssm.rate) == (S.RECOVERY_RCVRLOCK, PcieRate.LOW)
        assert ltssm.counters["rate_fallbacks"] == 1


# --- The link ---------------------------------------------------------------------------------------
def _states(h, cycles):
    """The distinct LTSSM states each end went through, in order, over ``cycles`` cycles."""
    seen = {"a": [h.a.state], "b": [h.b.state]}
    for _ in range(cycles):
        h.step()
        for name, end in (("a", h.a), ("b", h.b)):
            if seen[name][-1] != end.state:
                seen[name].append(end.state)
    return seen


def test_training_walks_detect_polling_configuration_to_l0():
    h = make_pcie_link()
    seen = _states(h, 40_000)
    order = [
        S.DETECT_QUIET,
        S.DETECT_ACTIVE,
        S.POLLING_ACTIVE,
        S.POLLING_CONFIG,
        S.CONFIG_LINKWIDTH,
        S.CONFIG_COMPLETE,
        S.CONFIG_IDLE,
        S.L0,
    ]
    assert seen["a"] == seen["b"] == order
    assert h.a.dl_up and h.b.dl_up
    # Both ends wait out Detect.Quiet (12 ms): a link takes milliseconds to come up.
    assert h.a.ltssm.counters["timeouts"] == 1


def _trained(**kwargs):
    h = make_pcie_link(**kwargs)
    h.run_until(lambda h: h.both_l0(), 100_000)
    return h


def test_a_healthy_link_delivers_everything_in_order_near_its_bound():
    h = _trained()
    start = dict(h.delivered)
    h.run(20_000)
    c = h.a.counters()
    assert c["recoveries"] == c["replays"] == c["naks_sent"] == c["bad_tlps"] == 0
    for end in "ab":
        goodput = (h.delivered[end] - start[end]) * 8 / 20_000
        # Ten words per 64-byte TLP, a SKP every 33 words, an ACK every eight TLPs.
        bound = 8 / 10 * (1 - 1 / 33)
        assert 0.95 * bound <= goodput <= bound, goodput
        assert h.lost(end) == 0


@pytest.mark.slow
def test_a_permanent_cut_is_seen_only_after_two_rcvrlock_timeouts():
    """Cut both ways: the squelch sends L0 to Recovery in ei_detect cycles, but DL_Up stays 1
    until Recovery.RcvrLock times out at the full rate, falls back to the lowest, and times out
    again (4.2.6.4.1): 2 x 24 ms + 6 us of ghost at the real scale."""
    h = _trained(faults_ab={"cuts": [(CUT, None)]}, faults_ba={"cuts": [(CUT, None)]})
    h.run(CUT - h.cycle)
    p = h.a.p
    expected = p.ei_detect + 2 * p.cycles("recovery_rcvrlock") + p.cycles("recovery_speed_ei")
    down = {}
    while len(down) < 2 and h.cycle < CUT + expected + 100:
        h.step()
        for name, end in (("a", h.a), ("b", h.b)):
            if not end.dl_up and name not in down:
                down[name] = h.cycle - CUT
    assert expected <= down["a"] <= expected + 2 * 4 + 2 and down["a"] == down["b"]
    assert h.a.ltssm.counters["rate_fallbacks"] == 1 and h.a.ltssm.counters["detects"] == 1


@pytest.mark.slow
def test_a_one_way_cut_leaves_the_end_that_still_hears_believing_longer():
    h = _trained(faults_ab={"cuts": [(CUT, None)]})
    h.run(CUT - h.cycle)
    p = h.a.p
    expected_b = p.ei_detect + 2 * p.cycles("recovery_rcvrlock") + p.cycles("recovery_speed_ei")
    h.run(expected_b + 20)
    assert not h.b.dl_up  # B lost its receive line
    assert h.a.dl_up  # A hears B's training sets: still "up"


def test_a_flap_shorter_than_rcvrlock_is_hidden_inside_recovery_and_loses_nothing():
    h = _trained(faults_ab={"cuts": [(CUT, CUT + 2000)]}, faults_ba={"cuts": [(CUT, CUT + 2000)]})
    h.run(CUT + 20_000 - h.cycle)
    assert h.both_l0() and h.a.dl_up and h.b.dl_up
    assert h.a.ltssm.counters["detects"] == h.b.ltssm.counters["detects"] == 0
    assert h.a.ltssm.counters["recoveries"] >= 1
    assert h.lost("a") == h.lost("b") == 0
    assert h.a.ltssm.rate == h.b.ltssm.rate == PcieRate.FULL


@pytest.mark.slow
def test_a_flap_past_the_first_rcvrlock_timeout_drops_the_link_to_the_lowest_rate_silently():
    lock = PcieParams(**TEST_SCALE).cycles("recovery_rcvrlock")
    end = CUT + lock + 2000
    h = _trained(faults_ab={"cuts": [(CUT, end)]}, faults_ba={"cuts": [(CUT, end)]})
    h.run(end + 20_000 - h.cycle)
    assert h.both_l0() and h.a.dl_up and h.b.dl_up  # nothing was reported down
    assert h.a.ltssm.rate == h.b.ltssm.rate == PcieRate.LOW
    before = dict(h.delivered)
    h.run(20_000)
    goodput = (h.delivered["a"] - before["a"]) * 8 / 20_000
    assert goodput <= 8 / 10 / 4 + 0.01  # a quarter of the full rate, and no error
    assert h.lost("a") == h.lost("b") == 0


@pytest.mark.parametrize("ber", [1e-5, 1e-4])
def test_bit_errors_cost_replays_and_recoveries_but_lose_and_duplicate_nothing(ber):
    h = _trained(faults_ab={"bit_error_rate": ber}, faults_ba={"bit_error_rate": ber}, seed=3)
    h.run(30_000)  # the scoreboard checks order and content
    c = h.a.counters()
    assert c["naks_sent"] + h.b.counters()["naks_sent"] > 0 and c["replays"] + h.b.counters()["replays"] > 0
    assert h.lost("a") == h.lost("b") == 0


@pytest.mark.slow
def test_a_gray_failure_of_data_words_never_takes_dl_up_down():
    """Every TLP payload slice A sends is corrupted while training sets, SKP and DLLPs pass:
    each TLP is NAKed and replayed, the fourth replay rolls REPLAY_NUM over into Recovery, which
    succeeds, and so on. DL_Up never falls; only a completion timeout notices."""
    data = pcie_tag(PcieCode.TLP_DATA) & 0xF0
    h = _trained(faults_ab={"gray": [(CUT, None, 0xF0, data, "corrupt")]}, request_rate=0.01)
    h.run(CUT - h.cycle)
    timeout = h.a.p.cycles("completion_timeout")
    before = dict(h.delivered)
    h.run(timeout + 5000)
    assert h.a.dl_up and h.b.dl_up
    assert h.a.counters()["replay_rollovers"] >= 2 and h.a.ltssm.counters["recoveries"] >= 2
    assert h.delivered["a"] - before["a"] <= h.a.p.replay_tlps  # at most what was in flight
    assert h.delivered["b"] - before["b"] > 1000  # the other way works (between Recoveries)
    # Both requesters time out: A's requests, and the completions B's requests get, cross A -> B.
    for end in (h.a, h.b):
        assert end.counters()["completion_timeouts"] >= 1 and not end.requester.completer_alive


@pytest.mark.slow
def test_a_completer_slower_than_the_completion_timeout_is_declared_dead_though_alive():
    timeout = PcieParams(**TEST_SCALE).cycles("completion_timeout")
    h = _trained(completer_delay=timeout + 500, request_rate=0.001)
    h.run(3 * timeout)
    r = h.a.requester
    assert r.counters["completion_timeouts"] >= 1 and r.counters["unexpected_completions"] >= 1
    assert h.a.dl_up and h.b.dl_up


def test_a_completer_slow_for_a_while_is_declared_dead_then_alive_again():
    """The harness's ``completer_delays`` (the RTL pair's ``completer_delay`` ports): slow answers
    time out, arrive late on freed tags, and once the completer is fast again and its late answers
    are out, a completion restores the belief."""
    timeout = PcieParams(**TEST_SCALE).cycles("completion_timeout")
    start = 33_000
    h = make_pcie_link(request_rate=0.01, completer_delays={start: timeout + 2_000, start + 2_000: 64})
    h.run(start + 2_000 + timeout)
    assert not h.a.requester.completer_alive and h.a.counters()["completion_timeouts"] >= 1
    h.run(8_000)
    r = h.a.requester
    assert r.completer_alive and r.counters["unexpected_completions"] >= 1 and h.a.dl_up
    assert h.a.completer.delay == h.b.completer.delay == 64


@pytest.mark.parametrize(
    "delays, match", [({-1: 100}, "cycle"), ({10: -5}, "completer_delay"), ({10: 1 << 32}, "completer_delay")]
)
def test_bad_completer_delays_are_refused(delays, match):
    with pytest.raises(ValueError, match=match):
        make_pcie_link(completer_delays=delays)


def test_the_scoreboard_catches_a_duplicated_frame():
    h = _trained()
    h.run(2000)
    assert h.delivered["a"] > 0
    h.b.delivered.append(numbered_frame("a", 0))  # delivered long ago
    with pytest.raises(ScoreboardError, match="again or out of order"):
        h.step()


def test_the_timer_table_in_docs_contrast_is_the_one_the_model_uses():
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "CONTRAST.md").read_text()
    rows = dict(re.findall(r"^\| `(\w+)` \| [^|]+ \| ([\d,]+) \|", text, re.M))
    model = {r["name"]: r["cycles"] for r in PcieParams().table()}
    assert {name: int(cycles.replace(",", "")) for name, cycles in rows.items()} == model


# --- Found by review (fault schedules the first tests did not plan) --------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("ack_loss", [False, True])
def test_a_one_way_cut_healing_after_the_peer_went_to_detect_neither_duplicates_nor_hangs(ack_loss):
    """B (whose receive line was cut) goes to Detect and resets its data link layer; A still
    hears it and sits in Recovery. When the line heals, B trains from Detect: A, seeing training
    sets with no link number, must go to Detect too rather than resume L0 with its old sequence
    numbers (which duplicated frames, with ACKs lost before the cut, or lost them silently and
    left one direction dead with both ends DL_Up)."""
    lock = PcieParams(**TEST_SCALE).cycles("recovery_rcvrlock")
    heal = CUT + 2 * lock + 3000
    faults_ba = {"gray": [(CUT - 1000, heal, 0xFF, pcie_tag(PcieCode.ACK), "drop")]} if ack_loss else {}
    h = _trained(faults_ab={"cuts": [(CUT, heal)]}, faults_ba=faults_ba)
    h.run(heal - h.cycle)  # the scoreboard checks every delivery
    assert not h.b.dl_up or h.b.ltssm.counters["detects"] == 1
    h.run_until(lambda h: h.both_l0() and h.a.ltssm.rate == h.b.ltssm.rate == PcieRate.FULL, 150_000)
    assert h.a.ltssm.counters["detects"] == h.b.ltssm.counters["detects"] == 1
    assert h.a.ltssm.counters["peer_restarts"] >= 1
    before = dict(h.delivered)
    h.run(5000)
    assert h.delivered["a"] > before["a"] + 300 and h.delivered["b"] > before["b"] + 300


def test_detect_active_decides_within_a_cycle_whatever_arrives():
    """Detect.Active has no timer: a line stuck on SKP (or PAD) kept an end there for good."""
    from golden.encoding import SKP_WORD

    h = make_pcie_link(faults_ab={"stuck": [(0, None, SKP_WORD)]}, backlog=0)
    seen = _states(h, 40_000)
    assert S.DETECT_ACTIVE in seen["b"] and seen["b"][-1] != S.DETECT_ACTIVE


@pytest.mark.slow
def test_a_late_completion_on_a_reused_tag_is_unexpected_not_an_answer():
    timeout = PcieParams(**TEST_SCALE).cycles("completion_timeout")
    h = _trained(completer_delay=timeout + 500, request_rate=0.01)
    h.run(3 * timeout)
    r = h.a.requester
    assert r.counters["completions"] == 0 and r.counters["unexpected_completions"] >= 1
    assert not r.completer_alive


@pytest.mark.slow
def test_at_the_lowest_rate_a_healthy_link_does_not_replay():
    """Timers in symbol times: the replay and ACK timers are four times longer at 2.5 GT/s."""
    lock = PcieParams(**TEST_SCALE).cycles("recovery_rcvrlock")
    end = CUT + lock + 2000
    h = _trained(faults_ab={"cuts": [(CUT, end)]}, faults_ba={"cuts": [(CUT, end)]})
    h.run(end + 10_000 - h.cycle)
    assert h.a.ltssm.rate == PcieRate.LOW
    before = {n: dict(e.counters()) for n, e in (("a", h.a), ("b", h.b))}
    h.run(20_000)
    for n, e in (("a", h.a), ("b", h.b)):
        assert e.counters()["replay_timeouts"] == before[n]["replay_timeouts"]
        assert e.counters()["duplicate_tlps"] == before[n]["duplicate_tlps"]


def test_an_ack_for_a_sequence_number_never_sent_is_ignored():
    from golden.contrast.dll import DataLinkLayer, dllp_body

    dll = DataLinkLayer(PcieParams(**TEST_SCALE))
    frames = iter([(0, 0, bytes(64))] * 3)
    for _ in range(3 * 10):
        dll.choose(lambda: next(frames, None))
    assert [t.seq for t in dll.replay] == [0, 1, 2]
    dll.receive(PcieCode.ACK, dllp_body(PcieCode.ACK, 100))
    assert len(dll.replay) == 3 and dll.counters["dllps_out_of_range"] == 1
    dll.receive(PcieCode.ACK, dllp_body(PcieCode.ACK, 1))
    assert [t.seq for t in dll.replay] == [2]


def test_the_rtl_pair_refuses_bad_params_naming_them():
    from rtl.simulation.pcie_pair import PcieLinkPair

    with pytest.raises(ValueError, match="no PcieParams field replay_size"):
        PcieLinkPair({"replay_size": 4})
    with pytest.raises(ValueError, match="params must be"):
        PcieLinkPair(3)
    with pytest.raises(ValueError, match="completer_delay"):
        PcieLinkPair({"completer_delay": -1})
