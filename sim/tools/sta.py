"""Static timing analysis of a placed and routed design from nextpnr's SDF, for the worst paths.

nextpnr reports one critical path per clock; ``make synth`` wants the few worst, each named by
the registers it starts and ends at, so that a change that moves the worst path elsewhere is
visible. The SDF nextpnr writes (``--sdf``) holds every delay it times with: each routed
connection (``INTERCONNECT``), each cell arc (``IOPATH``, from a clock pin for a register's or a
memory's output) and each setup check (``SETUPHOLD``). This module takes the longest arrival at
every pin from those (the max corner, as nextpnr's setup analysis), adds the setup time at every
checked input, and traces the worst path into each capturing register back to the register
that launched it.

Clock domains come from the synthesized netlist (yosys JSON): a register's clock pin is wired
to one of the top's ports. Paths between two domains are left out: in these designs they cross
through synchronizers and carry no single-cycle requirement (nextpnr times them apart too).
"""

import json
import re
from collections import defaultdict, deque
from dataclasses import dataclass
from pathlib import Path

# Pins whose arcs launch a path (a register's or a memory's clock).
CLOCK_PINS = frozenset({"CLK", "WCK", "CLKA", "CLKB"})

_INSTANCE = re.compile(r"\(INSTANCE\s*(.*?)\)\s*$")
_INTERCONNECT = re.compile(r"\(INTERCONNECT\s+(\S+)\s+(\S+)\s+\((\d+):(\d+):(\d+)\)")
_IOPATH = re.compile(r"\(IOPATH\s+(\S+)\s+(\S+)\s+\((\d+):(\d+):(\d+)\)")
_SETUP = re.compile(r"\(SETUPHOLD\s+\((?:posedge|negedge)\s+(\S+)\)\s+\(posedge\s+(\S+)\)\s+\((\d+):(\d+):(\d+)\)")


@dataclass(frozen=True)
class TimingPath:
    """One worst path: launching and capturing cells, their clock domain, delay in ns (setup
    included) and the cells between them."""

    start: str
    end: str
    domain: str | None
    delay_ns: float
    cells: int
    trail: tuple = ()  # (pin, arrival ns) from the launching register's output to the checked input


def register_name(cell: str) -> str:
    """The RTL name of a placed flip-flop or memory: nextpnr's cell name without the suffix
    yosys gave it."""
    return re.sub(r"_TRELLIS_FF_Q.*$|_DP16KD.*$|_TRELLIS_DPR16X4.*$", "", cell)


def _unescape(name: str) -> str:
    return name.replace("\\", "")


def _split_pin(ref: str) -> tuple[str, str]:
    inst, _, pin = ref.rpartition("/")
    return _unescape(inst), pin


def parse_sdf(text: str):
    """(arcs, launches, checks): arcs {pin: [(next pin, ps)]} over interconnect and cell arcs;
    launches {output pin: clock-to-output ps, with (cell, clock pin)}; checks {input pin: (setup
    ps, clock pin)}. Pins are ``cell/PIN`` with the cell's name unescaped."""
    arcs = defaultdict(list)
    launches, checks = {}, {}
    cell = None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("(INTERCONNECT"):
            found = _INTERCONNECT.match(line)
            if found:
                src, dst = _split_pin(found[1]), _split_pin(found[2])
                arcs["/".join(src)].append(("/".join(dst), int(found[5])))
        elif line.startswith("(INSTANCE"):
            found = _INSTANCE.match(line)
            cell = _unescape(found[1]) if found else None
        elif line.startswith("(IOPATH") and cell is not None:
            found = _IOPATH.match(line)
            if found:
                src, dst, ps = found[1], found[2], int(found[5])
                if src in CLOCK_PINS:
                    out = f"{cell}/{dst}"
                    launches[out] = max(ps, launches.get(out, (0, None))[0]), src
                else:
                    arcs[f"{cell}/{src}"].append((f"{cell}/{dst}", ps))
        elif line.startswith("(SETUPHOLD") and cell is not None:
            found = _SETUP.match(line)
            if found:
                pin, clock, ps = f"{cell}/{found[1]}", found[2], int(found[5])
                if ps >= checks.get(pin, (-1, None))[0]:
                    checks[pin] = (ps, clock)
    return arcs, launches, checks


def _top(netlist: dict) -> dict:
    """The top module of a yosys JSON netlist."""
    return next(m for m in netlist["modules"].values() if int(m.get("attributes", {}).get("top", 0)))


def clock_domains(netlist: dict) -> dict:
    """{(cell name, clock pin): the top port driving that pin} from a yosys JSON netlist."""
    top = _top(netlist)
    port_of = {bit: name for name, port in top["ports"].items() for bit in port["bits"]}
    domains = {}
    for name, cell in top["cells"].items():
        for pin, bits in cell["connections"].items():
            if pin in CLOCK_PINS and bits and bits[0] in port_of:
                domains[name, pin] = port_of[bits[0]]
    return domains


# The cells a memory maps to: block RAMs, and LUT-RAM blocks.
RAM_CELLS = frozenset({"DP16KD", "TRELLIS_DPR16X4"})


def ram_cells(netlist: dict) -> frozenset:
    """The names of a yosys JSON netlist's memory cells (RAM_CELLS)."""
    return frozenset(name for name, cell in _top(netlist)["cells"].items() if cell["type"] in RAM_CELLS)


def _memory_of(rams: frozenset, group):
    """``group``, with every cell of one memory named as the memory: yosys names the block RAMs
    or LUT-RAM blocks a memory maps to ``<memory>.<row>.<column>`` (nextpnr adds ``$<part>`` to
    a LUT-RAM block's slices), and a path into any of them is a path into the memory."""

    def name(cell: str) -> str:
        base = cell.split("$")[0]
        return re.sub(r"\.\d+\.\d+$", "", group(base)) if base in rams else group(cell)

    return name


def _domain(domains: dict, cell: str, clock_pin: str):
    """A placed cell's domain: packing names a memory's parts ``<cell>$<part>``."""
    return domains.get((cell, clock_pin)) or domains.get((cell.split("$")[0], clock_pin))


def worst_paths(sdf_text: str, netlist: dict, group=register_name, count: int = 3) -> list[TimingPath]:
    """The ``count`` worst single-domain paths, at most one per capturing register or memory as
    ``group`` names it (``group(cell)``: the RTL name of a placed cell), worst first."""
    arcs, launches, checks = parse_sdf(sdf_text)
    domains = clock_domains(netlist)
    group = _memory_of(ram_cells(netlist), group)
    # Longest arrival from any launch, in topological order of the arcs (registers cut every
    # cycle: their clock arcs are launches, not arcs).
    indegree = defaultdict(int)
    for outs in arcs.values():
        for dst, _ in outs:
            indegree[dst] += 1
    arrival = {pin: ps for pin, (ps, _) in launches.items()}
    came_from = {}
    ready = deque(pin for pin in set(arcs) | set(launches) if indegree[pin] == 0)
    while ready:
        pin = ready.popleft()
        here = arrival.get(pin)
        for dst, ps in arcs.get(pin, ()):
            if here is not None and here + ps > arrival.get(dst, -1):
                arrival[dst], came_from[dst] = here + ps, pin
            indegree[dst] -= 1
            if indegree[dst] == 0:
                ready.append(dst)
    best = {}
    for pin, (setup, clock) in checks.items():
        if pin not in arrival:
            continue
        total = arrival[pin] + setup
        trail, cells, pins = pin, set(), [pin]
        while trail in came_from:
            cells.add(trail.rpartition("/")[0])
            trail = came_from[trail]
            pins.append(trail)
        start_cell = trail.rpartition("/")[0]
        end_cell = pin.rpartition("/")[0]
        launch_domain = _domain(domains, start_cell, launches[trail][1]) if trail in launches else None
        capture_domain = _domain(domains, end_cell, clock)
        if launch_domain and capture_domain and launch_domain != capture_domain:
            continue
        end = group(end_cell)
        if end not in best or total > best[end][0]:
            trail_out = tuple((p, round(arrival[p] / 1000, 3)) for p in reversed(pins))
            best[end] = (
                total,
                group(start_cell),
                capture_domain or launch_domain,
                len(cells - {start_cell, end_cell}),
                trail_out,
            )
    ranked = sorted(best.items(), key=lambda item: -item[1][0])[:count]
    return [
        TimingPath(start, end, domain, round(total / 1000, 3), cells, trail)
        for end, (total, start, domain, cells, trail) in ranked
    ]


def worst_paths_of(sdf: Path, netlist: Path, count: int = 3) -> list[dict]:
    """:func:`worst_paths` from files, as report rows."""
    paths = worst_paths(sdf.read_text(), json.loads(netlist.read_text()), count=count)
    return [{"from": p.start, "to": p.end, "clock": p.domain, "delay_ns": p.delay_ns, "cells": p.cells} for p in paths]


def main(argv=None) -> int:
    """``python -m sim.tools.sta build/synth/<name> [--count N] [--trail]``: the worst paths of a
    component ``make synth`` placed, from its timing.sdf and netlist."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m sim.tools.sta", description=main.__doc__)
    parser.add_argument("work", type=Path, help="a component's directory under build/synth/")
    parser.add_argument("--count", type=int, default=10, help="paths to list (default 10)")
    parser.add_argument("--trail", action="store_true", help="every pin of each path with its arrival")
    args = parser.parse_args(argv)
    sdf, netlist = args.work / "timing.sdf", args.work / f"{args.work.name}.json"
    for needed in (sdf, netlist):
        if not needed.is_file():
            print(f"sta: no {needed}: run `python -m sim.tools.synth {args.work.name}` first")
            return 2
    for path in worst_paths(sdf.read_text(), json.loads(netlist.read_text()), count=args.count):
        print(f"{path.delay_ns:6.3f} ns  {path.start} -> {path.end} ({path.domain}, {path.cells} cells between)")
        for pin, at in path.trail if args.trail else ():
            print(f"          {at:6.3f}  {pin}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
