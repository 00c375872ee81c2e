"""sim/ghost_plot.py: `make sim`'s ghost plot, the pairs' panel and the fabrics' below it."""

import struct

import pytest

from sim import ghost_plot


def _size(path):
    """(width, height) of a PNG from its IHDR chunk."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


PAIRS = [
    {"name": name, "link": link, "ghost_cycles": ghost, "ghost_cycles_down_while_up": 0}
    for name, ghost in (("cut_both", 25), ("flap_1us", 0))
    for link in ("oae", "ltssm")
]
FABRIC = {
    "time_scale": "1/64",
    "scenarios": [
        {"scenario": name, "fabric": fabric, "ghost": {"up_while_down": 300, "down_while_up": 0}}
        for name in ("node_death", "partition")
        for fabric in ("oae", "pcie")
    ],
}


def test_the_fabric_panel_is_drawn_below_the_pairs(tmp_path):
    pairs = _size(ghost_plot.plot(PAIRS, None, tmp_path / "pairs.png"))
    both = _size(ghost_plot.plot(PAIRS, FABRIC, tmp_path / "both.png"))
    fabric = _size(ghost_plot.plot([], FABRIC, tmp_path / "fabric.png"))
    assert both[0] == pairs[0] and both[1] > pairs[1] and both[1] > fabric[1]


def test_nothing_to_plot_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="nothing to plot"):
        ghost_plot.plot([], None, tmp_path / "none.png")


def test_a_missing_or_unreadable_report_gives_no_rows(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert ghost_plot.pair_rows(tmp_path / "absent.json") == [] and ghost_plot.fabric_report(bad) is None
