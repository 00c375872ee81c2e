"""The PCIe-style contrast fabric in RTL (rtl/simulation/pcie_fabric.py) on Verilator, its hosts
played by a C++ loop (sim/harness/cpp/pcie_fabric_experiment.cpp) as golden/contrast/host.py
plays them, no Python per cycle: what `make sim`'s PCIe-style fabric rows run on.

:func:`build` verilates the exported design with the loop and the port access this module
writes (``pcie_fabric_ports.inc``: the mesh's tables, the observe ports' fields, the user and
fault ports); runs use :func:`sim.harness.fabric_rtl.run` and give the same JSON as the OAE
fabric's loop (belief and actual-state logs, per stream what was made, delivered, duplicated,
reordered, corrupted). Verilator's and the compiler's output go to ``build.log`` in the build
directory.
"""

from pathlib import Path

from rtl.simulation.pcie_pair import pcie_observation_layout
from sim.harness.fabric_rtl import build_loop, fault_access, member, mesh_constants
from sim.tools.verilog import DESIGNS, TOPOLOGIES

MAIN = Path(__file__).resolve().parent / "cpp" / "pcie_fabric_experiment.cpp"
DESIGN = "pcie_fabric_sim"  # the contrast fabric `make sim` runs
EXECUTABLE = "pcie_fabric_experiment"


def ports_source(design: str, params: dict | None = None) -> str:
    """pcie_fabric_ports.inc for ``design`` with generation ``params`` (overriding its defaults):
    constants and the functions pcie_fabric_experiment.cpp calls."""
    params = {**DESIGNS[design][1], **(params or {})}
    topology = TOPOLOGIES[params["topology"]]()
    L = len(topology.links)
    observe = dict(iter(pcie_observation_layout()))
    out = mesh_constants(topology)

    def field(i, e, name):
        f = observe[name]
        return f"bits({member(f'l{i}_{e}_observe')}, {f.offset}, {f.width})"

    def per_end(signature, body, result="void", fallback=""):
        """A function of (top, link, end) switching over every end, ``body(i, e)`` per case."""
        cases = [f"    case {2 * i + k}: {body(i, e)}" for i in range(L) for k, e in enumerate("ab")]
        tail = f"\n  return {fallback};" if fallback else ""
        return f"{result} {signature} {{\n  switch (link * 2 + end) {{\n" + "\n".join(cases) + f"\n  }}{tail}\n}}"

    # A top-level input has no initial value of its own: the channels keep their latency.
    body = [f"    {member(f'l{i}_{d}_latency')} = {params['latency']};" for i in range(L) for d in ("ab", "ba")]
    out.append("void constant_inputs(Vtop* top) {\n" + "\n".join(body) + "\n}")
    out += fault_access(topology)
    out.append(
        per_end(
            "set_frame(Vtop* top, int link, int end, bool valid, const uint32_t* words)",
            lambda i, e: (
                f"{member(f'l{i}_{e}_frames_in', 'valid')} = valid; "
                f"if (valid) put_words({member(f'l{i}_{e}_frames_in', 'payload')}, words, FRAME_WORDS); break;"
            ),
        )
    )
    out.append(
        per_end(
            "set_request(Vtop* top, int link, int end, bool v)",
            lambda i, e: f"{member(f'l{i}_{e}_request')} = v; break;",
        )
    )
    out.append(
        per_end(
            "set_far(Vtop* top, int link, int end, bool v)",
            lambda i, e: f"{member(f'l{i}_{e}_far_receiver')} = v; break;",
        )
    )
    out.append(
        per_end(
            "frame_ready(const Vtop* top, int link, int end)",
            lambda i, e: f"return {field(i, e, 'frames_in_ready')};",
            "bool",
            "false",
        )
    )
    out.append(
        per_end(
            "frame_out(const Vtop* top, int link, int end, uint32_t* words)",
            lambda i, e: (
                f"if (!{field(i, e, 'frames_out_valid')}) return false; "
                f"get_words({member(f'l{i}_{e}_frames_out_payload')}, words, FRAME_WORDS); return true;"
            ),
            "bool",
            "false",
        )
    )
    # The host's belief of a port (golden Host._port_usable): DL_Up and "completer alive".
    out.append(
        per_end(
            "usable(const Vtop* top, int link, int end)",
            lambda i, e: f"return {field(i, e, 'dl_up')} && {field(i, e, 'completer_alive')};",
            "bool",
            "false",
        )
    )
    return "\n".join(out) + "\n"


def build(design: str = DESIGN, params: dict | None = None) -> Path:
    """Verilate contrast fabric ``design`` (a key of sim/tools/verilog.py ``DESIGNS``) with the
    C++ loop, its generation parameters overridden by ``params``; return the executable."""
    return build_loop(design, params, MAIN, EXECUTABLE, "pcie_fabric_ports.inc", ports_source(design, params))
