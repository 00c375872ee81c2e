"""`make sweeps`, first table: the BisyncFIFO clock-ratio sweep on Verilator.

Runs cocotb_tests/fifo_tb.py against the exported FIFO (depth 16) for every clock ratio, with
random backpressure and one reset of each side, checked by golden.common.cdc, then prints one row per
ratio and writes build/report/fifo_sweep.json.

Usage: python -m sim.fifo_sweep [--words N] [--seed S] [--waves]
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

from sim.tools.cli import command_help
from sim.tools.cocotb_run import build_dir_for, run_cocotb
from sim.tools.verilog import BUILD, export

COLUMNS = [
    ("ratio", "ratio w:r", 10),
    ("words", "words", 7),
    ("delivered", "delivered", 9),
    ("discarded", "discarded*", 10),
    ("latency_min", "lat min", 7),
    ("latency_median", "lat median", 10),
    ("latency_max", "lat max", 7),
    ("errors", "errors", 6),
]


# GTKWave trace groups: (comment, [(signal, display format)]); 28 = binary bit, 22 = hex.
GTKW_GROUPS = [
    (
        "write side",
        [
            ("w_clk", 28),
            ("w_rst", 28),
            ("sink__valid", 28),
            ("sink__ready", 28),
            ("sink__payload.tag[7:0]", 22),
            ("sink__payload.slice[63:0]", 22),
        ],
    ),
    (
        "reset handshake",
        [("epoch[3:0]", 22), ("seen_w[3:0]", 22), ("done_w[3:0]", 22), ("fifo_w_rst", 28), ("flushed", 28)],
    ),
    (
        "read side",
        [
            ("r_clk", 28),
            ("r_rst", 28),
            ("source__valid", 28),
            ("source__ready", 28),
            ("source__payload.tag[7:0]", 22),
            ("source__payload.slice[63:0]", 22),
        ],
    ),
]


def write_gtkw(dump: Path, top: str) -> Path:
    """A GTKWave save file beside ``dump`` showing the FIFO's ports and reset handshake."""
    path = dump.with_name(f"{top}.gtkw")
    lines = [f'[dumpfile] "{dump}"', f'[savefile] "{path}"', "[timestart] 0"]
    for comment, signals in GTKW_GROUPS:
        lines.append(f"-{comment}")
        for name, fmt in signals:
            lines += [f"@{fmt}", f"{top}.{name}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def format_table(rows) -> str:
    head = "  ".join(f"{title:>{width}}" for _, title, width in COLUMNS)
    lines = [head, "-" * len(head)]
    for row in rows:
        lines.append("  ".join(f"{_cell(row[key]):>{width}}" for key, _, width in COLUMNS))
    lines.append("latency: read-clock cycles from the write edge until the word is presented, including time")
    lines.append("queued behind earlier words under random backpressure (an unqueued word takes 3, at most 4")
    lines.append("in silicon, where the synchronizer may resolve late: rtl/common/cdc.py);")
    lines.append("* discarded: words in flight when the write side was reset, as the FIFO specifies.")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim.fifo_sweep", description=command_help(__doc__))
    parser.add_argument("--words", type=int, default=20000, help="words per clock ratio (default 20000)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: random, printed)")
    parser.add_argument("--waves", action="store_true", help="write waveforms (FST, else VCD) into the build dir")
    args = parser.parse_args(argv)
    if args.words < 1:
        parser.error("--words must be at least 1")
    build = build_dir_for("fifo_sweep")
    verilog = export("bisync_fifo", build / "verilog")
    with tempfile.TemporaryDirectory() as tmp:
        stats = Path(tmp) / "stats.jsonl"
        failed = False
        try:
            run_cocotb(
                verilog=verilog,
                toplevel="bisync_fifo",
                test_module="cocotb_tests.fifo_tb",
                build_dir=build,
                seed=args.seed,
                waves=args.waves,
                extra_env={
                    "OAE_FIFO_STATS": str(stats),
                    "OAE_FIFO_WORDS": str(args.words),
                    "COCOTB_LOG_LEVEL": "WARNING",
                },
            )
        except SystemExit as exc:  # the runner exits when a cocotb test failed; still print the table
            failed = exc.code not in (0, None)
        rows = [json.loads(line) for line in stats.read_text().splitlines()] if stats.exists() else []
    report = BUILD / "report"
    report.mkdir(parents=True, exist_ok=True)
    (report / "fifo_sweep.json").write_text(json.dumps(rows, indent=2) + "\n")
    print()
    print("BisyncFIFO sweep on Verilator (depth 16, random backpressure, one reset per side)")
    print(format_table(rows))
    print(f"report: {(report / 'fifo_sweep.json').relative_to(BUILD.parent)}")
    if args.waves:
        waves = sorted(build.glob("dump.*"))
        for dump in waves:
            gtkw = write_gtkw(dump, "bisync_fifo")
            print(f"waves: {dump.relative_to(BUILD.parent)}  (gtkwave {gtkw.relative_to(BUILD.parent)})")
        if not waves:
            print("waves: none written")
    return 1 if failed or any(r["errors"] for r in rows) or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
