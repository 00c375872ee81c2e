"""The experiment's verdicts (sim/harness/verdicts.py): who wins a column, and when two figures
are the same result within the physical limit of a belief."""

from sim.harness.verdicts import EQUAL, OAE, PCIE, belief_limit, summary, verdict, verdicts

LIMIT = belief_limit(16, 8)


def row(**kw):
    base = {
        "detection_cycles": 10,
        "ghost_cycles": 0,
        "ghost_cycles_down_while_up": 0,
        "frames_lost": 0,
        "frames_duplicated": 0,
        "frames_corrupted": 0,
        "tokens_lost": 0,
        "tokens_duplicated": 0,
        "goodput": 0.8,
    }
    return {**base, **kw}


def test_the_limit_is_latency_plus_the_loss_of_signal_window():
    assert LIMIT == 24


def test_beliefs_within_the_limit_per_end_are_equal_and_beyond_it_the_fewer_wins():
    # Ghost cycles sum two ends: twice the limit.
    assert verdict("ghost down/up", row(ghost_cycles_down_while_up=48), row(), LIMIT, True) == EQUAL
    assert verdict("ghost down/up", row(ghost_cycles_down_while_up=49), row(), LIMIT, True) == PCIE
    assert verdict("ghost up/down", row(), row(ghost_cycles=49), LIMIT, True) == OAE
    assert verdict("detect", row(detection_cycles=10), row(detection_cycles=34), LIMIT, True) == EQUAL
    assert verdict("detect", row(detection_cycles=10), row(detection_cycles=35), LIMIT, True) == OAE


def test_a_detection_that_never_came_loses_when_the_link_was_down_and_wins_when_it_was_not():
    assert verdict("detect", row(), row(detection_cycles=None), LIMIT, True) == OAE
    assert verdict("detect", row(), row(detection_cycles=None), LIMIT, False) == PCIE
    assert verdict("detect", row(detection_cycles=None), row(detection_cycles=None), LIMIT, False) == EQUAL


def test_counts_are_equal_only_when_equal_and_goodput_within_its_slack():
    assert verdict("lost", row(frames_lost=1), row(), LIMIT, True) == PCIE
    assert verdict("tokens lost/dup", row(tokens_duplicated=1), row(), LIMIT, True) == PCIE
    assert verdict("goodput", row(goodput=0.804), row(goodput=0.8), LIMIT, True) == EQUAL
    assert verdict("goodput", row(goodput=0.81), row(goodput=0.8), LIMIT, True) == OAE


def test_a_link_without_a_token_plane_has_no_token_verdict_and_the_summary_counts():
    pcie = row(tokens_lost=None, tokens_duplicated=None, ghost_cycles_down_while_up=500)
    v = verdicts(row(), pcie, LIMIT, True)
    assert "tokens lost/dup" not in v and v["ghost down/up"] == OAE
    tally = summary({"s": v, "t": {"goodput": PCIE}})
    assert tally["counts"][PCIE] == 1 and tally["pcie_better"] == ["t: goodput"]
    assert sum(tally["counts"].values()) == len(v) + 1


def fabric_row(fabric, scenario="cut", **kw):
    base = {"scenario": scenario, "fabric": fabric, "detect_cycles": 11, "agreed_cycles": 80, "flows_cycles": 300}
    base.update(frames_lost=0, duplicates=0, reordered=0, ghost={"up_while_down": 100, "down_while_up": 0})
    return {**base, **kw}


def test_the_fabric_columns_read_the_ghost_of_every_node_and_allow_a_limit_per_node():
    from sim.harness.verdicts import FABRIC_COLUMNS

    o = fabric_row("oae")
    near = fabric_row("pcie", ghost={"up_while_down": 100 + 3 * LIMIT, "down_while_up": 0})
    far = fabric_row("pcie", ghost={"up_while_down": 101 + 3 * LIMIT, "down_while_up": 0})
    assert verdict("ghost up/down", o, near, LIMIT, True, FABRIC_COLUMNS) == EQUAL
    assert verdict("ghost up/down", o, far, LIMIT, True, FABRIC_COLUMNS) == OAE
    never = fabric_row("pcie", flows_cycles=None, frames_lost=1)
    got = verdicts(o, never, LIMIT, True, FABRIC_COLUMNS)
    assert got["flows"] == OAE and got["lost"] == OAE and got["dup"] == EQUAL and len(got) == len(FABRIC_COLUMNS)


def test_the_fabric_contrast_judges_each_scenario_run_on_both_fabrics():
    from sim.fabric_contrast import fabric_verdicts

    rows = [fabric_row("oae"), fabric_row("pcie", detect_cycles=117_212), fabric_row("oae", scenario="alone")]
    better = fabric_verdicts(rows, LIMIT)
    assert list(better) == ["cut"] and better["cut"]["detect"] == OAE and better["cut"]["agreed"] == EQUAL
