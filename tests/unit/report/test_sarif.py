"""SARIF 2.1.0 of findings, validated against the OASIS JSON schema.

``jsonschema`` is not installed in the project's environment, so the schema is applied by the
small draft-04 validator below: it implements every keyword the SARIF schema uses (``type``,
``$ref`` to ``#/definitions/...``, ``properties``, ``additionalProperties``, ``required``,
``items``, ``minItems``, ``uniqueItems``, ``enum``, ``minimum``, ``maximum``, ``pattern``,
``anyOf``, ``oneOf``, and the formats ``uri``/``uri-reference``); the test
``test_validator_rejects_broken_logs`` shows it does reject what the schema forbids.
"""

from __future__ import annotations

import json
import operator
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.checks.registry import metadata
from aifabric.findings import Finding
from aifabric.report.sarif import (
    evidence_location,
    findings_to_sarif,
    fingerprint,
    logical_kind,
    path_to_uri,
)

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "fixtures/report/sarif-schema-2.1.0.json"
SCHEMA: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
META = metadata()

# ---------------------------------------------------------------- a minimal draft-04 validator

_TYPES: dict[str, Any] = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}
_URI_CHARS = re.compile(r"^[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


def _is_type(value: Any, name: str) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if name in ("object", "array", "string", "null"):
        return isinstance(value, _TYPES[name])
    if name == "boolean":
        return isinstance(value, bool)
    raise AssertionError(f"unknown type {name}")


def _format_ok(value: str, fmt: str) -> bool:
    if fmt in ("uri", "uri-reference"):
        if not _URI_CHARS.match(value) or re.search(r"%(?![0-9A-Fa-f]{2})", value):
            return False
        return fmt == "uri-reference" or bool(_SCHEME.match(value))
    return True  # date-time etc.: not used by what aifabric writes


def validate(value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """Errors of ``value`` against ``schema`` (a sub-schema of SCHEMA), as ``path: problem``."""
    if "$ref" in schema:
        ref = schema["$ref"]
        assert ref.startswith("#/definitions/"), ref
        return validate(value, SCHEMA["definitions"][ref.rsplit("/", 1)[1]], path)
    errors: list[str] = []
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is_type(value, t) for t in types):
            return [f"{path}: {value!r:.40} is not {types}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} not in {schema['enum']}")
    for key, cmp in (("minimum", operator.ge), ("maximum", operator.le)):
        if key in schema and _is_type(value, "number") and not cmp(value, schema[key]):
            errors.append(f"{path}: {value} violates {key} {schema[key]}")
    if isinstance(value, str):
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append(f"{path}: {value!r} does not match {schema['pattern']}")
        if "format" in schema and not _format_ok(value, schema["format"]):
            errors.append(f"{path}: {value!r} is not a {schema['format']}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            errors.append(f"{path}: fewer than {schema['minItems']} items")
        if schema.get("uniqueItems"):
            dumped = [json.dumps(v, sort_keys=True) for v in value]
            if len(set(dumped)) != len(dumped):
                errors.append(f"{path}: items are not unique")
        if "items" in schema:
            for i, item in enumerate(value):
                errors += validate(item, schema["items"], f"{path}[{i}]")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{path}: missing {key}")
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in props:
                errors += validate(item, props[key], f"{path}.{key}")
            elif extra is False:
                errors.append(f"{path}: unexpected property {key}")
            elif isinstance(extra, dict):
                errors += validate(item, extra, f"{path}.{key}")
    if "anyOf" in schema and not any(not validate(value, s, path) for s in schema["anyOf"]):
        errors.append(f"{path}: matches none of anyOf")
    if "oneOf" in schema and sum(not validate(value, s, path) for s in schema["oneOf"]) != 1:
        errors.append(f"{path}: does not match exactly one of oneOf")
    return errors


def _schema_errors(log: dict[str, Any]) -> list[str]:
    # through JSON and back, as a CI tool would read it
    return validate(json.loads(json.dumps(log)), SCHEMA)


# ---------------------------------------------------------------- known findings

CHECKS = [META[c] for c in ("verify.mtu-path", "verify.pfc-watchdog", "verify.queue-count")]

MTU = META["verify.mtu-path"].finding(
    target="leaf1:Ethernet4 -> spine2:Ethernet0",
    message="MTU 1500 on spine2:Ethernet0 breaks the 9000-byte path",
    expected=9000,
    actual=1500,
    evidence=[
        "configs/spine 2.cfg line 212: mtu 1500",
        "configs/leaf1.json line 7: mtu 9100",
        "configs/spine 2.cfg line 212: mtu 1500",  # repeated: one place only
    ],
    explanation="RoCEv2 needs the same jumbo MTU on every hop",
    fix="set mtu 9216 on spine2:Ethernet0",
)
WATCHDOG = META["verify.pfc-watchdog"].finding(
    target="leaf1",
    message="PFC watchdog is off",
    evidence=["fabric file: leaf1 pfc_watchdog on"],
    explanation="a pause storm is never broken",
    fix="enable it",
    confidence=0.8,
)
QUEUES = META["verify.queue-count"].finding(
    target="12 ports on leaf1",
    message="8 queues",
    evidence=["bundle/host1/mlnx_qos.txt: tc: 3", "some note without a file"],
    explanation="info",
    fix="none",
)


def _log(**kw: Any) -> dict[str, Any]:
    return findings_to_sarif([MTU, WATCHDOG, QUEUES], CHECKS, tool_version="0.5.0", **kw)


def test_log_is_valid_sarif_2_1_0() -> None:
    log = _log()
    assert _schema_errors(log) == []
    assert log["version"] == "2.1.0"
    assert log["$schema"] == SCHEMA["id"]
    (run,) = log["runs"]
    assert run["tool"]["driver"]["name"] == "aifabric"
    assert run["tool"]["driver"]["version"] == "0.5.0"
    assert "informationUri" not in run["tool"]["driver"]


def test_rules_are_the_checks() -> None:
    rules = _log()["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [
        "verify.mtu-path",
        "verify.pfc-watchdog",
        "verify.queue-count",
    ]
    assert [r["name"] for r in rules] == ["VerifyMtuPath", "VerifyPfcWatchdog", "VerifyQueueCount"]
    assert [r["defaultConfiguration"]["level"] for r in rules] == ["error", "warning", "note"]
    assert rules[0]["shortDescription"]["text"] == META["verify.mtu-path"].title
    assert rules[0]["fullDescription"]["text"] == " ".join(
        META["verify.mtu-path"].description.split()
    )
    assert rules[0]["properties"]["tags"] == ["S11", "S21"]


def test_results_levels_locations_and_properties() -> None:
    results = _log()["runs"][0]["results"]
    assert [(r["ruleId"], r["ruleIndex"], r["level"]) for r in results] == [
        ("verify.mtu-path", 0, "error"),
        ("verify.pfc-watchdog", 1, "warning"),
        ("verify.queue-count", 2, "note"),
    ]
    mtu, wd, q = results
    assert mtu["message"]["text"] == (
        "MTU 1500 on spine2:Ethernet0 breaks the 9000-byte path\n"
        "Fix: set mtu 9216 on spine2:Ethernet0"
    )
    (loc,) = mtu["locations"]
    assert loc["physicalLocation"] == {
        "artifactLocation": {"uri": "configs/spine%202.cfg"},
        "region": {"startLine": 212},
    }
    assert loc["logicalLocations"] == [
        {
            "name": "leaf1:Ethernet4 -> spine2:Ethernet0",
            "fullyQualifiedName": "leaf1:Ethernet4 -> spine2:Ethernet0",
            "kind": "link",
        }
    ]
    (related,) = mtu["relatedLocations"]
    assert related["physicalLocation"]["artifactLocation"]["uri"] == "configs/leaf1.json"
    assert related["physicalLocation"]["region"]["startLine"] == 7
    assert related["message"]["text"] == "configs/leaf1.json line 7: mtu 9100"
    assert mtu["properties"]["expected"] == 9000
    assert mtu["properties"]["actual"] == 1500
    assert mtu["properties"]["refs"] == ["S11", "S21"]
    assert "confidence" not in mtu["properties"]

    # "fabric file: ..." names no file: logical location only
    (wloc,) = wd["locations"]
    assert "physicalLocation" not in wloc
    assert wloc["logicalLocations"][0]["kind"] == "device"
    assert wd["properties"]["confidence"] == 0.8

    (qloc,) = q["locations"]
    assert qloc["physicalLocation"] == {"artifactLocation": {"uri": "bundle/host1/mlnx_qos.txt"}}
    assert qloc["logicalLocations"][0]["kind"] == "object"
    assert "relatedLocations" not in q


def test_artifacts_map_names_to_paths() -> None:
    log = _log(artifacts={"fabric file": "fabrics/prod.yaml"})
    assert _schema_errors(log) == []
    wd = log["runs"][0]["results"][1]
    assert wd["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "fabrics/prod.yaml"}
    }


def test_default_artifact_places_results_without_file_evidence() -> None:
    log = _log(default_artifact="fabrics/prod.yaml")
    assert _schema_errors(log) == []
    results = log["runs"][0]["results"]
    # every result has a physical location (GitHub code scanning needs one)
    assert all("physicalLocation" in r["locations"][0] for r in results)
    assert results[1]["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "fabrics/prod.yaml"}
    }
    # file evidence wins over the default
    assert results[0]["locations"][0]["physicalLocation"]["region"] == {"startLine": 212}


def test_fingerprints_are_stable_per_check_and_target() -> None:
    a = _log()["runs"][0]["results"]
    moved = MTU.model_copy(
        update={"evidence": ["configs/spine 2.cfg line 300: mtu 1500"], "message": "reworded"}
    )
    b = findings_to_sarif([moved], CHECKS, tool_version="0.6.0")["runs"][0]["results"]
    assert a[0]["partialFingerprints"] == b[0]["partialFingerprints"]
    fps = {r["partialFingerprints"]["aifabricCheckTarget/v1"] for r in a}
    assert len(fps) == 3
    assert fingerprint("verify.mtu-path", "x") != fingerprint("verify.mtu-path", "y")
    assert fingerprint("a.b", "c") != fingerprint("a.bc", "")  # separator matters
    assert re.fullmatch(r"[0-9a-f]{32}", fingerprint("a.b", "c"))


def test_finding_of_unknown_check_gets_a_rule() -> None:
    stray = MTU.model_copy(update={"check": "diagnose.pfc-storm", "severity": "warning"})
    log = findings_to_sarif([stray], [], tool_version="1")
    assert _schema_errors(log) == []
    (rule,) = log["runs"][0]["tool"]["driver"]["rules"]
    assert rule["id"] == "diagnose.pfc-storm"
    assert log["runs"][0]["results"][0]["ruleIndex"] == 0
    assert log["runs"][0]["results"][0]["level"] == "warning"


def test_all_real_checks_as_rules_validate() -> None:
    log = findings_to_sarif([], list(META.values()), tool_version="0")
    assert _schema_errors(log) == []
    assert len(log["runs"][0]["tool"]["driver"]["rules"]) == len(META)


@pytest.mark.parametrize(
    ("evidence", "where"),
    [
        ("configs/leaf1.json line 212: mtu 1500", ("configs/leaf1.json", 212)),
        ("configs/leaf1.json line 212", ("configs/leaf1.json", 212)),
        (
            "configs/leaf1.json line 3 (platform default, not stated in the file): DSCP map",
            ("configs/leaf1.json", 3),
        ),
        ("bundle/h1/ibv_devinfo.txt: active_mtu: 4096 (5)", ("bundle/h1/ibv_devinfo.txt", None)),
        ("nccl.env: NCCL_IB_TC=106", ("nccl.env", None)),
        ("configs/leaf1.json: a line 5 text", ("configs/leaf1.json", None)),
        ("fabric file: leaf1 mtu_bytes 1500", None),
        ("a-access1: access", None),
        ("spine1.pod2: spine", None),
        ("leaf1.running-config: mtu 1500", ("leaf1.running-config", None)),
        ("just words", None),
    ],
)
def test_evidence_location(evidence: str, where: tuple[str, int | None] | None) -> None:
    assert evidence_location(evidence) == where


@pytest.mark.parametrize(
    ("path", "uri"),
    [
        ("configs/leaf1.json", "configs/leaf1.json"),
        ("./configs/leaf 1#a.json", "configs/leaf%201%23a.json"),
        ("configs\\leaf1.json", "configs/leaf1.json"),
        ("/tmp/a b.cfg", "file:///tmp/a%20b.cfg"),
        ("C:\\cfg\\a.cfg", "file:///C:/cfg/a.cfg"),
        ("conf/µ.cfg", "conf/%C2%B5.cfg"),
    ],
)
def test_path_to_uri(path: str, uri: str) -> None:
    assert path_to_uri(path) == uri
    assert unquote(urlsplit(uri).path).endswith(path.replace("\\", "/").removeprefix("./")[2:])


def test_logical_kind() -> None:
    assert logical_kind("leaf1") == "device"
    assert logical_kind("leaf1:Ethernet4 -> spine2:Ethernet0") == "link"
    assert logical_kind("leaf1:Ethernet4") == "object"
    assert logical_kind("12 ports on leaf1") == "object"


def test_validator_rejects_broken_logs() -> None:
    good = _log()
    bad_level = json.loads(json.dumps(good))
    bad_level["runs"][0]["results"][0]["level"] = "info"
    assert any("level" in e for e in _schema_errors(bad_level))
    bad_line = json.loads(json.dumps(good))
    bad_line["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    assert any("startLine" in e for e in _schema_errors(bad_line))
    bad_uri = json.loads(json.dumps(good))
    bad_uri["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"][
        "uri"
    ] = "configs/spine 2.cfg"
    assert any("uri" in e for e in _schema_errors(bad_uri))
    extra = json.loads(json.dumps(good))
    extra["runs"][0]["results"][0]["severity"] = "error"
    assert any("unexpected property severity" in e for e in _schema_errors(extra))
    assert _schema_errors({"version": "2.1.0"}) == ["$: missing runs"]


# ---------------------------------------------------------------- any text


_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=40) | st.sampled_from(
    ["]]>", "a/b c.cfg line 0: x", "x line 99999999999999999999: y", "../%zz.cfg: q", "\x00\ud800"]
)


_EVIDENCE = (
    _TEXT
    | st.builds(lambda p, n, t: f"{p} line {n}: {t}", _TEXT, st.integers(0, 10**6), _TEXT)
    | st.builds(lambda p, t: f"{p}.cfg: {t}", _TEXT, _TEXT)
)


@settings(max_examples=150, deadline=None)
@given(target=_TEXT, message=_TEXT, evidence=st.lists(_EVIDENCE, max_size=3), fix=_TEXT)
def test_any_text_gives_valid_sarif(
    target: str, message: str, evidence: list[str], fix: str
) -> None:
    f: Finding = META["verify.mtu-path"].finding(
        target=target, message=message, evidence=evidence, explanation=fix, fix=fix
    )
    log = findings_to_sarif([f, f], CHECKS, tool_version="0")
    assert _schema_errors(log) == []
    text = json.dumps(log)
    assert json.loads(text) == json.loads(json.dumps(json.loads(text)))
    r = log["runs"][0]["results"]
    assert r[0]["partialFingerprints"] == r[1]["partialFingerprints"]
    assert r[0]["message"]["text"] == f"{message}\nFix: {fix}"
