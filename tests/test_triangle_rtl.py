"""``python -m sim.triangle --model rtl``: the fabric table from the Verilated RTL fabrics (a
triangle and a full mesh of four) driven by the C++ loop, against the golden fabric's rows."""

from dataclasses import replace

import pytest

from golden.topology import Topology
from sim import triangle
from sim.scenario_file import ScenarioFileError, loads

# The columns both models count the same way, from the nodes' ports and the scoreboards.
SHARED = (
    "fault_cycle",
    "suspicion_cycles",
    "verdicts",
    "verdict_cycles_max",
    "disagreement_cycles",
    "verdict_bound_cycles",
    "ghost",
    "frames_lost",
)


@pytest.mark.verilator
@pytest.mark.parametrize("name", triangle.BUILTIN)
def test_the_rtl_fabric_gives_the_golden_row(name):
    """Every built-in on both models without users' frames or tokens: the same suspicion, every
    verdict at every node at the same cycle, the same ghost. The loop draws its own traffic and
    hands tokens in at other cycles than the golden users, and a frame or a token ahead of a
    control frame on a link can move its delivery by a token turn (flap_rtt's LINK_UP at one
    end, 26 cycles), so the rows are compared on the fabric's own behaviour; then the loop's
    run with its traffic loses and duplicates nothing, and a failed link's ends flow again."""
    quiet = replace(triangle.SCENARIOS[name], tokens=0.0, load=0.0)
    golden = triangle.run_scenario(quiet)
    rtl = triangle.run_scenario_rtl(quiet)
    assert {k: rtl[k] for k in SHARED} == {k: golden[k] for k in SHARED}
    spec = replace(triangle.SCENARIOS[name], tokens=0.0)
    rtl = triangle.run_scenario_rtl(spec)
    assert rtl["model"] == "rtl" and rtl["duplicates"] == 0 and rtl["frames_lost"] == 0
    assert rtl["verdicts"] or name == "flap_short"
    failed = triangle.first_fault_links(triangle.topology_of(spec), spec.schedule(1))
    if len(failed) == 1 and name != "relay_death":
        # A single link's fault: the ends' traffic flows again within the run.
        assert 0 < rtl["flows_cycles"] < spec.rules[0].fault.length + 1_000


RANDOM = """name = "{name}"
topology = "triangle"

[links]
latency = 8

[traffic]
load = 0.0
tokens = 0.0

[[faults]]
kind = "cut"
link = "any"
directions = "{directions}"
every = 700
within = 3000
length = {{ min = 3, max = 2500, scale = "log" }}

[[faults]]
kind = "partition"
node = "any"
every = 1500
within = 3000
length = {{ min = 10, max = 1500, scale = "log" }}

[[faults]]
kind = "node_death"
node = "any"
every = 3000
count = 1
"""


@pytest.mark.verilator
@pytest.mark.parametrize("name, directions", [("drawn_a", "both"), ("drawn_b", "ab"), ("drawn_c", "ba")])
def test_drawn_fault_schedules_give_the_golden_row_without_user_traffic(name, directions):
    """Cuts of any link (both ways or one), partitions and a node's death drawn at random (the
    schedule from the seed and the file's name, so the RTL fabric's build is the built-ins'),
    with the control plane's traffic alone: the users' frames differ between the two models, and
    a VERDICT that waits behind one may be adopted a cycle later, so these runs carry none."""
    spec = loads(RANDOM.format(name=name, directions=directions), f"{name}.toml")
    assert len(spec.schedule(1)) >= 3
    golden = triangle.run_scenario(spec)
    rtl = triangle.run_scenario_rtl(spec)
    assert {k: rtl[k] for k in SHARED} == {k: golden[k] for k in SHARED}
    assert len(rtl["verdicts"]) >= 2


@pytest.mark.verilator
def test_every_token_comes_out_once_on_the_rtl_fabric():
    """The loop's users hand tokens in on every port, as the golden fabric's do; where no node
    dies, each is delivered at its link's other end or given back, once (the loop fails a run
    in which one comes out twice, after its return, or unsent)."""
    row = triangle.run_scenario_rtl("cut_both")
    assert row["tokens"] > 100 and row["tokens_unaccounted"] == 0


CUT = """name = "cut"
topology = "triangle"

[[faults]]
kind = "cut"
link = 1
at = 0
length = 500
"""


@pytest.mark.parametrize(
    "text, field, says",
    [
        (
            CUT.replace('"triangle"', '"torus"\nrows = 3\ncols = 3').replace("link = 1", "link = 0"),
            "topology",
            "not a torus of 9 nodes",
        ),
        (CUT.replace('"triangle"', '"mesh"\nnodes = 5'), "nodes", "not a mesh of 5 nodes"),
        (CUT.replace('"triangle"', '"mesh"\nnodes = 3'), "nodes", "not a mesh of 3 nodes"),
        (CUT + "\n[links]\nlatency = 100\n", "links.latency", "at most 64 cycles"),
        (CUT + "\n[links]\nber = 1e-6\n", "links.ber", "no bit errors"),
        (CUT + "\n[links]\nlatency = [8, 8, 9]\n", "links.latency", "one latency on every link"),
        (CUT + "\n[[faults]]\nkind = 'gray'\nat = 5\n", "faults[1].kind", "not gray"),
        (CUT + "\n[run]\nlength = 900\n", "run", "contrast's RTL fabrics"),
    ],
)
def test_a_file_the_rtl_fabrics_cannot_run_is_refused_by_field(text, field, says):
    with pytest.raises(ScenarioFileError) as e:
        triangle.check_rtl_spec(loads(text, "f.toml"))
    assert e.value.field == field and says in e.value.message, str(e.value)


@pytest.mark.verilator
def test_a_fault_at_the_end_of_the_window_is_seen_by_both_models():
    """A node that dies as the fault window ends (no heal: the window is the death's cycle):
    both models look for the suspicion it raises until the traffic stops."""
    spec = loads(LATE_DEATH, "late.toml")
    golden = triangle.run_scenario(spec)
    rtl = triangle.run_scenario_rtl(spec)
    assert golden["suspicion_cycles"] is not None
    assert {k: rtl[k] for k in SHARED} == {k: golden[k] for k in SHARED}


LATE_DEATH = """name = "late_death"
topology = "triangle"

[traffic]
load = 0.0
tokens = 0.0

[[faults]]
kind = "node_death"
node = 2
at = 2500
"""


def test_the_command_refuses_such_a_file_before_building(tmp_path, capsys):
    path = tmp_path / "gray.toml"
    path.write_text(CUT + "\n[[faults]]\nkind = 'gray'\nat = 5\n")
    with pytest.raises(SystemExit):
        triangle.main(["--model", "rtl", "--scenario-file", str(path)])
    err = capsys.readouterr().err
    assert "faults[1].kind" in err and "not gray" in err
    with pytest.raises(SystemExit):
        triangle.main(["--model", "rtl", "--latency", "65", "--scenario", "cut_both"])
    assert "--latency must be 1 to 64" in capsys.readouterr().err


def _raw(**extra):
    streams = [
        {"origin": o, "dest": d, "undelivered": 0, "lost": 0, "duplicated": 0, "corrupted": 0, "flows": 40}
        for o in range(3)
        for d in range(3)
        if o != d
    ]
    raw = {
        "origin": 100,
        "end": 800,
        "drained_at": 900,
        "seconds": 0.1,
        "beliefs": [],
        "actual": [],
        "ports": [],
        "verdicts": [],
    }
    return {**raw, "streams": streams, **extra}


def test_a_row_counts_from_the_fault_at_the_cycles_the_golden_harness_uses():
    # Node 2's port to node 1 (its second) leaves UP at 111; LINK_DOWN of link 0 at node 2 in the
    # cycle 190 and at the ends at 250; node 0 died at 103, so its port log does not count.
    raw = _raw(
        ports=[[100, 0, 3], [100, 1, 3], [100, 2, 3], [105, 0, 1], [111, 2, 1]],
        verdicts=[[190, 2, 0, 1, 0], [250, 1, 0, 1, 0], [300, 1, 0, 1, 0]],
    )
    spec = triangle.SCENARIOS["cut_both"]
    row = triangle.rtl_row(spec, raw, Topology.triangle(), 3, [(0, 3)], 195, (1, 2), 0.04)
    assert row["fault_cycle"] == 103 and row["suspicion_cycles"] == 8
    assert row["verdicts"] == [{"link": 0, "verdict": "LINK_DOWN", "subject": 0, "cycles_at_node": {"1": 147, "2": 87}}]
    assert (row["verdict_cycles_max"], row["disagreement_cycles"]) == (147, 60)
    assert row["flows_cycles"] == 40 and row["frames_lost"] == 0


@pytest.mark.parametrize(
    "extra, says",
    [
        ({"foreign": 1}, "corrupted or never sent"),
        ({"faulted": [2]}, "raised fault"),
        ({"tokens": {"in": 5, "delivered": 4, "returned": 0, "errors": 1}}, "token"),
    ],
)
def test_a_run_with_a_broken_model_is_refused(extra, says):
    raw = _raw(**extra)
    with pytest.raises(RuntimeError, match=says):
        triangle.rtl_row(triangle.SCENARIOS["cut_both"], raw, Topology.triangle(), 3, [], 195, (0, 1), 0.04)
