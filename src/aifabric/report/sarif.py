"""Findings as SARIF 2.1.0, for code-scanning panes (GitHub code scanning, GitLab, Azure DevOps).

Format: OASIS "Static Analysis Results Interchange Format (SARIF) Version 2.1.0" (errata 01),
JSON schema ``sarif-schema-2.1.0.json`` (oasis-tcs/sarif-spec, ``sarif-2.1/schema/``; a copy is
kept under ``tests/fixtures/report/`` and the tests validate every log against it).

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
* ``locations[0]``: a ``physicalLocation`` when an evidence string names a file (the shapes
  ``Src.__str__`` writes: ``"<file> line <n>: <text>"``, ``"<file> line <n>"``,
  ``"<file>: <text>"``, optionally with `` (platform default, not stated in the file)`` after the
  place), with ``artifactLocation.uri`` (relative path, forward slashes, percent-encoded) and
  ``region.startLine``; always ``logicalLocations`` with the finding's target (``kind`` ``link``
  for ``a -> b``, ``device`` for a bare name, ``object`` for ports and groups). Further evidence
  files go to ``relatedLocations``. ``artifacts`` maps a file name as evidence writes it to the
  path to report (``{"fabric file": "fabrics/prod.yaml"}``); without it the ``"<x>: <text>"``
  shape counts as a file only when ``x`` looks like a path (no blank, and a ``/`` or a config or
  capture suffix such as ``.json``/``.cfg``/``.txt``), so ``"leaf1: access"`` or
  ``"spine1.pod2: spine"`` (device names) are not taken for files.
* ``default_artifact``: the file a result without file evidence is placed in (the fabric file,
  no region). GitHub code scanning refuses results without a ``physicalLocation``
  ("locationFromSarifResult: expected artifact location", Checkmarx/2ms issue 128; sarif-sdk
  rule GH1017), so pass it when the log goes there.
* ``partialFingerprints``: ``aifabricCheckTarget/v1`` = SHA-256 of check id and target
  (first 32 hex digits): stable across runs, line moves and message rewording, so CI tools
  match "the same problem" from run to run (SARIF 2.1.0 section 3.27.17).
* ``properties``: ``severity``, ``expected``, ``actual``, ``refs``, ``evidence``,
  ``explanation``, ``fix`` and ``confidence`` (when given).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from aifabric.findings import Finding
from aifabric.report.junit import CheckInfo

__all__ = [
    "SARIF_SCHEMA",
    "SARIF_VERSION",
    "evidence_location",
    "findings_to_sarif",
    "fingerprint",
    "logical_kind",
    "path_to_uri",
]

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
FINGERPRINT_KEY = "aifabricCheckTarget/v1"

LEVELS = {"error": "error", "warning": "warning", "info": "note"}

_DEFAULT = r"(?: \(platform default, not stated in the file\))?"
_WITH_LINE = re.compile(
    rf"^(?P<file>(?:(?!: ).)+?) line (?P<line>[0-9]+){_DEFAULT}(?:: (?P<text>.*))?$", re.S
)
_NO_LINE = re.compile(rf"^(?P<file>[^:]+?){_DEFAULT}: (?P<text>.*)$", re.S)
_FILE_SUFFIX = re.compile(
    r"\.(?:json|ya?ml|cfg|conf|config|txt|log|env|xml|ini|out|csv|sh|running-config)$", re.I
)
_DEVICE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
_LINK = re.compile(r"\s(?:->|<->|<-|--)\s")
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:/")


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
    evidence: str, artifacts: Mapping[str, str] | None = None
) -> tuple[str, int | None] | None:
    """(file path, 1-based line or None) that an evidence string names, or None.

    >>> evidence_location("configs/leaf1.json line 212: mtu 1500")
    ('configs/leaf1.json', 212)
    >>> evidence_location("bundle/host1/ibv_devinfo.txt: active_mtu: 4096 (5)")
    ('bundle/host1/ibv_devinfo.txt', None)
    >>> evidence_location("fabric file: leaf1:Ethernet4 mtu_bytes 1500") is None
    True
    """
    artifacts = artifacts or {}
    m = _WITH_LINE.match(evidence)
    if m:
        file = m.group("file")
        line = int(m.group("line"))
        return artifacts.get(file, file), (line if line >= 1 else None)
    m = _NO_LINE.match(evidence)
    if m:
        file = m.group("file")
        if file in artifacts:
            return artifacts[file], None
        if not any(c.isspace() for c in file) and ("/" in file or _FILE_SUFFIX.search(file)):
            return file, None
    return None


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


def _rule(meta: CheckInfo) -> dict[str, Any]:
    return {
        "id": meta.id,
        "name": _rule_name(meta.id),
        "shortDescription": {"text": meta.title},
        "fullDescription": {"text": " ".join(meta.description.split())},
        "defaultConfiguration": {"level": LEVELS.get(meta.severity, "warning")},
        "properties": {"tags": list(dict.fromkeys(meta.refs)), "category": meta.category},
    }


def _bare_rule(check_id: str) -> dict[str, Any]:
    return {
        "id": check_id,
        "name": _rule_name(check_id),
        "shortDescription": {"text": check_id},
        "properties": {"tags": []},
    }


def _physical(path: str, line: int | None) -> dict[str, Any]:
    loc: dict[str, Any] = {"artifactLocation": {"uri": path_to_uri(path)}}
    if line is not None:
        loc["region"] = {"startLine": line}
    return loc


def _result(
    f: Finding,
    rule_index: int,
    artifacts: Mapping[str, str] | None,
    default_artifact: str | None,
) -> dict[str, Any]:
    places: list[tuple[str, tuple[str, int | None]]] = []
    for e in f.evidence:
        where = evidence_location(e, artifacts)
        if where is not None and where not in [p for _, p in places]:
            places.append((e, where))
    primary: dict[str, Any] = {}
    if places:
        primary["physicalLocation"] = _physical(*places[0][1])
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
        "evidence": list(f.evidence),
        "explanation": f.explanation,
        "fix": f.fix,
    }
    if f.confidence is not None:
        props["confidence"] = f.confidence
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
            {"id": i, "physicalLocation": _physical(*where), "message": {"text": text}}
            for i, (text, where) in enumerate(places[1:], start=1)
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
            rules.append(_bare_rule(f.check))
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
