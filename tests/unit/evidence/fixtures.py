"""Access to the real captured outputs under ``tests/fixtures/evidence/<kind>/<case>/``.

Each case directory holds the capture itself (``input.txt``, or ``input.json`` / ``input.yaml``
for structured kinds), byte for byte as found (possibly an excerpt: whole lines only, never
edited), and ``meta.yaml`` with at least ``source:`` (where the capture was found: an issue URL,
a documentation page, a mailing-list post) and optionally ``notes:`` and ``warnings:`` (how many
parse warnings the capture legitimately produces; default 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

from aifabric.evidence import ParseResult, decode_capture, parse_text

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "evidence"


@dataclass(frozen=True)
class Case:
    kind: str
    name: str
    path: Path
    meta: dict[str, Any]

    @property
    def id(self) -> str:
        return f"{self.kind}/{self.name}"

    def text(self) -> str:
        return decode_capture(self.path.read_bytes(), str(self.path))

    def parse(self, kind: str | None = None) -> ParseResult:
        return parse_text(self.text(), kind or self.kind, str(self.path))


def all_cases() -> list[Case]:
    """Every fixture case, sorted by kind then name."""
    cases = []
    for meta_path in sorted(FIXTURES.glob("*/*/meta.yaml")):
        case_dir = meta_path.parent
        inputs = sorted(p for p in case_dir.iterdir() if p.name.startswith("input."))
        assert len(inputs) == 1, f"{case_dir}: needs exactly one input.* file"
        meta = yaml.safe_load(meta_path.read_text(encoding="utf-8")) or {}
        cases.append(Case(case_dir.parent.name, case_dir.name, inputs[0], meta))
    return cases


def case(kind: str, name: str) -> Case:
    """One fixture case by kind and name."""
    for c in all_cases():
        if c.kind == kind and c.name == name:
            return c
    raise KeyError(f"no fixture {kind}/{name} under {FIXTURES}")


def load(kind: str, name: str) -> ParseResult:
    """Parse fixture ``kind/name`` as its kind."""
    return case(kind, name).parse()


GARBAGE = "%%% garbled line %%%"
"""A line no parser can read: inserted into real captures to test that parsers lose nothing."""


def without_lines(obj: Any) -> Any:
    """A record's JSON with its line numbers dropped, to compare parses of shifted text."""
    if isinstance(obj, dict):
        return {k: without_lines(v) for k, v in obj.items() if k not in {"line", "end_line"}}
    if isinstance(obj, list):
        return [without_lines(v) for v in obj]
    return obj


def assert_garbage_line_is_one_warning(kind: str, name: str, after: int) -> None:
    """Insert :data:`GARBAGE` after line ``after`` of fixture ``kind/name``: the parse must gain
    exactly one warning, at that line, and keep every record it had (issue 3, "Must show")."""
    c = case(kind, name)
    before = parse_text(c.text(), kind)
    lines = c.text().splitlines()
    lines.insert(after, GARBAGE)
    res = parse_text("\n".join(lines) + "\n", kind)
    new = [w for w in res.warnings if w.text == GARBAGE]
    assert len(new) == 1, [str(w) for w in res.warnings]
    assert new[0].line == after + 1
    assert len(res.warnings) == len(before.warnings) + 1
    assert without_lines([r.to_json() for r in res.records]) == without_lines(
        [r.to_json() for r in before.records]
    )


GARBAGE_LINES = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters=":\n\r"),
    max_size=40,
).map(lambda s: f"%{s}%")
"""Hypothesis lines no parser can read (``%...%``, no colon): :func:`draw_garbage_insertion`."""


def draw_garbage_insertion(data: Any, cases: list[Case], parse: Any) -> None:
    """Insert a drawn garbage line at a drawn position of a drawn real capture: the parse (by
    ``parse(kind)``, the parser of the case's kind) must gain exactly one warning and keep every
    record."""
    c = data.draw(st.sampled_from(cases))
    lines = c.text().splitlines()
    pos = data.draw(st.integers(0, len(lines)))
    junk = data.draw(GARBAGE_LINES)
    fn = parse(c.kind)
    before = fn("\n".join(lines))
    after = fn("\n".join([*lines[:pos], junk, *lines[pos:]]))
    assert len(after.warnings) == len(before.warnings) + 1
    assert without_lines([r.to_json() for r in after.records]) == without_lines(
        [r.to_json() for r in before.records]
    )
