"""Lab integration tests: real namespaces, veths, FRR and iperf3. They need root and the
packages `.ci/run` installs; elsewhere they skip with the reason. Every test lab has a unique
name and is removed by `lab_down` even when the test fails."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from aifabric.lab.lifecycle import lab_down
from aifabric.lab.state import APT_INSTALL

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"


def _missing() -> str | None:
    if os.geteuid() != 0:
        return "needs root (network namespaces); CI runs it as root"
    for tool in ("ip", "tc", "iptables", "ethtool", "ping", "iperf3", "vtysh"):
        if shutil.which(tool) is None:
            return f"needs {tool}: {APT_INSTALL}"
    if not Path("/usr/lib/frr/bgpd").exists():
        return "needs frr (bgpd, zebra): apt-get install -y frr"
    return None


MISSING = _missing()
needs_lab = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


def new_name(prefix: str = "t") -> str:
    return f"{prefix}{uuid.uuid4().hex[:8]}"


@pytest.fixture
def lab_name() -> Iterator[str]:
    name = new_name()
    try:
        yield name
    finally:
        lab_down(name)
