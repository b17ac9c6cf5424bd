"""Recognition of real pasted error and warning lines by the signature catalogues.

Usage::

    python benchmarks/line_recognition.py frozen1          # benchmarks/lines/frozen1/lines.tsv
    python benchmarks/line_recognition.py frozen1 --list   # every line and what took it
    python benchmarks/line_recognition.py frozen1 --json

A set is a file of real lines users pasted in public threads (``URL<TAB>program<TAB>line``),
collected by helpers who did not read the catalogues, from threads the project had not used
(benchmarks/lines/README.md). Each line is read the way ``aifabric diagnose`` reads a line of
a log (the engine's own line scan: the catalogue index, the errno-number spelling, the
error-looking test) and falls in one of four classes:

- **recognised**: an entry of a catalogue explains it (its severity counted separately; a
  *catch-all* entry, such as ``nccl.warn``, only says which program printed it; a line of
  250 characters or more can hold several messages, and it counts as recognised when any
  entry other than a catch-all takes part of it, as diagnose reports every one; before
  2026-12-06's third set the first hit alone was counted),
- **reported**: no entry explains it but it reads like an error, so diagnose reports it as "not
  recognised" (with a nearest-message suggestion where one is close),
- **silent**: neither: diagnose would say nothing about it.

Figures per program (the collector's guess of who printed the line) and in total. This is a
benchmark, not a test: docs/benchmarks.md records it with the commit it was measured on.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

from aifabric.checks.diagnose.engine import _scan_line
from aifabric.checks.diagnose.signatures import signature_index

ROOT = Path(__file__).resolve().parents[1]


def classify(line: str) -> tuple[str, str | None]:
    """(class, entry id) of one pasted line: ``recognised:<severity>``, ``catch-all``,
    ``reported`` or ``silent``."""
    index = signature_index()
    hits, errorish = _scan_line(line, index)
    if hits:
        # a long line may hold several messages (a wrapper and the message it wraps): diagnose
        # reports every hit, so the line is recognised when any hit is not a catch-all
        sig = next((h.signature for h in hits if not h.signature.catch_all), hits[0].signature)
        return ("catch-all" if sig.catch_all else f"recognised:{sig.severity}"), sig.id
    return ("reported" if errorish else "silent"), None


def load(name: str) -> list[tuple[str, str, str]]:
    path = ROOT / "benchmarks" / "lines" / name / "lines.tsv"
    rows: list[tuple[str, str, str]] = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        parts = raw.split("\t", 2)
        if len(parts) != 3 or not parts[2].strip():
            print(f"{path.name}:{n}: skipped, expected URL<TAB>program<TAB>line", file=sys.stderr)
            continue
        rows.append((parts[0], parts[1].strip().lower(), parts[2]))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("set", help="a directory under benchmarks/lines/")
    ap.add_argument("--list", action="store_true", help="print every line and its class")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rows = load(args.set)
    by_program: dict[str, Counter[str]] = defaultdict(Counter)
    total: Counter[str] = Counter()
    listed = []
    for url, program, line in rows:
        cls, sid = classify(line)
        group = "recognised" if cls.startswith("recognised") else cls
        by_program[program][group] += 1
        total[group] += 1
        if cls != group:  # recognised:<severity>, counted apart for the severity line
            total[cls] += 1
        listed.append({"url": url, "program": program, "class": cls, "entry": sid, "line": line})
    threads = len({url for url, _, _ in rows})
    n = len(rows)
    if args.json:
        print(json.dumps({"lines": n, "threads": threads, "total": dict(total),
                          "by_program": {p: dict(c) for p, c in by_program.items()},
                          "rows": listed}, indent=1))  # fmt: skip
        return 0
    if args.list:
        for r in listed:
            print(f"{r['class']:<20} {r['entry'] or '-':<48} {r['line'][:150]}")
    print(f"{args.set}: {n} lines from {threads} threads")
    print("| program | lines | recognised | catch-all | reported | silent |")
    print("|---|---:|---:|---:|---:|---:|")
    for program, c in sorted(by_program.items(), key=lambda kv: -sum(kv[1].values())):
        k = sum(c.values())
        print(f"| {program} | {k} | {c['recognised']} | {c['catch-all']} | {c['reported']} | "
              f"{c['silent']} |")  # fmt: skip
    rec = total["recognised"]
    print(f"| **all** | **{n}** | **{rec} ({100 * rec / max(n, 1):.1f}%)** | {total['catch-all']} "
          f"| {total['reported']} | {total['silent']} |")  # fmt: skip
    sev = {k.split(":", 1)[1]: v for k, v in total.items() if k.startswith("recognised:")}
    print("recognised by severity: " + ", ".join(f"{k} {v}" for k, v in sorted(sev.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
