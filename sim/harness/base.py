"""What every golden harness shares: a cycle count, ``run`` and ``run_until``, and the error its
scoreboard raises. A harness defines :meth:`Harness.step` (one cycle: drive the user side, step
the ends and the channel, call its scoreboard hooks) and may say in :meth:`Harness.describe`
what a timed-out ``run_until`` should report of its state."""


class ScoreboardError(AssertionError):
    """The design under the harness broke one of its guarantees (lost, duplicated, corrupted,
    reordered, or a token not conserved), or a condition was not reached in time."""


class Harness:
    cycle: int = 0

    def step(self):
        raise NotImplementedError

    def describe(self) -> str:
        """The state a timed-out :meth:`run_until` reports beside the cycle."""
        return ""

    def run(self, cycles: int, progress: bool = False):
        """Step ``cycles`` cycles (a progress bar on the terminal with ``progress``); returns self."""
        if not isinstance(cycles, int) or cycles < 0:
            raise ValueError(f"cycles must be a non-negative integer, not {cycles!r}")
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=cycles, unit="cyc", unit_scale=True, leave=False)
        for i in range(cycles):
            self.step()
            if bar is not None and i % 4096 == 4095:
                bar.update(4096)
        if bar is not None:
            bar.close()
        return self

    def run_until(self, predicate, limit: int):
        """Step until ``predicate(self)`` holds; returns self. ScoreboardError if ``limit`` cycles
        pass first."""
        for _ in range(limit):
            if predicate(self):
                return self
            self.step()
        if predicate(self):
            return self
        state = self.describe()
        raise ScoreboardError(
            f"condition not reached within {limit} cycles (cycle {self.cycle}{': ' + state if state else ''})"
        )
