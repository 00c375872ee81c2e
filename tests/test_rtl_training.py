# amaranth: UnusedElaboratable=no
"""rtl/link/training.py in lockstep with golden training inside two running golden endpoints.

Each golden end trains over a faulty golden channel. An RTL Training block per end is given,
each cycle, what that end's A and S stages give training (PROTOCOL.md 2.2): the training word A
applies while the end is not UP, the restart cycle (with its remeasure and fault flags), whether
S sends a training word, and the half-state bits. Every cycle its training word, entangle
judgements (``ready_to_entangle``, ``follower_ready``), anomaly, phase, RTT and leader must equal
the golden end's.
"""

import pytest
from amaranth.hdl import Module

from golden import encoding as enc
from golden.encoding import Ctl, Kind, LinkState
from golden.link.control import check_word
from golden.params import LinkParams
from golden.simulation.channel import Channel
from rtl.link.training import Training
from sim.harness.amaranth_sim import simulate
from sim.harness.link import LinkHarness, Traffic, make_link

SCENARIOS = {
    "clean": dict(latency=5),
    "asymmetric": dict(latency=2, latency_ba=9),
    "flaps": dict(latency=4, faults_ab={"cuts": [(400, 700), (1500, 1520)]}, faults_ba={"cuts": [(900, 1300)]}),
    # A short design bound on the cable, so that a lost first probe is retried soon; the cuts
    # make the link train again under the bit errors (a lost token word alone does not).
    "bit errors": dict(
        latency=4,
        faults_ab={"bit_error_rate": 2e-3, "cuts": [(900, 960)]},
        faults_ba={"bit_error_rate": 2e-3, "cuts": [(1900, 1960)]},
        max_rtt=64,
    ),
}
# Seeds whose first nonces are equal: the port decides, or (equal ports) both draw again.
TIES = {
    "equal nonces": ({"port_id": 1, "nonce_seed": 0x0001_4321}, {"port_id": 2, "nonce_seed": 0x0002_4321}),
    "tie": ({"port_id": 5, "nonce_seed": 0x0001_4321}, {"port_id": 5, "nonce_seed": 0x0002_4321}),
}
SCENARIOS.update({name: dict(latency=3, ends=ends) for name, ends in TIES.items()})
MIN_TRAININGS = {"clean": 0, "asymmetric": 0, "flaps": 2, "bit errors": 2, "equal nonces": 0, "tie": 0}


def _applied_check_word(ep):
    """The DATA word (class, index, slice) the end's A stage applies in its next step while not
    UP (perhaps a slice of the peer's check frame, PROTOCOL.md 2.3), or None."""
    checked = ep.checked
    if ep.up or ep.restart_cycle or checked is None or checked.tag.kind != Kind.DATA:
        return None
    return checked.tag.cls, checked.tag.index, checked.slice


def _applied_training_word(ep):
    """The training word the end's A stage applies in its next step, or None."""
    checked = ep.checked
    if ep.up or ep.restart_cycle or checked is None:
        return None
    if checked.tag.kind != Kind.CONTROL or checked.tag.code not in enc.TRAINING_CODES:
        return None
    return checked.tag.code, checked.body


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_training_matches_golden_every_cycle(name):
    cfg = dict(SCENARIOS[name])
    latency = cfg.pop("latency")
    traffic = Traffic(frame_load=(0.02,), ait_rate=0.1)
    if "ends" in cfg:
        pa, pb = (LinkParams(num_classes=1, **e) for e in cfg.pop("ends"))
        h = LinkHarness(pa, pb, Channel(latency), traffic, traffic, seed=7)
    else:
        h = make_link(latency, seed=7, traffic_a=traffic, traffic_b=traffic, num_classes=1, **cfg)
    m = Module()
    duts = {}
    for n, ep in (("a", h.a), ("b", h.b)):
        duts[n] = Training(ep.p)
        m.submodules[n] = duts[n]
    checked_cycles = {"a": 0, "b": 0}
    checks_sent = {"a": 0, "b": 0}
    measured = set()
    ends = (("a", h.a), ("b", h.b))

    async def bench(ctx):
        for cycle in range(3000):
            sent = (h.a.tx_word, h.b.tx_word)
            rx_b, rx_a = h.channel.step(*sent)
            received = {"a": rx_a, "b": rx_b}
            training_word = {}
            for n, ep in ends:
                # Stage C's word, whose nonces the block compares a cycle ahead.
                checked_now = None if received[n] is None else check_word(received[n])
                ctx.set(duts[n].c_body, checked_now.body if checked_now is not None else 0)
                c_data = checked_now is not None and checked_now.tag.kind == Kind.DATA
                for port, v in zip(
                    ("c_cls", "c_index", "c_slice"),
                    (checked_now.tag.cls, checked_now.tag.index, checked_now.slice) if c_data else (0, 0, 0),
                ):
                    ctx.set(getattr(duts[n], port), v)
                dut, word = duts[n], _applied_training_word(ep)
                restarting = ep.restart_cycle
                training_word[n] = not ep.up or restarting
                ctx.set(dut.rx_valid, word is not None)
                ctx.set(dut.rx_code, word[0] if word else 0)
                ctx.set(dut.rx_body, word[1] if word else 0)
                data = _applied_check_word(ep)
                ctx.set(dut.rx_data, data is not None)
                for port, v in zip(("rx_cls", "rx_index"), data[:2] if data else (0, 0)):
                    ctx.set(getattr(dut, port), v)
                ctx.set(dut.restart, restarting)
                ctx.set(dut.remeasure, restarting and ep.restart_fault and not ep.restart_keep)
                ctx.set(dut.fault_in, restarting and ep.restart_fault)
                ctx.set(dut.keep_in, restarting and ep.restart_keep)
                ctx.set(dut.resume_in, restarting and ep.restart_resume)
                ctx.set(dut.half_state, ep.half_state_body())
                if not restarting and not ep.up:
                    assert ctx.get(dut.ready_to_entangle) == ep.training.ready_to_entangle, (n, cycle)
                    # A follower in READY, heard-ready: a TICK or TOCK from the peer entangles it.
                    tr = ep.training
                    follower = tr.phase == LinkState.READY and tr.heard_ready and not tr.leader
                    assert ctx.get(dut.follower_ready) == follower, (n, cycle)
            got = {n: (ctx.get(duts[n].s_code), ctx.get(duts[n].s_body), ctx.get(duts[n].anomaly)) for n, _ in ends}
            got_check = {
                n: (ctx.get(duts[n].s_check), ctx.get(duts[n].s_check_cls), ctx.get(duts[n].s_check_index))
                + (ctx.get(duts[n].s_check_slice),)
                for n, _ in ends
            }
            results = {"a": h.a.step(rx_a), "b": h.b.step(rx_b)}
            for n, ep in ends:
                # S sent the training word unless a fill word took its place (PROTOCOL.md 6).
                training_word[n] = training_word[n] and ep.chosen.training is not None
                ctx.set(duts[n].send, training_word[n])
                ctx.set(duts[n].entangle, any(e[0] == "up" for e in results[n].events))
            for n, ep in ends:
                own = ("anomaly", "peer restarted training") in results[n].events
                assert got[n][2] == own, (n, cycle)
                if training_word[n] and ep.chosen.training.check is not None:
                    assert got_check[n] == (1, *ep.chosen.training.check), (n, cycle)
                    checks_sent[n] += 1
                elif training_word[n]:
                    assert not got_check[n][0], (n, cycle)
                    word = ep.chosen.word
                    code, body = (word >> 65) & 0x1F, word & ((1 << 48) - 1)
                    assert got[n][:2] == (code, body), (n, cycle, Ctl(code).name)
                    checked_cycles[n] += 1
            await ctx.tick()
            for n, ep in ends:
                dut = duts[n]
                assert ctx.get(dut.phase) == ep.training.phase, (n, cycle)
                assert ctx.get(dut.leader) == ep.training.leader, (n, cycle)
                assert ctx.get(dut.rtt_valid) == (ep.training.rtt is not None), (n, cycle)
                if ep.training.rtt is not None:
                    assert ctx.get(dut.rtt) == ep.training.rtt, (n, cycle)
                    measured.add(n)
        assert h.a.counters.trainings + h.b.counters.trainings >= MIN_TRAININGS[name]
        assert checks_sent["a"] >= 8 and checks_sent["b"] >= 8  # a check frame each way, at least
        assert measured == {"a", "b"}
        if name == "tie":
            assert h.a.counters.ties >= 1

    simulate(m, bench, clock=1e-8)
    assert min(checked_cycles.values()) > 20


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"port_id": 256}, "port_id"),
        ({"nonce_seed": 0}, "nonce_seed"),
        ({"probes": 0}, "probes"),
        ({"margin": 0}, "margin"),
    ],
)
def test_bad_parameters(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        Training(LinkParams(**kwargs))
