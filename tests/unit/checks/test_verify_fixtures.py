"""Every verify fixture under tests/fixtures/verify/<case>/: a fabric file, real device configs
and host captures (each with its source), and the findings that must and must not appear.

``case.yaml``: ``fabric`` (path relative to the case), optional ``configs``, ``bundle``,
``nccl_env``; ``sources`` naming where every device file comes from; ``expect`` (each a
check id with severity and substrings of target and message) and ``absent`` (check id, optional
target substring, optional severity list: no finding of that check of those severities, error
and warning by default, may match).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from aifabric.catalog import load_catalog
from aifabric.cli.verify_cmd import run_verify
from aifabric.design import load_fabric
from aifabric.findings import Finding

ROOT = Path(__file__).resolve().parents[2] / "fixtures" / "verify"
CASES = sorted(p.parent for p in ROOT.glob("*/case.yaml"))


def _case(path: Path) -> dict[str, Any]:
    data = yaml.safe_load((path / "case.yaml").read_text())
    assert isinstance(data, dict)
    return data


def _run(case_dir: Path) -> list[Finding]:
    case = _case(case_dir)
    cat = load_catalog()
    fabric = load_fabric((case_dir / case["fabric"]).resolve(), cat)

    def opt(key: str) -> Path | None:
        return case_dir / case[key] if key in case else None

    run = run_verify(
        fabric, cat, configs=opt("configs"), bundle=opt("bundle"), nccl_env=opt("nccl_env")
    )
    return run.findings


def _matches(f: Finding, want: dict[str, Any]) -> bool:
    return (
        f.check == want["check"]
        and ("severity" not in want or f.severity == want["severity"])
        and want.get("target", "") in f.target
        and want.get("message", "") in f.message
    )


def test_there_are_cases() -> None:
    assert len(CASES) >= 10


@pytest.mark.parametrize("case_dir", CASES, ids=[c.name for c in CASES])
def test_verify_fixture(case_dir: Path) -> None:
    case = _case(case_dir)
    findings = _run(case_dir)
    shown = "\n".join(f"{f.severity} {f.check} [{f.target}] {f.message}" for f in findings)
    for want in case.get("expect", []):
        assert any(_matches(f, want) for f in findings), f"missing {want}\n{shown}"
    for unwanted in case.get("absent", []):
        bad = [
            f
            for f in findings
            if f.check == unwanted["check"]
            and f.severity in unwanted.get("severity", ("error", "warning"))
            and unwanted.get("target", "") in f.target
        ]
        assert not bad, f"unexpected {unwanted}\n{shown}"
    assert case.get("expect") or case.get("absent"), "a case must assert something"


@pytest.mark.parametrize("case_dir", CASES, ids=[c.name for c in CASES])
def test_every_device_file_has_a_source(case_dir: Path) -> None:
    case = _case(case_dir)
    sources = case.get("sources", {})
    for key in ("configs", "bundle"):
        if key not in case:
            continue
        for path in sorted((case_dir / case[key]).rglob("*")):
            if path.is_file():
                rel = str(path.relative_to(case_dir))
                assert sources.get(rel), f"{case_dir.name}: {rel} has no source"
    if "nccl_env" in case:
        assert sources.get(case["nccl_env"]), f"{case_dir.name}: nccl env has no source"
