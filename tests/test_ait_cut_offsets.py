"""A cut at every cycle offset of one atomic token transfer (PROTOCOL.md 3.6).

One token V goes from A to B. The channel is cut (no signal, long enough for both ends to
suspect) starting at each cycle from before A's offer to after its commit, in A->B, B->A or
both directions, then heals. The outcome after reconciliation must be the one the table in
PROTOCOL.md 3.6 gives for the words that got through; the oracle below derives it from arrival
times only, not from the model. Afterwards the link settles with V delivered exactly once (or
returned to A's user, for the retract variant).
"""

import pytest

from golden.common.slice import decode_tag, split_word
from golden.encoding import Ctl
from golden.params import TURNAROUND
from sim.harness.link import LinkHarness, Traffic, make_link

L = 8
CUT = 40 * L  # long enough for loss of signal and remote fault at both ends
# From 6 cycles before A's offer is on the wire to 6 after its decision is (2 L + 2 T).
OFFSETS = range(-6, 2 * L + 2 * TURNAROUND + 7)


def _code(word):
    tag = decode_tag(split_word(word)[0])
    return tag.code if tag.kind.name == "CONTROL" else None


def scenario(variant, cut_dirs=(), start=None, t0=None):
    """Run one transfer up to A's offer; returns (harness, V, t0, offered). Without ``t0``, t0 is found as
    the cycle A puts its offer on the wire (healthy run); with it, the run stops there, offer or
    not: runs are identical until the cut starts."""
    faults = {
        d: {"cuts": [(start, start + CUT)]} if start is not None and d in cut_dirs else None for d in ("ab", "ba")
    }
    h = make_link(
        L,
        seed=3,
        faults_ab=faults["ab"],
        faults_ba=faults["ba"],
        traffic_b=Traffic(take_rate=0.0) if variant == "reject" else None,
    )
    h.run_until(LinkHarness.both_up, 5000)
    h.run(200)
    if variant == "reject":
        # B's user leaves a first token untaken, so B must reject the next one.
        h.traffic["a"] = Traffic(ait_rate=1.0)
        h.step()
        h.traffic["a"] = Traffic()
        h.run_until(lambda h: h.stats["b"].ait_out, 2000)
    h.traffic["a"] = Traffic(ait_rate=1.0)
    h.step()
    h.traffic["a"] = Traffic()
    value = h.stats["a"].ait_in[-1]
    if t0 is None:
        while _code(h.a.tx_word) != Ctl.AIT_OFFER:
            h.step()
            assert h.cycle < 20000
        t0 = h.cycle
    else:
        h.run(t0 - h.cycle)
    offered = _code(h.a.tx_word) == Ctl.AIT_OFFER
    if variant == "retract":
        h.step()
        h.withdraw("a")
    return h, value, t0, offered


@pytest.fixture(scope="module")
def t0s():
    """The offer cycle of each variant on a healthy link (the runs are deterministic)."""
    return {v: scenario(v)[2] for v in ("commit", "reject", "retract")}


def oracle(variant, cut_dirs, k):
    """Outcome from arrival cycles (relative to t0) and the reconciliation table."""

    def lost(arrival, direction):
        return direction in cut_dirs and k <= arrival < k + CUT

    token_to_a, offer, answer = -TURNAROUND, L, 2 * L + TURNAROUND
    never_offered = lost(token_to_a, "ba") or lost(offer, "ab")
    if variant == "reject":
        return "A holds"
    if variant == "retract":
        return "B delivered" if not never_offered and lost(answer, "ba") else "returned to A"
    return "A holds" if never_offered else "B delivered"


def observe(h, value):
    outcomes = []
    if value in h.stats["b"].ait_out:
        outcomes.append("B delivered")
    if h.a.tokens.tx_value == value:
        outcomes.append("A holds")
    if value in h.stats["a"].ait_returned:
        outcomes.append("returned to A")
    assert len(outcomes) == 1, f"token in {len(outcomes)} places: {outcomes}"
    return outcomes[0]


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["commit", "reject", "retract"])
@pytest.mark.parametrize("cut_dirs", [("ab",), ("ba",), ("ab", "ba")], ids=["A-to-B", "B-to-A", "both"])
def test_cut_at_every_offset_of_one_transfer(variant, cut_dirs, t0s):
    t0 = t0s[variant]
    for k in OFFSETS:
        h, value, _, offered = scenario(variant, cut_dirs, start=t0 + k, t0=t0)
        if k > 0:  # the cut starts after the offer left
            assert offered, f"offset {k}: the offer should be on the wire at t0"
        h.check_balance = True
        h.run_until(lambda h: h.cycle > t0 + k + CUT and h.both_up(), 20000)
        h.run(2)
        assert h.a.counters.suspicions + h.b.counters.suspicions >= 1, f"offset {k}: cut not suspected"
        expected = oracle(variant, cut_dirs, k)
        assert observe(h, value) == expected, f"offset {k}"
        h.quiesce()
        final = observe(h, value)
        assert final == ("returned to A" if expected == "returned to A" else "B delivered"), f"offset {k}"
