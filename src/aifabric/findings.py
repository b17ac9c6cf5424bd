"""The one answer shape (architecture.md): a :class:`Finding`.

verify, diagnose, design checks, probe and bench comparisons all return lists of findings; the
CLI table, the JSON output and the HTML report render this one shape (contracts.md, "Finding").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "SEVERITIES",
    "Finding",
    "Severity",
    "Summary",
    "Value",
    "exit_code_for",
    "summarize",
]

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")

Scalar = str | int | float | bool | None
Value = Scalar | list[Scalar] | dict[str, Scalar]


class Finding(BaseModel):
    """One result of a check: what was expected, what was found, why it matters, how to fix it.

    ``refs`` cites seed ids (``S1``..``S24``, see the seed digest) and may cite other sources;
    ``confidence`` is required for diagnose findings and optional elsewhere.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    check: str = Field(description="check id, e.g. design.nic-pcie-bandwidth")
    severity: Severity
    target: str = Field(description="what the finding is about: a device, port, link or group")
    message: str
    expected: Value = None
    actual: Value = None
    evidence: list[str] = Field(default_factory=list)
    explanation: str
    fix: str
    refs: list[str] = Field(default_factory=list)
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    cause: str | None = Field(
        default=None,
        description="diagnose: the cause class named (docs/diagnose.md, 'Cause classes')",
    )


class Summary(BaseModel):
    """Counts of findings by severity (contracts.md: ``summary``)."""

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
    """contracts.md: 1 when any finding has severity ``error``, else 0."""
    return 1 if any(f.severity == "error" for f in findings) else 0
