"""The RTL link pair on Verilator driven by a C++ loop (sim/harness/cpp/link_pair_free.cpp), no Python
per cycle: the simulation-speed ceiling that `make bench` sets beside the cocotb figures.

The model is verilated from the same exported Verilog, with the same Verilator, waiver file,
public top-level ports and C++ flags (``MODEL_CFLAGS``) as the cocotb builds
(sim/tools/cocotb_run.py); only the main loop differs (and ``--vpi``, which cocotb needs and this
loop does not). The constant user inputs come from
:func:`sim.harness.link_scenarios.free_running_inputs`, written as C++ by :func:`inputs_source`. Verilator's
output goes to ``build.log`` in the build directory.
"""

import json
import subprocess
from pathlib import Path

from sim.harness.link_scenarios import Build, free_running_inputs
from sim.tools.cocotb_run import MODEL_CFLAGS, build_dir_for, build_lock, public_ports
from sim.tools.toolchain import activate, ensure_verilator
from sim.tools.verilog import WAIVERS, export

MAIN = Path(__file__).resolve().parent / "cpp" / "link_pair_free.cpp"
# The port helpers every C++ loop includes (a change rebuilds the loops).
PORTS_HEADER = MAIN.parent / "verilated_ports.h"
EXECUTABLE = "link_pair_free"


# Status ports the loop reads: C++ function name -> port path.
_READS = {
    "a_state": ("a_status", "state"),
    "b_state": ("b_status", "state"),
    "b_trainings": ("b_status", "counters", "trainings"),
    "b_frames_delivered": ("b_status", "counters", "frames_delivered"),
}


def cpp_member(path) -> str:
    """The Vtop member of a port path: Verilog name ``a__b`` with Verilator's escape of ``__``."""
    return "__".join(str(p) for p in path).replace("__", "___05F")


def inputs_source(link_build: Build) -> str:
    """C++ for ``apply_inputs(top)`` (every constant input as 32-bit words, least significant
    first) and one reader per status port the loop watches."""
    lines = [f"unsigned {name}(const Vtop* top) {{ return top->{cpp_member(path)}; }}" for name, path in _READS.items()]
    lines.append("void apply_inputs(Vtop* top) {")
    for path, value in sorted(free_running_inputs(link_build).items(), key=str):
        port = cpp_member(path)
        words = [(value >> (32 * i)) & 0xFFFF_FFFF for i in range(max(1, (value.bit_length() + 31) // 32))]
        lines.append(f"    put(top->{port}, {{{', '.join(f'0x{w:08x}u' for w in words)}}});")
    lines.append("}")
    return "\n".join(lines) + "\n"


def build(link_build: Build, extra_args=(), suffix: str = "") -> Path:
    """Verilate and compile the pair of ``link_build`` with the C++ loop; return the executable.
    ``extra_args`` go to Verilator (for example profiling flags; give those a ``suffix``)."""
    activate(ensure_verilator())
    build_dir = build_dir_for(f"link_pair_cpp_{link_build.tag}{suffix}")
    with build_lock(build_dir):
        verilog = export("link_pair", build_dir / "verilog", params=link_build.pair_params())
        inc = build_dir / "link_pair_inputs.inc"
        text = inputs_source(link_build)
        if not inc.exists() or inc.read_text() != text:
            inc.write_text(text)
        return verilate_loop(build_dir, "link_pair", verilog, MAIN, EXECUTABLE, extra_args)


def verilate_loop(
    build_dir: Path, top: str, verilog: Path, main: Path, executable: str, extra_args=(), cflags=MODEL_CFLAGS
) -> Path:
    """Verilate ``verilog`` (top module ``top``) with the C++ main loop ``main`` into
    ``build_dir/executable``, with the cocotb builds' waiver file, public ports and C++ flags
    ``cflags`` (Verilator arguments);
    ``main`` may include files written into ``build_dir``. Verilator's and the compiler's output
    go to ``build.log`` there. Call it holding :func:`build_lock` on ``build_dir``."""
    ports = public_ports(build_dir, top, verilog)
    cmd = [
        "verilator",
        "--cc",
        "--exe",
        "--build",
        "-j",
        "2",
        "-Mdir",
        str(build_dir),
        "--top-module",
        top,
        "--prefix",
        "Vtop",
        "-o",
        executable,
        "--timescale",
        "1ps/1ps",
        *cflags,
        "-CFLAGS",
        f"-I{build_dir}",
        *extra_args,
        str(WAIVERS),
        str(ports),
        str(verilog),
        str(main),
    ]
    with open(build_dir / "build.log", "w") as log:
        done = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT)
    if done.returncode:
        raise RuntimeError(f"the Verilator build of {main.name} for {top} failed; see {build_dir / 'build.log'}")
    return build_dir / executable


def run(executable: Path, cycles: int, segments: int) -> dict:
    """Run the loop: ``segments`` timed runs of ``cycles`` link cycles; the parsed JSON result."""
    done = subprocess.run([str(executable), str(cycles), str(segments)], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{executable.name} failed: {done.stderr.strip()}")
    return json.loads(done.stdout)
