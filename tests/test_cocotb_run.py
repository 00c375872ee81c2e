"""The cocotb runner's reading of results.xml: failures reported, a run of no testcase caught."""

from sim.tools.cocotb_run import failures, ran_testcases

RESULTS = """<testsuites><testsuite name="all">
{cases}
</testsuite></testsuites>"""


def write(tmp_path, *cases):
    path = tmp_path / "results.xml"
    path.write_text(RESULTS.format(cases="\n".join(cases)))
    return path


def test_testcases_that_ran_are_counted_and_skipped_ones_are_not(tmp_path):
    path = write(
        tmp_path,
        '<testcase name="a" classname="m"/>',
        '<testcase name="b" classname="m"><failure message="boom"/></testcase>',
        '<testcase name="c" classname="m"><skipped/></testcase>',
    )
    assert ran_testcases(path) == 2
    assert "b: boom" in failures(path, only_failed=True)


def test_a_run_of_only_skipped_testcases_or_none_counts_zero(tmp_path):
    assert ran_testcases(write(tmp_path, '<testcase name="c" classname="m"><skipped/></testcase>')) == 0
    assert ran_testcases(write(tmp_path)) == 0
    assert ran_testcases(tmp_path / "absent.xml") == 0
