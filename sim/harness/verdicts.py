"""Who wins each column of the side-by-side experiment (``python -m sim.experiment``).

For one scenario, :func:`verdicts` compares the OAE link's row with the PCIe-style link's, column
by column, and says ``"oae"``, ``"pcie"`` or ``"equal"``. Counts (frames lost, duplicated,
corrupted; tokens lost or duplicated) are equal only when they are equal; fewer is better.
Cycles of belief (detection, ghost cycles of both signs) are equal within the
physical limit: no end can change its belief before the line's one-way latency plus the
loss-of-signal window have passed (``belief_limit``), so two figures that differ by less than
that limit per end are the same result. Goodput is equal within ``GOODPUT_SLACK``; more is
better. A detection that never happened is worse than any when the link was down, and better
than any when it was not (then it was a false alarm). A fault that no end noticed and that cost
nothing (the table's "hidden" cycles) is neither: a link may ride out a short flap.
"""

OAE, PCIE, EQUAL = "oae", "pcie", "equal"
# How a verdict is written in tables: the better link or fabric, or "=".
NAMES = {OAE: "OAE", PCIE: "PCIe-style", EQUAL: "="}
GOODPUT_SLACK = 0.005  # of the link: two goodputs this close are the same

# column: (row key, kind, ends whose beliefs the figure sums)
COLUMNS = {
    "detect": ("detection_cycles", "detection", 1),
    "ghost up/down": ("ghost_cycles", "cycles", 2),
    "ghost down/up": ("ghost_cycles_down_while_up", "cycles", 2),
    "lost": ("frames_lost", "count", 0),
    "dup": ("frames_duplicated", "count", 0),
    "corrupt": ("frames_corrupted", "count", 0),
    "tokens lost/dup": (("tokens_lost", "tokens_duplicated"), "count", 0),
    "goodput": ("goodput", "goodput", 0),
}


def belief_limit(latency: int, los_cycles: int) -> int:
    """The fewest cycles in which an end's belief can follow a change of the line."""
    return latency + los_cycles


# The fabric contrast's columns (sim/fabric_contrast.py): every belief of a failed link at every
# node, so each cycle column's slack is a belief limit per node of the triangle.
FABRIC_COLUMNS = {
    "detect": ("detect_cycles", "detection", 1),
    "agreed": ("agreed_cycles", "detection", 1),
    "flows": ("flows_cycles", "detection", 1),
    "lost": ("frames_lost", "count", 0),
    "dup": ("duplicates", "count", 0),
    "reord": ("reordered", "count", 0),
    "ghost up/down": ("ghost.up_while_down", "cycles", 3),
    "ghost down/up": ("ghost.down_while_up", "cycles", 3),
}


def _value(row: dict, key):
    if isinstance(key, tuple):
        parts = [_value(row, k) for k in key]
        return None if any(p is None for p in parts) else sum(parts)
    for part in key.split(".")[:-1]:
        row = row.get(part) or {}
    return row.get(key.split(".")[-1])


def _lower_wins(oae, pcie, slack) -> str:
    if abs(oae - pcie) <= slack:
        return EQUAL
    return OAE if oae < pcie else PCIE


def verdict(column: str, oae_row: dict, pcie_row: dict, limit: int, link_down: bool, columns=None) -> str | None:
    """One column's verdict, or None when the column does not apply to both links; ``columns``:
    :data:`COLUMNS` (the pairs'), or :data:`FABRIC_COLUMNS`."""
    key, kind, ends = (columns or COLUMNS)[column]
    o, p = _value(oae_row, key), _value(pcie_row, key)
    if kind == "detection":
        if o is None or p is None:
            if o is None and p is None:
                return EQUAL
            never = OAE if o is None else PCIE
            other = PCIE if never == OAE else OAE
            return other if link_down else never
        return _lower_wins(o, p, limit) if link_down else EQUAL
    if o is None or p is None:
        return None
    if kind == "cycles":
        return _lower_wins(o, p, ends * limit)
    if kind == "count":
        return _lower_wins(o, p, 0)
    if abs(o - p) <= GOODPUT_SLACK:
        return EQUAL
    return OAE if o > p else PCIE


def verdicts(oae_row: dict, pcie_row: dict, limit: int, link_down: bool, columns=None) -> dict:
    """``{column: "oae" | "pcie" | "equal"}`` for the columns both links (or fabrics) have."""
    out = {}
    for column in columns or COLUMNS:
        v = verdict(column, oae_row, pcie_row, limit, link_down, columns)
        if v is not None:
            out[column] = v
    return out


def summary(by_scenario: dict) -> dict:
    """Counts of each verdict over every scenario and column, and the cells PCIe-style wins."""
    counts = {OAE: 0, PCIE: 0, EQUAL: 0}
    pcie_wins = []
    for name, columns in by_scenario.items():
        for column, v in columns.items():
            counts[v] += 1
            if v == PCIE:
                pcie_wins.append(f"{name}: {column}")
    return {"counts": counts, "pcie_better": pcie_wins}
