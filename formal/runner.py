"""Build, run and read back one SymbiYosys proof.

A :class:`Proof` names a harness (an Amaranth elaboratable holding ``Assert``, ``Assume`` and
``Cover`` statements around one block), the engine (k-induction with ``mode prove``, or bounded
with ``mode bmc`` at a stated depth) and the depth the covers are searched to. :func:`run`
exports the harness to RTLIL, writes ``proof.sby`` beside it under ``build/formal/<name>/`` and
runs ``yowasp-sby`` there: the YoWASP tools only see the directory tree they are started in.

Two tasks are run per proof: ``check`` (the assertions, under the assumptions) and ``cover``
(every ``Cover`` must be reached, so no assertion holds only because nothing can happen). A
mutation run (:func:`run` with ``mutant=True``) builds the harness around a block with a seeded
bug and runs ``check`` alone: it must fail with a counterexample.
"""

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from amaranth.back import rtlil

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build" / "formal"

# The solver behind yosys-smtbmc: yices 2 (the PyPI wheel puts ``yices-smt2`` beside python).
SOLVER = "yices"


@dataclass(frozen=True)
class Proof:
    """One proof. ``build(mutant)`` returns ``(elaboratable, ports)``: the harness around the
    block, or around the block with a seeded bug when ``mutant`` is true. ``mode`` is ``prove``
    (k-induction of ``depth`` steps, unbounded) or ``bmc`` (every trace of ``depth`` steps,
    ``bounded`` saying why no more). ``global_domain``: the harness's own clock domain, whose
    flip-flops take the solver's implicit global clock so that the clocks of a multiclock
    design can be free inputs watched from it. ``fast``: part of ``--fast`` and the pytest run.
    ``mutant`` says what the seeded bug is. ``flatten``: the harness is flattened before the
    proof, so that the block's logic no property reads is left out (a large block whose
    properties read one path of it). ``mutant_depth``: the seeded bug is run bounded to this
    depth instead of the proof's own (a bug that shows only after more steps than the induction
    needs, such as one that needs a frame received first)."""

    name: str
    block: str
    prop: str
    build: Callable[[bool], tuple]
    mode: str
    depth: int
    cover_depth: int
    mutant: str
    fast: bool = True
    multiclock: bool = False
    global_domain: str | None = None
    bounded: str = ""
    flatten: bool = False
    mutant_depth: int | None = None

    @property
    def engine(self) -> str:
        if self.mode == "prove":
            return f"k-induction, k={self.depth}"
        return f"bounded, depth {self.depth}"

    def engine_of(self, mutant: bool) -> str:
        """The engine of the proof, or of its seeded bug's run."""
        if mutant and self.mutant_depth is not None:
            return f"bounded, depth {self.mutant_depth}"
        return self.engine


@dataclass
class Result:
    """What a run found. ``status``: ``pass``, ``fail`` (a counterexample: ``step`` is the step it
    fails at, ``trace`` the .vcd), ``unknown`` (the induction did not close: ``trace`` is the
    induction's counterexample from an unreachable state) or ``error``. ``cover``: ``pass``,
    ``fail`` (a cover not reached: ``unreached`` lists them) or None when not run."""

    name: str
    status: str
    seconds: float
    step: int | None = None
    trace: Path | None = None
    failed: list = field(default_factory=list)
    cover: str | None = None
    unreached: list = field(default_factory=list)
    log: Path | None = None


def tool_env(tools: dict) -> dict:
    """The environment for yowasp-sby: it runs ``yosys``, ``yosys-smtbmc`` and ``yosys-witness``
    by name unless told, and finds the solver on PATH."""
    env = dict(os.environ)
    bin_dir = str(Path(sys.executable).parent)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    env["YOSYS"], env["SMTBMC"], env["WITNESS"] = str(tools["yosys"]), str(tools["smtbmc"]), str(tools["witness"])
    return env


def _sby_text(proof: Proof, tasks, mutant: bool = False) -> str:
    lines = ["[tasks]", *tasks, "", "[options]"]
    if mutant and proof.mutant_depth is not None:
        lines += ["check: mode bmc", f"check: depth {proof.mutant_depth}"]
    else:
        lines += [f"check: mode {proof.mode}", f"check: depth {proof.depth}"]
    if "cover" in tasks:
        lines += ["cover: mode cover", f"cover: depth {proof.cover_depth}"]
    if proof.multiclock:
        lines.append("multiclock on")
    prep = "prep -flatten -top top" if proof.flatten else "prep -top top"
    lines += ["", "[engines]", f"smtbmc {SOLVER}", "", "[script]", "read_rtlil top.il", prep]
    if proof.global_domain:
        # The harness's own flip-flops step with every solver step (``$global_clock``); the
        # block's domains are then free clocks that clk2fflogic turns into enables.
        clk = f"{proof.global_domain}_clk"
        lines.append(f"formalff -clk2ff w:{clk} %co1:+[CLK] t:$dff %i")
    lines += ["", "[files]", "top.il", ""]
    return "\n".join(lines)


_FAILED = re.compile(r"summary:\s+failed assertion (\S+) at (.*?)(?: step (\d+))?$")
_TRACE = re.compile(r"summary: counterexample trace(?: \[(\w+)\])?: (\S+)")
# The step the base case (or bmc) was checking when it failed: the summary names no step for a
# failure at step 0. The induction's own steps are not counterexample steps.
_CHECKING = re.compile(r"engine_\d+(?:\.basecase)?: .*Checking assertions in step (\d+)\.\.")
_UNREACHED = re.compile(r"summary:\s+(\S+) at (\S+)$")


def _read_task(workdir: Path, task_dir: Path):
    status = (task_dir / "status").read_text().split()[0] if (task_dir / "status").is_file() else "ERROR"
    log = (task_dir / "logfile.txt").read_text() if (task_dir / "logfile.txt").is_file() else ""
    return status, log


def run(proof: Proof, *, mutant: bool = False, cover: bool = True, tools: dict | None = None) -> Result:
    """Run ``proof`` (its ``check`` task, and ``cover`` unless told not to or ``mutant``)."""
    if tools is None:
        from sim.tools.toolchain import ensure_formal_tools

        tools = ensure_formal_tools()
    name = proof.name + ("_mutant" if mutant else "")
    workdir = BUILD / name
    workdir.mkdir(parents=True, exist_ok=True)
    top, ports = proof.build(mutant)
    (workdir / "top.il").write_text(rtlil.convert(top, ports=ports, name="top"))
    tasks = ["check"] + (["cover"] if cover and not mutant else [])
    (workdir / "proof.sby").write_text(_sby_text(proof, tasks, mutant))
    started = time.monotonic()
    with (workdir / "sby.log").open("w") as out:
        subprocess.run(
            [str(tools["sby"]), "-f", "-j", "1", "proof.sby", *tasks],
            cwd=workdir,
            env=tool_env(tools),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    seconds = time.monotonic() - started
    result = Result(name=name, status="error", seconds=seconds, log=workdir / "sby.log")

    status, log = _read_task(workdir, workdir / "proof_check")
    result.status = {"PASS": "pass", "FAIL": "fail", "UNKNOWN": "unknown"}.get(status, "error")
    traces = {}
    checking = None
    for line in log.splitlines():
        if found := _CHECKING.search(line):
            checking = int(found.group(1))
        elif found := _FAILED.search(line):
            result.failed.append(f"{found.group(1)} at {found.group(2)}")
            step = found.group(3)
            if result.step is None:
                result.step = int(step) if step is not None else checking
        elif found := _TRACE.search(line):
            traces[found.group(1) or "bmc"] = workdir / "proof_check" / found.group(2).split("/", 1)[1]
    # A failed base case or bmc is a real counterexample; an induction trace starts from a
    # state no reset reaches and only says k was too small.
    result.trace = traces.get("basecase") or traces.get("bmc") or traces.get("induction")
    if result.status == "fail" and "basecase" not in traces and "bmc" not in traces and "induction" in traces:
        result.status = "unknown"
    if "cover" in tasks:
        status, log = _read_task(workdir, workdir / "proof_cover")
        result.cover = {"PASS": "pass", "FAIL": "fail"}.get(status, "error")
        lines = log.splitlines()
        for i, line in enumerate(lines):
            if "summary: unreached cover statements:" in line:
                for rest in lines[i + 1 :]:
                    if found := _UNREACHED.search(rest):
                        result.unreached.append(f"{found.group(1)} at {found.group(2)}")
                    else:
                        break
    return result
