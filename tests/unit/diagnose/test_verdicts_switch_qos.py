"""Switch lossless-QoS configs judged on their own (``diagnose.switch-lossless-*``): the real
SONiC, EOS, NX-OS, NVUE and Cumulus captures under tests/fixtures/evidence/, and one real SONiC
config_db (the db-migrator 3.0.1 reference) with its ``pfc_enable`` edited to make it
inconsistent (said in each test)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aifabric.checks.diagnose.derive_switch import SwitchQos
from aifabric.checks.diagnose.engine import diagnose, load_evidence

EVIDENCE = Path(__file__).resolve().parents[2] / "fixtures" / "evidence"
SONIC_REF = EVIDENCE / "sonic-config-db" / "db-migrator-reference-format-3-0-1" / "input.json"
SWITCH_CAPTURES = sorted(
    p
    for kind in ("sonic-config-db", "eos-config", "nxos-config", "nvue", "cumulus-traffic-conf")
    for p in (EVIDENCE / kind).glob("*/input*")
)


def _findings(path: Path) -> dict[str, str]:
    return {f.check: f.severity for f in diagnose(load_evidence([path])).findings}


def _with_pfc(tmp_path: Path, priorities: str) -> Path:
    text = SONIC_REF.read_text(encoding="utf-8").replace(
        '"pfc_enable": "3,4"', f'"pfc_enable": "{priorities}"'
    )
    out = tmp_path / "config_db.json"
    out.write_text(text, encoding="utf-8")
    return out


@pytest.mark.parametrize("path", SWITCH_CAPTURES, ids=[p.parent.name for p in SWITCH_CAPTURES])
def test_real_configs_are_consistent(path: Path) -> None:
    found = _findings(path)
    assert "diagnose.switch-lossless-unreachable" not in found
    assert "diagnose.switch-ecn-thresholds-inverted" not in found


def test_the_reference_config_reads_as_lossless_3_4_with_ecn() -> None:
    ev = load_evidence([SONIC_REF])
    (rec,) = [i.record for i in ev.items if isinstance(i.record, SwitchQos)]
    assert rec.lossless == (3, 4) and rec.trust == "dscp"
    assert rec.ecn_known and set(rec.ecn_queues) >= {3, 4}
    assert rec.lossless_without_ecn == ()


def test_pfc_on_a_priority_no_dscp_reaches(tmp_path: Path) -> None:
    # the AZURE DSCP map sends DSCPs to traffic classes 0-6 only: PFC on 7 protects nothing
    found = _findings(_with_pfc(tmp_path, "7"))
    assert found["diagnose.switch-lossless-unreachable"] == "error"


def test_lossless_priorities_without_the_ecn_profile(tmp_path: Path) -> None:
    # WRED/ECN stays on queues 3 and 4; PFC moved to 5 and 6
    found = _findings(_with_pfc(tmp_path, "5,6"))
    assert found["diagnose.switch-lossless-no-ecn"] == "warning"
    assert "diagnose.switch-lossless-unreachable" not in found
