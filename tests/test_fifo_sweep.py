"""The `make sim` FIFO sweep report: its table and the GTKWave save file of `make waves`."""

import re

from sim.fifo_sweep import GTKW_GROUPS, format_table, write_gtkw
from sim.tools.verilog import export


def test_every_gtkwave_signal_exists_in_the_exported_verilog(tmp_path):
    text = export("bisync_fifo", tmp_path).read_text()
    for _, signals in GTKW_GROUPS:
        for name, _ in signals:
            base = re.sub(r"\[\d+:\d+\]$", "", name)
            assert re.search(rf"(?<![\w.]){re.escape(base)}(?![\w.])", text), name


def test_gtkw_file_points_at_the_dump(tmp_path):
    dump = tmp_path / "dump.fst"
    gtkw = write_gtkw(dump, "bisync_fifo")
    body = gtkw.read_text()
    assert body.startswith(f'[dumpfile] "{dump}"')
    assert "bisync_fifo.source__payload.tag[7:0]" in body


def test_table_has_a_row_per_ratio_and_shows_errors():
    rows = [
        {
            "ratio": "1:4",
            "words": 10,
            "delivered": 9,
            "discarded": 1,
            "latency_min": 2,
            "latency_median": 2.5,
            "latency_max": 7,
            "errors": 0,
        },
        {
            "ratio": "4:1",
            "words": 10,
            "delivered": 10,
            "discarded": 0,
            "latency_min": None,
            "latency_median": None,
            "latency_max": None,
            "errors": 3,
        },
    ]
    lines = format_table(rows).splitlines()
    assert lines[2].split() == ["1:4", "10", "9", "1", "2", "2.5", "7", "0"]
    assert lines[3].split() == ["4:1", "10", "10", "0", "-", "-", "-", "3"]
