"""The side-by-side experiment (sim/experiment.py): how a run's log becomes a row, checked on
hand-worked logs, and one real run of the OAE pair's C++ loop on Verilator."""

import dataclasses

import pytest

from sim import experiment as x


def _raw(changes, *, origin=2_000, cycles=10_000, marks=((1_000, 0, 0), (9_999, 100, 100)), lost=0, flows=(400, 420)):
    return {
        "up": 300,
        "origin": origin,
        "cycles": cycles,
        "seconds": 0.1,
        "requests": 0,
        "beliefs": ["link_up"],
        "changes": [[0, 0, 0, 0], [0, 1, 0, 0], [300, 0, 0, 1], [300, 1, 0, 1], *changes],
        "marks": [list(m) for m in marks],
        "streams": [
            {
                "from": e,
                "class": 0,
                "offered": 10,
                "delivered": 10,
                "lost": lost if e == 0 else 0,
                "duplicated": 0,
                "corrupted": 0,
                "undelivered": 0,
                "flows": flows[e],
            }
            for e in (0, 1)
        ],
        "tokens": [],
    }


def _flap(length):
    return dataclasses.replace(
        x.SCENARIOS["flap_1us"],
        events=((x.T0, 0, "cut", 1), (x.T0 + length, 0, "cut", 0)),
        down=((x.T0, x.T0 + length),),
        length={"oae": 10_000, "ltssm": 10_000},
    )


def test_a_row_counts_detection_and_ghosts_of_both_signs_from_the_belief_log():
    o, t0 = 2_000, 2_000 + x.T0
    # A falls 11 cycles after the fault, B 15; the flap ends at +100; both up again at +400.
    raw = _raw([[t0 + 11, 0, 0, 0], [t0 + 15, 1, 0, 0], [t0 + 400, 0, 0, 1], [t0 + 400, 1, 0, 1]], origin=o)
    row = x.measure(_flap(100), "oae", raw)
    assert row["detection_cycles"] == 15 and row["first_detection_cycles"] == 11
    assert row["ghost_cycles"] == 11 + 15
    assert row["ghost_cycles_down_while_up"] == 2 * 300
    assert row["goodput"] == pytest.approx(200 * 8 / (2 * 8_999))


def test_traffic_flows_again_when_both_ends_got_a_frame_made_after_the_fault():
    assert x.measure(_flap(100), "oae", _raw([]))["flows_cycles"] == 420
    assert x.measure(_flap(100), "oae", _raw([], flows=(400, -1)))["flows_cycles"] is None  # one never did
    quiet = dataclasses.replace(_flap(100), events=(), down=())
    assert x.measure(quiet, "oae", _raw([]))["flows_cycles"] is None  # no fault to flow again after
    assert "flows_from" not in x.schedule_text(quiet, "oae", 1)
    assert f"flows_from {x.T0}\n" in x.schedule_text(_flap(100), "oae", 1)


def test_a_flap_nobody_noticed_and_nothing_lost_is_hidden_not_a_ghost():
    row = x.measure(_flap(100), "oae", _raw([]))
    assert row["detection_cycles"] is None and row["ghost_cycles"] == 0 and row["unseen_faults"] == 1
    assert row["hidden_cycles"] == 100


def test_a_flap_nobody_noticed_that_lost_frames_is_a_ghost():
    row = x.measure(_flap(100), "oae", _raw([], lost=3))
    assert row["unseen_faults"] == 0 and row["ghost_cycles"] == 2 * 100 and row["frames_lost"] == 3
    assert row["hidden_cycles"] == 0


def test_a_suspicion_on_a_working_link_is_a_ghost_of_the_other_sign():
    sc = dataclasses.replace(x.SCENARIOS["ber_1e-6"], length={"oae": 10_000, "ltssm": 10_000})
    raw = _raw([[2_500, 1, 0, 0], [2_800, 1, 0, 1]])
    row = x.measure(sc, "oae", raw)
    assert row["ghost_cycles"] == 0 and row["ghost_cycles_down_while_up"] == 300 and row["detection_cycles"] is None


def test_the_contrast_links_completer_belief_is_metered_beside_dl_up():
    sc = dataclasses.replace(x.SCENARIOS["slow_completer"], length={"oae": 10_000, "ltssm": 10_000})
    t0 = 2_000 + x.T0
    raw = _raw(
        [
            [300, 0, 1, 1],
            [300, 1, 1, 1],
            # A's completion timeout fires 700 cycles after the slow completer began, B's 900;
            # answers reach A at +2,000 and B at +2,500. DL_Up never moves.
            [t0 + 700, 0, 1, 0],
            [t0 + 900, 1, 1, 0],
            [t0 + 2_000, 0, 1, 1],
            [t0 + 2_500, 1, 1, 1],
        ]
    )
    raw["beliefs"] = ["dl_up", "completer_alive"]
    row = x.measure(sc, "ltssm", raw)
    assert row["detection_cycles"] is None and row["ghost_cycles_down_while_up"] == 0
    assert row["completer_detection_cycles"] == 900
    assert row["completer_ghost_cycles_down_while_up"] == 1_300 + 1_600 and row["completer_ghost_cycles"] == 0
    assert "completer alive" in x.table({sc.name: [x.measure(sc, "oae", _raw([])), row]})
    # The report's row shape (the report.json fields), for both links.
    keys = {
        "name",
        "link",
        "detection_cycles",
        "ghost_cycles",
        "frames_lost",
        "frames_duplicated",
        "tokens_lost",
        "tokens_duplicated",
        "goodput",
    }
    assert keys <= set(row) and keys <= set(x.measure(sc, "oae", _raw([])))
    assert row["tokens_lost"] is None


def test_a_token_in_flight_long_on_a_link_up_at_the_end_is_lost_and_a_fresh_one_is_not():
    raw = _raw([], cycles=50_000)
    end = raw["origin"] + raw["cycles"]
    raw["tokens"] = [
        {"from": 0, "taken": 5, "delivered": 3, "duplicated": 0, "in_flight_since": [100, end - 10]},
        {"from": 1, "taken": 4, "delivered": 4, "duplicated": 0, "in_flight_since": []},
    ]
    row = x.measure(_flap(100), "oae", raw)
    assert row["tokens_lost"] == 1 and row["tokens_in_flight_at_end"] == 2 and row["tokens_delivered"] == 7
    # On a link still down at the end, the same tokens are frozen, not lost.
    raw["changes"].append([end - 5, 0, 0, 0])
    assert x.measure(_flap(100), "oae", raw)["tokens_lost"] == 0


@pytest.mark.verilator
def test_the_oae_pair_in_the_cpp_loop_sees_a_cut_within_its_bound_and_loses_nothing():
    exe = x.build("oae")
    sc = dataclasses.replace(x.SCENARIOS["flap_1us"], length={"oae": 30_000, "ltssm": 30_000})
    raw = x.run(exe, sc, "oae", seed=3)
    row = x.measure(sc, "oae", raw)
    # Loss of signal (PROTOCOL.md 5): los_cycles of silence after the last word in flight.
    assert row["detection_cycles"] is not None and row["detection_cycles"] <= 8 + 2 * x.LATENCY
    assert row["frames_lost"] == row["frames_duplicated"] == row["frames_corrupted"] == 0
    assert row["tokens_lost"] == row["tokens_duplicated"] == 0 and row["tokens_delivered"] > 100
    assert row["frames_delivered"] > 4_000
    # Back up after the flap: the last belief of both ends is "up".
    assert all(x.before_end(raw, e, raw["origin"] + raw["cycles"]) for e in (0, 1))
