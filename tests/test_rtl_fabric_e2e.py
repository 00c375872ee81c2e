# amaranth: UnusedElaboratable=no
"""rtl/fabric/e2e.py against golden/fabric/e2e.py (PROTOCOL.md 10.7, 10.10): sequences drawn
around the places the arithmetic turns (equal, one apart, the wrap at 2^32, half the sequence
space apart) and at random."""

import pytest

from golden.fabric.e2e import HALF, SEQ_MOD, ack_due, arrival, released
from rtl.fabric.e2e import Arrival, Release
from sim.harness.amaranth_sim import simulate
from sim.tools.seeds import examples, seeded_rng


def _near(rng, base):
    """A sequence at a turning point relative to ``base``, or anywhere."""
    offset = rng.choice([0, 1, -1, 2, -2, HALF, HALF - 1, HALF + 1, -HALF, rng.randrange(-70, 70)])
    return (base + offset) % SEQ_MOD if rng.random() < 0.9 else rng.randrange(SEQ_MOD)


def _base(rng):
    return rng.choice([0, 1, SEQ_MOD - 1, SEQ_MOD - 2, HALF, rng.randrange(SEQ_MOD)])


@pytest.mark.parametrize("every", [1, 8, 64])
def test_arrival_matches_golden(every):
    rng = seeded_rng("arrival", every)
    dut = Arrival(every)
    seen = set()

    async def bench(ctx):
        for _ in range(examples(4000)):
            expected = _base(rng)
            seq = _near(rng, expected)
            acked = None if rng.random() < 0.1 else (_near(rng, expected) if rng.random() < 0.5 else expected)
            ctx.set(dut.seq, seq)
            ctx.set(dut.expected, expected)
            # With no ACK sent, the register's content must not be read: give it noise.
            ctx.set(dut.acked, rng.randrange(SEQ_MOD) if acked is None else acked)
            ctx.set(dut.acked_valid, acked is not None)
            want = arrival(seq, expected, acked)
            due = ack_due(expected, acked or 0, every)
            got = (bool(ctx.get(dut.duplicate)), bool(ctx.get(dut.ack_copy)), bool(ctx.get(dut.ack_due)))
            assert got == (want.duplicate, want.ack_copy, due), (seq, expected, acked)
            if not want.duplicate:
                assert ctx.get(dut.ahead) == want.ahead, (seq, expected)
            seen.add((want.duplicate, want.ack_copy, want.ahead == 0, due))

    simulate(dut, bench, clock=None)
    # Next, early and duplicate frames, copies acknowledged again or not, ACKs due or not.
    assert {(False, False, True), (False, False, False), (True, True, True), (True, False, True)} <= {
        s[:3] for s in seen
    }
    assert {True, False} == {s[3] for s in seen}


@pytest.mark.parametrize("window", [1, 16, 64, 1 << 16])
def test_release_matches_golden(window):
    rng = seeded_rng("release", window)
    dut = Release(window)
    seen = set()

    async def bench(ctx):
        for _ in range(examples(4000)):
            head = _base(rng)
            held = rng.choice([0, 1, window, rng.randrange(window + 1)])
            ack = (
                (head + rng.choice([0, 1, held, held + 1, held - 1])) % SEQ_MOD
                if rng.random() < 0.5
                else _near(rng, head)
            )
            ctx.set(dut.ack, ack)
            ctx.set(dut.head, head)
            ctx.set(dut.held, held)
            want = released(ack, head, held)
            assert ctx.get(dut.released) == want, (ack, head, held)
            seen.add("none" if not want else "all" if want == held else "some")

    simulate(dut, bench, clock=None)
    assert seen == ({"none", "all"} if window == 1 else {"none", "all", "some"})


@pytest.mark.parametrize("bad", [0, (1 << 16) + 1, True, "8"])
def test_bad_parameters_are_refused(bad):
    with pytest.raises(ValueError, match="every"):
        Arrival(bad)
    with pytest.raises(ValueError, match="window"):
        Release(bad)
