"""Scenarios as files: one TOML file describes a topology, its links, the traffic and a fault
schedule (docs/SCENARIOS.md has the format). ``python -m sim.experiment --scenario-file F`` and
``python -m sim.triangle --scenario-file F`` run one; every built-in scenario of both is such a
file under scenarios/.

:func:`load` reads and checks a file and returns a :class:`ScenarioSpec`; a file that breaks a
rule raises :class:`ScenarioFileError`, which names the file, the line and the field, before
anything runs. :meth:`ScenarioSpec.schedule` turns the faults (fixed, or drawn at a rate) into
the fixed list of :class:`Fault` a run applies, from a seed.

Times are cycles after the *origin*, the point both commands start their fault schedules from
(the experiment: 2,000 cycles after both ends are first up; the triangle: 303 cycles after every
port is up). A time is an integer number of cycles or a string with a unit: ``"1 us"``,
``"30 ms"``, ``"2 s"``, ``"500 ns"``, ``"4000 cycles"``, converted at the file's clock; or, in
the files of ``python -m sim.fabric_contrast`` and campaigns only, ``"1.5 horizons"``: multiples of
the time the contrast fabric takes to find a dead link, which its timers' scale sets.
"""

import math
import random
import re
import tomllib
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"

TOPOLOGIES = ("pair", "triangle", "mesh", "torus")
# Fault kind -> the keys it takes beside kind, at / every / within, length and count.
KINDS = {
    "cut": ("link", "directions"),
    "gray": ("link", "directions"),
    "latency": ("link", "directions", "latency"),
    "completer": ("end", "delay"),
    "node_death": ("node",),
    "partition": ("node",),
}
_TIMING = ("at", "every", "within", "length", "count")
# Unit -> microseconds ("cycles": taken as they are).
_UNITS = {
    "cycles": None,
    "cycle": None,
    "ns": Fraction(1, 1000),
    "us": Fraction(1),
    "ms": Fraction(1000),
    "s": Fraction(10**6),
}
_HORIZON = ("horizon", "horizons")  # the contrast fabric's detection time: see loads()
_TIME = re.compile(r"^\s*([0-9][0-9_]*(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)\s*([a-z]+)\s*$")


class ScenarioFileError(ValueError):
    """A scenario file that breaks a rule: ``path:line: field: message``."""

    def __init__(self, path, line: int | None, field: str, message: str):
        self.path, self.line, self.field, self.message = str(path), line, field, message
        where = f"{self.path}:{line}" if line else self.path
        super().__init__(f"{where}: {field}: {message}" if field else f"{where}: {message}")


@dataclass(frozen=True)
class Fault:
    """One fault of a fixed schedule. ``at``: cycles after the origin; ``length``: cycles, or None
    for a fault that lasts; ``link``: the link's index in the topology (0 for a pair);
    ``directions``: ("ab",), ("ba",) or both, A being the link's lower-numbered node; ``node``:
    node_death and partition; ``ends``: the completer's ends (0: A); ``value``: the new latency
    (latency) or the completer's delay (completer), in cycles."""

    kind: str
    at: int
    length: int | None = None
    link: int = 0
    directions: tuple = ()
    node: int | None = None
    ends: tuple = ()
    value: int | None = None

    @property
    def end(self) -> int | None:
        return None if self.length is None else self.at + self.length


@dataclass(frozen=True)
class FaultRule:
    """A fault as the file states it: fixed (``at``) or drawn (``every`` cycles on average, a
    Poisson process, over ``within`` cycles from the origin, or ``count`` of them); ``length``
    fixed, None, or a (min, max) range drawn uniformly; ``link`` / ``node`` an index or "any"."""

    fault: Fault
    every: int | None = None
    within: int | None = None
    count: int | None = None
    length_range: tuple | None = None  # (min, max, log): uniform in cycles, or in their logarithm
    any_link: bool = False
    any_node: bool = False


@dataclass(frozen=True)
class ScenarioSpec:
    """A checked scenario file. ``latency`` and ``ber``: one per link, in the topology's order."""

    name: str
    description: str
    topology: str
    nodes: int
    clock_mhz: float
    latency: tuple
    ber: tuple
    load: float | None
    tokens: float | None
    rules: tuple
    run: dict = field(default_factory=dict)  # model name or "length" -> cycles after the origin
    flows: dict = field(default_factory=dict)  # "between": (node, node), "from": cycles after the origin
    path: str = "<string>"
    shape: tuple = ()  # a torus's (rows, cols)
    lines: dict = field(default_factory=dict, compare=False, repr=False)  # where each key is

    def refuse(self, field_name: str, message: str):
        """Raise the ScenarioFileError of a file a command cannot run, at the line of
        ``field_name`` ("topology", "links.latency", "faults[2].kind", or a table's name)."""
        m = re.fullmatch(r"(?:(\w+)(?:\[(\d+)\])?\.)?(\w+)", field_name)
        table, index, key = (m.group(1) or "", m.group(2), m.group(3)) if m else ("", None, None)
        where = (table, None if index is None else int(index), key)
        raise ScenarioFileError(self.path, _line_at(self.lines, where), field_name, message)

    @property
    def num_links(self) -> int:
        return num_links(self.topology, self.nodes)

    @property
    def random(self) -> bool:
        """Whether the schedule is drawn (some fault has ``every``, a range or "any")."""
        return any(r.every is not None or r.length_range or r.any_link or r.any_node for r in self.rules)

    def schedule(self, seed: int = 1) -> list[Fault]:
        """The faults of a run, in the order of their start cycles: the fixed ones as written,
        the drawn ones from ``seed`` (the same seed, the same schedule)."""
        rng = random.Random(f"{self.name}/{seed}")
        out = []
        for rule in self.rules:
            starts = [rule.fault.at]
            if rule.every is not None:
                starts, t = [], rule.fault.at
                while True:
                    t += max(1, round(rng.expovariate(1 / rule.every)))
                    if (rule.within is not None and t >= rule.fault.at + rule.within) or (
                        rule.count is not None and len(starts) == rule.count
                    ):
                        break
                    starts.append(t)
            for at in starts:
                fault = replace(rule.fault, at=at)
                if rule.length_range:
                    lo, hi, log = rule.length_range
                    length = round(math.exp(rng.uniform(math.log(lo), math.log(hi)))) if log else rng.randint(lo, hi)
                    fault = replace(fault, length=length)
                if rule.any_link:
                    fault = replace(fault, link=rng.randrange(self.num_links))
                if rule.any_node:
                    fault = replace(fault, node=rng.randrange(self.nodes))
                out.append(fault)
        return sorted(out, key=lambda f: f.at)


# --- Reading ---------------------------------------------------------------------------------
def load(path, horizon: int | None = None) -> ScenarioSpec:
    """The scenario in file ``path``; :class:`ScenarioFileError` for a file that cannot be read
    or breaks a rule of docs/SCENARIOS.md. ``horizon``: cycles per ``horizon``, the time unit of
    the contrast fabric's scenarios (a file that uses it cannot be read without)."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise ScenarioFileError(path, None, "", f"cannot read the file ({e.strerror})") from None
    return loads(text, path, horizon)


def loads(text: str, path="<string>", horizon: int | None = None) -> ScenarioSpec:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        line = getattr(e, "lineno", None) or _line_of_message(str(e))
        raise ScenarioFileError(path, line, "", f"not valid TOML: {e}") from None
    return _Reader(doc, text, path, horizon).spec()


def _line_of_message(message: str) -> int | None:
    m = re.search(r"line (\d+)", message)
    return int(m.group(1)) if m else None


def _lines_of(text: str) -> dict:
    """{(table, index or None, key or None): line} for the tables and keys of ``text``: enough
    for naming the line of a field, without a TOML parser that keeps positions."""
    out, table, counts = {}, ("", None), {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if m := re.fullmatch(r"\[\[\s*([A-Za-z0-9_]+)\s*\]\]", line):
            index = counts[m.group(1)] = counts.get(m.group(1), -1) + 1
            table = (m.group(1), index)
            out[(*table, None)] = number
        elif m := re.fullmatch(r"\[\s*([A-Za-z0-9_]+)\s*\]", line):
            table = (m.group(1), None)
            out[(*table, None)] = number
        elif m := re.match(r"([A-Za-z0-9_]+)\s*=", line):
            out.setdefault((*table, m.group(1)), number)
    return out


def _line_at(lines: dict, where: tuple) -> int | None:
    """The line of field ``where`` (table, index, key) in :func:`_lines_of`'s map: the key's, else
    its table's; a key of the top level that names a table (``traffic``) is that table's line."""
    table, index, key = where
    return lines.get(where) or lines.get((key, None, None)) or lines.get((table, index, None))


class _Reader:
    def __init__(self, doc: dict, text: str, path, horizon: int | None = None):
        self.doc, self.path, self.lines = doc, path, _lines_of(text)
        self.clock = Fraction(156.25)
        self.horizon = horizon

    def fail(self, where: tuple, message: str):
        """``where``: (table, index, key) as :func:`_lines_of` keys them; table "" is the top."""
        table, index, key = where
        name = table + (f"[{index}]" if index is not None else "")
        name = ".".join(p for p in (name, key) if p)
        raise ScenarioFileError(self.path, _line_at(self.lines, where), name, message)

    def only(self, table: dict, allowed, where: tuple):
        for key in table:
            if key not in allowed:
                self.fail((*where[:2], key), f"unknown key (this table takes {', '.join(allowed)})")

    def number(self, value, where, *, low=None, high=None, integer=False):
        if isinstance(value, bool) or not isinstance(value, int | float) or (integer and not isinstance(value, int)):
            self.fail(where, f"must be {'an integer' if integer else 'a number'}, not {value!r}")
        if (low is not None and value < low) or (high is not None and value > high):
            bounds = f"at least {low}" if high is None else f"between {low} and {high}"
            self.fail(where, f"must be {bounds}, not {value!r}")
        return value

    def cycles(self, value, where, *, low=0) -> int:
        """A time: an integer of cycles or a string with a unit, in cycles at the file's clock."""
        if isinstance(value, str):
            m = _TIME.match(value)
            if not m or m.group(2) not in (*_UNITS, *_HORIZON):
                self.fail(
                    where,
                    f"{value!r} is not a time: write cycles as an integer or '<number> <unit>' "
                    f"with a unit of {', '.join((*_UNITS, *(_HORIZON if self.horizon else ())))}",
                )
            amount = Fraction(m.group(1).replace("_", ""))
            if m.group(2) in _HORIZON:
                if self.horizon is None:
                    self.fail(
                        where,
                        "horizons are the contrast fabric's time to find a dead link: only "
                        "python -m sim.fabric_contrast and campaigns read them; give cycles or a time",
                    )
                # Down to a whole cycle: a fault at 1.5 horizons falls inside the second one.
                value = math.floor(amount * self.horizon)
            else:
                unit = _UNITS[m.group(2)]
                value = amount if unit is None else amount * unit * self.clock
                if value.denominator != 1 and unit is None:
                    self.fail(where, f"{value!r} cycles is not a whole number")
                value = round(value)
        elif isinstance(value, bool) or not isinstance(value, int):
            self.fail(where, f"must be a time (cycles, or a string such as '1 us'), not {value!r}")
        if value < low:
            self.fail(where, f"must be at least {low} cycles, not {value}")
        return value

    def spec(self) -> ScenarioSpec:
        top = ("", None)
        d = self.doc
        self.only(
            d,
            (
                "name",
                "description",
                "topology",
                "nodes",
                "rows",
                "cols",
                "clock_mhz",
                "links",
                "traffic",
                "faults",
                "run",
                "flows",
            ),
            top,
        )
        for key in ("name", "topology"):
            if key not in d:
                self.fail((*top, key), "missing (every scenario file names itself and its topology)")
        name, topology = d["name"], d["topology"]
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
            self.fail((*top, "name"), f"must be a word of letters, digits, '_', '.' or '-', not {name!r}")
        if topology not in TOPOLOGIES:
            self.fail((*top, "topology"), f"must be one of {', '.join(TOPOLOGIES)}, not {topology!r}")
        description = d.get("description", "")
        if not isinstance(description, str):
            self.fail((*top, "description"), "must be a string")
        nodes = {"pair": 2, "triangle": 3}.get(topology)
        if topology == "mesh":
            if "nodes" not in d:
                self.fail((*top, "nodes"), "missing (a mesh needs its number of nodes)")
            nodes = self.number(d["nodes"], (*top, "nodes"), low=3, high=16, integer=True)
        shape = ()
        if topology == "torus":
            for key in ("rows", "cols"):
                if key not in d:
                    self.fail((*top, key), "missing (a torus needs rows and cols)")
            shape = tuple(self.number(d[k], (*top, k), low=3, high=8, integer=True) for k in ("rows", "cols"))
            nodes = shape[0] * shape[1]
        else:
            for key in ("rows", "cols"):
                if key in d:
                    self.fail((*top, key), "only a torus has rows and cols")
        if topology != "mesh" and "nodes" in d and d["nodes"] != nodes:
            self.fail((*top, "nodes"), f"a {topology} has {nodes} nodes, not {d['nodes']!r}")
        if "clock_mhz" in d:
            self.clock = Fraction(self.number(d["clock_mhz"], (*top, "clock_mhz"), low=1, high=2000))
        links = num_links(topology, nodes)
        latency, ber = self.links(links)
        load, tokens = self.traffic()
        faults = d.get("faults", [])
        if not isinstance(faults, list):
            self.fail((*top, "faults"), "must be an array of tables ([[faults]])")
        rules = tuple(self.fault(f, i, topology, nodes, links) for i, f in enumerate(faults))
        run = self.run()
        flows = self.flows(nodes)
        return ScenarioSpec(
            name,
            description,
            topology,
            nodes,
            float(self.clock),
            latency,
            ber,
            load,
            tokens,
            rules,
            run,
            flows=flows,
            path=str(self.path),
            shape=shape,
            lines=self.lines,
        )

    def per_link(self, value, where, num_links, convert):
        if isinstance(value, list):
            if len(value) != num_links:
                self.fail(where, f"a list must give each of the {num_links} links one value, not {len(value)}")
            return tuple(convert(v) for v in value)
        return (convert(value),) * num_links

    def table(self, name: str, allowed) -> tuple:
        """Top-level table ``name`` (empty when absent), checked for unknown keys; and where it is."""
        t, where = self.doc.get(name, {}), (name, None)
        if not isinstance(t, dict):
            self.fail(("", None, name), f"must be a table ([{name}])")
        self.only(t, allowed, where)
        return t, where

    def links(self, num_links):
        t, where = self.table("links", ("latency", "ber"))
        latency = self.per_link(
            t.get("latency", 8), (*where, "latency"), num_links, lambda v: self.cycles(v, (*where, "latency"), low=1)
        )
        ber = self.per_link(
            t.get("ber", 0.0),
            (*where, "ber"),
            num_links,
            lambda v: float(self.number(v, (*where, "ber"), low=0, high=0.5)),
        )
        return latency, ber

    def traffic(self):
        t, where = self.table("traffic", ("load", "tokens"))
        load = t.get("load")
        tokens = t.get("tokens")
        if load is not None:
            load = float(self.number(load, (*where, "load"), low=0, high=1))
        if tokens is not None:
            tokens = float(self.number(tokens, (*where, "tokens"), low=0, high=1))
        return load, tokens

    def run(self):
        t, where = self.table("run", ("length", "oae", "ltssm"))
        return {k: self.cycles(v, (*where, k), low=1) for k, v in t.items()}

    def flows(self, nodes):
        t, where = self.table("flows", ("between", "from"))
        out = {}
        if "between" in t:
            pair = t["between"]
            if not isinstance(pair, list) or len(pair) != 2:
                self.fail((*where, "between"), f"must be two nodes, [a, b], not {pair!r}")
            pair = tuple(self.number(n, (*where, "between"), low=0, high=nodes - 1, integer=True) for n in pair)
            if pair[0] == pair[1]:
                self.fail((*where, "between"), f"must be two different nodes, not {list(pair)}")
            out["between"] = pair
        if "from" in t:
            out["from"] = self.cycles(t["from"], (*where, "from"))
        return out

    def fault(self, f, i, topology, nodes, num_links) -> FaultRule:
        where = ("faults", i)
        if not isinstance(f, dict):
            self.fail((*where, None), "must be a table")
        kind = f.get("kind")
        if kind is None:
            self.fail((*where, None), f"kind missing: every fault is one of {', '.join(KINDS)}")
        if kind not in KINDS:
            self.fail((*where, "kind"), f"must be one of {', '.join(KINDS)}, not {kind!r}")
        pair = topology == "pair"
        if pair and kind in ("node_death", "partition"):
            self.fail((*where, "kind"), f"{kind} needs a fabric (topology triangle, mesh or torus), not a pair")
        if not pair and kind == "completer":
            self.fail((*where, "kind"), "completer is a fault of the pair experiment's contrast link (topology pair)")
        self.only(f, ("kind", *_TIMING, *KINDS[kind]), (*where, None))
        if ("at" in f) == ("every" in f):
            self.fail(
                (*where, "at" if "at" in f else None), "give a fault either at (a cycle) or every (a mean interval)"
            )
        rule = {}
        at = self.cycles(f.get("at", 0), (*where, "at"))
        if "every" in f:
            rule["every"] = self.cycles(f["every"], (*where, "every"), low=1)
            if "within" in f and "count" in f:
                self.fail((*where, "count"), "a drawn fault stops at within (a time) or after count, not both")
            if "within" not in f and "count" not in f:
                self.fail((*where, "every"), "a drawn fault needs within (a time) or count (how many)")
            if "within" in f:
                rule["within"] = self.cycles(f["within"], (*where, "within"), low=1)
            else:
                rule["count"] = self.number(f["count"], (*where, "count"), low=1, high=100_000, integer=True)
        elif "within" in f or "count" in f:
            self.fail((*where, "within" if "within" in f else "count"), "goes with every, not with at")
        length = None
        if "length" in f:
            if kind == "node_death":
                self.fail((*where, "length"), "a node that dies stays dead (node_death takes no length)")
            value = f["length"]
            if isinstance(value, dict):
                self.only(value, ("min", "max", "scale"), (*where, "length"))
                if not {"min", "max"} <= set(value):
                    self.fail((*where, "length"), "a range needs min and max")
                lo = self.cycles(value["min"], (*where, "length"), low=1)
                hi = self.cycles(value["max"], (*where, "length"), low=1)
                if hi < lo:
                    self.fail((*where, "length"), f"max ({hi} cycles) is below min ({lo} cycles)")
                scale = value.get("scale", "linear")
                if scale not in ("linear", "log"):
                    self.fail((*where, "length"), f"scale must be linear or log, not {scale!r}")
                rule["length_range"] = (lo, hi, scale == "log")
            else:
                length = self.cycles(value, (*where, "length"), low=1)
        kw = {}

        def index(key, value, count):
            """A link or node: its index, or "any" (drawn per occurrence; 0 until then)."""
            if value == "any":
                rule[f"any_{key}"] = True
                return 0
            if isinstance(value, str):
                self.fail((*where, key), f'must be a {key} index (0 to {count - 1}) or "any", not {value!r}')
            return self.number(value, (*where, key), low=0, high=count - 1, integer=True)

        if "link" in KINDS[kind]:
            kw["link"] = index("link", f.get("link", 0), num_links)
            directions = f.get("directions", "both")
            if directions not in ("ab", "ba", "both"):
                self.fail((*where, "directions"), f"must be ab, ba or both, not {directions!r}")
            kw["directions"] = ("ab", "ba") if directions == "both" else (directions,)
        if "node" in KINDS[kind]:
            if "node" not in f:
                self.fail((*where, None), f"{kind} needs node")
            kw["node"] = index("node", f["node"], nodes)
        if kind == "latency":
            if "latency" not in f:
                self.fail((*where, None), "latency needs latency (the new latency each way)")
            kw["value"] = self.cycles(f["latency"], (*where, "latency"), low=1)
        if kind == "completer":
            if "delay" not in f:
                self.fail((*where, None), "completer needs delay (cycles the completer takes to answer)")
            kw["value"] = self.cycles(f["delay"], (*where, "delay"), low=1)
            ends = f.get("end", "both")
            if ends not in ("a", "b", "both"):
                self.fail((*where, "end"), f"must be a, b or both, not {ends!r}")
            kw["ends"] = (0, 1) if ends == "both" else ("ab".index(ends),)
        return FaultRule(Fault(kind, at, length, **kw), **rule)


def num_links(topology: str, nodes: int) -> int:
    """Links of a topology: a pair's one, a full mesh's one per pair of nodes, a torus's three
    per node (right, down, diagonal)."""
    return {"pair": 1, "torus": 3 * nodes}.get(topology, nodes * (nodes - 1) // 2)


def down_intervals(faults) -> list:
    """The cycles (after the origin) a link is actually down: a cut in either direction or a
    gray failure (data words dropped). [(start, end or None)], merged."""
    return merge_spans((f.at, f.end) for f in faults if f.kind in ("cut", "gray"))


def merge_spans(spans) -> list:
    """``spans`` [(start, end or None)] as their union: overlapping or touching ones joined, in
    order of start (None: to the end)."""
    merged = []
    for start, end in sorted(spans, key=lambda s: s[0]):
        if merged and (merged[-1][1] is None or start <= merged[-1][1]):
            last = merged[-1]
            merged[-1] = (last[0], None if end is None or last[1] is None else max(last[1], end))
        else:
            merged.append((start, end))
    return merged


def dumps(spec: ScenarioSpec, faults, name: str, note: str = "") -> str:
    """A scenario file of ``spec`` with the fixed schedule ``faults`` (one drawn by
    :meth:`ScenarioSpec.schedule`) under ``name``: what a campaign saves of a run, so that the
    run's command replays it."""
    out = [f"# {line}".rstrip() for line in note.splitlines()]
    out += [f"name = {_toml(name)}", f"description = {_toml(spec.description)}", f"topology = {_toml(spec.topology)}"]
    if spec.topology == "mesh":
        out.append(f"nodes = {spec.nodes}")
    if spec.topology == "torus":
        out += [f"rows = {spec.shape[0]}", f"cols = {spec.shape[1]}"]
    out += [
        f"clock_mhz = {spec.clock_mhz!r}",
        "",
        "[links]",
        f"latency = {list(spec.latency)}",
        f"ber = {list(spec.ber)}",
    ]
    traffic = {k: v for k, v in (("load", spec.load), ("tokens", spec.tokens)) if v is not None}
    if traffic:
        out += ["", "[traffic]", *(f"{k} = {v!r}" for k, v in traffic.items())]
    if spec.run:
        out += ["", "[run]", *(f"{k} = {v}" for k, v in spec.run.items())]
    if spec.flows:
        flows = {"between": list(spec.flows.get("between", ())), "from": spec.flows.get("from")}
        out += ["", "[flows]", *(f"{k} = {v}" for k, v in flows.items() if v not in (None, []))]
    for f in faults:
        out += ["", "[[faults]]", f"kind = {_toml(f.kind)}", f"at = {f.at}"]
        if f.length is not None:
            out.append(f"length = {f.length}")
        if f.kind in ("cut", "gray", "latency"):
            out += [f"link = {f.link}", f"directions = {_toml('both' if len(f.directions) == 2 else f.directions[0])}"]
        if f.kind in ("node_death", "partition"):
            out.append(f"node = {f.node}")
        if f.kind == "latency":
            out.append(f"latency = {f.value}")
        if f.kind == "completer":
            out += [f"end = {_toml('both' if len(f.ends) == 2 else 'ab'[f.ends[0]])}", f"delay = {f.value}"]
    return "\n".join(out) + "\n"


def _toml(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def add_argument(parser) -> None:
    """The commands' ``--scenario-file`` option (repeatable, beside ``--scenario``)."""
    parser.add_argument(
        "--scenario-file",
        action="append",
        type=Path,
        metavar="FILE",
        help="run the scenario of this file (docs/SCENARIOS.md; repeatable; with --scenario, both)",
    )


def builtin(folder: str, names, horizon: int | None = None) -> dict:
    """{name: ScenarioSpec} of the files ``scenarios/<folder>/<name>.toml``, in ``names``' order
    (``horizon``: as :func:`load` takes it)."""
    out = {}
    for name in names:
        spec = load(SCENARIOS / folder / f"{name}.toml", horizon)
        if spec.name != name:
            raise ScenarioFileError(spec.path, None, "name", f"must be the file's name, {name!r}")
        out[name] = spec
    return out


__all__ = [
    "Fault",
    "ScenarioFileError",
    "ScenarioSpec",
    "add_argument",
    "builtin",
    "down_intervals",
    "dumps",
    "load",
    "loads",
]
