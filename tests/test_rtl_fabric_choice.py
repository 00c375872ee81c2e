# amaranth: UnusedElaboratable=no
"""rtl/fabric/choice.py against golden/fabric/choice.py (PROTOCOL.md 10.7, 10.11): random views
of a port and the node's queues, the choice and the round robin's starts compared every
cycle."""

import pytest

from golden.fabric.choice import PortView, choose
from rtl.fabric.choice import PortChoice
from sim.harness.amaranth_sim import simulate
from sim.tools.seeds import examples, seeded_rng


def _bits(flags):
    return sum(1 << i for i, f in enumerate(flags) if f)


def _pick(value):
    return (("own" if value.own else "fwd"), value.dest) if value.valid else None


@pytest.mark.parametrize("dests,classes", [(1, 1), (2, 1), (3, 3), (5, 2)])
def test_port_choice_matches_golden(dests, classes):
    rng = seeded_rng("choice", dests, classes)
    dut = PortChoice(dests, classes)
    seen = set()

    def flags(p):
        return tuple(rng.random() < p for _ in range(dests))

    async def bench(ctx):
        turn = (0,) * classes
        for cycle in range(examples(3000)):
            busy = rng.choice([0.2, 0.5, 0.9])
            view = PortView(
                control_open=rng.random() < 0.7,
                link_up=rng.random() < 0.8,
                ready=tuple(rng.random() < 0.8 for _ in range(classes)),
                hop_control=flags(0.6),
                hop_user=flags(0.6),
                own_control=flags(busy / 2),
                fwd_control=flags(busy / 2),
                own_user=tuple(flags(busy) for _ in range(classes)),
                fwd_user=tuple(flags(busy) for _ in range(classes)),
            )
            want = choose(view, turn)
            for name in ("control_open", "link_up"):
                ctx.set(getattr(dut, name), getattr(view, name))
            for name in ("ready", "hop_control", "hop_user", "own_control", "fwd_control"):
                ctx.set(getattr(dut, name), _bits(getattr(view, name)))
            for c in range(classes):
                ctx.set(dut.own_user[c], _bits(view.own_user[c]))
                ctx.set(dut.fwd_user[c], _bits(view.fwd_user[c]))
            got_control = _pick(ctx.get(dut.control))
            got_user = tuple(_pick(ctx.get(dut.user[c])) for c in range(classes))
            assert (got_control, got_user) == (want.control, want.user), (cycle, view, turn)
            seen.add(want.control and want.control[0])
            seen.update(u and (u[0], u[1] > 0) for u in want.user)
            turn = want.turn
            await ctx.tick()

    simulate(dut, bench)
    assert {"own", "fwd", None} <= seen
    assert {("own", False), ("fwd", False)} <= seen
    if dests > 1:
        assert {("own", True), ("fwd", True)} <= seen


def test_the_round_robin_goes_round():
    """Every source waiting at once: each user class takes them in turn, forwarded frames of each
    destination, then own streams, and round again."""
    view = PortView(
        True, True, (True,), (True,) * 3, (True,) * 3, (False,) * 3, (False,) * 3, ((True,) * 3,), ((True,) * 3,)
    )
    turn, order = (0,), []
    for _ in range(7):
        choice = choose(view, turn)
        order.append(choice.user[0])
        turn = choice.turn
    assert order == [("fwd", 0), ("fwd", 1), ("fwd", 2), ("own", 0), ("own", 1), ("own", 2), ("fwd", 0)]


@pytest.mark.parametrize("dests,classes", [(0, 1), (256, 1), (2, 0), (2, 4)])
def test_bad_parameters_are_refused(dests, classes):
    with pytest.raises(ValueError):
        PortChoice(dests, classes)
