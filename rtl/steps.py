"""Ordered updates within one clock edge, as the golden model's ``step`` makes them.

The golden endpoint changes its state in a fixed order within a cycle (receive, user inputs,
watchdogs, then the next word), and a later part reads what an earlier one wrote. The RTL keeps
that order explicitly: each step is a set of combinational "next" signals that start equal to
the previous step's values and are overridden under the step's condition; the last step's
values are registered. Reading ``now`` between steps gives exactly the state the golden model
has at that point of its ``step``.
"""

from contextlib import contextmanager

from amaranth.hdl import Module, Signal


class Steps:
    """Registers ``regs`` ({name: Signal}) updated by ordered steps within one clock edge."""

    def __init__(self, m: Module, regs: dict, prefix: str):
        self._m, self._regs, self._prefix = m, regs, prefix
        self.now = dict(regs)

    @contextmanager
    def step(self, name: str, enable):
        """Within the block, ``self.now`` holds this step's next values; assign to them under
        ``enable`` (already applied). After the block they are the current values."""
        before = self.now
        after = {k: Signal.like(v, name=f"{self._prefix}_{name}_{k}") for k, v in before.items()}
        self._m.d.comb += [after[k].eq(before[k]) for k in before]
        self.now = after
        with self._m.If(enable):
            yield before

    def commit(self):
        self._m.d.sync += [reg.eq(self.now[k]) for k, reg in self._regs.items()]
