# amaranth: UnusedElaboratable=no
"""The fast formal proofs pass (with every cover reached) and every block's seeded bug fails its
proof with a counterexample trace (formal/, docs/FORMAL.md). Marked ``formal``: SymbiYosys and
the solver are installed on first use, and the fast tier does not run these."""

import pytest

from formal import all_proofs
from formal.runner import run

pytestmark = pytest.mark.formal

_PROOFS = {proof.name: proof for proof in all_proofs()}
_FAST = [name for name, proof in _PROOFS.items() if proof.fast]
# One seeded bug per block; the bisynchronous FIFO's fails within a few steps, the framer's
# within seconds (the resumed framer's after a frame received, bounded).
_MUTANTS = [
    "queue_plain",
    "queue_lookahead",
    "rlfd",
    "token_plane",
    "cdc",
    "framer",
    "resume_framer",
    "resume_token_plane",
    "selective",
    "selective_w64",
    "forward_d3_r1",
    "forward_d2_r0",
    "store_w4_bypass",
    "store_w8",
]


@pytest.fixture(scope="module")
def tools():
    from sim.tools.toolchain import ensure_formal_tools

    return ensure_formal_tools()


@pytest.mark.parametrize("name", _FAST)
def test_fast_proof_passes(name, tools):
    result = run(_PROOFS[name], tools=tools)
    assert result.status == "pass", (result.status, result.failed, result.trace, result.log)
    assert result.cover == "pass", (result.unreached, result.log)


@pytest.mark.parametrize("name", _MUTANTS)
def test_seeded_bug_fails_its_proof(name, tools):
    result = run(_PROOFS[name], mutant=True, tools=tools)
    assert result.status == "fail", (result.status, result.log)
    assert result.step is not None and result.failed, result.log
    assert result.trace is not None and result.trace.suffix == ".vcd" and result.trace.is_file()


def test_bad_name_exits_2(capsys):
    from formal.__main__ import main

    assert main(["no_such_proof"]) == 2
    assert "no proof named no_such_proof" in capsys.readouterr().err


def test_every_block_has_a_proof_and_a_mutant():
    blocks = {proof.name.split("_")[0] for proof in _PROOFS.values()}
    assert blocks == {"queue", "rlfd", "token", "cdc", "framer", "resume", "selective", "forward", "store"}
    assert all(proof.mutant for proof in _PROOFS.values())
    assert set(_MUTANTS) <= set(_PROOFS)
