"""The regression's seeds: fixed in `make test` and `make check` (so CI runs what a developer
replays), random in `make soak`.

- ``OAE_SEED=<n>`` replays seed ``n`` everywhere a seed is drawn;
- ``OAE_SOAK=1`` (``make soak``) draws a fresh random seed per run and multiplies the
  property tests' example counts by :data:`SOAK_FACTOR`;
- otherwise every run uses :data:`FIXED_SEED`.

Every user of a seed prints it with the command that replays it.
"""

import os
import random

FIXED_SEED = 1
SOAK_FACTOR = 10


def soaking() -> bool:
    return os.environ.get("OAE_SOAK", "0") not in ("", "0")


def regression_seed() -> int:
    """The seed of this run: ``OAE_SEED``, else random under ``OAE_SOAK``, else :data:`FIXED_SEED`."""
    if os.environ.get("OAE_SEED"):
        return int(os.environ["OAE_SEED"])
    return random.randrange(1 << 31) if soaking() else FIXED_SEED


def examples(n: int) -> int:
    """A property test's example count: ``n``, or ``n * SOAK_FACTOR`` under ``make soak``."""
    return n * SOAK_FACTOR if soaking() else n


def replay_hint(seed: int) -> str:
    return f"seed {seed} (replay with OAE_SEED={seed})"


def seeded_rng(*labels) -> random.Random:
    """A generator for one test case: the regression seed (printed with its replay hint) and
    ``labels`` (the case's parameters), so the cases of one run draw apart and each replays."""
    seed = regression_seed()
    print(replay_hint(seed))
    return random.Random("/".join(map(str, (seed, *labels))))
