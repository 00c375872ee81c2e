"""``python -m sim.fabric_day``: a day of a fabric's links, OAE against PCIe-style. Composes the
per-event figures a campaign measured (``python -m sim.campaign``: one fault per run on the
Verilated pairs) with the rates at which a fabric's links flap and fail (the paper's Table 1, or
rates given here) into what a day costs: ghost time of both signs, down time no belief saw,
time the links carried nothing (unusable), frames lost.

The composition (printed with the result and kept in the JSON):

- every flap and hard failure is an independent event on one link, and events do not overlap
  on a link (a link's events are hours apart at these rates);
- a day's figure is the number of events a day times the mean per event: flaps from the flap
  campaign, hard failures from the hard campaign (a permanent cut, metered until the run's end);
- unusable time counts flaps only: a hard failure leaves its link unusable until a repair,
  which is not modelled (what it costs before the fabric knows is its ghost time);
- the 95% interval of a figure is the per-event mean's (the normal approximation,
  1.96 standard errors), scaled alike; the event rate is taken as exact.

Table 1 of "The Ghost in the Datacenter" (arXiv 2603.03736): a flap every 12 minutes and a hard
failure every 7 days in a 2024 cluster (200k GPUs, more than 1M optics); every 48 seconds and
every 30 minutes in a 2025 one (3M GPUs, more than 10M optics); per optic 3x10^5 hours to a
flap and 10^7 hours to a hard failure.
"""

import argparse
import json
import math
import sys
from pathlib import Path

from sim.tools.cli import command_help
from sim.tools.verilog import BUILD

REPORT = BUILD / "report" / "fabric_day.json"
CLOCK_MHZ = 156.25
DAY_S = 86_400
# Table 1: seconds between flaps and between hard failures, somewhere in the fabric.
PRESETS = {"2024": {"flap_s": 12 * 60, "hard_s": 7 * DAY_S}, "2025": {"flap_s": 48, "hard_s": 30 * 60}}
FLAP_MTTF_H, HARD_MTBF_H = 3e5, 1e7  # per optic (Table 1)
# Per-event figures: (key in a campaign row, name, unit). Cycles become seconds at CLOCK_MHZ.
FIGURES = (
    ("ghost_cycles", "ghost up/down", "s"),
    ("ghost_cycles_down_while_up", "ghost down/up", "s"),
    ("hidden_cycles", "hidden", "s"),
    ("unusable_cycles", "unusable", "s"),
    ("frames_lost", "frames lost", "frames"),
)
MODELS = {"oae": "OAE", "ltssm": "PCIe-style"}


def mean_ci(values: list) -> tuple:
    """(mean, half-width of its 95% interval) by the normal approximation; (mean, inf) for one."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, math.inf
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, 1.96 * math.sqrt(var / n)


def per_event(directory: Path, kind: str = "flaps") -> dict:
    """{model: {key: values}} of the campaign in ``directory`` (its results.jsonl) of ``kind``
    ("flaps": every fault heals; "hard": every run has a fault that lasts); ValueError for a
    directory without results, a campaign that is not of pairs or not of that kind, or with
    broken runs."""
    results = Path(directory) / "results.jsonl"
    if not results.exists():
        raise ValueError(f"{results} does not exist: run python -m sim.campaign FILE --out {directory} first")
    records = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    if not records:
        raise ValueError(f"{results} holds no run")
    broken = [r["run"] for r in records if r["problems"]]
    if broken:
        raise ValueError(f"{results}: runs {broken[:5]} broke a guarantee; a day of a broken link is not a figure")
    if set(records[0]["rows"]) != set(MODELS):
        raise ValueError(f"{results} is not a campaign of the pair experiment (models {sorted(records[0]['rows'])})")
    for r in records:
        lasting = [f for f in r["faults"] if f.get("length") is None]
        if kind == "flaps" and lasting:
            raise ValueError(f"{results}: run {r['run']} has a fault that never heals: not a campaign of flaps")
        if kind == "hard" and not lasting:
            raise ValueError(f"{results}: run {r['run']} has no fault that lasts: not a campaign of hard failures")
    return {m: {key: [r["rows"][m].get(key) or 0 for r in records] for key, _, _ in FIGURES} for m in MODELS}


def compose(flaps: dict, hard: dict | None, flaps_per_day: float, hard_per_day: float) -> dict:
    """{model: {figure: {"per_day", "ci"}}}: events a day times the per-event mean, per source."""
    out = {}
    for model in MODELS:
        figures = {}
        for key, name, unit in FIGURES:
            total, ci2 = 0.0, 0.0
            for source, rate in ((flaps, flaps_per_day), (hard, hard_per_day)):
                if source is None or rate == 0 or (source is hard and key == "unusable_cycles"):
                    continue
                mean, ci = mean_ci(source[model][key])
                scale = rate / (CLOCK_MHZ * 1e6) if unit == "s" else rate
                total += mean * scale
                ci2 += (ci * scale) ** 2
            figures[name] = {"per_day": total, "ci": math.sqrt(ci2), "unit": unit}
        out[model] = figures
    return out


def rates(args) -> tuple:
    """(flaps a day, hard failures a day, how they were chosen)."""
    if args.links is not None:
        optics = args.links * args.optics_per_link
        flaps = optics * 24 / args.flap_mttf_hours
        hard = optics * 24 / args.hard_mtbf_hours
        return (
            flaps,
            hard,
            (
                f"{args.links:,} links of {args.optics_per_link} optics, {args.flap_mttf_hours:g} h to a flap and "
                f"{args.hard_mtbf_hours:g} h to a hard failure per optic"
            ),
        )
    p = PRESETS[args.preset]
    return (
        DAY_S / p["flap_s"],
        DAY_S / p["hard_s"],
        (f"Table 1, {args.preset}: a flap every {p['flap_s']:,} s and a hard failure every {p['hard_s']:,} s"),
    )


ASSUMPTIONS = [
    "flaps and hard failures are independent events on one link each, and do not overlap on a link",
    "a day's figure = events a day x the per-event mean of the campaign of that kind of event",
    "unusable time counts flaps only: a hard failure leaves its link unusable until a repair this "
    "model does not have (its cost before detection is its ghost time)",
    "intervals: 95%, normal approximation of the per-event mean; event rates taken as exact",
    f"cycles of the {CLOCK_MHZ} MHz link clock become seconds",
]


def table(day: dict) -> str:
    lines = [f"{'per day':16s} " + " ".join(f"{MODELS[m]:>26s}" for m in MODELS)]
    for _, name, unit in FIGURES:
        cells = []
        for m in MODELS:
            f = day[m][name]
            cells.append(f"{f['per_day']:,.4g} ± {f['ci']:,.2g} {unit}")
        lines.append(f"{name:16s} " + " ".join(f"{c:>26s}" for c in cells))
    return "\n".join(lines)


# --- The composition against a direct long run ------------------------------------------------
CHECK_INTERVAL = 100_000  # cycles between flaps on average: a rate exaggerated ~10^7 times
CHECK_LENGTH = '{ min = "1 us", max = "50 us", scale = "log" }'


def _check_file(name: str, faults: str, cycles: int) -> str:
    return (
        f'name = "{name}"\ntopology = "pair"\n\n[links]\nlatency = 16\n\n[[faults]]\nkind = "cut"\n{faults}'
        f"length = {CHECK_LENGTH}\n\n[run]\noae = {cycles}\nltssm = {cycles}\n"
    )


def check(singles: int = 40, flaps: int = 40, seed: int = 1, jobs: int = 2, progress=None) -> dict:
    """Compose the per-event means of ``singles`` one-flap runs (each run one mean interval
    long) at a flap every CHECK_INTERVAL cycles, and compare with one run of ``flaps`` such
    intervals with flaps drawn at that rate (Poisson), on the same Verilated pairs and length
    distribution. Per model and figure, figures per cycle: {"composed", "composed_ci", "direct",
    "direct_ci", "agree"}. The direct run's interval is its Poisson-compound spread
    (1.96 sqrt(expected flaps x E[X^2]) / cycles), E[X^2] from the single runs; they agree when
    the two differ by at most the two intervals combined."""
    from concurrent.futures import ThreadPoolExecutor

    from sim import experiment
    from sim.campaign import run_one, run_seed

    single = _check_file("check_single", "at = 1000\n", 1000 + CHECK_INTERVAL)
    long_cycles = flaps * CHECK_INTERVAL
    direct = _check_file("check_long", f"every = {CHECK_INTERVAL}\nwithin = {long_cycles}\n", long_cycles + 1000)
    for kind in experiment.LINKS:
        experiment.build(kind)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        long_run = pool.submit(run_one, direct, "check_long", 0, run_seed(seed, 0))
        records = list(pool.map(lambda k: run_one(single, "check_single", k, run_seed(seed, k)), range(singles)))
        records.append(long_run.result())
    broken = [p for r in records for p in r["problems"]]
    if broken:
        raise RuntimeError(f"the check's runs broke a guarantee: {broken[0]}")
    long_record = records.pop()
    out = {}
    for model in MODELS:
        for key, name, _ in FIGURES:
            xs = [r["rows"][model].get(key) or 0 for r in records]
            mean, ci = mean_ci(xs)
            mean_sq = sum(x * x for x in xs) / len(xs)
            composed, composed_ci = mean / CHECK_INTERVAL, ci / CHECK_INTERVAL
            direct_value = (long_record["rows"][model].get(key) or 0) / long_cycles
            direct_ci = 1.96 * math.sqrt(flaps * mean_sq) / long_cycles
            out.setdefault(MODELS[model], {})[name] = {
                "composed": composed,
                "composed_ci": composed_ci,
                "direct": direct_value,
                "direct_ci": direct_ci,
                "agree": abs(composed - direct_value) <= math.hypot(composed_ci, direct_ci) or composed == direct_value,
            }
    return {"singles": singles, "flaps": len(long_record["faults"]), "interval": CHECK_INTERVAL, "figures": out}


def _check_command(seed: int) -> int:
    print(
        f"fabric day check: one flap per run against flaps every {CHECK_INTERVAL:,} cycles (Poisson) in one long "
        f"run, lengths {CHECK_LENGTH}, seed {seed}"
    )
    result = check(seed=seed)
    print(f"{'model':11s} {'figure':14s} {'composed /cycle':>22s} {'direct /cycle':>22s} agree")
    for model, figures in result["figures"].items():
        for name, f in figures.items():
            print(
                f"{model:11s} {name:14s} {f['composed']:>12.4g} ± {f['composed_ci']:<7.2g} "
                f"{f['direct']:>12.4g} ± {f['direct_ci']:<7.2g} {'yes' if f['agree'] else 'NO'}"
            )
    return 0 if all(f["agree"] for figures in result["figures"].values() for f in figures.values()) else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim.fabric_day", description=command_help(__doc__))
    parser.add_argument("--flaps", type=Path, help="a campaign directory of single flaps on a pair")
    parser.add_argument("--hard", type=Path, help="a campaign directory of single permanent cuts on a pair")
    parser.add_argument("--preset", choices=sorted(PRESETS), help="Table 1's fabric (default 2025, unless --links)")
    parser.add_argument("--links", type=int, help="links of the fabric (in place of --preset)")
    parser.add_argument("--optics-per-link", type=int, default=2)
    parser.add_argument("--flap-mttf-hours", type=float, default=FLAP_MTTF_H)
    parser.add_argument("--hard-mtbf-hours", type=float, default=HARD_MTBF_H)
    parser.add_argument(
        "--check",
        action="store_true",
        help="compose at an exaggerated flap rate and compare with a direct long run (exit 1 if they disagree)",
    )
    parser.add_argument("--seed", type=int, default=1, help="the check's seed")
    args = parser.parse_args(argv)
    if args.check:
        return _check_command(args.seed)
    if args.flaps is None:
        parser.error("give --flaps DIR (a campaign of single flaps), or --check")
    if args.preset and args.links is not None:
        parser.error("--preset and --links each set the rates: give one")
    args.preset = args.preset or "2025"
    for name in ("links", "optics_per_link", "flap_mttf_hours", "hard_mtbf_hours"):
        value = getattr(args, name)
        if value is not None and value <= 0:
            parser.error(f"--{name.replace('_', '-')} must be positive, not {value}")
    try:
        flaps = per_event(args.flaps, "flaps")
        hard = per_event(args.hard, "hard") if args.hard else None
    except ValueError as e:
        parser.error(str(e))
    flaps_per_day, hard_per_day, source = rates(args)
    if hard is None:
        hard_per_day = 0.0
        source += "; no --hard campaign, so no hard failures counted"
    day = compose(flaps, hard, flaps_per_day, hard_per_day)
    print(f"fabric day: {flaps_per_day:,.1f} flaps and {hard_per_day:,.2f} hard failures a day ({source})")
    print(
        f"per event: {len(flaps['oae']['ghost_cycles'])} flap runs from {args.flaps}"
        + (f", {len(hard['oae']['ghost_cycles'])} hard-failure runs from {args.hard}" if hard else ", no hard failures")
    )
    print(table(day))
    print("assumptions: " + "; ".join(ASSUMPTIONS))
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(
        json.dumps(
            {
                "flaps_per_day": flaps_per_day,
                "hard_failures_per_day": hard_per_day,
                "rates": source,
                "flap_campaign": str(args.flaps),
                "hard_campaign": str(args.hard) if args.hard else None,
                "assumptions": ASSUMPTIONS,
                "per_day": {MODELS[m]: v for m, v in day.items()},
            },
            indent=1,
        )
        + "\n"
    )
    print(f"report: {REPORT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
