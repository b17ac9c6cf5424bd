"""The one answer shape (architecture.md): a :class:`Finding`.

verify, diagnose, design checks, probe and bench comparisons all return lists of findings; the
CLI table, the JSON output, JUnit and SARIF render this one shape (README, "Conventions").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "FABRIC_SOURCE",
    "SEVERITIES",
    "Alternative",
    "EvidenceItem",
    "EvidenceLike",
    "Finding",
    "Severity",
    "Summary",
    "Value",
    "as_evidence",
    "exit_code_for",
    "summarize",
    "with_sources",
]

FABRIC_SOURCE = "fabric file"
"""``EvidenceItem.source`` of what the fabric file (the intent) says; the CLI replaces it with
the file's path (:func:`with_sources`) when it knows it."""

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")

Scalar = str | int | float | bool | None
Value = Scalar | list[Scalar] | dict[str, Scalar]


class EvidenceItem(BaseModel):
    """One piece of evidence a finding rests on, as the user can find it again.

    ``source`` is the file (path as given) or command the text came from, ``None`` for a
    statement the check computed; ``line`` is the 1-based line in ``source`` (``None`` when the
    format has no lines or the item is computed); ``text`` is the quoted text (or the computed
    statement); ``subject`` is the host, device or rank the text is about, when known. Every
    output format (table, JSON, JUnit, SARIF) reads these fields; none parses ``text`` back.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str | None = None
    line: int | None = Field(default=None, ge=1)
    text: str
    subject: str | None = None

    def __str__(self) -> str:
        """``file line 12: text`` / ``file: text`` / ``text``, for tables and plain text."""
        if self.source is None:
            return self.text
        where = self.source if self.line is None else f"{self.source} line {self.line}"
        return f"{where}: {self.text}" if self.text else where


EvidenceLike = EvidenceItem | str
"""What checks hand in as evidence: an item, or a plain string (a computed statement)."""


def as_evidence(items: Iterable[EvidenceLike]) -> list[EvidenceItem]:
    """Evidence items of ``items``: a plain string becomes ``EvidenceItem(text=s)``."""
    return [EvidenceItem(text=i) if isinstance(i, str) else i for i in items]


class Alternative(BaseModel):
    """Another cause the same evidence can have (diagnose's differential, docs/diagnose.md).

    ``status``: ``supported`` when another finding of the same diagnosis names this cause,
    ``ruled out`` when a record of the input shows the state it needs is absent, else
    ``possible``; ``check`` says how to confirm or rule it out; ``because`` quotes what
    supported or ruled it out.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    cause: str
    status: Literal["supported", "possible", "ruled out"]
    check: str
    because: str | None = None


class Finding(BaseModel):
    """One result of a check: what was expected, what was found, why it matters, how to fix it.

    ``refs`` cites seed ids (``S1``..``S24``, anchors of ``docs/practices.md``), public URLs or
    documents in the repository;
    ``confidence`` is required for diagnose findings and optional elsewhere.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    check: str = Field(description="check id, e.g. design.nic-pcie-bandwidth")
    severity: Severity
    target: str = Field(description="what the finding is about: a device, port, link or group")
    message: str
    expected: Value = None
    actual: Value = None
    evidence: list[EvidenceItem] = Field(
        default_factory=list,
        description="what the finding rests on; a plain string is a computed statement",
    )
    explanation: str
    fix: str
    refs: list[str] = Field(default_factory=list)
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    cause: str | None = Field(
        default=None,
        description="diagnose: the cause class named (docs/diagnose.md, 'Cause classes')",
    )
    alternatives: list[Alternative] = Field(
        default_factory=list,
        description="diagnose: the other causes the same message can have, ranked",
    )

    @field_validator("evidence", mode="before")
    @classmethod
    def _statements(cls, value: object) -> object:
        """A plain string in ``evidence`` is a computed statement: ``{"text": s}``."""
        if isinstance(value, list | tuple):
            return [{"text": v} if isinstance(v, str) else v for v in value]
        return value


class Summary(BaseModel):
    """Counts of findings by severity (the ``summary`` key of JSON output)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    error: int = 0
    warning: int = 0
    info: int = 0
    total: int = 0


def summarize(findings: Iterable[Finding]) -> Summary:
    """Count findings by severity."""
    counts = {"error": 0, "warning": 0, "info": 0}
    for finding in findings:
        counts[finding.severity] += 1
    return Summary(**counts, total=sum(counts.values()))


def exit_code_for(findings: Iterable[Finding]) -> int:
    """Exit code of a run: 1 when any finding has severity ``error``, else 0."""
    return 1 if any(f.severity == "error" for f in findings) else 0


def with_sources(findings: Iterable[Finding], sources: dict[str, str]) -> list[Finding]:
    """``findings`` with evidence ``source`` names replaced by ``sources`` (e.g. the
    :data:`FABRIC_SOURCE` placeholder by the fabric file's path)."""

    def renamed(e: EvidenceItem) -> EvidenceItem:
        if e.source is None or e.source not in sources:
            return e
        return e.model_copy(update={"source": sources[e.source]})

    return [
        f.model_copy(update={"evidence": [renamed(e) for e in f.evidence]})
        if any(e.source is not None and e.source in sources for e in f.evidence)
        else f
        for f in findings
    ]
