# amaranth: UnusedElaboratable=no
"""rtl/fabric/frame_choice.py against golden/fabric/frame_choice.py (PROTOCOL.md 10.11): random views of a
node's inboxes, settled ports' offers and draining stream, the frame engine's choice and the
turns' starts compared every cycle."""

import pytest

from golden.fabric.frame_choice import EngineView, pick
from rtl.fabric.frame_choice import FrameEngineChoice, Source
from sim.harness.amaranth_sim import simulate
from sim.tools.seeds import examples, seeded_rng


def _bits(flags):
    return sum(1 << i for i, f in enumerate(flags) if f)


def _source(value):
    kind = Source(value.source)
    return {
        Source.NONE: None,
        Source.DRAIN: "drain",
        Source.CONTROL: ("control", value.index),
        Source.OFFER: ("offer", value.index),
        Source.USER: ("user", value.index),
    }[kind]


@pytest.mark.parametrize("ports,classes", [(1, 1), (2, 1), (3, 2), (4, 3)])
def test_frame_engine_choice_matches_golden(ports, classes):
    rng = seeded_rng("engine", ports, classes)
    dut = FrameEngineChoice(ports, classes)
    users = ports * classes
    seen = set()

    def flags(n, p):
        return tuple(rng.random() < p for _ in range(n))

    async def bench(ctx):
        turn = (0, 0)
        for cycle in range(examples(3000)):
            busy, blocked = rng.choice([0.1, 0.4, 0.9]), rng.choice([0.0, 0.3, 0.8])
            view = EngineView(
                draining=rng.random() < 0.15,
                drain_waits=rng.random() < 0.3,
                control_valid=flags(ports, busy / 2),
                control_waits=flags(ports, blocked),
                offer_valid=flags(ports, busy / 4),
                user_valid=flags(users, busy),
                user_waits=flags(users, blocked),
            )
            want = pick(view, turn)
            ctx.set(dut.draining, view.draining)
            ctx.set(dut.drain_waits, view.drain_waits)
            for name in ("control_valid", "control_waits", "offer_valid", "user_valid", "user_waits"):
                ctx.set(getattr(dut, name), _bits(getattr(view, name)))
            got = _source(ctx.get(dut.choice))
            assert got == want.source, (cycle, view, turn)
            seen.add(want.source if not isinstance(want.source, tuple) else (want.source[0], want.source[1] > 0))
            turn = want.turn
            await ctx.tick()

    simulate(dut, bench)
    assert {None, "drain", ("control", False), ("offer", False), ("user", False)} <= seen
    if ports > 1:
        assert {("control", True), ("offer", True), ("user", True)} <= seen


def test_the_inboxes_go_round_and_a_waiting_one_is_passed_over():
    """Every user inbox holding a frame: each is taken in turn; one whose frame has to wait is
    passed over, and the turn goes on from the one taken."""
    none = (False,) * 3
    view = EngineView(False, False, none, none, none, (True,) * 3, (False, True, False))
    turn, order = (0, 0), []
    for _ in range(4):
        choice = pick(view, turn)
        order.append(choice.source)
        turn = choice.turn
    assert order == [("user", 0), ("user", 2), ("user", 0), ("user", 2)]


@pytest.mark.parametrize("ports,classes", [(0, 1), (256, 1), (2, 0), (2, 4)])
def test_bad_parameters_are_refused(ports, classes):
    with pytest.raises(ValueError):
        FrameEngineChoice(ports, classes)
