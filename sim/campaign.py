"""``python -m sim.campaign FILE --runs N``: a Monte Carlo fault campaign. Draws N fault
schedules from the scenario file's distributions (docs/SCENARIOS.md; run k's seed from
``--seed`` and k), runs each, checks each, and reports the distributions.

What runs (:func:`model_for`): a pair on the side-by-side experiment's Verilated links, the OAE
pair and the PCIe-style pair on the same channel and schedule (sim/experiment.py); a triangle
whose faults the fabric loops drive (cuts, partitions, node deaths; one latency, no bit errors)
on the Verilated OAE and PCIe-style triangles, as `make sim`'s fabric rows (sim/fabric_contrast.py;
the contrast timers at 1/64); any other fabric, and every run with a seeded defect, on the golden
OAE fabric (sim/triangle.py). Each run is checked: on the OAE pair nothing lost, duplicated or
corrupted and no token lost or duplicated, on the contrast pair nothing duplicated or corrupted
(losing frames is how that link fails); on the OAE triangle in RTL nothing lost, duplicated,
reordered or corrupted between live nodes (on the contrast triangle nothing corrupted); on the
golden fabric the scoreboard's order and uniqueness, nothing lost between live nodes, every
token delivered or returned unless a node died, a single dead node named by a verdict, and on a
triangle a first cut that outlasts PROTOCOL.md 10.8's verdict bound decided within it.
A run that breaks a guarantee, or crashes, is saved as a scenario file of its fixed schedule
beside a record with its seed, model and a one-line replay command, and the campaign goes on.

Runs go to a ``dask.distributed`` cluster: a LocalCluster of ``--workers`` processes (default:
one per core), or the cluster of ``--scheduler ADDRESS``, whose workers need this repository
(each builds the Verilated designs it runs into its own build/, keyed by the designs' digests).
Results stream to ``results.jsonl`` in the campaign's directory as runs finish; a campaign run
again skips the runs already there (resume). At the end: per group of runs with the same fault
kinds, per model, the median, p99 and max of detection and of ghost cycles of both signs, as a
table, ``summary.json`` and ``campaign.png``.
"""

import argparse
import hashlib
import json
import os
import random
import sys
import time
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from sim.scenario_file import Fault, FaultRule, ScenarioFileError, dumps, load, loads
from sim.tools.cli import command_help
from sim.tools.verilog import BUILD

CAMPAIGNS = BUILD / "campaign"

# Seeded defects of the golden fabric, to show that a campaign finds what breaks (and that its
# failures replay): name -> what it breaks. Applied around each run in the worker that runs it.
MUTANTS = {
    "no_rewind": "an origin never sends again after a route change (PROTOCOL.md 10.7): frames die with a relay",
}

# What a run's row keeps, per model kind: (key in the row, name in the summary).
PAIR_METRICS = (
    ("detection_cycles", "detection"),
    ("ghost_cycles", "ghost up/down"),
    ("ghost_cycles_down_while_up", "ghost down/up"),
    # Down time no belief noticed and nothing was lost by (a flap ridden out unseen).
    ("hidden_cycles", "hidden"),
    # Cycles the link carried no user traffic: down, or believed down at either end.
    ("unusable_cycles", "unusable"),
    # From the first fault until both ends got a frame handed in after it.
    ("flows_cycles", "flowing again"),
)
FABRIC_METRICS = (
    # From the first fault to the slowest node told of the first verdict.
    ("verdict_cycles_max", "detection"),
    ("ghost_up_while_down", "ghost up/down"),
    ("ghost_down_while_up", "ghost down/up"),
    ("unseen_cycles", "hidden"),
)
RTL_FABRIC_METRICS = (
    # Until every live node's belief of the failed links was down (its table, or a PCIe host's DL_Down).
    ("agreed_cycles", "detection"),
    ("ghost_up_while_down", "ghost up/down"),
    ("ghost_down_while_up", "ghost down/up"),
    # Until both ends of a failed link get a frame made after the fault (round the third node).
    ("flows_cycles", "flowing again"),
    # Down time no belief followed and that lost nothing (a fault shorter than a detection).
    ("unseen_cycles", "hidden"),
)
LABELS = {"oae": "oae", "ltssm": "pcie"}  # the pair experiment's link keys, as the tables name them
METRICS = {
    "oae": PAIR_METRICS,
    "ltssm": PAIR_METRICS,
    "oae-golden": FABRIC_METRICS,
    "oae-rtl": RTL_FABRIC_METRICS,
    "pcie-rtl": RTL_FABRIC_METRICS,
}
# What runs a scenario file: the Verilated pairs, the Verilated fabrics (a triangle with the
# faults their loops drive), or the golden fabric (any other fabric, and every seeded defect).
MODELS = {
    "pairs": "the Verilated OAE and PCIe-style pairs",
    "rtl-fabrics": "the Verilated OAE and PCIe-style triangles",
    "golden-fabric": "the golden OAE fabric",
}


def horizon_cycles() -> int:
    """The cycles of a ``horizon`` in a campaign's file: the contrast fabric's time to find a dead
    link with its timers at the scale the RTL triangles are built with (sim/fabric_contrast.py)."""
    from golden.pcie_params import PcieParams
    from sim.fabric_contrast import horizon
    from sim.harness.pcie import TEST_SCALE

    return horizon(PcieParams(**TEST_SCALE))


def _read(text: str, path: str):
    return loads(text, path, horizon_cycles())


def run_seed(seed: int, index: int) -> int:
    return random.Random(f"campaign/{seed}/{index}").randrange(1 << 31)


def fixed(spec, faults, name: str):
    """``spec`` with the drawn schedule ``faults`` as its fixed one, under ``name``."""
    return replace(spec, name=name, rules=tuple(FaultRule(f) for f in faults))


@contextmanager
def _mutated(mutant: str | None):
    if mutant is None:
        yield
        return
    if mutant not in MUTANTS:
        raise ValueError(f"mutant must be one of {', '.join(MUTANTS)}, not {mutant!r}")
    from golden.fabric.outbound import Outbound

    rewind = Outbound.rewind
    Outbound.rewind = lambda self, table_up, port_up: 0
    try:
        yield
    finally:
        Outbound.rewind = rewind


def model_for(spec, mutant: str | None = None) -> str:
    """The MODELS key that runs ``spec``: Verilated where the design exists, else golden."""
    if spec.topology == "pair":
        return "pairs"
    if mutant is None:
        from sim.fabric_contrast import check_rtl_spec

        try:
            check_rtl_spec(spec)
            return "rtl-fabrics"
        except ScenarioFileError:
            pass
    return "golden-fabric"


def run_one(text: str, path: str, index: int, seed: int, mutant: str | None = None, model: str | None = None) -> dict:
    """Run ``index`` of the campaign of scenario file ``text`` (read from ``path``) with ``seed``
    on ``model`` (default :func:`model_for`'s): its record (schedule, rows per model, problems).
    Runs in a Dask worker."""
    spec = _read(text, path)
    model = model or model_for(spec, mutant)
    faults = spec.schedule(seed)
    run = fixed(spec, faults, f"{spec.name}.{index}")
    record = {
        "run": index,
        "seed": seed,
        "model": model,
        "kinds": "+".join(sorted({f.kind for f in faults})) or "none",
        "faults": [_fault_dict(f) for f in faults],
        "rows": {},
        "problems": [],
    }
    started = time.monotonic()
    try:
        with _mutated(mutant):
            {"pairs": _run_pair, "rtl-fabrics": _run_rtl_fabrics, "golden-fabric": _run_fabric}[model](
                run, seed, record
            )
    except Exception as e:  # a crashed run is a finding, saved with the rest
        record["problems"].append(f"{type(e).__name__}: {e}")
    record["seconds"] = round(time.monotonic() - started, 2)
    return record


def _fault_dict(f: Fault) -> dict:
    return {k: v for k, v in vars(f).items() if v not in (None, ())}


def _run_pair(spec, seed, record):
    from sim import experiment

    sc = experiment.from_spec(spec, seed)
    for kind in experiment.LINKS:
        exe = experiment.build(kind, latency=sc.latency)
        row = experiment.measure(sc, kind, experiment.run(exe, sc, kind, seed))
        record["rows"][kind] = {k: row.get(k) for k in _PAIR_KEYS}
        broken = ["frames_duplicated", "frames_corrupted"]
        if kind == "oae":
            broken += ["frames_lost", "tokens_lost", "tokens_duplicated"]
        record["problems"] += [f"{kind}: {k} {row[k]}" for k in broken if row.get(k)]


_PAIR_KEYS = (
    "detection_cycles",
    "flows_cycles",
    "ghost_cycles",
    "ghost_cycles_down_while_up",
    "hidden_cycles",
    "unusable_cycles",
    "frames_lost",
    "frames_duplicated",
    "frames_corrupted",
    "tokens_lost",
    "tokens_duplicated",
    "goodput",
)


def _ghosts(totals: dict) -> dict:
    """A fabric row's ghost meter totals, as a campaign record keeps them."""
    return {
        "ghost_up_while_down": totals["up_while_down"],
        "ghost_down_while_up": totals["down_while_up"],
        "unseen_cycles": totals["unseen_cycles"],
    }


def _run_rtl_fabrics(spec, seed, record):
    from sim.fabric_contrast import run_spec_rtl

    for fabric in ("oae", "pcie"):
        row = run_spec_rtl(spec, seed, fabric)
        record["rows"][f"{fabric}-rtl"] = {
            "detect_cycles": row["detect_cycles"],
            "agreed_cycles": row["agreed_cycles"],
            "flows_cycles": row["flows_cycles"],
            **_ghosts(row["ghost"]),
            "frames_lost": row["frames_lost"],
            "duplicates": row["duplicates"],
            "reordered": row["reordered"],
            "verdict": row["verdict"],
        }
        if fabric == "oae":
            broken = [k for k in ("frames_lost", "duplicates", "reordered") if row[k]]
            record["problems"] += [f"oae-rtl: {k} {row[k]}" for k in broken]


def _run_fabric(spec, seed, record):
    from sim import triangle

    row = triangle.run_scenario(spec, seed=seed)
    record["rows"]["oae-golden"] = {
        "verdict_cycles_max": row["verdict_cycles_max"],
        "suspicion_cycles": row["suspicion_cycles"],
        **_ghosts(row["ghost"]),
        "frames_lost": row["frames_lost"],
        "frames_sent_again": row["frames_sent_again"],
        "tokens_unaccounted": row["tokens_unaccounted"],
        "goodput_during": row["goodput_during"],
    }
    if row["frames_lost"]:
        record["problems"].append(f"oae-golden: frames_lost {row['frames_lost']}")
    dead = {f["node"] for f in record["faults"] if f["kind"] == "node_death"}
    if len(dead) == 1:
        # One node dead, the others alive: they must agree on a verdict that names it (10.8).
        (node,) = dead
        named = [v for v in row["verdicts"] if v["verdict"] in ("NODE_DOWN", "UNREACHABLE") and v["subject"] == node]
        if not named:
            record["problems"].append(f"oae-golden: node {node} died and no verdict named it")
    if row["tokens_unaccounted"] and not dead:
        record["problems"].append(f"oae-golden: tokens_unaccounted {row['tokens_unaccounted']}")
    late = late_first_cut_verdict(spec, record["faults"], row["verdicts"])
    if late:
        record["problems"].append(f"oae-golden: {late}")


def late_first_cut_verdict(spec, faults: list, verdicts: list) -> str | None:
    """PROTOCOL.md 10.8's verdict bound, where a run holds the single fault it bounds: on a
    triangle with one latency and no bit errors, a first fault that is a cut, lasting past the
    bound with no other fault before the bound. Every node must then have adopted LINK_DOWN of the
    cut link within the bound of the cut (``verdicts`` as sim.triangle's row gives them, cycles
    from the first fault). The problem, or None (also when the run holds no such fault)."""
    from sim.fabric_bounds import triangle_bounds

    if spec.topology != "triangle" or len(set(spec.latency)) != 1 or any(spec.ber) or not faults:
        return None
    first, rest = faults[0], faults[1:]
    bound = triangle_bounds(spec.latency[0])["verdict"]
    length = first.get("length")  # a record leaves out what is None: a cut that lasts
    if first["kind"] != "cut" or (length is not None and length <= bound):
        return None
    if any(f["at"] < first["at"] + bound for f in rest):
        return None
    told = {
        int(n): c
        for v in verdicts
        if v["verdict"] == "LINK_DOWN" and v["link"] == first["link"]
        for n, c in v["cycles_at_node"].items()
        if 0 <= c <= bound
    }
    missing = sorted(set(range(spec.nodes)) - set(told))
    if not missing:
        return None
    return (
        f"link {first['link']} cut at {first['at']} for {length or 'good'} cycles and no LINK_DOWN of it "
        f"at node(s) {missing} within the verdict bound, {bound} cycles (PROTOCOL.md 10.8)"
    )


# --- The campaign's directory ------------------------------------------------------------------
class Store:
    """A campaign's directory: ``campaign.json`` (what it runs), ``results.jsonl`` (a record per
    finished run), ``failures/`` (per broken run, its fixed schedule and record)."""

    def __init__(self, directory: Path, text: str, path: Path, seed: int, mutant: str | None):
        self.dir, self.text, self.path, self.seed, self.mutant = directory, text, path, seed, mutant
        self.results = directory / "results.jsonl"
        self.identity = {
            "scenario_sha256": hashlib.sha256(text.encode()).hexdigest(),
            "seed": seed,
            "mutant": mutant,
        }

    def open(self) -> dict:
        """{run: record} of the runs already done; ValueError if the directory holds another
        campaign (another file, seed or mutant)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        meta = self.dir / "campaign.json"
        if meta.exists():
            held = json.loads(meta.read_text())
            if {k: held.get(k) for k in self.identity} != self.identity:
                raise ValueError(
                    f"{self.dir} holds a campaign of another scenario file, seed or mutant; "
                    "give --out another directory or remove it"
                )
        else:
            meta.write_text(json.dumps({**self.identity, "scenario_file": str(self.path)}, indent=1) + "\n")
        done = {}
        if self.results.exists():
            for line in self.results.read_text().splitlines():
                if line.strip():
                    record = json.loads(line)
                    done[record["run"]] = record
        return done

    def add(self, record: dict) -> Path | None:
        """Append ``record``; for a broken run, save its schedule and record; returns the record's
        file then."""
        with self.results.open("a") as out:
            out.write(json.dumps(record) + "\n")
        if not record["problems"]:
            return None
        failures = self.dir / "failures"
        failures.mkdir(exist_ok=True)
        spec = _read(self.text, str(self.path))
        faults = [
            Fault(**{**f, "directions": tuple(f.get("directions", ())), "ends": tuple(f.get("ends", ()))})
            for f in record["faults"]
        ]
        name = f"{spec.name}.{record['run']}"
        scenario = failures / f"{name}.toml"
        saved = failures / f"{name}.json"
        replay = f"python -m sim.campaign --replay {saved}"
        # The plain commands run the pair on its Verilated links and a fabric on the golden model;
        # a seeded defect, and the RTL triangles' build seed, only the replay has.
        plain = {
            "pairs": f"python -m sim.experiment --scenario-file {scenario} --seed {record['seed']}",
            "golden-fabric": f"python -m sim.triangle --scenario-file {scenario} --seed {record['seed']}",
        }
        command = replay if self.mutant else plain.get(record["model"], replay)
        scenario.write_text(
            dumps(
                spec,
                faults,
                name,
                f"Run {record['run']} of the campaign of {self.path} (seed {record['seed']}): "
                f"{'; '.join(record['problems'])}\nReplay: {command}",
            )
        )
        saved.write_text(
            json.dumps(
                {
                    **record,
                    "scenario_file": str(self.path),
                    "scenario_text": self.text,
                    "mutant": self.mutant,
                    "replay": replay,
                },
                indent=1,
            )
            + "\n"
        )
        return saved


# --- Summary -------------------------------------------------------------------------------------
def _quantiles(values: list) -> dict:
    values = sorted(values)
    if not values:
        return {"n": 0, "median": None, "p99": None, "max": None}
    pick = lambda q: values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))]  # noqa: E731
    return {"n": len(values), "median": pick(0.5), "p99": pick(0.99), "max": values[-1]}


def summarize(records: list) -> dict:
    """{group: {model: {metric: {n, median, p99, max}}}}: a group is the fault kinds of a run's
    schedule (``cut``, ``cut+gray``, ...); a metric that a run did not reach (a fault never
    detected) is left out of its distribution and counted under ``never``."""
    out = {}
    for r in records:
        for model, row in r["rows"].items():
            group = out.setdefault(r["kinds"], {}).setdefault(model, {name: [] for _, name in METRICS[model]})
            for key, name in METRICS[model]:
                group[name].append(row.get(key))
    return {
        g: {
            m: {
                name: {**_quantiles([v for v in vs if v is not None]), "never": sum(v is None for v in vs)}
                for name, vs in by_metric.items()
            }
            for m, by_metric in models.items()
        }
        for g, models in out.items()
    }


def table(summary: dict) -> str:
    lines = [
        f"{'faults':22s} {'model':11s} {'metric':14s} {'runs':>5} {'never':>5} {'median':>10} {'p99':>10} {'max':>10}"
    ]
    for group, models in sorted(summary.items()):
        for model, metrics in models.items():
            for name, q in metrics.items():
                cells = [("-" if q[k] is None else f"{q[k]:,}") for k in ("median", "p99", "max")]
                lines.append(
                    f"{group:22s} {LABELS.get(model, model):11s} {name:14s} {q['n'] + q['never']:>5} {q['never']:>5} "
                    + " ".join(f"{c:>10}" for c in cells)
                )
    return "\n".join(lines)


def plot(records: list, path: Path) -> Path:
    """Per metric, the distribution of every (fault kinds, model) over the runs (log scale)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    groups = sorted({(r["kinds"], m) for r in records for m in r["rows"]})
    names = list(dict.fromkeys(name for _, m in groups for _, name in METRICS[m]))
    fig, axes = plt.subplots(1, len(names), figsize=(4.5 * len(names), 0.5 * len(groups) + 2), squeeze=False)
    for ax, name in zip(axes[0], names):
        keys = {m: dict((n, k) for k, n in METRICS[m]).get(name) for _, m in groups}
        data = [
            [
                max(1, r["rows"][m][keys[m]])
                for r in records
                if r["kinds"] == g and m in r["rows"] and keys[m] and r["rows"][m].get(keys[m]) is not None
            ]
            for g, m in groups
        ]
        ax.boxplot(
            [d or [float("nan")] for d in data],
            orientation="horizontal",
            tick_labels=[f"{g} / {LABELS.get(m, m)}" for g, m in groups],
        )
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())  # labelled minor ticks overlap on a short range
        for y, d in enumerate(data, 1):
            if not d:  # no run reached it: say so where the box would be
                ax.text(0.02, y, "never", transform=ax.get_yaxis_transform(), va="center", fontsize=8, color="grey")
        ax.set_title(f"{name} (cycles)")
    fig.suptitle(f"{len(records)} runs (a zero is drawn at 1)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


# --- The command ---------------------------------------------------------------------------------
def _client(args):
    import logging

    from distributed import Client, LocalCluster

    if args.scheduler:
        return Client(args.scheduler), None
    cluster = LocalCluster(
        n_workers=args.workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
    )
    return Client(cluster), cluster


def _prebuild(model: str, spec) -> None:
    """Build the Verilated designs of ``model`` here, before the workers ask for them."""
    if model == "pairs":
        from sim import experiment

        for kind in experiment.LINKS:
            experiment.build(kind, latency=spec.latency[0])
    else:
        from sim.fabric_contrast import spec_executable

        for fabric in ("oae", "pcie"):
            spec_executable(spec, fabric)


def campaign(args, path: Path, out=print) -> int:
    text = path.read_text()
    spec = _read(text, str(path))
    store = Store(args.out or CAMPAIGNS / spec.name, text, path, args.seed, args.mutant)
    done = store.open()
    todo = [k for k in range(args.runs) if k not in done]
    model = model_for(spec, args.mutant)
    out(
        f"campaign {spec.name}: {args.runs} runs of {path} on {MODELS[model]}, seed {args.seed}"
        + (f", mutant {args.mutant}" if args.mutant else "")
        + f"; {len(done)} already in {store.results}, {len(todo)} to run"
    )
    if todo and model != "golden-fabric":
        out(f"campaign: building {MODELS[model]} (Verilator's output in build.log under build/sim/)")
        _prebuild(model, spec)
    records = dict(done)
    run_seconds, workers = 0.0, 0
    if todo:
        from distributed import as_completed
        from tqdm import tqdm

        client, cluster = _client(args)
        try:
            workers = len(client.scheduler_info()["workers"])
            out(f"campaign: {workers} Dask workers at {client.scheduler.address}")
            started = time.monotonic()
            futures = [
                client.submit(run_one, text, str(path), k, run_seed(args.seed, k), args.mutant, model, pure=False)
                for k in todo
            ]
            bar_off = not sys.stderr.isatty()  # a bar in a log file is noise
            with tqdm(total=len(todo), unit="run", desc="campaign", file=sys.stderr, disable=bar_off) as bar:
                for future in as_completed(futures):
                    record = future.result()
                    records[record["run"]] = record
                    saved = store.add(record)
                    if saved:
                        tqdm.write(
                            f"run {record['run']} broke a guarantee: {'; '.join(record['problems'])} "
                            f"(replay: python -m sim.campaign --replay {saved})",
                            file=sys.stderr,
                        )
                    bar.update()
            run_seconds = time.monotonic() - started
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    chosen = [records[k] for k in range(args.runs)]
    summary = summarize(chosen)
    broken = [r for r in chosen if r["problems"]]
    out(table(summary))
    report = {
        "scenario_file": str(path),
        "runs": args.runs,
        "seed": args.seed,
        "mutant": args.mutant,
        "models": MODELS[model],
        "broken_runs": [r["run"] for r in broken],
        # This invocation's runs (the resumed ones aside): from the first submitted to the last done.
        "ran": len(todo),
        "workers": workers,
        "run_seconds": round(run_seconds, 2),
        "summary": summary,
    }
    (store.dir / "summary.json").write_text(json.dumps(report, indent=1) + "\n")
    png = plot(chosen, store.dir / "campaign.png")
    out(f"campaign: {len(broken)} of {args.runs} runs broke a guarantee; wrote {store.dir / 'summary.json'} and {png}")
    return 1 if broken else 0


def replay(saved: Path, out=print) -> int:
    """Run a saved broken run again, in this process; 1 if it breaks again as saved."""
    record = json.loads(saved.read_text())
    path = record["scenario_file"]
    again = run_one(record["scenario_text"], path, record["run"], record["seed"], record["mutant"], record["model"])
    out(f"run {record['run']} of {path}, seed {record['seed']}: " + ("; ".join(again["problems"]) or "no problem"))
    return 1 if again["problems"] else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim.campaign", description=command_help(__doc__))
    parser.add_argument("file", nargs="?", type=Path, help="the scenario file (docs/SCENARIOS.md)")
    parser.add_argument("--runs", type=int, default=100, help="runs to draw (default 100)")
    parser.add_argument("--seed", type=int, default=1, help="the campaign's seed (run k's seed is drawn from it)")
    parser.add_argument("--out", type=Path, help="the campaign's directory (default build/campaign/<name>)")
    parser.add_argument("--workers", type=int, help="local Dask worker processes (default: one per core)")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="use the Dask cluster at ADDRESS (tcp://host:8786)")
    parser.add_argument(
        "--mutant", choices=sorted(MUTANTS), help="seed a defect in the golden fabric (a check of the checks)"
    )
    parser.add_argument("--replay", type=Path, metavar="RECORD", help="run a saved broken run again (failures/*.json)")
    args = parser.parse_args(argv)
    if args.replay:
        return replay(args.replay)
    if args.file is None:
        parser.error("give a scenario file (or --replay RECORD)")
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.workers is not None and args.workers < 1:
        parser.error("--workers must be at least 1")
    if args.scheduler and args.workers:
        parser.error("--workers sizes a local cluster; with --scheduler the cluster is the scheduler's")
    try:
        spec = load(args.file, horizon_cycles())
        if spec.topology == "pair":
            from sim import experiment

            experiment.from_spec(spec)
        elif model_for(spec, args.mutant) == "golden-fabric":
            from sim import triangle

            triangle.topology_of(spec)
    except ScenarioFileError as e:
        parser.error(str(e))
    if args.mutant and spec.topology == "pair":
        parser.error("--mutant seeds a defect in the golden fabric: the scenario must be a triangle or mesh")

    args.workers = args.workers or os.cpu_count() or 1
    try:
        return campaign(args, args.file)
    except ValueError as e:
        parser.error(str(e))


if __name__ == "__main__":
    sys.exit(main())
