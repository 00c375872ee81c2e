"""``python -m sim.fabric_day`` (sim/fabric_day.py): the composition of per-event figures with
a fabric's event rates, its inputs refused when they cannot give a figure, the unusable time it
counts, and the composition against a direct long run at an exaggerated rate."""

import json
import math

import pytest

from sim import experiment, fabric_day
from sim.experiment import Scenario


def _record(run, oae, ltssm, problems=(), lasts=False):
    fault = {"kind": "cut", "at": 10, "length": None if lasts else 500, "link": 0, "directions": ["ab", "ba"]}
    return {"run": run, "kinds": "cut", "rows": {"oae": oae, "ltssm": ltssm}, "problems": list(problems)} | {
        "faults": [fault]
    }


def _campaign(directory, records):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return directory


def test_a_day_is_the_events_a_day_times_the_mean_per_event(tmp_path):
    flaps = fabric_day.per_event(
        _campaign(
            tmp_path / "f",
            [
                _record(0, {"ghost_cycles": 100, "frames_lost": 0}, {"hidden_cycles": 1000, "frames_lost": 2}),
                _record(1, {"ghost_cycles": 300, "frames_lost": 0}, {"hidden_cycles": 3000, "frames_lost": 4}),
            ],
        )
    )
    hard = fabric_day.per_event(
        _campaign(tmp_path / "h", [_record(0, {"ghost_cycles": 50}, {"ghost_cycles": 10**7}, lasts=True)]), "hard"
    )
    day = fabric_day.compose(flaps, hard, 1800.0, 48.0)
    hz = fabric_day.CLOCK_MHZ * 1e6
    assert day["oae"]["ghost up/down"]["per_day"] == pytest.approx((1800 * 200 + 48 * 50) / hz)
    assert day["ltssm"]["ghost up/down"]["per_day"] == pytest.approx(48 * 10**7 / hz)
    assert day["ltssm"]["hidden"]["per_day"] == pytest.approx(1800 * 2000 / hz)
    # Unusable time is the flaps' alone: a hard failure's lasts until a repair, not modelled.
    hard["ltssm"]["unusable_cycles"] = [10**9]
    assert fabric_day.compose(flaps, hard, 1800.0, 48.0)["ltssm"]["unusable"]["per_day"] == 0
    assert day["ltssm"]["frames lost"]["per_day"] == 1800 * 3 and day["ltssm"]["frames lost"]["unit"] == "frames"
    # One hard-failure run: its mean has no interval, and neither has the day's figure.
    assert math.isinf(day["oae"]["ghost up/down"]["ci"])
    alone = fabric_day.compose(flaps, None, 1800.0, 0.0)
    assert alone["oae"]["ghost up/down"]["per_day"] == pytest.approx(1800 * 200 / hz)
    # Frames lost 2 and 4: a standard error of 1, so 1.96 a flap.
    assert alone["ltssm"]["frames lost"] == {"per_day": 1800 * 3, "ci": pytest.approx(1800 * 1.96), "unit": "frames"}


def test_rates_from_table_1_or_from_a_fabrics_size():
    class Args:
        preset, links, optics_per_link, flap_mttf_hours, hard_mtbf_hours = "2025", None, 2, 3e5, 1e7

    flaps, hard, _ = fabric_day.rates(Args)
    assert (flaps, hard) == (86_400 / 48, 48)
    Args.links = 5_000_000
    flaps, hard, said = fabric_day.rates(Args)
    assert flaps == pytest.approx(1e7 * 24 / 3e5) and hard == pytest.approx(1e7 * 24 / 1e7)
    assert "5,000,000 links" in said


@pytest.mark.parametrize(
    "records, says",
    [
        (None, "does not exist"),
        ([], "holds no run"),
        ([_record(0, {}, {}, ["oae: frames_lost 1"])], "broke a guarantee"),
        ([{"run": 0, "kinds": "cut", "rows": {"oae-golden": {}}, "problems": []}], "not a campaign of the pair"),
    ],
)
def test_a_campaign_that_gives_no_figure_is_refused(records, says, tmp_path, capsys):
    directory = tmp_path / "c"
    if records is not None:
        _campaign(directory, records)
    with pytest.raises(SystemExit) as e:
        fabric_day.main(["--flaps", str(directory)])
    assert e.value.code == 2 and says in capsys.readouterr().err


def test_the_command_prints_the_day_and_its_assumptions(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(fabric_day, "REPORT", tmp_path / "day.json")
    flaps = _campaign(tmp_path / "f", [_record(k, {"ghost_cycles": 20 + k}, {"hidden_cycles": 900}) for k in range(5)])
    assert fabric_day.main(["--flaps", str(flaps), "--preset", "2024"]) == 0
    out = capsys.readouterr().out
    assert "120.0 flaps and 0.00 hard failures a day" in out and "assumptions: flaps and hard failures" in out
    report = json.loads((tmp_path / "day.json").read_text())
    assert report["flaps_per_day"] == 120 and report["assumptions"] == fabric_day.ASSUMPTIONS
    assert report["per_day"]["OAE"]["ghost up/down"]["per_day"] == pytest.approx(120 * 22 / 156.25e6)


def test_unusable_time_is_the_union_of_down_and_believed_down():
    # Actually down 10..50 after the origin; end A believes down 15..80, end B 20..60, and end B
    # believed down already before the origin until 5.
    raw = {
        "origin": 1000,
        "cycles": 500,
        "changes": [
            (900, 1, 0, 0),
            (1005, 1, 0, 1),
            (1015, 0, 0, 0),
            (1080, 0, 0, 1),
            (1020, 1, 0, 0),
            (1060, 1, 0, 1),
        ],
    }
    sc = Scenario("s", "", down=((10, 50),))
    assert experiment.unusable_cycles(sc, raw) == 5 + 70
    # A permanent cut: down from 10 to the run's end.
    assert experiment.unusable_cycles(Scenario("s", "", down=((10, None),)), {**raw, "changes": []}) == 490


@pytest.mark.verilator
def test_the_composition_agrees_with_a_direct_long_run_at_an_exaggerated_rate():
    """Per model and figure, the per-event means of single flaps times the rate against one run
    with flaps every 10^5 cycles on average: within their combined 95% intervals."""
    result = fabric_day.check(singles=10, flaps=12)
    assert result["flaps"] >= 5
    figures = result["figures"]
    # The OAE link notices every flap (its ghosts are not zero), the contrast link rides them out.
    assert figures["OAE"]["ghost down/up"]["direct"] > 0 and figures["PCIe-style"]["hidden"]["direct"] > 0
    for model, by_figure in figures.items():
        for name, f in by_figure.items():
            assert f["agree"], (model, name, f)


def test_campaigns_of_the_wrong_kind_or_two_sets_of_rates_are_refused(tmp_path, capsys):
    flaps = _campaign(tmp_path / "f", [_record(0, {}, {})])
    hard = _campaign(tmp_path / "h", [_record(0, {}, {}, lasts=True)])
    for argv, says in (
        (["--flaps", str(hard)], "run 0 has a fault that never heals: not a campaign of flaps"),
        (["--flaps", str(flaps), "--hard", str(flaps)], "run 0 has no fault that lasts: not a campaign of hard"),
        (["--flaps", str(flaps), "--preset", "2024", "--links", "1000"], "--preset and --links each set the rates"),
    ):
        with pytest.raises(SystemExit) as e:
            fabric_day.main(argv)
        assert e.value.code == 2 and says in capsys.readouterr().err, argv


def test_a_day_without_a_hard_campaign_says_it_counts_none(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(fabric_day, "REPORT", tmp_path / "day.json")
    flaps = _campaign(tmp_path / "f", [_record(k, {"ghost_cycles": 10}, {"ghost_cycles": 20}) for k in range(2)])
    assert fabric_day.main(["--flaps", str(flaps)]) == 0
    assert "0.00 hard failures a day" in capsys.readouterr().out
    assert "no hard failures counted" in json.loads((tmp_path / "day.json").read_text())["rates"]
