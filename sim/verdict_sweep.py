"""``python -m sim.verdict_sweep``: the verdict bound of PROTOCOL.md 10.8 against the golden fabric
over round trips, the measurement 10.8 quotes.

For each latency setting of a triangle (every link alike, or the cut link and the arbiter's
links apart), link 0-1 is cut one way (0 -> 1) and both ways at six offsets spread over a round
trip, with user traffic (load 0.04 per ordered pair) and tokens on every port. A row gives the
slowest node's LINK_DOWN after the cut, the slowest over the offsets and both cuts, against
:func:`golden.fabric.node.verdict_bound` from the round trips the ends measured; and the same for
the failover bound (the first frame between the cut link's ends delivered through the third
node). Every run is checked by the fabric scoreboard. Writes build/report/verdict_sweep.json;
exits 1 when a verdict came later than its bound. The failover bound holds only while the links
carry less than their goodput (PROTOCOL.md 10.8): a row over it is marked, and is not a failure.
"""

import argparse
import json
import sys

from golden.encoding import Verdict
from golden.params import TURNAROUND
from golden.topology import Topology
from sim.harness.fabric import FabricHarness
from sim.tools.cli import command_help
from sim.tools.verilog import BUILD

REPORT = BUILD / "report" / "verdict_sweep.json"
LOAD = 0.04
OFFSETS = 6
# name -> {link: latency}: link 0 = 0-1 (the one cut), 1 = 1-2 and 2 = 0-2 (the arbiter's).
SETTINGS = {
    "all at 2": {0: 2, 1: 2, 2: 2},
    "all at 8": {0: 8, 1: 8, 2: 8},
    "all at 30": {0: 30, 1: 30, 2: 30},
    "all at 64": {0: 64, 1: 64, 2: 64},
    "cut link at 30, arbiter's at 2": {0: 30, 1: 2, 2: 2},
    "one arbiter link at 30": {0: 8, 1: 30, 2: 8},
}


def run_cut(latency: dict, directions, offset: int, seed: int) -> dict:
    """One cut of link 0 ``offset`` cycles into a round trip: cycles to the slowest LINK_DOWN and
    to the first frame between its ends delivered after the cut, with both bounds."""
    h = FabricHarness(Topology.triangle(), latency, load=LOAD, ait_rate=0.05, seed=seed)
    h.run_until(lambda h: h.all_ports_up(), 20_000)
    h.run(300 + offset)
    bounds = h.bounds([0])
    cut = h.cycle + 1
    for d in directions:
        getattr(h.channels[0], d).cuts = [(cut, None)]
    streams = [(0, 1, 0), (1, 0, 0)]
    # Frames the link committed before the cut arrive within a hop (< verdict / 2): past those.
    h.run(bounds["verdict"] // 2)
    start = {k: h.got.get(k, 0) for k in streams}
    moving = None
    limit = cut + 2 * bounds["failover"]
    while h.cycle < limit and (moving is None or len(h.verdict_cycles(0, Verdict.LINK_DOWN)) < 3):
        h.step()
        if moving is None and any(h.got.get(k, 0) > start[k] for k in streams):
            moving = h.cycle
    down = h.verdict_cycles(0, Verdict.LINK_DOWN)
    return {
        "verdict_cycles": max(down.values()) - cut if len(down) == 3 else None,
        "verdict_bound": bounds["verdict"],
        "failover_cycles": None if moving is None else moving - cut,
        "failover_bound": bounds["failover"],
    }


def sweep(name: str, seed: int) -> dict:
    latency = SETTINGS[name]
    rtt = 2 * latency[0] + TURNAROUND
    runs = [
        dict(run_cut(latency, directions, k * rtt // OFFSETS, seed), directions="".join(directions), offset=k)
        for directions in (("ab",), ("ab", "ba"))
        for k in range(OFFSETS)
    ]
    verdicts = [r["verdict_cycles"] for r in runs]
    failovers = [r["failover_cycles"] for r in runs]
    return {
        "setting": name,
        "latency": {str(k): v for k, v in latency.items()},
        "verdict_cycles_max": None if None in verdicts else max(verdicts),
        "verdict_bound": max(r["verdict_bound"] for r in runs),
        "failover_cycles_max": None if None in failovers else max(failovers),
        "failover_bound": max(r["failover_bound"] for r in runs),
        "runs": runs,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim.verdict_sweep", description=command_help(__doc__))
    parser.add_argument("--setting", action="append", choices=list(SETTINGS), help="run only these (repeatable)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    names = args.setting or list(SETTINGS)
    from tqdm import tqdm

    print(f"verdict sweep (golden model): link 0-1 cut one way and both ways at {OFFSETS} offsets, seed {args.seed}")
    rows = [sweep(name, args.seed) for name in tqdm(names, unit="setting", leave=False, file=sys.stderr)]
    print(f"{'setting':32s} {'verdict':>8} {'bound':>6} {'failover':>9} {'bound':>6}")
    for r in rows:
        v = "never" if r["verdict_cycles_max"] is None else r["verdict_cycles_max"]
        f = "never" if r["failover_cycles_max"] is None else r["failover_cycles_max"]
        over = r["failover_cycles_max"] is None or r["failover_cycles_max"] > r["failover_bound"]
        print(
            f"{r['setting']:32s} {v:>8} {r['verdict_bound']:>6} {f:>9} {r['failover_bound']:>6}"
            f"{'  over (links past their goodput)' if over else ''}"
        )
    print(
        "verdict: cycles from the cut to the slowest node's LINK_DOWN, the slowest run; failover: to the first "
        "frame between the cut link's ends delivered after it; bound: PROTOCOL.md 10.8 from the measured round trips"
    )
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(json.dumps({"model": "golden", "seed": args.seed, "load": LOAD, "settings": rows}, indent=1))
    print(f"report: {REPORT.relative_to(BUILD.parent)}")
    held = all(r["verdict_cycles_max"] is not None and r["verdict_cycles_max"] <= r["verdict_bound"] for r in rows)
    return 0 if held else 1


if __name__ == "__main__":
    sys.exit(main())
