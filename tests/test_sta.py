"""The static timing analysis of sim/tools/sta.py on hand-made placed designs: two clocks, a
LUT chain, a shorter path into the same register and a path across the clocks; and a memory of
two block RAMs."""

from sim.tools.sta import parse_sdf, worst_paths


def _cell(kind: str, instance: str, body: str) -> str:
    return f'  (CELL\n    (CELLTYPE "{kind}")\n    (INSTANCE {instance})\n{body}\n  )'


def _delays(lines) -> str:
    return "    (DELAY\n      (ABSOLUTE\n" + "\n".join(lines) + "\n      )\n    )"


def _sdf(interconnects: list, cells: list) -> str:
    """An SDF as nextpnr writes it: the top's interconnect delays, then a block per cell."""
    nets = _delays(f"        (INTERCONNECT {a} {b} ({d}) ({d}))" for a, b, d in interconnects)
    return "(DELAYFILE\n" + "\n".join([_cell("top", "", nets), *cells]) + "\n)\n"


def _arcs(kind: str, instance: str, arcs: list) -> str:
    return _cell(kind, instance, _delays(f"        (IOPATH {a} {b} ({d}) ({d}))" for a, b, d in arcs))


def _check(kind: str, instance: str, pin: str, clock: str, setup: str, hold: str) -> str:
    check = f"      (SETUPHOLD (posedge {pin}) (posedge {clock}) ({setup}) ({hold}))"
    return _cell(kind, instance, f"    (TIMINGCHECK\n{check}\n    )")


CLK_TO_Q = [("CLK", "Q", "250:280:309")]
LUT = "119:130:141"

# a (clk) -> lut1 -> lut2 -> b (clk); c (clk) -> lut2 -> b; a -> d (clk2); c -> e (clk), short.
SDF = _sdf(
    [
        ("a_TRELLIS_FF_Q/Q", "lut1/A", "500:600:700"),
        ("lut1/F", "lut2/B", "100:200:300"),
        ("lut2/F", "b_TRELLIS_FF_Q/DI", "50:60:70"),
        ("c_TRELLIS_FF_Q_1/Q", "lut2/A", "100:100:100"),
        ("a_TRELLIS_FF_Q/Q", "d_TRELLIS_FF_Q/M", "4000:4000:4000"),
        ("c_TRELLIS_FF_Q_1/Q", r"e\$x_TRELLIS_FF_Q/M", "900:900:900"),
    ],
    [
        _arcs("TRELLIS_FF", "a_TRELLIS_FF_Q", CLK_TO_Q),
        _arcs("TRELLIS_FF", "c_TRELLIS_FF_Q_1", CLK_TO_Q),
        _arcs("TRELLIS_COMB", "lut1", [("A", "F", LUT)]),
        _arcs("TRELLIS_COMB", "lut2", [("A", "F", LUT), ("B", "F", LUT)]),
        _check("TRELLIS_FF", "b_TRELLIS_FF_Q", "DI", "CLK", "0:0:45", "0:0:0"),
        _check("TRELLIS_FF", "d_TRELLIS_FF_Q", "M", "CLK", "0:0:0", "153:167:181"),
        _check("TRELLIS_FF", r"e\$x_TRELLIS_FF_Q", "M", "CLK", "0:0:0", "153:167:181"),
    ],
)


def _netlist():
    ports = {"clk": {"direction": "input", "bits": [2]}, "clk2": {"direction": "input", "bits": [3]}}
    cells = {
        name: {"type": "TRELLIS_FF", "connections": {"CLK": [bit]}}
        for name, bit in (("a_TRELLIS_FF_Q", 2), ("b_TRELLIS_FF_Q", 2), ("c_TRELLIS_FF_Q_1", 2), ("d_TRELLIS_FF_Q", 3))
    }
    cells["e$x_TRELLIS_FF_Q"] = {"type": "TRELLIS_FF", "connections": {"CLK": [2]}}
    return {"modules": {"top": {"attributes": {"top": "1"}, "ports": ports, "cells": cells}}}


def _rtl(cell):
    return cell.split("_TRELLIS_FF_Q")[0]


def test_arcs_launches_and_setup_checks_are_read_at_the_max_corner():
    arcs, launches, checks = parse_sdf(SDF)
    assert launches["a_TRELLIS_FF_Q/Q"] == (309, "CLK")
    assert ("lut2/F", 141) in arcs["lut2/B"]
    assert checks["b_TRELLIS_FF_Q/DI"] == (45, "CLK")
    assert "e$x_TRELLIS_FF_Q/M" in checks  # escapes removed


def test_the_worst_path_into_each_register_is_traced_to_the_register_that_launched_it():
    paths = worst_paths(SDF, _netlist(), _rtl)
    # a -> b: 309 + 700 + 141 + 300 + 141 + 70 + setup 45 = 1706 ps, through lut1 and lut2 (the
    # path from c is shorter); c -> e: 309 + 900 = 1209 ps. a -> d crosses into clk2: left out.
    assert [(p.start, p.end, p.domain, p.delay_ns, p.cells) for p in paths] == [
        ("a", "b", "clk", 1.706, 2),
        ("c", "e$x", "clk", 1.209, 0),
    ]
    assert [p.end for p in worst_paths(SDF, _netlist(), _rtl, count=1)] == ["b"]


# a (clk) -> lut1 -> m.0.0 and a -> m.0.1: two block RAMs of memory m; a -> two slices of LUT-RAM
# blocks of memory q (nextpnr names a block's slices <block>$<part>); a -> r.0.1, a register.
MEMORY_SDF = _sdf(
    [
        ("a_TRELLIS_FF_Q/Q", "lut1/A", "500:600:700"),
        ("lut1/F", "m.0.0/DIA0", "100:200:300"),
        ("a_TRELLIS_FF_Q/Q", "m.0.1/DIA0", "400:400:400"),
        ("a_TRELLIS_FF_Q/Q", "r.0.1_TRELLIS_FF_Q/M", "200:200:200"),
        ("a_TRELLIS_FF_Q/Q", r"q.0.3\$DPRAM_COMB0/DI0", "300:300:300"),
        ("a_TRELLIS_FF_Q/Q", r"q.1.3\$DPRAM_COMB1/DI0", "250:250:250"),
    ],
    [
        _arcs("TRELLIS_FF", "a_TRELLIS_FF_Q", CLK_TO_Q),
        _arcs("TRELLIS_COMB", "lut1", [("A", "F", LUT)]),
        _check("DP16KD", "m.0.0", "DIA0", "CLKA", "0:0:50", "0:0:0"),
        _check("DP16KD", "m.0.1", "DIA0", "CLKA", "0:0:50", "0:0:0"),
        _check("TRELLIS_FF", "r.0.1_TRELLIS_FF_Q", "M", "CLK", "0:0:0", "153:167:181"),
        _check("TRELLIS_COMB", r"q.0.3\$DPRAM_COMB0", "DI0", "WCK", "0:0:40", "0:0:0"),
        _check("TRELLIS_COMB", r"q.1.3\$DPRAM_COMB1", "DI0", "WCK", "0:0:40", "0:0:0"),
    ],
)


def test_the_block_rams_of_one_memory_are_one_capturing_memory():
    ports = {"clk": {"direction": "input", "bits": [2]}}
    cells = {
        name: {"type": "TRELLIS_FF", "connections": {"CLK": [2]}} for name in ("a_TRELLIS_FF_Q", "r.0.1_TRELLIS_FF_Q")
    }
    cells.update({name: {"type": "DP16KD", "connections": {"CLKA": [2]}} for name in ("m.0.0", "m.0.1")})
    cells.update({name: {"type": "TRELLIS_DPR16X4", "connections": {"WCK": [2]}} for name in ("q.0.3", "q.1.3")})
    netlist = {"modules": {"top": {"attributes": {"top": "1"}, "ports": ports, "cells": cells}}}
    paths = worst_paths(MEMORY_SDF, netlist, _rtl)
    # a -> m.0.0: 309 + 700 + 141 + 300 + setup 50 = 1500 ps, worse than a -> m.0.1 (759 ps): one
    # row for memory m; a -> q.0.3: 309 + 300 + 40 = 649 ps, one row for q. A register whose name
    # ends in digits keeps them.
    assert [(p.start, p.end, p.delay_ns, p.cells) for p in paths] == [
        ("a", "m", 1.5, 1),
        ("a", "q", 0.649, 0),
        ("a", "r.0.1", 0.509, 0),
    ]
