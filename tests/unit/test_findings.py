"""The Finding shape: structured evidence items from the checks to every output format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from aifabric.checks.diagnose import diagnose, load_evidence
from aifabric.findings import FABRIC_SOURCE, EvidenceItem, Finding, with_sources
from aifabric.report.junit import findings_to_junit
from tests.conftest import run_cli

ROOT = Path(__file__).resolve().parents[2]
RETRY = ROOT / "tests/fixtures/diagnose/retry-exceeded-ipv6-gid/nccl.log"


def _finding(*evidence: EvidenceItem | str) -> Finding:
    return Finding(
        check="x.y",
        severity="warning",
        target="leaf1",
        message="m",
        evidence=list(evidence),  # type: ignore[arg-type]  # strings are coerced
        explanation="e",
        fix="f",
    )


def test_item_text_forms() -> None:
    assert str(EvidenceItem(source="a.cfg", line=3, text="mtu 1500")) == "a.cfg line 3: mtu 1500"
    assert str(EvidenceItem(source="a.cfg", text="mtu 1500")) == "a.cfg: mtu 1500"
    assert str(EvidenceItem(source="a.cfg", line=3, text="")) == "a.cfg line 3"
    assert str(EvidenceItem(text="leaf1: down/up = 3")) == "leaf1: down/up = 3"


def test_line_is_one_based() -> None:
    with pytest.raises(ValidationError):
        EvidenceItem(source="a.cfg", line=0, text="x")


def test_plain_strings_are_computed_statements() -> None:
    f = _finding("leaf1: down/up = 3")
    assert f.evidence == [EvidenceItem(text="leaf1: down/up = 3")]
    assert f.model_dump()["evidence"] == [
        {"source": None, "line": None, "text": "leaf1: down/up = 3", "subject": None}
    ]


def test_json_round_trip() -> None:
    f = _finding(EvidenceItem(source="c/leaf1.json", line=9, text="x", subject="leaf1"), "note")
    back = Finding.model_validate(json.loads(f.model_dump_json()))
    assert back == f


def test_with_sources_replaces_the_fabric_placeholder_only() -> None:
    f = _finding(
        EvidenceItem(source=FABRIC_SOURCE, text="leaf1 mtu_bytes 1500", subject="leaf1"),
        EvidenceItem(source="configs/leaf1.json", line=4, text="mtu 1500"),
    )
    (g,) = with_sources([f], {FABRIC_SOURCE: "fabrics/prod.yaml"})
    assert [e.source for e in g.evidence] == ["fabrics/prod.yaml", "configs/leaf1.json"]
    assert g.evidence[0].text == "leaf1 mtu_bytes 1500"


@given(
    source=st.text(max_size=20) | st.none(),
    line=st.integers(1, 10**7) | st.none(),
    text=st.text(max_size=60),
)
def test_junit_never_loses_an_item(source: str | None, line: int | None, text: str) -> None:
    item = EvidenceItem(source=source, line=line, text=text)
    xml = findings_to_junit([_finding(item)], [], suite="s")
    assert "evidence:" in xml


def test_diagnose_quotes_file_line_and_subject() -> None:
    """The first line of this real NCCL log (a host-prefixed WARN) is the evidence: its file,
    line 1, its text, and the host the prefix names."""
    res = diagnose(load_evidence([RETRY]))
    first = res.findings[0].evidence[0]
    assert first.source == str(RETRY)
    assert first.line == 1
    assert first.subject == "kp-ddp-worker-0"
    assert first.text == RETRY.read_text().splitlines()[0].strip()[:160]


def test_verify_json_resolves_the_fabric_file() -> None:
    """A finding on the intent alone (a host outside the plane's single subnet, S19) points at
    the fabric file given on the command line, not at a placeholder."""
    fab = ROOT / "tests/fixtures/verify/_fabrics/subnet-stray.yaml"
    res = run_cli("verify", str(fab), "--format", "json")
    doc = res.json()
    assert doc["format_version"] == 2
    (stray,) = [f for f in doc["findings"] if f["target"] == "srv04:nic0"]
    item = stray["evidence"][0]
    assert item["source"] == fab.as_posix()
    assert item["subject"] == "srv04:nic0"
    assert FABRIC_SOURCE not in {e["source"] for f in doc["findings"] for e in f["evidence"]}
