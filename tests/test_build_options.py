"""The documented builds (golden.params.BUILD_OPTIONS, PROTOCOL.md 9, docs/FPGA.md) and the
longest line each keeps at full rate."""

import pytest

from golden.params import (
    BUILD_OPTIONS,
    TURNAROUND,
    LinkParams,
    build_params,
    longest_latency,
    window_for_rtt,
)


def test_each_build_covers_its_stated_line_and_no_longer():
    assert {name: longest_latency(build_params(name).window) for name in BUILD_OPTIONS} == {"default": 18, "long": 257}
    for name in BUILD_OPTIONS:
        window, latency = build_params(name).window, longest_latency(build_params(name).window)
        assert window_for_rtt(2 * latency + TURNAROUND) <= window < window_for_rtt(2 * (latency + 1) + TURNAROUND)


def test_the_default_build_is_the_default_parameters():
    assert build_params("default") == LinkParams()
    assert build_params("long", num_classes=1).num_classes == 1


def test_an_unknown_build_is_refused_by_name():
    with pytest.raises(ValueError, match="build must be one of default, long"):
        build_params("longest")


def test_a_build_override_is_validated_as_any_parameter():
    with pytest.raises(ValueError, match="window"):
        build_params("long", window=0)
