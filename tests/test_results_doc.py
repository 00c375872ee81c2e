"""docs/RESULTS.md is rendered from the JSON reports: tables, numbers in the prose, missing reports."""

import json
import os

import pytest

from sim.tools import results_doc


def _row(name, link, **values):
    row = {
        "name": name,
        "link": link,
        "detection_cycles": None,
        "ghost_cycles": 0,
        "ghost_cycles_down_while_up": 0,
        "hidden_cycles": 0,
        "frames_lost": 0,
        "frames_duplicated": 0,
        "frames_corrupted": 0,
        "frames_undelivered_at_end": 0,
        "goodput": 0.5,
        "tokens_lost": 0 if link == "oae" else None,
        "tokens_duplicated": 0 if link == "oae" else None,
    }
    if link == "ltssm":
        row.update(completer_detection_cycles=None, completer_ghost_cycles=0, completer_ghost_cycles_down_while_up=0)
    row.update(values)
    return row


EXPERIMENT = {
    "clock_mhz": 156.25,
    "latency": 16,
    "seed": 7,
    "seconds": 12.5,
    "scenarios": [
        _row("cut_both", "oae", detection_cycles=13, ghost_cycles=26, frames_undelivered_at_end=37, goodput=0.0),
        _row("cut_both", "ltssm", detection_cycles=7_812_500, ghost_cycles=15_625_000, frames_undelivered_at_end=5),
        _row("cut_ab", "oae", detection_cycles=31, ghost_cycles=40),
        _row("cut_ab", "ltssm", detection_cycles=9_375_000, ghost_cycles=18_000_000),
        _row("flap_1us", "oae", detection_cycles=13, ghost_cycles=20, ghost_cycles_down_while_up=500),
        _row("flap_1us", "ltssm", hidden_cycles=156),
        _row("ber_1e-6", "oae", ghost_cycles_down_while_up=1_234, goodput=0.861),
        _row("ber_1e-6", "ltssm", goodput=0.75),
        _row("ber_1e-4", "oae", ghost_cycles_down_while_up=60_000, goodput=0.71),
        _row("ber_1e-4", "ltssm", goodput=0.069),
        _row("gray_data", "oae", detection_cycles=2_000, ghost_cycles=900),
        _row("gray_data", "ltssm", ghost_cycles=1_000, completer_detection_cycles=1_562_500),
    ],
}

TRIANGLE = {
    "model": "golden",
    "latency": 8,
    "seed": 1,
    "load": 0.04,
    "scenarios": [
        {
            "scenario": scenario,
            "description": f"{scenario} here",
            "suspicion_cycles": 11,
            "verdicts": [
                {"link": 0, "verdict": verdict, "subject": 1, "cycles_at_node": {"0": 141, "1": 142, "2": 81}}
            ],
            "verdict_cycles_max": 142,
            "disagreement_cycles": 61,
            "verdict_bound_cycles": 177,
            "ghost": {"up_while_down": worst + 1, "worst_up_while_down": worst, "unseen_events": 0},
            "frames_lost": 0,
            "frames_failed_over": 3,
            "frames_sent_again": 9,
            "duplicates_dropped": dups,
            "tokens_unaccounted": 0,
            "goodput_during": 0.0321,
            "offered": 0.04,
            "failover_goodput": 0.0399,
            "tables_agree": True,
        }
        for scenario, verdict, worst, dups in (
            ("cut_both", "LINK_DOWN", 30, 24),
            ("partition", "UNREACHABLE", 40, 389),
            ("relay_death", "LINK_DOWN", 3_210, 17),
        )
    ],
}


TRIANGLE_RTL = {
    "model": "rtl",
    "latency": 8,
    "seed": 1,
    "load": 0.04,
    "scenarios": [
        {
            "scenario": scenario,
            "description": f"{scenario} here",
            "model": "rtl",
            "suspicion_cycles": 11,
            "verdicts": [{"link": 0, "verdict": verdict, "subject": 1, "cycles_at_node": at}],
            "verdict_cycles_max": max(at.values()),
            "disagreement_cycles": max(at.values()) - min(at.values()),
            "verdict_bound_cycles": 195,
            "ghost": {"up_while_down": 115, "worst_up_while_down": 93, "unseen_events": 0},
            "frames_lost": 0,
            "duplicates": 0,
            "flows_cycles": flows,
            "tokens_unaccounted": tokens,
            "tokens": 344,
        }
        for scenario, verdict, at, flows, tokens in (
            ("cut_both", "LINK_DOWN", {"0": 154, "1": 154, "2": 92}, 388, 0),
            ("node_death", "NODE_DOWN", {"0": 77, "2": 141}, None, 3),
        )
    ],
}


def _contrast_row(scenario, fabric, detect, agreed, flows, lost, reordered, ghost, verdict=None):
    return {
        "scenario": scenario,
        "fabric": fabric,
        "description": f"{scenario} here",
        "detect_cycles": detect,
        "agreed_cycles": agreed,
        "flows_cycles": flows,
        "frames_lost": lost,
        "duplicates": 0,
        "reordered": reordered,
        "ghost": {"up_while_down": ghost, "down_while_up": 7},
        "verdict": verdict,
    }


FABRIC_CONTRAST = {
    "model": "golden",
    "latency": 8,
    "seed": 1,
    "load": 0.01,
    "time_scale": "1/64",
    "horizon": 122_086,
    "scenarios": [
        _contrast_row("link_cut_failover", "oae", 11, 81, 300, 0, 0, 103, "LINK_DOWN(0)"),
        _contrast_row("link_cut_failover", "pcie", 117_212, 117_212, 117_250, 1, 2, 234_424),
        _contrast_row("node_death", "oae", 12, 90, None, 0, 0, 200, "NODE_DOWN(1)"),
        _contrast_row("node_death", "pcie", 23_000, 117_300, None, 0, 0, 140_000),
    ],
}


def _with_verdicts(report):
    from sim.fabric_contrast import fabric_verdicts

    return {**report, "belief_limit_cycles": 16, "verdicts": fabric_verdicts(report["scenarios"], 16)}


BENCH = {
    "channel": {"latency_cycles": 16},
    "goodput_vs_ber": {
        "digest": {"0": 0.8631, "1e-06": 0.8601},
        "full": {"0": 0.457, "1e-06": 0.455},
        "digest_go_back_n": {"0": 0.863, "1e-06": 0.8591},
    },
    "rtl_goodput_vs_ber": {"digest": {"0": 0.8632, "1e-06": 0.8622}, "full": {"0": 0.4571, "1e-06": 0.4552}},
    "goodput_vs_ber_bounds": {"digest": {"1e-06": {"go_back_n": 0.86, "selective": 0.8623}}},
    "goodput_vs_ber_targets_digest": {"1e-06": 0.85},
    "goodput_vs_latency": {"4": {"window": 6, "goodput": 0.8301, "replay_bytes": 384}},
    "verilator_cpp_link_cycles_per_s": 645_123,
    "golden_link_cycles_per_s": 45_200,
    "ratios": {"verilator_over_pysim": 516.8},
    "rtl_verdict_cycles_max": 1_190,
    "rtl_verdict_bound_cycles": 1_195,
    "rtl_failover_cycles_max": 173,
    "rtl_failover_bound_cycles": 361,
    "campaign_runs": 8,
    "campaign_runs_per_s_1_worker": 0.123,
    "campaign_runs_per_s_2_workers": 0.234,
    "campaign_2_over_1_workers": 1.9,
}

SYNTH = {
    "device": "LFE5UM5G-85F-8BG381",
    "target_mhz": 156.25,
    "components": {
        "rlfd": {
            "luts": 56,
            "ffs": 20,
            "brams": 0,
            "distributed_ram": 0,
            "fmax_mhz": 271.43,
            "meets_target": True,
            "headroom": True,
            "fmax_by_seed": {"1": 271.43},
        },
        "link_core": {
            "luts": 7149,
            "ffs": 4418,
            "brams": 0,
            "distributed_ram": 828,
            "fmax_mhz": 152.54,
            "meets_target": False,
            "fmax_by_seed": {"1": 143.61, "2": 146.4, "3": 152.54},
        },
    },
}


def _write(directory, **reports):
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in reports.items():
        (directory / f"{name}.json").write_text(json.dumps(data))
    return directory


def _table_row(text, first_cell):
    """The cells of the Markdown table row whose first cell is ``first_cell``."""
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] == first_cell:
            return cells
    raise AssertionError(f"no table row {first_cell!r}")


def _column(text, first_cell, title):
    """The cell in column ``title`` of the row ``first_cell``, from the table holding that row."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] == first_cell:
            start = i
            while lines[start - 1].startswith("|"):
                start -= 1
            head = [c.strip() for c in lines[start].strip().strip("|").split("|")]
            return cells[head.index(title)]
    raise AssertionError(f"no table row {first_cell!r}")


@pytest.fixture
def full(tmp_path):
    return results_doc.render(
        _write(
            tmp_path / "report",
            report=EXPERIMENT,
            triangle=TRIANGLE,
            fabric_contrast=FABRIC_CONTRAST,
            bench=BENCH,
            synth=SYNTH,
        )
    )


def test_experiment_cells(full):
    assert _column(full, "`cut_both`", "detection OAE") == "13"
    assert _column(full, "`cut_both`", "detection PCIe-style") == "7,812,500 (50 ms)"
    assert _column(full, "`cut_both`", "ghost up while down") == "26 / 15,625,000"
    assert _column(full, "`cut_both`", "undelivered") == "37 / 5"
    assert _column(full, "`flap_1us`", "detection PCIe-style") == "never"
    assert _column(full, "`flap_1us`", "hidden") == "0 / 156"
    assert _column(full, "`ber_1e-6`", "detection OAE") == "-"
    assert _column(full, "`ber_1e-4`", "goodput") == "0.710 / 0.069"
    assert _column(full, "`gray_data`", "completer alive") == "1,562,500 / 0"


def test_experiment_prose_numbers_come_from_the_report(full):
    assert "(13 cycles, 83 ns, `cut_both`)" in full
    assert "(31 cycles, `cut_ab`)" in full
    assert "Bit errors from 1e-6" in full and "1,234 cycles believed down at 1e-6" in full
    assert "about 250 cycles per end believed down" in full
    assert "900 cycles believed up while down over both ends, against 1,000 for the contrast link's DL_Up" in full
    assert "after 10 ms, the completion timeout" in full
    assert "seed 7" in full
    assert "No frame was duplicated or corrupted" in full


def test_a_sentence_without_its_numbers_is_left_out(tmp_path):
    partial = dict(EXPERIMENT, scenarios=[r for r in EXPERIMENT["scenarios"] if r["name"] != "cut_ab"])
    text = results_doc.render(_write(tmp_path / "r", report=partial))
    assert "`cut_ab`" not in text
    assert "A cut is seen by the OAE link" not in text  # it quotes cut_ab's figure
    assert "A gray failure" in text


def test_integrity_names_a_duplicated_frame(tmp_path):
    rows = [dict(r) for r in EXPERIMENT["scenarios"]]
    rows[0]["frames_duplicated"] = 2
    text = results_doc.render(_write(tmp_path / "r", report=dict(EXPERIMENT, scenarios=rows)))
    assert "`cut_both` oae frames_duplicated = 2" in text
    assert "No frame was duplicated" not in text


def _section(text, title):
    return text.split(f"\n## {title}")[1].split("\n## ")[0]


def test_triangle_cells_and_prose(full):
    full = _section(full, "The fabric on the golden model")
    row = _table_row(full, "`relay_death`")
    assert _column(full, "`relay_death`", "worst") == "3,210"
    assert _column(full, "`partition`", "dups") == "389"
    assert _column(full, "`cut_both`", "verdict at node") == "0:141 1:142 2:81"
    assert row[1] == "relay_death here"
    assert "third node 81 cycles after the fault and at both ends 142 cycles" in full
    assert "(177, the bound column)" in full
    assert _column(full, "`partition`", "first verdict") == "UNREACHABLE(1)"
    assert _column(full, "`cut_both`", "first verdict") == "LINK_DOWN(0)"
    assert "17 to 24 per scenario whose first verdict is LINK_DOWN and 389 in the partition" in full
    assert "(3,211 cycles, the ghost column)" in full
    assert "0.0399 of the 0.04 offered" in full
    assert "The disagreement window is 61 cycles in every scenario" in full


def test_triangle_rtl_cells_and_prose(tmp_path):
    text = _section(results_doc.render(_write(tmp_path / "r", triangle_rtl=TRIANGLE_RTL)), "The fabric in RTL")
    assert _column(text, "`cut_both`", "verdict at node") == "0:154 1:154 2:92"
    assert _column(text, "`node_death`", "first verdict") == "NODE_DOWN(1)"
    assert _column(text, "`cut_both`", "flows") == "388"
    assert _column(text, "`node_death`", "flows") == "-"
    assert _column(text, "`node_death`", "tokens") == "3"
    assert "the slowest at 154 cycles (`cut_both`) against 195" in text
    assert "through the third node, 388 cycles after it" in text
    assert "No frame is lost or delivered twice in any scenario." in text
    mesh = {**TRIANGLE_RTL, "scenarios": [{**TRIANGLE_RTL["scenarios"][0], "verdict_bound_cycles": None}]}
    text = _section(results_doc.render(_write(tmp_path / "mesh", triangle_rtl=mesh)), "The fabric in RTL")
    assert "against" not in text.split("### What it shows")[1]  # no bound, no sentence of it
    late = {**TRIANGLE_RTL, "scenarios": [{**TRIANGLE_RTL["scenarios"][0], "verdict_cycles_max": 200}]}
    text = _section(results_doc.render(_write(tmp_path / "late", triangle_rtl=late)), "The fabric in RTL")
    assert "A first verdict came later than its bound in cut_both." in text


def test_fabric_contrast_cells_and_prose(full):
    text = _section(full, "The fabric against a PCIe-style fabric")
    rows = [line for line in text.splitlines() if line.startswith("| `link_cut_failover`")]
    assert rows[0].split("|")[3:13] == [
        " OAE ",
        " 11 ",
        " 81 ",
        " 300 ",
        " 0 ",
        " 0 ",
        " 0 ",
        " 103 ",
        " 7 ",
        " LINK_DOWN(0) ",
    ]
    assert rows[1].split("|")[3:10] == [" PCIe-style ", " 117,212 ", " 117,212 ", " 117,250 ", " 1 ", " 0 ", " 2 "]
    assert "contrast timers at 1/64 (horizon 122,086 cycles)" in text
    assert "every node after 81 (LINK_DOWN(0)); its traffic flowed round after 300" in text
    assert "until DL_Down, 117,212 cycles at the scale run" in text
    assert "for 303 cycles in the OAE fabric and 374,424 in the contrast fabric at the scale run" in text
    assert "the OAE fabric lost 0 frames and the contrast fabric 1" in text
    assert "the contrast fabric delivered 2 out of order" in text
    assert "relay_death" not in text.split("### What it shows")[1]  # no row: no sentence
    assert "Which fabric is better" not in text  # a report from before the verdicts


def test_fabric_contrast_verdict_row(tmp_path):
    text = results_doc.render(_write(tmp_path / "r", fabric_contrast=_with_verdicts(FABRIC_CONTRAST)))
    text = _section(text, "The fabric against a PCIe-style fabric")
    assert "figures of cycles when within 16 cycles (the belief limit)" in text
    text = text.split("Which fabric is better")[1]
    assert _table_row(text, "`link_cut_failover`")[1:] == ["OAE", "OAE", "OAE", "OAE", "=", "OAE", "OAE", "="]
    assert _column(text, "`node_death`", "flows") == "="


def test_bench_cells(full):
    assert _column(full, "10⁻⁶", "digest (golden)") == "0.860"
    assert _column(full, "10⁻⁶", "digest (RTL)") == "0.862"
    assert _column(full, "10⁻⁶", "bound, selective repeat") == "0.862"
    assert _column(full, "10⁻⁶", "target") == "0.850"
    assert _column(full, "10⁻⁶", "full echo (golden / RTL)") == "0.455 / 0.455"
    assert _column(full, "0", "target") == "-"
    assert _column(full, "goodput", "4") == "0.830"
    assert _column(full, "replay memory per class", "4") == "384 B"
    assert _table_row(full, "Verilator, C++ loop, no Python")[1:] == ["`verilator_cpp_link_cycles_per_s`", "645,123"]
    assert _table_row(full, "`verilator_over_pysim`")[1] == "516.8"
    assert _table_row(full, "RTL fabric: slowest verdict over the single faults / bound (cycles)")[2] == "1,190 / 1,195"
    assert _table_row(full, "RTL fabric: slowest failover over the cuts / bound (cycles)")[2] == "173 / 361"
    assert "8 runs of `scenarios/campaign/triangle_day.toml`" in full
    assert "0.123 runs per second with 1 worker, 0.234 with 2" in full and "1.9 times as many" in full


def test_synth_cells(full):
    assert _column(full, "link_core", "Fmax MHz") == "152.5"
    assert _column(full, "link_core", "meets 156.25") == "**no**"
    assert _column(full, "link_core", "Fmax by seed") == "1: 143.6, 2: 146.4, 3: 152.5"
    assert _column(full, "link_core", "headroom") == "-"  # a report from before the key
    assert _column(full, "rlfd", "headroom") == "yes"
    assert _column(full, "rlfd", "LUT4") == "56"
    assert _column(full, "rlfd", "DPR16X4") == "0"


def test_a_component_that_does_not_fit_shows_its_use_of_the_device(tmp_path):
    node = {
        "luts": 72_145,
        "ffs": 27_601,
        "brams": 310,
        "distributed_ram": 1_914,
        "utilisation": {"TRELLIS_COMB": [92_839, 83_640], "DP16KD": [310, 208]},
        "fits": False,
        "fmax_mhz": None,
        "meets_target": False,
        "headroom": False,
        "fmax_by_seed": {},
        "critical_path_by_seed": {},
    }
    report = {**SYNTH, "components": {**SYNTH["components"], "node_axis": node}}
    text = _section(results_doc.render(_write(tmp_path / "r", synth=report)), "Synthesis for the ECP5")
    assert _column(text, "node_axis", "logic cells") == "92,839 (110%)"
    assert _column(text, "node_axis", "fits") == "**no**" and _column(text, "node_axis", "Fmax MHz") == "-"
    assert _column(text, "rlfd", "fits") == "-"  # a report from before the key
    assert "`node_axis` 92,839 of the 83,640 logic cells (110%), 310 of the 208 DP16KD (149%)" in text


def test_a_component_placed_and_not_routed_shows_the_estimate_and_its_worst_path(tmp_path):
    node = {
        "luts": 45_497,
        "ffs": 17_659,
        "brams": 184,
        "distributed_ram": 1_368,
        "utilisation": {"TRELLIS_COMB": [60_709, 83_640], "DP16KD": [184, 208]},
        "fits": True,
        "routed": False,
        "fmax_mhz": None,
        "placed_estimate_mhz": 23.99,
        "meets_target": False,
        "headroom": False,
        "fmax_by_seed": {},
        "critical_path_by_seed": {},
        "worst_paths": [{"from": "port0.q", "to": "outbound.mem", "clock": "clk", "delay_ns": 41.692, "cells": 60}],
    }
    report = {**SYNTH, "components": {**SYNTH["components"], "node_triangle": node}}
    text = _section(results_doc.render(_write(tmp_path / "r", synth=report)), "Synthesis for the ECP5")
    assert _column(text, "node_triangle", "Fmax MHz") == "~24.0" and _column(text, "node_triangle", "fits") == "yes"
    assert _column(text, "rlfd", "Fmax MHz") == "271.4"
    assert "`node_triangle` about 24.0 MHz, its worst path 41.7 ns from `port0.q` to `outbound.mem` through 60" in text
    assert "Placed at seed 1" not in _section(results_doc.render(_write(tmp_path / "s", synth=SYNTH)), "Synthesis for")


def test_the_worst_path_at_each_seed_of_a_component_without_headroom(tmp_path):
    def path(start, ns):
        return {"from": start, "to": "framer.occupancy0", "logic_levels": 7, "delay_ns": ns}

    def row(headroom):
        return dict(
            SYNTH["components"]["rlfd"],
            headroom=headroom,
            fmax_by_seed={"1": 158.8, "2": 150.1},
            critical_path_by_seed={"1": path("q", 6.3), "2": path("training.phase", 6.66)},
        )

    synth = dict(SYNTH, components={"framer": row(True), "link_core": row(False)})
    text = results_doc.render(_write(tmp_path / "r", synth=synth))
    section = text.split("worst path at each seed")[1].split("\n## ")[0]
    assert "| link_core | 2 | 6.66 | `training.phase` | `framer.occupancy0` | 7 |" in section
    assert "| framer |" not in section  # it has headroom: nothing to explain
    assert "worst path at each seed" not in results_doc.render(_write(tmp_path / "s", synth=SYNTH))


VERDICT_SWEEP = {
    "model": "golden",
    "seed": 3,
    "load": 0.04,
    "settings": [
        {
            "setting": "all at 8",
            "latency": {"0": 8, "1": 8, "2": 8},
            "verdict_cycles_max": 171,
            "verdict_bound": 201,
            "failover_cycles_max": 1_210,
            "failover_bound": 373,
            "runs": [],
        },
        {
            "setting": "cut link at 30, arbiter's at 2",
            "latency": {"0": 30, "1": 2, "2": 2},
            "verdict_cycles_max": None,
            "verdict_bound": 185,
            "failover_cycles_max": None,
            "failover_bound": 297,
            "runs": [],
        },
    ],
}


def test_verdict_sweep_cells(tmp_path):
    text = _section(results_doc.render(_write(tmp_path / "r", verdict_sweep=VERDICT_SWEEP)), "Verdict and failover")
    assert _column(text, "all at 8", "verdict / bound") == "171 / 201"
    assert _table_row(text, "all at 8")[3] == "85%"
    assert _table_row(text, "all at 8")[5] == "324%, over"
    assert _column(text, "all at 8", "failover / bound") == "1,210 / 373"
    assert _column(text, "cut link at 30, arbiter's at 2", "latency (cycles, one way)") == "0-1 (cut) 30, 1-2 2, 0-2 2"
    assert _column(text, "cut link at 30, arbiter's at 2", "verdict / bound") == "never / 185"
    assert _table_row(text, "cut link at 30, arbiter's at 2")[3] == "-"
    assert "seed 3" in text


def test_a_missing_report_names_its_command(tmp_path):
    text = results_doc.render(_write(tmp_path / "r", report=EXPERIMENT))
    for name, (make, module) in results_doc.REPORTS.items():
        if name == "report.json":
            continue
        section = text.split(f"Report `build/report/{name}`")[1].split("\n## ")[0]
        assert f"`build/report/{name}` is not there. `{make}` (or `{module}`) writes it" in section
        assert "|" not in section  # no table, no numbers
    assert "is not there" not in text.split("## The fabric")[0]


def test_an_unreadable_report_counts_as_missing(tmp_path):
    directory = _write(tmp_path / "r")
    (directory / "bench.json").write_text("{not json")
    assert "`build/report/bench.json` is not there. `make bench`" in results_doc.render(directory)


def test_each_section_says_when_its_report_was_written(tmp_path):
    directory = _write(tmp_path / "r", triangle=TRIANGLE)
    os.utime(directory / "triangle.json", (0, 86_400 * 365))
    assert "written by `python -m sim.triangle` (`make sweeps`) on 1971-01-01 00:00 UTC." in results_doc.render(
        directory
    )


def test_check_detects_a_stale_file(tmp_path, capsys):
    directory = _write(tmp_path / "r", report=EXPERIMENT)
    out = tmp_path / "RESULTS.md"
    args = ["--report-dir", str(directory), "--out", str(out)]
    assert results_doc.main([*args, "--check"]) == 1  # not written yet
    assert results_doc.main(args) == 0
    assert results_doc.main([*args, "--check"]) == 0
    _write(directory, triangle=TRIANGLE)  # a new report: the file is stale
    assert results_doc.main([*args, "--check"]) == 1
    assert "out of date" in capsys.readouterr().err
    out.write_text(out.read_text() + "edited by hand\n")
    results_doc.main(args)
    assert "edited by hand" not in out.read_text()


def test_a_section_of_an_earlier_report_is_kept_when_its_report_is_missing(tmp_path, capsys):
    out = tmp_path / "RESULTS.md"
    both = _write(tmp_path / "both", report=EXPERIMENT, synth=SYNTH)
    args = ["--out", str(out)]
    assert results_doc.main(["--report-dir", str(both), *args]) == 0
    synth = results_doc.rendered_section(out.read_text(), "synth.json")
    assert synth.startswith("## Synthesis for the ECP5") and "| link_core |" in synth
    only_experiment = _write(tmp_path / "one", report=EXPERIMENT)
    assert results_doc.main(["--report-dir", str(only_experiment), *args]) == 0
    assert "no build/report/synth.json: its section of RESULTS.md is kept" in capsys.readouterr().out
    assert results_doc.rendered_section(out.read_text(), "synth.json") == synth
    assert results_doc.main(["--report-dir", str(only_experiment), *args, "--check"]) == 0
    # A note of a missing report is not a section to keep; --fresh drops a kept one.
    assert results_doc.rendered_section(out.read_text(), "bench.json") is None
    assert results_doc.main(["--report-dir", str(only_experiment), *args, "--fresh"]) == 0
    assert results_doc.rendered_section(out.read_text(), "synth.json") is None
    assert "`build/report/synth.json` is not there" in out.read_text()
