"""Build an exported design with Verilator and run a cocotb test module on it (cocotb 2 runner).

Every call gets its own build directory; Verilator's and the simulation's output go to
``build.log`` there and ``sim.log`` in the test directory. Waveforms are opt-in (``waves=True`` or ``WAVES=1``):
FST when lz4 is available (installed on demand), else VCD with a one-line notice.
"""

import contextlib
import fcntl
import json
import os
import sys
from pathlib import Path

from cocotb_tools.runner import Verilator

from sim.tools.seeds import regression_seed, replay_hint
from sim.tools.toolchain import activate, ensure_verilator, fst_available
from sim.tools.verilog import BUILD, WAIVERS

COCOTB_DIR = Path(__file__).resolve().parents[2] / "cocotb_tests"
# The C++ of a Verilated model the C++ loops run (sim/harness/verilator_free.py: `make sim`,
# `make bench`) is compiled for speed on this machine: its per-cycle code at -O2 instead of
# Verilator's default -Os (the link pair runs about 25% faster, for 15% more compile time) and
# -march=native (about 10% more; a model under build/ never moves to another machine); its
# set-up code (the "slow" files) at -O0, which it runs once (the pair builds in 67 CPU-seconds
# against 77 with everything at -O2, at the same speed).
MODEL_CFLAGS = (
    "-CFLAGS",
    "-march=native",
    "-MAKEFLAGS",
    "OPT_FAST=-O2",
    "-MAKEFLAGS",
    "OPT_SLOW=-O0",
    "-MAKEFLAGS",
    "OPT_GLOBAL=-O2",
)
# The three-node fabric's model is ten times the pair's and its compile weighs more than its
# speed: at -O1 it builds in 150 CPU-seconds against 294 at -O2 (set-up code at -O2 too), and
# `make sim`'s node_death runs in 21-23 s either way.
FABRIC_MODEL_CFLAGS = (
    "-CFLAGS",
    "-march=native",
    "-MAKEFLAGS",
    "OPT_FAST=-O1",
    "-MAKEFLAGS",
    "OPT_SLOW=-O0",
    "-MAKEFLAGS",
    "OPT_GLOBAL=-O2",
)
# Under cocotb the Python side takes most of a run and the compile weighs more: the model's
# per-cycle code at -O1, its set-up code (Verilator's "slow" files) at -O0. On the link pair
# of the preemption storm this compiles in 58 s against 72 s at -O2, and the model's own share
# of the run grows from 3.0 to 3.4 s.
COCOTB_CFLAGS = ("-CFLAGS", "-march=native", "-MAKEFLAGS", "OPT_FAST=-O1", "-MAKEFLAGS", "OPT_SLOW=-O0")
RUNTIME_CACHE = BUILD / "sim" / "_verilated_runtime"


def waves_requested() -> bool:
    return os.environ.get("WAVES", "0") not in ("", "0")


def run_cocotb(
    *,
    verilog: Path,
    toplevel: str,
    test_module: str,
    build_dir: Path,
    extra_env: dict | None = None,
    seed: int | None = None,
    waves: bool | None = None,
    testcase: str | None = None,
    test_dir: Path | None = None,
) -> Path:
    """Verilate ``verilog`` and run ``test_module``; return the results.xml path.

    Tests that share one build pass their own ``test_dir`` for results; the build itself is
    serialized by a lock file, so parallel pytest workers compile it once.

    Under pytest a failing cocotb test fails the calling test. The seed is printed so a failure
    can be replayed with ``OAE_SEED=<seed>``.
    """
    activate(ensure_verilator())
    waves = waves_requested() if waves is None else waves
    build_args = list(COCOTB_CFLAGS)
    if waves:
        if fst_available():
            build_args += ["--trace-fst", "--trace-structs"]
        else:
            print("waves: liblz4-dev is not available, writing VCD instead of FST", file=sys.stderr)
    if seed is None:
        seed = regression_seed()
    print(f"cocotb: {test_module} on {toplevel}, {replay_hint(seed)}", flush=True)
    test_dir = build_dir if test_dir is None else test_dir
    if waves:
        # A traced model is a different build; sharing the directory would reuse an untraced one.
        build_dir = build_dir.with_name(build_dir.name + "_waves")
    test_dir.mkdir(parents=True, exist_ok=True)
    runner = _PortsOnlyVerilator()
    with build_lock(build_dir):
        ports = public_ports(build_dir, toplevel, verilog)
        runner.build(
            sources=[WAIVERS, ports, verilog],
            hdl_toplevel=toplevel,
            build_dir=build_dir,
            waves=waves,
            build_args=build_args,
            timescale=("1ps", "1ps"),
            log_file=build_dir / "build.log",
        )
    results = test_dir / "results.xml"
    log = test_dir / "sim.log"  # the simulator's output; the terminal gets the tables
    env = {"PYTHONPATH": os.pathsep.join([str(COCOTB_DIR.parent), os.environ.get("PYTHONPATH", "")])}
    env.update(extra_env or {})
    try:
        runner.test(
            hdl_toplevel=toplevel,
            test_module=test_module,
            test_dir=test_dir,
            build_dir=build_dir,
            extra_env=env,
            seed=seed,
            waves=waves,
            results_xml=str(results),
            testcase=testcase,
            log_file=log,
        )
    except SystemExit:
        raise AssertionError(f"cocotb {test_module} failed (seed {seed}, log {log}):\n{failures(results)}") from None
    # Outside pytest the runner only returns: check the results here too.
    if failures(results, only_failed=True):
        raise AssertionError(f"cocotb {test_module} failed (seed {seed}, log {log}):\n{failures(results)}")
    if ran_testcases(results) == 0:
        which = f"testcase {testcase!r}" if testcase else "any testcase"
        raise AssertionError(f"cocotb {test_module}: no testcase ran ({which} skipped or not found; log {log})")
    return results


def ran_testcases(results: Path) -> int:
    """How many testcases a cocotb results.xml records as run (not skipped): a module whose
    tests were all skipped, or a ``testcase`` filter that matched nothing, runs none."""
    import xml.etree.ElementTree as ET

    if not results.exists():
        return 0
    return sum(1 for case in ET.parse(results).iter("testcase") if case.find("skipped") is None)


def failures(results: Path, only_failed: bool = False) -> str:
    """The failure messages recorded in a cocotb results.xml, for the pytest report; with
    ``only_failed``, an empty string when nothing failed."""
    import xml.etree.ElementTree as ET

    if not results.exists():
        return "(no results.xml: the simulator did not finish)"
    lines = []
    for case in ET.parse(results).iter("testcase"):
        for bad in list(case.iter("failure")) + list(case.iter("error")):
            lines.append(f"{case.get('name')}: {bad.get('message', '')}\n{(bad.text or '')[-1500:]}")
    return "\n".join(lines) or ("" if only_failed else "(no failure recorded)")


class _PortsOnlyVerilator(Verilator):
    """The cocotb Verilator runner without ``--public-flat-rw``: the testbenches touch top-level
    ports only (made public by ``public_ports.vlt``), and making every internal signal public
    costs about four times the C++ compile time of the endpoint and keeps Verilator from
    optimizing across modules."""

    def _build_command(self):
        verilate, *make = [
            [arg for arg in cmd if arg != "--public-flat-rw"] if isinstance(cmd, list) else cmd
            for cmd in super()._build_command()
        ]
        # Verilator's runtime objects are the same for every model built with the same flags:
        # compiled once, kept in a cache (sim/tools/verilated_cache.py).
        cache = [sys.executable, str(Path(__file__).with_name("verilated_cache.py"))]
        where = [str(self.build_dir), str(RUNTIME_CACHE)]
        return [verilate, cache + ["restore"] + where, *make, cache + ["save"] + where]


def public_ports(build_dir: Path, toplevel: str, verilog: Path) -> Path:
    """Write the Verilator configuration that makes ``toplevel``'s ports (and only them)
    public, in ``build_dir``; return its path. The ports are read from the export's JSON
    sidecar beside ``verilog``: a wildcard would also make public every internal signal of a
    top module with logic of its own (the framer's thousands of intermediate wires), and
    compiling their registration took longer than the model itself."""
    names = [port["name"] for port in json.loads(verilog.with_suffix(".json").read_text())["ports"]]
    path = build_dir / "public_ports.vlt"
    path.write_text(
        "`verilator_config\n" + "".join(f'public_flat_rw -module "{toplevel}" -var "{name}"\n' for name in names)
    )
    return path


def build_dir_for(name: str) -> Path:
    """A build directory per test (pytest node name or scenario), under build/sim/."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    return BUILD / "sim" / safe


@contextlib.contextmanager
def build_lock(build_dir: Path):
    """Hold an exclusive lock on ``build_dir`` (created if needed) across processes."""
    build_dir.mkdir(parents=True, exist_ok=True)
    with open(build_dir / "build.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
