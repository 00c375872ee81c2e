"""Scenario files (sim/scenario_file.py, docs/SCENARIOS.md): the shipped built-ins are the
scenarios the commands run, a file's times and faults mean what the format says, and every bad
file is refused with its line and field before anything runs."""

import json

import pytest

from golden.params import TURNAROUND, LinkParams
from sim import experiment, fabric_bounds, fabric_contrast, triangle
from sim.scenario_file import SCENARIOS, Fault, ScenarioFileError, down_intervals, dumps, load, loads

PAIR = """\
name = "probe"
topology = "pair"
clock_mhz = 156.25

[links]
latency = 16

[[faults]]
kind = "cut"
directions = "both"
at = 1000
length = "1 us"
"""


BUILT_INS = (
    ("experiment", experiment.BUILTIN),
    ("triangle", triangle.BUILTIN),
    ("fabric", fabric_contrast.BUILTIN),
    ("bounds", fabric_bounds.BUILTIN),
)


def test_every_shipped_file_is_a_built_in_of_its_command_and_loads():
    assert sorted(p.name for p in SCENARIOS.iterdir()) == sorted(["campaign", *(f for f, _ in BUILT_INS)])
    for folder, names in BUILT_INS:
        files = sorted(p.stem for p in (SCENARIOS / folder).glob("*.toml"))
        assert files == sorted(names), folder
        for name in names:
            assert load(SCENARIOS / folder / f"{name}.toml", horizon=1000).name == name


H = 122_087  # an odd horizon: 1.5 of them is not a whole cycle


@pytest.mark.parametrize(
    "name, failed, pair, flows_from, length",
    [
        ("node_death", [0, 1], None, 0, 2 * H),
        ("link_cut_failover", [0], (0, 1), 0, 3 * H),
        ("relay_death", [0], (0, 1), 3 * H // 2, 4 * H),
        ("partition", [0, 1], (0, 1), 0, 3 * H),
    ],
)
def test_the_fabric_contrast_files_plan_the_runs_in_horizons(name, failed, pair, flows_from, length):
    """The four fabric scenarios: the links whose beliefs are read, the pair whose traffic is
    followed and from when, and the run's length; a time in horizons rounds down."""
    spec = fabric_contrast.scenario_spec(name, H)
    plan = fabric_contrast.plan(spec, 1, H)
    assert (plan.failed, plan.pair, plan.flows_from, plan.length) == (failed, pair, flows_from, length)
    if name == "relay_death":
        assert [(f.kind, f.at, f.length) for f in plan.faults] == [("cut", 0, 3 * H), ("node_death", 3 * H // 2, None)]
    with pytest.raises(ValueError, match="no built-in fabric scenario 'cut'"):
        fabric_contrast.scenario_spec("cut", H)


def test_horizons_need_the_command_that_defines_them():
    text = PAIR.replace('length = "1 us"', 'length = "2 horizons"')
    assert loads(text, "f.toml", horizon=50).rules[0].fault.length == 100
    e = _error(text)
    assert (e.line, e.field) == (12, "faults[0].length") and "only python -m sim.fabric_contrast" in e.message


TRIANGLE_CUT = """name = "cut"
topology = "triangle"

[[faults]]
kind = "cut"
link = 1
at = 0
length = 500
"""


def test_flows_and_run_length_set_what_a_fabric_run_follows_and_replay_through_a_saved_file():
    spec = loads(TRIANGLE_CUT + '\n[flows]\nbetween = [2, 0]\nfrom = "1 us"\n\n[run]\nlength = 9000\n')
    assert spec.flows == {"between": (2, 0), "from": 156} and spec.run == {"length": 9000}
    plan = fabric_contrast.plan(spec, 1, 1000)
    assert (plan.failed, plan.pair, plan.flows_from, plan.length) == ([1], (2, 0), 156, 9000)
    default = fabric_contrast.plan(loads(TRIANGLE_CUT), 1, 1000)  # the cut link's ends, two horizons on
    assert (default.pair, default.flows_from, default.length) == ((1, 2), 0, 500 + 2000)
    again = loads(dumps(spec, spec.schedule(1), "cut"))
    assert (again.flows, again.run) == (spec.flows, spec.run)


@pytest.mark.parametrize(
    "table, line, field, says",
    [
        ("[flows]\nbetween = [1, 1]", 11, "flows.between", "two different nodes"),
        ("[flows]\nbetween = [0, 3]", 11, "flows.between", "between 0 and 2"),
        ("[flows]\nbetween = 2", 11, "flows.between", "two nodes"),
        ("[flows]\nuntil = 5", 11, "flows.until", "unknown key"),
        ("[run]\nlength = 0", 11, "run.length", "at least 1 cycles"),
    ],
)
def test_a_bad_flows_or_run_table_is_refused_naming_its_line(table, line, field, says):
    e = _error(TRIANGLE_CUT + "\n" + table + "\n")
    assert (e.line, e.field) == (line, field) and says in e.message, str(e)


@pytest.mark.parametrize(
    "extra, line, field, says",
    [
        ("[run]\noae = 9000", 11, "run.oae", "give [run] length"),
        ("[[faults]]\nkind = 'gray'\nat = 5", 11, "faults[1].kind", "not gray"),
        ("[links]\nber = 1e-6", 11, "links.ber", "no bit errors"),
    ],
)
def test_the_fabric_contrast_refuses_what_its_loops_cannot_drive_by_line(extra, line, field, says):
    with pytest.raises(ScenarioFileError) as e:
        fabric_contrast.check_rtl_spec(loads(TRIANGLE_CUT + "\n" + extra + "\n", "f.toml"))
    assert (e.value.field, e.value.line) == (field, line) and says in e.value.message, str(e.value)


def test_the_fabric_contrast_refuses_two_scenarios_of_one_name(tmp_path, capsys):
    path = tmp_path / "node_death.toml"
    path.write_text((SCENARIOS / "fabric" / "node_death.toml").read_text())
    with pytest.raises(SystemExit):
        fabric_contrast.main(["--scenario", "node_death", "--scenario-file", str(path)])
    assert "two scenarios of this run are named 'node_death'" in capsys.readouterr().err


def test_the_golden_triangle_refuses_run_and_flows_and_the_experiment_flows():
    for extra, field in (("[run]\nlength = 9000", "run"), ("[flows]\nbetween = [0, 1]", "flows")):
        with pytest.raises(ScenarioFileError) as e:
            triangle.topology_of(loads(TRIANGLE_CUT + "\n" + extra + "\n", "f.toml"))
        assert (e.value.field, e.value.line) == (field, 10) and "RTL fabrics" in e.value.message
    with pytest.raises(ScenarioFileError, match="flows: a pair has one link"):
        experiment.from_spec(loads(PAIR + "\n[flows]\nfrom = 5\n"))
    both = experiment.from_spec(loads(PAIR + "\n[run]\nlength = 7000\nltssm = 8000\n"))
    assert both.length == {"oae": 7000, "ltssm": 8000}


def test_every_campaign_file_loads_and_draws():
    for path in sorted((SCENARIOS / "campaign").glob("*.toml")):
        spec = load(path)
        assert spec.name == path.stem and spec.schedule(1), path


def test_flap_train_lasts_the_oae_training_bound_of_the_experiments_line():
    spec = load(SCENARIOS / "experiment" / "flap_train.toml")
    bound = LinkParams().liveness_bound(2 * experiment.LATENCY + TURNAROUND)
    assert spec.schedule()[0].length == bound
    assert f"{bound:,} cycles" in spec.description


@pytest.mark.parametrize(
    "text, cycles",
    [
        ("1 us", 156),
        ("200 us", 31_250),
        ("30 ms", 4_687_500),
        ("500 ns", 78),
        ("4000 cycles", 4000),
        ("0.5 s", 78_125_000),
    ],
)
def test_a_time_with_a_unit_is_converted_at_the_files_clock(text, cycles):
    spec = loads(PAIR.replace('"1 us"', f'"{text}"'))
    assert spec.schedule()[0].length == cycles


def test_the_clock_sets_the_conversion():
    spec = loads(PAIR.replace("156.25", "100"))
    assert spec.schedule()[0].length == 100


def test_the_experiment_turns_a_file_into_the_events_and_down_time_of_the_c_loop():
    sc = experiment.from_spec(loads(PAIR))
    assert sc.events == ((1000, 0, "cut", 1), (1000, 1, "cut", 1), (1156, 0, "cut", 0), (1156, 1, "cut", 0))
    assert sc.down == ((1000, 1156),)
    # Cuts only, healed: the OAE link a tail past the heal, the contrast link until it trained again.
    assert sc.length == {"oae": 1156 + experiment._OAE_TAIL, "ltssm": 1156 + experiment._LTSSM_RETRAIN}
    text = experiment.schedule_text(sc, "oae", 1)
    assert "at 1156 1 cut 0" in text and "latency" not in text
    # Another line is another build: its channel starts at the file's latency.
    sc = experiment.from_spec(loads(PAIR.replace("latency = 16", "latency = 30")))
    assert sc.latency == 30 and "latency" not in experiment.schedule_text(sc, "oae", 1)
    assert "unsigned initial_latency(int) { return 30; }" in experiment.ports_source("oae", 30)


def test_overlapping_cuts_of_a_direction_are_one_level_in_the_c_loop():
    """The C++ loop's cut is a level: a heal in the middle of a longer cut would end both."""
    text = PAIR + '\n[[faults]]\nkind = "cut"\ndirections = "ab"\nat = 1050\nlength = 20\n'
    sc = experiment.from_spec(loads(text))
    assert sc.events == ((1000, 0, "cut", 1), (1000, 1, "cut", 1), (1156, 0, "cut", 0), (1156, 1, "cut", 0))
    assert sc.down == ((1000, 1156),)


def test_a_file_run_equals_the_built_in_it_repeats(tmp_path):
    path = tmp_path / "flap_1us.toml"
    path.write_text((SCENARIOS / "experiment" / "flap_1us.toml").read_text())
    assert experiment.from_spec(load(path)) == experiment.SCENARIOS["flap_1us"]


def test_overlapping_cuts_make_one_down_interval():
    faults = [Fault("cut", 10, 20, directions=("ab",)), Fault("cut", 25, None, directions=("ba",))]
    assert down_intervals(faults) == [(10, None)]
    faults = [Fault("cut", 10, 5), Fault("gray", 40, 5), Fault("latency", 12, None, value=3)]
    assert down_intervals(faults) == [(10, 15), (40, 45)]
    # Two faults from one cycle, one lasting: one interval to the end (not a comparison of None).
    assert down_intervals([Fault("cut", 10, None), Fault("cut", 10, 20)]) == [(10, None)]


RANDOM = """\
name = "day"
topology = "triangle"

[[faults]]
kind = "cut"
link = "any"
every = "10 us"
within = "1 ms"
length = { min = 5, max = "1 us" }

[[faults]]
kind = "node_death"
node = "any"
every = 50_000
count = 2
"""


def test_a_drawn_schedule_follows_its_rate_and_replays_from_its_seed():
    spec = loads(RANDOM)
    assert spec.random
    a, b = spec.schedule(7), spec.schedule(7)
    assert a == b and a != spec.schedule(8)
    cuts = [f for f in a if f.kind == "cut"]
    # A Poisson process of mean 1,562 cycles over 156,250: about 100 (seed 7 draws within 30%).
    assert 70 <= len(cuts) <= 130
    assert all(0 < f.at < 156_250 and 5 <= f.length <= 156 and f.link in (0, 1, 2) for f in cuts)
    assert {f.link for f in cuts} == {0, 1, 2}
    deaths = [f for f in a if f.kind == "node_death"]
    assert len(deaths) == 2 and all(f.node in (0, 1, 2) for f in deaths)
    assert [f.at for f in a] == sorted(f.at for f in a)


def test_the_triangle_applies_a_partition_as_cuts_into_its_node():
    from sim.harness.fabric import make_triangle

    h = make_triangle(4)
    triangle.apply_faults(h, [Fault("partition", 5, 20, node=1)], 100)
    # Links 0-1 and 1-2: node 1 is B of the first (0 -> 1 is ab) and A of the second (2 -> 1 is ba).
    assert h.channels[0].ab.cuts == [(105, 125)] and h.channels[1].ba.cuts == [(105, 125)]
    assert not (h.channels[0].ba.cuts or h.channels[1].ab.cuts or h.channels[2].ab.cuts or h.channels[2].ba.cuts)
    assert triangle.first_fault_links(h.topology, [Fault("partition", 5, 20, node=1)]) == [0, 1]


@pytest.mark.slow
def test_the_triangle_runs_a_file_of_faults_drawn_at_a_rate(tmp_path):
    """A short campaign day in one file: cuts on any link, a latency step, a gray line, bit
    errors; the run is checked by the fabric scoreboard (nothing lost, duplicated or out of order)."""
    path = tmp_path / "busy.toml"
    path.write_text(
        """\
name = "busy"
topology = "triangle"

[links]
latency = [8, 8, 12]
ber = [0.0, 1e-6, 0.0]

[traffic]
load = 0.02
tokens = 0.02

[[faults]]
kind = "cut"
link = "any"
every = 400
within = 1500
length = { min = 5, max = 60 }

[[faults]]
kind = "latency"
link = 2
at = 100
latency = 14

[[faults]]
kind = "gray"
link = 1
directions = "ab"
at = 300
length = 400
"""
    )
    row = triangle.run_scenario(load(path), seed=3)
    assert row["scenario"] == "busy" and row["frames_lost"] == 0 and row["tokens_unaccounted"] == 0
    # A drawn schedule's first verdict may answer any of its faults: no single-fault bound beside it.
    assert row["verdict_bound_cycles"] is None and row["verdicts"]


@pytest.mark.slow
def test_the_triangle_command_runs_a_torus_with_diagonals(tmp_path):
    """Nine nodes, 27 links, every link in triangles with three arbiters: a cut gets its verdict and the traffic
    between every pair of live nodes arrives (the fabric scoreboard checks it)."""
    path = tmp_path / "torus.toml"
    path.write_text(
        'name = "t"\ntopology = "torus"\nrows = 3\ncols = 3\n\n[links]\nlatency = 6\n\n[traffic]\nload = 0.01\n'
        'tokens = 0.01\n\n[[faults]]\nkind = "cut"\nlink = 4\nat = 0\nlength = 400\n'
    )
    spec = load(path)
    assert spec.nodes == 9 and spec.num_links == 27 and len(spec.latency) == 27
    row = triangle.run_scenario(spec)
    assert row["frames_lost"] == 0 and row["verdicts"][0]["verdict"] == "LINK_DOWN" and row["verdicts"][0]["link"] == 4


def _error(text: str) -> ScenarioFileError:
    with pytest.raises(ScenarioFileError) as e:
        loads(text, "f.toml")
    return e.value


@pytest.mark.parametrize(
    "old, new, line, field, says",
    [
        ('topology = "pair"', 'topology = "ring"', 2, "topology", "must be one of pair, triangle, mesh, torus"),
        ('topology = "pair"', 'topology = "torus"\nrows = 2\ncols = 3', 3, "rows", "between 3 and 8"),
        ('kind = "cut"', 'kind = "snip"', 9, "faults[0].kind", "must be one of cut"),
        ('length = "1 us"', 'length = "1 fortnight"', 12, "faults[0].length", "is not a time"),
        ('length = "1 us"', "length = -4", 12, "faults[0].length", "at least 1 cycles"),
        ('directions = "both"', 'directions = "up"', 10, "faults[0].directions", "must be ab, ba or both"),
        ("latency = 16", "latency = [16, 16]", 6, "links.latency", "each of the 1 links one value"),
        ("latency = 16", "latency = 16\nlatncy = 3", 7, "links.latncy", "unknown key"),
        ("at = 1000", "at = 1000\nevery = 5", 11, "faults[0].at", "either at (a cycle) or every"),
        ('kind = "cut"', 'kind = "node_death"', 9, "faults[0].kind", "needs a fabric"),
        ("clock_mhz = 156.25", 'clock_mhz = "fast"', 3, "clock_mhz", "must be a number"),
        ("[links]", "[links]\nber = 2.0", 6, "links.ber", "between 0 and 0.5"),
        ('kind = "cut"\n', "", 8, "faults[0]", "kind missing"),
        ('kind = "cut"', 'kind = "partition"', 9, "faults[0].kind", "triangle, mesh or torus"),
        ('directions = "both"', 'link = "all"', 10, "faults[0].link", "or \"any\", not 'all'"),
        ("at = 1000", "every = 5\nwithin = 50\ncount = 2", 13, "faults[0].count", "not both"),
        ("at = 1000", "every = 5", 11, "faults[0].every", "needs within (a time) or count"),
    ],
)
def test_a_bad_file_is_refused_naming_its_line_and_field(old, new, line, field, says):
    assert PAIR.count(old) == 1
    e = _error(PAIR.replace(old, new))
    assert (e.line, e.field) == (line, field), str(e)
    assert says in e.message and str(e).startswith(f"f.toml:{line}: {field}: ")


def test_a_file_that_is_not_toml_is_refused_with_its_line():
    e = _error(PAIR.replace("at = 1000", "at = = 1000"))
    assert e.line == 11 and "not valid TOML" in e.message


def test_a_missing_file_is_refused_by_name(tmp_path):
    with pytest.raises(ScenarioFileError, match="cannot read the file"):
        load(tmp_path / "none.toml")


@pytest.mark.parametrize(
    "text, field, line, says",
    [
        (PAIR.replace('topology = "pair"', 'topology = "triangle"'), "topology", 2, "runs a pair"),
        (PAIR.replace("latency = 16", "latency = 65"), "links.latency", 6, "1 to 64 cycles"),
        (PAIR.replace("clock_mhz = 156.25", "clock_mhz = 100"), "clock_mhz", 3, "156.25 MHz"),
        (PAIR.replace("[links]", "[traffic]\nload = 0.5\n\n[links]"), "traffic", 5, "saturated"),
        (PAIR + "\n[[faults]]\nkind = 'latency'\nat = 5\nlatency = 80\n", "faults[1].latency", 17, "not 80"),
    ],
)
def test_the_experiment_refuses_a_file_it_cannot_run(text, field, line, says):
    with pytest.raises(ScenarioFileError) as e:
        experiment.from_spec(loads(text, "f.toml"))
    assert (e.value.field, e.value.line) == (field, line) and says in e.value.message


@pytest.mark.parametrize("command", [experiment, triangle, fabric_contrast])
def test_a_bad_file_stops_the_command_before_anything_runs(command, tmp_path, capsys, monkeypatch):
    def ran(*_, **__):
        raise AssertionError("the command ran something")

    monkeypatch.setattr(experiment, "build", ran)
    monkeypatch.setattr(triangle, "run_scenario", ran)
    monkeypatch.setattr(fabric_contrast, "_run", ran)
    monkeypatch.setattr(fabric_contrast, "_in_parallel", ran)
    path = tmp_path / "bad.toml"
    path.write_text(PAIR.replace('kind = "cut"', 'kind = "snip"'))
    with pytest.raises(SystemExit) as e:
        command.main(["--scenario-file", str(path)])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert f"{path}:9: faults[0].kind: must be one of" in err


@pytest.mark.verilator
def test_the_experiment_runs_a_file_on_a_shorter_line(tmp_path, monkeypatch, capsys):
    """A flap on a line of 8 cycles each way, from a file, on the Verilated pairs built for it:
    the OAE row loses nothing, the table names the file's scenario, and the links trained once,
    on the file's line (a channel that started at the default 16 and moved to 8 a fill word at
    a time met them after training as a latency step, and they trained again)."""
    monkeypatch.setattr(experiment, "REPORT", tmp_path / "report.json")
    path = tmp_path / "shorter.toml"
    path.write_text(PAIR.replace('name = "probe"', 'name = "shorter"').replace("latency = 16", "latency = 8"))
    assert experiment.main(["--scenario-file", str(path), "--no-waves", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "shorter: " in out
    rows = {r["link"]: r for r in json.loads((tmp_path / "report.json").read_text())["scenarios"]}
    oae = rows["oae"]
    assert oae["frames_lost"] == oae["frames_duplicated"] == oae["frames_corrupted"] == 0
    assert oae["detection_cycles"] is not None and oae["frames_delivered"] > 0
    # A frame handed in during the 1 us cut (156 cycles) arrives after the heal, on both links.
    for row in rows.values():
        assert 156 < row["flows_cycles"] < 156 + 20_000, row
    raw = json.loads((experiment.RUNS / "shorter_oae.json").read_text())
    before = [c for c in raw["changes"] if c[0] < raw["origin"]]  # [cycle, end, belief, value]
    assert sorted((end, value) for cycle, end, _, value in before if cycle > 0) == [(0, 1), (1, 1)], before
    assert json.loads((tmp_path / "report.json").read_text())["latency"] == 8
