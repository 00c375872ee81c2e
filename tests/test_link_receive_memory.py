"""The golden end's receive memory and user streams (``LinkCore(user_takes=True)``, PROTOCOL.md
4.6): each class's stream offers the frames delivered, in order, once the frame's P reads are
done (P = 8 / ``read_slices``), from the (P + 1)th cycle after its delivery and at most one
every P + 1 cycles; a user that stops taking fills the memory,
whose slices are then refused and sent again, and loses nothing; one that stops for long makes
its peer's recoveries fail until the link is found degraded and retrains (PROTOCOL.md 10.11)."""

from dataclasses import replace

import pytest

from golden import encoding as enc
from golden.params import READ_SLICES
from sim.harness.link import LinkHarness, Traffic
from sim.harness.link_scenarios import DIGEST

SATURATED = (1.0, 1.0)


def _up(seed=1, take_rate=1.0, load=SATURATED, build=DIGEST):
    h = build.harness(seed, Traffic(frame_load=load, frame_take_rate=take_rate), user_takes=True)
    h.run_until(LinkHarness.both_up, 5000)
    return h


def _users(h, take_rate, load=SATURATED):
    for e in "ab":
        h.traffic[e] = Traffic(frame_load=load, frame_take_rate=take_rate)


def _settle(h, logs):
    """Idle users that take every frame: every frame handed in is delivered once and in order
    (the harness's scoreboard), and what each user took is exactly what its peer handed in."""
    _users(h, 1.0, load=(0.0, 0.0))
    h.run_until(LinkHarness.settled, 50_000)
    h.run(50)  # the last frames delivered are offered and taken
    for me, peer in (("a", "b"), ("b", "a")):
        ep = getattr(h, me)
        assert not any(ep.framer.untaken)
        for c in range(2):
            took = [f for _, _, res in logs[me] for cc, f in res.taken if cc == c]
            assert took == h.stats[peer].frames_in[c]


def _record(ep):
    """Each step of ``ep``, as (cycle, the frames its streams offered before it, its result)."""
    log, step = [], ep.step

    def recorded(*args, **kwargs):
        cycle, offers = ep.cycle, [ep.frame_out(c) for c in range(ep.p.num_classes)]
        res = step(*args, **kwargs)
        log.append((cycle, offers, res))
        return res

    ep.step = recorded
    return log


@pytest.mark.parametrize("read_slices", READ_SLICES)
@pytest.mark.parametrize("take_rate", [1.0, 0.3])
def test_a_stream_offers_the_frames_delivered_in_order_once_read(take_rate, read_slices):
    h = _up(take_rate=take_rate, load=(0.05, 0.05), build=replace(DIGEST, read_slices=read_slices))
    gap = 1 + enc.SLICES_PER_FRAME // read_slices  # the reads, then the offer
    log = _record(h.b)
    h.run(3000)
    for c in range(2):
        delivered = [(cycle, f) for cycle, _, res in log for cc, f in res.frames if cc == c]
        taken = [(cycle, f) for cycle, _, res in log for cc, f in res.taken if cc == c]
        assert len(taken) > 50
        # In order, each once: the frames taken are the frames delivered.
        assert [f for _, f in taken] == [f for _, f in delivered[: len(taken)]]
        last = None
        for (took, _), (came, _) in zip(taken, delivered):
            assert took >= came + gap and (last is None or took >= last + gap)
            if take_rate == 1.0:
                # A user always ready takes each frame as soon as it may.
                assert took == max(came + gap, last + gap if last is not None else 0)
            last = took
        # What a stream offers is always the oldest frame not yet taken.
        waiting = []
        for _, offers, res in log:
            if offers[c] is not None:
                assert waiting and offers[c] == waiting[0]
            waiting = waiting[len([1 for cc, _ in res.taken if cc == c]) :]
            waiting += [f for cc, f in res.frames if cc == c]
    assert h.b.counters.recoveries == 0


def test_a_user_that_stops_taking_fills_the_memory_and_loses_nothing():
    h = _up()
    logs = {e: _record(getattr(h, e)) for e in "ab"}
    h.run(500)
    _users(h, 0.0)
    h.run(300)
    # Full: the frames offered and not taken, and those pending beside them, fill the 2 W'
    # frames of the memory (W' = 16: the window, a power of two).
    assert DIGEST.window == 16
    assert len(h.b.framer.untaken[1]) + len(h.b.framer.pending[1]) == 32
    assert h.b.counters.anomalies > 0 and h.a.counters.recoveries > 0
    _users(h, 1.0)
    h.run(2000)
    assert h.a.counters.trainings == h.b.counters.trainings == 0
    _settle(h, logs)


def test_a_user_that_stops_for_long_makes_its_link_retrain_and_loses_nothing():
    """The limit of PROTOCOL.md 10.11: a memory that stays full refuses every frame sent again,
    and after RECOVERY_LIMIT recoveries that confirm nothing the sender finds the link degraded."""
    h = _up()
    logs = {e: _record(getattr(h, e)) for e in "ab"}
    h.run(500)
    _users(h, 0.0)
    h.run(3000)
    assert h.a.counters.trainings + h.b.counters.trainings > 0
    _users(h, 1.0)
    h.run(2000)
    _settle(h, logs)
