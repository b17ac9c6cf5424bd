"""One registry of checks. Metadata is data (``checks/checks.yaml``); code only computes.

A check is a function ``(CheckContext) -> Iterable[Finding]`` registered with
``@register("design.radix")``. Its id, title, default severity, seed refs and description come
from the YAML entry of the same id: a check without metadata, or metadata without a check, is a
loud error at import (and a test). ``docs/checks.md`` is generated from the metadata.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal

from pydantic import Field

from aifabric.catalog import Catalog
from aifabric.dialects.observed import Observed
from aifabric.findings import EvidenceLike, Finding, Severity, Value, as_evidence
from aifabric.model import Fabric, StrictModel, Tup
from aifabric.yamlfile import read_yaml_text, validate_data

__all__ = ["CheckContext", "CheckMeta", "all_checks", "metadata", "register", "run_checks"]


class CheckMeta(StrictModel):
    """Declarative description of one check."""

    id: str = Field(pattern=r"^[a-z0-9]+(\.[a-z0-9\-]+)+$")
    title: str
    category: Literal["design", "verify", "diagnose"]
    severity: Literal["error", "warning", "info"]
    refs: Tup[str] = ()
    inputs: Tup[Literal["fabric", "catalog", "configs", "bundle", "nccl-env"]] = ("fabric",)
    description: str

    def finding(
        self,
        *,
        target: str,
        message: str,
        explanation: str,
        fix: str,
        expected: Value = None,
        actual: Value = None,
        evidence: Iterable[EvidenceLike] = (),
        severity: Severity | None = None,
        refs: Iterable[str] = (),
        confidence: float | None = None,
    ) -> Finding:
        """A :class:`Finding` of this check, its id and refs filled in."""
        return Finding(
            check=self.id,
            severity=severity or self.severity,
            target=target,
            message=message,
            expected=expected,
            actual=actual,
            evidence=as_evidence(evidence),
            explanation=explanation,
            fix=fix,
            refs=list(dict.fromkeys([*self.refs, *refs])),
            confidence=confidence,
        )


class _MetaFile(StrictModel):
    checks: Tup[CheckMeta]


@dataclass(frozen=True)
class CheckContext:
    """What a check may look at: the fabric intent, the hardware catalog, and what device
    configs, host state and the NCCL environment say (``observed``; None when none was given).
    """

    fabric: Fabric
    catalog: Catalog
    observed: Observed | None = None


CheckFn = Callable[[CheckContext], Iterable[Finding]]

_FUNCTIONS: dict[str, CheckFn] = {}


@cache
def metadata() -> dict[str, CheckMeta]:
    """All check metadata by id, from ``checks/checks.yaml``."""
    text = resources.files("aifabric.checks").joinpath("checks.yaml").read_text(encoding="utf-8")
    data = read_yaml_text(text, file="checks/checks.yaml")
    parsed = validate_data(_MetaFile, data, file="checks/checks.yaml", text=text)
    out: dict[str, CheckMeta] = {}
    for meta in parsed.checks:
        if meta.id in out:
            raise ValueError(f"checks.yaml lists {meta.id} twice")
        out[meta.id] = meta
    return out


def register(check_id: str) -> Callable[[CheckFn], CheckFn]:
    """Register a check function under ``check_id`` (which must have metadata)."""

    def wrap(fn: CheckFn) -> CheckFn:
        if check_id not in metadata():
            raise ValueError(f"check {check_id} has no entry in checks/checks.yaml")
        if check_id in _FUNCTIONS:
            raise ValueError(f"check {check_id} registered twice")
        _FUNCTIONS[check_id] = fn
        return fn

    return wrap


def all_checks() -> dict[str, tuple[CheckMeta, CheckFn]]:
    """Registered checks with their metadata, by id (importing the check modules)."""
    # imported here, not at the top: the check modules import this registry
    from aifabric.checks import design as _design  # noqa: F401, PLC0415
    from aifabric.checks import verify as _verify  # noqa: F401, PLC0415

    meta = metadata()
    return {cid: (meta[cid], fn) for cid, fn in sorted(_FUNCTIONS.items())}


def run_checks(ctx: CheckContext, *, category: str | None = None) -> list[Finding]:
    """Run every registered check (of ``category``) and return their findings, errors first."""
    findings: list[Finding] = []
    for meta, fn in all_checks().values():
        if category is not None and meta.category != category:
            continue
        findings.extend(fn(ctx))
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(findings, key=lambda f: (order[f.severity], f.check, f.target))
