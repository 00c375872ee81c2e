"""The ghost meter (sim/harness/ghost.py) against hand-worked schedules."""

import random

import pytest

from sim.harness.ghost import DOWN_WHILE_UP, UP_WHILE_DOWN, GhostMeter


def _one_link(observers=("a", "b")):
    return GhostMeter(["ab"], {o: ["ab"] for o in observers})


def test_cut_seen_late_and_readmitted_late():
    meter = _one_link()
    meter.actual(100, "ab", False)
    meter.believe(108, "a", "ab", False)
    meter.believe(116, "b", "ab", False)
    meter.actual(200, "ab", True)
    meter.believe(250, "a", "ab", True)
    meter.believe(251, "b", "ab", True)
    report = meter.finish(300)
    (event,) = report.events
    assert (event.start, event.end, event.unseen) == (100, 200, False)
    assert sorted((g.observer, g.sign, g.start, g.end) for g in event.ghosts) == [
        ("a", DOWN_WHILE_UP, 200, 250),
        ("a", UP_WHILE_DOWN, 100, 108),
        ("b", DOWN_WHILE_UP, 200, 251),
        ("b", UP_WHILE_DOWN, 100, 116),
    ]
    assert report.ghost_cycles(UP_WHILE_DOWN) == 8 + 16
    assert report.ghost_cycles(DOWN_WHILE_UP) == 50 + 51
    assert report.worst(UP_WHILE_DOWN) == 16


def test_short_flap_nobody_saw_is_unseen_not_a_ghost():
    meter = _one_link()
    meter.actual(100, "ab", False)
    meter.actual(103, "ab", True)
    report = meter.finish(1000)
    assert [e.unseen for e in report.events] == [True]
    assert report.ghost_cycles(UP_WHILE_DOWN) == 0
    totals = report.as_dict()["totals"]
    assert (totals["unseen_events"], totals["unseen_cycles"]) == (1, 3)


def test_short_flap_that_lost_something_is_a_ghost():
    meter = _one_link()
    meter.actual(100, "ab", False)
    meter.actual(103, "ab", True)
    meter.lost("ab", 2)
    report = meter.finish(1000)
    assert not report.events[0].unseen
    assert report.ghost_cycles(UP_WHILE_DOWN) == 2 * 3  # both observers believed it up


def test_suspicion_after_the_fault_ended_marks_it_seen():
    # A token lost in the flap is missed only after the flap: the event was noticed.
    meter = _one_link(("a",))
    meter.actual(100, "ab", False)
    meter.actual(104, "ab", True)
    meter.believe(130, "a", "ab", False)
    meter.believe(180, "a", "ab", True)
    report = meter.finish(200)
    (event,) = report.events
    assert not event.unseen
    assert event.cycles(UP_WHILE_DOWN) == 4 and event.cycles(DOWN_WHILE_UP) == 50


def test_suspicion_of_a_healthy_link_is_spurious():
    meter = _one_link(("a",))
    meter.believe(10, "a", "ab", False)
    meter.believe(25, "a", "ab", True)
    report = meter.finish(100)
    assert report.events == []
    assert [(g.sign, g.cycles) for g in report.spurious] == [(DOWN_WHILE_UP, 15)]
    assert report.ghost_cycles(DOWN_WHILE_UP) == 15


def test_a_fault_still_open_at_the_end_is_counted_to_the_end():
    meter = _one_link(("a",))
    meter.actual(50, "ab", False)
    report = meter.finish(80)
    assert report.events[0].end is None and not report.events[0].unseen
    assert report.ghost_cycles(UP_WHILE_DOWN) == 30


def test_sample_matches_changes_on_random_schedules():
    """Whole-state sampling every cycle gives what per-cycle counting gives."""
    rng = random.Random(7)
    links, observers = ["ab", "bc"], {"a": ["ab"], "b": ["ab", "bc"], "c": ["bc"]}
    meter = GhostMeter(links, observers)
    actual = {k: True for k in links}
    believed = {(o, k): True for o, ks in observers.items() for k in ks}
    counts = {UP_WHILE_DOWN: 0, DOWN_WHILE_UP: 0}
    for cycle in range(2000):
        for k in links:
            if rng.random() < 0.01:
                actual[k] = not actual[k]
        for key in believed:
            if rng.random() < 0.01:
                believed[key] = not believed[key]
        meter.sample(cycle, actual, believed)
        for (_, k), up in believed.items():
            if up != actual[k]:
                counts[UP_WHILE_DOWN if up else DOWN_WHILE_UP] += 1
    report = meter.finish(2000)
    every = [g for e in report.events for g in e.ghosts] + report.spurious
    for sign in counts:
        assert sum(g.cycles for g in every if g.sign == sign) == counts[sign]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda m: m.actual(5, "xy", False), "unknown link"),
        (lambda m: m.believe(5, "z", "ab", False), "holds no belief"),
        (lambda m: (m.actual(10, "ab", False), m.actual(9, "ab", True)), "in order"),
        (lambda m: m.lost("ab", -1), "count"),
        (lambda m: (m.finish(10), m.actual(11, "ab", False)), "finished"),
    ],
)
def test_bad_input_raises_and_names_it(call, message):
    with pytest.raises(ValueError, match=message):
        call(_one_link())


@pytest.mark.parametrize("links, observers", [([], {"a": []}), (["ab", "ab"], {"a": ["ab"]}), (["ab"], {})])
def test_bad_construction(links, observers):
    with pytest.raises(ValueError):
        GhostMeter(links, observers)


def test_a_retired_observer_ends_its_ghosts():
    meter = _one_link()
    meter.actual(100, "ab", False)
    meter.retire(150, "b")  # b died: it believed the link up until then
    meter.believe(160, "a", "ab", False)
    with pytest.raises(ValueError, match="holds no belief"):
        meter.believe(170, "b", "ab", True)
    report = meter.finish(300)
    assert sorted((g.observer, g.cycles) for g in report.events[0].ghosts) == [("a", 60), ("b", 50)]
