"""docs/PORTS.md is the port table of the designs as they are exported now."""

import pytest

from sim.ports_doc import DOC, MEANINGS, SIMULATION_ONLY, generate, group, render
from sim.verilog import DESIGNS, export, verilog_ports


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    return generate(tmp_path_factory.mktemp("verilog"))


def test_ports_doc_is_current(generated):
    assert DOC.read_text() == generated, "docs/PORTS.md is out of date: run `make verilog`"


def test_every_port_group_has_a_meaning(tmp_path):
    import json
    missing = {}
    for name in DESIGNS:
        if name in SIMULATION_ONLY:
            continue
        export(name, tmp_path)
        ports = json.loads((tmp_path / f"{name}.json").read_text())["ports"]
        assert ports, f"{name} has no ports in its sidecar"
        missing.update({group(p["name"]): name for p in ports if group(p["name"]) not in MEANINGS})
    assert not missing, f"port groups without a meaning in sim/ports_doc.py: {missing}"


def test_verilog_ports_reads_direction_and_width():
    text = "module top(a, b);\n  input [7:0] a;\n  output b;\nendmodule\nmodule other(c);\n  input c;\nendmodule\n"
    assert verilog_ports(text, "top") == [{"name": "a", "direction": "in", "width": 8},
                                          {"name": "b", "direction": "out", "width": 1}]
    with pytest.raises(ValueError, match="no module 'missing'"):
        verilog_ports(text, "missing")


def test_render_marks_a_changed_width():
    sidecar = {"name": "x", "component": "X", "parameters": {}, "ports": [{"name": "clk", "direction": "in", "width": 1}]}
    wider = {**sidecar, "ports": [{"name": "clk", "direction": "in", "width": 2}]}
    assert render([sidecar]) != render([wider])
