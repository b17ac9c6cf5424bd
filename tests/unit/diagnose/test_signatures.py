"""Every signature catalogue entry against its own message text, real pastes, and hostile lines.

* Each entry's ``examples`` (the message as the program prints it, quoted from the source it
  cites) are recognised by the index as that entry (or, for a general entry, by a more
  specific one; at least one example must come back to the entry itself, so no entry is dead).
* Each real paste under ``tests/fixtures/signatures/<program>/<case>/`` (``input.txt`` verbatim,
  ``meta.yaml`` with ``source`` and ``expect``) has a line recognised by every expected entry.
* Every pattern stays fast on 20,000-character lines made of the characters its examples use
  (a pattern with nested quantifiers would take seconds: this is what catches it).
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
import yaml

from aifabric.checks.diagnose.signatures import (
    Signature,
    SignatureIndex,
    all_catalogues,
    all_causes,
    signature_by_id,
    signature_index,
)

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "signatures"
ENTRIES = [(c.program, e) for c in all_catalogues() for e in c.entries]
PASTES = sorted(p.parent for p in FIX.glob("*/*/meta.yaml"))


def test_catalogues_load_with_unique_ids_and_known_causes() -> None:
    ids = [e.id for _, e in ENTRIES]
    assert len(ids) == len(set(ids))
    assert {e.cause for _, e in ENTRIES} <= set(all_causes())
    assert len(all_catalogues()) >= 1


@pytest.mark.parametrize("entry", [e for _, e in ENTRIES], ids=[e.id for _, e in ENTRIES])
def test_examples_are_recognised(entry: object) -> None:
    assert isinstance(entry, Signature)
    index = signature_index()
    winners = []
    for ex in entry.examples:
        hit = index.match(ex)
        assert hit is not None, f"{entry.id}: example not recognised: {ex!r}"
        winners.append(hit.signature.id)
    assert entry.id in winners, f"{entry.id}: every example is taken by {winners}"


@pytest.mark.parametrize("entry", [e for _, e in ENTRIES], ids=[e.id for _, e in ENTRIES])
def test_patterns_are_linear_on_long_lines(entry: object) -> None:
    assert isinstance(entry, Signature)
    rx = entry.regex()
    chars = sorted(set("".join(entry.examples)))
    lines = [c * 20_000 for c in chars[:12]]
    lines += [(ex + " ") * (20_000 // (len(ex) + 1)) for ex in entry.examples[:2]]
    lines += [ex[: len(ex) // 2] + "a " * 10_000 for ex in entry.examples[:2]]
    start = time.perf_counter()
    for line in lines:
        rx.search(line)
    assert time.perf_counter() - start < 0.5, f"{entry.id}: pattern is slow on long lines"


def test_sources_are_public() -> None:
    for _, e in ENTRIES:
        link = e.source.link()
        assert link.startswith("https://"), e.id
        for url in e.real:
            assert url.startswith("https://"), e.id


@pytest.mark.parametrize("case", PASTES, ids=[f"{p.parent.name}/{p.name}" for p in PASTES])
def test_real_pastes_are_recognised(case: Path) -> None:
    meta = yaml.safe_load((case / "meta.yaml").read_text(encoding="utf-8"))
    assert meta.get("source"), f"{case}: meta.yaml needs source"
    text = next(p for p in case.iterdir() if p.name.startswith("input")).read_text(
        encoding="utf-8", errors="replace"
    )
    found = {hit.signature.id for _, hit in signature_index().scan(text.splitlines())}
    for want in meta.get("expect", []):
        assert want in signature_by_id(), f"{case}: unknown entry {want}"
        assert want in found, f"{case}: {want} not recognised; found {sorted(found)}"


def test_most_specific_entry_wins_and_benign_entries_exist() -> None:
    index = SignatureIndex(all_catalogues())
    # the most specific pattern among those that match wins (literal text it requires)
    for _, e in ENTRIES:
        for ex in e.examples:
            hit = index.match(ex)
            assert hit is not None
            assert hit.signature.specificity() >= e.specificity() or not re.search(
                e.pattern, ex
            )
    assert any(e.severity == "benign" for _, e in ENTRIES)
