"""How many real captures are recognised and parsed: ``python benchmarks/recognition.py``.

Three sets, each read the way ``aifabric diagnose`` reads a file (:func:`parse_paste`: prompts,
fences, prefixes, several tools in one paste):

* ``evidence``: every parser fixture (tests/fixtures/evidence/<kind>/<case>/input.*): right when
  some part of the file is parsed as <kind> with at least one record;
* ``diagnose``: every capture of the diagnose fixtures: right when some part is parsed;
* ``incidents-dev``: every input of the development incidents (benchmarks/incidents/dev): these
  are pastes from issue threads, many of them launcher or application output that no parser
  reads by design, so the share parsed and the share with a catalogue hit are both shown.

The parser fixtures were collected while the parsers were written, so the first two sets
measure coverage of known formats, not generalisation; the incident figures are the honest ones.

``python benchmarks/recognition.py captures SET`` measures one set of
``benchmarks/captures/SET/<case>/`` (``input.txt`` and ``meta.yaml`` naming the ``kind`` the
capture is): real pastes of supported tools collected after the parsers were written, split
into a development and a frozen half (benchmarks/captures/README.md). A capture is recognised
when some part of it is parsed as its kind with at least one record; ``--list`` prints each
miss with what it was read as.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from aifabric.checks.diagnose.signatures import signature_index
from aifabric.errors import InputError
from aifabric.evidence.base import decode_capture
from aifabric.evidence.paste import parse_paste

ROOT = Path(__file__).resolve().parents[1]
SKIP = {"meta.yaml", "case.yaml", "incident.yaml", "README.md", "SOURCES.md"}


def _parts(path: Path) -> list[tuple[str | None, int]]:
    try:
        text = decode_capture(path.read_bytes(), str(path))
    except InputError:
        return []
    return [(p.kind, len(p.result.records) if p.result else 0) for p in parse_paste(text)]


def captures(name: str, listing: bool) -> int:
    """Recognition of one set of collected captures (module doc)."""
    import yaml  # noqa: PLC0415

    folder = ROOT / "benchmarks" / "captures" / name
    cases = sorted(p.parent for p in folder.glob("*/meta.yaml"))
    ok = 0
    by_kind: Counter[str] = Counter()
    missed: Counter[str] = Counter()
    for case in cases:
        meta = yaml.safe_load((case / "meta.yaml").read_text(encoding="utf-8")) or {}
        kind = str(meta.get("kind"))
        parts = _parts(case / "input.txt")
        by_kind[kind] += 1
        if any(k == kind and n > 0 for k, n in parts):
            ok += 1
            continue
        missed[kind] += 1
        if listing:
            got = ", ".join(f"{k}:{n}" for k, n in parts) or "nothing"
            print(f"MISS {case.name:<56} {kind:<22} read as {got}")
    total = len(cases)
    misses = ", ".join(f"{k} {n}/{by_kind[k]}" for k, n in missed.most_common()) or "none"
    share = 100 * ok / max(total, 1)
    print(f"captures/{name}: {ok}/{total} recognised as their kind ({share:.1f}%); "
          f"missed by kind: {misses}")  # fmt: skip
    return 0


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "captures":
        return captures(sys.argv[2], "--list" in sys.argv)
    rows: list[tuple[str, int, int, str]] = []
    ev_total = ev_ok = 0
    misses: Counter[str] = Counter()
    for inp in sorted((ROOT / "tests" / "fixtures" / "evidence").glob("*/*/input.*")):
        kind = inp.parent.parent.name
        ev_total += 1
        if any(k == kind and n > 0 for k, n in _parts(inp)):
            ev_ok += 1
        else:
            misses[kind] += 1
    rows.append(("evidence fixtures (own kind)", ev_ok, ev_total, ", ".join(
        f"{k} {n}" for k, n in misses.most_common()
    )))  # fmt: skip
    d_total = d_ok = 0
    for f in sorted((ROOT / "tests" / "fixtures" / "diagnose").rglob("*")):
        if f.is_file() and f.name not in SKIP and f.suffix not in (".yaml", ".json"):
            d_total += 1
            d_ok += any(k is not None for k, _ in _parts(f))
    rows.append(("diagnose fixture captures (any kind)", d_ok, d_total, ""))
    index = signature_index()
    i_total = i_parsed = i_sig = 0
    for f in sorted((ROOT / "benchmarks" / "incidents" / "dev").rglob("input*")):
        i_total += 1
        i_parsed += any(k is not None for k, _ in _parts(f))
        text = f.read_text(encoding="utf-8", errors="replace")
        i_sig += any(True for _ in index.scan(text.splitlines()))
    rows.append(("incident inputs (dev): parsed by a parser", i_parsed, i_total, ""))
    rows.append(("incident inputs (dev): a catalogue line recognised", i_sig, i_total, ""))
    print("| set | recognised | of | share | misses |")
    print("|---|---:|---:|---:|---|")
    for name, ok, total, note in rows:
        print(f"| {name} | {ok} | {total} | {100 * ok / max(total, 1):.1f}% | {note} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
