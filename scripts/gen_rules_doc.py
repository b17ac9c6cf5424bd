"""Print docs/diagnose.md from the diagnosis rules (src/aifabric/checks/rules/*.yaml).

Run ``make docs`` after changing a rule; tests/unit/test_architecture.py fails when the
committed page and the rules disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
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


def _differential_section() -> list[str]:
    """Every family of checks/differentials.yaml with its candidates and what rules them out."""
    from aifabric.checks.diagnose.differential import all_differentials  # noqa: PLC0415

    fams = all_differentials()
    lines = [
        "## Differential diagnosis",
        "",
        "Some messages are printed alike by several causes. The families below (data:",
        "`src/aifabric/checks/differentials.yaml`, code: `checks/diagnose/differential.py`) list",
        "every cause such a message can have and the check that tells them apart. A finding whose",
        "check a family covers keeps its own cause unless the same input says otherwise:",
        "",
        "- a candidate is **supported** when another finding of the same run names its cause and",
        "  that finding is not itself ambiguous (an MTU black hole found by `ping -M do` beside a",
        "  retry-exceeded completion), or when the input shows the state the cause needs though",
        "  no finding names it (`supported by` below: `UCX_IB_GID_INDEX=0` on an `mpirun` line",
        "  selects a RoCE port's link-local GID); the finding then names the first supported",
        "  candidate;",
        "- a candidate is **ruled out** when a record shows the state it needs is absent",
        "  (`ruled out by` below); the finding then names the first candidate left;",
        "- the others are listed as **possible**: the finding's own cause first, then the order",
        "  below; a family marked *order: most common first* keeps the order below (its first",
        "  candidate is the most common cause of the message in real incidents, as counted).",
        "",
        "The predicates are in `checks/diagnose/differential_evidence.py`: `gid-index-link-local`",
        "(a GID index setting, `NCCL_IB_GID_INDEX`, `UCX_IB_GID_INDEX`, ..., that names a",
        "link-local GID in the input's GID table, or slot 0 or 1 on a port not shown to be",
        "InfiniBand: those slots hold a RoCE port's default `fe80::` GID), `gid-tables-differ`",
        "(two GID tables with different kinds of GID at one index), `transport-chosen` (a",
        "provider or transport set by hand: `FI_PROVIDER`, `I_MPI_FABRICS`, `UCX_TLS`, `--mca",
        "pml`, `NCCL_IB_DISABLE=1`, ...), `infiniband-only` (every port shown is InfiniBand).",
        "Settings count in environment files, NCCL's `set by environment to` lines and on pasted",
        "command lines (`mpirun -x`, `export`, a prompt), not in a program's hint text.",
        "",
        "The finding's `alternatives` (JSON, SARIF properties, the table's `possible:` lines) hold",
        "every other candidate with its status, its check and what supported or ruled it out.",
        f"{len(fams)} families cover "
        f"{sum(len(f.applies_to) for f in fams)} catalogue entries and rules.",
    ]
    for fam in fams:
        lines += [
            "",
            f"### `{fam.id}`: {fam.title}",
            "",
            f"{fam.meaning} Sources: {', '.join(fam.sources)}.",
            *(["", f"*Order: most common first.* {fam.basis}"] if fam.lead == "family" else []),
            "",
            "| rank | cause | how to tell | supported by | ruled out by |",
            "|---:|---|---|---|---|",
            *[
                f"| {i} | `{c.cause}` | {c.check} | {', '.join(c.supported_by) or '-'} "
                f"| {', '.join(c.ruled_out_by) or '-'} |"
                for i, c in enumerate(fam.candidates, 1)
            ],
            "",
            "Applies to: " + ", ".join(f"`{a}`" for a in fam.applies_to) + ".",
        ]
    return lines


def render() -> str:
    rules = all_rules()
    lines = [
        "# Diagnosis rules",
        "",
        "Generated from `src/aifabric/checks/rules/*.yaml` by `make docs`; do not edit by hand.",
        "`aifabric diagnose PATH...` runs every rule over the evidence given (files, or bundle",
        "directories `DIR/<host>/<captures>`). Each finding says the layer of the cause: the",
        "fabric, the host, the configuration or the application. Seed ids (S1-S24) refer to",
        "`docs/practices.md`; fixture cases live in",
        "`tests/fixtures/diagnose/<case>/`.",
        "",
        "## How a diagnosis is made",
        "",
        "Five layers look at the same evidence, and every finding names a **cause class** (below):",
        "",
        "1. **Rules** (this page): combinations of parsed records, ranked first. They see",
        "   context (a rank that died before the retries ran out) that one line cannot show.",
        "2. **Record verdicts**: every kind of record judged on its own (a port not Active, a",
        "   PCIe link below its capability, GPUDirect RDMA off, a memlock limit, no RoCE v2 GID, a",
        "   busbw curve that collapses, optics past a threshold). A verdict naming a cause a rule",
        "   already names for the same host is dropped. Registered per record type in",
        "   `src/aifabric/checks/diagnose/verdicts_*.py` (list below).",
        "3. **Signature catalogues** (`docs/signatures.md`): the failure messages of NCCL,",
        "   rdma-core, UCX, PyTorch, launchers, CUDA, NIC and PCI kernel drivers, NVSHMEM,",
        "   GDRCopy, Mooncake, NIXL, vLLM, Ray, MPI, NVMe-oF and more, from their sources, each",
        "   line recognised on its own. A catalogue finding whose lines a rule or verdict already",
        "   quotes is dropped.",
        "4. **Not recognised**: a line that reads like an error (error, failed, WARN, timed out,",
        "   refused, an exception line such as `ValueError: ...`, or a glog/klog line at level E",
        "   or F) in a log-like input that nothing above explains becomes a warning",
        '   `diagnose.unrecognised-line` quoting it. "No problem found" is only said when there',
        "   is no such line. When the catalogue entries nearest to the line (tf-idf cosine, a",
        "   vote of the 5 nearest) agree on a cause, the warning names it as a suggestion, with",
        "   the entries it rests on (`src/aifabric/checks/diagnose/nearest.py`; measured by",
        "   `benchmarks/nearest_loo.py`: about three in four such suggestions are right on",
        "   catalogued messages left out; `benchmarks/suggestion_real.py`: on real lines no",
        "   catalogue recognises, from threads never used, one suggestion in four named the cause",
        "   readers gave the line, and most of the others were on lines that name no cause by",
        "   themselves, such as a generic failure; where the line does name one, about three",
        "   suggestions in four are right). Read a suggestion as a lead to check, not a finding.",
        "5. **Release advisories**: when the input names the NCCL release it runs (`NCCL version",
        "   X.Y.Z`, nccl-tests' `nccl-library=`) and the layers above found a failure, the known",
        "   issues of that release and the fixes of the next releases (NVIDIA's release notes, as",
        "   data in `src/aifabric/checks/advisories/nccl-releases.yaml`) whose symptom (hang,",
        "   crash, error, wrong results, low bandwidth) the failing lines show and whose component",
        "   (NVLS, CollNet, IB, sockets, PXN, a plug-in...) the input shows in use become",
        "   `diagnose.nccl-release-defect`: a warning for a known issue of the release, or for a",
        "   fix whose component and distinctive words the failing lines name; information",
        "   otherwise (`src/aifabric/checks/diagnose/advisories.py`). An NVIDIA NIC's firmware",
        "   against the mlx5 driver release beside it is a record verdict",
        "   (`diagnose.nic-firmware-driver-mismatch`, `checks/advisories/mlnx-firmware.yaml`).",
        "",
        "Then a sixth step re-ranks ambiguous findings (**differential diagnosis**, below).",
        "",
        *_confidence_section(rules),
        "",
        *_differential_section(),
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
        f"{sum(not _derivers(r) for r in rules)} of {len(rules)} rules are **data alone**: they",
        "match records the parsers produce, and adding or changing one is a YAML edit. The",
        f"other {sum(bool(_derivers(r)) for r in rules)} match at least one record type that a "
        "Python **deriver** builds",
        "from several records (counter growth between two snapshots, busbw against the estimate,",
        "NCCL's interface choice); the column *needs* names the deriver module and the record",
        "types. Such a rule is still data, but it can only use what its deriver computes.",
        "",
        "| id | layer | cause class | severity | confidence | needs | symptom |",
        "|---|---|---|---|---:|---|---|",
    ]
    for r in rules:
        lines.append(
            f"| `{r.id}` | {r.layer} | `{r.cause_class}` | {r.severity} | "
            f"{r.confidence:.2f} | {_needs_deriver(r)} | {r.symptom} |"
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
            f"{r.confidence:.2f}; refs: {', '.join(_ref(x) for x in r.refs)}.",
            "",
            f"- Symptom: {r.symptom}",
            f"- Cause: {r.cause.strip()}",
            f"- Why: {r.explanation.strip()}",
            f"- Fix: {r.fix.strip()}",
            f"- Evidence it needs: {_needs(r)}",
            f"- Data alone or deriver: {_needs_deriver(r)}",
            f"- Triggered by: {fired}",
            f"- Must not fire on: {never}",
        ]
    return "\n".join(lines) + "\n"


def _ref(ref: str) -> str:
    """A ref as a link: ``S12`` -> practices.md#s12, a URL or a ``docs/`` path as it is."""
    if ref.startswith("S") and ref[1:].isdigit():
        return f"[{ref}](practices.md#s{ref[1:]})"
    if ref.startswith("docs/"):
        return f"[{ref}]({ref.removeprefix('docs/')})"
    return f"<{ref}>" if ref.startswith("https://") else ref


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


def _derived_types() -> dict[str, str]:
    """Record types built by the derivers: record type -> ``derive_*`` module name."""
    import importlib  # noqa: PLC0415
    import pkgutil  # noqa: PLC0415

    import aifabric.checks.diagnose as pkg  # noqa: PLC0415
    from aifabric.evidence.base import Record  # noqa: PLC0415

    out: dict[str, str] = {}
    for info in pkgutil.iter_modules(pkg.__path__):
        if not info.name.startswith("derive_"):
            continue
        mod = importlib.import_module(f"{pkg.__name__}.{info.name}")
        for obj in vars(mod).values():
            if isinstance(obj, type) and issubclass(obj, Record) and obj.__module__ == mod.__name__:
                out[obj.record_type] = info.name
    return out


def _derivers(rule: Rule) -> list[tuple[str, str]]:
    """``(deriver module, record type)`` for each derived record type ``rule`` matches."""
    used = {m.record for g in ("all", "any", "none") for m in getattr(rule.when, g)}
    unknown = used - _parsed_types() - set(_derived_types())
    if unknown:
        raise SystemExit(f"{rule.id}: no parser or deriver produces {sorted(unknown)}")
    derived = _derived_types()
    return sorted((derived[t], t) for t in used if t in derived)


def _needs_deriver(rule: Rule) -> str:
    found = _derivers(rule)
    if not found:
        return "data alone"
    mods: dict[str, list[str]] = {}
    for mod, rtype in found:
        mods.setdefault(mod, []).append(f"`{rtype}`")
    return "deriver " + "; ".join(f"`{m}` ({', '.join(t)})" for m, t in mods.items())


def _confidence_section(rules: Sequence[Rule]) -> list[str]:
    """What a finding's confidence is and how findings are ranked (as ``engine.diagnose`` does)."""
    from aifabric.checks.diagnose.engine import SIGNATURE_PRIOR  # noqa: PLC0415

    lo = min(r.confidence for r in rules)
    hi = max(r.confidence for r in rules)
    prior = ", ".join(f"{sev} {p:g}" for sev, p in SIGNATURE_PRIOR.items())
    return [
        "## Confidence and ranking",
        "",
        "A finding's `confidence` is an **authored prior**: a number the author of the rule,",
        "verdict or catalogue set from the cases known when it was written (the fixtures under",
        "`tests/fixtures/diagnose/` and the public threads the catalogues cite), saying how often",
        "this reading of the evidence names the real cause. It is not measured or calibrated",
        "against outcomes, and the confidences of different findings do not add up to one.",
        "",
        "Findings are ranked by, in order:",
        "",
        "1. severity: error, then warning, then info;",
        "2. layer: rules, then record verdicts, then catalogue entries, then unrecognised lines,",
        "   then release advisories;",
        "3. confidence, highest first;",
        "4. check id and target, so that the order is stable.",
        "",
        "So confidence only orders findings of the same severity and layer: an error from a",
        "catalogue entry ranks above a warning from a rule, and a rule ranks above a verdict of",
        "the same severity even when the verdict's confidence is higher. The values: rules",
        f"{lo:.2f}-{hi:.2f} (each in `src/aifabric/checks/rules/*.yaml`), verdicts set per",
        "verdict in `src/aifabric/checks/diagnose/verdicts_*.py`, catalogue entries by severity",
        f"({prior}), unrecognised lines 0.2, release advisories 0.35 (warning) or 0.15. Before",
        "ranking, a verdict or catalogue finding that names a cause class a rule already names",
        "for the same subject is dropped, and so is a",
        "catalogue finding whose lines a rule or verdict already quotes.",
    ]


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
