"""The import rule of the repository, walked over every module's imports.

- ``golden/`` is the executable specification: it imports neither Amaranth nor ``rtl/``, ``sim/``,
  ``bench/`` or the tests.
- Its top-level modules (``golden.encoding``, ``golden.params``, ``golden.pcie_params``,
  ``golden.topology``) hold the wire codes, field tables, widths, limits, parameters and the
  fabric's graph, once. They import only the standard
  library and each other, and they are the only part of ``golden/`` that ``rtl/`` may import:
  the hardware shares the specification's numbers, never its behaviour.
- ``rtl/`` imports nothing from ``sim/``, ``bench/`` or the tests.
- ``sim/`` and ``bench/`` import no test module.
- A test module (``tests/test_*.py``, ``cocotb_tests/test_*.py``) imports no other test module;
  what two tests share lives in ``sim/`` or in a cocotb testbench module (``cocotb_tests/*_tb.py``).
"""

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("golden", "rtl", "sim", "bench", "cocotb_tests", "tests")
SPEC_MODULES = frozenset({"golden.encoding", "golden.params", "golden.pcie_params", "golden.topology"})
STDLIB = frozenset(sys.stdlib_module_names)


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every module a file imports, by absolute name (``from x import y`` counts ``x`` and ``x.y``)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    return imports_in(path.read_text(), package)


def imports_in(source: str, package: str) -> set[str]:
    """:func:`imports_of` for the text of a module of ``package`` (relative imports resolved)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def all_modules():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield module_name(path), path


MODULES = dict(all_modules())


def top(name: str) -> str:
    return name.split(".")[0]


def is_test_module(name: str) -> bool:
    return top(name) in ("tests", "cocotb_tests") and name.rpartition(".")[2].startswith("test_")


def violations(name: str, imported: set[str]) -> list[str]:
    """Why each import of module ``name`` breaks the rule (empty when none does)."""
    bad = []
    ours = {m for m in imported if top(m) in PACKAGES}
    # ``from golden import encoding`` names a module; ``from golden.params import LinkParams`` a
    # class: judge the deepest name that is one of our modules.
    modules = {m for m in ours if m in MODULES} | {m.rpartition(".")[0] for m in ours if m not in MODULES}
    modules = {m for m in modules if m in MODULES and m not in ("golden", "rtl", "sim")}
    if top(name) == "golden":
        bad += [
            f"imports {m}"
            for m in imported
            if top(m) in ("amaranth", "rtl", "sim", "bench", "cocotb", "cocotb_tests", "tests")
        ]
        if name in SPEC_MODULES:
            bad += [
                f"a spec module imports {m}"
                for m in imported
                if top(m) not in STDLIB
                and m not in SPEC_MODULES
                and m != "golden"
                and m.rpartition(".")[0] not in SPEC_MODULES
            ]
    if top(name) == "rtl":
        bad += [f"imports {m}" for m in modules if top(m) == "golden" and m not in SPEC_MODULES]
        bad += [f"imports {m}" for m in modules if top(m) in ("sim", "bench", "cocotb_tests", "tests")]
    if top(name) in ("sim", "bench"):
        bad += [f"imports the test module {m}" for m in modules if is_test_module(m) or top(m) == "tests"]
    if is_test_module(name):
        bad += [f"imports the test module {m}" for m in modules if is_test_module(m) and m != name]
    return bad


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_module_keeps_the_import_rule(name):
    assert violations(name, imports_of(MODULES[name])) == []


@pytest.mark.parametrize(
    "name, imported, why",
    [
        ("rtl.link.core", {"golden.link.framer", "golden.link.framer.Framer"}, "imports golden.link.framer"),
        ("rtl.common.queue", {"sim.tools.verilog"}, "imports sim.tools.verilog"),
        ("golden.link.core", {"amaranth.hdl"}, "imports amaranth.hdl"),
        ("golden.params", {"golden.common.slice"}, "a spec module imports golden.common.slice"),
        (
            "tests.test_fabric",
            {"tests.test_ghost", "tests.test_ghost.HELPER"},
            "imports the test module tests.test_ghost",
        ),
        (
            "sim.triangle",
            {"cocotb_tests.test_link", "cocotb_tests.test_link.X"},
            "imports the test module cocotb_tests.test_link",
        ),
    ],
)
def test_the_walker_catches_each_kind_of_breach(name, imported, why):
    assert why in violations(name, imported)


def test_the_walker_resolves_relative_and_aliased_imports():
    source = "from . import framer as f\nfrom ..common.slice import Tag\nimport golden.encoding as enc\n"
    found = imports_in(source, "golden.link")
    assert {"golden.link", "golden.link.framer", "golden.common.slice", "golden.common.slice.Tag"} <= found
    assert "golden.encoding" in found
    # rtl/ reaching past the spec modules into a golden subsystem is caught.
    assert "imports golden.link.framer" in violations(
        "rtl.link.core", imports_in("from golden.link import framer", "rtl.link")
    )


def test_the_walker_reads_the_files_of_the_tree():
    assert {"golden.encoding", "golden.link.framer"} <= imports_of(ROOT / "golden" / "link" / "core.py")
