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


def main() -> int:
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
