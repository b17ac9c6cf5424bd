"""First-contact accuracy of ``aifabric diagnose`` on real incidents (benchmarks/incidents/).

Usage::

    python benchmarks/score_incidents.py dev          # the development half
    python benchmarks/score_incidents.py frozen       # the frozen half: measured once, at the end
    python benchmarks/score_incidents.py dev --json   # one JSON document
    python benchmarks/score_incidents.py --ceiling    # every set, split by what the input shows

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

``--ceiling`` scores every set and splits the faulty cases by whether their input shows the
established cause at all (``visibility.tsv``: ``S`` shown, ``I`` inferable among a few causes,
``A`` absent from the input; two independent readings and a third where they differed, see
benchmarks/incidents/README.md), beside each frozen case's result at first contact
(``first_contact.tsv``: the commit it was first measured on and whether it was right) and a
blind expert reading of the same inputs (``expert.tsv``: up to three cause classes named from
the pasted inputs alone, most likely first). No reader of the input alone can name an ``A``
case's cause, so the share of ``A`` cases bounds what any paste-reading diagnosis can reach;
the expert's top-1 and top-3 say how far a careful reader gets.
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
LABELS = {"S": "shown", "I": "inferable", "A": "absent"}


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


def _table(path: Path, width: int) -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            cells = line.split("\t")
            if len(cells) != width:
                raise SystemExit(f"{path.name}: expected {width} columns: {line!r}")
            rows[cells[0]] = cells[1:]
    return rows


def ceiling() -> dict[str, Any]:
    """Faulty cases of every set by visibility label: now right, and right at first contact."""
    vis = _table(ROOT / "visibility.tsv", 6)
    first = _table(ROOT / "first_contact.tsv", 3)
    expert = _table(ROOT / "expert.tsv", 4)
    sets = sorted(p.name for p in ROOT.iterdir() if p.is_dir())
    out: dict[str, Any] = {}
    for half in ("frozen", "dev"):
        cells: dict[str, dict[str, int]] = {}
        for name in (s for s in sets if s.startswith(half)):
            for case in sorted(p.parent for p in (ROOT / name).glob("*/incident.yaml")):
                key = f"{name}/{case.name}"
                r = score_case(case)
                if r["healthy"]:
                    continue
                if key not in vis:
                    raise SystemExit(f"visibility.tsv has no label for {key}")
                c = cells.setdefault(vis[key][3], dict.fromkeys(
                    ("cases", "right", "top1", "clean", "right_clean", "first", "first_right",
                     "expert_top1", "expert_top3"), 0))
                want = set(r["want"])
                named = expert.get(key, ["-", "-", "-"])
                c["cases"] += 1
                c["right"] += r["right"]
                c["top1"] += r["top1"]
                c["expert_top1"] += named[0] in want
                c["expert_top3"] += bool(want & set(named))
                c["clean"] += not r["leaked"]
                c["right_clean"] += r["right"] and not r["leaked"]
                if key in first:
                    c["first"] += 1
                    c["first_right"] += first[key][1] == "1"
        out[half] = cells
    return out


def _print_ceiling(out: dict[str, Any]) -> None:
    for half, cells in out.items():
        total = sum(c["cases"] for c in cells.values())
        print(f"{half}: {total} faulty cases")
        rows = [(LABELS[k], cells[k]) for k in ("S", "I", "A") if k in cells]
        rows.append(("all", {k: sum(c[k] for c in cells.values()) for k in rows[0][1]}))
        for label, c in rows:
            n = c["cases"]
            line = (f"  {label:<10} {n:>4} ({100 * n / total:.0f}%)  diagnose: right {c['right']}"
                    f" ({100 * c['right'] / n:.0f}%), top-1 {c['top1']}")
            if c["clean"] < n:
                line += f", right without leaked cases {c['right_clean']}/{c['clean']}"
            if c["first"]:
                line += (f", at first contact {c['first_right']}/{c['first']}"
                         f" ({100 * c['first_right'] / c['first']:.0f}%)")
            line += (f"; blind expert: top-1 {c['expert_top1']} ({100 * c['expert_top1'] / n:.0f}%)"
                     f", top-3 {c['expert_top3']} ({100 * c['expert_top3'] / n:.0f}%)")
            print(line)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("set", nargs="?", choices=sorted(p.name for p in ROOT.iterdir() if p.is_dir()))
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--ceiling", action="store_true",
                    help="every set, faulty cases split by what their input shows")
    ap.add_argument("--quiet", action="store_true", help="totals only (for the frozen set)")
    args = ap.parse_args(argv)
    if args.ceiling:
        out = ceiling()
        if args.json:
            json.dump(out, sys.stdout, indent=2)
            sys.stdout.write("\n")
        else:
            _print_ceiling(out)
        return 0
    if args.set is None:
        ap.error("name a set, or give --ceiling")
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
