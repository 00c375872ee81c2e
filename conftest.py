"""pytest set-up shared by tests/ and cocotb_tests/: the test tiers, the hypothesis profile, the
order of the long tests, and the duration of each tier at the end of a run.

Tiers (markers registered in pyproject.toml): ``verilator`` (a Verilated model: every test under
cocotb_tests/ and the tests that mark themselves), ``synth`` (yosys and nextpnr), ``formal``
(SymbiYosys proofs), ``slow`` (golden
or Amaranth-simulator tests of more than a few seconds, and the export of every design); the rest
is the fast tier. ``make check`` runs the fast tier, ``make test`` all of them.
"""

import collections
import os

from hypothesis import settings

from sim.tools.seeds import soaking

TIERS = ("verilator", "synth", "formal", "slow")

# make check and make test replay the same examples every run; make soak draws new ones.
settings.register_profile("regression", derandomize=True, print_blob=True)
settings.register_profile("soak", derandomize=False, print_blob=True)
settings.load_profile("soak" if soaking() else "regression")


def tier_of(keywords) -> str:
    """The tier of a test from its keywords (an item's or a report's: markers are among them)."""
    return next((t for t in TIERS if t in keywords), "fast")


def pytest_collection_modifyitems(items):
    for item in items:
        if item.nodeid.startswith("cocotb_tests/"):
            item.add_marker("verilator")
    # The Verilator tests take a minute or two each (a build and a long lockstep run); most others
    # take under a second. Run the long ones first, so the short ones fill in behind them and
    # neither worker ends the run alone on one long test (pytest -n 2 --dist worksteal).
    order = {"verilator": 0, "synth": 1, "formal": 2, "slow": 3, "fast": 4}
    items.sort(key=lambda item: order[tier_of(item.keywords)])


_spent = collections.Counter()
_count = collections.Counter()


def pytest_runtest_logreport(report):
    tier = tier_of(report.keywords)
    _spent[tier] += report.duration
    if report.when == "call":
        _count[tier] += 1


def pytest_terminal_summary(terminalreporter):
    if not _count or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    terminalreporter.section("time by tier (test time summed over workers)")
    for tier in ("fast", *TIERS):
        if _count[tier]:
            terminalreporter.write_line(f"{tier:>9}: {_count[tier]:4d} tests, {_spent[tier]:7.1f} s")
