"""Print docs/diagnose.md from the diagnosis rules (src/aifabric/checks/rules/*.yaml).

Run ``make docs`` after changing a rule; tests/unit/test_architecture.py fails when the
committed page and the rules disagree.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from aifabric.checks.diagnose import all_rules
from aifabric.checks.diagnose.rules import Rule

ROOT = Path(__file__).resolve().parents[1]


def _case_roles() -> dict[str, tuple[set[str], set[str]]]:
    """Per fixture case: the rule ids it triggers (``first:``, ``expect:``) and the rule ids it
    names under ``absent:`` (must not fire)."""
    out: dict[str, tuple[set[str], set[str]]] = {}
    for path in sorted((ROOT / "tests" / "fixtures" / "diagnose").glob("*/case.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        fired = {str(e["check"]) for e in data.get("expect", []) if "check" in e}
        if data.get("first"):
            fired.add(str(data["first"]))
        out[path.parent.name] = (fired, {str(a) for a in data.get("absent", [])})
    return out


def _cases(rule_id: str, roles: dict[str, tuple[set[str], set[str]]]) -> tuple[str, str]:
    """``(triggered by, must not fire on)`` as comma-separated case names."""
    fired = [name for name, (hit, _) in roles.items() if rule_id in hit]
    never = [name for name, (_, absent) in roles.items() if rule_id in absent]
    return ", ".join(fired) or "none yet", ", ".join(never) or "none"


def render() -> str:
    rules = all_rules()
    lines = [
        "# Diagnosis rules",
        "",
        "Generated from `src/aifabric/checks/rules/*.yaml` by `make docs`; do not edit by hand.",
        "`aifabric diagnose PATH...` runs every rule over the evidence given (files, or bundle",
        "directories `DIR/<host>/<captures>`). Each finding says the layer of the cause: the",
        "fabric, the host, the configuration or the application. Seed ids (S1-S24) refer to the",
        "seed digest; fixture cases live in `tests/fixtures/diagnose/<case>/`.",
        "",
        "| id | layer | severity | confidence | symptom |",
        "|---|---|---|---:|---|",
    ]
    for r in rules:
        lines.append(f"| `{r.id}` | {r.layer} | {r.severity} | {r.confidence:.2f} | {r.symptom} |")
    roles = _case_roles()
    for r in rules:
        fired, never = _cases(r.id, roles)
        lines += [
            "",
            f"## `{r.id}`",
            "",
            f"*{r.title}*. Layer **{r.layer}**, severity {r.severity}, confidence "
            f"{r.confidence:.2f}; refs: {', '.join(r.refs)}.",
            "",
            f"- Symptom: {r.symptom}",
            f"- Cause: {r.cause.strip()}",
            f"- Why: {r.explanation.strip()}",
            f"- Fix: {r.fix.strip()}",
            f"- Evidence it needs: {_needs(r)}",
            f"- Triggered by: {fired}",
            f"- Must not fire on: {never}",
        ]
    return "\n".join(lines) + "\n"


def _needs(rule: Rule) -> str:
    when = rule.when
    parts = []
    for group in ("all", "any", "none"):
        ms = getattr(when, group)
        if ms:
            names = ", ".join(sorted({m.record for m in ms}))
            parts.append(f"{group}: {names}")
    return "; ".join(parts)


if __name__ == "__main__":
    print(render(), end="")
