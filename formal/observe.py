"""Registers a block keeps to itself, for the auxiliary invariants that let an induction close.

A port-level property can hold in every reachable state and still fail k-induction: the induction
starts from any state, including one whose hidden counters disagree with its ports in a way that
no sequence of k steps shows. The harness then states how those registers relate to the ports,
and the solver proves that too. The registers are found by name in the block's elaborated
fragment, which the harness then instantiates itself, so they are the very signals of the block.
"""

from amaranth.hdl import Fragment


def elaborate(block, platform=None) -> Fragment:
    """The block's fragment: instantiate this (not ``block``) to use :func:`registers` on it."""
    return Fragment.get(block, platform)


def registers(fragment: Fragment, *path: str) -> dict:
    """The signals assigned in the submodule at ``path`` (names of ``m.submodules``), by name."""
    for name in path:
        found = [sub for sub, sub_name, _ in fragment.subfragments if sub_name == name]
        if not found:
            raise KeyError(f"no submodule {name!r} in the elaborated block")
        fragment = found[0]
    signals = {}
    for statements in fragment.statements.values():
        for statement in statements:
            for signal in statement._lhs_signals():
                signals[signal.name] = signal
    return signals
