"""``python -m formal [--fast] [--mutants] [NAME...]``: run the proofs, print one table.

Every proof runs its assertions (k-induction or bounded) and its covers; ``--mutants`` also runs
each proof against its block with a seeded bug, which must fail. Writes build/report/formal.json.
Exit status: 0 when every proof passed (and every mutant failed), 1 otherwise, 2 for a bad name.
"""

import argparse
import json
import sys

from formal import all_proofs
from formal.runner import BUILD, ROOT, run
from sim.tools.cli import command_help

REPORT = ROOT / "build" / "report" / "formal.json"


def _verdict(result, mutant):
    if mutant:
        return "FAIL as it must" if result.status == "fail" else f"{result.status.upper()} (must fail)"
    text = {"pass": "PASS", "fail": "FAIL", "unknown": "UNKNOWN (induction did not close)"}.get(result.status, "ERROR")
    if result.cover == "fail":
        text += ", cover unreached"
    elif result.cover == "error":
        text += ", cover error"
    return text


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m formal", description=command_help(__doc__))
    parser.add_argument("names", nargs="*", metavar="NAME", help="proofs to run (default: all)")
    parser.add_argument("--fast", action="store_true", help="only the fast proofs")
    parser.add_argument("--mutants", action="store_true", help="also run each proof on its seeded bug")
    parser.add_argument("--list", action="store_true", help="list the proofs and exit")
    args = parser.parse_args(argv)

    proofs = all_proofs()
    by_name = {proof.name: proof for proof in proofs}
    unknown = [name for name in args.names if name not in by_name]
    if unknown:
        print(f"formal: no proof named {', '.join(unknown)}; the proofs are: {', '.join(by_name)}", file=sys.stderr)
        return 2
    if args.list:
        for proof in proofs:
            print(f"{proof.name:24} {proof.block:40} {proof.engine:22} {'fast' if proof.fast else ''}")
        return 0
    chosen = [by_name[name] for name in args.names] if args.names else proofs
    if args.fast:
        chosen = [proof for proof in chosen if proof.fast]

    from sim.tools.toolchain import ensure_formal_tools

    tools = ensure_formal_tools()
    runs = [(proof, False) for proof in chosen] + [(proof, True) for proof in chosen if args.mutants]
    rows, ok = [], True
    for i, (proof, mutant) in enumerate(runs, 1):
        label = proof.name + (" (mutant)" if mutant else "")
        print(f"[{i}/{len(runs)}] {label}: {proof.engine_of(mutant)} ...", flush=True)
        result = run(proof, mutant=mutant, tools=tools)
        good = result.status == "fail" if mutant else result.status == "pass" and result.cover in (None, "pass")
        ok &= good
        verdict = _verdict(result, mutant)
        print(f"[{i}/{len(runs)}] {label}: {verdict} in {result.seconds:.1f} s", flush=True)
        if result.status in ("fail", "unknown") and not mutant or mutant and result.status == "fail":
            where = f"step {result.step}" if result.step is not None else "the induction step"
            print(f"    fails at {where}: {'; '.join(result.failed) or '?'}")
            print(f"    trace: {result.trace}")
        if result.unreached:
            print(f"    unreached covers: {'; '.join(result.unreached)}")
        if result.status == "error":
            print(f"    log: {result.log}")
        rows.append(
            {
                "property": proof.prop,
                "proof": label,
                "block": proof.block,
                "engine": proof.engine_of(mutant),
                "bounded_because": proof.bounded or None,
                "mutant": proof.mutant if mutant else None,
                "result": result.status,
                "cover": result.cover,
                "ok": good,
                "seconds": round(result.seconds, 1),
                "step": result.step,
                "trace": str(result.trace) if result.trace else None,
            }
        )

    headers = ("proof", "property", "block", "engine", "result", "seconds")
    table = [(r["proof"], r["property"], r["block"], r["engine"], _verdict_row(r), f"{r['seconds']:.1f}") for r in rows]
    widths = [max(len(h), *(len(row[c]) for row in table)) for c, h in enumerate(headers)]
    print()
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths)))
    print("  ".join("-" * w for w in widths))
    for row in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(json.dumps({"ok": ok, "build": str(BUILD), "proofs": rows}, indent=2) + "\n")
    print(f"\n{sum(r['ok'] for r in rows)} of {len(rows)} as required; report {REPORT.relative_to(ROOT)}")
    return 0 if ok else 1


def _verdict_row(row):
    if row["mutant"]:
        return "fails (seeded bug)" if row["result"] == "fail" else f"{row['result']} (must fail)"
    text = {"pass": "pass", "fail": "FAIL", "unknown": "UNKNOWN"}.get(row["result"], "ERROR")
    return text + (", cover unreached" if row["cover"] == "fail" else "")


if __name__ == "__main__":
    sys.exit(main())
