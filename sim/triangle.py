"""``python -m sim.triangle``: the fabric's fault scenarios (PROTOCOL.md 10), on the golden model
or, with ``--model rtl``, on the Verilated RTL nodes.

Each scenario runs a fabric (a triangle unless it says mesh4) with user traffic both ways on
every pair and tokens on every port, injects one fault schedule after every link is UP, lets
the channel heal, and drains the traffic. One row per scenario: the verdicts committed, cycles
from the fault to the first suspicion (a port of a live node leaving UP) and to the verdict at
each node, ghost cycles (believed
up while down, summed over nodes, and the worst single one), the bound of PROTOCOL.md 10.8 for
the first fault, tokens unaccounted for, the goodput between the fault and the heal (frames
delivered per cycle per ordered pair, against the offered load), the largest store of frames a
node held for end-to-end ACKs and the cycles user streams were held back by a full end-to-end
window (PROTOCOL.md 10.10). Writes
build/report/triangle.json. Every run is checked by the fabric scoreboard (sim/harness/fabric.py),
which stops the run at the first frame delivered twice, out of order or corrupted; frames
between live nodes never delivered are counted (``frames_lost``).

``--model rtl`` runs the same scenarios on the RTL fabric (rtl/simulation/fabric.py: a triangle
or a full mesh of four of RTL nodes on RTL channels), Verilated and driven by the C++ loop of
sim/harness/fabric_rtl.py, with no golden model: the same run, tokens included, and the columns
seen at the nodes' ports counted the same way (the golden node's internal counters are not
seen), with ``dups`` (frames delivered twice) and ``flows`` (cycles until traffic flows again
between the failed link's ends) in place of those. Writes build/report/triangle_rtl.json; `make
sim` runs it.

The scenarios are files (docs/SCENARIOS.md): the built-ins under scenarios/triangle/, and any
other with ``--scenario-file F``.
"""

import argparse
import json
import sys

from golden.encoding import LinkState, Verdict
from golden.topology import Topology
from sim import scenario_file
from sim.harness.fabric import FabricHarness
from sim.scenario_file import ScenarioFileError, ScenarioSpec, builtin, load
from sim.tools.cli import command_help
from sim.tools.verilog import BUILD

REPORT = BUILD / "report" / "triangle.json"
LOAD = 0.04
TOKENS = 0.05  # per port and cycle, the chance its user hands a token in when it may
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
            "the fabric table's runs have a set length and measure every stream; "
            "[run] and [flows] are for the contrast's RTL fabrics (python -m sim.fabric_contrast, campaigns)",
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


def fault_schedule(topology: Topology, faults, origin: int) -> tuple:
    """``faults`` (scenario-file faults, cycles after ``origin``) as the RTL fabrics' loops take
    them: ({(link, direction 0 from its lower node id or 1): [(start, end or None)]}, [(node,
    cycle)]); a partition cuts every direction into its node, a node already dead stays dead."""
    cuts, kills = {}, []
    for f in faults:
        at, end = origin + f.at, None if f.length is None else origin + f.at + f.length
        if f.kind == "node_death":
            if f.node not in {n for n, _ in kills}:
                kills.append((f.node, at))
            continue
        for link, way in lines_of(topology, f):
            cuts.setdefault((link, ("ab", "ba").index(way)), []).append((at, end))
    return cuts, kills


def suspected(h) -> bool:
    """A port of a live node of fabric harness ``h`` is not UP."""
    return any(p.state != LinkState.UP for n in h.nodes if h.alive(n.id) for p in n.ports.values())


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
        ait_rate=TOKENS if spec.tokens is None else spec.tokens,
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
        if first_suspect is None and h.cycle >= fault_at and suspected(h):
            first_suspect = h.cycle
    during = sum(h.got.values()) - got_before
    pair_during = sum(h.got.get(k, 0) for k in streams) - pair_before
    for _ in range(3000):
        h.step()
        if first_suspect is None and h.cycle >= fault_at and suspected(h):
            first_suspect = h.cycle
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
    told = _told(verdicts)
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


# The Verilated fabrics the table runs (sim/tools/verilog.py), by topology: the triangle of the
# fabric contrast's rows and a full mesh of four, the nodes' default windows and queues.
RTL_DESIGNS = {"triangle": "fabric_triangle_sim", "mesh": "fabric_mesh4_sim"}
RTL_MAX_LATENCY = 64  # the channels' max_latency in both designs
RTL_REPORT = BUILD / "report" / "triangle_rtl.json"
RTL_SETTLE = 300  # cycles of traffic after every port is UP, before the origin, as the golden run
AT = 3  # the origin after the loop's, as the golden run's after its meter starts
DRAIN_QUIET = 4_000  # the drain ends when no frame or token has come out for this long


def check_rtl_spec(spec: ScenarioSpec) -> Topology:
    """The topology of scenario file ``spec`` if the Verilated fabrics can run it, else
    ScenarioFileError naming the field: a triangle or a full mesh of four, one latency on every
    link up to the builds' ``max_latency``, no bit errors, and the faults the C++ loop drives
    (cuts, partitions, node deaths)."""
    from sim.fabric_contrast import RTL_FAULTS

    topology = topology_of(spec)
    where = "the Verilated fabrics"
    if not (spec.topology == "triangle" or (spec.topology == "mesh" and spec.nodes == 4)):
        spec.refuse(
            "nodes" if spec.topology == "mesh" else "topology",
            f"{where} are a triangle and a full mesh of four, not a {spec.topology} of {topology.num_nodes} nodes",
        )
    if len(set(spec.latency)) != 1:
        spec.refuse("links.latency", f"{where} build one latency on every link")
    if spec.latency[0] > RTL_MAX_LATENCY:
        spec.refuse("links.latency", f"{where} carry at most {RTL_MAX_LATENCY} cycles each way, not {spec.latency[0]}")
    if any(spec.ber):
        spec.refuse("links.ber", f"{where} drive no bit errors")
    for i, rule in enumerate(spec.rules):
        if rule.fault.kind not in RTL_FAULTS:
            spec.refuse(f"faults[{i}].kind", f"{where} drive {', '.join(RTL_FAULTS)}, not {rule.fault.kind}")
    return topology


def rtl_build(spec: ScenarioSpec, latency: int | None, seed: int) -> tuple:
    """(design, generation parameters where they differ from its export's): the Verilated
    fabric that runs ``spec`` with every link at ``latency`` (else the file's) and its nodes
    built with ``seed``."""
    from sim.tools.verilog import DESIGNS

    design = RTL_DESIGNS[spec.topology]
    defaults = DESIGNS[design][1]
    wanted = (("latency", latency or spec.latency[0]), ("seed", seed))
    return design, {k: v for k, v in wanted if defaults.get(k) != v}


def run_scenario_rtl(scenario, latency: int | None = None, seed: int = 1) -> dict:
    """One row of ``scenario`` (a name of SCENARIOS or a ScenarioSpec, :func:`check_rtl_spec`) on
    the Verilated fabric of its topology, driven by the C++ loop (sim/harness/fabric_rtl.py) and
    no golden model: the run of :func:`run_scenario`, with the nodes built with ``seed`` (their
    ports' nonces), which also seeds the users and a random schedule. ``latency``: every
    link's, in place of the file's (a build per latency)."""
    from sim.fabric_bounds import triangle_bounds
    from sim.harness import fabric_rtl

    spec = SCENARIOS[scenario] if isinstance(scenario, str) else scenario
    topology = check_rtl_spec(spec)
    lat = latency or spec.latency[0]
    faults = spec.schedule(seed)
    failed = first_fault_links(topology, faults)
    triangle = spec.topology == "triangle"
    bound = triangle_bounds(lat)["verdict"] if triangle and not spec.random and 1 <= len(failed) <= 2 else None
    first = faults[0].at if faults else 0
    window = max([HEAL_AFTER, *(f.end or f.at for f in faults)])
    cuts, kills = fault_schedule(topology, faults, AT)
    load = LOAD if spec.load is None else spec.load
    lines = [
        f"seed {seed}",
        f"settle {RTL_SETTLE}",
        f"cycles {window + 3000}",
        "train_limit 10000",
        f"load {load}",
        f"tokens {TOKENS if spec.tokens is None else spec.tokens}",
        f"flows_from {AT + first}",
        f"drain_quiet {DRAIN_QUIET}",
        *fabric_rtl.fault_directives(cuts, kills),
    ]
    exe = fabric_rtl.build(*rtl_build(spec, latency, seed))
    raw = fabric_rtl.run(exe, f"triangle_{spec.name}_lat{lat}_seed{seed}", "\n".join(lines) + "\n")
    pair = topology.links[failed[0]] if len(failed) == 1 else None
    return rtl_row(spec, raw, topology, AT + first, kills, bound, pair, load)


def check_latency(latency) -> None:
    """ValueError unless ``latency`` (``--latency``) is one the Verilated fabrics carry."""
    if latency is not None and not 1 <= latency <= RTL_MAX_LATENCY:
        raise ValueError(f"--latency must be 1 to {RTL_MAX_LATENCY} for the Verilated fabrics, not {latency}")


def rtl_row(spec, raw: dict, topology: Topology, fault_at: int, kills: list, bound, pair, load) -> dict:
    """The row of a Verilated run's logs ``raw``: its columns counted as :func:`run_scenario`
    counts them, from the first fault ``fault_at`` cycles after the loop's origin, with the
    nodes of ``kills`` [(node, cycle)] dead; ``pair``: the failed link's ends, whose traffic
    ``flows_cycles`` follows. RuntimeError for a corrupted or foreign frame or a node's fault
    flag (a broken model)."""
    from sim.harness import fabric_rtl

    bad = sum(s["corrupted"] for s in raw["streams"]) + raw.get("foreign", 0)
    if bad:
        raise RuntimeError(f"{spec.name}: {bad} frame(s) delivered corrupted or never sent")
    if raw.get("faulted"):
        raise RuntimeError(f"{spec.name}: node(s) {raw['faulted']} raised fault (a queue overflowed)")
    tokens = raw.get("tokens", {"in": 0, "delivered": 0, "returned": 0, "errors": 0})
    if tokens["errors"]:
        raise RuntimeError(f"{spec.name}: {tokens['errors']} token(s) came out twice, after their return, or unsent")
    origin, end = raw["origin"], raw["drained_at"]
    T = origin + fault_at
    death = {node: origin + cycle for node, cycle in kills}

    def alive(node, cycle):
        return node not in death or cycle < death[node]

    _, _, ports = fabric_rtl.changes(raw)
    # The loop logs the ports at cycle t as its edges left them, and a verdict in the cycle whose
    # edge adopts it: the golden harness's cycles for both. Suspicion is looked for until the
    # traffic stops (``end``), as the golden run looks for it.
    suspect = []
    for n in range(topology.num_nodes):
        full = (1 << len(topology.links_of(n))) - 1
        log = ports.get(n, [])
        for c in sorted({T, *(c for c, _ in log if T <= c < raw["end"])}):
            if alive(n, c) and fabric_rtl.value_at(log, c, full) != full:
                suspect.append(c)
                break
    adopted = {}
    for c, node, link, code, subject in raw["verdicts"]:
        if c >= origin:
            adopted.setdefault((link, Verdict(code).name, subject), {}).setdefault(node, c)
    verdicts = [
        {
            "link": link,
            "verdict": verdict,
            "subject": subject,
            "cycles_at_node": {str(n): c - T for n, c in sorted(by.items())},
        }
        for (link, verdict, subject), by in sorted(adopted.items(), key=lambda kv: min(kv[1].values()))
    ]
    told = _told(verdicts)
    ghost = fabric_rtl.ghost_totals(raw, topology, lambda link: range(topology.num_nodes), death, end)
    live = [s for s in raw["streams"] if alive(s["origin"], end) and alive(s["dest"], end)]
    flows = [s["flows"] for s in raw["streams"] if pair and (s["origin"], s["dest"]) in (pair, pair[::-1])]
    return {
        "scenario": spec.name,
        "description": spec.description,
        "model": "rtl",
        "fault_cycle": T,
        "suspicion_cycles": min(suspect) - T if suspect else None,
        "verdicts": verdicts,
        "verdict_cycles_max": max(told) if told else None,
        "disagreement_cycles": max(told) - min(told) if told else None,
        "verdict_bound_cycles": bound,
        "ghost": ghost,
        # The loop's nodes deliver in order: a frame skipped is lost, not late.
        "frames_lost": sum(s["undelivered"] + s["lost"] for s in live),
        "duplicates": sum(s["duplicated"] for s in raw["streams"]),
        "tokens_unaccounted": tokens["in"] - tokens["delivered"] - tokens["returned"],
        "tokens": tokens["in"],
        "flows_cycles": max(flows) if len(flows) == 2 and min(flows) >= 0 else None,
        "offered": load,
        "seconds": raw["seconds"],
        "cycles": end,
    }


def _told(verdicts: list) -> list:
    """The cycles of the first committed verdict at every node that can be told (not its subject,
    cut off)."""
    committed = [v for v in verdicts if v["verdict"] != Verdict.NONE.name]
    return [
        c
        for v in committed[:1]
        for n, c in v["cycles_at_node"].items()
        if v["verdict"] not in ("NODE_DOWN", "UNREACHABLE") or int(n) != v["subject"]
    ]


def _row(r):
    v = r["verdicts"][0] if r["verdicts"] else None
    what = "-" if v is None else f"{v['verdict']}({_subject(v)})"
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


RTL_HEADER = (
    f"{'scenario':12s} {'first verdict':17s} {'suspect':>7} {'verdict at node (cycles)':24s} "
    f"{'bound':>5} {'window':>6} {'ghost':>6} {'worst':>6} {'unseen':>6} {'lost':>4} {'dups':>4} {'tokens':>6} "
    f"{'flows':>6}"
)


def _rtl_line(r) -> str:
    v = r["verdicts"][0] if r["verdicts"] else None
    what = "-" if v is None else f"{v['verdict']}({_subject(v)})"
    at = "-" if v is None else " ".join(f"{n}:{c}" for n, c in v["cycles_at_node"].items())
    g = r["ghost"]

    def cell(x):
        return "-" if x is None else x

    return (
        f"{r['scenario']:12s} {what:17s} {cell(r['suspicion_cycles']):>7} {at:24s} "
        f"{cell(r['verdict_bound_cycles']):>5} {cell(r['disagreement_cycles']):>6} {g['up_while_down']:>6} "
        f"{g['worst_up_while_down']:>6} {g['unseen_events']:>6} {r['frames_lost']:>4} {r['duplicates']:>4} "
        f"{r['tokens_unaccounted']:>6} {cell(r['flows_cycles']):>6}"
    )


def _subject(v: dict) -> int:
    """What a verdict is about: its subject node for NODE_DOWN and UNREACHABLE, else its link."""
    return v["subject"] if v["verdict"] in ("NODE_DOWN", "UNREACHABLE") else v["link"]


def _main_rtl(specs: list, args) -> int:
    """``--model rtl``: every scenario on its Verilated fabric, built first (one per topology,
    latency and seed), then run by the C++ loop."""
    from tqdm import tqdm

    from sim.harness import fabric_rtl

    builds = sorted({(d, tuple(sorted(p.items()))) for d, p in (rtl_build(s, args.latency, args.seed) for s in specs)})
    latencies = sorted({args.latency or s.latency[0] for s in specs})
    latency = latencies[0] if len(latencies) == 1 else "per scenario"
    loads = sorted({LOAD if s.load is None else s.load for s in specs})
    load = loads[0] if len(loads) == 1 else "per scenario"
    print(
        f"triangle (RTL, Verilated, C++ loop): {len(specs)} scenarios, link latency {latency}, load {load} "
        f"frames/cycle per pair, seed {args.seed}"
    )
    logs = f"{BUILD.name}/sim/fabric_experiment_*/build.log"
    print(f"building {', '.join(d for d, _ in builds)} for Verilator (logs: {logs})")
    for design, params in builds:
        fabric_rtl.build(design, dict(params))
    rows = []
    for spec in tqdm(specs, unit="scenario", leave=False, file=sys.stderr, disable=not sys.stderr.isatty()):
        rows.append(run_scenario_rtl(spec, args.latency, args.seed))
    print(RTL_HEADER)
    for r in rows:
        print(_rtl_line(r))
    print(
        "suspect: cycles from the fault until a port of a live node left UP; bound: PROTOCOL.md 10.8 for the first "
        "fault of a fixed schedule on a triangle; window: cycles from the first node adopting the verdict to the "
        "last (PROTOCOL.md 10.4); ghost: cycles some node believed a link up while it was down (summed over "
        "nodes); worst: the longest one; unseen: faults no node noticed in which nothing was lost; lost: frames "
        "between live nodes never delivered; dups: frames delivered twice; tokens: neither delivered nor given "
        "back (frozen towards a dead node or across a cut that never heals, or in flight when the drain gave up); "
        "flows: cycles from the fault until "
        "frames made after it flow again both ways between the failed link's ends"
    )
    RTL_REPORT.parent.mkdir(parents=True, exist_ok=True)
    RTL_REPORT.write_text(
        json.dumps({"model": "rtl", "latency": latency, "seed": args.seed, "load": load, "scenarios": rows}, indent=1)
    )
    print(f"report: {RTL_REPORT.relative_to(BUILD.parent)}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim.triangle", description=command_help(__doc__))
    parser.add_argument("--scenario", action="append", choices=list(SCENARIOS), help="run only these (repeatable)")
    scenario_file.add_argument(parser)
    parser.add_argument("--latency", type=int, help="every link's latency in cycles (default: each scenario's, 8)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--model",
        choices=("golden", "rtl"),
        default="golden",
        help="the golden fabric (default), or the Verilated RTL nodes driven by a C++ loop (a triangle or a mesh "
        "of four; cuts, partitions and node deaths; writes build/report/triangle_rtl.json)",
    )
    args = parser.parse_args(argv)
    if args.latency is not None and args.latency < 1:
        parser.error("--latency must be at least 1")
    rtl = args.model == "rtl"
    if rtl:
        try:
            check_latency(args.latency)
        except ValueError as e:
            parser.error(str(e))
    check = check_rtl_spec if rtl else topology_of
    specs = [SCENARIOS[n] for n in args.scenario or []]
    for spec in specs:
        try:
            check(spec)
        except ScenarioFileError as e:
            parser.error(str(e))
    for path in args.scenario_file or []:
        try:
            spec = load(path)
            check(spec)
        except ScenarioFileError as e:
            parser.error(str(e))
        if spec.name in {s.name for s in specs}:
            parser.error(f"{path}: name: {spec.name!r} names another scenario of this run")
        specs.append(spec)
    specs = specs or list(SCENARIOS.values())
    if rtl:
        return _main_rtl(specs, args)
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
