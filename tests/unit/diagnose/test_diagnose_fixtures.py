"""Every diagnose fixture under tests/fixtures/diagnose/<case>/: real captures (each with its
source), the rule that must be ranked first, rules that must (not) fire, healthy cases.

``case.yaml``: ``inputs`` (paths relative to the case: files or bundle directories),
``sources`` (every input file -> where it comes from), optional ``first`` (the rule id ranked
first), ``expect`` (rule ids that must fire, with optional ``target``/``message`` substrings),
``absent`` (rule ids that must not fire), ``healthy: true`` (no error finding at all),
optional ``fabric`` (a fabric or design file in the case, given as ``--fabric``), ``assembled:
true`` where the files are real captures from different jobs put together (said in a comment).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from aifabric.catalog import builtin_catalog
from aifabric.checks.diagnose import all_rules, diagnose, load_evidence
from aifabric.design import load_fabric
from aifabric.findings import Finding

ROOT = Path(__file__).resolve().parents[2] / "fixtures" / "diagnose"
CASES = sorted(p.parent for p in ROOT.glob("*/case.yaml"))


def _case(path: Path) -> dict[str, Any]:
    data = yaml.safe_load((path / "case.yaml").read_text())
    assert isinstance(data, dict)
    return data


def _run(case_dir: Path) -> list[Finding]:
    case = _case(case_dir)
    catalog = builtin_catalog() if "fabric" in case else None
    fabric = load_fabric(case_dir / case["fabric"], catalog) if catalog is not None else None
    ev = load_evidence([case_dir / p for p in case["inputs"]], fabric=fabric, catalog=catalog)
    return diagnose(ev).findings


@pytest.mark.parametrize("case_dir", CASES, ids=[c.name for c in CASES])
def test_diagnose_fixture(case_dir: Path) -> None:
    case = _case(case_dir)
    findings = _run(case_dir)
    shown = "\n".join(f"{f.severity} {f.check} [{f.target}] {f.message}" for f in findings)
    if "first" in case:
        assert findings and findings[0].check == case["first"], f"ranked:\n{shown}"
    for want in case.get("expect", []):
        assert any(
            f.check == want["check"]
            and want.get("target", "") in f.target
            and want.get("message", "") in f.message
            for f in findings
        ), f"missing {want}\n{shown}"
    for unwanted in case.get("absent", []):
        assert not [f for f in findings if f.check == unwanted], f"unexpected {unwanted}\n{shown}"
    if case.get("healthy"):
        # no rule fires on a healthy capture (info notes, e.g. a single-rank run, may)
        assert not [f for f in findings if f.severity != "info"], shown
    assert "first" in case or case.get("expect") or case.get("healthy") or case.get("absent")


@pytest.mark.parametrize("case_dir", CASES, ids=[c.name for c in CASES])
def test_every_input_has_a_source(case_dir: Path) -> None:
    case = _case(case_dir)
    sources = case.get("sources", {})
    for rel in case["inputs"]:
        path = case_dir / rel
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for f in files:
            key = str(f.relative_to(case_dir))
            assert sources.get(key), f"{case_dir.name}: {key} has no source"


def test_every_rule_has_a_triggering_and_a_healthy_case() -> None:
    texts = {c.name: (c / "case.yaml").read_text() for c in CASES}
    for rule in all_rules():
        triggering = [
            n for n, t in texts.items() if f"first: {rule.id}" in t or f"check: {rule.id}" in t
        ]
        assert triggering, f"{rule.id} has no triggering fixture"
    assert any(_case(c).get("healthy") for c in CASES)
