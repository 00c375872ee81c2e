"""sim/harness/coverage.py: replays repeated until the wanted cases have come up."""

import pytest

from sim.harness.coverage import covered, replay_until_covered


def _rounds_meeting(*cases_per_round):
    """A replay that meets the given cases in its successive rounds; it records the rounds run."""
    calls = []

    def replay_round(seen):
        for case in cases_per_round[len(calls)]:
            seen[case] = seen.get(case, 0) + 1
        calls.append(1)

    return replay_round, calls


def test_stops_at_the_round_that_covers_the_wanted_cases():
    replay, calls = _rounds_meeting({"a"}, {"b"}, {"c"})
    seen = replay_until_covered(replay, {"a", "b"}, rounds=3)
    assert len(calls) == 2
    assert covered(seen) == {"a", "b"}


def test_gives_up_after_the_rounds_and_returns_what_it_saw():
    replay, calls = _rounds_meeting({"a"}, {"a"}, {"a"})
    seen = replay_until_covered(replay, {"a", "rare"}, rounds=2)
    assert len(calls) == 2
    assert seen == {"a": 2}
    assert "rare" not in covered(seen)


def test_a_case_counted_zero_is_not_covered():
    assert covered({"a": 0, "b": 3}) == {"b"}


@pytest.mark.parametrize("rounds", [0, -1])
def test_rounds_below_one_are_refused(rounds):
    with pytest.raises(ValueError, match="rounds must be at least 1"):
        replay_until_covered(lambda seen: None, set(), rounds)
