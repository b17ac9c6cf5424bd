"""Shared fixtures: the real built-in catalog, and a helper to run the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from aifabric.catalog import Catalog, load_catalog

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

S7_DESIGN = (
    "design",
    "--gpus",
    "1024",
    "--gpus-per-server",
    "8",
    "--nic-speed",
    "200G",
    "--switch-ports",
    "64",
    "--switch-speed",
    "400G",
    "--oversubscription",
    "1:1",
    "--layout",
    "tor",
)
"""The seed's S7 worked example as ``aifabric design`` arguments."""


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog()


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def run_cli(*args: str, cwd: Path | None = None) -> CliResult:
    """Run ``python -m aifabric`` as a user would (real process, real exit code)."""
    env = dict(os.environ, COLUMNS="200")
    proc = subprocess.run(
        [sys.executable, "-m", "aifabric", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
        check=False,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def cli() -> Any:
    return run_cli


def stop_process(proc: subprocess.Popen[Any], timeout: float = 10) -> None:
    """Stop a process a test started, by its PID: SIGTERM, then SIGKILL after ``timeout``."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
