"""Print docs/diagnose.md from the diagnosis rules (src/aifabric/checks/rules/*.yaml).

Run ``make docs`` after changing a rule; tests/unit/test_architecture.py fails when the
committed page and the rules disagree.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from aifabric.checks.diagnose import all_rules
from aifabric.checks.diagnose.rules import Rule
from aifabric.checks.diagnose.signatures import all_catalogues, all_causes
from aifabric.checks.diagnose.verdicts import load_verdicts

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
        "seed digest (`docs/practices.md`); fixture cases live in",
        "`tests/fixtures/diagnose/<case>/`.",
        "",
        "## How a diagnosis is made",
        "",
        "Four layers look at the same evidence, and every finding names a **cause class** (below):",
        "",
        "1. **Rules** (this page): combinations of parsed records, ranked first. They see",
        "   context (a rank that died before the retries ran out) that one line cannot show.",
        "2. **Record verdicts**: every kind of record judged on its own (a port not Active, a",
        "   PCIe link below its capability, GPUDirect RDMA off, a memlock limit, no RoCE v2 GID, a",
        "   busbw curve that collapses, optics past a threshold). A verdict naming a cause a rule",
        "   already names for the same host is dropped. Registered per record type in",
        "   `src/aifabric/checks/diagnose/verdicts_*.py` (list below).",
        "3. **Signature catalogues** (`docs/signatures.md`): the failure messages of NCCL,",
        "   rdma-core, UCX, PyTorch, launchers, CUDA and the mlx5 driver, from their sources,",
        "   each line recognised on its own. A catalogue finding whose lines a rule or verdict",
        "   already quotes is dropped.",
        "4. **Not recognised**: a line that reads like an error (error, failed, WARN, timed out,",
        "   refused...) in a log-like input that nothing above explains becomes a warning",
        "   `diagnose.unrecognised-line` quoting it. \"No problem found\" is only said when there",
        "   is no such line.",
        "",
        "Confidence is an **authored prior**, not a measured probability: how often, in the cases",
        "we know, this reading of the evidence names the real cause. It ranks findings of the same",
        "severity: rules (0.35-0.8) before verdicts before catalogue entries (error 0.55, warning",
        "0.45, info 0.3) before unrecognised lines (0.2).",
        "",
        "## Cause classes",
        "",
        "| class | layer | what it covers |",
        "|---|---|---|",
        *[f"| `{c.id}` | {c.layer} | {c.title}: {c.covers} |" for c in all_causes().values()],
        "",
        "## Record verdicts",
        "",
        "| record type | verdict function (module) |",
        "|---|---|",
        *[
            f"| `{rt}` | `{fn.__name__}` ({fn.__module__.rsplit('.', 1)[-1]}) |"
            for rt, fns in sorted(load_verdicts().items())
            for fn in fns
        ],
        "",
        f"Signature catalogues: {sum(len(c.entries) for c in all_catalogues())} entries for "
        f"{len(all_catalogues())} programs, listed in `docs/signatures.md`.",
        "",
        "## Rules",
        "",
        "Rules marked *deriver* need a Python deriver (`derive_*.py`) to build the records they",
        "match (counter growth between snapshots, busbw against the estimate); the others are data",
        "alone.",
        "",
        "| id | layer | cause class | severity | confidence | symptom |",
        "|---|---|---|---|---:|---|",
    ]
    for r in rules:
        lines.append(
            f"| `{r.id}` | {r.layer} | `{r.cause_class}`{_deriver_mark(r)} | {r.severity} | "
            f"{r.confidence:.2f} | {r.symptom} |"
        )
    roles = _case_roles()
    for r in rules:
        fired, never = _cases(r.id, roles)
        lines += [
            "",
            f"## `{r.id}`",
            "",
            f"*{r.title}*. Layer **{r.layer}**, cause class `{r.cause_class}`, severity "
            f"{r.severity}, confidence "
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


_PARSED_TYPES: set[str] | None = None


def _parsed_types() -> set[str]:
    """Record types the parsers produce (everything else a rule matches is derived)."""
    global _PARSED_TYPES  # noqa: PLW0603 - computed once
    if _PARSED_TYPES is None:
        import importlib  # noqa: PLC0415

        from aifabric.evidence.base import Record  # noqa: PLC0415
        from aifabric.evidence.registry import FAMILY_MODULES  # noqa: PLC0415

        out: set[str] = {"signature"}
        for mod in FAMILY_MODULES:
            m = importlib.import_module(f"aifabric.evidence.{mod}")
            for obj in vars(m).values():
                if isinstance(obj, type) and issubclass(obj, Record):
                    out.add(obj.record_type)
        _PARSED_TYPES = out
    return _PARSED_TYPES


def _deriver_mark(rule: Rule) -> str:
    used = {m.record for g in ("all", "any", "none") for m in getattr(rule.when, g)}
    return " *deriver*" if used - _parsed_types() else ""


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
