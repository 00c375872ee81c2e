"""The RTL fabric (rtl/simulation/fabric.py) on Verilator driven by a C++ loop
(sim/harness/cpp/fabric_experiment.cpp), no Python per cycle: what `make sim`'s OAE fabric rows
run on.

:func:`build` verilates the exported design with the loop and the port access this module
writes (``fabric_ports.inc``: the observe port's field offsets, the user and fault ports);
:func:`run` runs one schedule and returns the loop's JSON (belief, actual-state and verdict
logs, and per stream what was made, delivered, lost, duplicated). Verilator's and the compiler's
output go to ``build.log`` in the build directory.
"""

import json
import subprocess
from pathlib import Path

from golden import encoding as enc
from rtl.simulation.fabric import observation_layout
from sim.harness.verilator_free import PORTS_HEADER, cpp_member, verilate_loop
from sim.tools.cocotb_run import FABRIC_MODEL_CFLAGS, build_dir_for, build_lock
from sim.tools.toolchain import activate, ensure_verilator
from sim.tools.verilog import BUILD, DESIGNS, TOPOLOGIES, export

MAIN = Path(__file__).resolve().parent / "cpp" / "fabric_experiment.cpp"
SCHEDULE_HEADER = MAIN.parent / "fabric_schedule.h"  # what the fabric loops share
DESIGN = "fabric_triangle_sim"  # the triangle `make sim` runs
DESIGN_LATENCY = DESIGNS[DESIGN][1]["latency"]
EXECUTABLE = "fabric_experiment"
RUNS = BUILD / "report" / "fabric_runs"


def _layout(design: str):
    """The topology of ``design`` and per node (ports, links of the node, peers, observe layout)."""
    params = DESIGNS[design][1]
    topology = TOPOLOGIES[params["topology"]]()
    classes = params.get("user_classes", 1)
    nodes = []
    for n in range(topology.num_nodes):
        links = topology.links_of(n)
        peers = [m for m in range(topology.num_nodes) if m != n]
        nodes.append((links, peers, observation_layout(len(links), len(topology.links), len(peers) * classes)))
    return topology, classes, nodes


def mesh_constants(topology) -> list:
    """The C++ constants every fabric loop reads: ``NODES``, ``LINKS`` and ``LINK_ENDS`` (each
    link's lower and higher node id)."""
    return [
        f"constexpr int NODES = {topology.num_nodes};",
        f"constexpr int LINKS = {len(topology.links)};",
        "constexpr int LINK_ENDS[LINKS][2] = {" + ", ".join(f"{{{a}, {b}}}" for a, b in topology.links) + "};",
    ]


def fault_access(topology) -> list:
    """The C++ of the fault ports every fabric design has: ``set_cut(top, link, dir, v)`` (the
    channel of ``link``, direction 0 from its lower node id) and ``set_dead(top, mask)``."""
    cases = [
        f"    case {2 * i + d}: {member(f'l{i}_{name}_cut')} = v; break;"
        for i in range(len(topology.links))
        for d, name in enumerate(("ab", "ba"))
    ]
    return [
        "void set_cut(Vtop* top, int link, int dir, int v) {\n  switch (link * 2 + dir) {\n"
        + "\n".join(cases)
        + "\n  }\n}",
        f"void set_dead(Vtop* top, unsigned mask) {{ {member('dead')} = mask; }}",
    ]


def member(*path) -> str:
    """The C++ expression of a port of the model ``top`` by its path."""
    return "top->" + cpp_member(path)


def ports_source(design: str, params: dict | None = None) -> str:
    """fabric_ports.inc for ``design`` with generation ``params`` (overriding its defaults):
    constants and the functions fabric_experiment.cpp calls."""
    topology, classes, nodes = _layout(design)
    N, L = topology.num_nodes, len(topology.links)
    if classes != 1:
        raise ValueError("the fabric experiment runs one user class")
    out = mesh_constants(topology)

    def field(n, name, extra=0, width=None):
        f = dict(iter(nodes[n][2]))[name]
        return f"bits({member(f'n{n}_observe')}, {f.offset + extra}, {width or f.width})"

    # The users take every delivery and token; the channels keep their generated latency (a
    # top-level input has no initial value of its own).
    params = {**DESIGNS[design][1], **(params or {})}
    latency = params["latency"] if isinstance(params["latency"], list) else [params["latency"]] * L
    body = [f"    {member(f'l{i}_{d}_latency')} = {latency[i]};" for i in range(L) for d in ("ab", "ba")]
    for n, (links, _, _) in enumerate(nodes):
        body.append(f"    {member(f'n{n}_user_out', 'ready')} = 1;")
        body += [f"    {member(f'n{n}_ait_out', p, 'ready')} = 1;" for p in range(len(links))]
    out.append("void constant_inputs(Vtop* top) {\n" + "\n".join(body) + "\n}")
    up = " && ".join(f"{field(n, 'port_up')} == {(1 << len(links)) - 1}u" for n, (links, _, _) in enumerate(nodes))
    out.append(f"bool all_ports_up(const Vtop* top) {{ return {up}; }}")
    out += fault_access(topology)
    cases = []
    for n, (_, peers, _) in enumerate(nodes):
        for k, d in enumerate(peers):
            valid, payload = member(f"n{n}_user_in", k, "valid"), member(f"n{n}_user_in", k, "payload")
            cases.append(
                f"    case {n * N + d}: {valid} = valid; "
                f"if (valid) put_words({payload}, payload, PAYLOAD_WORDS); break;"
            )
    out.append(
        "void set_user(Vtop* top, int origin, int dest, bool valid, const uint32_t* payload) {\n"
        "  switch (origin * NODES + dest) {\n" + "\n".join(cases) + "\n  }\n}"
    )
    cases = [
        f"    case {n * N + d}: return {field(n, 'user_ready', k, 1)};"
        for n, (_, peers, _) in enumerate(nodes)
        for k, d in enumerate(peers)
    ]
    out.append(
        "unsigned user_ready(const Vtop* top, int node, int dest) {\n  switch (node * NODES + dest) {\n"
        + "\n".join(cases)
        + "\n  }\n  return 0;\n}"
    )
    cases = []
    for n in range(N):
        words = " ".join(f"payload[{i}] = {field(n, 'payload', 32 * i, 32)};" for i in range(14))
        cases.append(
            f"    case {n}: if (!{field(n, 'deliver')}) return false; "
            f"*from = {field(n, 'origin')}; {words} return true;"
        )
    out.append(
        "bool delivered(const Vtop* top, int node, int* from, uint32_t* payload) {\n  switch (node) {\n"
        + "\n".join(cases)
        + "\n  }\n  return false;\n}"
    )
    cases = []
    for n, (links, _, _) in enumerate(nodes):
        for i in range(L):
            table = field(n, "table_up", i, 1)
            port = f" && {field(n, 'port_up', links.index(i), 1)}" if i in links else ""
            cases.append(f"    case {n * L + i}: return {table}{port};")
    # G_K of the ghost meter (PROTOCOL.md 10.4): the table holds the link UP and, for a link of
    # the node, its port is UP.
    out.append(
        "int belief(const Vtop* top, int node, int link) {\n  switch (node * LINKS + link) {\n"
        + "\n".join(cases)
        + "\n  }\n  return 0;\n}"
    )
    cases = [
        f"    case {n}: if (!{field(n, 'verdict')}) return false; *link = {field(n, 'verdict_link')}; "
        f"*code = {field(n, 'verdict_code')}; *subject = {field(n, 'verdict_subject')}; return true;"
        for n in range(N)
    ]
    out.append(
        "bool verdict(const Vtop* top, int node, unsigned* link, unsigned* code, unsigned* subject) {\n"
        "  switch (node) {\n" + "\n".join(cases) + "\n  }\n  return false;\n}"
    )
    # The tokens: each port's user side (PROTOCOL.md 3).
    out.append(f"constexpr int MAX_PORTS = {max(len(links) for links, _, _ in nodes)};")
    out.append("constexpr int PORTS[NODES] = {" + ", ".join(str(len(links)) for links, _, _ in nodes) + "};")
    out.append(f"constexpr int AIT_BITS = {enc.AIT_VALUE_BITS};")
    per_port = [(n, p) for n, (links, _, _) in enumerate(nodes) for p in range(len(links))]
    cases = [f"    case {n * 16 + p}: return {field(n, 'ait_in_ready', p, 1)};" for n, p in per_port]
    out.append(
        "unsigned ait_ready(const Vtop* top, int node, int port) {\n  switch (node * 16 + port) {\n"
        + "\n".join(cases)
        + "\n  }\n  return 0;\n}"
    )
    cases = [
        f"    case {n * 16 + p}: {member(f'n{n}_ait_in', p, 'valid')} = valid; "
        f"{member(f'n{n}_ait_in', p, 'payload')} = value; break;"
        for n, p in per_port
    ]
    out.append(
        "void set_ait(Vtop* top, int node, int port, bool valid, unsigned value) {\n"
        "  switch (node * 16 + port) {\n" + "\n".join(cases) + "\n  }\n}"
    )
    bits = enc.AIT_VALUE_BITS
    for name, flag, value in (
        ("ait_delivered", "ait_out_valid", "ait_out_payload"),
        ("ait_returned", "returned", "returned_value"),
    ):
        cases = [
            f"    case {n * 16 + p}: if (!{field(n, flag, p, 1)}) return false; "
            f"*value = {field(n, value, p * bits, bits)}; return true;"
            for n, p in per_port
        ]
        out.append(
            f"bool {name}(const Vtop* top, int node, int port, unsigned* value) {{\n"
            "  switch (node * 16 + port) {\n" + "\n".join(cases) + "\n  }\n  return false;\n}"
        )
    for name, what in (("port_mask", "port_up"), ("node_fault", "fault")):
        cases = [f"    case {n}: return {field(n, what)};" for n in range(N)]
        out.append(
            f"unsigned {name}(const Vtop* top, int node) {{\n  switch (node) {{\n"
            + "\n".join(cases)
            + "\n  }\n  return 0;\n}"
        )
    return "\n".join(out) + "\n"


def build(design: str, params: dict | None = None) -> Path:
    """Verilate fabric ``design`` (a key of sim/tools/verilog.py ``DESIGNS``) with the C++ loop,
    its generation parameters overridden by ``params``; return the executable."""
    return build_loop(design, params, MAIN, EXECUTABLE, "fabric_ports.inc", ports_source(design, params))


def build_loop(design: str, params: dict | None, main: Path, executable: str, inc_name: str, inc_text: str) -> Path:
    """Verilate ``design`` with generation ``params`` (overriding its defaults) and the C++ loop
    ``main``, which includes ``inc_name`` (written with ``inc_text``), into ``executable`` in a
    build directory of its own; made again when the Verilog, the included file, the flags or the
    loop's sources change. Returns the executable."""
    activate(ensure_verilator())
    tag = "".join(f"_{k}{v}" for k, v in sorted((params or {}).items()))
    build_dir = build_dir_for(f"{executable}_{design}{tag}")
    with build_lock(build_dir):
        verilog = export(design, build_dir / "verilog", params=params)
        inc = build_dir / inc_name
        if not inc.exists() or inc.read_text() != inc_text:
            inc.write_text(inc_text)
        # The flags are a source too: a build made with others is made again.
        flags = build_dir / "cflags.txt"
        if not flags.exists() or flags.read_text() != " ".join(FABRIC_MODEL_CFLAGS):
            flags.write_text(" ".join(FABRIC_MODEL_CFLAGS))
        exe = build_dir / executable
        sources = [verilog, inc, flags, main, PORTS_HEADER, SCHEDULE_HEADER]
        if exe.exists() and all(exe.stat().st_mtime > s.stat().st_mtime for s in sources):
            return exe
        return verilate_loop(build_dir, design, verilog, main, executable, cflags=FABRIC_MODEL_CFLAGS)


def fault_directives(cuts: dict, kills: list) -> list:
    """The fault lines of a loop's schedule (fabric_schedule.h), in cycle order: ``cuts``
    {(link, direction 0 or 1): [(start, end or None)]}, merged first, as a cut is a level in the
    loop (a heal inside a longer cut would end both); ``kills`` [(node, cycle)]."""
    from sim.scenario_file import merge_spans

    out = []
    for (link, d), spans in sorted(cuts.items()):
        for start, end in merge_spans(spans):
            out.append(f"at {start} cut {link} {d} 1")
            if end is not None:
                out.append(f"at {end} cut {link} {d} 0")
    out += [f"at {cycle} kill {node}" for node, cycle in kills]
    return sorted(out, key=lambda line: int(line.split()[1]))


def run(exe: Path, name: str, schedule: str) -> dict:
    """Run schedule text ``schedule`` (the directives of fabric_experiment.cpp) as run ``name``;
    the schedule and its JSON result are kept under build/report/fabric_runs/."""
    RUNS.mkdir(parents=True, exist_ok=True)
    path = RUNS / f"{name}.txt"
    path.write_text(schedule)
    done = subprocess.run([str(exe), str(path)], capture_output=True, text=True)
    if done.returncode:
        log = RUNS / f"{name}.log"
        log.write_text(done.stdout + done.stderr)
        raise RuntimeError(f"fabric run {name} failed: {done.stderr.strip()} (log {log})")
    path.with_suffix(".json").write_text(done.stdout)
    return json.loads(done.stdout)


def changes(raw: dict) -> tuple:
    """A run's logs by what they follow: ({(node, link): [(cycle, believed up)]}, {link: [(cycle,
    up)]}, {node: [(cycle, mask of its ports UP)]}), each in cycle order."""
    beliefs, actual, ports = {}, {}, {}
    for cycle, node, link, v in raw["beliefs"]:
        beliefs.setdefault((node, link), []).append((cycle, v))
    for cycle, link, v in raw["actual"]:
        actual.setdefault(link, []).append((cycle, v))
    for cycle, node, mask in raw.get("ports", []):
        ports.setdefault(node, []).append((cycle, mask))
    return beliefs, actual, ports


def value_at(log: list, cycle: int, initial=1):
    """The value a change log ([(cycle, value)] in order) holds at ``cycle``."""
    value = initial
    for c, v in log:
        if c > cycle:
            break
        value = v
    return value


def ghost_totals(raw: dict, topology, holding, death: dict, end: int) -> dict:
    """The ghost meter's totals (sim/harness/ghost.py, PROTOCOL.md 10.4) over a run's logs, from
    its origin to ``end``: ``holding(link)`` the nodes that hold a belief of ``link``, ``death``
    {node: cycle it died}."""
    from sim.harness.ghost import GhostMeter

    origin = raw["origin"]
    beliefs, actual, _ = changes(raw)

    def alive(node, cycle):
        return node not in death or cycle < death[node]

    links = [str(i) for i in range(len(topology.links))]
    observers = {
        str(n): [str(i) for i in range(len(links)) if n in holding(i)]
        for n in range(topology.num_nodes)
        if alive(n, origin)
    }
    meter = GhostMeter(links, observers, start=origin)
    events = [(c, 0, (link, v)) for link, log in actual.items() for c, v in log]
    events += [(c, 1, (node, link, v)) for (node, link), log in beliefs.items() for c, v in log]
    events += [(c, 2, node) for node, c in death.items() if c > origin]
    for c, kind, arg in sorted(events):
        if c >= end:
            break
        c = max(c, origin)
        if kind == 0:
            meter.actual(c, str(arg[0]), bool(arg[1]))
        elif kind == 1:
            node, link, v = arg
            if alive(node, c):
                meter.believe(c, str(node), str(link), bool(v))
        else:
            meter.retire(c, str(arg))
    return meter.finish(end).as_dict()["totals"]
