"""The static timing analysis of sim/tools/sta.py on a hand-made placed design: two clocks, a
LUT chain, a shorter path into the same register and a path across the clocks."""

from sim.tools.sta import parse_sdf, worst_paths

# a (clk) -> lut1 -> lut2 -> b (clk); c (clk) -> lut2 -> b; a -> d (clk2); c -> e (clk), short.
SDF = r"""(DELAYFILE
  (CELL
    (CELLTYPE "top")
    (INSTANCE )
    (DELAY
      (ABSOLUTE
        (INTERCONNECT a_TRELLIS_FF_Q/Q lut1/A (500:600:700) (500:600:700))
        (INTERCONNECT lut1/F lut2/B (100:200:300) (100:200:300))
        (INTERCONNECT lut2/F b_TRELLIS_FF_Q/DI (50:60:70) (50:60:70))
        (INTERCONNECT c_TRELLIS_FF_Q_1/Q lut2/A (100:100:100) (100:100:100))
        (INTERCONNECT a_TRELLIS_FF_Q/Q d_TRELLIS_FF_Q/M (4000:4000:4000) (4000:4000:4000))
        (INTERCONNECT c_TRELLIS_FF_Q_1/Q e\$x_TRELLIS_FF_Q/M (900:900:900) (900:900:900))
      )
    )
  )
  (CELL
    (CELLTYPE "TRELLIS_FF")
    (INSTANCE a_TRELLIS_FF_Q)
    (DELAY
      (ABSOLUTE
        (IOPATH CLK Q (250:280:309) (250:280:309))
      )
    )
  )
  (CELL
    (CELLTYPE "TRELLIS_FF")
    (INSTANCE c_TRELLIS_FF_Q_1)
    (DELAY
      (ABSOLUTE
        (IOPATH CLK Q (250:280:309) (250:280:309))
      )
    )
  )
  (CELL
    (CELLTYPE "TRELLIS_COMB")
    (INSTANCE lut1)
    (DELAY
      (ABSOLUTE
        (IOPATH A F (119:130:141) (119:130:141))
      )
    )
  )
  (CELL
    (CELLTYPE "TRELLIS_COMB")
    (INSTANCE lut2)
    (DELAY
      (ABSOLUTE
        (IOPATH A F (119:130:141) (119:130:141))
        (IOPATH B F (119:130:141) (119:130:141))
      )
    )
  )
  (CELL
    (CELLTYPE "TRELLIS_FF")
    (INSTANCE b_TRELLIS_FF_Q)
    (TIMINGCHECK
      (SETUPHOLD (posedge DI) (posedge CLK) (0:0:45) (0:0:0))
    )
  )
  (CELL
    (CELLTYPE "TRELLIS_FF")
    (INSTANCE d_TRELLIS_FF_Q)
    (TIMINGCHECK
      (SETUPHOLD (posedge M) (posedge CLK) (0:0:0) (153:167:181))
    )
  )
  (CELL
    (CELLTYPE "TRELLIS_FF")
    (INSTANCE e\$x_TRELLIS_FF_Q)
    (TIMINGCHECK
      (SETUPHOLD (posedge M) (posedge CLK) (0:0:0) (153:167:181))
    )
  )
)
"""


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
