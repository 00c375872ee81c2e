# amaranth: UnusedElaboratable=no
"""BisyncFIFO: the golden checker's own verdicts, and the RTL in the Amaranth simulator."""

import random

import pytest
from amaranth.hdl import ClockDomain, Module
from amaranth.sim import Simulator

from golden.common.cdc import BisyncFIFOModel, CdcViolation
from rtl.common.cdc import BisyncFIFO

# --- the checker flags every forbidden delivery -------------------------------------------------


def _model_with(words, edge=0):
    # The checker's verdicts at explicit bounds (the RTL's are the defaults, checked below).
    model = BisyncFIFOModel(min_latency=2, max_latency=3)
    for w in words:
        model.write(w, edge)
    return model


def test_model_accepts_in_order_delivery():
    model = _model_with([1, 2, 3])
    for i, w in enumerate([1, 2, 3]):
        model.take(w, 2 + i)
    model.finish()
    assert model.delivered == 3 and model.latencies == [2, 3, 4]


def test_model_flags_reordering():
    model = _model_with([1, 2])
    with pytest.raises(CdcViolation, match="expected 0x1"):
        model.present(2, 5)


def test_model_flags_duplicate():
    model = _model_with([1, 2])
    model.take(1, 2)
    with pytest.raises(CdcViolation, match="expected 0x2"):
        model.take(1, 3)


def test_model_flags_loss_at_finish():
    model = _model_with([1, 2])
    model.take(1, 2)
    with pytest.raises(CdcViolation, match="never delivered"):
        model.finish()


def test_model_flags_word_from_nowhere():
    with pytest.raises(CdcViolation, match="nothing is in flight"):
        BisyncFIFOModel().present(7, 3)


def test_model_flags_too_early_and_too_late():
    with pytest.raises(CdcViolation, match="sooner"):
        _model_with([1], edge=10).present(1, 11)
    with pytest.raises(CdcViolation, match="bound is 3"):
        _model_with([1], edge=10).present(1, 14)


def test_model_latency_bound_runs_from_when_the_word_reached_the_head():
    for late_by, allowed in ((0, True), (3, True), (4, False)):
        model = _model_with([1, 2], edge=0)
        model.present(1, 2)
        model.take(1, 20)  # taken at edge 21; word 2 waited behind it
        if allowed:
            model.present(2, 21 + late_by)
        else:
            with pytest.raises(CdcViolation, match="bound is 3"):
                model.present(2, 21 + late_by)


def test_model_write_reset_discards_in_flight_only():
    model = _model_with([1, 2, 3])
    model.take(1, 2)
    model.write_reset()
    assert model.discarded == 2
    model.write(9, 10)
    with pytest.raises(CdcViolation):
        model.present(2, 13)


def test_model_read_reset_restarts_the_head_bound_and_loses_nothing():
    model = _model_with([1, 2], edge=0)
    model.read_reset_released(30)  # the reader was held in reset until edge 30
    model.present(1, 33)
    model.take(1, 33)
    model.take(2, 34)
    model.finish()
    stale = _model_with([1], edge=0)
    stale.read_reset_released(30)
    with pytest.raises(CdcViolation, match="bound is 3"):
        stale.present(1, 34)


def test_model_rejects_bad_bounds():
    with pytest.raises(ValueError, match="min_latency"):
        BisyncFIFOModel(min_latency=4, max_latency=3)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"depth": 6}, "depth"),
        ({"depth": 2}, "depth"),
        ({"depth": "16"}, "depth"),
        ({"depth": True}, "depth"),
        ({"w_domain": ""}, "w_domain"),
        ({"r_domain": 3}, "r_domain"),
        ({"w_domain": "x", "r_domain": "x"}, "w_domain"),
    ],
)
def test_rtl_rejects_bad_parameters(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name} "):
        BisyncFIFO(**kwargs)


# --- the RTL in the Amaranth simulator ----------------------------------------------------------


def _simulate(w_period, r_period, words, seed, reset_at=None, reset_cycles=1):
    """Random traffic through the FIFO; returns the checker after everything was delivered."""
    rng = random.Random(seed)
    dut = BisyncFIFO(depth=8)
    m = Module()
    m.submodules.dut = dut
    m.domains.w = w = ClockDomain("w")
    m.domains.r = ClockDomain("r")
    sim = Simulator(m)
    # Phases chosen so no read edge coincides with a write edge: order of same-instant edges
    # is the simulator's business, not the FIFO's.
    sim.add_clock(w_period, domain="w")
    sim.add_clock(r_period, domain="r", phase=r_period * 0.37)
    model = BisyncFIFOModel()
    edges = {"r": 0}
    sent = []

    async def writer(ctx):
        for i in range(words):
            if reset_at is not None and i == reset_at:
                ctx.set(dut.sink.valid, 0)
                ctx.set(w.rst, 1)
                model.write_reset()
                await ctx.delay(w_period * reset_cycles)
                ctx.set(w.rst, 0)
            while rng.random() < 0.3:
                ctx.set(dut.sink.valid, 0)
                await ctx.tick("w")
            word = rng.getrandbits(72)
            ctx.set(dut.sink.payload, {"slice": word & (2**64 - 1), "tag": word >> 64})
            ctx.set(dut.sink.valid, 1)
            await ctx.tick("w").until(dut.sink.ready)
            model.write(word, edges["r"])
            sent.append(word)
        ctx.set(dut.sink.valid, 0)

    async def reader(ctx):
        # Values sampled at the edge decide the transfer, so an asynchronous flush between the
        # last look and the edge cannot fool the bench.
        while True:
            ready = rng.random() < 0.7
            ctx.set(dut.source.ready, ready)
            _, _, valid, payload = await ctx.tick("r").sample(dut.source.valid, dut.source.payload)
            if valid:
                word = payload.slice | payload.tag << 64
                if ready:
                    model.take(word, edges["r"])
                else:
                    model.present(word, edges["r"])
            edges["r"] += 1

    sim.add_testbench(writer)
    sim.add_testbench(reader, background=True)
    sim.run()
    sim.run_until(sim._engine.now * 1e-15 + 40 * max(w_period, r_period))
    model.finish()
    return model, sent


@pytest.mark.parametrize("w_period, r_period", [(10e-9, 10e-9), (10e-9, 13.7e-9), (10e-9, 40e-9), (40e-9, 10e-9)])
def test_rtl_delivers_everything_in_order(w_period, r_period):
    model, sent = _simulate(w_period, r_period, words=300, seed=1)
    assert model.delivered == len(sent) == 300
    assert min(model.latencies) == BisyncFIFOModel().min_latency == 3


@pytest.mark.parametrize("reset_cycles", [1, 2, 4])
@pytest.mark.parametrize("w_period, r_period", [(10e-9, 40e-9), (40e-9, 10e-9), (10e-9, 13.7e-9)])
def test_rtl_write_reset_discards_only_in_flight_words(w_period, r_period, reset_cycles):
    model, sent = _simulate(w_period, r_period, words=200, seed=reset_cycles, reset_at=100, reset_cycles=reset_cycles)
    assert model.delivered + model.discarded == len(sent)
    assert model.discarded <= 8 + 1  # the memory and the output register
