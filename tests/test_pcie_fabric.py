"""The PCIe-style contrast fabric (golden/contrast/host.py, sim/harness/pcie_fabric.py): hosts fail
traffic over on DL_Down or a completion timeout, lose what PCIe loses and nothing else, and one
host's detection of a cut is the single contrast link's (docs/CONTRAST.md 9)."""

import pytest

from golden.contrast.host import BODY_BYTES, Host, default_probe_interval
from golden.pcie_params import PcieParams
from golden.topology import Topology
from sim.fabric_contrast import horizon
from sim.harness.pcie import TEST_SCALE, make_pcie_link
from sim.harness.pcie_fabric import PcieFabricHarness

LATENCY = 4
PARAMS = PcieParams(**TEST_SCALE)
H = horizon(PARAMS)


def _up_fabric(load=0.01, seed=1, **kw) -> PcieFabricHarness:
    h = PcieFabricHarness(Topology.triangle(), LATENCY, load=0.0, seed=seed, params=PARAMS, **kw)
    h.run_until(lambda h: h.all_ports_up(), 4 * H)
    h.load = load
    h.run(500)
    h.start_meter()
    return h


def _drain(h):
    return h.drain(2 * H)


def _discarded(h, link) -> set:
    """(origin, number) of the frames the two ends of ``link`` discarded at DL_Down."""
    out = set()
    for n in h.topology.links[link]:
        for frame in h.hosts[n].ports[link].lost:
            out.add((frame[0], frame[1], int.from_bytes(frame[3:7], "little")))
    return out


def test_healthy_fabric_delivers_everything_in_order_without_failover():
    h = _up_fabric(load=0.02)
    h.run(3000)
    assert _drain(h) == 0
    assert h.duplicates == h.reordered == 0
    assert sum(h.got.values()) == sum(h.made.values()) > 300
    assert all(x.counters["failovers"] == 0 and x.counters["relayed"] == 0 for x in h.hosts)
    assert h.meter.finish(h.cycle).as_dict()["totals"]["up_while_down"] == 0


def _pair_dl_down_cycles() -> int:
    """Cycles from a cut both ways to DL_Down at one end of a single contrast link, with the
    settle and offset the fabric test uses: the link alone, as sim/harness/pcie.py runs it."""
    p = make_pcie_link(LATENCY, backlog=2)
    p.run_until(lambda p: p.both_l0(), 4 * H)
    p.run(500)
    t = p.cycle + 3
    p.channel.ab.cuts = p.channel.ba.cuts = [(t, None)]
    while p.a.dl_up:
        p.step()
    return p.cycle - t


@pytest.mark.slow  # a horizon of contrast-link timers: ~10 s
def test_cut_link_fails_over_at_dl_down_and_loses_only_the_replay_buffers():
    h = _up_fabric()
    t = h.cycle + 3
    h.channels[0].ab.cuts = h.channels[0].ba.cuts = [(t, None)]  # link 0-1, for good
    made = {k: h.made[k] for k in [(0, 1), (1, 0)]}
    detected = {}
    while h.cycle < t + H + 3000:
        h.step()
        for n in (0, 1):
            if not h.hosts[n].usable[0]:
                detected.setdefault(n, h.cycle - t)
    # The host learns of the cut when its link does: DL_Down, within the horizon (less
    # Recovery.Idle's timeout, which a cut in L0 does not meet), the same cycle as the link alone
    # (no completion timeout: no probe was in flight).
    pair = _pair_dl_down_cycles()
    assert detected[0] == pair and H - PARAMS.cycles("recovery_idle") <= pair <= H
    assert abs(detected[1] - pair) <= 2
    # Then the traffic goes round through node 2, frames made during the ghost included.
    assert h.hosts[2].counters["relayed"] > 0
    assert all(h.highest[k] >= made[k] for k in made)
    assert _drain(h) == len(_discarded(h, 0) - {(o, d, k) for (o, d), s in h._seen.items() for k in s})
    assert h.duplicates == 0
    totals = h.meter.finish(h.cycle).as_dict()["totals"]
    # Both ends believed the link up from the cut to DL_Down.
    assert totals["up_while_down"] == detected[0] + detected[1]


@pytest.mark.slow  # a horizon of contrast-link timers: ~10 s
def test_completion_timeout_fails_over_a_link_that_works():
    """A completer slower than the completion timeout: DL_Up holds, the probes time out, and the
    host sends round a link that works (believed down while up); nothing is lost."""
    h = _up_fabric()
    timeout = PARAMS.cycles("completion_timeout")
    h.hosts[1].ports[0].completer.delay = 2 * timeout
    t = h.cycle
    while h.hosts[0].usable[0]:
        h.step()
        assert h.cycle < t + 3 * timeout, "no completion timeout"
    assert h.hosts[0].ports[0].dl_up
    h.run(2000)
    assert h.hosts[2].counters["relayed"] > 0
    h.hosts[1].ports[0].completer.delay = PARAMS.completer_delay
    assert _drain(h) == 0
    assert h.duplicates == 0
    assert h.meter.finish(h.cycle).as_dict()["totals"]["down_while_up"] > 0


@pytest.mark.slow  # a horizon of contrast-link timers: ~10 s
def test_dead_host_neighbours_fail_over_and_survivors_lose_nothing():
    h = _up_fabric()
    t = h.cycle + 3
    h.kill(1, t)
    h.run(H + 3000)
    assert not h.hosts[0].usable[0] and not h.hosts[2].usable[1]
    assert h.hosts[0].usable[2] and h.hosts[2].usable[2]
    assert _drain(h) == 0  # between 0 and 2
    assert h.duplicates == h.reordered == 0


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="full mesh"):
        Host(0, Topology(4, [(0, 1), (1, 2), (2, 3)]), PARAMS)
    with pytest.raises(ValueError, match="probe_interval"):
        Host(0, Topology.triangle(), PARAMS, probe_interval=0)
    with pytest.raises(ValueError, match="params"):
        Host(0, Topology.triangle(), "fast")
    host = Host(0, Topology.triangle(), PARAMS)
    with pytest.raises(ValueError, match="dest"):
        host.send(0, bytes(BODY_BYTES))
    with pytest.raises(ValueError, match="body"):
        host.send(1, bytes(BODY_BYTES + 1))
    with pytest.raises(ValueError, match="rx and far"):
        host.step({0: None}, {0: True})
    with pytest.raises(ValueError, match="not a port"):
        host.believes_up(1)
    with pytest.raises(ValueError, match="load"):
        PcieFabricHarness(Topology.triangle(), load=1.5)
    with pytest.raises(ValueError, match="faults"):
        PcieFabricHarness(Topology.triangle(), faults={7: {}})
    with pytest.raises(ValueError, match="replay timer"):
        PcieFabricHarness(Topology.triangle(), latency=12)  # at 1/64 a healthy link would replay
    with pytest.raises(ValueError, match="every link"):
        PcieFabricHarness(Topology.triangle(), latency={0: 4})
    h = PcieFabricHarness(Topology.triangle(), latency=4)
    with pytest.raises(ValueError, match="node must be"):
        h.kill(1.0, 5)
    h.kill(1, 5)
    with pytest.raises(ValueError, match="already dead"):
        h.kill(1, 6)
    assert default_probe_interval(PARAMS) == PARAMS.cycles("completion_timeout") // 10


@pytest.mark.slow
def test_fabric_contrast_rows_read_what_each_fabric_did():
    """sim.fabric_contrast's measurements on a link cut: the OAE row at a short schedule, the
    contrast row at its own horizon."""
    from sim.fabric_contrast import run_scenario

    oae = run_scenario("link_cut_failover", "oae", latency=LATENCY, H=3000)
    assert oae["verdict"] == "LINK_DOWN(0)"
    assert 0 < oae["detect_cycles"] <= oae["agreed_cycles"] < 300
    assert oae["detect_by_node"].keys() == {"0", "1", "2"}
    assert oae["agreed_cycles"] < oae["flows_cycles"] < 1000
    assert oae["frames_lost"] == 0 and oae["ghost"]["up_while_down"] > 0
    with pytest.raises(ValueError, match="fabric"):
        run_scenario("link_cut_failover", "infiniband")


# What a row of sim/fabric_contrast.py says of a run.
ROW_FIELDS = (
    "fault_cycle",
    "detect_cycles",
    "agreed_cycles",
    "detect_by_node",
    "flows_cycles",
    "frames_lost",
    "duplicates",
    "reordered",
    "ghost",
    "verdict",
)


@pytest.mark.verilator  # a golden run of three or two horizons of contrast-link timers: ~45 s
@pytest.mark.parametrize("scenario", ["link_cut_failover", "node_death"])
def test_the_rtl_contrast_fabric_gives_the_golden_fabric_row(scenario):
    """The contrast fabric's links in RTL (rtl/simulation/pcie_fabric.py) with its hosts in the
    C++ loop make the frames the golden harness makes and do what the golden hosts and links do:
    the row `make sim` prints is the golden fabric's, figure for figure."""
    from sim.fabric_contrast import run_scenario, run_scenario_rtl

    golden = run_scenario(scenario, "pcie", latency=LATENCY, progress=False)
    assert golden["verdict"] is None and golden["duplicates"] == 0
    if scenario == "link_cut_failover":
        assert golden["detect_cycles"] == golden["agreed_cycles"] == _pair_dl_down_cycles()
        assert golden["detect_by_node"].keys() == {"0", "1"}
        assert golden["detect_cycles"] < golden["flows_cycles"] < golden["detect_cycles"] + 2000
        assert golden["ghost"]["up_while_down"] == 2 * golden["detect_cycles"]
    else:
        assert golden["detect_by_node"].keys() == {"0", "2"} and golden["frames_lost"] == 0
    rtl = run_scenario_rtl(scenario, LATENCY, fabric="pcie")
    assert rtl["model"] == "rtl"
    assert {k: rtl[k] for k in ROW_FIELDS} == {k: golden[k] for k in ROW_FIELDS}


@pytest.mark.parametrize("where", ["stream", "foreign"])
def test_an_rtl_run_that_delivered_a_corrupted_or_foreign_frame_is_refused(where):
    from sim.fabric_contrast import _rtl_row

    streams = [
        {"origin": o, "dest": d, "made": 5, "delivered": 5, "undelivered": 0, "duplicated": 0, "reordered": 0,
         "corrupted": int(where == "stream" and (o, d) == (2, 1)), "flows": 10}
        for o in range(3) for d in range(3) if o != d
    ]  # fmt: skip
    raw = {"origin": 100, "drained_at": 400, "seconds": 0.1, "beliefs": [], "actual": [], "verdicts": []}
    raw |= {"streams": streams, "foreign": int(where == "foreign")}
    with pytest.raises(RuntimeError, match="1 frame\\(s\\) delivered corrupted or never sent"):
        _rtl_row("link_cut_failover", "pcie", "a cut", raw, Topology.triangle(), [0], (0, 1), 3, 100, 10, [])
    raw |= {"foreign": 0, "streams": [{**s, "corrupted": 0} for s in streams]}
    row = _rtl_row("link_cut_failover", "pcie", "a cut", raw, Topology.triangle(), [0], (0, 1), 3, 100, 10, [])
    assert (row["frames_lost"], row["duplicates"], row["reordered"], row["flows_cycles"]) == (0, 0, 0, 10)


def test_the_rtl_contrast_fabric_is_rebuilt_for_a_latency_or_time_scale_only():
    from sim.fabric_contrast import _pcie_rtl_overrides

    assert _pcie_rtl_overrides(8, PcieParams(**TEST_SCALE)) == {}
    assert _pcie_rtl_overrides(4, PcieParams(**TEST_SCALE)) == {"latency": 4}
    half = {**TEST_SCALE, "time_scale": 1 / 32}
    assert _pcie_rtl_overrides(8, PcieParams(**half)) == {"params": half}
    with pytest.raises(ValueError, match="test scale's timers"):
        _pcie_rtl_overrides(8, PcieParams(**{**TEST_SCALE, "replay_tlps": 8}))


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--jobs", "0"], "--jobs must be at least 1"),
        (["--latency", "12"], "replay timer"),  # at 1/64 a healthy contrast link would replay
        (["--time-scale", "2"], "time_scale must be"),
        (["--time-scale", "1/0"], "--time-scale"),
    ],
)
def test_fabric_contrast_refuses_bad_options_before_any_run(argv, message, capsys):
    from sim.fabric_contrast import main

    with pytest.raises(SystemExit):
        main(argv)
    assert message in capsys.readouterr().err
