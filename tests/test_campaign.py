"""``python -m sim.campaign`` (sim/campaign.py): a campaign on a local Dask cluster of two
processes finds a seeded defect, saves each broken run so that it replays, resumes where it
stopped, and summarizes what it measured."""

import json

import pytest

from sim import campaign
from sim.scenario_file import Fault, load, loads

TRIANGLE = """\
name = "flaky"
topology = "triangle"

[links]
latency = 8

[traffic]
load = 0.03
tokens = 0.02

[[faults]]
kind = "cut"
link = "any"
every = 600
within = 1500
length = { min = 20, max = 1200 }

[[faults]]
kind = "node_death"
node = "any"
every = 2000
count = 1
"""


@pytest.fixture
def scenario(tmp_path):
    path = tmp_path / "flaky.toml"
    path.write_text(TRIANGLE)
    return path


@pytest.mark.verilator
def test_a_campaign_finds_a_seeded_defect_saves_the_runs_and_they_replay(scenario, tmp_path, capsys):
    out = tmp_path / "mutant"
    argv = [str(scenario), "--runs", "3", "--workers", "2", "--out", str(out)]
    assert campaign.main([*argv, "--mutant", "no_rewind"]) == 1
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert sorted(r["run"] for r in records) == [0, 1, 2]
    broken = [r for r in records if r["problems"]]
    assert broken, "the seeded defect went unnoticed"
    for r in broken:
        saved = out / "failures" / f"flaky.{r['run']}.json"
        record = json.loads(saved.read_text())
        assert record["replay"] == f"python -m sim.campaign --replay {saved}"
        # Only the replay has the seeded defect: the saved file's comment says so.
        assert f"# Replay: python -m sim.campaign --replay {saved}\n" in saved.with_suffix(".toml").read_text()
        # The saved scenario file is the drawn schedule, fixed: it loads and draws nothing.
        fixed = load(out / "failures" / f"flaky.{r['run']}.toml")
        assert not fixed.random
        assert [f.at for f in fixed.schedule()] == [f["at"] for f in r["faults"]]
    capsys.readouterr()
    first = out / "failures" / f"flaky.{broken[0]['run']}.json"
    assert campaign.main(["--replay", str(first)]) == 1
    assert broken[0]["problems"][0] in capsys.readouterr().out

    # The same runs without the defect (so on the Verilated triangles, the OAE one and the
    # PCIe-style one) break nothing; a campaign run again skips what is done.
    clean = tmp_path / "clean"
    argv = [str(scenario), "--runs", "2", "--workers", "2", "--out", str(clean)]
    assert campaign.main(argv) == 0
    assert campaign.main([*argv[:2], "3", *argv[3:]]) == 0
    said = capsys.readouterr().out
    assert "2 already in" in said and "1 to run" in said
    lines = (clean / "results.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["run"] for line in lines) == [0, 1, 2]
    summary = json.loads((clean / "summary.json").read_text())
    assert summary["broken_runs"] == [] and summary["runs"] == 3
    assert summary["models"] == campaign.MODELS["rtl-fabrics"]
    for group in summary["summary"].values():
        assert set(group) == {"oae-rtl", "pcie-rtl"} and "flowing again" in group["oae-rtl"]
    runs = sum(g["oae-rtl"]["detection"]["n"] + g["oae-rtl"]["detection"]["never"] for g in summary["summary"].values())
    assert runs == 3
    assert (clean / "campaign.png").stat().st_size > 0


def test_a_directory_of_another_campaign_is_refused(scenario, tmp_path, capsys):
    out = tmp_path / "c"
    store = campaign.Store(out, TRIANGLE, scenario, 1, None)
    assert store.open() == {}
    with pytest.raises(SystemExit) as e:
        campaign.main([str(scenario), "--runs", "1", "--seed", "2", "--out", str(out)])
    assert e.value.code == 2 and "another scenario file, seed or mutant" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, says",
    [
        ([], "give a scenario file"),
        (["{pair}", "--mutant", "no_rewind"], "the scenario must be a triangle or mesh"),
        (["{tri}", "--runs", "0"], "--runs must be at least 1"),
        (["{tri}", "--scheduler", "tcp://x:1", "--workers", "2"], "--workers sizes a local cluster"),
    ],
)
def test_bad_arguments_are_refused(argv, says, scenario, tmp_path, capsys):
    pair = tmp_path / "pair.toml"
    pair.write_text('name = "p"\ntopology = "pair"\n[links]\nlatency = 16\n')
    argv = [a.format(pair=pair, tri=scenario) for a in argv]
    with pytest.raises(SystemExit) as e:
        campaign.main(argv)
    assert e.value.code == 2 and says in capsys.readouterr().err


def test_the_summary_gives_median_p99_and_max_per_kind_and_model():
    records = [
        {"kinds": "cut", "rows": {"oae": {"detection_cycles": d, "ghost_cycles": 2 * d}}} for d in range(1, 101)
    ] + [{"kinds": "cut+gray", "rows": {"oae": {"detection_cycles": None, "ghost_cycles": 5}}}]
    s = campaign.summarize(records)
    assert s["cut"]["oae"]["detection"] == {"n": 100, "median": 51, "p99": 99, "max": 100, "never": 0}
    assert s["cut"]["oae"]["ghost up/down"]["max"] == 200
    assert s["cut+gray"]["oae"]["detection"] == {"n": 0, "median": None, "p99": None, "max": None, "never": 1}
    assert "cut+gray" in campaign.table(s)


@pytest.mark.parametrize(
    "change, model",
    [
        ((), "rtl-fabrics"),
        (("latency = 8", "latency = [8, 8, 9]"), "golden-fabric"),
        (('kind = "cut"', 'kind = "gray"'), "golden-fabric"),
        (('topology = "triangle"', 'topology = "mesh"\nnodes = 4'), "golden-fabric"),
    ],
)
def test_a_fabric_runs_in_rtl_where_the_loops_drive_its_faults_and_in_golden_otherwise(change, model):
    text = TRIANGLE.replace(*change) if change else TRIANGLE
    assert campaign.model_for(loads(text)) == model
    # A seeded defect is in the golden model: its campaign runs there.
    assert campaign.model_for(loads(text), "no_rewind") == "golden-fabric"


@pytest.mark.parametrize(
    "model, command",
    [
        ("golden-fabric", "python -m sim.triangle --scenario-file {toml} --seed 7"),
        ("rtl-fabrics", "python -m sim.campaign --replay {json}"),  # the RTL triangles' build seed
    ],
)
def test_a_saved_broken_run_names_the_command_that_replays_it(model, command, tmp_path):
    store = campaign.Store(tmp_path / "c", TRIANGLE, tmp_path / "t.toml", seed=1, mutant=None)
    store.open()
    fault = {"kind": "cut", "at": 10, "length": 50, "link": 0, "directions": ["ab", "ba"]}
    record = {"run": 3, "seed": 7, "model": model, "faults": [fault], "problems": ["lost 2 frames"]}
    saved = store.add(record)
    toml = saved.with_suffix(".toml")
    assert f"# Replay: {command.format(toml=toml, json=saved)}\n" in toml.read_text()
    assert load(toml).schedule() == [Fault("cut", 10, 50, 0, ("ab", "ba"))]


CUT = """\
name = "one_cut"
topology = "triangle"

[[faults]]
kind = "cut"
link = 1
directions = "ab"
at = 100
length = 1000
"""


def _told(nodes, cycles=150, link=1):
    return [{"link": link, "verdict": "LINK_DOWN", "subject": 0, "cycles_at_node": {str(n): cycles for n in nodes}}]


def test_a_first_cut_past_the_verdict_bound_must_be_told_to_every_node():
    spec = loads(CUT)
    faults = [{"kind": "cut", "at": 100, "length": 1000, "link": 1, "directions": ["ab"]}]
    assert campaign.late_first_cut_verdict(spec, faults, _told(range(3))) is None
    late = campaign.late_first_cut_verdict(spec, faults, _told([0, 1]))
    assert "link 1 cut at 100 for 1000 cycles and no LINK_DOWN of it at node(s) [2] within" in late
    assert "207 cycles" in late  # 10.8's bound at 8 cycles a link
    assert campaign.late_first_cut_verdict(spec, faults, _told(range(3), cycles=208))
    assert campaign.late_first_cut_verdict(spec, faults, _told(range(3), link=0))
    # Not the single fault the bound is for: a cut that heals first, a fault before the bound.
    short = [{**faults[0], "length": 207}]
    assert campaign.late_first_cut_verdict(spec, short, []) is None
    crowded = [*faults, {"kind": "cut", "at": 294, "length": 10, "link": 0, "directions": ["ab"]}]
    assert campaign.late_first_cut_verdict(spec, crowded, []) is None
    # A cut that lasts: its record has no length (a record leaves out what is None).
    lasting = loads(CUT.replace("length = 1000\n", ""))
    records = [campaign._fault_dict(f) for f in lasting.schedule(1)]
    assert "length" not in records[0]
    assert campaign.late_first_cut_verdict(lasting, records, _told(range(3))) is None
    assert "cut at 100 for good cycles" in campaign.late_first_cut_verdict(lasting, records, _told([0, 1]))


@pytest.mark.parametrize("mutant", [None, "no_rewind"])
def test_a_seeded_defect_breaks_a_run_of_one_cut(mutant):
    """The golden fabric with rewinds gone (the mutant) never decides on a cut link: a campaign
    of cuts alone catches it by the verdict bound."""
    record = campaign.run_one(CUT, "one_cut.toml", 0, 7, mutant, "golden-fabric")
    said = [p for p in record["problems"] if "no LINK_DOWN" in p]
    assert bool(said) == (mutant is not None), record["problems"]
