"""`make bench`: performance figures of the link, written to build/report/bench.json.

Goodput and detection are cycle counts of a deterministic model: exact, machine-independent.
``healthy_links`` runs the four healthy profiles of sim/harness/healthy_runs.py whole, 10**7 cycles, two
at a time, and counts suspicions, anomalies and trainings (all must be zero).
Simulation speed is wall-clock and noisy: each speed is the median of ``--repeats`` runs, and
the ratios between simulators are taken from medians measured in the same run.

Simulator speeds, all of the same design (rtl/simulation/link_pair.py: two RTL endpoints and the RTL
channel, 2 classes, digest echo, 16-cycle channel), in link cycles per second of wall time:

* verilator_cpp_link_cycles_per_s: the Verilated model driven by a C++ loop, no Python at all
  (sim/harness/verilator_free.py), same inputs as the next figure: the ceiling;
* verilator_link_cycles_per_s: Verilator under cocotb, constant inputs, one Timer wait per
  segment (cocotb does no work per cycle; the link is UP and moving frames both ways);
* cocotb_lockstep_cycles_per_s: the same Verilator model driven cycle by cycle by the lockstep
  testbench, with the golden link stepped alongside and every check made;
* amaranth_pysim_link_cycles_per_s: the same design under amaranth.sim, same constant inputs.

The experiment's C++ loop (sim/experiment.py) runs both the OAE pair and the contrast pair
(rtl/simulation/pcie_pair.py at the real timer scale) on a healthy 16-cycle line:
contrast_verilator_cpp_cycles_per_s and oae_experiment_cpp_cycles_per_s (training included);
detection_cycles_by_link and detection_ratio: a permanent cut to both ends believing the link
down, per link, and the contrast link's figure over the OAE link's.

The RTL triangle (sim/harness/fabric_rtl.py): rtl_fabric_cycles_per_s (its C++ loop, three
nodes and three channels a cycle); over every single fault of PROTOCOL.md 10.8
(sim/fabric_bounds.py, per fault in rtl_fabric_faults), rtl_verdict_cycles_max and
rtl_failover_cycles_max with the bounds beside them (``rtl_verdict_bound_cycles``,
``rtl_failover_bound_cycles``), and rtl_flows_cycles_max: until both ends of a cut link get
frames made after the cut.

Campaigns (sim/campaign.py) on a local Dask cluster: campaign_runs_per_s_1_worker and
campaign_runs_per_s_2_workers (medians), and campaign_2_over_1_workers, their ratio.

Usage: python -m bench [--repeats N] [--quick]
"""

import argparse
import json
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from golden import encoding as enc
from golden.params import (
    BUILD_OPTIONS,
    TURNAROUND,
    LinkParams,
    build_params,
    longest_latency,
    window_for_rtt,
    window_in_use,
)
from sim.harness.healthy_runs import PROFILES, TOTAL_CYCLES, run_profile
from sim.harness.link import (
    SATURATED_ONE_CLASS,
    LinkHarness,
    Traffic,
    goodput_share,
    goodput_warm_up,
    make_link,
    run_flap,
)
from sim.tools.cli import command_help


def _median(values) -> float:
    return float(np.median(np.asarray(values, dtype=float)))


REPORT = Path(__file__).resolve().parent.parent / "build" / "report" / "bench.json"
DEFAULT_LATENCY = 16  # the bench's default channel: 16 cycles each way


DEFAULT_WINDOW = LinkParams().window


def goodput(mode, latency=DEFAULT_LATENCY, window=DEFAULT_WINDOW, cycles=40_000, ber=0.0, events=None, **scheme):
    """Payload bits delivered per direction / raw slice bits, both directions saturated with
    64-byte frames of one class, on a channel with bit error rate ``ber`` both ways. Measured
    after the link is up and the pipeline is full. ``events``: a dict to receive the counts of
    recoveries and trainings during the measurement (both ends). ``scheme``: recovery and
    token_copies (golden.params.LinkParams)."""
    faults = {"bit_error_rate": ber} if ber else None
    h = make_link(
        latency,
        traffic_a=SATURATED_ONE_CLASS,
        traffic_b=SATURATED_ONE_CLASS,
        num_classes=1,
        echo_mode=mode,
        window=window,
        faults_ab=faults,
        faults_ba=faults,
        **scheme,
    )
    h.run_until(LinkHarness.both_up, 100_000)
    h.run(goodput_warm_up(latency))
    return measured_goodput(h, cycles, events)


def measured_goodput(h, cycles, events=None):
    """Run ``h`` ``cycles`` cycles: the smaller direction's goodput of class 0 over them;
    ``events`` receives the recoveries and trainings meanwhile (both ends)."""
    start = [h.stats["a"].frames_out[0], h.stats["b"].frames_out[0]]
    before = {k: getattr(h.a.counters, k) + getattr(h.b.counters, k) for k in ("recoveries", "trainings")}
    h.run(cycles)
    if events is not None:
        events.update({k: getattr(h.a.counters, k) + getattr(h.b.counters, k) - v for k, v in before.items()})
    per_direction = [goodput_share(h.stats[n].frames_out[0] - s, cycles) for n, s in zip("ab", start)]
    return min(per_direction)


BERS = (1e-6, 1e-5, 1e-4, 1e-3)
BER_TARGETS = {1e-6: 0.85, 1e-5: 0.82, 1e-4: 0.55, 1e-3: 0.15}  # digest mode (issue 10)
# The builds measured against bit error rate: {name: (echo mode, recovery scheme)}. "digest" and
# "full": the defaults, selective repeat (PROTOCOL.md 4.6) with token copies (3.1); the others
# go-back-N, with and without copies. All are built in RTL and golden alike.
GO_BACK_N = {"recovery": "go_back_n", "token_copies": False}
GO_BACK_N_COPIES = {"recovery": "go_back_n", "token_copies": True}
BER_BUILDS = {
    "digest": ("digest", {}),
    "full": ("full", {}),
    "digest_go_back_n": ("digest", GO_BACK_N),
    "digest_go_back_n_copies": ("digest", GO_BACK_N_COPIES),
}


def recovery_bounds(g0, mode, ber, rtt):
    """The goodput frame-level recovery allows in theory (PROTOCOL.md 4.6), from the error-free
    goodput ``g0``, token losses aside. A frame attempt is sent in F words (9 in digest mode: 8
    slices and the digest; 17 in full: the echoes too). Go-back-N: any hit wastes the attempt
    and a round trip of the frames sent after it. Selective (digest mode): a hit on a tag or on
    the digest (a lost word) costs as go-back-N; a hit on the payload alone costs the attempt
    and a REPLAY word. In full mode a payload hit shows as an echo mismatch: go-back-N."""
    words = enc.SLICES_PER_FRAME + enc.returned_words_per_frame(mode == "full")
    p_fail = 1 - (1 - ber) ** (enc.WORD_BITS * words)
    gbn = g0 * words / (words + p_fail / (1 - p_fail) * (words + rtt))
    if mode == "full":
        return {"go_back_n": round(gbn, 4), "selective": round(gbn, 4)}
    payload_bits = enc.SLICES_PER_FRAME * enc.SLICE_BITS
    p_lost = 1 - (1 - ber) ** (enc.WORD_BITS * words - payload_bits)
    p_hit = (1 - (1 - ber) ** payload_bits) * (1 - p_lost)
    selective = g0 * words * (1 - p_lost - p_hit) / (words + p_lost * rtt + p_hit)
    return {"go_back_n": round(gbn, 4), "selective": round(selective, 4)}


def goodput_vs_ber(cycles):
    """Goodput against bit error rate for each build of BER_BUILDS at the default latency and
    window, with the bounds of the recovery schemes and the events behind each figure."""
    rtt = 2 * DEFAULT_LATENCY + TURNAROUND
    table, bounds, events = {}, {}, {}
    for name, (mode, scheme) in BER_BUILDS.items():
        g0 = goodput(mode, cycles=cycles, **scheme)
        table[name], bounds[name], events[name] = {"0": round(g0, 4)}, {}, {}
        for ber in BERS:
            ev = {}
            table[name][f"{ber:g}"] = round(goodput(mode, cycles=cycles, ber=ber, events=ev, **scheme), 4)
            bounds[name][f"{ber:g}"] = recovery_bounds(g0, mode, ber, rtt)
            events[name][f"{ber:g}"] = ev
    return {
        "goodput_vs_ber": table,
        "goodput_vs_ber_bounds": bounds,
        "goodput_vs_ber_events": events,
        "goodput_vs_ber_targets_digest": {f"{b:g}": t for b, t in BER_TARGETS.items()},
    }


TRAINING_BERS = (1e-5, 1e-4)


def trainings_under_bit_errors(cycles):
    """Trainings per 10^6 cycles (both ends) of the default link, saturated both ways, under
    bit errors alone, and the token words asked again meanwhile (PROTOCOL.md 3.1): a lost
    token-plane word is recovered with the link UP, so a line that only has bit errors should
    not train at all."""
    trainings, asks = {}, {}
    for ber in TRAINING_BERS:
        faults = {"bit_error_rate": ber}
        h = make_link(
            DEFAULT_LATENCY,
            traffic_a=SATURATED_ONE_CLASS,
            traffic_b=SATURATED_ONE_CLASS,
            num_classes=1,
            faults_ab=faults,
            faults_ba=faults,
        )
        h.run_until(LinkHarness.both_up, 100_000)
        h.run(cycles)
        trainings[f"{ber:g}"] = round((h.a.counters.trainings + h.b.counters.trainings) * 1e6 / cycles, 2)
        asks[f"{ber:g}"] = round((h.a.counters.token_asks + h.b.counters.token_asks) * 1e6 / cycles, 1)
    return {
        "trainings_per_1e6_cycles": trainings,
        "token_asks_per_1e6_cycles": asks,
        "trainings_cycles_measured": cycles,
    }


def resume_after_flaps():
    """Cycles each end believes the link down after the line is back (PROTOCOL.md 2.3), worst
    over flaps of both directions from 1 cycle up to the liveness bound, at the default latency
    with traffic flowing; the issue's target is 2 x RTT + 16."""
    rtt = 2 * DEFAULT_LATENCY + TURNAROUND
    lengths = sorted({1, 4, 7, 8, 9, 16, rtt, 100, 300, 1000, 3000, LinkParams().liveness_bound(rtt)})
    traffic = Traffic(frame_load=(0.3,), ait_rate=0.2, take_rate=0.8)
    by_length = {}
    for length in lengths:
        h = make_link(DEFAULT_LATENCY, traffic_a=traffic, traffic_b=traffic, num_classes=1)
        h.run_until(LinkHarness.both_up, 100_000)
        h.run(500)
        down_after, _ = run_flap(h, length)
        by_length[str(length)] = max(down_after.values())
    return {
        "resume_cycles_max": max(by_length.values()),
        "resume_cycles_by_flap_length": by_length,
        "resume_target_cycles": 2 * rtt + 16,
    }


SLOW_LATENCY = DEFAULT_LATENCY + 24  # slow_link's line (sim/experiment.py)


def slow_link_goodput(cycles):
    """Goodput after the line slows from the default latency to SLOW_LATENCY each way, both
    directions saturated, on a build whose window is sized for the slower line (PROTOCOL.md 4.4);
    measured once the link is UP at the new round trip."""
    window = window_for_rtt(2 * SLOW_LATENCY + TURNAROUND)
    h = make_link(
        DEFAULT_LATENCY,
        traffic_a=SATURATED_ONE_CLASS,
        traffic_b=SATURATED_ONE_CLASS,
        num_classes=1,
        window=window,
    )
    h.run_until(LinkHarness.both_up, 100_000)
    h.run(goodput_warm_up(DEFAULT_LATENCY))
    for d in (h.channel.ab, h.channel.ba):
        d.latency_changes = [(d.cycle + 10, SLOW_LATENCY)]
    changed = h.cycle
    h.run(4 * SLOW_LATENCY)
    h.run_until(LinkHarness.both_up, 100_000)
    down = h.cycle - changed
    h.run(goodput_warm_up(SLOW_LATENCY))
    return {
        "slow_link_goodput": round(measured_goodput(h, cycles), 4),
        "slow_link_window": window,
        "slow_link_rtt": h.a.rtt,
        "slow_link_up_again_cycles": down,
    }


def gray_ghost(cycles):
    """Cycles (summed over both ends) the link is believed UP while a gray failure drops every
    data word A sends (the experiment's gray_data, golden, one class saturated both ways)."""
    h = make_link(DEFAULT_LATENCY, traffic_a=SATURATED_ONE_CLASS, traffic_b=SATURATED_ONE_CLASS, num_classes=1)
    h.run_until(LinkHarness.both_up, 100_000)
    h.run(1000)
    start = h.channel.ab.cycle + 1
    h.channel.ab.gray = ((start, None, 0x80, 0x80, "drop"),)
    ghost, detected = 0, None
    for _ in range(cycles):
        h.step()
        ghost += h.a.up + h.b.up
        if detected is None and h.a.counters.suspicions:
            detected = h.a.cycle - start
    # The degraded verdict (PROTOCOL.md 4.6): from the first dropped word to the suspicion.
    return {"gray_ghost_cycles": ghost, "gray_detection_cycles": detected, "gray_cycles_measured": cycles}


LATENCIES = (4, 16, 64, 256, 1024)


def build_for_latency(latency):
    """(name, window) of the smallest documented build (golden.params.BUILD_OPTIONS) whose window
    covers a line of ``latency`` cycles each way; past all of them, ``custom`` with the window of
    the bandwidth-delay formula (golden.params.window_for_rtt, PROTOCOL.md 4.4)."""
    fitting = [
        (p.window, name)
        for name in BUILD_OPTIONS
        if longest_latency((p := build_params(name, num_classes=1)).window) >= latency
    ]
    if fitting:
        window, name = min(fitting)
        return name, window
    return "custom", window_for_rtt(2 * latency + TURNAROUND)


def goodput_vs_latency(cycles):
    """Digest goodput against channel latency, each on the smallest documented build that
    covers it (``build``; its ``window`` is the replay memory per class, ``replay_bytes``), which
    sends with the window in use the round trip needs (``window_in_use``, PROTOCOL.md 4.4)."""
    out = {}
    for latency in LATENCIES:
        build, window = build_for_latency(latency)
        out[str(latency)] = {
            "build": build,
            "window": window,
            "window_in_use": window_in_use(2 * latency + TURNAROUND, window),
            "goodput": round(goodput("digest", latency, window, max(cycles, 20 * latency)), 4),
            "replay_bytes": window * enc.FRAME_BYTES,
        }
    return out


def detection(latency=DEFAULT_LATENCY):
    """Worst cycles from a cut to SUSPECT at either end, over every start cycle of one token
    period, each direction and both, with traffic flowing."""
    rtt = 2 * latency + TURNAROUND
    traffic = Traffic(frame_load=(0.05,), ait_rate=0.3)
    base = make_link(latency, traffic_a=traffic, traffic_b=traffic, num_classes=1)
    base.run_until(LinkHarness.both_up, 100_000)
    start = base.cycle + 300
    worst, samples = 0, []
    for dirs in (("ab",), ("ba",), ("ab", "ba")):
        for offset in range(rtt + 1):
            c = start + offset
            f = {"cuts": [(c, None)]}
            h = make_link(
                latency,
                traffic_a=traffic,
                traffic_b=traffic,
                num_classes=1,
                faults_ab=f if "ab" in dirs else None,
                faults_ba=f if "ba" in dirs else None,
            )
            h.run(c + 4 * rtt + 64)
            for n in "ab":
                first = min(e[0] for e in h.stats[n].events if e[1] == "suspect" and e[0] >= c)
                samples.append(first - c)
                worst = max(worst, first - c)
    return {
        "detection_cycles_max": worst,
        "detection_cycles_median": _median(samples),
        "rtt_cycles": rtt,
        "rlfd_bound_cycles": rtt + LinkParams().margin,
        "detection_runs": len(samples),
    }


def speed(repeats, cycles):
    """Golden model speed: two endpoints + channel, bidirectional traffic, cycles per second."""
    traffic = Traffic(frame_load=(0.05, 0.05), ait_rate=0.2, take_rate=0.9)
    rates = []
    for r in range(repeats):
        h = make_link(DEFAULT_LATENCY, seed=r, traffic_a=traffic, traffic_b=traffic)
        h.run(2000)
        t = time.perf_counter()
        h.run(cycles)
        rates.append(cycles / (time.perf_counter() - t))
    return _median(rates), rates


def _run_link_pair(build, test_module, name, out_var, env):
    """Run a cocotb module of ``cocotb_tests`` on the link pair of ``build`` with the environment
    ``env``; the module writes its results as JSON to the file named by ``out_var``, which is
    build/report/<name>.json, read back."""
    from sim.tools.cocotb_run import build_dir_for, build_lock, run_cocotb
    from sim.tools.verilog import export

    build_dir = build_dir_for(f"link_pair_{build.tag}")
    with build_lock(build_dir):
        verilog = export("link_pair", build_dir / "verilog", params=build.pair_params())
    out = REPORT.parent / f"{name}.json"
    env = {**env, out_var: str(out)}
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    run_cocotb(
        verilog=verilog,
        toplevel="link_pair",
        test_module=test_module,
        build_dir=build_dir,
        test_dir=build_dir_for(f"bench_{name}"),
        extra_env=env,
        seed=1,
    )
    return json.loads(out.read_text())


def rtl_speed(repeats, quick):
    """Verilator free-running and cocotb lockstep speeds (cocotb_tests/link_bench.py)."""
    from sim.harness.link_scenarios import SCENARIOS

    env = {
        "OAE_BENCH_SEGMENTS": str(repeats),
        "OAE_BENCH_LOCKSTEP_CYCLES": "500" if quick else "2000",
        "OAE_BENCH_FREE_CYCLES": "20000" if quick else "200000",
    }
    return _run_link_pair(
        SCENARIOS["digest traffic"].build, "cocotb_tests.link_bench", "rtl_speed", "OAE_BENCH_OUT", env
    )


def rtl_goodput_vs_ber(cycles):
    """Goodput measured on the RTL pair (in lockstep with the golden link) at the bench's
    operating point, per echo mode, on a clean line and at each rate of BERS
    (cocotb_tests/link_goodput.py)."""
    from sim.harness.link_scenarios import goodput_build

    bers = ",".join(["0"] + [f"{b:g}" for b in BERS])
    return {
        mode: _run_link_pair(
            goodput_build(mode),
            "cocotb_tests.link_goodput",
            f"rtl_goodput_{mode}",
            "OAE_GOODPUT_OUT",
            {"OAE_GOODPUT_MODE": mode, "OAE_GOODPUT_BERS": bers, "OAE_GOODPUT_CYCLES": str(cycles)},
        )
        for mode in ("digest", "full")
    }


def cpp_speed(repeats, quick):
    """The Verilated pair under a C++ loop (sim/harness/verilator_free.py): same design, same inputs."""
    from sim.harness.link_scenarios import SCENARIOS
    from sim.harness.verilator_free import build, run

    executable = build(SCENARIOS["digest traffic"].build)
    return run(executable, 20_000 if quick else 400_000, repeats)


def pysim_speed(repeats, cycles):
    """amaranth.sim speed of the same design and inputs as the Verilator free-running figure."""
    from amaranth.sim import Simulator

    from rtl.simulation.link_pair import LinkPair
    from sim.harness.link_scenarios import SCENARIOS, free_running_inputs

    build = SCENARIOS["digest traffic"].build
    top = LinkPair(**build.pair_params())
    rates = []

    def port(path):
        sig = top
        for p in path:
            sig = sig[p] if isinstance(p, int) else getattr(sig, p)
        return sig

    async def testbench(ctx):
        for path, value in free_running_inputs(build).items():
            ctx.set(port(path), value)
        while not all(ctx.get(port((f"{e}_status", "state"))) == 3 for e in "ab"):
            await ctx.tick().repeat(10)
        for _ in range(repeats):
            t = time.perf_counter()
            await ctx.tick().repeat(cycles)
            rates.append(cycles / (time.perf_counter() - t))

    sim = Simulator(top)
    sim.add_clock(1e-8)
    sim.add_testbench(testbench)
    sim.run()
    return rates


def healthy_links(quick, jobs=2):
    """The healthy profiles of sim/harness/healthy_runs.py, whole (10**7 cycles; a tenth with
    ``quick``), ``jobs`` at a time: {profile: {cycles, suspicions, anomalies, ...}} and totals."""
    fraction = 0.1 if quick else 1.0
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        runs = dict(
            zip([p[0] for p in PROFILES], pool.map(run_profile, [p[0] for p in PROFILES], [fraction] * len(PROFILES)))
        )
    total = {key: sum(r[key] for r in runs.values()) for key in ("cycles", "suspicions", "anomalies", "trainings")}
    return {"healthy_links": runs, "healthy_links_total": total}


def triangle(seeds):
    """The golden fabric's scenarios (sim/triangle.py) over ``seeds``: the slowest verdict at
    every node, ghost cycles per scenario (min, median, max) and goodput while failed over."""
    from sim.triangle import SCENARIOS, run_scenario

    runs = {name: [run_scenario(name, seed=seed) for seed in seeds] for name in SCENARIOS}
    verdicts = [r["verdict_cycles_max"] for rs in runs.values() for r in rs if r["verdict_cycles_max"] is not None]
    ghost = {
        name: {"min": min(g), "median": _median(g), "max": max(g)}
        for name, rs in runs.items()
        for g in [[r["ghost"]["up_while_down"] for r in rs]]
    }
    windows = [r["disagreement_cycles"] for rs in runs.values() for r in rs if r["disagreement_cycles"] is not None]
    return {
        "verdict_cycles_max": max(verdicts),
        "disagreement_cycles_max": max(windows),
        "ghost_cycles": ghost,
        # Between the failed link's ends while it is down (their frames go round), per direction.
        "failover_goodput": {
            name: _median([r["failover_goodput"] for r in rs])
            for name, rs in runs.items()
            if rs[0]["failover_goodput"] is not None
        },
        "goodput_during_fault": {name: _median([r["goodput_during"] for r in rs]) for name, rs in runs.items()},
        # PROTOCOL.md 10.8 beside the slowest verdict of each triangle scenario.
        "verdict_vs_bound": {
            name: {"worst": max(v), "bound": rs[0]["verdict_bound_cycles"]}
            for name, rs in runs.items()
            if rs[0]["verdict_bound_cycles"] is not None
            for v in [[r["verdict_cycles_max"] or 0 for r in rs]]
        },
        "triangle_seeds": list(seeds),
    }


def contrast(repeats, quick):
    """The experiment's C++ loop (sim/experiment.py) on both pairs: simulation speed on the same
    healthy line (cycles per second, training included, medians of ``repeats``), and the cycles
    from a permanent cut to both ends believing the link down, per link, with their ratio."""
    import dataclasses
    from concurrent.futures import ThreadPoolExecutor

    from sim import experiment as x

    exes = {k: x.build(k) for k in x.LINKS}
    healthy = dataclasses.replace(x.SCENARIOS["ber_1e-8"], ber=0.0, length={"oae": 200_000, "ltssm": 200_000})
    speeds = {k: [] for k in x.LINKS}
    for _ in range(repeats):
        for k in x.LINKS:
            raw = x.run(exes[k], healthy, k, seed=1)
            speeds[k].append((raw["origin"] + raw["cycles"]) / raw["seconds"])
    names = ("cut_both",) if quick else ("cut_both", "cut_ab")
    with ThreadPoolExecutor(max_workers=2) as pool:
        rows = dict(
            zip(
                [(n, k) for n in names for k in x.LINKS],
                pool.map(
                    lambda nk: x.measure(
                        x.SCENARIOS[nk[0]], nk[1], x.run(exes[nk[1]], x.SCENARIOS[nk[0]], nk[1], seed=1)
                    ),
                    [(n, k) for n in names for k in x.LINKS],
                ),
            )
        )
    detection = {n: {k: rows[(n, k)]["detection_cycles"] for k in x.LINKS} for n in names}
    return {
        "contrast_verilator_cpp_cycles_per_s_runs": [round(v) for v in speeds["ltssm"]],
        "contrast_verilator_cpp_cycles_per_s": round(_median(speeds["ltssm"])),
        "oae_experiment_cpp_cycles_per_s_runs": [round(v) for v in speeds["oae"]],
        "oae_experiment_cpp_cycles_per_s": round(_median(speeds["oae"])),
        "detection_cycles_by_link": detection,
        "detection_ratio": {
            n: (round(d["ltssm"] / d["oae"]) if d["ltssm"] and d["oae"] else None) for n, d in detection.items()
        },
    }


def rtl_fabric(repeats: int, quick: bool) -> dict:
    """The RTL triangle (three RTL nodes on RTL channels of 8 cycles, Verilated, driven by the C++
    loop of sim/harness/fabric_rtl.py): its speed on a healthy fabric (frames between every pair
    at 0.05 per cycle, bring-up and drain included), and every single fault of PROTOCOL.md 10.8
    (sim/fabric_bounds.py: each link cut each way and both ways, each node dead): the slowest
    verdict and the failover by 10.8's definition, each beside its bound, and for the cuts the
    cycles until both ends of the link get a frame made after the cut (while it is still cut:
    round through the third node, behind the frames the cut held up)."""
    from sim import fabric_bounds
    from sim.harness import fabric_rtl

    exe = fabric_rtl.build(fabric_rtl.DESIGN)
    cycles = 20_000 if quick else 100_000
    speeds = []
    for k in range(repeats):
        raw = fabric_rtl.run(
            exe, f"bench_healthy{k}", f"seed {k + 1}\nsettle 500\ncycles {cycles}\nload 0.05\ndrain_quiet 2000\n"
        )
        speeds.append(raw["drained_at"] / raw["seconds"])
    rows = fabric_bounds.measure(exe, fabric_rtl.DESIGN_LATENCY)
    cuts = [r for r in rows if "failover" in r]
    failovers = [r["failover"] for r in cuts]
    flows = [r["flows"] for r in cuts]
    return {
        "rtl_fabric_cycles_per_s_runs": [round(v) for v in speeds],
        "rtl_fabric_cycles_per_s": round(_median(speeds)),
        "rtl_fabric_faults": {r["fault"]: {k: v for k, v in r.items() if k != "fault"} for r in rows},
        "rtl_verdict_cycles_max": max(r["verdict"] for r in rows),
        "rtl_verdict_bound_cycles": max(r["verdict_bound"] for r in rows),
        "rtl_failover_cycles_max": None if None in failovers else max(failovers),
        "rtl_failover_bound_cycles": max(r["failover_bound"] for r in cuts),
        "rtl_flows_cycles_max": None if None in flows else max(flows),
    }


def campaign_speed(repeats: int, quick: bool) -> dict:
    """Campaign runs per second on a local Dask cluster of 1 and of 2 worker processes: the same
    campaign (scenarios/campaign/triangle_day.toml on the Verilated triangles, ``runs`` runs), timed from
    the first run submitted to the last done (the cluster's start aside); medians of the repeats,
    and the ratio of the two medians."""
    import argparse as _argparse
    import tempfile

    from sim import campaign
    from sim.scenario_file import SCENARIOS

    path = SCENARIOS / "campaign" / "triangle_day.toml"
    runs = 4 if quick else 8
    speeds = {1: [], 2: []}
    for _ in range(repeats):
        for workers in (1, 2):
            with tempfile.TemporaryDirectory() as out:
                args = _argparse.Namespace(
                    runs=runs, seed=1, out=Path(out), workers=workers, scheduler=None, mutant=None
                )
                campaign.campaign(args, path, out=lambda *_: None)
                summary = json.loads((Path(out) / "summary.json").read_text())
            speeds[workers].append(summary["ran"] / summary["run_seconds"])
    one, two = _median(speeds[1]), _median(speeds[2])
    return {
        "campaign_runs_per_s_1_worker": round(one, 3),
        "campaign_runs_per_s_2_workers": round(two, 3),
        "campaign_runs_per_s_runs": {str(k): [round(v, 3) for v in vs] for k, vs in speeds.items()},
        "campaign_2_over_1_workers": round(two / one, 2),
        "campaign_runs": runs,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=command_help(__doc__))
    parser.add_argument("--repeats", type=int, default=5, help="runs per speed figure (median)")
    parser.add_argument("--quick", action="store_true", help="shorter runs, for a smoke test")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    cycles = 20_000 if args.quick else 100_000
    report = {
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "channel": {"latency_cycles": DEFAULT_LATENCY},
        "params": LinkParams().as_dict(),
    }
    steps = [
        ("golden speed", lambda: speed(args.repeats, cycles)),
        ("goodput digest", lambda: goodput("digest", cycles=cycles // 2)),
        ("goodput full", lambda: goodput("full", cycles=cycles // 2)),
        ("detection", detection),
        ("rtl speed (Verilator, C++ loop)", lambda: cpp_speed(args.repeats, args.quick)),
        ("rtl speed (Verilator, cocotb)", lambda: rtl_speed(args.repeats, args.quick)),
        ("rtl speed (amaranth.sim)", lambda: pysim_speed(args.repeats, 50 if args.quick else 100)),
        (
            "goodput vs latency and window",
            lambda: {
                f"{mode}_L{lat}_W{w}": round(goodput(mode, lat, w, cycles // 4), 4)
                for mode in ("digest", "full")
                for lat in (4, 16, 32, 64)
                for w in (16, 31)
            },
        ),
        ("goodput vs bit error rate", lambda: goodput_vs_ber(cycles * 2 // 5)),
        ("goodput vs bit error rate (RTL, lockstep)", lambda: rtl_goodput_vs_ber(cycles // 5)),
        ("trainings under bit errors", lambda: trainings_under_bit_errors(cycles * 5)),
        ("resume after flaps", resume_after_flaps),
        ("slow link", lambda: slow_link_goodput(cycles // 2)),
        ("gray line", lambda: gray_ghost(cycles * 2)),
        ("goodput vs latency (BDP window)", lambda: goodput_vs_latency(cycles // 4)),
        (f"healthy links, {TOTAL_CYCLES // (10 if args.quick else 1):,} cycles", lambda: healthy_links(args.quick)),
        ("triangle (golden)", lambda: triangle(range(1, 2 if args.quick else 4))),
        ("contrast link (Verilator, C++ loop)", lambda: contrast(args.repeats, args.quick)),
        ("fabric (RTL, Verilator, C++ loop)", lambda: rtl_fabric(args.repeats, args.quick)),
        ("campaign (Dask, 1 and 2 workers)", lambda: campaign_speed(min(args.repeats, 3), args.quick)),
    ]
    for name, fn in steps:
        t = time.perf_counter()
        print(f"bench: {name} ...", end="", flush=True)
        result = fn()
        print(f" {time.perf_counter() - t:.1f} s", flush=True)
        if name == "golden speed":
            report["golden_link_cycles_per_s"] = round(result[0])
            report["golden_link_cycles_per_s_runs"] = [round(x) for x in result[1]]
        elif name == "goodput digest":
            report["goodput_digest"] = round(result, 4)
        elif name == "goodput full":
            report["goodput_full"] = round(result, 4)
        elif name in ("detection", "fabric (RTL, Verilator, C++ loop)", "campaign (Dask, 1 and 2 workers)"):
            report.update(result)
        elif name.startswith("rtl speed (Verilator, C++"):
            runs = result["verilator_cpp_link_cycles_per_s_runs"]
            report["verilator_cpp_link_cycles_per_s_runs"] = [round(x) for x in runs]
            report["verilator_cpp_link_cycles_per_s"] = round(_median(runs))
            report["verilator_cpp_frames_per_cycle_at_b"] = round(result["verilator_cpp_frames_per_cycle_at_b"], 4)
        elif name.startswith("rtl speed (Verilator"):
            report.update({k: [round(x) for x in v] if isinstance(v, list) else round(v, 4) for k, v in result.items()})
            for key in ("verilator_link_cycles_per_s", "cocotb_lockstep_cycles_per_s"):
                report[key] = round(_median(result[f"{key}_runs"]))
        elif name.startswith("rtl speed (amaranth"):
            report["amaranth_pysim_link_cycles_per_s_runs"] = [round(x, 1) for x in result]
            report["amaranth_pysim_link_cycles_per_s"] = round(_median(result), 1)
        elif name.startswith("goodput vs bit error rate (RTL"):
            report["rtl_goodput_vs_ber"] = result
        elif name == "goodput vs latency and window":
            report["goodput_sweep"] = result
        elif name == "goodput vs bit error rate" or name.startswith(
            ("healthy links", "triangle", "contrast", "trainings under", "resume", "slow link", "gray line")
        ):
            report.update(result)
        else:
            report["goodput_vs_latency"] = result
    x, v, c, p = (
        report[k]
        for k in (
            "verilator_cpp_link_cycles_per_s",
            "verilator_link_cycles_per_s",
            "cocotb_lockstep_cycles_per_s",
            "amaranth_pysim_link_cycles_per_s",
        )
    )
    report["ratios"] = {
        "cpp_loop_over_cocotb_free_running": round(x / v, 2),
        "verilator_over_pysim": round(v / p, 1),
        "verilator_over_cocotb_lockstep": round(v / c, 1),
        "cocotb_lockstep_over_pysim": round(c / p, 1),
        "golden_over_cocotb_lockstep": round(report["golden_link_cycles_per_s"] / c, 2),
        "oae_over_contrast_cpp_loop": round(
            report["oae_experiment_cpp_cycles_per_s"] / report["contrast_verilator_cpp_cycles_per_s"], 2
        ),
    }
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(json.dumps(report, indent=2) + "\n")
    keys = (
        "golden_link_cycles_per_s",
        "verilator_cpp_link_cycles_per_s",
        "verilator_link_cycles_per_s",
        "cocotb_lockstep_cycles_per_s",
        "amaranth_pysim_link_cycles_per_s",
        "ratios",
        "goodput_digest",
        "goodput_full",
        "rtt_cycles",
        "rlfd_bound_cycles",
        "detection_cycles_max",
        "detection_cycles_median",
        "healthy_links_total",
        "verdict_cycles_max",
        "failover_goodput",
        "contrast_verilator_cpp_cycles_per_s",
        "oae_experiment_cpp_cycles_per_s",
        "detection_cycles_by_link",
        "detection_ratio",
        "rtl_fabric_cycles_per_s",
        "rtl_verdict_cycles_max",
        "rtl_verdict_bound_cycles",
        "rtl_failover_cycles_max",
        "rtl_failover_bound_cycles",
        "rtl_flows_cycles_max",
        "campaign_runs_per_s_1_worker",
        "campaign_runs_per_s_2_workers",
        "campaign_2_over_1_workers",
    )
    for k in keys:
        print(f"  {k:28s} {report[k]}")
    print("  goodput vs bit error rate (per direction; bounds: go-back-N / selective; target, digest)")
    for name, row in report["goodput_vs_ber"].items():
        for ber, g in row.items():
            b = report["goodput_vs_ber_bounds"][name].get(ber)
            extra = "" if b is None else f"   bound {b['go_back_n']:.3f} / {b['selective']:.3f}"
            target = report["goodput_vs_ber_targets_digest"].get(ber) if name.startswith("digest") else None
            extra += "" if target is None else f"   target {target}"
            rtl = report["rtl_goodput_vs_ber"].get(name, {}).get(ber)
            extra += "" if rtl is None else f"   RTL {rtl:.3f}"
            print(f"    {name:16s} BER {ber:>6s}: {g:.3f}{extra}")
    print("  goodput vs latency (digest, window by the bandwidth-delay formula, PROTOCOL.md 4.4)")
    for lat, row in report["goodput_vs_latency"].items():
        print(
            f"    L {lat:>4s}: build {row['build']:7s} window {row['window']:3d} (in use {row['window_in_use']:3d}), "
            f"goodput {row['goodput']:.3f}, "
            f"replay {row['replay_bytes']} B per class"
        )
    print(f"report: {REPORT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
