"""docs/PORTS.md: the Verilog ports of every exported design, generated from the JSON sidecars.

``python -m sim.tools.ports_doc [--check]`` exports every design (without lint) under build/verilog/
and writes docs/PORTS.md from the sidecars' port lists, or with ``--check`` only says whether
the committed file is current (exit 1 if not). ``make verilog`` runs it after the export.

Port names are Amaranth's flattening of each component's signature: members joined by ``__``,
array elements by their index (``frames_in__0__payload``); clocks and resets are ``clk``/``rst``
for a design in one domain, ``<domain>_clk``/``<domain>_rst`` otherwise.
"""

import argparse
import json
import sys
from pathlib import Path

from sim.tools.cli import command_help
from sim.tools.verilog import BUILD, DESIGNS, ROOT, export

DOC = ROOT / "docs" / "PORTS.md"

# Designs that exist to be simulated (a link and its channel in one netlist), not synthesized:
# listed by port group only.
SIMULATION_ONLY = (
    "link_pair",
    "link_endpoint_pair",
    "link_axis_pair",
    "bisync_fifo_d4",
    "pcie_pair",
    "pcie_pair_real",
    "fabric_triangle",
    "fabric_triangle_slow",
    "fabric_triangle_sim",
    "fabric_mesh4_sim",
    "pcie_fabric_sim",
)

# Parts of an endpoint, wired by their parent: their ports are described in each component's
# docstring, which the table points to instead of repeating it.
INTERNAL = {
    "word_checker": "rtl/link/control.py",
    "control_word_builder": "rtl/link/control.py",
    "rlfd": "rtl/link/rlfd.py",
    "training": "rtl/link/training.py",
    "framer": "rtl/link/framer/__init__.py",
    "framer_long": "rtl/link/framer/__init__.py",
    "token_plane": "rtl/link/token_plane.py",
}

# What each port group (a port's name up to its first ``__``) means. Every group of every
# design that is neither simulation-only nor internal must have an entry (checked by
# tests/test_ports_doc.py).
MEANINGS = {
    # clocks and resets
    "clk": "the design's clock (the link clock of an endpoint core)",
    "rst": "synchronous reset, active high",
    "w_clk": "write-side clock",
    "w_rst": "write-side reset",
    "r_clk": "read-side clock",
    "r_rst": "read-side reset",
    "link_clk": "link clock: `rx`, `tx`, `status`",
    "link_rst": "link-domain reset",
    "core_clk": "user clock: the frame, token and `withdraw` ports",
    "core_rst": "user-domain reset",
    # the bisynchronous FIFO
    "sink": "stream in (write side): `valid`, `ready`, `payload`",
    "source": "stream out (read side): `valid`, `ready`, `payload`",
    "flushed": "read side: a write-side reset discarded what had not been taken (a FIFO is then empty and "
    "usable; on an endpoint, delivered beats lost to a link-domain reset end the packet on `m_axis`)",
    # the channel
    "ab_sink": "word from end A into the A-to-B direction",
    "ba_sink": "word from end B into the B-to-A direction",
    "ab_source": "word out of the A-to-B direction, to end B",
    "ba_source": "word out of the B-to-A direction, to end A",
    "ab_cut": "fault: the A-to-B direction carries nothing while high",
    "ba_cut": "fault: as `ab_cut`, B to A",
    "ab_flip": "fault: XOR mask applied to the word entering A-to-B",
    "ba_flip": "fault: as `ab_flip`, B to A",
    "ab_force": "fault: replace the word entering A-to-B by `ab_force_word`",
    "ba_force": "fault: as `ab_force`, B to A",
    "ab_force_word": "the word `ab_force` injects",
    "ba_force_word": "the word `ba_force` injects",
    "ab_freeze": "fault: A-to-B delivers again the word it delivered in the previous cycle",
    "ba_freeze": "fault: as `ab_freeze`, B to A",
    "ab_gray_mask": "fault (gray failure): A-to-B alters the words whose tag & mask == `ab_gray_value`; 0: off",
    "ba_gray_mask": "fault: as `ab_gray_mask`, B to A",
    "ab_gray_value": "the tag value `ab_gray_mask` selects",
    "ba_gray_value": "the tag value `ba_gray_mask` selects",
    "ab_gray_drop": "gray failure mode: 1 delivers the fill word instead, 0 flips slice bit 0",
    "ba_gray_drop": "as `ab_gray_drop`, B to A",
    "ab_latency": "A-to-B latency in cycles (takes effect as PROTOCOL.md 6 says)",
    "ba_latency": "B-to-A latency in cycles",
    "ab_current_latency": "the A-to-B latency in effect",
    "ba_current_latency": "the B-to-A latency in effect",
    # the endpoint's user side
    "rx": "received 72-bit wire word (`word`, `valid`), from the channel or SERDES",
    "tx": "transmitted 72-bit wire word (`word`, `valid`), every cycle",
    "frames_in": "per class: 64-byte frames to send (512-bit `payload`, slice i in bits 64i..64i+63)",
    "frames_out": "per class: frames delivered, in order, exactly once",
    "s_axis": "per class: AXI4-Stream packets to send (`tdata` 64, `tkeep` 8, `tlast`, `tvalid`, `tready`); "
    "a packet that is not eight full beats is dropped and counted",
    "m_axis": "per class: AXI4-Stream packets delivered, eight full beats each, `tlast` on the eighth",
    "bad_packets": "packets dropped because they were not a frame (all classes, link domain, wraps at 2**16)",
    "bad_packet": "pulse: a packet that was not a frame ended and was dropped",
    "restart": "level: forget the packet in progress (its beats were lost to a reset), uncounted",
    "frames": "frames as an amaranth.lib.stream of 512 bits",
    "ait_in": "a token (16-bit value) offered to the link",
    "ait_out": "a token delivered by the peer",
    "returned": "a token given back to this user (a stream behind a FIFO; a pulse on the core)",
    "returned_value": "the value of the token given back",
    "withdraw": "level: take back the token held here",
    "settle": "a settle asked (PROTOCOL.md 10.6): `payload`, the peer's half-state (READY body below the "
    "heard-ready bit); `ready` while none was asked in the two cycles before",
    "settle_applied": "pulse: the settle asked two cycles before applied (reconciled, frames taken out)",
    "settle_skipped": "pulse: the settle asked two cycles before found the end UP or entangling: nothing done",
    "taken": "per class: the frames a settle took out of the replay memory, newest first, one class at a "
    "time, the highest first (512-bit `payload`); one every third cycle at most",
    "heard": "a well-formed word arrives in this cycle (what a fabric node watches of its port)",
    "half_state": "this end's half-state as a REPORT carries it (READY body below the heard-ready bit)",
    "unsent": "per class: a frame handed in has slices not yet sent",
    "takeout_busy": "frames a settle took out are left to take",
    "user_in": "per user stream (destination peer d, class c at d * classes + c; peers are the other "
    "nodes in id order): 56-byte payloads to send, `ready` while the stream's end-to-end window has room",
    "user_out": "user frames delivered, at most one a cycle (`origin` node id, `cls`, 448-bit `payload`); "
    "no back-pressure: keep `ready` high",
    "port_up": "a bit per port (the node's links in id order): the port is UP",
    "table_up": "a bit per link of the fabric: the node's topology table holds it UP",
    "verdict": "pulse: a verdict adopted (`verdict_link`, `verdict_code`, `verdict_subject`)",
    "verdict_link": "the link of the verdict adopted",
    "verdict_code": "Verdict: LINK_UP, LINK_DOWN, NODE_DOWN or UNREACHABLE (PROTOCOL.md 10.4)",
    "verdict_subject": "the node a NODE_DOWN or UNREACHABLE names",
    "fault": "sticky; must never rise: a queue the node sizes overflowed, or a delivery was refused",
    "status": "link state, leader, RTT, token-plane phases, event pulses and counters (StatusSignature)",
    "status__state": "LinkState: HELLO, PROBE, READY (training) or UP (PROTOCOL.md 1)",
    "status__leader": "this end won the election in training",
    "status__rtt": "the measured round trip, cycles",
    "status__rtt_valid": "`rtt` holds a measurement",
    "status__balance": "token-plane balance, -1/0/+1",
    "status__tx_phase": "TxPhase of the token transfer (sender half)",
    "status__rx_phase": "RxPhase of the token transfer (receiver half)",
    "status__waiting": "a token is due from the peer",
    "status__up": "pulse: the link came up",
    "status__anomaly": "pulse: an anomaly restarts the link",
    "status__suspect": "pulse: the RLFD suspects the link",
    "status__reason": "Reason of the suspicion (with `suspect`)",
    "status__queue_overflow": "sticky; must never rise (queues sized by PROTOCOL.md 4.5)",
    "status__counters": "event counters (golden `Counters` names), one cycle behind, wrapping at 2**16",
}

# Where a design's port group means something else than MEANINGS says, by design: the node's
# AXI4-Stream ports carry seven-beat user frames with a destination or a source id.
MEANINGS_OF = {
    "node_axis": {
        "link_clk": "node clock: the link ports (`rx`, `tx`, tokens) and the status",
        "core_clk": "user clock: `s_axis`, `m_axis` and `flushed`",
        "s_axis": "per class: AXI4-Stream packets to send (`tdata` 64, `tkeep` 8, `tlast`, `tdest` the node "
        "they go to, `tvalid`, `tready`); a packet that is not seven full beats, or whose `tdest` is not "
        "another node, is dropped and counted",
        "m_axis": "per class: AXI4-Stream packets delivered, seven full beats each, `tid` the node that sent "
        "them; in order and once per sender",
        "bad_packets": "packets dropped because they were not seven full beats or had no other node as `tdest` "
        "(all classes, link domain, wraps at 2**16)",
    },
}


def meaning(design: str, key: str) -> str:
    """What port group (or prefix) ``key`` of ``design`` means."""
    return MEANINGS_OF.get(design, {}).get(key, MEANINGS.get(key, ""))


def group(port: str) -> str:
    return port.split("__")[0]


def meaning_key(port: str) -> str:
    """The longest ``__``-prefix of ``port`` with an entry in MEANINGS (else its group)."""
    parts = port.split("__")
    for n in range(len(parts), 0, -1):
        if "__".join(parts[:n]) in MEANINGS:
            return "__".join(parts[:n])
    return parts[0]


def render(sidecars: list[dict]) -> str:
    out = [
        "# Verilog ports of the exported designs",
        "",
        "Generated by `python -m sim.tools.ports_doc` (run by `make verilog`) from the JSON sidecars that",
        "`sim/tools/verilog.py` writes beside each `build/verilog/<name>.v`; `tests/test_ports_doc.py` fails",
        "when this file and the designs disagree. Port names are Amaranth's flattening of each",
        "component's signature: members joined by `__`, array elements by their index",
        "(`frames_in__0__payload` is class 0's frame payload). Widths are for the generation",
        "parameters shown; `num_classes` sets how many `frames_in`/`s_axis`... elements there are.",
        "",
    ]
    for sc in sidecars:
        if sc["name"] in SIMULATION_ONLY:
            continue
        params = ", ".join(f"{k}={v}" for k, v in sc["parameters"].items()) or "none"
        out += [f"## `{sc['name']}` ({sc['component']})", "", f"Parameters: {params}.", ""]
        if sc["name"] in INTERNAL:
            out += [
                f"A part of the endpoint; what each port means is in the docstring of "
                f"`{sc['component']}` in `{INTERNAL[sc['name']]}`.",
                "",
                "| port | dir | width |",
                "|---|---|---|",
            ]
            out += [f"| `{p['name']}` | {p['direction']} | {p['width']} |" for p in sc["ports"]]
            out.append("")
            continue
        out += ["| port | dir | width | meaning |", "|---|---|---|---|"]
        seen = set()
        for p in sc["ports"]:
            key = meaning_key(p["name"])
            text = meaning(sc["name"], key) if key not in seen else ""
            seen.add(key)
            out.append(f"| `{p['name']}` | {p['direction']} | {p['width']} | {text} |")
        out.append("")
    out += [
        "## Simulation-only designs",
        "",
        "A link (two ends and the channel) as one netlist, for Verilator; their ports are the",
        "ends' user ports prefixed `a_`/`b_`, each end's `tx` as an observation port, and the",
        "channel's fault controls (`ab_*`, `ba_*`). A fabric (rtl/simulation/fabric.py) has each",
        "node's user ports prefixed `n<node>_` with an `observe` port, each link's channel controls",
        "prefixed `l<link>_ab_`/`l<link>_ba_`, and `dead`. The contrast fabric's links",
        "(rtl/simulation/pcie_fabric.py) have each end's user ports and `observe` prefixed",
        "`l<link>_a_`/`l<link>_b_`, the channel controls as a fabric's, and `dead`.",
        "",
    ]
    for sc in sidecars:
        if sc["name"] in SIMULATION_ONLY:
            groups = sorted({group(p["name"]) for p in sc["ports"]})
            out.append(f"- `{sc['name']}` ({sc['component']}): {', '.join(f'`{g}`' for g in groups)}")
    return "\n".join(out) + "\n"


def export_all(out_dir: Path = BUILD / "verilog") -> list[dict]:
    """Export every design (no lint) into ``out_dir``; return their sidecars."""
    sidecars = []
    for name in DESIGNS:
        export(name, out_dir)
        sidecars.append(json.loads((out_dir / f"{name}.json").read_text()))
    return sidecars


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim.tools.ports_doc", description=command_help(__doc__))
    parser.add_argument("--check", action="store_true", help="only check that docs/PORTS.md is current")
    args = parser.parse_args(argv)
    text = render(export_all())
    if args.check:
        current = DOC.exists() and DOC.read_text() == text
        print(f"ports: {DOC.relative_to(ROOT)} is {'current' if current else 'OUT OF DATE (run make verilog)'}")
        return 0 if current else 1
    DOC.write_text(text)
    print(f"ports: wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
