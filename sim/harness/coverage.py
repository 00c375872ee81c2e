"""Replays of a recorded trace repeated until the cases a test wants have all come up.

A perturbed replay draws its perturbations at random, so a rare case (a drain, a superseded
action) may not come up in one round. :func:`replay_until_covered` runs rounds, each with fresh
perturbations and each compared clock by clock by the caller's replay, until every wanted case
has been seen or the rounds run out; the test then asserts the coverage itself.
"""

from collections.abc import Callable

PERTURB_ROUNDS = 3


def covered(seen: dict) -> set:
    """The cases of ``seen`` (case -> count) that came up at least once."""
    return {case for case, count in seen.items() if count}


def replay_until_covered(replay_round: Callable[[dict], None], wanted: set, rounds: int = PERTURB_ROUNDS) -> dict:
    """Call ``replay_round(seen)`` (which counts the cases it meets into ``seen``) up to ``rounds``
    times, stopping once every case of ``wanted`` is in :func:`covered`; returns ``seen``."""
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds!r}")
    seen = {}
    for _ in range(rounds):
        replay_round(seen)
        if wanted <= covered(seen):
            break
    return seen
