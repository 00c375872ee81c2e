"""``python -m sim.triangle``: the fabric's fault scenarios on the golden model (PROTOCOL.md 10).

Each scenario runs a fabric (a triangle unless it says mesh4) with user traffic both ways on
every pair and tokens on every port, injects one fault schedule after every link is UP, lets
the channel heal, and drains the traffic. One row per scenario: the verdicts committed, cycles
from the fault to the first suspicion and to the verdict at each node, ghost cycles (believed
up while down, summed over nodes, and the worst single one), the bound of PROTOCOL.md 10.8 for
the first fault, tokens unaccounted for, the goodput between the fault and the heal (frames
delivered per cycle per ordered pair, against the offered load), the largest store of frames a
node held for end-to-end ACKs and the cycles user streams were held back by a full end-to-end
window (PROTOCOL.md 10.10). Writes
build/report/triangle.json. Every run is checked by the fabric scoreboard (sim/harness/fabric.py),
which stops the run at the first frame delivered twice, out of order or corrupted; frames
between live nodes never delivered are counted (``frames_lost``).

The scenarios are files (docs/SCENARIOS.md): the built-ins under scenarios/triangle/, and any
other with ``--scenario-file F``.
"""

import argparse
import json
import sys

from golden.encoding import Verdict
from golden.topology import Topology
from sim import scenario_file
from sim.harness.fabric import FabricHarness
from sim.scenario_file import ScenarioFileError, ScenarioSpec, builtin, load
from sim.tools.cli import command_help
from sim.tools.verilog import BUILD

REPORT = BUILD / "report" / "triangle.json"
LOAD = 0.04
HEAL_AFTER = 2000


# The built-in scenarios, in the table's order: scenarios/triangle/<name>.toml (docs/SCENARIOS.md).
BUILTIN = ("cut_both", "cut_ab", "flap_short", "flap_rtt", "node_death", "partition", "relay_death", "mesh4_cut")
SCENARIOS = builtin("triangle", BUILTIN)
_DATA_TAG = (0x80, 0x80)  # (mask, value): a data slice's tag has its top bit set (golden/common/slice.py)


def topology_of(spec: ScenarioSpec) -> Topology:
    if spec.topology == "pair":
        spec.refuse("topology", "a pair runs in python -m sim.experiment, not here")
    if spec.run or spec.flows:
        # The golden fabric's run has its own shape (docs/SCENARIOS.md, [run]).
        spec.refuse(
            "run" if spec.run else "flows",
            "the golden fabric's runs have a set length and measure every stream; "
            "[run] and [flows] are for the RTL fabrics (python -m sim.fabric_contrast, campaigns)",
        )
    if spec.topology == "torus":
        return Topology.torus(*spec.shape)
    return Topology.triangle() if spec.topology == "triangle" else Topology.full_mesh(spec.nodes)


def lines_of(topology: Topology, fault) -> list:
    """The (link, direction) lines a line fault acts on: a partition's are every direction into
    its node (it hears nobody and is heard)."""
    if fault.kind == "partition":
        n, links = fault.node, topology.links
        return [(link, "ab" if links[link][1] == n else "ba") for link in topology.links_of(n)]
    return [(fault.link, d) for d in fault.directions]


def apply_faults(h, faults, origin: int) -> None:
    """Schedule ``faults`` (scenario-file faults, cycles after ``origin``) on fabric harness ``h``.
    A partition cuts every direction into its node (it hears nobody and is heard); a node that
    is already dead stays dead."""
    t = h.topology
    for f in faults:
        at = origin + f.at
        end = None if f.length is None else at + f.length
        if f.kind == "node_death":
            if f.node not in h.dead:
                h.kill(f.node, at)
            continue
        for link, d in lines_of(t, f):
            line = getattr(h.channels[link], d)
            if f.kind in ("cut", "partition"):
                line.cuts = sorted([*line.cuts, (at, end)], key=lambda c: c[0])
            elif f.kind == "gray":
                line.gray = sorted([*line.gray, (at, end, *_DATA_TAG, "drop")], key=lambda g: g[0])
            elif f.kind == "latency":
                back = [] if end is None else [(end, line.target_latency)]
                line.latency_changes = sorted([*line.latency_changes, (at, f.value), *back])


def first_fault_links(topology: Topology, faults) -> list:
    """The links the faults of the earliest cycle take down (a node's death or partition: all its
    links): PROTOCOL.md 10.8's bound is for these."""
    first = [f for f in faults if f.at == faults[0].at] if faults else []
    out = set()
    for f in first:
        out |= set(topology.links_of(f.node)) if f.kind in ("node_death", "partition") else {f.link}
    return sorted(out)


def run_scenario(scenario, latency: int | None = None, seed: int = 1) -> dict:
    """One row: ``scenario`` a name of SCENARIOS or a ScenarioSpec; ``latency``: every link's,
    in place of the file's; ``seed``: traffic, nodes, and the draws of a random schedule."""
    spec = SCENARIOS[scenario] if isinstance(scenario, str) else scenario
    topology = topology_of(spec)
    links_latency = {i: latency or spec.latency[i] for i in range(len(topology.links))}
    line_faults = {i: {d: {"bit_error_rate": spec.ber[i]} for d in ("ab", "ba")} for i, p in enumerate(spec.ber) if p}
    offered = LOAD if spec.load is None else spec.load
    h = FabricHarness(
        topology,
        links_latency,
        faults=line_faults,
        load=offered,
        ait_rate=0.05 if spec.tokens is None else spec.tokens,
        seed=seed,
    )
    h.run_until(lambda h: h.all_ports_up(), 10_000)
    h.run(300)
    h.start_meter()
    faults = spec.schedule(seed)
    failed = first_fault_links(topology, faults)
    triangle = spec.topology == "triangle"
    # The bound of a single fault (PROTOCOL.md 10.8), for the first of a fixed schedule: in a drawn
    # one, the first verdict may answer a later fault.
    bound = h.bounds(failed)["verdict"] if triangle and not spec.random and 1 <= len(failed) <= 2 else None
    t = h.cycle + 3
    # Detection and verdicts count from the first fault (the origin when it is at 0).
    fault_at = t + (faults[0].at if faults else 0)
    apply_faults(h, faults, t)
    first_suspect = None
    got_before = sum(h.got.values())
    # The two ends' streams for each other, which a single link fault fails over.
    links = failed or [0]
    x, y = h.topology.links[links[0]]
    streams = [(x, y, 0), (y, x, 0)] if len(links) == 1 else []
    window = max([HEAL_AFTER, *(f.end or f.at for f in faults)])  # fault cycles, from the origin on
    pair_before = sum(h.got.get(k, 0) for k in streams)
    for _ in range(window):
        h.step()
        if (
            first_suspect is None
            and h.cycle >= fault_at
            and any(not n.port_up[l] for n in h.nodes if h.alive(n.id) for l in n.ports)
        ):
            first_suspect = h.cycle
    during = sum(h.got.values()) - got_before
    pair_during = sum(h.got.get(k, 0) for k in streams) - pair_before
    h.run(3000)
    h.load, h.ait_rate = 0.0, 0.0
    live = [n for n in h.nodes if h.alive(n.id)]
    if h.dead:
        # Between the survivors everything arrives; tokens towards the dead stay frozen.
        h.run_until(lambda h: h.delivered_all(), 60_000)
    else:
        h.run_until(lambda h: h.delivered_all() and len(h.tokens_out) + len(h.tokens_back) == len(h.tokens_in), 60_000)
    report = h.meter.finish(h.cycle)
    verdicts = []
    for (link, verdict, subject), by in sorted(h.verdicts.adopted.items(), key=lambda kv: min(kv[1].values())):
        verdicts.append(
            {
                "link": link,
                "verdict": verdict.name,
                "subject": subject,
                "cycles_at_node": {str(n): c - fault_at for n, c in sorted(by.items())},
            }
        )
    committed = [v for v in verdicts if v["verdict"] != Verdict.NONE.name]
    # The first committed verdict, at every node that can be told (not its subject, cut off).
    told = [
        c
        for v in committed[:1]
        for n, c in v["cycles_at_node"].items()
        if v["verdict"] not in ("NODE_DOWN", "UNREACHABLE") or int(n) != v["subject"]
    ]
    pairs = len(live) * (len(live) - 1)
    return {
        "scenario": spec.name,
        "description": spec.description,
        "fault_cycle": fault_at,
        "suspicion_cycles": None if first_suspect is None else first_suspect - fault_at,
        "verdicts": verdicts,
        "verdict_cycles_max": max(told) if told else None,
        # The disagreement window (PROTOCOL.md 10.4): from the first node adopting it to the last.
        "disagreement_cycles": max(told) - min(told) if told else None,
        "verdict_bound_cycles": bound,
        "ghost": report.as_dict()["totals"],
        "frames_lost": sum(k - h.got.get(key, 0) for key, k in h.sent.items() if h.alive(key[0]) and h.alive(key[1])),
        "duplicates_dropped": sum(n.counters.duplicates for n in h.nodes),
        "frames_failed_over": sum(n.counters.failed_over for n in h.nodes),
        "frames_sent_again": sum(n.counters.resent for n in h.nodes),
        "retained_max": max(n.counters.retained_max for n in h.nodes),
        "stream_retained_max": max(n.counters.stream_retained_max for n in h.nodes),
        "window_full_cycles": sum(n.counters.window_full_cycles for n in h.nodes),
        "control_retained_max": max(n.counters.control_retained_max for n in h.nodes),
        # The node's FIFOs at their fullest (PROTOCOL.md 10.11): what a hardware node must hold.
        "inbox_max": max(n.counters.inbox_max for n in h.nodes),
        "events_max": max(n.counters.events_max for n in h.nodes),
        "forward_max": max(n.counters.forward_max for n in h.nodes),
        "forward_holds": sum(n.counters.forward_holds for n in h.nodes),
        "forward_dropped": sum(n.counters.forward_dropped for n in h.nodes),
        "event_holds": sum(n.counters.event_holds for n in h.nodes),
        "memory_full": sum(n.counters.memory_full for n in h.nodes),
        "tokens_unaccounted": len(h.tokens_in) - len(h.tokens_out) - len(h.tokens_back),
        "goodput_during": round(during / window / max(1, pairs), 4),
        "offered": offered,
        # Frames per cycle per direction between the failed link's ends while it was down.
        "failover_goodput": round(pair_during / window / 2, 4) if streams else None,
        "tables_agree": h.tables_agree(),
    }


def _row(r):
    v = r["verdicts"][0] if r["verdicts"] else None
    what = (
        "-"
        if v is None
        else f"{v['verdict']}({v['subject'] if v['verdict'] in ('NODE_DOWN', 'UNREACHABLE') else v['link']})"
    )
    at = "-" if v is None else " ".join(f"{n}:{c}" for n, c in v["cycles_at_node"].items())
    g = r["ghost"]
    return (
        f"{r['scenario']:12s} {what:17s} {r['suspicion_cycles'] if r['suspicion_cycles'] is not None else '-':>7} "
        f"{at:24s} {'-' if r['verdict_bound_cycles'] is None else r['verdict_bound_cycles']:>5} "
        f"{'-' if r['disagreement_cycles'] is None else r['disagreement_cycles']:>6} "
        f"{g['up_while_down']:>6} {g['worst_up_while_down']:>6} {g['unseen_events']:>6} "
        f"{r['frames_lost']:>4} {r['frames_failed_over']:>6} {r['frames_sent_again']:>6} {r['duplicates_dropped']:>6} "
        f"{r['tokens_unaccounted']:>6} "
        f"{r['goodput_during']:>8.4f} "
        f"{'-' if r['failover_goodput'] is None else format(r['failover_goodput'], '.4f'):>8} "
        f"{r['retained_max']:>5} {r['stream_retained_max']:>6} {r['window_full_cycles']:>6} "
        f"{r['inbox_max']:>5} {r['events_max']:>6} {r['forward_max']:>4} {r['forward_holds']:>5}"
    )


HEADER = (
    f"{'scenario':12s} {'first verdict':17s} {'suspect':>7} {'verdict at node (cycles)':24s} "
    f"{'bound':>5} {'window':>6} {'ghost':>6} {'worst':>6} {'unseen':>6} {'lost':>4} "
    f"{'f.over':>6} {'again':>6} {'dups':>6} {'tokens':>6} {'goodput':>8} {'failover':>8} "
    f"{'store':>5} {'stream':>6} {'held':>6} {'inbox':>5} {'events':>6} {'fwd':>4} {'holds':>5}"
)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim.triangle", description=command_help(__doc__))
    parser.add_argument("--scenario", action="append", choices=list(SCENARIOS), help="run only these (repeatable)")
    scenario_file.add_argument(parser)
    parser.add_argument("--latency", type=int, help="every link's latency in cycles (default: each scenario's, 8)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.latency is not None and args.latency < 1:
        parser.error("--latency must be at least 1")
    specs = [SCENARIOS[n] for n in args.scenario or []]
    for path in args.scenario_file or []:
        try:
            spec = load(path)
            topology_of(spec)
        except ScenarioFileError as e:
            parser.error(str(e))
        if spec.name in {s.name for s in specs}:
            parser.error(f"{path}: name: {spec.name!r} names another scenario of this run")
        specs.append(spec)
    specs = specs or list(SCENARIOS.values())
    latencies = {args.latency} if args.latency else {lat for s in specs for lat in s.latency}
    latency = latencies.pop() if len(latencies) == 1 else "per scenario"
    loads = {LOAD if s.load is None else s.load for s in specs}
    load_ = loads.pop() if len(loads) == 1 else "per scenario"
    from tqdm import tqdm

    rows = []
    print(
        f"triangle (golden model): {len(specs)} scenarios, link latency {latency}, load {load_} "
        f"frames/cycle per pair, seed {args.seed}"
    )
    for spec in tqdm(specs, unit="scenario", leave=False, file=sys.stderr, disable=not sys.stderr.isatty()):
        rows.append(run_scenario(spec, args.latency, args.seed))
    print(HEADER)
    for r in rows:
        print(_row(r))
    print(
        "bound: PROTOCOL.md 10.8 for the first fault of a fixed schedule on a triangle, from the measured round trips; "
        "window: cycles from the first node adopting the verdict to the last (PROTOCOL.md 10.4); "
        "ghost: cycles some node believed a link up while it was down (summed over nodes); worst: the longest "
        "one; unseen: faults no node noticed in which nothing was lost; lost: frames between live nodes never "
        "delivered; f.over: frames taken out of settled "
        "ports; again: frames their origin sent again end to end after a route changed; dups: copies dropped at "
        "the destination; tokens: not yet delivered or returned (frozen); "
        "goodput: frames delivered per cycle per ordered pair between the fault and the heal; failover: the "
        "same for the two ends of the failed link, whose frames went round (a link fault); store: frames a node "
        "held for end-to-end ACKs, at most at once (the largest node); stream: the same for one user stream, at "
        "most the end-to-end window (PROTOCOL.md 10.10); held: cycles user streams were held back because "
        "their window was full, summed over streams; inbox, events: the most frames waiting in one port's inbox "
        "and events waiting for the control engine, at once at one node; fwd: the most frames in one forward "
        "queue, at most forward_depth; holds: cycles a frame waited because its forward queue was full, summed "
        "over nodes (PROTOCOL.md 10.11)"
    )
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(
        json.dumps(
            {"model": "golden", "latency": latency, "seed": args.seed, "load": load_, "scenarios": rows}, indent=1
        )
    )
    print(f"report: {REPORT.relative_to(BUILD.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
