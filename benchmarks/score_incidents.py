"""First-contact accuracy of ``aifabric diagnose`` on real incidents (benchmarks/incidents/).

Usage::

    python benchmarks/score_incidents.py dev          # the development half
    python benchmarks/score_incidents.py frozen       # the frozen half: measured once, at the end
    python benchmarks/score_incidents.py dev --json   # one JSON document

A faulty incident counts as **right** when an ``error`` or ``warning`` finding names one of the
cause classes its thread established (``incident.yaml`` ``cause:``); a healthy capture counts as
right when no ``error`` finding is given (warnings are counted and shown). Two more figures are
printed for faulty incidents: **top-1**, the first error or warning finding (not a "not
recognised" line) names the cause; **differential**, the cause is named by a finding or listed
among its alternatives that are not ruled out (docs/diagnose.md, "Differential diagnosis").
Inputs are read the way a user would give them: every file of the case to one ``diagnose`` run.
This is a benchmark, not a test: its score is recorded in docs/benchmarks.md, it is not
asserted. A case whose ``incident.yaml`` has a ``leaked:`` note (its thread was read for the
catalogues or rules after the case was frozen, so a later result is no longer evidence of
generalisation) is scored as usual and also counted apart: ``faulty_right_clean`` /
``faulty_clean`` leave such cases out.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from aifabric.checks.diagnose import diagnose, load_evidence

ROOT = Path(__file__).resolve().parent / "incidents"


def score_case(case: Path) -> dict[str, Any]:
    meta = yaml.safe_load((case / "incident.yaml").read_text(encoding="utf-8")) or {}
    inputs = [case / name for name in meta.get("inputs", [])] or sorted(
        p for p in case.iterdir() if p.name != "incident.yaml"
    )
    t0 = time.perf_counter()
    ev = load_evidence(inputs)
    result = diagnose(ev)
    seconds = time.perf_counter() - t0
    want = set(meta.get("cause") or [])
    healthy = bool(meta.get("healthy"))
    leaked = bool(meta.get("leaked"))
    named = [f for f in result.findings if f.severity in ("error", "warning")]
    causes = [f.cause for f in named if f.cause]
    ranked = [f for f in named if f.check != "diagnose.unrecognised-line"]
    listed = set(causes) | {
        a.cause for f in named for a in f.alternatives if a.status != "ruled out"
    }
    if healthy:
        right = not any(f.severity == "error" for f in result.findings)
        top1 = differential = right
    else:
        right = bool(want & set(causes))
        top1 = bool(ranked) and ranked[0].cause in want
        differential = bool(want & listed)
    return {
        "case": case.name,
        "healthy": healthy,
        "leaked": leaked,
        "want": sorted(want),
        "right": right,
        "top1": top1,
        "differential": differential,
        "named": [
            {"check": f.check, "severity": f.severity, "cause": f.cause, "message": f.message}
            for f in named[:6]
        ],
        "unrecognised": sum(1 for f in named if f.check == "diagnose.unrecognised-line"),
        "kinds": sorted({f.kind for f in ev.files}),
        "seconds": round(seconds, 3),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("set", choices=sorted(p.name for p in ROOT.iterdir() if p.is_dir()))
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--quiet", action="store_true", help="totals only (for the frozen set)")
    args = ap.parse_args(argv)
    folder = ROOT / args.set
    cases = sorted(p.parent for p in folder.glob("*/incident.yaml"))
    rows = [score_case(c) for c in cases]
    faulty = [r for r in rows if not r["healthy"]]
    healthy = [r for r in rows if r["healthy"]]
    totals = {
        "set": args.set,
        "faulty": len(faulty),
        "faulty_right": sum(r["right"] for r in faulty),
        "faulty_top1": sum(r["top1"] for r in faulty),
        "faulty_differential": sum(r["differential"] for r in faulty),
        "faulty_clean": sum(not r["leaked"] for r in faulty),
        "faulty_right_clean": sum(r["right"] and not r["leaked"] for r in faulty),
        "healthy": len(healthy),
        "healthy_clean": sum(r["right"] for r in healthy),
        "healthy_with_warnings": sum(bool(r["named"]) for r in healthy),
    }
    if args.json:
        json.dump({"totals": totals, "cases": [] if args.quiet else rows}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    if not args.quiet:
        for r in rows:
            mark = "ok " if r["right"] else ("diff" if r["differential"] else "MISS")
            mark += "*" if r["leaked"] else ""
            got = ", ".join(f"{n['severity'][0]}:{n['cause'] or n['check']}" for n in r["named"])
            print(f"{mark} {r['case']:<48} want {','.join(r['want']) or 'healthy':<28} got {got}")
    f, fr = totals["faulty"], totals["faulty_right"]
    h, hc = totals["healthy"], totals["healthy_clean"]
    t1, dd = totals["faulty_top1"], totals["faulty_differential"]
    print(f"{args.set}: right cause in {fr}/{f} faulty ({100 * fr / max(f, 1):.0f}%), "
          f"{hc}/{h} healthy without an error; top-1 {t1}/{f}, "
          f"in the differential {dd}/{f}"
          + (f"; without the cases marked leaked (*) {totals['faulty_right_clean']}"
             f"/{totals['faulty_clean']}" if totals["faulty_clean"] < f else ""))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
