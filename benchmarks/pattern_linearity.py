"""Worst search time of every catalogue entry's pattern on 100 KB lines.

Usage::

    python benchmarks/pattern_linearity.py            # entries over 0.05 s, slowest first
    python benchmarks/pattern_linearity.py --limit 0.02

diagnose cuts a line at 4,096 characters (engine.MAX_LINE_SCAN), but a pattern whose time grows
with the square of the line length (an unanchored ``[\\w./-]{1,200}`` at its start, nested
quantifiers) still costs that much per line on a fleet's logs, and the catalogues are written by
many hands. Each entry's pattern is searched in lines of 100,000 characters: one per character of
its examples (``////...``, ``aaaa...``), and its first two examples, whole and halved, repeated
to that length. The figure is the worst of those searches. This is a benchmark, not a test: it
is run after catalogue changes and its slow entries are fixed (start the pattern with a
look-behind or a literal); docs/benchmarks.md records the result with the commit.
"""

from __future__ import annotations

import argparse
import re
import time

from aifabric.checks.diagnose.signatures import all_catalogues

LINE = 100_000


def worst_seconds(pattern_examples: tuple[str, ...], rx: re.Pattern[str]) -> float:
    """The slowest search of ``rx`` in the probe lines built from the examples."""
    chars = sorted(set("".join(pattern_examples)))
    lines = [ch * LINE for ch in chars]
    for ex in pattern_examples[:2]:
        lines.append((ex + " ") * (LINE // (len(ex) + 1)))
        half = ex[: len(ex) // 2]
        if half:
            lines.append(half * (LINE // len(half)))
    worst = 0.0
    for line in lines:
        start = time.perf_counter()
        rx.search(line)
        worst = max(worst, time.perf_counter() - start)
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--limit", type=float, default=0.05, help="report entries slower than this (s)"
    )
    args = parser.parse_args()
    slow: list[tuple[float, str]] = []
    n = 0
    for catalogue in all_catalogues():
        for entry in catalogue.entries:
            n += 1
            worst = worst_seconds(entry.examples, entry.regex())
            if worst > args.limit:
                slow.append((worst, entry.id))
    print(f"{n} entries searched on {LINE:,}-character lines; {len(slow)} over {args.limit} s")
    for worst, sid in sorted(slow, reverse=True):
        print(f"  {worst:.3f} s  {sid}")


if __name__ == "__main__":
    main()
