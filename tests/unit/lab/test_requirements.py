"""`lab` commands on a machine that lacks root or a package: exit 3 and one line naming the
install command, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from aifabric.errors import EnvironmentProblem
from aifabric.lab import state
from aifabric.lab.state import APT_INSTALL, require_tools

ROOT = Path(__file__).resolve().parents[3]


def test_not_root_is_environment_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(EnvironmentProblem, match="needs root"):
        require_tools(frr=True)


def test_missing_tools_name_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(state.shutil, "which", lambda tool: None)
    monkeypatch.setattr(state, "FRR_BIN", Path("/nonexistent"))
    with pytest.raises(EnvironmentProblem) as err:
        require_tools(frr=True)
    msg = str(err.value)
    assert APT_INSTALL in msg and "frr" in msg and "iperf3" in msg and "\n" not in msg


def test_cli_exit_3_without_tools(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": str(tmp_path)}  # no ip, tc, iptables... on this PATH
    res = subprocess.run(
        [sys.executable, "-m", "aifabric", "lab", "up", str(ROOT / "examples" /
         "s17-case-study-before.yaml"), "--name", "x"],
        capture_output=True, text=True, env=env, check=False,
    )
    assert res.returncode == 3, res.stderr
    assert res.stderr.count("\n") == 1 and "apt-get install -y" in res.stderr
