# amaranth: UnusedElaboratable=no
"""rtl/simulation/channel.py against golden/simulation/channel.py, cycle by cycle, in the Amaranth simulator."""

import random

import pytest

from golden.simulation.channel import IDLE_WORD, Controls, Direction
from rtl.simulation.channel import Channel, ChannelDirection
from sim.harness.amaranth_sim import simulate


def _random_controls(rng, t, latency, max_latency):
    return Controls(
        cut=rng.random() < 0.05,
        flip=rng.getrandbits(72) if rng.random() < 0.05 else 0,
        force=rng.getrandbits(72) if rng.random() < 0.03 else None,
        freeze=rng.random() < 0.04,
        latency=latency,
    )


def run_lockstep(seed, cycles, latency, max_latency, fill_word=IDLE_WORD):
    rng = random.Random(seed)
    golden = Direction(latency, fill_word=fill_word)
    dut = ChannelDirection(latency=latency, max_latency=max_latency, fill_word=fill_word)
    mismatches = []

    async def bench(ctx):
        target = latency
        for t in range(cycles):
            if rng.random() < 0.02:
                target = rng.randint(1, max_latency)
            word = rng.choice([None, fill_word, fill_word, IDLE_WORD, rng.getrandbits(72)])
            c = _random_controls(rng, t, target, max_latency)
            ctx.set(dut.sink.valid, word is not None)
            ctx.set(dut.sink.word.as_value(), 0 if word is None else word)
            ctx.set(dut.cut, c.cut)
            ctx.set(dut.flip, c.flip)
            ctx.set(dut.force, c.force is not None)
            ctx.set(dut.force_word, c.force or 0)
            ctx.set(dut.freeze, c.freeze)
            ctx.set(dut.latency, c.latency)
            want = golden.apply(word, c)
            got = ctx.get(dut.source.word.as_value()) if ctx.get(dut.source.valid) else None
            if got != want:
                mismatches.append((t, got, want))
            await ctx.tick()
            assert ctx.get(dut.current_latency) == golden.latency, t

    simulate(dut, bench, clock=1e-8)
    return mismatches


@pytest.mark.parametrize("seed, latency, max_latency", [(1, 1, 4), (2, 5, 8), (3, 16, 32)])
def test_direction_matches_golden_every_cycle(seed, latency, max_latency):
    assert run_lockstep(seed, 3000, latency, max_latency) == []


# Another link's fill word (any 72-bit pattern, here one a PCIe-style link might use for its
# skip words): the RTL inserts and deletes that word, and never the OAE IDLE, as the golden does.
OTHER_FILL = 0xA5 << 64 | 0x1C1C1C1C


def test_direction_with_another_fill_word_matches_golden():
    assert run_lockstep(4, 3000, 6, 16, fill_word=OTHER_FILL) == []


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"latency": 0}, "latency"),
        ({"latency": 9, "max_latency": 8}, "latency"),
        ({"max_latency": 1}, "max_latency"),
        ({"max_latency": 8.0}, "max_latency"),
        ({"fill_word": 1 << 72}, "fill_word"),
        ({"fill_word": -1}, "fill_word"),
        ({"fill_word": True}, "fill_word"),
    ],
)
def test_bad_parameters(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        ChannelDirection(**kwargs)


def test_channel_has_both_directions():
    ch = Channel(latency=3, latency_ba=5, max_latency=8)
    names = set(ch.signature.members)
    assert {"ab_sink", "ab_source", "ab_cut", "ba_latency", "ba_current_latency"} <= names
