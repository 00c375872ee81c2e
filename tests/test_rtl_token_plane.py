# amaranth: UnusedElaboratable=no
"""rtl/link/token_plane.py alone against golden/link/token_plane.py, cycle by cycle (amaranth.sim).

Each cycle a random set of the events the endpoint presents, applied to the golden twin in the
order golden/link/core.py steps them (PROTOCOL.md 2.2): the restart cycle after an anomaly; S's
choice of a token word (from the state at the start of the cycle); the user's hand-in and
withdrawal; a follower entangling on a plain token, or a due token word (every code, with a
sequence that matches the transfer in progress or not, so answers to nothing and decisions on
nothing occur); the user taking a delivered token; entangling with a random peer half-state
(every phase and sequence combination, so every row of the reconciliation table and its
conflicts occur); S's choice made. The RTL must give the same answers, words, half-state,
phases, balance and user-side outputs.
"""

import random

import pytest

from golden import encoding as enc
from golden.encoding import Ctl
from golden.link.token_plane import TokenPlane as GoldenTokenPlane
from rtl.link.token_plane import TokenKind, TokenPlane
from sim.harness.amaranth_sim import simulate

_SEQ_MOD = 1 << enc.AIT_SEQ_BITS
_CODES = (Ctl.AIT_OFFER, Ctl.AIT_ACCEPT, Ctl.AIT_REJECT, Ctl.AIT_COMMIT, Ctl.AIT_RETRACT)


def _peer_half(rng, g):
    """A peer half-state that names this end's transfers half of the time."""
    seq = lambda mine: mine if rng.random() < 0.6 else rng.randrange(_SEQ_MOD)  # noqa: E731
    return enc.READY_BODY.pack(
        tx_phase=rng.randrange(4), tx_seq=seq(g.rx_seq), rx_phase=rng.randrange(4), rx_seq=seq(g.tx_seq)
    )


@pytest.mark.parametrize("leader", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_token_plane_matches_golden_every_cycle(seed, leader):
    rng = random.Random(seed * 2 + leader)
    dut = TokenPlane()
    g = GoldenTokenPlane()
    peer_plain = Ctl.TOCK if leader else Ctl.TICK
    seen = {
        "anomaly": 0,
        "conflict": 0,
        "delivered": 0,
        "returned": 0,
        "offers": 0,
        "entangle_rx": 0,
        "withdraw held back": 0,
    }

    def draw():
        """A token word for the next cycle, drawn at the end of this one: stage C shows its
        sequence number (``c_seq``) a cycle before A applies it."""
        code = rng.choice((peer_plain,) + _CODES)
        mine = g.rx_seq if code in (Ctl.AIT_COMMIT, Ctl.AIT_RETRACT) else g.tx_seq
        seq = mine if rng.random() < 0.8 else rng.randrange(_SEQ_MOD)
        return code, seq, rng.randrange(1 << enc.AIT_VALUE_BITS)

    async def bench(ctx):
        up, restarting = False, False
        next_value = 1
        ctx.set(dut.leader, int(leader))
        pending = draw()
        ctx.set(dut.c_seq, pending[1])
        for cycle in range(6000):
            ins = dict.fromkeys(
                ("restart", "entangle", "rx_token", "ait_in_valid", "withdraw", "ait_out_taken", "send"), 0
            )
            expect = {"rx_anomaly": 0, "conflict": 0, "returned": 0, "returned_value": None}
            expect["due"] = int(g.due)  # the register, before the restart cycle ends
            if restarting:
                ins["restart"] = 1
                g.leave_session()
                up = False
            restart_next = False
            # S decides from the state at the start of the cycle.
            choice = g.choose(leader) if up and not restarting and g.due else None
            ins["send"] = int(choice is not None)
            expect["half_state"] = g.half_state()
            taken = g.ait_out is not None and rng.random() < 0.5
            # The user's hand-in and withdrawal.
            ait = None
            if g.ait_ready and rng.random() < 0.3:
                ait, next_value = next_value, next_value % 0xFFFF + 1
                ins["ait_in_valid"] = 1
                ctx.set(dut.ait_in_value, ait)
            withdraw = rng.random() < 0.2
            ins["withdraw"] = int(withdraw)
            returned = g.user_give(ait, withdraw, offering=choice is not None and choice.offer)
            if withdraw and returned is None and choice is not None and choice.offer:
                seen["withdraw held back"] += 1
            if returned is not None:
                expect["returned"], expect["returned_value"] = 1, returned

            def entangle(as_leader):
                """Reconcile with a random peer half-state, then enter the session."""
                peer = _peer_half(rng, g)
                ctx.set(dut.peer_half, peer)
                delivered, expect["conflict"] = g.reconcile(peer)
                seen["delivered"] += delivered is not None
                g.enter_session(as_leader)
                ins["entangle"] = 1

            # The word A applies: a follower may entangle on the leader's plain token.
            token = None
            if not restarting and not up and not leader and rng.random() < 0.02:
                entangle(as_leader=False)
                up = True
                token = (peer_plain, 0, 0)
                seen["entangle_rx"] += 1
            elif not restarting and up and not g.due and rng.random() < 0.3:
                token = pending
            if token is not None:
                ins["rx_token"] = 1
                code, seq, value = token
                ctx.set(dut.rx_kind, TokenKind.of(code))
                ctx.set(dut.rx_seq, seq)
                ctx.set(dut.rx_value, value)
                anomaly, delivered, returned = g.receive(code, seq, value, withdraw)
                seen["delivered"] += delivered is not None
                expect["rx_anomaly"] = int(anomaly is not None)
                if returned is not None:
                    expect["returned"], expect["returned_value"] = 1, returned
                restart_next = anomaly is not None
            # The user takes a token it saw delivered before the cycle; then entangling by the
            # READY handshake.
            ins["ait_out_taken"] = int(taken)
            g.user_take(taken)
            if not restarting and not up and not ins["entangle"] and rng.random() < 0.05:
                entangle(as_leader=leader)
                up = True
            elif up and not restarting and rng.random() < 0.01:
                restart_next = True  # a watchdog's suspicion
            if choice is not None:
                g.commit(choice)
                seen["offers"] += choice.offer
            for name, value in ins.items():
                ctx.set(getattr(dut, name), value)
            got = {
                name: ctx.get(getattr(dut, name))
                for name in ("due", "rx_anomaly", "conflict", "returned", "half_state")
            }
            want = {name: expect[name] for name in got}
            assert got == want, (cycle, got, want)
            if expect["returned"]:
                assert ctx.get(dut.returned_value) == expect["returned_value"], cycle
            if choice is not None:
                got_tx = (ctx.get(dut.s_code), ctx.get(dut.s_seq), ctx.get(dut.s_value), ctx.get(dut.s_offer))
                want_tx = (choice.code, choice.seq, choice.value, int(choice.offer))
                assert got_tx == want_tx, (cycle, got_tx, want_tx)
            seen["anomaly"] += expect["rx_anomaly"]
            seen["conflict"] += expect["conflict"]
            seen["returned"] += expect["returned"]
            restarting = restart_next
            pending = draw()
            ctx.set(dut.c_seq, pending[1])
            await ctx.tick()
            regs = {
                "tx_phase": (ctx.get(dut.tx_phase), g.tx_phase),
                "rx_phase": (ctx.get(dut.rx_phase), g.rx_phase),
                "balance": (ctx.get(dut.balance), g.balance),
                "ait_ready": (ctx.get(dut.ait_ready), int(g.ait_ready)),
                "ait_out_valid": (ctx.get(dut.ait_out_valid), int(g.ait_out is not None)),
                "due": (ctx.get(dut.due), int(g.due)),
            }
            assert all(a == b for a, b in regs.values()), (cycle, {k: v for k, v in regs.items() if v[0] != v[1]})
            if g.ait_out is not None:
                assert ctx.get(dut.ait_out_value) == g.ait_out, cycle

    simulate(dut, bench, clock=1e-8)
    # The random events reached every path the comparison is about.
    assert seen["anomaly"] > 20 and seen["conflict"] > 2 and seen["offers"] > 20 and seen["returned"] > 5
    assert seen["delivered"] > 10
    assert seen["entangle_rx"] > 0 or leader
    assert seen["withdraw held back"] > 0
