"""``python -m sim.fabric_contrast``: the fabric's failover scenarios on the OAE fabric and on the
PCIe-style contrast fabric side by side (docs/CONTRAST.md 9).

Both fabrics are triangles on the same channels with the same fault schedule and the same user
traffic (the file's load, frames per cycle per ordered pair, from once every port is up). The
scenarios are scenario files (docs/SCENARIOS.md): the built-ins under scenarios/fabric/
(``--scenario NAME``), or any triangle of cuts, partitions and node deaths (``--scenario-file F``).
The contrast fabric's timers run at ``--time-scale`` (default 1/64, the fastest its relations
allow: docs/CONTRAST.md 1), and so do the built-ins' schedules, written in horizons: every fault
lasts a multiple of the time the contrast fabric needs to find a dead link (``horizon``, its
Recovery timeouts down to Detect), so that its failover happens and can be measured. The OAE
fabric has no timer to scale: its figures are the same at every scale, the contrast fabric's
grow with it (to 64 times these at the real scale). One row per scenario and fabric:

* ``detect``: cycles from the fault to the first live node that stops believing a failed link up
  (the OAE node's table and port, the PCIe host's DL_Up and completer alive); ``agreed``: until every
  belief a live node holds of a failed link is down (every node holds one of every link for OAE,
  in its table; only the link's two ends for PCIe, whose hosts know only their own links);
* ``flows``: cycles from the fault (for relay_death, from the relay's death) until each end of
  the failed link got a frame the other made after it, the slower of the two directions;
* ``lost``, ``dup``, ``reord``: frames between live nodes never delivered once the traffic
  drained, delivered twice, delivered after a later one of their stream (the OAE scoreboard stops
  a run at a duplicate or a frame out of order, so its figures there are 0 by construction);
* ``ghost``: cycles some node believed a link up while it was down, summed over nodes, and
  ``dwu`` the reverse (believed down while up), from the fault to the end of the schedule;
  ``verdict``: the OAE fabric's first verdict.

Writes build/report/fabric_contrast.json. The OAE fabric runs in RTL by default: three
:class:`rtl.fabric.node.Node` on RTL channels, Verilated and driven by a C++ loop
(sim/harness/fabric_rtl.py; its traffic is the loop's own, at the same load), checked clock by
clock against the golden fabric by ``make test`` (cocotb_tests/test_fabric.py); ``--oae-model
golden`` runs the golden one instead. So does the contrast fabric: its links in RTL
(rtl/simulation/pcie_fabric.py), Verilated, with the hosts' routing, relaying and failover of
golden/contrast/host.py played by a C++ loop (sim/harness/pcie_fabric_rtl.py) that draws the
users' frames as the golden harness does, so that its rows equal the golden fabric's (``make
test`` compares them: tests/test_pcie_fabric.py); ``--pcie-model golden`` runs the golden one.
``make sim``'s pair experiment is the real-scale comparison of one link.
"""

import argparse
import json
import sys
from dataclasses import dataclass, replace
from fractions import Fraction

from golden.contrast.host import default_probe_interval
from golden.encoding import Verdict
from golden.params import LinkParams
from golden.pcie_params import PcieParams
from golden.topology import Topology
from sim import ghost_plot, scenario_file
from sim.harness.fabric import FabricHarness
from sim.harness.pcie import TEST_SCALE
from sim.harness.pcie_fabric import PcieFabricHarness
from sim.harness.verdicts import EQUAL, FABRIC_COLUMNS, NAMES, OAE, PCIE, belief_limit, summary, verdicts
from sim.scenario_file import ScenarioFileError, ScenarioSpec, builtin, load
from sim.tools.cli import command_help
from sim.tools.verilog import BUILD, DESIGNS
from sim.triangle import apply_faults, fault_schedule, first_fault_links

REPORT = BUILD / "report" / "fabric_contrast.json"
LOAD = 0.01
SETTLE = 2000  # cycles of traffic on the healthy fabric before the fault


def horizon(params: PcieParams) -> int:
    """Cycles a contrast link takes from a dead peer to DL_Down (docs/CONTRAST.md 3.2): Recovery's
    lock timeout at the full rate, the silent fall-back, the timeout again, and Recovery.Idle's
    timeout should the fault find the link there."""
    return 2 * params.cycles("recovery_rcvrlock") + params.cycles("recovery_speed_ei") + params.cycles("recovery_idle")


# The built-in scenarios, in the table's order: scenarios/fabric/<name>.toml (docs/SCENARIOS.md),
# their times in horizons.
BUILTIN = ("node_death", "link_cut_failover", "relay_death", "partition")


def scenario_spec(scenario, H: int) -> ScenarioSpec:
    """``scenario``: a ScenarioSpec as it is, or the name of a built-in, read with a horizon of
    ``H`` cycles."""
    if isinstance(scenario, ScenarioSpec):
        return scenario
    if scenario not in BUILTIN:
        raise ValueError(f"no built-in fabric scenario {scenario!r} (there are {', '.join(BUILTIN)})")
    return builtin("fabric", (scenario,), H)[scenario]


@dataclass(frozen=True)
class Plan:
    """What a run of a scenario does and measures, in cycles after its origin: the ``faults``;
    the ``failed`` links whose beliefs ``detect`` and ``agreed`` follow (those of the first faults,
    PROTOCOL.md 10.8), from ``first_fault``; the ``pair`` of nodes whose traffic ``flows``
    follows, from ``flows_from`` (or None); and the run's ``length`` before the drain."""

    faults: list
    failed: list
    pair: tuple | None
    flows_from: int
    length: int
    first_fault: int = 0


def plan(spec: ScenarioSpec, seed: int, H: int) -> Plan:
    """The :class:`Plan` of ``spec`` on a triangle: its faults drawn from ``seed``; ``[flows]`` and
    ``[run] length`` as the file gives them, else the failed link's ends when one link failed,
    from the first fault, and two horizons past the last change."""
    topology = Topology.triangle()
    faults = spec.schedule(seed)
    failed = first_fault_links(topology, faults)
    pair = spec.flows.get("between") or (topology.links[failed[0]] if len(failed) == 1 else None)
    length = spec.run.get("length", max([f.end or f.at for f in faults], default=0) + 2 * H)
    first = faults[0].at if faults else 0
    return Plan(faults, failed or [0], pair, spec.flows.get("from", first), length, first)


def _beliefs(h, fabric, link):
    """{node: believes ``link`` up} for the live nodes holding a belief of it."""
    if fabric == "oae":
        return {n.id: n.believes_up(link) for n in h.nodes if h.alive(n.id)}
    return {x.id: x.believes_up(link) for x in h.hosts if h.alive(x.id) and link in x.ports}


def _highest(h, fabric, key) -> int:
    """The highest frame number of stream ``key`` delivered so far (-1: none)."""
    if fabric == "oae":
        return h.got.get((*key, 0), 0) - 1
    return h.highest.get(key, -1)


def _made(h, fabric, key) -> int:
    return h.made.get((*key, 0) if fabric == "oae" else key, 0)


def _with_latency(spec: ScenarioSpec, latency: int | None) -> ScenarioSpec:
    """``spec`` checked (:func:`check_rtl_spec`), with every link at ``latency`` if given."""
    spec = spec if latency is None else replace(spec, latency=(latency,) * spec.num_links)
    check_rtl_spec(spec)
    return spec


def run_scenario(
    scenario,
    fabric: str,
    latency: int | None = None,
    seed: int = 1,
    params: PcieParams | None = None,
    H: int | None = None,
    progress: bool = True,
) -> dict:
    """One scenario (a built-in's name or a ScenarioSpec) on one golden fabric (``"oae"`` or
    ``"pcie"``), every link at ``latency`` (None: the file's); a built-in's unit ``H`` is the
    contrast fabric's :func:`horizon` at ``params`` unless given (a shorter one for the OAE fabric
    alone makes a quick run). ``progress``: a bar of cycles on a terminal."""
    if fabric not in ("oae", "pcie"):
        raise ValueError(f"fabric must be 'oae' or 'pcie', not {fabric!r}")
    params = params or PcieParams(**TEST_SCALE)
    H = horizon(params) if H is None else H
    spec = _with_latency(scenario_spec(scenario, H), latency)
    p = plan(spec, seed, H)
    name, failed, pair = spec.name, p.failed, p.pair
    topology = Topology.triangle()
    if fabric == "oae":
        h = FabricHarness(topology, spec.latency[0], load=0.0, seed=seed)
    else:
        h = PcieFabricHarness(topology, spec.latency[0], load=0.0, seed=seed, params=params)
    h.run_until(lambda h: h.all_ports_up(), 4 * H)
    h.load = LOAD if spec.load is None else spec.load
    h.run(SETTLE)
    h.start_meter()
    t = h.cycle + 3
    apply_faults(h, p.faults, t)
    fault_at = t + p.first_fault
    measured_from = t + p.flows_from
    detect = {}
    flows = {}
    streams = [pair, pair[::-1]] if pair else []
    made_at = {}
    bar = _bar(p.length, f"{name} {fabric}") if progress else _NoBar()
    while h.cycle < t + p.length:
        h.step()
        bar.update(1)
        if h.cycle >= fault_at:
            for link in failed:
                for node, up in _beliefs(h, fabric, link).items():
                    if not up and not h.actually_up(link):
                        detect.setdefault((node, link), h.cycle - fault_at)
        if h.cycle == measured_from:
            made_at = {key: _made(h, fabric, key) for key in streams}
        if made_at:
            for key in streams:
                if key not in flows and _highest(h, fabric, key) >= made_at[key]:
                    flows[key] = h.cycle - measured_from
    bar.close()
    # The ghosts of the schedule's span, the same for both fabrics; the drain comes after.
    ghost = h.meter.finish(h.cycle).as_dict()["totals"]
    h.meter = None
    last = _drain(h, fabric, H)
    verdict = None
    if fabric == "oae":
        verdict = _first_verdict((min(by.values()), link, v, s) for (link, v, s), by in h.verdicts.adopted.items())
    return {
        "scenario": name,
        "fabric": fabric,
        "description": spec.description,
        "fault_cycle": fault_at,
        "horizon": H,
        **_detection(detect, _holders(h, fabric, failed)),
        "flows_cycles": max(flows.values()) if pair and len(flows) == 2 else None,
        "frames_lost": last,
        "duplicates": 0 if fabric == "oae" else h.duplicates,
        "reordered": 0 if fabric == "oae" else h.reordered,
        "ghost": ghost,
        "verdict": verdict,
    }


def _rtl_overrides(latency: int, seed: int) -> dict:
    """The RTL fabric's generation parameters that differ from its export's: the links' latency
    and the nodes' seed (their ports' nonces) are built in."""
    from sim.harness import fabric_rtl

    defaults = DESIGNS[fabric_rtl.DESIGN][1]
    return {k: v for k, v in (("latency", latency), ("seed", seed)) if defaults.get(k) != v}


def _pcie_rtl_overrides(latency: int, params: PcieParams) -> dict:
    """The RTL contrast fabric's generation parameters that differ from its export's: the links'
    latency and the ends' timers are built in."""
    from sim.harness import pcie_fabric_rtl

    defaults = DESIGNS[pcie_fabric_rtl.DESIGN][1]
    fields = {"time_scale": params.time_scale, "skp_interval": params.skp_interval}
    changed = {"latency": latency} if defaults["latency"] != latency else {}
    if PcieParams(**defaults["params"]) != params:
        if PcieParams(**fields) != params:
            raise ValueError(
                "the RTL contrast fabric is built with the test scale's timers and another time_scale only"
            )
        changed["params"] = fields
    return changed


def run_scenario_rtl(
    scenario, latency: int | None = None, seed: int = 1, params: PcieParams | None = None, fabric: str = "oae"
) -> dict:
    """One scenario (a built-in's name or a ScenarioSpec) on an RTL fabric, Verilated and driven by
    a C++ loop: the OAE fabric's nodes (sim/harness/cpp/fabric_experiment.cpp), built with
    ``seed`` (their ports' nonces), or the contrast fabric's links with its hosts in the loop
    (sim/harness/cpp/pcie_fabric_experiment.cpp): the row :func:`run_scenario` gives for the
    golden one, from the loop's logs."""
    params = params or PcieParams(**TEST_SCALE)
    spec = _with_latency(scenario_spec(scenario, horizon(params)), latency)
    return run_spec_rtl(spec, seed, fabric, params, build_seed=seed)


RTL_FAULTS = ("cut", "partition", "node_death")  # what the RTL fabrics' loops can do


def check_rtl_spec(spec) -> None:
    """ScenarioFileError unless the fabric contrast and the RTL fabrics can run scenario file
    ``spec``: a triangle with one latency on every link (each latency is a Verilator build), no
    bit errors, only the faults the loops drive (cuts, partitions, node deaths), and no run
    length of the experiment's links. They carry frames only: ``tokens`` is for the golden
    fabric (a campaign's file with tokens runs on the RTL triangles without them)."""
    where = "the fabric contrast and the RTL fabrics"
    if spec.topology != "triangle":
        spec.refuse("topology", f"{where} run triangles, not a {spec.topology}")
    if len(set(spec.latency)) != 1:
        spec.refuse("links.latency", f"{where} build one latency on every link")
    if any(spec.ber):
        spec.refuse("links.ber", f"{where} drive no bit errors")
    for key in ("oae", "ltssm"):
        if key in spec.run:
            spec.refuse(f"run.{key}", f"{where} run both fabrics alike: give [run] length")
    for i, rule in enumerate(spec.rules):
        if rule.fault.kind not in RTL_FAULTS:
            spec.refuse(f"faults[{i}].kind", f"{where} drive {', '.join(RTL_FAULTS)}, not {rule.fault.kind}")


def spec_executable(spec, fabric: str, params: PcieParams | None = None, build_seed: int | None = None):
    """The Verilated ``fabric`` ("oae" or "pcie") with its C++ loop for scenario file ``spec``'s
    latency (built once per latency, kept by digest); the OAE nodes built with ``build_seed``,
    else their export's seed."""
    from sim.harness import fabric_rtl, pcie_fabric_rtl

    latency = spec.latency[0]
    if fabric == "oae":
        seed = DESIGNS[fabric_rtl.DESIGN][1]["seed"] if build_seed is None else build_seed
        return fabric_rtl.build(fabric_rtl.DESIGN, _rtl_overrides(latency, seed))
    return pcie_fabric_rtl.build(
        pcie_fabric_rtl.DESIGN, _pcie_rtl_overrides(latency, params or PcieParams(**TEST_SCALE))
    )


def run_spec_rtl(
    spec, seed: int = 1, fabric: str = "oae", params: PcieParams | None = None, build_seed: int | None = None
) -> dict:
    """Scenario file ``spec`` (:func:`check_rtl_spec`) on an RTL fabric, ``"oae"`` or ``"pcie"``:
    the schedule drawn from ``seed`` (which also seeds the users; the OAE nodes keep their build's
    seed unless ``build_seed``), from the origin, and measured as :func:`plan` says."""
    from sim.harness import fabric_rtl

    if fabric not in ("oae", "pcie"):
        raise ValueError(f"fabric must be 'oae' or 'pcie', not {fabric!r}")
    check_rtl_spec(spec)
    params = params or PcieParams(**TEST_SCALE)
    H = horizon(params)
    topology = Topology.triangle()
    p = plan(spec, seed, H)
    t = 3  # the origin, from the loop's (the golden run's meter start)
    cuts, kills = fault_schedule(topology, p.faults, t)
    lines = [
        f"seed {seed}",
        f"settle {SETTLE}",
        f"cycles {t + p.length}",
        f"train_limit {4 * H}",
        f"load {LOAD if spec.load is None else spec.load}",
        f"flows_from {t + p.flows_from}",
        *fabric_rtl.fault_directives(cuts, kills),
    ]
    exe = spec_executable(spec, fabric, params, build_seed)
    if fabric == "oae":
        lines.append(f"drain_quiet {H}")
    else:
        # The golden harness drains for up to four horizons (PcieFabricHarness.drain).
        lines += [f"drain_quiet {4 * H}", f"probe_interval {default_probe_interval(params)}"]
    name = f"{fabric}_{spec.name}_lat{spec.latency[0]}_seed{seed}"
    raw = fabric_rtl.run(exe, name, "\n".join(lines) + "\n")
    # Detection counts from the first fault; the run ends p.length after the origin.
    first = t + p.first_fault
    return _rtl_row(
        spec.name,
        fabric,
        spec.description,
        raw,
        topology,
        p.failed,
        p.pair,
        first,
        p.length - p.first_fault,
        H,
        kills,
    )


def _rtl_row(name, fabric, description, raw, topology, failed, pair, t, span, H, kills) -> dict:
    """The row of an RTL run's logs on ``topology``, as :func:`run_scenario` counts it for
    ``fabric``: detection from the first fault, ``t`` cycles after the loop's origin, to the end
    of the schedule ``span`` cycles later. RuntimeError for a corrupted frame (a broken model, as
    the golden scoreboards raise)."""
    from sim.harness import fabric_rtl

    corrupted = sum(s["corrupted"] for s in raw["streams"]) + raw.get("foreign", 0)
    if corrupted:
        raise RuntimeError(f"{fabric} {name}: {corrupted} frame(s) delivered corrupted or never sent")
    origin = raw["origin"]
    T, end = origin + t, origin + t + span
    death = {node: origin + cycle for node, cycle in kills}

    def alive(node, cycle):
        return node not in death or cycle < death[node]

    beliefs, actual, _ = fabric_rtl.changes(raw)

    # Every OAE node holds a belief of every link (its table); a PCIe host of its own links only.
    def holding(link):
        return range(topology.num_nodes) if fabric == "oae" else topology.links[link]

    detect = {}
    for link in failed:
        for node in holding(link):
            key = (node, link)
            candidates = sorted({T, *(c for c, _ in beliefs.get(key, []) + actual.get(link, []) if T <= c <= end)})
            for c in candidates:
                if not alive(node, c):
                    break
                up = fabric_rtl.value_at(beliefs.get(key, []), c)
                if not up and not fabric_rtl.value_at(actual.get(link, []), c):
                    detect[key] = c - T
                    break
    holders = {(n, link) for link in failed for n in holding(link) if alive(n, end)}
    ghost = fabric_rtl.ghost_totals(raw, topology, holding, death, end)
    live = [s for s in raw["streams"] if alive(s["origin"], end) and alive(s["dest"], end)]
    verdict = _first_verdict((c, link, code, subject) for c, _, link, code, subject in raw["verdicts"])
    flows = [s["flows"] for s in raw["streams"] if pair and (s["origin"], s["dest"]) in (pair, pair[::-1])]
    # The OAE loop counts a gap in a stream as lost at once (its node never reorders); the PCIe
    # loop counts a frame behind a later one as reordered.
    oae = fabric == "oae"
    return {
        "scenario": name,
        "fabric": fabric,
        "model": "rtl",
        "description": description,
        "fault_cycle": T,
        "horizon": H,
        **_detection(detect, holders),
        "flows_cycles": max(flows) if len(flows) == 2 and min(flows) >= 0 else None,
        "frames_lost": sum(s["undelivered"] + (s["lost"] if oae else 0) for s in live),
        "duplicates": sum(s["duplicated"] for s in raw["streams"]),
        "reordered": sum(s["lost"] if oae else s["reordered"] for s in raw["streams"]),
        "ghost": ghost,
        "verdict": verdict,
        "seconds": raw["seconds"],
        "cycles": raw["drained_at"],
    }


def _detection(detect: dict, holders: set) -> dict:
    """A row's detection figures from {(node, link): cycles from the fault to that node's belief
    of the failed link going down} and the beliefs live nodes hold of the failed links."""
    return {
        "detect_cycles": min(detect.values()) if detect else None,
        "agreed_cycles": _agreed(detect, holders),
        "detect_by_node": {
            str(n): min(c for (m, _), c in detect.items() if m == n) for n in sorted({n for n, _ in detect})
        },
    }


def _first_verdict(adopted) -> str | None:
    """The first verdict committed, of (cycle, link, verdict, subject) adoptions (a healed
    suspicion, NONE, commits nothing), as ``LINK_DOWN(link)`` or ``NODE_DOWN(subject)``."""
    committed = sorted((c, link, Verdict(v), s) for c, link, v, s in adopted if v != Verdict.NONE)
    if not committed:
        return None
    _, link, v, s = committed[0]
    return f"{v.name}({s if v in (Verdict.NODE_DOWN, Verdict.UNREACHABLE) else link})"


def _agreed(detect: dict, holders: set):
    """Cycles until every belief a live node holds of a failed link was down, {(node, link):
    cycles} (a node that died since is not waited for), or None if one never was."""
    if not holders or not holders <= detect.keys():
        return None
    return max(detect[k] for k in holders)


def _holders(h, fabric, failed) -> set:
    """(node, link) for every belief a live node holds of one of the links ``failed``."""
    return {(n, link) for link in failed for n in _beliefs(h, fabric, link)}


def _drain(h, fabric, H) -> int:
    """Frames between live nodes never delivered, once the traffic has stopped and drained: every
    frame arrived, or (PCIe) nothing can move any more, or (OAE) none arrived for a horizon."""
    if fabric == "pcie":
        return h.drain(4 * H)
    h.load = 0.0

    def lost():
        return sum(k - h.got.get(key, 0) for key, k in h.made.items() if h.alive(key[0]) and h.alive(key[1]))

    last, quiet = lost(), 0
    while last and quiet < H:
        h.step()
        now = lost()
        quiet = 0 if now < last else quiet + 1
        last = now
    return last


class _NoBar:
    def update(self, n):
        pass

    def close(self):
        pass


def _bar(total, what):
    if not sys.stderr.isatty():
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, desc=what, unit="cyc", unit_scale=True, leave=False, miniters=4096, file=sys.stderr)


def _run(spec, fabric, model, seed, params, progress=True) -> dict:
    if model == "rtl":
        return run_scenario_rtl(spec, None, seed, params, fabric)
    return run_scenario(spec, fabric, None, seed, params, None, progress)


def _in_parallel(runs, args, params, builds=None) -> list:
    """The runs, (scenario, fabric, model), in ``args.jobs`` processes, a bar of runs done on a
    terminal; rows in run order. ``builds`` ({fabric: (function, arguments)}: the RTL fabrics'
    Verilator builds) go to the pool first and the golden runs behind them; each fabric's RTL
    runs are queued once its build is done (a failed build cancels everything)."""
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    bar = None
    if sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=len(runs), unit="run", leave=False, file=sys.stderr)
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        building = {pool.submit(fn, *fn_args): fabric for fabric, (fn, fn_args) in (builds or {}).items()}

        def submit(wanted):
            return {
                pool.submit(_run, spec, fabric, model, args.seed, params, False): i
                for i, (spec, fabric, model) in enumerate(runs)
                if wanted(fabric, model)
            }

        futures = submit(lambda fabric, model: model != "rtl")
        rows = [None] * len(runs)
        waiting = set(building) | set(futures)
        while waiting:
            done, waiting = wait(waiting, return_when=FIRST_COMPLETED)
            for future in done:
                if future in building:
                    try:
                        future.result()
                    except BaseException:
                        pool.shutdown(wait=False, cancel_futures=True)
                        raise
                    built = building[future]
                    more = submit(lambda fabric, model, built=built: model == "rtl" and fabric == built)
                    futures |= more
                    waiting |= set(more)
                    continue
                rows[futures[future]] = future.result()
                if bar is not None:
                    bar.update(1)
    if bar is not None:
        bar.close()
    return rows


def fabric_verdicts(rows: list, limit: int) -> dict:
    """{scenario: {column: "oae" | "pcie" | "equal"}} for each scenario run on both fabrics, by
    the experiment's rules (sim/harness/verdicts.py) on :data:`FABRIC_COLUMNS`: a count is equal
    only when equal, a cycle figure within ``limit`` cycles per belief it sums, and every
    scenario takes a link or node down, so a detection or a flow that never came is the worse."""
    by = {}
    for r in rows:
        by.setdefault(r["scenario"], {})[r["fabric"]] = r
    return {
        name: verdicts(pair["oae"], pair["pcie"], limit, True, FABRIC_COLUMNS)
        for name, pair in by.items()
        if {"oae", "pcie"} <= set(pair)
    }


def _fmt(value):
    return "-" if value is None else str(value)


HEADER = (
    f"{'scenario':18s} {'fabric':6s} {'detect':>8} {'agreed':>8} {'flows':>8} {'lost':>6} {'dup':>4} "
    f"{'reord':>5} {'ghost':>8} {'dwu':>8} verdict"
)


def _row(r) -> str:
    g = r["ghost"]
    return (
        f"{r['scenario']:18s} {r['fabric']:6s} {_fmt(r['detect_cycles']):>8} {_fmt(r['agreed_cycles']):>8} "
        f"{_fmt(r['flows_cycles']):>8} {r['frames_lost']:>6} {r['duplicates']:>4} {r['reordered']:>5} "
        f"{g['up_while_down']:>8} {g['down_while_up']:>8} {_fmt(r['verdict'])}"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim.fabric_contrast", description=command_help(__doc__))
    parser.add_argument("--scenario", action="append", choices=BUILTIN, help="run only these (repeatable)")
    scenario_file.add_argument(parser)
    parser.add_argument(
        "--latency",
        type=int,
        help="every link's latency in cycles, in place of the files' (the built-ins': 8)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--time-scale", default="1/64", help="the contrast fabric's timer scale, a fraction in (0, 1] (default 1/64)"
    )
    parser.add_argument("--jobs", type=int, default=2, help="runs in parallel, one process each (default 2)")
    parser.add_argument(
        "--oae-model",
        choices=("rtl", "golden"),
        default="rtl",
        help="the OAE fabric: the Verilated RTL nodes driven by a C++ loop (default) or the golden model",
    )
    parser.add_argument(
        "--pcie-model",
        choices=("rtl", "golden"),
        default="rtl",
        help="the PCIe-style fabric: the Verilated RTL links, hosts in a C++ loop (default), or the golden model",
    )
    args = parser.parse_args(argv)
    if args.latency is not None and args.latency < 1:
        parser.error("--latency must be at least 1")
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    try:
        scale = float(Fraction(args.time_scale))
        params = PcieParams(**{**TEST_SCALE, "time_scale": scale})
    except (ValueError, ZeroDivisionError) as e:
        parser.error(f"--time-scale: {e}")
    H = horizon(params)
    try:
        specs = [scenario_spec(name, H) for name in args.scenario or ([] if args.scenario_file else BUILTIN)]
        specs += [load(path, H) for path in args.scenario_file or []]
        specs = [_with_latency(spec, args.latency) for spec in specs]
    except ScenarioFileError as e:
        parser.error(str(e))
    names = [spec.name for spec in specs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        parser.error(f"two scenarios of this run are named {twice[0]!r}: their runs and rows would mix")
    latencies = sorted({spec.latency[0] for spec in specs})
    if len(latencies) > 1:
        parser.error(f"the scenarios' links have latencies {latencies}: run them apart, or give --latency")
    latency = latencies[0]
    loads = sorted({LOAD if spec.load is None else spec.load for spec in specs})
    print(
        f"fabric contrast (OAE: {args.oae_model}; PCIe-style: {args.pcie_model}): {len(specs)} scenarios, triangle, "
        f"link latency {latency}, "
        f"load {', '.join(map(str, loads))} frames/cycle per pair, seed {args.seed}; contrast timers at "
        f"{args.time_scale} (horizon {H} cycles)"
    )
    model = {"oae": args.oae_model, "pcie": args.pcie_model}
    runs = [(spec, fabric, model[fabric]) for spec in specs for fabric in ("oae", "pcie")]
    try:
        # Contrast links refuse a latency their replay timer does not cover: say so before any run.
        PcieFabricHarness(Topology.triangle(), latency, load=0.0, params=params)
        if args.pcie_model == "rtl":
            _pcie_rtl_overrides(latency, params)
    except ValueError as e:
        parser.error(f"link latency {latency} at --time-scale {args.time_scale}: {e}")
    builds = {}
    if args.oae_model == "rtl":
        from sim.harness import fabric_rtl

        builds["oae"] = (fabric_rtl.build, (fabric_rtl.DESIGN, _rtl_overrides(latency, args.seed)))
    if args.pcie_model == "rtl":
        from sim.harness import pcie_fabric_rtl

        builds["pcie"] = (
            pcie_fabric_rtl.build,
            (pcie_fabric_rtl.DESIGN, _pcie_rtl_overrides(latency, params)),
        )
    if builds:
        print(f"building the RTL fabrics for Verilator (logs: {BUILD.name}/sim/*fabric_experiment_*/build.log)")
    if args.jobs == 1:
        for fn, fn_args in builds.values():
            fn(*fn_args)
        rows = [_run(*run, args.seed, params) for run in runs]
    else:
        rows = _in_parallel(runs, args, params, builds)
    for r in rows:
        if r.get("model") == "rtl":
            print(f"  {r['scenario']} ({r['fabric']}): RTL, {r['cycles']:,} cycles in {r['seconds']:.1f} s")
    limit = belief_limit(latency, LinkParams().los_cycles)
    better = fabric_verdicts(rows, limit)
    print(HEADER)
    for r in rows:
        print(_row(r))
        if r["fabric"] == "pcie" and r["scenario"] in better:
            print(f"{'':18s} better: " + ", ".join(f"{c} {NAMES[v]}" for c, v in better[r["scenario"]].items()))
    tally = summary(better)
    counts = tally["counts"]
    print(
        f"better, over {len(better)} scenarios x columns at the timer scale run: OAE {counts[OAE]}, PCIe-style "
        f"{counts[PCIE]}, equal within the physical limit ({limit} cycles a belief) {counts[EQUAL]}"
    )
    print(
        "detect: cycles from the fault to the first node believing a failed link down; agreed: until every "
        "belief a live node holds of a failed link is down; flows: until both ends of the failed link get "
        "frames made after the fault again (relay_death: after the relay's death); lost: frames between live "
        "nodes never delivered; dup, reord: "
        "delivered twice, out of order; ghost: cycles a node believed a link up while down, summed over nodes; "
        "dwu: believed down while up; verdict: the OAE fabric's first verdict. The contrast fabric's figures scale "
        "with its timers (x 1/time-scale at the real scale); the OAE fabric's do not"
    )
    report = {
        "model": model,
        "latency": latency,
        "seed": args.seed,
        "load": loads[0] if len(loads) == 1 else loads,
        "time_scale": args.time_scale,
        "horizon": H,
        "scenarios": rows,
        "belief_limit_cycles": limit,
        "verdicts": better,
        "verdict_summary": tally,
    }
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(json.dumps(report, indent=1))
    png = ghost_plot.plot(ghost_plot.pair_rows(), report)
    print(
        f"report: {REPORT.relative_to(BUILD.parent)}; "
        f"plot, with the experiment's pairs: {png.relative_to(BUILD.parent)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
