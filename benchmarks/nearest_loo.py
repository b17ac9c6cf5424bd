"""Calibration of the nearest-message suggestion (``aifabric.checks.diagnose.nearest``).

Usage::

    python benchmarks/nearest_loo.py            # the table for the shipped constants
    python benchmarks/nearest_loo.py --json

Every catalogue entry of severity error or warning is taken as a message the catalogues do not
hold: its first example is classified by :meth:`NearestIndex.suggest` with the entry left out
("entry"), and with every entry of its program left out ("program": a program not catalogued).
Printed per mode: how many messages got a suggestion (coverage) and how many of those named the
entry's own cause (precision). This is a benchmark, not a test; docs/benchmarks.md records it.
"""

from __future__ import annotations

import argparse
import json
import sys

from aifabric.checks.diagnose.nearest import nearest_index
from aifabric.checks.diagnose.signatures import signature_by_id


def calibrate() -> dict[str, dict[str, float | int]]:
    ix = nearest_index()
    out: dict[str, dict[str, float | int]] = {}
    for mode in ("entry", "program"):
        asked = suggested = right = 0
        for i, nb in enumerate(ix.entries):
            if nb.severity == "info":
                continue
            sig = signature_by_id()[nb.id][0]
            skip = [
                (j == i) if mode == "entry" else (other.program == nb.program)
                for j, other in enumerate(ix.entries)
            ]
            asked += 1
            got = ix.suggest(sig.examples[0], skip=skip)
            if got is not None:
                suggested += 1
                right += got.cause == nb.cause
        out[mode] = {
            "messages": asked,
            "suggested": suggested,
            "right": right,
            "coverage": round(suggested / max(asked, 1), 3),
            "precision": round(right / max(suggested, 1), 3),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    got = calibrate()
    if args.json:
        json.dump(got, sys.stdout, indent=2)
        print()
        return 0
    for mode, r in got.items():
        print(
            f"left out: {mode:8} {r['suggested']}/{r['messages']} suggested "
            f"({r['coverage']:.0%}), {r['right']} right ({r['precision']:.0%} precision)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
