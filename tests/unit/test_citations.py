"""Every citation a user of the package sees resolves (issue 15).

What is read: the findings of ``check`` (design, verify and the estimate's ``--explain``) on every
bundled example, of ``verify`` and ``diagnose`` on every fixture case, of ``design`` on the
seed's worked example, the ``--explain`` of ``estimate`` in its three modes, the SARIF rules and
results of all of them, and the shipped data behind them (check metadata, diagnosis rules,
signature catalogues). A citation is one of:

* a rule id ``S<n>``: ``docs/practices.md`` must have the anchor ``s<n>``;
* a public ``https://`` URL;
* a document in the repository, ``docs/<file>.md#<anchor>``: the file and the anchor must exist.

``Finding.refs`` entries must be exactly one of these (the SARIF writer turns them into links).
Free text (explanations, fixes, ``--explain`` sources, SARIF help) may say more, but every
``S<n>`` and ``docs/...`` it names must resolve, every ``--explain`` source must name a citation
(or a repository, path and tag/commit), and none may name a document users do not have (the
banned strings below). The source tree, the fixtures and the incident benchmark are scanned for
those strings too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from aifabric.checks import metadata
from aifabric.checks.diagnose import all_rules
from aifabric.checks.diagnose.signatures import all_catalogues
from aifabric.findings import Finding
from aifabric.report.sarif import findings_to_sarif
from tests.conftest import EXAMPLES, ROOT, S7_DESIGN, run_cli
from tests.unit.checks import test_verify_fixtures as verify_fixtures
from tests.unit.diagnose import test_diagnose_fixtures as diagnose_fixtures

DOCS = ROOT / "docs"

BANNED = (
    "shared reference",
    "perf-model-and-limits",
    "contracts.md",
    "seed-digest",
    "seed digest",
    "anchors.md",
    "file id",
    "code-index",
    "code index",
    "find_string",
    "/work/shared",
)
"""Names of documents and search-index handles a user of the package does not have."""

BANNED_RE = re.compile(
    "|".join(re.escape(b) for b in BANNED) + r"|\breferences? §\d|\banchors §\d", re.IGNORECASE
)

S_ID = re.compile(r"^S([0-9]{1,2})$")
URL = re.compile(r"^https://[^\s<>\"']+$")
DOC_REF = re.compile(r"^docs/([\w.-]+\.md)#([\w-]+)$")
S_IN_TEXT = re.compile(r"(?<![\w/#.-])S([0-9]{1,3})(?:\.[0-9]+)?\b")
DOC_IN_TEXT = re.compile(r"(?<![\w/.-])docs/([\w./-]+?\.md)(?:#([\w-]+)(?![\w{<-]))?")
DOC_LINK = re.compile(r"(?<![\w/.-])docs/([\w./-]+?\.md)#([\w-]+)(?![\w{<-])")
URL_IN_TEXT = re.compile(r"https://[^\s<>\"')\]]+")
REPO_AT_REF = re.compile(
    r"\b[\w.-]+/[\w.-]+\b.*?\b[\w./-]+\.\w+\b.*?"
    r"(@ ?v?[0-9][\w.-]*|@ ?[0-9a-f]{7,40}|\bv[0-9]+\.[0-9]+[\w.-]*)"
)
"""``owner/repo ... path ... @ tag-or-commit``: a source file pinned to a version."""
OWN = re.compile(r"^aifabric[ .]")
"""The package itself (``aifabric estimate --help``, ``aifabric.perf.estimate``): users have it."""

SCANNED = ("src", "tests/fixtures", "benchmarks/incidents")
"""Trees whose text files may not name a document users do not have."""


# ---------------------------------------------------------------------------------------------
# anchors of the repository's documents


def _slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@cache
def anchors(doc: str) -> frozenset[str]:
    """The anchors of ``docs/<doc>``: explicit ``<a id="...">`` and heading slugs; empty when
    the document does not exist."""
    path = DOCS / doc
    if not path.is_file():
        return frozenset()
    text = path.read_text(encoding="utf-8")
    ids = set(re.findall(r"<a id=\"([\w-]+)\"></a>", text))
    ids |= {_slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, re.MULTILINE)}
    return frozenset(ids)


def ref_problem(ref: str) -> str | None:
    """Why ``ref`` is not a resolvable ``Finding.refs`` entry, or None when it is."""
    if m := S_ID.match(ref):
        return None if f"s{int(m.group(1))}" in anchors("practices.md") else "no such S-id"
    if URL.match(ref):
        return None
    if m := DOC_REF.match(ref):
        if not (DOCS / m.group(1)).is_file():
            return f"docs/{m.group(1)} is not in the repository"
        return None if m.group(2) in anchors(m.group(1)) else f"no anchor #{m.group(2)}"
    return "not an S-id, an https:// URL or docs/<file>.md#<anchor>"


def text_problems(text: str) -> list[str]:
    """What in free ``text`` cites something a user cannot resolve."""
    out = [f"names {m.group(0)!r}" for m in BANNED_RE.finditer(text)]
    for m in S_IN_TEXT.finditer(text):
        if f"s{int(m.group(1))}" not in anchors("practices.md"):
            out.append(f"S{m.group(1)} is not in docs/practices.md")
    for m in DOC_IN_TEXT.finditer(text):
        doc, anchor = m.group(1), m.group(2)
        if not (DOCS / doc).is_file():
            out.append(f"docs/{doc} is not in the repository")
        elif anchor and anchor not in anchors(doc):
            out.append(f"docs/{doc} has no anchor #{anchor}")
    return out


def source_problems(source: str) -> list[str]:
    """An ``--explain`` source: resolvable text that names a citation or a pinned source file."""
    out = text_problems(source)
    if not (
        S_IN_TEXT.search(source)
        or URL_IN_TEXT.search(source)
        or DOC_IN_TEXT.search(source)
        or REPO_AT_REF.search(source)
        or OWN.match(source)
    ):
        out.append("names no S-id, URL, docs/ page or repository file at a tag or commit")
    return out


# ---------------------------------------------------------------------------------------------
# what users see


@dataclass(frozen=True)
class Shown:
    """One run's findings, ``--explain`` steps and SARIF log, and where they came from."""

    where: str
    findings: tuple[Finding, ...] = ()
    explain: tuple[dict[str, Any], ...] = ()
    sarif: dict[str, Any] | None = None


def _cli_json(*args: str) -> dict[str, Any]:
    r = run_cli(*args)
    assert r.code in (0, 1), f"aifabric {' '.join(args)}: exit {r.code}\n{r.err}"
    doc: dict[str, Any] = json.loads(r.out)
    return doc


def _explain_of(doc: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    steps: list[dict[str, Any]] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "explain" and isinstance(value, list):
                    steps.extend(v for v in value if isinstance(v, dict))
                else:
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(doc)
    return tuple(steps)


LAB = EXAMPLES / "lossless-lab"
LAB_INPUTS = (
    "--configs",
    str(LAB / "configs"),
    "--bundle",
    str(LAB / "bundle"),
    "--nccl-env",
    str(LAB / "nccl.env"),
)
ESTIMATES = (
    ("--nodes", "4", "--nic-speed", "400G", "--pcie-gen", "4", "--size", "8G"),
    (str(EXAMPLES / "s7-worked-example.yaml"), "-b", "1M", "-e", "8G", "-f", "8"),
    ("--params", "70B", "--dtype", "bf16", "--tp", "8", "--pp", "2", "--nodes", "16"),
    ("--inference", "--hidden", "8192", "--batch", "1", "--tp", "8", "--layers", "80"),
)


@cache
def shown() -> tuple[Shown, ...]:
    """Everything the examples and fixtures make aifabric show."""
    out: list[Shown] = []
    for path in sorted(EXAMPLES.glob("*.yaml")):
        doc = _cli_json("check", str(path), "-F", "json")
        out.append(
            Shown(
                f"check {path.name}",
                tuple(Finding.model_validate(f) for f in doc["findings"]),
                _explain_of(doc),
            )
        )
    doc = _cli_json("check", str(LAB / "fabric.yaml"), *LAB_INPUTS, "-F", "json")
    out.append(
        Shown(
            "check lossless-lab",
            tuple(Finding.model_validate(f) for f in doc["findings"]),
            _explain_of(doc),
        )
    )
    sarif = _cli_json("verify", str(LAB / "fabric.yaml"), *LAB_INPUTS, "-F", "sarif")
    out.append(Shown("verify lossless-lab (SARIF)", sarif=sarif))
    doc = _cli_json(*S7_DESIGN, "-F", "json", "--explain")
    out.append(
        Shown(
            "design (S7)",
            tuple(Finding.model_validate(f) for f in doc.get("findings", [])),
            _explain_of(doc),
        )
    )
    for args in ESTIMATES:
        doc = _cli_json("estimate", *args, "--explain", "-F", "json")
        out.append(Shown(f"estimate {' '.join(args)}", explain=_explain_of(doc)))
    checks = list(metadata().values())
    for case in verify_fixtures.CASES:
        found = tuple(verify_fixtures._run(case))
        log = findings_to_sarif(found, checks, tool_version="test")
        out.append(Shown(f"verify fixture {case.name}", found, sarif=log))
    for case in diagnose_fixtures.CASES:
        found = tuple(diagnose_fixtures._run(case))
        log = findings_to_sarif(found, checks, tool_version="test")
        out.append(Shown(f"diagnose fixture {case.name}", found, sarif=log))
    return tuple(out)


def _report(problems: Iterable[str]) -> str:
    listed = sorted(set(problems))
    more = f"\n... and {len(listed) - 40} more" if len(listed) > 40 else ""
    return "\n".join(listed[:40]) + more


# ---------------------------------------------------------------------------------------------
# the tests


def test_practices_has_every_rule_id() -> None:
    ids = anchors("practices.md")
    assert {f"s{n}" for n in range(1, 25)} <= ids
    text = (DOCS / "practices.md").read_text(encoding="utf-8")
    for n in range(1, 25):
        assert re.search(rf"^## S{n} — \S", text, re.MULTILINE), f"S{n} has no section"


def test_the_checker_refuses_what_users_cannot_resolve() -> None:
    assert ref_problem("S12") is None and ref_problem("S25") is not None
    assert ref_problem("https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc") is None
    assert ref_problem("docs/references.md#pcie") is None
    assert ref_problem("docs/references.md#no-such-anchor") is not None
    assert ref_problem("docs/nowhere.md#x") is not None
    assert ref_problem("NCCL src/graph/tuning.cc") is not None
    assert ref_problem("RFC 3168") is not None
    assert text_problems("see shared reference perf-model-and-limits.md §6.3")
    assert text_problems("(contracts.md: exit code 2)") and text_problems("S31 says")
    assert text_problems("GitHub code-index file id 123")
    assert not text_problems("S20.3 and docs/practices.md#s12 and RFC 7938 §5.2.1")
    assert source_problems("nccl-tests#119") and not source_problems(
        "NVIDIA/nccl src/graph/tuning.cc @ v2.30.7-1 (73cf112295c3)"
    )


def test_finding_refs_resolve() -> None:
    problems = [
        f"{s.where}: {f.check}: {ref!r}: {why}"
        for s in shown()
        for f in s.findings
        for ref in f.refs
        if (why := ref_problem(ref))
    ]
    assert not problems, _report(problems)


def test_finding_texts_cite_only_what_resolves() -> None:
    problems = [
        f"{s.where}: {f.check}: {why}"
        for s in shown()
        for f in s.findings
        for text in (f.message, f.explanation, f.fix)
        if text
        for why in text_problems(text)
    ]
    assert not problems, _report(problems)


def test_explain_sources_resolve() -> None:
    steps = [(s.where, step) for s in shown() for step in s.explain]
    assert len({w for w, _ in steps}) >= len(ESTIMATES), "estimate --explain gave no steps"
    problems: list[str] = []
    for where, step in steps:
        for source in step.get("sources", []):
            problems += [
                f"{where}: {step.get('quantity')}: {why}" for why in source_problems(source)
            ]
        for key in ("quantity", "formula", "note"):
            if isinstance(step.get(key), str):
                problems += [f"{where}: {key}: {why}" for why in text_problems(step[key])]
    assert not problems, _report(problems)


def _sarif_problems(where: str, log: dict[str, Any]) -> Iterator[str]:
    for run in log["runs"]:
        for rule in run["tool"]["driver"]["rules"]:
            uri = rule.get("helpUri")
            if uri is not None and (why := ref_problem(uri)):
                yield f"{where}: rule {rule['id']} helpUri {uri!r}: {why}"
            for part in ("fullDescription", "help"):
                for key in ("text", "markdown"):
                    text = rule.get(part, {}).get(key)
                    if text:
                        yield from (
                            f"{where}: rule {rule['id']} {part}: {w}" for w in text_problems(text)
                        )
            for ref in rule.get("properties", {}).get("tags", []):
                if S_ID.match(ref) and (why := ref_problem(ref)):
                    yield f"{where}: rule {rule['id']} tag {ref!r}: {why}"
        for result in run["results"]:
            for ref in result.get("properties", {}).get("refs", []):
                if why := ref_problem(ref):
                    yield f"{where}: result {result['ruleId']} ref {ref!r}: {why}"


def test_sarif_rules_and_results_cite_only_what_resolves() -> None:
    logs = [(s.where, s.sarif) for s in shown() if s.sarif is not None]
    assert logs
    problems = [p for where, log in logs if log is not None for p in _sarif_problems(where, log)]
    assert not problems, _report(problems)


def test_shipped_data_cites_only_what_resolves() -> None:
    """Check metadata, diagnosis rules and catalogues, including entries no fixture reaches."""
    problems: list[str] = []
    for meta in metadata().values():
        problems += [
            f"check {meta.id}: {ref!r}: {w}" for ref in meta.refs if (w := ref_problem(ref))
        ]
        problems += [f"check {meta.id}: {w}" for w in text_problems(meta.description)]
    for rule in all_rules():
        problems += [
            f"rule {rule.id}: {ref!r}: {w}" for ref in rule.refs if (w := ref_problem(ref))
        ]
        for text in (rule.cause, rule.explanation, rule.fix, rule.message):
            problems += [f"rule {rule.id}: {w}" for w in text_problems(text)]
    for cat in all_catalogues():
        for entry in cat.entries:
            for ref in (entry.source.link(), *entry.real):
                if why := ref_problem(ref):
                    problems.append(f"signature {entry.id}: {ref!r}: {why}")
            for text in (entry.meaning, entry.next, entry.fix):
                problems += [f"signature {entry.id}: {w}" for w in text_problems(text or "")]
    assert not problems, _report(problems)


def _text_files(top: Path) -> Iterator[Path]:
    for path in sorted(top.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            yield path


@pytest.mark.parametrize("tree", SCANNED)
def test_tree_names_no_private_document(tree: str) -> None:
    problems = []
    for path in _text_files(ROOT / tree):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            for m in BANNED_RE.finditer(line.replace(_NCCL_CODE_INDEX, "")):
                problems.append(f"{path.relative_to(ROOT)}:{lineno}: {m.group(0)!r}")
    assert not problems, _report(problems)


_NCCL_CODE_INDEX = "Unknown device code index"
"""NCCL's own message (src/plugin/net.cc, ``WARN("Unknown device code index %d", type)``), quoted
by its catalogue entry: not the search-index handle the check is about."""


def test_docs_links_into_the_repository_resolve() -> None:
    """``docs/<file>.md#anchor`` links anywhere under src/ point at a real anchor."""
    problems = []
    for path in _text_files(ROOT / "src"):
        if path.suffix not in (".py", ".yaml", ".yml", ".json"):
            continue
        for m in DOC_LINK.finditer(path.read_text(encoding="utf-8")):
            doc, anchor = m.group(1), m.group(2)
            if not (DOCS / doc).is_file():
                problems.append(f"{path.relative_to(ROOT)}: docs/{doc} missing")
            elif anchor not in anchors(doc):
                problems.append(f"{path.relative_to(ROOT)}: docs/{doc}#{anchor} missing")
    assert not problems, _report(problems)


def test_evidence_fixtures_say_what_they_are() -> None:
    """Every evidence fixture's meta.yaml says whether it is a real capture, a rendered config
    or a mock (docs/evidence.md counts them)."""
    import yaml  # noqa: PLC0415

    metas = sorted((ROOT / "tests" / "fixtures" / "evidence").glob("*/*/meta.yaml"))
    assert metas
    wrong = [
        str(m.relative_to(ROOT))
        for m in metas
        if (yaml.safe_load(m.read_text(encoding="utf-8")) or {}).get("origin")
        not in ("captured", "rendered", "mock")
    ]
    assert not wrong, _report(wrong)
