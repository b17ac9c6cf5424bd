"""The nearest-message suggestion measured on real lines no catalogue recognises.

Usage::

    python benchmarks/suggestion_real.py          # dev and frozen line sets, one table
    python benchmarks/suggestion_real.py --json

``benchmarks/nearest_loo.py`` calibrates the suggestion on catalogued messages left out; this
script measures it where users meet it: real lines from the line sets (benchmarks/lines/) that
diagnose reports as "not recognised", each labelled with the cause its own words point to, or
``none``, by independent readers (``benchmarks/lines/causes.tsv``). A line the catalogues have
learnt to recognise since the labels were made is left out (it is no longer a suggestion's to
read). Printed per half (dev: lines catalogue work may read; frozen: never read):

* **suggested**: lines that got a suggestion, split into **right** (the label's class),
  **on a line naming no cause** (label ``none``: the suggestion claims more than the line says)
  and **wrong class**;
* **recall**: right suggestions over the lines whose label names a cause.

This is a benchmark, not a test: docs/benchmarks.md records it with the commit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from aifabric.checks.diagnose.nearest import nearest_index
from line_recognition import classify, load  # type: ignore[import-not-found]

LINES = Path(__file__).resolve().parent / "lines"


def labels() -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    for raw in (LINES / "causes.tsv").read_text(encoding="utf-8").splitlines():
        if raw.strip() and not raw.startswith("#"):
            cells = raw.split("\t")
            if len(cells) != 6:
                raise SystemExit(f"causes.tsv: expected 6 columns: {raw!r}")
            out[(cells[0], cells[1])] = cells[5]
    return out


def measure() -> dict[str, dict[str, int]]:
    lab = labels()
    ix = nearest_index()
    out: dict[str, dict[str, int]] = {}
    for name in sorted({s for s, _ in lab}):
        half = out.setdefault("frozen" if name.startswith("frozen") else "dev", Counter())
        for _url, _program, line in load(name):
            key = (name, hashlib.sha1(line.encode("utf-8")).hexdigest()[:12])
            if key not in lab:
                continue
            if classify(line)[0] != "reported":
                half["now recognised"] += 1
                continue
            want = lab[key]
            half["lines"] += 1
            half["with a cause"] += want != "none"
            got = ix.suggest(line)
            if got is None:
                continue
            half["suggested"] += 1
            if got.cause == want:
                half["right"] += 1
            elif want == "none":
                half["on a line naming no cause"] += 1
            else:
                half["wrong class"] += 1
    return {k: dict(v) for k, v in out.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    got: dict[str, Any] = measure()
    if args.json:
        json.dump(got, sys.stdout, indent=2)
        print()
        return 0
    for half, c in got.items():
        s, r = c.get("suggested", 0), c.get("right", 0)
        print(
            f"{half}: {c.get('lines', 0)} unrecognised lines ({c.get('with a cause', 0)} naming a"
            f" cause; {c.get('now recognised', 0)} recognised since labelled): suggested {s},"
            f" right {r} ({100 * r / max(s, 1):.0f}%), on a line naming no cause"
            f" {c.get('on a line naming no cause', 0)}, wrong class {c.get('wrong class', 0)};"
            f" recall {r}/{c.get('with a cause', 0)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
