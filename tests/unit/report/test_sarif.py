"""SARIF 2.1.0 of findings, validated with ``jsonschema`` against the OASIS JSON schema that
ships in the package (``aifabric/report/schemas/sarif-schema-2.1.0.json``, draft-04).

Formats are checked too (``uri``, and ``uri-reference`` for artifact locations, which draft-04
does not define, so the checker of all known formats is used; the ``format-nongpl`` extra brings
the RFC 3986 validators). ``test_validator_rejects_broken_logs`` shows the check can fail.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import unquote, urlsplit

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.checks.registry import metadata
from aifabric.findings import FABRIC_SOURCE, EvidenceItem, Finding
from aifabric.report.sarif import (
    evidence_location,
    findings_to_sarif,
    fingerprint,
    logical_kind,
    path_to_uri,
    ref_link,
    sarif_schema,
)

SCHEMA: dict[str, Any] = sarif_schema()
VALIDATOR = jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker())
META = metadata()


def _schema_errors(log: dict[str, Any]) -> list[str]:
    """Schema violations of ``log`` read back through JSON (as a CI tool reads it)."""
    doc = json.loads(json.dumps(log))
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in VALIDATOR.iter_errors(doc)
    ]


def test_schema_is_the_oasis_one() -> None:
    jsonschema.Draft4Validator.check_schema(SCHEMA)
    assert SCHEMA["id"].endswith("/sarif-schema-2.1.0.json")
    assert SCHEMA["properties"]["version"]["enum"] == ["2.1.0"]


# ---------------------------------------------------------------- known findings

CHECKS = [META[c] for c in ("verify.mtu-path", "verify.pfc-watchdog", "verify.queue-count")]

MTU = META["verify.mtu-path"].finding(
    target="leaf1:Ethernet4 -> spine2:Ethernet0",
    message="MTU 1500 on spine2:Ethernet0 breaks the 9000-byte path",
    expected=9000,
    actual=1500,
    evidence=[
        EvidenceItem(source="configs/spine 2.cfg", line=212, text="mtu 1500", subject="spine2"),
        EvidenceItem(source="configs/leaf1.json", line=7, text="mtu 9100", subject="leaf1"),
        EvidenceItem(source="configs/spine 2.cfg", line=212, text="mtu 1500"),  # same place
    ],
    explanation="RoCEv2 needs the same jumbo MTU on every hop",
    fix="set mtu 9216 on spine2:Ethernet0",
)
WATCHDOG = META["verify.pfc-watchdog"].finding(
    target="leaf1",
    message="PFC watchdog is off",
    evidence=[EvidenceItem(source=FABRIC_SOURCE, text="leaf1 pfc_watchdog on", subject="leaf1")],
    explanation="a pause storm is never broken",
    fix="enable it",
    confidence=0.8,
)
QUEUES = META["verify.queue-count"].finding(
    target="12 ports on leaf1",
    message="8 queues",
    evidence=[
        EvidenceItem(source="bundle/host1/mlnx_qos.txt", text="tc: 3", subject="host1"),
        "some note without a file",
    ],
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
        "region": {"startLine": 212, "snippet": {"text": "mtu 1500"}},
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
    assert mtu["properties"]["evidence"][0] == {
        "source": "configs/spine 2.cfg",
        "line": 212,
        "text": "mtu 1500",
        "subject": "spine2",
    }
    assert "confidence" not in mtu["properties"]

    # the fabric-file placeholder names no file: logical location only
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
    assert results[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 212


def test_fingerprints_are_stable_per_check_and_target() -> None:
    a = _log()["runs"][0]["results"]
    moved = MTU.model_copy(
        update={
            "evidence": [EvidenceItem(source="configs/spine 2.cfg", line=300, text="mtu 1500")],
            "message": "reworded",
        }
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
    ("item", "where"),
    [
        (
            EvidenceItem(source="configs/leaf1.json", line=212, text="mtu 1500"),
            ("configs/leaf1.json", 212),
        ),
        (
            EvidenceItem(source="bundle/h1/ibv_devinfo.txt", text="x"),
            ("bundle/h1/ibv_devinfo.txt", None),
        ),
        # a text that looks like a place is not parsed: only the fields count
        (EvidenceItem(text="configs/leaf1.json line 212: mtu 1500"), None),
        (EvidenceItem(source=FABRIC_SOURCE, text="leaf1 mtu_bytes 1500"), None),
        (EvidenceItem(source="leaf 1: x.cfg", line=3, text="q"), ("leaf 1: x.cfg", 3)),
    ],
)
def test_evidence_location(item: EvidenceItem, where: tuple[str, int | None] | None) -> None:
    assert evidence_location(item) == where


def test_evidence_location_maps_placeholders() -> None:
    item = EvidenceItem(source=FABRIC_SOURCE, text="leaf1 mtu_bytes 1500")
    assert evidence_location(item, {FABRIC_SOURCE: "f.yaml"}) == ("f.yaml", None)


def test_rule_help_resolves_refs() -> None:
    rules = _log()["runs"][0]["tool"]["driver"]["rules"]
    assert "docs/practices.md#s11" in rules[0]["help"]["text"]
    assert ref_link("S7") == "docs/practices.md#s7"
    assert ref_link("https://example.org/x") == "https://example.org/x"


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
    assert any("severity" in e for e in _schema_errors(extra))
    assert any("'runs' is a required property" in e for e in _schema_errors({"version": "2.1.0"}))


# ---------------------------------------------------------------- any text


_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=40) | st.sampled_from(
    ["]]>", "a/b c.cfg line 0: x", "x line 99999999999999999999: y", "../%zz.cfg: q", "\x00\ud800"]
)


_EVIDENCE = _TEXT | st.builds(
    EvidenceItem,
    source=_TEXT | st.none(),
    line=st.integers(1, 10**6) | st.none(),
    text=_TEXT,
    subject=_TEXT | st.none(),
)


@settings(max_examples=150, deadline=None)
@given(target=_TEXT, message=_TEXT, evidence=st.lists(_EVIDENCE, max_size=3), fix=_TEXT)
def test_any_text_gives_valid_sarif(
    target: str, message: str, evidence: list[EvidenceItem | str], fix: str
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
