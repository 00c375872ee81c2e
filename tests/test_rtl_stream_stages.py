"""StreamSlice and StreamSkid in the Amaranth simulator: every word handed in comes out once, in
order, under random valid/ready; the skid sustains one transfer per cycle, the slice one per two;
no output depends combinationally on the other side's handshake."""

import random

import pytest

from rtl.common.stream_slice import StreamSkid, StreamSlice
from sim.harness.amaranth_sim import simulate


def _run(dut, seed, words, p_valid, p_ready, cycles):
    rng = random.Random(seed)
    sent, got = [], []

    async def bench(ctx):
        todo = [rng.getrandbits(16) for _ in range(words)]
        offered = None
        for _ in range(cycles):
            if offered is None and todo and rng.random() < p_valid:
                offered = todo.pop(0)
            ctx.set(dut.sink.valid, offered is not None)
            ctx.set(dut.sink.payload, offered or 0)
            ready = rng.random() < p_ready
            # Registered outputs: flipping the other side's handshake changes nothing this cycle.
            ctx.set(dut.source.ready, not ready)
            before = (ctx.get(dut.sink.ready), ctx.get(dut.source.valid))
            ctx.set(dut.source.ready, ready)
            ctx.set(dut.sink.valid, offered is None)
            assert (ctx.get(dut.sink.ready), ctx.get(dut.source.valid)) == before
            ctx.set(dut.sink.valid, offered is not None)
            _, _, s_ready, o_valid, o_payload = await ctx.tick().sample(
                dut.sink.ready, dut.source.valid, dut.source.payload
            )
            if offered is not None and s_ready:
                sent.append(offered)
                offered = None
            if o_valid and ready:
                got.append(o_payload)

    simulate(dut, bench, clock=1e-8)
    return sent, got


@pytest.mark.parametrize("cls", [StreamSkid, StreamSlice])
@pytest.mark.parametrize("seed, p_valid, p_ready", [(1, 0.9, 0.5), (2, 0.5, 0.9), (3, 0.7, 0.7)])
def test_every_word_once_in_order(cls, seed, p_valid, p_ready):
    sent, got = _run(cls(16), seed, 400, p_valid, p_ready, 3000)
    assert len(sent) == 400
    assert got == sent


@pytest.mark.parametrize("cls, per_cycle", [(StreamSkid, 1.0), (StreamSlice, 0.5)])
def test_rate_when_never_stalled(cls, per_cycle):
    sent, got = _run(cls(16), 4, 1000, 1.0, 1.0, 1000)
    assert got == sent[: len(got)]
    assert abs(len(got) / 1000 - per_cycle) < 0.01
