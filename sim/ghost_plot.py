"""The ghost plot of `make sim` (build/report/ghosts.png): the side-by-side experiment's pairs and,
below them, the fabric contrast's triangles, each OAE against PCIe-style on a logarithmic time
axis: the time a link or fabric was believed up while down, and hatched, down while up.

``python -m sim.experiment`` draws it with the fabric rows of build/report/fabric_contrast.json
if that report is there, and ``python -m sim.fabric_contrast`` with the pair rows of
build/report/report.json: whichever runs last draws both panels, each from its own report.
"""

import json
from pathlib import Path

from sim.tools.verilog import BUILD

PLOT = BUILD / "report" / "ghosts.png"
PAIR_REPORT = BUILD / "report" / "report.json"
FABRIC_REPORT = BUILD / "report" / "fabric_contrast.json"
CLOCK_MHZ = 156.25
FLOOR = 1e-3  # microseconds: where a bar of zero cycles is drawn (as a dot)
COLOURS = {"oae": "tab:blue", "ltssm": "tab:red", "pcie": "tab:red"}


def _read(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def pair_rows(path: Path = PAIR_REPORT) -> list:
    """The experiment's rows from its report, or [] when it is not there."""
    report = _read(path)
    return report.get("scenarios", []) if isinstance(report, dict) else []


def fabric_report(path: Path = FABRIC_REPORT) -> dict | None:
    """The fabric contrast's report with RTL or golden rows of both fabrics, or None."""
    report = _read(path)
    return report if isinstance(report, dict) and report.get("scenarios") else None


def _bar(ax, y, cycles, colour, hatch):
    us = cycles / CLOCK_MHZ
    if us > 0:
        ax.barh(
            y,
            us - FLOOR,
            left=FLOOR,
            height=0.18,
            color=colour if hatch is None else "none",
            edgecolor=colour,
            hatch=hatch,
        )
    else:
        ax.plot([FLOOR], [y], "o", color=colour, markersize=2.5, fillstyle="full" if hatch is None else "none")


def _pair_panel(ax, rows: list):
    names = list(dict.fromkeys(r["name"] for r in rows))
    by = {(r["name"], r["link"]): r for r in rows}
    for i, name in enumerate(names):
        for j, kind in enumerate(("oae", "ltssm")):
            r = by.get((name, kind))
            if r is None:
                continue
            for h, (key, hatch) in enumerate((("ghost_cycles", None), ("ghost_cycles_down_while_up", "//"))):
                _bar(ax, i - 0.3 + 0.4 * j + 0.2 * h, r[key], COLOURS[kind], hatch)
            # The requester's belief, down while the link and the completer work (a slow completer).
            if r.get("completer_ghost_cycles_down_while_up"):
                y = i - 0.3 + 0.4 * j + 0.2
                ax.plot([r["completer_ghost_cycles_down_while_up"] / CLOCK_MHZ], [y], "x", color="black", markersize=6)
    ax.set_yticks(range(len(names)), names)
    ax.set_title("Ghosts of a link: believed in the wrong state (both ends summed), python -m sim.experiment")


def _fabric_panel(ax, report: dict):
    rows = report["scenarios"]
    names = list(dict.fromkeys(r["scenario"] for r in rows))
    by = {(r["scenario"], r["fabric"]): r for r in rows}
    for i, name in enumerate(names):
        for j, fabric in enumerate(("oae", "pcie")):
            r = by.get((name, fabric))
            if r is None:
                continue
            g = r["ghost"]
            for h, (key, hatch) in enumerate((("up_while_down", None), ("down_while_up", "//"))):
                _bar(ax, i - 0.3 + 0.4 * j + 0.2 * h, g[key], COLOURS[fabric], hatch)
    ax.set_yticks(range(len(names)), names)
    scale = report.get("time_scale", "1")
    ax.set_title(
        f"Ghosts of a fabric: every node's beliefs of every link summed, python -m sim.fabric_contrast "
        f"(PCIe-style timers at {scale})",
        fontsize=9,
    )


def plot(pairs: list, fabric: dict | None, path: Path = PLOT) -> Path:
    """Draw the pair rows ``pairs`` (the experiment's) and, when given, the fabric contrast's
    report ``fabric`` into ``path``; returns it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [p for p in (("pair", pairs), ("fabric", fabric)) if p[1]]
    if not panels:
        raise ValueError("nothing to plot: no pair rows and no fabric report")
    heights = [
        len({r["name"] for r in pairs}) if kind == "pair" else len(data["scenarios"]) // 2 for kind, data in panels
    ]
    fig, axes = plt.subplots(
        len(panels), 1, figsize=(9, 0.6 * sum(heights) + 2.5 * len(panels)), height_ratios=[h + 2 for h in heights]
    )
    axes = axes if len(panels) > 1 else [axes]
    for ax, (kind, data) in zip(axes, panels):
        _pair_panel(ax, data) if kind == "pair" else _fabric_panel(ax, data)
        ax.set_xscale("log")
        ax.invert_yaxis()
    axes[-1].set_xlabel(f"ghost time per scenario, microseconds at {CLOCK_MHZ} MHz (log scale; dot: none)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=COLOURS[k]) for k in ("oae", "ltssm")]
    handles.append(plt.Rectangle((0, 0), 1, 1, facecolor="none", edgecolor="grey", hatch="//"))
    handles.append(plt.Line2D([], [], marker="x", color="black", linestyle="none"))
    fig.legend(
        handles,
        [
            "OAE: believed up while down",
            "PCIe-style: believed up while down",
            "(hatched) believed down while up",
            "PCIe-style completer alive: down while up",
        ],
        loc="lower center",
        ncol=2,
        fontsize=8,
        frameon=False,
    )
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
