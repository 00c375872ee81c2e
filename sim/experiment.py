"""``python -m sim.experiment``: the side-by-side experiment. The OAE link and the PCIe-style
contrast link, both in RTL on Verilator, on the same channel with the same faults, read by the
ghost meter (sim/harness/ghost.py).

Each (scenario, link) run is one Verilated pair driven by a C++ loop (sim/harness/cpp/pair_experiment.cpp):
no Python per cycle, so the contrast link's timers run at their real values (10⁷ cycles and
more). Saturated numbered frames flow both ways, every delivery is checked (lost, duplicated,
corrupted), every belief change is logged. The fault schedule starts at the same point for
both links: ``SETTLE`` cycles after both ends first believe the link up (their trainings differ
by two orders of magnitude). This module builds the designs, writes each run's schedule, and
turns the logs into rows: detection latency, ghost cycles of both signs, frames lost /
duplicated / corrupted, goodput during the event.

What "actually up" means (the meter's G_A): a cut in either direction, and a gray failure that
drops data words, make the link down for their duration; bit errors and a slower line do not (a
noisy or slow link still works: believing it down is a ghost of the other sign). A link's
belief (G_K) is the OAE end's ``status.up`` and the contrast end's DL_Up; the contrast
requester's "completer alive" is metered beside it.

The scenarios are files (docs/SCENARIOS.md): the built-ins under scenarios/experiment/, and any
other with ``--scenario-file F``.
"""

import argparse
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from golden import encoding as enc
from golden.params import TURNAROUND, LinkParams, window_for_rtt
from golden.pcie_params import PcieParams
from rtl.simulation.pcie_pair import pcie_observation_layout
from sim import ghost_plot, scenario_file
from sim.harness.ghost import DOWN_WHILE_UP, UP_WHILE_DOWN, GhostMeter
from sim.harness.verdicts import EQUAL, OAE, belief_limit, summary, verdicts
from sim.harness.verilator_free import PORTS_HEADER, cpp_member, verilate_loop
from sim.scenario_file import ScenarioFileError, ScenarioSpec, builtin, down_intervals, load, merge_spans
from sim.tools.cli import command_help
from sim.tools.cocotb_run import build_dir_for, build_lock
from sim.tools.toolchain import activate, ensure_verilator, fst_available
from sim.tools.verilog import BUILD, export

CLOCK_MHZ = 156.25
LATENCY = 16  # cycles each way, both links (the exported designs' channel)
MAX_LATENCY = 64  # the most the exported designs' channel carries (max_latency)
SLOWER = 24  # cycles each way that slow_link adds
# The OAE build is sized for the longest line the experiment has, slow_link's (PROTOCOL.md 4.4):
# its window keeps a class at full rate at that round trip too.
OAE_WINDOW = window_for_rtt(2 * (LATENCY + SLOWER) + TURNAROUND)
SETTLE = 2_000  # cycles from both ends up to the first fault
T0 = 1_000  # the built-in scenarios' fault, in cycles after the origin (the waveforms' window)
TOKEN_EVERY = 64  # OAE: each end hands in a token this many cycles after its last was taken
REQUEST_RATE = 0.002  # contrast link: per cycle and end, the chance of a read request (its completion
# timeout is the only other belief it has; 4% of the link)
MAIN = Path(__file__).resolve().parent / "harness" / "cpp" / "pair_experiment.cpp"
RUNS = BUILD / "sim" / "experiment"
REPORT = BUILD / "report" / "report.json"
PLOT = ghost_plot.PLOT
WAVE_BEFORE, WAVE_AFTER = 200, 1_500  # cycles of the OAE cut recorded, around the fault

_REAL = PcieParams()


def _ms(ms: float) -> int:
    return round(ms * 1000 * CLOCK_MHZ)


# The contrast link needs about 8 M cycles to declare a permanent cut (two Recovery.RcvrLock
# timeouts and the rest) and about 3 M to train again after it: runs long enough to see both.
_LTSSM_DETECT = 2 * _REAL.cycles("recovery_rcvrlock") + _REAL.cycles("recovery_speed_ei") + _ms(2)
_LTSSM_RETRAIN = _REAL.cycles("detect_quiet") + _ms(8)
_OAE_TAIL = 100_000


@dataclass(frozen=True)
class LinkKind:
    design: str  # sim/tools/verilog.py DESIGNS key (also the top module's name)
    label: str
    classes: int  # classes that carry the saturated traffic (class 0 upwards)
    beliefs: tuple  # belief names; the first is the link's DL_Up / up
    data_tags: tuple  # (mask, value): the tags of its data words, for the gray failure
    params: dict | None = None  # the design's parameters, where they are not DESIGNS's


LINKS = {
    # One class: with every class saturated, the highest-priority class takes the whole link.
    "oae": LinkKind(
        "link_pair",
        "OAE",
        1,
        ("link_up",),
        (0x80, 0x80),
        {
            "params_a": {"port_id": 1, "nonce_seed": 0x1235, "window": OAE_WINDOW},
            "params_b": {"port_id": 2, "nonce_seed": 0x9878, "window": OAE_WINDOW},
        },
    ),
    "ltssm": LinkKind(
        "pcie_pair_real",
        "PCIe-style",
        1,
        ("dl_up", "completer_alive"),
        (0xF0, enc.pcie_tag(enc.PcieCode.TLP_DATA) & 0xF0),
    ),
}


@dataclass(frozen=True)
class Scenario:
    name: str
    what: str
    events: tuple = ()  # (cycle after the origin, direction, kind, *args)
    ber: float = 0.0  # both directions
    down: tuple = ()  # (start, end or None): the link actually down
    length: dict = field(default_factory=dict)  # link -> cycles after the origin
    latency: int = LATENCY  # cycles each way from reset


# The built-in scenarios, in the table's order: scenarios/experiment/<name>.toml (docs/SCENARIOS.md).
BUILTIN = (
    "cut_ab",
    "cut_both",
    "flap_8cyc",
    "flap_train",
    "flap_1us",
    "flap_200us",
    "flap_5ms",
    "flap_30ms",
    "flap_100ms",
    *(f"ber_{b}" for b in ("1e-8", "1e-7", "1e-6", "1e-5", "1e-4", "3e-4")),
    "slow_link",
    "slow_completer",
    "gray_data",
)
NO_FAULT_RUN = 2_000_000  # cycles after the origin of a run with no fault (bit errors only)


def from_spec(spec: ScenarioSpec, seed: int = 1) -> Scenario:
    """The experiment's scenario of a scenario file: a pair on the experiment's channel and clock,
    saturated traffic; the faults of ``spec.schedule(seed)``. Run lengths are the file's
    ``[run]`` (``length`` for both links, ``oae`` and ``ltssm`` for one), else: with no fault,
    NO_FAULT_RUN; with cuts only, the OAE link runs _OAE_TAIL cycles past the last change and
    the contrast link until it has declared a permanent cut (two sided: its detection bound and
    1 ms; one sided: twice the bound) or trained again after the last heal; with any other
    fault, both run a completion timeout and 3 ms past the last change (the contrast link's only
    other belief is its completion timeout). ScenarioFileError for a file the experiment cannot
    run."""

    if spec.topology != "pair":
        spec.refuse(
            "topology", f"the experiment runs a pair (a fabric runs in python -m sim.triangle), not {spec.topology}"
        )
    if spec.clock_mhz != CLOCK_MHZ:
        spec.refuse("clock_mhz", f"the experiment's links run at {CLOCK_MHZ} MHz (their timers are built for it)")
    if not 1 <= spec.latency[0] <= MAX_LATENCY:
        spec.refuse(
            "links.latency", f"the experiment's channel carries 1 to {MAX_LATENCY} cycles, not {spec.latency[0]}"
        )
    if spec.load not in (None, 1.0) or spec.tokens is not None:
        spec.refuse(
            "traffic", f"the experiment offers saturated frames both ways and a token every {TOKEN_EVERY} cycles"
        )
    if spec.flows:
        spec.refuse("flows", "a pair has one link: the experiment measures its traffic whole")
    for i, rule in enumerate(spec.rules):
        if rule.fault.kind == "latency" and not 1 <= rule.fault.value <= MAX_LATENCY:
            spec.refuse(
                f"faults[{i}].latency",
                f"the experiment's channel carries 1 to {MAX_LATENCY} cycles, not {rule.fault.value}",
            )
    faults = spec.schedule(seed)
    starts, ends = [], []
    # A cut or a gray failure is a level on its direction: overlapping ones are one, from the
    # first start to the last end (a heal in the middle would end both).
    for kind in ("cut", "gray"):
        for d, way in enumerate(("ab", "ba")):
            for at, end in merge_spans((f.at, f.end) for f in faults if f.kind == kind and way in f.directions):
                starts.append((at, d, kind, 1))
                if end is not None:
                    ends.append((end, d, kind, 0))
    for f in faults:
        if f.kind in ("latency", "completer"):
            ways = f.ends if f.kind == "completer" else [("ab", "ba").index(d) for d in f.directions]
            value, after = (f.value, spec.latency[0] if f.kind == "latency" else _REAL.completer_delay)
            starts += [(f.at, d, f.kind, value) for d in ways]
            if f.end is not None:
                ends += [(f.end, d, f.kind, after) for d in ways]
    events = tuple(sorted(starts + ends, key=lambda e: e[0]))
    length = {k: spec.run[k] for k in LINKS if k in spec.run}
    last = max([f.end or f.at for f in faults], default=0)
    cuts = [f for f in faults if f.kind == "cut"]
    if not faults:
        default = {"oae": NO_FAULT_RUN, "ltssm": NO_FAULT_RUN}
    elif len(cuts) == len(faults):
        permanent = [f for f in cuts if f.end is None]
        if permanent:
            first = min(f.at for f in permanent)
            both = {d for f in permanent for d in f.directions} == {"ab", "ba"}
            ltssm = first + (_LTSSM_DETECT + _ms(1) if both else 2 * _LTSSM_DETECT)
        else:
            ltssm = last + _LTSSM_RETRAIN
        default = {"oae": last + _OAE_TAIL, "ltssm": ltssm}
    else:
        default = {k: last + _REAL.cycles("completion_timeout") + _ms(3) for k in LINKS}
    for k in LINKS:
        length.setdefault(k, spec.run.get("length", default[k]))
    return Scenario(
        spec.name,
        spec.description,
        events,
        ber=spec.ber[0],
        down=tuple(down_intervals(faults)),
        length=length,
        latency=spec.latency[0],
    )


SCENARIOS = {name: from_spec(spec) for name, spec in builtin("experiment", BUILTIN).items()}
QUICK = ("cut_both", "flap_1us", "flap_200us", "ber_1e-6", "slow_link", "gray_data")


# --- The C++ loop's port access, per design --------------------------------------------------
def ports_source(kind: str, latency: int = LATENCY) -> str:
    """pair_ports.inc for link ``kind`` built with a channel of ``latency`` cycles: constants and
    the functions pair_experiment.cpp calls."""
    link = LINKS[kind]
    m = lambda *path: cpp_member(path)  # noqa: E731
    out = [
        f"constexpr int CLASSES = {link.classes};",
        f"constexpr int BELIEFS = {len(link.beliefs)};",
        "const char* const BELIEF_NAMES[] = {" + ", ".join(f'"{b}"' for b in link.beliefs) + "};",
        f"unsigned initial_latency(int) {{ return {latency}; }}",
    ]

    def per_direction(signature, body):
        cases = "\n".join(f"    if (d == {i}) {{ {body.replace('@', p)} }}" for i, p in enumerate(("ab", "ba")))
        out.append(f"{signature} {{\n{cases}\n}}")

    per_direction("void set_cut(Vtop* top, int d, unsigned v)", "top->@_cut = v;")
    per_direction("void set_flip(Vtop* top, int d, const uint32_t* w)", "put_words(top->@_flip, w, 3);")
    per_direction(
        "void set_gray(Vtop* top, int d, unsigned on)",
        f"top->@_gray_mask = on ? {link.data_tags[0]} : 0; top->@_gray_value = {link.data_tags[1]}; "
        "top->@_gray_drop = 1;",
    )
    per_direction("void set_latency(Vtop* top, int d, unsigned v)", "top->@_latency = v;")
    ends = ("a", "b")
    const = []
    frames_in = []
    for e in ends:
        for c in range(link.classes):
            fin = (f"{e}_frames_in", c) if kind == "oae" else (f"{e}_frames_in",)
            const.append(f"top->{m(*fin, 'valid')} = 1;")
            frames_in.append(fin)
            if kind == "oae":
                const.append(f"top->{m(f'{e}_frames_out', c, 'ready')} = 1;")
        if kind == "oae":
            const += [
                f"top->{m(f'{e}_ait_in', 'valid')} = 0;",
                f"top->{m(f'{e}_ait_out', 'ready')} = 1;",
                f"top->{m(f'{e}_withdraw')} = 0;",
            ]
        else:
            const += [
                f"top->{m(f'{e}_far_receiver')} = 1;",
                f"top->{m(f'{e}_request')} = 0;",
                f"top->{m(f'{e}_completer_delay')} = {_REAL.completer_delay};",
            ]
    for d in ("ab", "ba"):
        const += [f"top->{d}_{p} = 0;" for p in ("cut", "force", "freeze", "gray_mask", "gray_value", "gray_drop")]
    out.append("void constant_inputs(Vtop* top) {\n    " + "\n    ".join(const) + "\n}")

    def switch(signature, bodies, default):
        cases = "\n".join(f"        case {i}: {b}" for i, b in enumerate(bodies))
        out.append(f"{signature} {{\n    switch (end * CLASSES + cls) {{\n{cases}\n    }}\n    {default}\n}}")

    switch(
        "void set_frame(Vtop* top, int end, int cls, const uint32_t* p)",
        [f"put_words(top->{m(*f, 'payload')}, p, FRAME_WORDS); return;" for f in frames_in],
        "",
    )
    switch(
        "unsigned frame_taken(const Vtop* top, int end, int cls)",
        [f"return top->{m(*f, 'ready')};" for f in frames_in],
        "return 0;",
    )
    if kind == "oae":
        outs = [
            (m(f"{e}_frames_out", c, "valid"), m(f"{e}_frames_out", c, "payload"))
            for e in ends
            for c in range(link.classes)
        ]
        switch(
            "unsigned frame_out(const Vtop* top, int end, int cls, uint32_t* p)",
            [f"if (!top->{v}) return 0; get_words(top->{pl}, p, FRAME_WORDS); return 1;" for v, pl in outs],
            "return 0;",
        )
        up = int(enc.LinkState.UP)
        out.append(
            "unsigned belief(const Vtop* top, int end, int) {\n"
            f"    return (end ? top->{m('b_status', 'state')} : top->{m('a_status', 'state')}) == {up};\n}}"
        )
        out += [
            "void set_far(Vtop*, int, unsigned) {}",
            "void set_request(Vtop*, int, unsigned) {}",
            "void set_completer_delay(Vtop*, int, unsigned) {}",
            "unsigned request_ok(const Vtop*, int) { return 0; }",
            "constexpr bool TOKEN_PLANE = true;",
        ]
        out.append(
            "void set_token(Vtop* top, int end, unsigned valid, unsigned value) {\n"
            + "".join(
                f"    if (end == {i}) {{ top->{m(f'{e}_ait_in', 'valid')} = valid; "
                f"top->{m(f'{e}_ait_in', 'payload')} = value; }}\n"
                for i, e in enumerate(ends)
            )
            + "}"
        )
        out.append(
            "unsigned token_taken(const Vtop* top, int end) {\n"
            f"    return end ? top->{m('b_ait_in', 'ready')} : top->{m('a_ait_in', 'ready')};\n}}"
        )
        out.append(
            "unsigned token_out(const Vtop* top, int end, uint32_t* value) {\n"
            + "".join(
                f"    if (end == {i}) {{ if (!top->{m(f'{e}_ait_out', 'valid')}) return 0; "
                f"*value = top->{m(f'{e}_ait_out', 'payload')}; return 1; }}\n"
                for i, e in enumerate(ends)
            )
            + "    return 0;\n}"
        )
    else:
        layout = dict(iter(pcie_observation_layout()))
        off = {name: layout[name].offset for name in ("frames_out_valid", "dl_up", "completer_alive")}
        switch(
            "unsigned frame_out(const Vtop* top, int end, int cls, uint32_t* p)",
            [
                f"if (!bits(top->{e}_observe, {off['frames_out_valid']}, 1)) return 0; "
                f"get_words(top->{e}_frames_out_payload, p, FRAME_WORDS); return 1;"
                for e in ends
            ],
            "return 0;",
        )
        out.append(
            "unsigned belief(const Vtop* top, int end, int k) {\n"
            f"    const unsigned offset = k ? {off['completer_alive']} : {off['dl_up']};\n"
            "    return end ? bits(top->b_observe, offset, 1) : bits(top->a_observe, offset, 1);\n}"
        )
        out.append(
            "void set_far(Vtop* top, int end, unsigned v) {\n"
            "    if (end) top->b_far_receiver = v; else top->a_far_receiver = v;\n}"
        )
        out.append(
            "void set_request(Vtop* top, int end, unsigned v) {\n"
            "    if (end) top->b_request = v; else top->a_request = v;\n}"
        )
        out.append(
            "void set_completer_delay(Vtop* top, int end, unsigned v) {\n"
            "    if (end) top->b_completer_delay = v; else top->a_completer_delay = v;\n}"
        )
        out.append(
            "unsigned request_ok(const Vtop* top, int end) {\n"
            "    return end ? top->b_request_ok : top->a_request_ok;\n}"
        )
        out += [
            "constexpr bool TOKEN_PLANE = false;",
            "void set_token(Vtop*, int, unsigned, unsigned) {}",
            "unsigned token_taken(const Vtop*, int) { return 0; }",
            "unsigned token_out(const Vtop*, int, uint32_t*) { return 0; }",
        ]
    return "\n".join(out) + "\n"


def build(kind: str, waves: bool = False, latency: int = LATENCY) -> Path:
    """Verilate link ``kind``'s pair with the C++ loop, its channel ``latency`` cycles each way
    from reset; return the executable. ``waves``: a build that can trace (FST, or VCD without
    lz4). Verilator's and the compiler's output go to build.log in the build directory."""
    activate(ensure_verilator())
    link = LINKS[kind]
    trace = [] if not waves else ["--trace-fst", "--trace-structs"] if fst_available() else ["--trace"]
    # The channel's latency is where it starts: a line set later only moves towards a target, a
    # cycle per fill word it can drop or add (as an elastic buffer does), so the links would train
    # on the old one and meet the new one as a latency step.
    suffix = ("_waves" if waves else "") + (f"_lat{latency}" if latency != LATENCY else "")
    build_dir = build_dir_for(f"experiment_{kind}{suffix}")
    params = link.params if latency == LATENCY else {**(link.params or {}), "latency": latency}
    with build_lock(build_dir):
        verilog = export(link.design, build_dir / "verilog", params=params)
        inc = build_dir / "pair_ports.inc"
        text = ports_source(kind, latency)
        if not inc.exists() or inc.read_text() != text:
            inc.write_text(text)
        exe = build_dir / "pair_experiment"
        sources = [verilog, inc, MAIN, PORTS_HEADER]
        if exe.exists() and all(exe.stat().st_mtime > s.stat().st_mtime for s in sources):
            return exe
        return verilate_loop(build_dir, link.design, verilog, MAIN, exe.name, trace)


# --- One run ---------------------------------------------------------------------------------
def schedule_text(sc: Scenario, kind: str, seed: int) -> str:
    lines = [
        f"seed {seed}",
        f"settle {SETTLE}",
        f"cycles {sc.length[kind]}",
        f"train_limit {_ms(40) if kind == 'ltssm' else 200_000}",
    ]
    if sc.ber:
        lines += [f"ber 0 {sc.ber!r}", f"ber 1 {sc.ber!r}"]
    if kind == "ltssm":
        lines.append(f"request_rate {REQUEST_RATE}")
    else:
        lines.append(f"token_every {TOKEN_EVERY}")
    start, end = _event_window(sc)
    lines += [f"mark {start}", f"mark {end}"]
    first = _first_fault(sc)
    if first is not None:
        lines.append(f"flows_from {first}")
    for cycle, d, what, *args in sc.events:
        lines.append(f"at {cycle} {d} {what} {' '.join(str(a) for a in args)}")
    return "\n".join(lines) + "\n"


def _first_fault(sc: Scenario) -> int | None:
    """The cycle after the origin of the first fault that takes the line down, else of the
    first event (a latency step, a slow completer); None for a scenario with neither."""
    return sc.down[0][0] if sc.down else sc.events[0][0] if sc.events else None


def _event_window(sc: Scenario) -> tuple:
    """The cycles (after the origin) over which goodput is measured, the same for both links:
    from the fault (the start, for bit errors) to the end of the OAE run (the shorter), so the
    recovery after a flap counts."""
    return (sc.events[0][0] if sc.events else 0), sc.length["oae"] - 1


def run(exe: Path, sc: Scenario, kind: str, seed: int, waves: Path | None = None) -> dict:
    RUNS.mkdir(parents=True, exist_ok=True)
    path = RUNS / f"{sc.name}_{kind}{'_waves' if waves else ''}.txt"
    text = schedule_text(sc, kind, seed)
    if waves:
        text += f"waves {waves} {T0 - WAVE_BEFORE} {T0 + WAVE_AFTER}\n"
    path.write_text(text)
    done = subprocess.run([str(exe), str(path)], capture_output=True, text=True)
    if done.returncode:
        log = RUNS / f"{sc.name}_{kind}.log"
        log.write_text(done.stdout + done.stderr)
        raise RuntimeError(f"{sc.name} on the {LINKS[kind].label} link failed: {done.stderr.strip()} (log {log})")
    path.with_suffix(".json").write_text(done.stdout)
    return json.loads(done.stdout)


def measure(sc: Scenario, kind: str, raw: dict) -> dict:
    """The row of one run: detection, ghosts (both signs), frames, goodput."""
    origin, end = raw["origin"], raw["origin"] + raw["cycles"]
    changes = [c for c in raw["changes"] if c[0] >= origin]
    before = {}
    for cycle, e, k, v in raw["changes"]:
        if cycle < origin:
            before[(e, k)] = v
    names = raw["beliefs"]
    observers = {f"{'ab'[e]}.{names[k]}": ["link"] for e in (0, 1) for k in range(len(names))}
    meter = GhostMeter(["link"], observers, start=origin)
    for (e, k), v in before.items():
        if not v:
            meter.believe(origin, f"{'ab'[e]}.{names[k]}", "link", False)
    events = sorted(
        [(origin + s, 0, False) for s, _ in sc.down]
        + [(origin + t, 0, True) for _, t in sc.down if t is not None]
        + [(c, 1, (e, k, v)) for c, e, k, v in changes]
    )
    for cycle, what, arg in events:
        if cycle >= end:
            break
        if what == 0:
            meter.actual(cycle, "link", arg)
        else:
            e, k, v = arg
            meter.believe(cycle, f"{'ab'[e]}.{names[k]}", "link", bool(v))
    # (A corrupted frame that is never delivered whole also counts as lost: not added twice.)
    lost = sum(s["lost"] + s["duplicated"] for s in raw["streams"])
    if lost and sc.down:
        meter.lost("link", lost)
    report = meter.finish(end)
    seen = [g for ev in report.events if not ev.unseen for g in ev.ghosts] + list(report.spurious)
    first_down = [{} for _ in names]  # per belief: end -> cycles from the fault to its first fall
    first = _first_fault(sc)
    fault = None if first is None else origin + first
    if fault is not None:
        for cycle, e, k, v in changes:
            if not v and cycle >= fault:
                first_down[k].setdefault(e, cycle - fault)
    main = [f"{'ab'[e]}.{names[0]}" for e in (0, 1)]
    ghosts = {
        sign: sum(g.cycles for g in seen if g.observer in main and g.sign == sign)
        for sign in (UP_WHILE_DOWN, DOWN_WHILE_UP)
    }
    streams = raw["streams"]
    marks = raw["marks"]
    slices = enc.SLICES_PER_FRAME
    goodput = None
    if len(marks) == 2 and marks[1][0] > marks[0][0]:
        cycles = marks[1][0] - marks[0][0]
        goodput = (marks[1][1] + marks[1][2] - marks[0][1] - marks[0][2]) * slices / (2 * cycles)
    row = {
        "name": sc.name,
        "link": kind,
        "training_cycles": raw["up"],
        "detection_cycles": max(first_down[0].values()) if len(first_down[0]) == 2 else None,
        "first_detection_cycles": min(first_down[0].values()) if first_down[0] else None,
        "ghost_cycles": ghosts[UP_WHILE_DOWN],
        "ghost_cycles_down_while_up": ghosts[DOWN_WHILE_UP],
        "unseen_faults": len(report.unseen),
        # Faults nobody noticed and nothing was lost by: the cycles the link was down, hidden.
        "hidden_cycles": sum((ev.end if ev.end is not None else end) - ev.start for ev in report.unseen),
        "unusable_cycles": unusable_cycles(sc, raw),
        "frames_lost": sum(s["lost"] for s in streams),
        "frames_duplicated": sum(s["duplicated"] for s in streams),
        "frames_corrupted": sum(s["corrupted"] for s in streams),
        "frames_delivered": sum(s["delivered"] for s in streams),
        "frames_undelivered_at_end": sum(s["undelivered"] for s in streams),
        "goodput": goodput,
        # Until both ends got a frame handed in from the fault on (the fabrics' "flows").
        "flows_cycles": max(s["flows"] for s in streams)
        if fault is not None and min(s["flows"] for s in streams) >= 0
        else None,
        "cycles": raw["cycles"],
        "sim_seconds": raw["seconds"],
    }
    if raw["tokens"]:
        up_at_end = all(before_end(raw, e, end) for e in (0, 1))
        since = [c for t in raw["tokens"] for c in t["in_flight_since"]]
        row.update(
            {
                "tokens_delivered": sum(t["delivered"] for t in raw["tokens"]),
                "tokens_duplicated": sum(t["duplicated"] for t in raw["tokens"]),
                "tokens_in_flight_at_end": len(since),
                # A token still in flight long after it was handed in, on a link up at the end, is
                # lost; on a link still down it is frozen, as the protocol means it to be.
                "tokens_lost": sum(c < end - _STALE for c in since) if up_at_end else 0,
            }
        )
    else:
        row.update({"tokens_lost": None, "tokens_duplicated": None})  # a link with no token plane
    if kind == "ltssm":
        extra = [f"{'ab'[e]}.{names[1]}" for e in (0, 1)]
        for sign, key in (
            (UP_WHILE_DOWN, "completer_ghost_cycles"),
            (DOWN_WHILE_UP, "completer_ghost_cycles_down_while_up"),
        ):
            row[key] = sum(g.cycles for g in seen if g.observer in extra and g.sign == sign)
        row["completer_detection_cycles"] = max(first_down[1].values()) if len(first_down[1]) == 2 else None
    return row


_STALE = 20_000  # cycles: a token in flight this long on a working link is lost


def unusable_cycles(sc: Scenario, raw: dict) -> int:
    """Cycles of the run (from the origin) in which the link carried no user traffic between its
    ends: it was actually down, or either end believed it down (its first belief: OAE up, DL_Up),
    so a fabric above it had to route round it or wait."""
    origin, end = raw["origin"], raw["origin"] + raw["cycles"]
    edges = [(origin + s, 1) for s, _ in sc.down] + [(origin + t, -1) for _, t in sc.down if t is not None]
    believed = {e: before_end(raw, e, origin) for e in (0, 1)}  # as of the origin
    level = sum(not b for b in believed.values())  # causes of no traffic, at once
    for cycle, e, k, v in raw["changes"]:
        if k == 0 and origin <= cycle < end and bool(v) != believed[e]:
            believed[e] = bool(v)
            edges.append((cycle, -1 if v else 1))
    total, last = 0, origin
    for cycle, step in sorted(edges):
        cycle = min(cycle, end)
        total += cycle - last if level > 0 else 0
        level, last = level + step, cycle
    return total + (end - last if level > 0 else 0)


def before_end(raw: dict, end_index: int, end: int) -> bool:
    """End ``end_index``'s first belief (link up) just before cycle ``end``."""
    value = True
    for cycle, e, k, v in raw["changes"]:
        if e == end_index and k == 0 and cycle < end:
            value = bool(v)
    return value


# The key signals of the OAE pair for a cut, in the order GTKWave shows them: the fault, each
# end's word, state and suspicion, and what the user sees.
_WAVE_SIGNALS = [
    ("clk", 1),
    ("ab_cut", 1),
    ("ba_cut", 1),
    ("a_tx__word", 72),
    ("b_tx__word", 72),
    ("a_status__state", 2),
    ("b_status__state", 2),
    ("a_status__suspect", 1),
    ("b_status__suspect", 1),
    ("a_status__reason", 3),
    ("b_status__reason", 3),
    ("a_status__waiting", 1),
    ("b_status__waiting", 1),
    ("a_status__balance", 2),
    ("b_status__balance", 2),
    ("a_frames_out__0__valid", 1),
    ("b_frames_out__0__valid", 1),
    ("a_ait_out__valid", 1),
    ("b_ait_out__valid", 1),
    ("a_status__counters__suspicions", 16),
    ("b_status__counters__suspicions", 16),
]


def record_waves(seed: int) -> tuple:
    """The OAE pair through the permanent cut of both directions, traced from WAVE_BEFORE cycles
    before the fault to WAVE_AFTER after it; a GTKWave save file beside it. Returns both paths."""
    exe = build("oae", waves=True)
    suffix = ".fst" if fst_available(install=False) else ".vcd"
    wave = REPORT.with_name("oae_cut_both" + suffix)
    raw = run(exe, SCENARIOS["cut_both"], "oae", seed, waves=wave)
    top = LINKS["oae"].design
    lines = [
        "[*] the OAE pair, both directions cut at the marker (sim/experiment.py)",
        f'[dumpfile] "{wave}"',
        "[timestart] 0",
        "[size] 1600 800",
        # Ten time units per cycle, counted from reset (two cycles of it): the fault's edge.
        f"[markertime] {(2 + raw['origin'] + T0) * 10}",
    ]
    for name, width in _WAVE_SIGNALS:
        lines += ["@28" if width == 1 else "@22", f"TOP.{top}.{name}" + (f"[{width - 1}:0]" if width > 1 else "")]
    save = wave.with_suffix(".gtkw")
    save.write_text("\n".join(lines) + "\n")
    return wave, save


# --- The table -------------------------------------------------------------------------------
def _fmt(value, unit=""):
    if value is None:
        return "never"
    if isinstance(value, float):
        return f"{value:.3f}"
    return f"{value:,}{unit}"


def _ratio(a, b):
    if a is None or b is None:
        return "-"
    if b == 0:
        return "-" if a == 0 else "inf"
    return f"{a / b:,.0f}x" if a / b >= 10 else f"{a / b:.2f}x"


_MARK = {OAE: "OAE", EQUAL: "=", "pcie": "PCIe"}


def scenario_verdicts(rows_by_scenario: dict, scenarios: dict | None = None) -> dict:
    """``{scenario: {column: winner}}`` for every scenario both links ran; ``scenarios``: name ->
    Scenario, where not all are built-ins."""
    scenarios = scenarios or SCENARIOS
    out = {}
    for name, rows in rows_by_scenario.items():
        by_link = {r["link"]: r for r in rows}
        if set(by_link) == {"oae", "ltssm"}:
            sc = scenarios[name]
            limit = belief_limit(sc.latency, LinkParams().los_cycles)
            out[name] = verdicts(by_link["oae"], by_link["ltssm"], limit, bool(sc.down))
    return out


def table(rows_by_scenario: dict, verdict_by_scenario: dict | None = None, scenarios: dict | None = None) -> str:
    """The terminal's tables; ``verdict_by_scenario`` as :func:`scenario_verdicts` gives it
    (computed here when not given); ``scenarios`` as there."""
    scenarios = scenarios or SCENARIOS
    if verdict_by_scenario is None:
        verdict_by_scenario = scenario_verdicts(rows_by_scenario, scenarios)
    head = (
        "link",
        "detect (cyc)",
        "ghost up/down",
        "ghost down/up",
        "hidden (cyc)",
        "lost",
        "dup",
        "corrupt",
        "undelivered",
        "tokens lost/dup",
        "goodput",
    )
    lines = []
    for name, rows in rows_by_scenario.items():
        sc = scenarios[name]
        start, end = _event_window(sc)
        lines.append(f"\n{name}: {sc.what} (goodput over cycles {start:,} to {end:,} after the origin)")
        cells = [head]
        for r in rows:
            cells.append(
                (
                    LINKS[r["link"]].label,
                    _fmt(r["detection_cycles"]),
                    _fmt(r["ghost_cycles"]),
                    _fmt(r["ghost_cycles_down_while_up"]),
                    _fmt(r["hidden_cycles"]),
                    _fmt(r["frames_lost"]),
                    _fmt(r["frames_duplicated"]),
                    _fmt(r["frames_corrupted"]),
                    _fmt(r["frames_undelivered_at_end"]),
                    f"{r['tokens_lost']}/{r['tokens_duplicated']}" if r["tokens_lost"] is not None else "-",
                    _fmt(r["goodput"]),
                )
            )
            if r["link"] == "ltssm":
                # Its other belief, per outstanding request: the only one a slow completer moves.
                cells.append(
                    (
                        "  completer alive",
                        _fmt(r["completer_detection_cycles"]),
                        _fmt(r["completer_ghost_cycles"]),
                        _fmt(r["completer_ghost_cycles_down_while_up"]),
                        "",
                        "",
                        "",
                        "",
                        "",
                        "",
                        "",
                    )
                )
        if len(rows) == 2:
            o, p = sorted(rows, key=lambda r: r["link"] != "oae")
            v = verdict_by_scenario[name]
            cells.append(
                (
                    "better",
                    *(
                        _MARK[v[c]] if c in v else ""
                        for c in (
                            "detect",
                            "ghost up/down",
                            "ghost down/up",
                            "hidden",  # no verdict: riding out a flap that cost nothing is no fault
                            "lost",
                            "dup",
                            "corrupt",
                        )
                    ),
                    "",
                    _MARK[v["tokens lost/dup"]] if "tokens lost/dup" in v else "",
                    _MARK[v["goodput"]],
                )
            )
            cells.append(
                (
                    "PCIe / OAE",
                    _ratio(p["detection_cycles"], o["detection_cycles"]),
                    _ratio(p["ghost_cycles"], o["ghost_cycles"]),
                    _ratio(p["ghost_cycles_down_while_up"], o["ghost_cycles_down_while_up"]),
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    _ratio(p["goodput"], o["goodput"]),
                )
            )
        widths = [max(len(str(c[i])) for c in cells) for i in range(len(head))]
        for c in cells:
            lines.append(
                "  " + "  ".join(str(v).rjust(w) if i else str(v).ljust(w) for i, (v, w) in enumerate(zip(c, widths)))
            )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim.experiment", description=command_help(__doc__))
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS), help="run only these (repeatable)")
    scenario_file.add_argument(parser)
    parser.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2, help="runs at once (default 2)")
    parser.add_argument(
        "--no-waves", dest="waves", action="store_false", help="skip the traced build and the waveforms of the OAE cut"
    )
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    scenarios = dict(SCENARIOS)
    names = list(args.scenario or [])
    for path in args.scenario_file or []:
        try:
            sc = from_spec(load(path), args.seed)
        except ScenarioFileError as e:
            parser.error(str(e))
        if sc.name in names:
            parser.error(f"{path}: name: {sc.name!r} names another scenario of this run")
        scenarios[sc.name] = sc
        names.append(sc.name)
    names = names or (list(QUICK) if args.quick else list(SCENARIOS))
    from tqdm import tqdm

    latencies = sorted({scenarios[n].latency for n in names})
    print(
        f"experiment: building the two pairs on Verilator (logs: {build_dir_for('experiment_oae')}/build.log, "
        f"{build_dir_for('experiment_ltssm')}/build.log"
        + (", a pair of each per line latency" if latencies != [LATENCY] else "")
        + ")",
        flush=True,
    )
    builds = [(k, lat) for lat in latencies for k in LINKS]
    with ThreadPoolExecutor(max_workers=min(2, args.jobs)) as pool:
        exes = dict(zip(builds, pool.map(lambda b: build(b[0], latency=b[1]), builds)))
    work = [(n, k) for n in names for k in LINKS]
    # Longest first, so that two workers finish together.
    work.sort(key=lambda nk: -scenarios[nk[0]].length[nk[1]])
    results = {}
    started = time.monotonic()
    with (
        ThreadPoolExecutor(max_workers=args.jobs) as pool,
        tqdm(
            total=sum(scenarios[n].length[k] for n, k in work),
            unit="cyc",
            unit_scale=True,
            desc="experiment",
            file=sys.stderr,
        ) as bar,
    ):
        futures = {
            pool.submit(run, exes[(k, scenarios[n].latency)], scenarios[n], k, args.seed): (n, k) for n, k in work
        }
        for future in as_completed(futures):
            n, k = futures[future]
            results[(n, k)] = measure(scenarios[n], k, future.result())
            bar.update(scenarios[n].length[k])
    rows = {n: [results[(n, k)] for k in LINKS] for n in names}
    print(
        f"\nOAE build: window {OAE_WINDOW} frames per class, sized for the slowest built-in line "
        f"(slow_link, RTT {2 * (LATENCY + SLOWER) + TURNAROUND} cycles; PROTOCOL.md 4.4)"
    )
    # A file may run another line: each scenario's verdicts take its own limit.
    limits = sorted({belief_limit(lat, LinkParams().los_cycles) for lat in latencies})
    verdict_by_scenario = scenario_verdicts(rows, scenarios)
    print(table(rows, verdict_by_scenario, scenarios))
    tally = summary(verdict_by_scenario)
    counts = tally["counts"]
    print(
        f"\nbetter, over {len(verdict_by_scenario)} scenarios x columns: OAE {counts['oae']}, "
        f"PCIe-style {counts['pcie']}, equal within the physical limit "
        f"({' or '.join(map(str, limits))} cycles a belief{', by line latency' if len(limits) > 1 else ''}) "
        f"{counts['equal']}"
    )
    for cell in tally["pcie_better"]:
        print(f"  PCIe-style better: {cell}")
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(
        json.dumps(
            {
                "clock_mhz": CLOCK_MHZ,
                "latency": latencies[0] if len(latencies) == 1 else latencies,
                "oae_window": OAE_WINDOW,
                "seed": args.seed,
                "seconds": round(time.monotonic() - started, 1),
                "scenarios": [r for n in names for r in rows[n]],
                "belief_limit_cycles": limits[0] if len(limits) == 1 else limits,
                "verdicts": verdict_by_scenario,
                "verdict_summary": tally,
            },
            indent=2,
        )
        + "\n"
    )
    png = ghost_plot.plot([r for n in names for r in rows[n]], ghost_plot.fabric_report(), PLOT)
    print(f"\nexperiment: wrote {REPORT} and {png} (runs and their schedules under {RUNS})")
    if args.waves:
        wave, save = record_waves(args.seed)
        print(f"experiment: waveforms of the OAE cut in {wave} (gtkwave {save})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
