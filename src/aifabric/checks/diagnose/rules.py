"""Diagnosis rules as data: ``checks/rules/*.yaml`` validated into :class:`Rule`.

A rule says: *when* these evidence records are present (and those absent), *the cause* is this,
*in* this layer (fabric, host, configuration or application), *with* this confidence, and this
is the fix. Conditions select evidence records by type (and optionally evidence kind) and test
their fields with explicit operators, so adding a symptom is a YAML file plus a fixture, never a
new code path::

    id: diagnose.ib-retry-exceeded
    title: RDMA retry count exceeded on the fabric path
    layer: fabric
    severity: error
    confidence: 0.7
    when:
      all:
        - record: problem                 # evidence record type (aifabric parse --format json)
          as: err                         # name for the message template
          where:
            category: {eq: ib_completion}
            status: {eq: 12}
      none:
        - record: problem
          where: {category: {eq: remote_error}}
    message: "{count} RDMA completion(s) with retry-exceeded from {err.peer_address}"
    cause: ...
    explanation: ...
    fix: ...
    refs: [S20, S12]

Operators: ``eq ne gt ge lt le in not_in contains not_contains matches exists``. Field paths
walk attributes and dict keys (``counters.rx_discards_phy``, ``rx_pause_by_prio.3``).
``count`` on a match requires a number of matching records (``{ge: 2}``). ``scope: subject``
(default) evaluates a rule per host/device (a bundle directory, a log's hostname, a file);
``scope: input`` over everything given at once; a single match may say ``scope: input`` to look
across all input from a per-subject rule (a ``none`` clause naming a launcher log that has no
host names).
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from aifabric.model import StrictModel, Tup
from aifabric.yamlfile import load_packaged_yaml

__all__ = ["OPS", "Condition", "Match", "Rule", "all_rules", "op_holds"]

Op = Literal[
    "eq", "ne", "gt", "ge", "lt", "le", "in", "not_in", "contains", "not_contains", "matches",
    "exists",
]  # fmt: skip
OPS: tuple[str, ...] = Op.__args__  # type: ignore[attr-defined]


def op_holds(op: str, actual: Any, expected: Any) -> bool:
    """``actual <op> expected``; a missing value (``None``) only satisfies ``exists: false`` and
    ``ne``/``not_in``/``not_contains``."""
    if op == "exists":
        return (actual is not None) == bool(expected)
    if actual is None:
        return op in ("ne", "not_in", "not_contains")
    try:
        if op == "eq":
            return bool(actual == expected)
        if op == "ne":
            return bool(actual != expected)
        if op == "gt":
            return bool(actual > expected)
        if op == "ge":
            return bool(actual >= expected)
        if op == "lt":
            return bool(actual < expected)
        if op == "le":
            return bool(actual <= expected)
        if op == "in":
            return actual in expected
        if op == "not_in":
            return actual not in expected
        if op == "contains":
            return expected in actual
        if op == "not_contains":
            return expected not in actual
        if op == "matches":
            return re.search(str(expected), str(actual)) is not None
    except TypeError:
        return False
    raise ValueError(f"unknown operator {op!r}")


class Match(StrictModel):
    """Evidence records of one type whose fields pass every test in ``where``."""

    record: str = Field(description="record type, e.g. problem, ethtool_stats, ethtool_delta")
    kind: str | None = Field(default=None, description="evidence kind, e.g. nccl-log")
    as_: str | None = Field(default=None, alias="as", description="name in message templates")
    where: dict[str, dict[Op, Any]] = Field(default_factory=dict)
    count: dict[Op, int] | None = Field(default=None, description="how many records must match")
    scope: Literal["rule", "input"] = Field(
        default="rule",
        description="where to look: the rule's subject (default) or everything given at once "
        "(a launcher log without host names that clears a per-host rule)",
    )

    @field_validator("where")
    @classmethod
    def _regexes_compile(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        for field, tests in value.items():
            if "matches" in tests:
                try:
                    re.compile(str(tests["matches"]))
                except re.error as exc:
                    raise ValueError(f"{field}: bad regular expression: {exc}") from None
        return value


class Condition(StrictModel):
    """``all`` must each match, at least one of ``any`` (when given), none of ``none``."""

    all: Tup[Match] = ()
    any: Tup[Match] = ()
    none: Tup[Match] = ()

    @model_validator(mode="after")
    def _something(self) -> Condition:
        if not self.all and not self.any:
            raise ValueError("a rule needs at least one `all` or `any` match")
        return self


class Rule(StrictModel):
    """One diagnosis: a symptom's evidence, its cause, and the fix."""

    id: str = Field(pattern=r"^diagnose\.[a-z0-9\-]+$")
    title: str
    symptom: str = Field(description="what the user sees (S20 column 1)")
    layer: Literal["fabric", "host", "config", "application"]
    cause_class: str = Field(description="a cause class of checks/causes.yaml")
    severity: Literal["error", "warning", "info"] = "error"
    confidence: float = Field(gt=0, le=1)
    scope: Literal["subject", "input"] = "subject"
    when: Condition
    message: str = Field(description="one line; {count}, {subject} and {name.field} expand")
    cause: str
    explanation: str
    fix: str
    refs: Tup[str] = Field(min_length=1)
    tags: Tup[str] = ()

    @field_validator("title", "symptom", "message", "cause", "explanation", "fix")
    @classmethod
    def _one_paragraph(cls, value: str) -> str:
        """YAML folded scalars end in a newline and may wrap: keep one clean paragraph."""
        return " ".join(value.split())

    @field_validator("cause_class")
    @classmethod
    def _known_cause(cls, value: str) -> str:
        from aifabric.checks.diagnose.signatures import all_causes  # noqa: PLC0415

        if value not in all_causes():
            raise ValueError(f"unknown cause class {value!r} (checks/causes.yaml)")
        return value

    @field_validator("refs")
    @classmethod
    def _seed_ref(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not any(r.startswith("S") for r in value):
            raise ValueError("refs must cite at least one seed id (S1-S24)")
        return value


class _RuleFile(StrictModel):
    rules: Tup[Rule]


@cache
def all_rules() -> tuple[Rule, ...]:
    """Every rule shipped in ``checks/rules/*.yaml``, sorted by id (duplicate ids are errors)."""
    out: dict[str, Rule] = {}
    for name, parsed in load_packaged_yaml("checks/rules", _RuleFile):
        for rule in parsed.rules:
            if rule.id in out:
                raise ValueError(f"{name}: rule {rule.id} is already defined")
            out[rule.id] = rule
    return tuple(out[k] for k in sorted(out))
