"""`make sweeps`, second table: the RTL link on Verilator, in lockstep with the golden link.

Runs cocotb_tests/link_tb.py on the exported two-endpoint design (rtl/simulation/link_pair.py: 2 classes,
digest echo, 16-cycle channel) for the fault scenarios of that build, one row each: cycles
compared word for word, frames and tokens delivered (both ends), trainings, suspicions,
anomalies, malformed words and preemptions. Any difference from the golden model stops the run
with the cycle and the first differing signal. Writes build/report/link_sweep.json.

Usage: python -m sim.link_sweep [--seed S] [--scenario NAME ...]
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

from sim.harness.link_scenarios import DIGEST, SCENARIOS
from sim.tools.cli import command_help
from sim.tools.cocotb_run import build_dir_for, build_lock, run_cocotb
from sim.tools.verilog import BUILD, export

COLUMNS = [
    ("scenario", "scenario", 18),
    ("cycles_compared", "cycles", 7),
    ("frames", "frames", 6),
    ("tokens", "tokens", 6),
    ("trainings", "trainings", 9),
    ("suspicions", "suspicions", 10),
    ("anomalies", "anomalies", 9),
    ("malformed", "malformed", 9),
    ("preemptions", "preempt", 7),
]
DEFAULT = [name for name, s in SCENARIOS.items() if s.build == DIGEST]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim.link_sweep", description=command_help(__doc__))
    parser.add_argument("--seed", type=int, default=1, help="traffic and fault seed (default 1)")
    parser.add_argument("--scenario", action="append", choices=DEFAULT, help="run only these (repeatable)")
    args = parser.parse_args(argv)
    build_dir = build_dir_for(f"link_pair_{DIGEST.tag}")
    with build_lock(build_dir):
        verilog = export("link_pair", build_dir / "verilog", params=DIGEST.pair_params())
    rows = []
    for name in args.scenario or DEFAULT:
        with tempfile.TemporaryDirectory() as tmp:
            summary = Path(tmp) / "summary.json"
            run_cocotb(
                verilog=verilog,
                toplevel="link_pair",
                test_module="cocotb_tests.link_tb",
                build_dir=build_dir,
                test_dir=build_dir_for(f"link_sweep_{name}"),
                seed=args.seed,
                extra_env={"OAE_LINK_SCENARIO": name, "OAE_LINK_SUMMARY": str(summary), "COCOTB_LOG_LEVEL": "WARNING"},
            )
            rows.append(json.loads(summary.read_text()))
    print("\nRTL link on Verilator, lockstep with the golden link (every word, state and counter, every cycle)")
    print("  ".join(f"{title:>{width}}" for _, title, width in COLUMNS))
    for row in rows:
        print("  ".join(f"{row[key]:>{width}}" for key, _, width in COLUMNS))
    report = BUILD / "report" / "link_sweep.json"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(json.dumps({"build": DIGEST.tag, "seed": args.seed, "rows": rows}, indent=2) + "\n")
    print(f"report: {report.relative_to(BUILD.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
