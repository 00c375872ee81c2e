"""The RTL triangle's single faults against the bounds of PROTOCOL.md 10.8: the Verilated fabric
of `make sim` (sim/harness/fabric_rtl.py), driven by its C++ loop, no golden model.

Each single fault the bounds cover is run once on a loaded triangle: a link cut one way (each
direction) or both ways, and a node's death, each a scenario file under scenarios/bounds/
(docs/SCENARIOS.md). For each, the slowest verdict among the nodes that
can be told (LINK_DOWN of the cut link at all three; NODE_DOWN of the dead node at the other two)
and, for a cut, the failover as 10.8 defines it: the cycles from the cut to the first frame
between the cut link's ends delivered, in either direction, once the frames the link committed
before the cut are past (from half the verdict bound on, as ``python -m sim.verdict_sweep``
measures the golden fabric). Each run is checked as the experiment checks it: no frame between
live nodes lost, duplicated, corrupted or left undelivered after the drain.

``python -m sim.fabric_bounds`` prints the table, writes it to build/report/fabric_bounds.json
and exits 1 when a verdict came later than its bound; `make bench` reports the worst of each
(``rtl_verdict_cycles_max``, ``rtl_failover_cycles_max``) beside its bound.
"""

import argparse
import json
import sys
from dataclasses import dataclass

from golden.encoding import Verdict
from golden.fabric.node import failover_bound, verdict_bound
from golden.params import TURNAROUND, LinkParams
from golden.topology import Topology
from sim.scenario_file import builtin
from sim.tools.cli import command_help
from sim.tools.verilog import BUILD

REPORT = BUILD / "report" / "fabric_bounds.json"

AT = 3  # the scenario's origin, counted from the loop's

# The single faults, in the table's order: scenarios/bounds/<name>.toml.
BUILTIN = tuple(
    [
        f"cut_{x}_{way}_{y}"
        for a, b in ((0, 1), (1, 2), (0, 2))
        for x, way, y in ((a, "to", b), (b, "to", a), (a, "both", b))
    ]
    + [f"node_{n}_dies" for n in range(3)]
)


@dataclass(frozen=True)
class SingleFault:
    """Link ``link`` of the triangle cut in ``directions`` (0: from its lower node id, 1: towards
    it) for ``length`` cycles, or node ``node`` dead; then ``run`` cycles from the fault until
    the drain, at ``load`` frames per cycle and ordered pair of nodes."""

    name: str
    link: int | None = None
    directions: tuple = ()
    node: int | None = None
    length: int | None = None
    run: int = 5_000
    load: float = 0.05

    def directives(self) -> list:
        """The fault as lines of the loop's schedule (sim/harness/cpp/fabric_experiment.cpp)."""
        from sim.harness.fabric_rtl import fault_directives

        if self.node is not None:
            return fault_directives({}, [(self.node, AT)])
        return fault_directives({(self.link, d): [(AT, AT + self.length)] for d in self.directions}, [])


def from_spec(spec, latency: int) -> SingleFault:
    """The single fault of scenario file ``spec``: a triangle whose links have ``latency`` (the
    RTL triangle's build), one cut of a set length or one death, at 0, and ``[run] length``.
    ScenarioFileError naming the field otherwise."""
    if spec.topology != "triangle":
        spec.refuse("topology", "the bounds are those of a triangle")
    if spec.latency != (latency,) * spec.num_links:
        spec.refuse("links.latency", f"the RTL triangle is built with {latency} cycles on every link")
    if any(spec.ber):
        spec.refuse("links.ber", "a single fault is on a clean line")
    if spec.flows or set(spec.run) - {"length"}:
        spec.refuse("flows" if spec.flows else "run", "the bounds' runs measure every stream; give [run] length only")
    if len(spec.rules) != 1 or spec.random:
        where = "faults[1].kind" if len(spec.rules) > 1 else "faults[0].at" if spec.rules else "faults"
        spec.refuse(where, "a single fault is one fault at a fixed cycle")
    fault = spec.rules[0].fault
    if fault.kind not in ("cut", "node_death") or fault.at != 0:
        spec.refuse("faults[0].kind", "a single fault is a cut or a node's death, at 0")
    if fault.kind == "cut" and fault.length is None:
        spec.refuse("faults[0].length", "a cut link heals: give its length")
    if "length" not in spec.run:
        spec.refuse("run", "give [run] length, the cycles from the fault until the traffic drains")
    common = {"run": spec.run["length"], "load": 0.05 if spec.load is None else spec.load}
    if fault.kind == "node_death":
        return SingleFault(spec.description, node=fault.node, **common)
    directions = tuple(("ab", "ba").index(d) for d in fault.directions)
    return SingleFault(spec.description, fault.link, directions, length=fault.length, **common)


def single_faults(latency: int = 8) -> list:
    """Every single fault of the triangle that PROTOCOL.md 10.8 bounds, from scenarios/bounds/: each
    link cut each way and both ways, each node dead."""
    return [from_spec(spec, latency) for spec in builtin("bounds", BUILTIN).values()]


def schedule(fault: SingleFault, bounds: dict, seed: int = 1) -> str:
    """The loop's schedule for ``fault``: traffic from the origin, the fault at :data:`AT`, run
    past the heal, then drained; deliveries watched from half the verdict bound after the fault."""
    lines = [
        f"seed {seed}",
        "settle 500",
        f"cycles {AT + fault.run}",
        f"load {fault.load}",
        "drain_quiet 2000",
        f"flows_from {AT}",
        f"resumed_from {AT + bounds['verdict'] // 2}",
        *fault.directives(),
    ]
    return "\n".join(lines) + "\n"


def triangle_bounds(latency: int, margin: int = LinkParams().margin) -> dict:
    """10.8's verdict and failover bounds for a triangle whose links all have ``latency`` cycles
    each way (the round trip its ends measure: both ways plus the turnaround)."""
    rtt = 2 * latency + TURNAROUND
    return {"rtt": rtt, "verdict": verdict_bound(rtt, rtt, margin), "failover": failover_bound(rtt, rtt, margin)}


def figures(raw: dict, fault: SingleFault, topology: Topology, bounds: dict) -> dict:
    """The verdict and failover of one run from the loop's JSON ``raw``. RuntimeError when the run
    broke a guarantee the bounds assume: a frame between live nodes lost, duplicated, corrupted
    or never delivered, a frame of no stream delivered, or a node that can be told with no
    verdict."""
    if raw.get("foreign"):
        raise RuntimeError(f"{fault.name}: {raw['foreign']} frame(s) delivered that belong to no stream")
    for s in raw["streams"]:
        if fault.node in (s["origin"], s["dest"]):
            continue
        broken = {k: s[k] for k in ("lost", "duplicated", "corrupted", "undelivered") if s[k]}
        if broken:
            raise RuntimeError(f"{fault.name}: stream {s['origin']}->{s['dest']} {broken}")
    fault_at = raw["origin"] + AT
    if fault.node is None:
        code, told = Verdict.LINK_DOWN, range(topology.num_nodes)
        matches = lambda link, subject: link == fault.link  # noqa: E731
    else:
        code, told = Verdict.NODE_DOWN, [n for n in range(topology.num_nodes) if n != fault.node]
        matches = lambda link, subject: subject == fault.node  # noqa: E731
    first = {}
    for cycle, node, link, c, subject in raw["verdicts"]:
        if c == code and matches(link, subject) and cycle >= fault_at:
            first.setdefault(node, cycle - fault_at)
    missing = [n for n in told if n not in first]
    if missing:
        raise RuntimeError(f"{fault.name}: no {code.name} verdict at node(s) {missing}")
    row = {"fault": fault.name, "verdict": max(first.values()), "verdict_bound": bounds["verdict"]}
    if fault.link is not None:
        ends = set(topology.links[fault.link])
        resumed = [s["resumed"] for s in raw["streams"] if {s["origin"], s["dest"]} == ends and s["resumed"] >= 0]
        row["failover"] = bounds["verdict"] // 2 + min(resumed) if resumed else None
        row["failover_bound"] = bounds["failover"]
        # Until both ends get a frame made after the cut (round through the third node, behind
        # the frames the cut held up).
        flows = [s["flows"] for s in raw["streams"] if {s["origin"], s["dest"]} == ends]
        row["flows"] = None if min(flows) < 0 else max(flows)
    return row


def measure(exe, latency: int, seed: int = 1) -> list:
    """Every single fault of the triangle on the loop executable ``exe`` (links of ``latency``
    cycles): a row per fault, in :func:`single_faults` order."""
    from sim.harness import fabric_rtl

    topology = Topology.triangle()
    bounds = triangle_bounds(latency)
    rows = []
    for name, fault in zip(BUILTIN, single_faults(latency), strict=True):
        raw = fabric_rtl.run(exe, f"bounds_{name}", schedule(fault, bounds, seed))
        rows.append(figures(raw, fault, topology, bounds))
    return rows


def late(rows: list) -> list:
    """The rows whose verdict came after its bound."""
    return [r for r in rows if r["verdict"] > r["verdict_bound"]]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim.fabric_bounds", description=command_help(__doc__))
    parser.add_argument("--seed", type=int, default=1, help="the users' random frames (default 1)")
    args = parser.parse_args(argv)
    if args.seed < 0:
        parser.error("--seed must be 0 or more")
    from sim.harness import fabric_rtl

    print(f"fabric_bounds: building {fabric_rtl.DESIGN} (log in its build directory) ...", flush=True)
    rows = measure(fabric_rtl.build(fabric_rtl.DESIGN), fabric_rtl.DESIGN_LATENCY, args.seed)
    print(f"{'fault':<14}{'verdict':>9}{'bound':>7}{'failover':>10}{'bound':>7}")
    for r in rows:
        failover = "-" if "failover" not in r else ("never" if r["failover"] is None else r["failover"])
        print(
            f"{r['fault']:<14}{r['verdict']:>9}{r['verdict_bound']:>7}{failover:>10}{r.get('failover_bound', '-'):>7}"
        )
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    report = {"design": fabric_rtl.DESIGN, "latency": fabric_rtl.DESIGN_LATENCY, "seed": args.seed}
    report["load"] = sorted({f.load for f in single_faults(fabric_rtl.DESIGN_LATENCY)})
    REPORT.write_text(json.dumps({**report, "faults": rows}, indent=2) + "\n")
    print(f"fabric_bounds: report in {REPORT}")
    over = late(rows)
    if over:
        print(f"fabric_bounds: {len(over)} verdict(s) later than the bound", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
