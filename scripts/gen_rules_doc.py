"""Print docs/diagnose.md from the diagnosis rules (src/aifabric/checks/rules/*.yaml).

Run ``make docs`` after changing a rule; tests/unit/test_architecture.py fails when the
committed page and the rules disagree.
"""

from __future__ import annotations

from pathlib import Path

from aifabric.checks.diagnose import all_rules

ROOT = Path(__file__).resolve().parents[1]


def _cases(rule_id: str) -> list[str]:
    out = []
    for case in sorted((ROOT / "tests" / "fixtures" / "diagnose").glob("*/case.yaml")):
        if rule_id in case.read_text(encoding="utf-8"):
            out.append(case.parent.name)
    return out


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
    for r in rules:
        cases = _cases(r.id)
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
            f"- Fixture cases: {', '.join(cases) if cases else 'none yet'}",
        ]
    return "\n".join(lines) + "\n"


def _needs(rule: object) -> str:
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
