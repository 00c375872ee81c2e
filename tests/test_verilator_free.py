"""The C++ free-running loop of `make bench` (sim/harness/verilator_free.py, sim/harness/cpp/link_pair_free.cpp):
it drives the ports the design has, and what it measures is the link the golden model predicts."""

import re

import pytest

from sim.harness.link import LinkHarness, Traffic
from sim.harness.link_scenarios import SCENARIOS, free_running_inputs
from sim.harness.verilator_free import build, cpp_member, inputs_source, run
from sim.tools.verilog import export, verilog_ports

BUILD = SCENARIOS["digest traffic"].build
CYCLES = 20_000


def test_verilator_names_escape_double_underscores():
    assert cpp_member(("a_frames_in", 1, "valid")) == "a_frames_in___05F1___05Fvalid"
    assert cpp_member(("ab_cut",)) == "ab_cut"


@pytest.mark.slow
def test_every_input_the_loop_writes_is_a_port_of_the_design(tmp_path):
    ports = {
        p["name"]: p for p in verilog_ports(export("link_pair", tmp_path, BUILD.pair_params()).read_text(), "link_pair")
    }
    written = re.findall(r"put\(top->(\w+), \{([^}]*)\}\)", inputs_source(BUILD))
    assert len(written) == len(free_running_inputs(BUILD))
    for member, words in written:
        name = member.replace("___05F", "__")
        assert ports[name]["direction"] == "in", name
        # No value is wider than its port.
        value = sum(int(w.rstrip("u"), 16) << (32 * i) for i, w in enumerate(words.split(", ")))
        assert value < 1 << ports[name]["width"], name


@pytest.mark.verilator
def test_the_loop_measures_the_link_the_golden_model_predicts():
    result = run(build(BUILD), CYCLES, 1)
    # The golden pair under the same constant inputs: every class always has a frame, A always
    # offers a token, every delivery is taken, the channel is quiet.
    golden = BUILD.harness(0, None)
    golden.traffic = {
        "a": Traffic(frame_load=(1.0,) * BUILD.num_classes, ait_rate=1.0),
        "b": Traffic(frame_load=(1.0,) * BUILD.num_classes),
    }
    golden.run_until(LinkHarness.both_up, 100_000)
    assert result["training_cycles"] == golden.cycle
    # The loop reads B's frames_delivered counter, which the golden end keeps the same way.
    before = golden.b.counters.frames_delivered
    golden.run(CYCLES)
    frames = golden.b.counters.frames_delivered - before
    assert frames > 0.05 * CYCLES
    assert result["verilator_cpp_frames_at_b"] == frames
    assert result["verilator_cpp_frames_per_cycle_at_b"] == round(frames / CYCLES, 6)
    assert len(result["verilator_cpp_link_cycles_per_s_runs"]) == 1
