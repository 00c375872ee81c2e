"""sim/fabric_bounds.py: the RTL triangle's single faults read against PROTOCOL.md 10.8, checked
on logs shaped as the C++ loop writes them (the loop itself runs in `make sim` and `make bench`)."""

import pytest

from golden.encoding import Verdict
from golden.topology import Topology
from sim import fabric_bounds as fb

TRIANGLE = Topology.triangle()
BOUNDS = fb.triangle_bounds(8)
ORIGIN = 1_000


def _stream(origin, dest, resumed=-1, flows=-1, **broken):
    base = {"lost": 0, "duplicated": 0, "corrupted": 0, "undelivered": 0}
    return {"origin": origin, "dest": dest, "resumed": resumed, "flows": flows, **base, **broken}


def _streams(**by_pair):
    return [by_pair.get(f"s{o}{d}", _stream(o, d)) for o in range(3) for d in range(3) if o != d]


def _raw(verdicts, streams):
    return {"origin": ORIGIN, "verdicts": verdicts, "streams": streams}


def test_the_bounds_are_those_of_the_golden_node_at_the_measured_round_trip():
    from golden.fabric.node import failover_bound, verdict_bound

    assert BOUNDS["rtt"] == 21
    assert BOUNDS["verdict"] == verdict_bound(21, 21, 8)
    assert BOUNDS["failover"] == failover_bound(21, 21, 8)


def test_every_single_fault_of_the_triangle_is_a_file_and_a_cut_link_heals():
    faults = fb.single_faults()
    assert [f.name for f in faults[:3]] == ["cut 0->1", "cut 1->0", "cut 0<->1"]
    every = {(link, ways, None) for link in range(3) for ways in ((0,), (1,), (0, 1))}
    every |= {(None, (), node) for node in range(3)}
    assert len(faults) == len(every) and {(f.link, f.directions, f.node) for f in faults} == every
    both = faults[2].directives()
    healed = fb.AT + faults[2].length
    assert sorted(both) == sorted(
        [f"at {fb.AT} cut 0 0 1", f"at {fb.AT} cut 0 1 1", f"at {healed} cut 0 0 0", f"at {healed} cut 0 1 0"]
    )
    assert faults[-1].directives() == [f"at {fb.AT} kill 2"]
    text = fb.schedule(faults[0], BOUNDS)
    assert f"resumed_from {fb.AT + BOUNDS['verdict'] // 2}\n" in text
    assert f"flows_from {fb.AT}\n" in text


def test_a_cut_gives_the_slowest_first_verdict_and_the_earliest_frame_between_the_ends():
    fault = fb.single_faults()[2]  # link 0 (0-1) cut both ways
    at = ORIGIN + fb.AT
    verdicts = [
        [at + 90, 0, 0, Verdict.LINK_DOWN, 0],
        [at + 120, 1, 0, Verdict.LINK_DOWN, 0],
        [at + 100, 2, 0, Verdict.LINK_DOWN, 0],
        [at + 400, 1, 0, Verdict.LINK_DOWN, 0],  # a later one at node 1: the first counts
        [at + 500, 2, 1, Verdict.LINK_DOWN, 0],  # another link's
        [at - 5, 2, 0, Verdict.LINK_DOWN, 0],  # before the fault
    ]
    streams = _streams(s01=_stream(0, 1, resumed=80, flows=210), s10=_stream(1, 0, resumed=60, flows=190))
    row = fb.figures(_raw(verdicts, streams), fault, TRIANGLE, BOUNDS)
    assert row["verdict"] == 120
    assert row["failover"] == BOUNDS["verdict"] // 2 + 60
    assert row["flows"] == 210
    assert (row["verdict_bound"], row["failover_bound"]) == (BOUNDS["verdict"], BOUNDS["failover"])


def test_a_cut_across_which_nothing_moved_again_has_no_failover():
    fault = fb.single_faults()[0]
    at = ORIGIN + fb.AT
    verdicts = [[at + 50, n, 0, Verdict.LINK_DOWN, 0] for n in range(3)]
    row = fb.figures(_raw(verdicts, _streams(s01=_stream(0, 1, flows=300))), fault, TRIANGLE, BOUNDS)
    assert row["failover"] is None and row["flows"] is None


def test_a_death_is_told_to_the_survivors_and_its_own_streams_are_not_checked():
    fault = fb.single_faults()[-3]  # node 0 dies
    at = ORIGIN + fb.AT
    verdicts = [[at + 70, 1, 0, Verdict.NODE_DOWN, 0], [at + 75, 2, 2, Verdict.NODE_DOWN, 0]]
    streams = _streams(s01=_stream(0, 1, undelivered=4), s20=_stream(2, 0, lost=3))
    row = fb.figures(_raw(verdicts, streams), fault, TRIANGLE, BOUNDS)
    assert row == {"fault": "node 0 dies", "verdict": 75, "verdict_bound": BOUNDS["verdict"]}


def test_a_node_with_no_verdict_is_a_broken_run():
    fault = fb.single_faults()[-1]  # node 2 dies
    at = ORIGIN + fb.AT
    verdicts = [[at + 70, 0, 0, Verdict.NODE_DOWN, 2], [at + 75, 1, 1, Verdict.NODE_DOWN, 0]]
    with pytest.raises(RuntimeError, match=r"no NODE_DOWN verdict at node\(s\) \[1\]"):
        fb.figures(_raw(verdicts, _streams()), fault, TRIANGLE, BOUNDS)


@pytest.mark.parametrize("field", ["lost", "duplicated", "corrupted", "undelivered"])
def test_a_frame_lost_duplicated_corrupted_or_stuck_between_live_nodes_is_a_broken_run(field):
    fault = fb.single_faults()[-1]  # node 2 dies: 0 and 1 live
    at = ORIGIN + fb.AT
    verdicts = [[at + 70, n, 0, Verdict.NODE_DOWN, 2] for n in (0, 1)]
    with pytest.raises(RuntimeError, match=rf"stream 1->0 {{'{field}': 1}}"):
        fb.figures(_raw(verdicts, _streams(s10=_stream(1, 0, **{field: 1}))), fault, TRIANGLE, BOUNDS)


def test_a_frame_of_no_stream_is_a_broken_run():
    fault = fb.single_faults()[-1]
    at = ORIGIN + fb.AT
    verdicts = [[at + 70, n, 0, Verdict.NODE_DOWN, 2] for n in (0, 1)]
    with pytest.raises(RuntimeError, match=r"1 frame\(s\) delivered that belong to no stream"):
        fb.figures({**_raw(verdicts, _streams()), "foreign": 1}, fault, TRIANGLE, BOUNDS)
    assert fb.figures({**_raw(verdicts, _streams()), "foreign": 0}, fault, TRIANGLE, BOUNDS)


def test_late_names_only_the_verdicts_over_their_bound():
    rows = [{"verdict": 10, "verdict_bound": 10}, {"verdict": 11, "verdict_bound": 10}]
    assert fb.late(rows) == rows[1:]


def test_a_negative_seed_is_refused(capsys):
    with pytest.raises(SystemExit) as exit_:
        fb.main(["--seed", "-1"])
    assert exit_.value.code == 2
    assert "--seed must be 0 or more" in capsys.readouterr().err


SINGLE = """
name = "x"
topology = "triangle"
[run]
length = 5000
[[faults]]
kind = "cut"
at = 0
length = 3000
"""


@pytest.mark.parametrize(
    "change, field",
    [
        ("", None),
        ("[links]\nlatency = 4\n", "links.latency"),
        ("[[faults]]\nkind = 'node_death'\nnode = 2\nat = 0\n", "faults\\[1\\].kind"),
        ("[[faults]]\nkind = 'cut'\nevery = 100\ncount = 2\n", "faults\\[1\\].kind"),
        ("[flows]\nbetween = [0, 1]\n", "flows"),
    ],
)
def test_a_file_that_is_not_one_fixed_fault_is_refused_by_name(change, field):
    from sim.scenario_file import ScenarioFileError, loads

    spec = loads(SINGLE.replace("[run]", change + "[run]") if change.startswith("[links]") else SINGLE + change)
    if field is None:
        assert fb.from_spec(spec, 8) == fb.SingleFault("", 0, (0, 1), length=3000)
        return
    with pytest.raises(ScenarioFileError, match=rf"{field}: "):
        fb.from_spec(spec, 8)


@pytest.mark.parametrize(
    "text, field",
    [
        (SINGLE.replace("length = 3000\n", ""), "faults\\[0\\].length"),
        (SINGLE.replace("at = 0", "at = 5"), "faults\\[0\\].kind"),
        (SINGLE.replace("[run]\nlength = 5000\n", ""), "run"),
    ],
)
def test_a_cut_that_never_heals_a_late_fault_or_no_run_length_is_refused(text, field):
    from sim.scenario_file import ScenarioFileError, loads

    with pytest.raises(ScenarioFileError, match=field):
        fb.from_spec(loads(text), 8)
