"""Verilator's runtime objects (verilated.o, verilated_vpi.o, ...), compiled once per flag set.

Every Verilated model links the same runtime library, compiled from Verilator's include
directory with the model's flags; it takes about 22 CPU-seconds, more than the link pair's own
C++. The cocotb runner builds each model in a directory of its own, so without this the runtime
is compiled again for every build (about 25 in ``make test``). Between Verilator's C++ generation
and ``make``, ``restore`` copies objects cached for the same flags into the build directory,
newer than the makefile they depend on, so ``make`` keeps them; after ``make``, ``save`` caches
the objects of a build that had none.

The key is everything the runtime's compile depends on: the Verilator root, the compiler, the
user C flags and the model's scalar ``VM_*`` settings (tracing, threads, timing, coverage).
A cache entry is written to a temporary directory and renamed, so parallel builds never read a
partial one.
"""

import hashlib
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

# (No imports from the package: the runner runs this file as a script in the build directory.)
_SETTING = re.compile(r"^(VM_[A-Z_]+|VERILATOR_ROOT)\s*=\s*(\S.*)?$")


def _globals(build_dir: Path) -> list[str]:
    """The runtime object names the model's makefile lists (VM_GLOBAL_FAST / _SLOW)."""
    names, inside = [], False
    for line in (build_dir / "Vtop_classes.mk").read_text().splitlines():
        if line.startswith("VM_GLOBAL_"):
            inside = True
            continue
        if inside:
            if not line.strip():
                inside = False
                continue
            names.append(line.strip().rstrip("\\").strip())
    return [n for n in names if n]


def key(build_dir: Path) -> str:
    """The cache key of ``build_dir``'s runtime objects."""
    lines = []
    for name in ("Vtop.mk", "Vtop_classes.mk"):
        text = (build_dir / name).read_text()
        lines += [m.group(0) for m in map(_SETTING.match, text.splitlines()) if m]
        # The user C flags are a continued list: "VM_USER_CFLAGS = \" then indented lines.
        flags = re.search(r"^VM_USER_CFLAGS = \\\n((?:  .*\n)*)", text, re.M)
        if flags:
            lines.append(flags.group(1))
    lines += sorted(_globals(build_dir))
    lines.append(os.environ.get("CXX", "c++"))
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


def restore(build_dir: Path, cache: Path) -> bool:
    """Copy runtime objects cached in ``cache`` for ``build_dir``'s flags into it; False when
    there are none."""
    entry = cache / key(build_dir)
    if not entry.is_dir():
        return False
    for obj in entry.iterdir():
        target = build_dir / obj.name
        shutil.copyfile(obj, target)
        os.utime(target)  # newer than the makefile Verilator just wrote
    return True


def save(build_dir: Path, cache: Path) -> None:
    """Cache ``build_dir``'s runtime objects (with their dependency files) in ``cache`` if they
    are not cached yet."""
    entry = cache / key(build_dir)
    if entry.is_dir():
        return
    files = [build_dir / f"{n}{ext}" for n in _globals(build_dir) for ext in (".o", ".d")]
    if not all(f.is_file() for f in files):
        return
    cache.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(dir=cache, prefix=".partial-"))
    for f in files:
        shutil.copyfile(f, partial / f.name)
    try:
        partial.rename(entry)
    except OSError:  # another build cached the same key first
        shutil.rmtree(partial, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("restore", "save"):
        sys.exit("usage: verilated_cache.py restore|save BUILD_DIR CACHE_DIR")
    {"restore": restore, "save": save}[sys.argv[1]](Path(sys.argv[2]), Path(sys.argv[3]))
