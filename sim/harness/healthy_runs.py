"""Healthy golden links run long, for the figure "no false suspicion in >= 10**7 cycles".

Four profiles (an idle link, digest and full-echo traffic, latency drift inside the margin) of
:data:`PROFILES` cycles each, 10**7 in all. ``make bench`` runs them whole (bench.json
``healthy_links``); ``make test`` runs each at a twentieth of its length (tests/test_link_properties.py),
as the full runs take about ten minutes of golden model on one core.
"""

import random

from sim.harness.link import Traffic, make_link

LATENCY = 16
# (name, extra make_link arguments, traffic, cycles): 10**7 cycles in all.
PROFILES = [
    ("idle", {}, Traffic(), 4_000_000),
    ("digest traffic", {}, Traffic(frame_load=(0.05, 0.05), ait_rate=0.2, take_rate=0.9), 2_000_000),
    ("full traffic", {"echo_mode": "full"}, Traffic(frame_load=(0.03, 0.03), ait_rate=0.2), 1_500_000),
    ("drift inside margin", {"drift": True}, Traffic(frame_load=(0.02,), ait_rate=0.1), 2_500_000),
]
TOTAL_CYCLES = sum(p[3] for p in PROFILES)


def drift_schedule(latency, cycles, seed):
    """A slow wander of each latency inside [latency, latency + 3]: RTT changes by < margin."""
    rng = random.Random(seed)
    return [(t, latency + rng.randint(0, 3)) for t in range(5000, cycles, 20_000)]


def run_profile(name: str, fraction: float = 1.0) -> dict:
    """Run profile ``name`` for ``fraction`` of its cycles (the harness checks every cycle:
    frames exactly once, tokens, the balance invariant) and return what a healthy link must
    keep at zero, per end summed, plus whether both ends ended UP and the latencies the drift
    visited. Raises ValueError for an unknown profile or a fraction outside (0, 1]."""
    profiles = {p[0]: p for p in PROFILES}
    if name not in profiles:
        raise ValueError(f"unknown healthy profile {name!r}; choose from {', '.join(profiles)}")
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], not {fraction!r}")
    _, extra, traffic, full_cycles = profiles[name]
    cycles = int(full_cycles * fraction)
    extra = dict(extra)
    faults_ab = faults_ba = None
    if extra.pop("drift", False):
        faults_ab = {"latency_changes": drift_schedule(LATENCY, cycles, 1)}
        faults_ba = {"latency_changes": drift_schedule(LATENCY, cycles, 2)}
    h = make_link(LATENCY, faults_ab=faults_ab, faults_ba=faults_ba, traffic_a=traffic, traffic_b=traffic, **extra)
    h.run(cycles)
    result = {
        "cycles": cycles,
        "both_up": h.both_up(),
        "latencies": sorted({lat for _, lat in (faults_ab or {}).get("latency_changes", [])}),
    }
    for key in ("suspicions", "anomalies", "malformed", "trainings"):
        result[key] = sum(getattr(ep.counters, key) for ep in (h.a, h.b))
    h.quiesce()
    return result
