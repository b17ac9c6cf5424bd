"""Where a lab keeps its state, and the small process helpers every lab module uses.

A lab's state lives in ``$AIFABRIC_LAB_DIR/<name>/`` (default ``/run/aifabric/lab``: tmpfs,
gone after a reboot like the namespaces themselves): ``state.json`` (the plan, the phase, the
faults), ``frr/<node>/`` (daemon configs, logs, pid files, vty sockets) and ``traffic/``.
``state.json`` is written before the first namespace exists, so a crash mid-``up`` leaves a
record; ``lab down`` does not rely on it anyway (every namespace carries the lab name).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aifabric.errors import EnvironmentProblem, InputError
from aifabric.lab.plan import LabPlan, plan_from_dict

__all__ = [
    "APT_INSTALL",
    "LabState",
    "lab_dir",
    "lab_root",
    "list_states",
    "load_state",
    "require_tools",
    "run",
    "save_state",
]

APT_INSTALL = "apt-get install -y frr iperf3 iproute2 iptables ethtool iputils-ping"
FRR_BIN = Path("/usr/lib/frr")

_TOOLS = {
    "ip": "iproute2",
    "tc": "iproute2",
    "iptables": "iptables",
    "ethtool": "ethtool",
    "ping": "iputils-ping",
    "iperf3": "iperf3",
    "sysctl": "procps",
}


def lab_root() -> Path:
    return Path(os.environ.get("AIFABRIC_LAB_DIR", "/run/aifabric/lab"))


def lab_dir(name: str) -> Path:
    return lab_root() / name


def require_tools(*, frr: bool, traffic: bool = True) -> None:
    """Exit 3 (EnvironmentProblem) with the install command when root or a tool is missing."""
    if os.geteuid() != 0:
        raise EnvironmentProblem(
            "the lab needs root (network namespaces, veth pairs, iptables): run it as root"
        )
    missing = [
        pkg for tool, pkg in _TOOLS.items()
        if shutil.which(tool) is None and (traffic or tool not in ("iperf3", "ping"))
    ]
    if frr and not all((FRR_BIN / d).exists() for d in ("zebra", "bgpd")):
        missing.append("frr")
    if frr and shutil.which("vtysh") is None:
        missing.append("frr")
    if missing:
        pkgs = " ".join(sorted(set(missing)))
        raise EnvironmentProblem(
            f"the lab needs {pkgs}, not installed here; install with: {APT_INSTALL}"
        )


def run(
    argv: Sequence[str], *, check: bool = True, timeout: float = 60, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run one command, capture its output; a failure with ``check`` is an EnvironmentProblem
    quoting the command and its stderr (the lab's commands fail only when the machine does)."""
    try:
        proc = subprocess.run(
            list(argv), capture_output=True, text=True, timeout=timeout, input=stdin,
            check=False,
        )
    except FileNotFoundError:
        raise EnvironmentProblem(f"{argv[0]} not found; install with: {APT_INSTALL}") from None
    except subprocess.TimeoutExpired:
        raise EnvironmentProblem(f"{' '.join(argv)} did not finish in {timeout:g} s") from None
    if check and proc.returncode != 0:
        err = (proc.stderr or proc.stdout).strip().splitlines()
        raise EnvironmentProblem(
            f"{' '.join(argv)} failed (exit {proc.returncode}): {err[-1] if err else ''}"
        )
    return proc


@dataclass
class LabState:
    """The state file of one lab."""

    plan: LabPlan
    phase: str = "planned"
    fabric_path: str = ""
    faults: list[dict[str, Any]] = field(default_factory=list)
    created: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    converged: bool | None = None
    pids: dict[str, dict[str, int]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format_version": 1,
            "plan": self.plan.to_dict(),
            "phase": self.phase,
            "fabric_path": self.fabric_path,
            "faults": self.faults,
            "created": self.created,
            "timings": self.timings,
            "converged": self.converged,
            "pids": self.pids,
        }


def save_state(state: LabState) -> Path:
    d = lab_dir(state.plan.name)
    d.mkdir(parents=True, exist_ok=True)
    path = d / "state.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state.to_dict(), indent=1), encoding="utf-8")
    tmp.replace(path)
    return path


def load_state(name: str) -> LabState:
    """The state of lab ``name``; InputError (exit 2) when no such lab exists."""
    path = lab_dir(name) / "state.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        known = ", ".join(list_states()) or "none"
        raise InputError(f"no lab named {name!r} (labs: {known})") from None
    except (OSError, ValueError) as exc:
        raise InputError(f"lab {name!r}: state file {path} unreadable: {exc}") from None
    return LabState(
        plan=plan_from_dict(data["plan"]),
        phase=data.get("phase", "unknown"),
        fabric_path=data.get("fabric_path", ""),
        faults=list(data.get("faults", [])),
        created=float(data.get("created", 0.0)),
        timings=dict(data.get("timings", {})),
        converged=data.get("converged"),
        pids=dict(data.get("pids", {})),
    )


def list_states() -> list[str]:
    root = lab_root()
    if not root.is_dir():
        return []
    return sorted(p.parent.name for p in root.glob("*/state.json"))
