"""docs/PORTS.md is the port table of the designs as they are exported now."""

import pytest

from sim.tools.ports_doc import DOC, INTERNAL, SIMULATION_ONLY, export_all, group, meaning, render
from sim.tools.verilog import verilog_ports


@pytest.fixture(scope="module")
def sidecars(tmp_path_factory):
    return export_all(tmp_path_factory.mktemp("verilog"))


@pytest.mark.slow
def test_ports_doc_is_current(sidecars):
    assert DOC.read_text() == render(sidecars), "docs/PORTS.md is out of date: run `make verilog`"


@pytest.mark.slow
def test_every_port_group_has_a_meaning(sidecars):
    missing = {}
    for sc in sidecars:
        assert sc["ports"], f"{sc['name']} has no ports in its sidecar"
        if sc["name"] in SIMULATION_ONLY or sc["name"] in INTERNAL:
            continue
        missing.update({group(p["name"]): sc["name"] for p in sc["ports"] if not meaning(sc["name"], group(p["name"]))})
    assert not missing, f"port groups without a meaning in sim/tools/ports_doc.py: {missing}"


def test_verilog_ports_reads_direction_and_width():
    text = "module top(a, b);\n  input [7:0] a;\n  output b;\nendmodule\nmodule other(c);\n  input c;\nendmodule\n"
    assert verilog_ports(text, "top") == [
        {"name": "a", "direction": "in", "width": 8},
        {"name": "b", "direction": "out", "width": 1},
    ]
    with pytest.raises(ValueError, match="no module 'missing'"):
        verilog_ports(text, "missing")


def test_render_marks_a_changed_width():
    sidecar = {
        "name": "x",
        "component": "X",
        "parameters": {},
        "ports": [{"name": "clk", "direction": "in", "width": 1}],
    }
    wider = {**sidecar, "ports": [{"name": "clk", "direction": "in", "width": 2}]}
    assert render([sidecar]) != render([wider])
