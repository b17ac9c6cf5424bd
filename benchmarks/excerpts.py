"""Recognition of real captures when they are pasted the way users paste them: ``python
benchmarks/excerpts.py [--list] [--variant NAME] [--kind KIND]``.

The frozen capture rounds (benchmarks/captures/README.md) showed that most misses are not
unknown tools but known tools pasted partially: a window from the middle of a long output
(no header), the tail of a log, a ``| grep`` excerpt, lines indented four spaces (a markdown
code block without a fence), lines quoted with ``> `` in a reply, or every line prefixed with a
host name by ``pdsh``/``clush``. Each variant is read as a file is read (bytes decoded by
:func:`decode_capture`). This benchmark takes every real capture we may develop on (the
parser fixtures ``tests/fixtures/evidence/<kind>/<case>/input.*`` and the development capture
sets ``benchmarks/captures/dev*``), derives those variants from each **deterministically**
(no randomness: the same variants every run), and counts how many are still parsed as their
kind with at least one record, per variant.

A variant is only counted when it keeps enough of the capture to be recognisable by a person:
at least three non-blank lines, at least one of which is not a header of the original (a line
holding a digit, ``:`` or ``=``). Frozen capture sets are never read here.

This is a benchmark, not a test: its figures are recorded in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import yaml

from aifabric.errors import InputError
from aifabric.evidence.base import decode_capture
from aifabric.evidence.paste import parse_paste

ROOT = Path(__file__).resolve().parents[1]
_WORD = re.compile(r"[A-Za-z_][A-Za-z_]{3,}")
_DATA = re.compile(r"[\d:=]")


def _nonblank(lines: list[str]) -> list[str]:
    return [x for x in lines if x.strip()]


def window(lines: list[str]) -> list[str]:
    """The middle half: drop the first and the last quarter (headers go)."""
    n = len(lines)
    return lines[n // 4 : n - n // 4]


def tail(lines: list[str]) -> list[str]:
    """The second half (``tail``, or a log scrolled past its start)."""
    return lines[len(lines) // 2 :]


def grep(lines: list[str]) -> list[str]:
    """``| grep WORD`` for the word that occurs on between a fifth and half of the lines, the
    most frequent such word (a counter family, a field name); ties by first occurrence."""
    body = _nonblank(lines)
    if len(body) < 6:
        return []
    df: Counter[str] = Counter()
    for x in body:
        df.update({w.lower() for w in _WORD.findall(x)})
    lo, hi = max(2, len(body) // 5), len(body) // 2
    cands = [w for w, c in df.items() if lo <= c <= hi]
    if not cands:
        return []
    word = max(cands, key=lambda w: df[w])
    return [x for x in body if word in x.lower()]


def indented(lines: list[str]) -> list[str]:
    """A markdown code block made by indentation (four spaces), no fence."""
    return [f"    {x}" if x.strip() else x for x in lines]


def quoted(lines: list[str]) -> list[str]:
    """Quoted in a reply (``> ``)."""
    return [f"> {x}" for x in lines]


def pdsh(lines: list[str]) -> list[str]:
    """Every line prefixed by ``pdsh``/``clush``: ``node07: ``."""
    return [f"node07: {x}" for x in lines if x.strip()]


VARIANTS: dict[str, Callable[[list[str]], list[str]]] = {
    "whole": lambda lines: lines,
    "window": window,
    "tail": tail,
    "grep": grep,
    "indented": indented,
    "quoted": quoted,
    "pdsh": pdsh,
}


CUTS = ("window", "tail", "grep")
"""Variants that cut lines out (not applied to JSON documents)."""


def _cases() -> Iterator[tuple[str, str, Path]]:
    """(kind, name, path) of every capture we may develop on."""
    for inp in sorted((ROOT / "tests" / "fixtures" / "evidence").glob("*/*/input.*")):
        yield inp.parent.parent.name, f"fixture:{inp.parent.parent.name}/{inp.parent.name}", inp
    for meta in sorted((ROOT / "benchmarks" / "captures").glob("dev*/*/meta.yaml")):
        kind = str((yaml.safe_load(meta.read_text(encoding="utf-8")) or {}).get("kind"))
        yield kind, f"{meta.parent.parent.name}:{meta.parent.name}", meta.parent / "input.txt"


def _recognised(text: str, kind: str) -> tuple[bool, str]:
    parts = parse_paste(text)
    ok = any(p.kind == kind and p.result is not None and p.result.records for p in parts)
    got = ", ".join(f"{p.kind}:{len(p.result.records) if p.result else 0}" for p in parts)
    return ok, got or "nothing"


def _countable(variant: list[str]) -> bool:
    body = _nonblank(variant)
    return len(body) >= 3 and any(_DATA.search(x) for x in body)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="print every miss")
    ap.add_argument("--variant", choices=sorted(VARIANTS), action="append")
    ap.add_argument("--kind", action="append", help="only captures of this kind")
    ap.add_argument("--show", metavar="NAME", help="print the variants of one capture (by name)")
    args = ap.parse_args(argv)
    names = args.variant or list(VARIANTS)
    ok: Counter[str] = Counter()
    total: Counter[str] = Counter()
    by_kind: Counter[tuple[str, str]] = Counter()
    for kind, name, path in _cases():
        if args.kind and kind not in args.kind:
            continue
        try:
            text = decode_capture(path.read_bytes(), str(path))
        except InputError:
            continue
        lines = text.splitlines()
        if args.show and args.show != name:
            continue
        if not _recognised(text, kind)[0]:
            continue  # a whole capture not recognised is recognition.py's figure, not ours
        json_doc = text.lstrip()[:1] in ("{", "[")
        for v in names:
            if json_doc and v in CUTS:
                continue  # a cut JSON document is not JSON: config excerpts are whole tables
            var = VARIANTS[v](lines)
            if not _countable(var):
                continue
            total[v] += 1
            hit, got = _recognised(decode_capture(("\n".join(var) + "\n").encode()), kind)
            if args.show:
                print(f"--- {v}: {'ok' if hit else 'MISS'} ({got})", *var[:40], sep="\n")
            if hit:
                ok[v] += 1
                continue
            by_kind[(v, kind)] += 1
            if args.list:
                print(f"MISS {v:<8} {name:<70} {kind:<22} read as {got}")
    print("| variant | recognised | of | share | most missed kinds |")
    print("|---|---:|---:|---:|---|")
    for v in names:
        worst = sorted(((n, k) for (vv, k), n in by_kind.items() if vv == v), reverse=True)[:4]
        kinds = ", ".join(f"{k} {n}" for n, k in worst)
        share = 100 * ok[v] / max(total[v], 1)
        print(f"| {v} | {ok[v]} | {total[v]} | {share:.1f}% | {kinds} |")
    n_ok, n_all = (
        sum(ok[v] for v in names if v != "whole"),
        sum(total[v] for v in names if v != "whole"),
    )
    print(f"all variants but whole: {n_ok}/{n_all} ({100 * n_ok / max(n_all, 1):.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
