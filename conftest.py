"""Test ordering for ``make test`` (pytest -n 2 --dist worksteal).

The Verilator tests take a minute or two each (a build and a long lockstep run); the golden tests
mostly take under a second. Run the long ones first, so the many short ones fill in behind them
and neither worker ends the run alone on one long test.
"""


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: 0 if item.nodeid.startswith("cocotb_tests/") else 1)
