"""Findings as SARIF 2.1.0, for code-scanning panes (GitHub code scanning, GitLab, Azure DevOps).

Format: OASIS "Static Analysis Results Interchange Format (SARIF) Version 2.1.0" (errata 01),
JSON schema ``sarif-schema-2.1.0.json`` (oasis-tcs/sarif-spec, ``sarif-2.1/schema/``; a copy
ships in the package, :func:`sarif_schema`, and the tests validate every log against it with
``jsonschema``).

Mapping:

* one ``run``; ``tool.driver``: ``name`` ``aifabric``, ``version``; no ``informationUri`` (the
  schema wants an absolute URI and the docs travel with the package, not on a web site).
* ``tool.driver.rules``: one ``reportingDescriptor`` per check: ``id`` (check id), ``name``
  (the id in UpperCamelCase, ``verify.mtu-path`` → ``VerifyMtuPath``), ``shortDescription``
  (title), ``fullDescription`` (description), ``defaultConfiguration.level`` (error → error,
  warning → warning, info → note), ``properties.tags`` (seed refs, S1-S24) and
  ``properties.category``. A finding of a check not in ``checks`` gets a bare rule of its own.
* ``results``: ``ruleId``, ``ruleIndex``, ``level`` (the finding's own severity, which may differ
  from the rule's default), ``message.text`` (message, then ``Fix: ...`` on its own line).
* ``locations[0]``: a ``physicalLocation`` from the first evidence item that has a ``source``
  file (``artifactLocation.uri``: relative path, forward slashes, percent-encoded;
  ``region.startLine`` and ``region.snippet`` when the item has a line); always
  ``logicalLocations`` with the finding's target (``kind`` ``link`` for ``a -> b``, ``device``
  for a bare name, ``object`` for ports and groups). Further evidence files go to
  ``relatedLocations``. Evidence is structured (:class:`aifabric.findings.EvidenceItem`), so
  nothing is parsed back from text. ``artifacts`` maps a placeholder source to the path to
  report (``{"fabric file": "fabrics/prod.yaml"}``); the :data:`~aifabric.findings.FABRIC_SOURCE`
  placeholder left unmapped gives no physical location.
* ``default_artifact``: the file a result without file evidence is placed in (the fabric file,
  no region). GitHub code scanning refuses results without a ``physicalLocation``
  ("locationFromSarifResult: expected artifact location", Checkmarx/2ms issue 128; sarif-sdk
  rule GH1017), so pass it when the log goes there.
* ``partialFingerprints``: ``aifabricCheckTarget/v1`` = SHA-256 of check id and target
  (first 32 hex digits): stable across runs, line moves and message rewording, so CI tools
  match "the same problem" from run to run (SARIF 2.1.0 section 3.27.17).
* ``properties``: ``severity``, ``expected``, ``actual``, ``refs``, ``evidence`` (the items as
  objects), ``explanation``, ``fix``, ``confidence`` and ``cause`` (when given).
* rules carry ``help`` (text and markdown) with the check's fix and its references: an S-id
  resolves to ``docs/practices.md#s<n>`` in the project, anything else is a public URL or a
  document shipped in the repository. ``helpUri`` is left out: the schema wants an absolute URI
  and the docs travel with the package.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any
from urllib.parse import quote

from aifabric.findings import FABRIC_SOURCE, EvidenceItem, Finding
from aifabric.report.junit import CheckInfo

__all__ = [
    "SARIF_SCHEMA",
    "SARIF_VERSION",
    "evidence_location",
    "findings_to_sarif",
    "fingerprint",
    "logical_kind",
    "path_to_uri",
    "ref_link",
    "sarif_schema",
]

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
FINGERPRINT_KEY = "aifabricCheckTarget/v1"

LEVELS = {"error": "error", "warning": "warning", "info": "note"}

_DEVICE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
_LINK = re.compile(r"\s(?:->|<->|<-|--)\s")
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:/")


@cache
def sarif_schema() -> dict[str, Any]:
    """The OASIS SARIF 2.1.0 JSON schema (draft-04) shipped with the package."""
    text = (
        resources.files("aifabric.report")
        .joinpath("schemas/sarif-schema-2.1.0.json")
        .read_text(encoding="utf-8")
    )
    schema: dict[str, Any] = json.loads(text)
    return schema


def path_to_uri(path: str) -> str:
    """A file path as a URI reference: forward slashes, percent-encoded (RFC 3986).

    ``configs/leaf 1.json`` → ``configs/leaf%201.json``; ``configs\\leaf1.json`` →
    ``configs/leaf1.json``; an absolute path becomes a ``file://`` URI
    (``/tmp/a.cfg`` → ``file:///tmp/a.cfg``, ``C:\\x\\a.cfg`` → ``file:///C:/x/a.cfg``).
    """
    p = path.replace("\\", "/")
    if _WINDOWS_DRIVE.match(p):
        return "file:///" + p[:2] + quote(p[2:], safe="/", errors="backslashreplace")
    if p.startswith("/"):
        return "file://" + quote(p, safe="/", errors="backslashreplace")
    while p.startswith("./"):
        p = p[2:]
    return quote(p, safe="/", errors="backslashreplace")


def evidence_location(
    item: EvidenceItem, artifacts: Mapping[str, str] | None = None
) -> tuple[str, int | None] | None:
    """(file path, 1-based line or None) of an evidence item, or None when it names no file.

    >>> evidence_location(EvidenceItem(source="configs/leaf1.json", line=212, text="mtu 1500"))
    ('configs/leaf1.json', 212)
    >>> evidence_location(EvidenceItem(source="fabric file", text="leaf1:Ethernet4 mtu 1500"))
    >>> evidence_location(EvidenceItem(text="leaf1: down/up = 3"))
    """
    if item.source is None:
        return None
    source = (artifacts or {}).get(item.source, item.source)
    if source == FABRIC_SOURCE:
        return None
    return source, item.line


_S_ID = re.compile(r"^S([0-9]{1,2})$")


def ref_link(ref: str) -> str:
    """Where a finding's ref resolves: ``S12`` → ``docs/practices.md#s12``; anything else (a
    public URL or a document in the repository) as it is."""
    m = _S_ID.match(ref)
    return f"docs/practices.md#s{m.group(1)}" if m else ref


def logical_kind(target: str) -> str:
    """``link`` for ``a -> b``, ``device`` for a bare device name, else ``object``."""
    if _LINK.search(target):
        return "link"
    if _DEVICE.match(target):
        return "device"
    return "object"


def fingerprint(check: str, target: str) -> str:
    """Stable identity of a (check, target) pair: 32 hex digits of SHA-256."""
    return hashlib.sha256(f"{check}\0{target}".encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _rule_name(check_id: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in re.split(r"[.\-_]", check_id) if p)


def _help(description: str, refs: Sequence[str]) -> dict[str, str]:
    links = [ref_link(r) for r in dict.fromkeys(refs)]
    text = " ".join(description.split())
    if not links:
        return {"text": text, "markdown": text}
    return {
        "text": f"{text} References: {', '.join(links)}",
        "markdown": f"{text}\n\nReferences: " + ", ".join(f"[{r}]({r})" for r in links),
    }


def _rule(meta: CheckInfo) -> dict[str, Any]:
    return {
        "id": meta.id,
        "name": _rule_name(meta.id),
        "shortDescription": {"text": meta.title},
        "fullDescription": {"text": " ".join(meta.description.split())},
        "help": _help(meta.description, meta.refs),
        "defaultConfiguration": {"level": LEVELS.get(meta.severity, "warning")},
        "properties": {"tags": list(dict.fromkeys(meta.refs)), "category": meta.category},
    }


def _bare_rule(check_id: str, refs: Sequence[str] = ()) -> dict[str, Any]:
    return {
        "id": check_id,
        "name": _rule_name(check_id),
        "shortDescription": {"text": check_id},
        "help": _help(check_id, refs),
        "properties": {"tags": []},
    }


def _physical(path: str, line: int | None, snippet: str = "") -> dict[str, Any]:
    loc: dict[str, Any] = {"artifactLocation": {"uri": path_to_uri(path)}}
    if line is not None:
        loc["region"] = {"startLine": line}
        if snippet:
            loc["region"]["snippet"] = {"text": snippet}
    return loc


def _result(
    f: Finding,
    rule_index: int,
    artifacts: Mapping[str, str] | None,
    default_artifact: str | None,
) -> dict[str, Any]:
    places: list[tuple[EvidenceItem, tuple[str, int | None]]] = []
    for e in f.evidence:
        where = evidence_location(e, artifacts)
        if where is not None and where not in [p for _, p in places]:
            places.append((e, where))
    primary: dict[str, Any] = {}
    if places:
        first, where = places[0]
        primary["physicalLocation"] = _physical(*where, first.text)
    elif default_artifact is not None:
        primary["physicalLocation"] = _physical(default_artifact, None)
    primary["logicalLocations"] = [
        {"name": f.target, "fullyQualifiedName": f.target, "kind": logical_kind(f.target)}
    ]
    props: dict[str, Any] = {
        "severity": f.severity,
        "expected": f.expected,
        "actual": f.actual,
        "refs": list(f.refs),
        "evidence": [e.model_dump() for e in f.evidence],
        "explanation": f.explanation,
        "fix": f.fix,
    }
    if f.confidence is not None:
        props["confidence"] = f.confidence
    if f.cause is not None:
        props["cause"] = f.cause
    if f.alternatives:
        props["alternatives"] = [a.model_dump() for a in f.alternatives]
    result: dict[str, Any] = {
        "ruleId": f.check,
        "ruleIndex": rule_index,
        "level": LEVELS[f.severity],
        "message": {"text": f"{f.message}\nFix: {f.fix}"},
        "locations": [primary],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(f.check, f.target)},
        "properties": props,
    }
    if len(places) > 1:
        result["relatedLocations"] = [
            {
                "id": i,
                "physicalLocation": _physical(*where, item.text),
                "message": {"text": str(item)},
            }
            for i, (item, where) in enumerate(places[1:], start=1)
        ]
    return result


def findings_to_sarif(
    findings: Sequence[Finding],
    checks: Sequence[CheckInfo],
    *,
    tool_version: str,
    artifacts: Mapping[str, str] | None = None,
    default_artifact: str | None = None,
) -> dict[str, Any]:
    """A SARIF 2.1.0 log (one run) of ``findings`` from ``checks``; ``json.dumps`` it to write."""
    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    for meta in checks:
        if meta.id not in index:
            index[meta.id] = len(rules)
            rules.append(_rule(meta))
    for f in findings:
        if f.check not in index:
            index[f.check] = len(rules)
            rules.append(_bare_rule(f.check, f.refs))
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {"driver": {"name": "aifabric", "version": tool_version, "rules": rules}},
                "columnKind": "unicodeCodePoints",
                "results": [
                    _result(f, index[f.check], artifacts, default_artifact) for f in findings
                ],
            }
        ],
    }
