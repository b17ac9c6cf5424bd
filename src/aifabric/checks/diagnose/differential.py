"""Differential diagnosis: the messages several causes print alike, re-ranked by the input.

A catalogue entry or a rule names one cause class, the one its message most often has. Some
messages are printed alike by several causes: an RDMA request never acknowledged
(``IBV_WC_RETRY_EXC_ERR``) is a lossy path, a wrong GID index, an MTU that does not fit, a link
that went down or a peer that died; NCCL's ``unhandled system error`` in a container is
``/dev/shm``, the locked-memory limit or missing RDMA devices as often as anything else. The
families of such messages, with every cause they can have and the check that tells them apart,
are data (``checks/differentials.yaml``), each citing where the ambiguity is documented.

For a finding whose check a family covers, :func:`apply_differentials` ranks the candidates
with what the same input shows:

1. **supported**: another finding of the diagnosis names the candidate's cause, and that finding
   is not itself ambiguous (its check is in no family), e.g. an interface MTU below the
   fabric's (``fabric.mtu``) beside a retry-exceeded completion;
2. **ruled out**: a record of the input shows the state the cause needs is absent (a
   ``ruled_out_by`` predicate of :data:`PREDICATES`, e.g. ``ulimit -a`` showing max locked
   memory unlimited rules out ``host.memlock``);
3. otherwise **possible**, in the family's order with the finding's own cause first.

The finding then names the first supported candidate, else the first not ruled out, as its
cause, and lists the others in ``alternatives`` (supported, possible, ruled out) with their
checks, so the user sees every cause the message can have and how to tell them apart.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

from pydantic import Field, model_validator

from aifabric.checks.diagnose.signatures import all_causes
from aifabric.checks.diagnose.verdicts_host_state import PEER_MEMORY_MODULES
from aifabric.evidence.host_limits import ResourceLimit
from aifabric.evidence.infiniband import GidEntry, IbstatPort, IbvGid, IbvPort
from aifabric.evidence.kernel_modules import KernelModule
from aifabric.evidence.nccl_log import GdrStatus, NcclEnv
from aifabric.evidence.rdma_tools import IbvDevicesList, RdmaLink
from aifabric.evidence.sysfs_rdma import SysfsRdmaDevices
from aifabric.findings import Alternative, Finding
from aifabric.model import StrictModel, Tup
from aifabric.yamlfile import read_yaml_text, validate_data

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence

__all__ = [
    "PREDICATES",
    "Candidate",
    "Differential",
    "all_differentials",
    "apply_differentials",
    "differential_by_check",
]


class Candidate(StrictModel):
    """One cause a family's message can have, and how to confirm or rule it out."""

    cause: str
    check: str
    ruled_out_by: Tup[str] = ()

    @model_validator(mode="after")
    def _known(self) -> Candidate:
        if self.cause not in all_causes():
            raise ValueError(f"unknown cause class {self.cause!r} (checks/causes.yaml)")
        for name in self.ruled_out_by:
            if name not in PREDICATES:
                raise ValueError(f"unknown predicate {name!r} (differential.PREDICATES)")
        self.__dict__["check"] = " ".join(self.check.split())
        return self


class Differential(StrictModel):
    """A family of messages that several causes print alike."""

    id: str = Field(pattern=r"^[a-z0-9\-]+$")
    title: str
    meaning: str
    sources: Tup[str] = Field(min_length=1)
    applies_to: Tup[str] = Field(min_length=1)
    candidates: Tup[Candidate] = Field(min_length=2)

    @model_validator(mode="after")
    def _distinct(self) -> Differential:
        causes = [c.cause for c in self.candidates]
        if len(set(causes)) != len(causes):
            raise ValueError(f"{self.id}: a cause is listed twice")
        for src in self.sources:
            if not src.startswith("https://"):
                raise ValueError(f"{self.id}: sources are public URLs, not {src!r}")
        self.__dict__["meaning"] = " ".join(self.meaning.split())
        return self


class _File(StrictModel):
    differentials: Tup[Differential]


@cache
def all_differentials() -> tuple[Differential, ...]:
    """Every family of ``checks/differentials.yaml``; a check id belongs to one family only."""
    entry = resources.files("aifabric.checks").joinpath("differentials.yaml")
    name = "checks/differentials.yaml"
    text = entry.read_text(encoding="utf-8")
    data = validate_data(_File, read_yaml_text(text, file=name), file=name, text=text)
    seen: dict[str, str] = {}
    for d in data.differentials:
        for check in d.applies_to:
            if check in seen:
                raise ValueError(f"{name}: {check} is in {seen[check]} and {d.id}")
            seen[check] = d.id
    return data.differentials


@cache
def differential_by_check() -> dict[str, Differential]:
    """The family of each finding check id it covers."""
    return {check: d for d in all_differentials() for check in d.applies_to}


# -- what rules a cause out ---------------------------------------------------------------------

Predicate = Callable[["Evidence"], str | None]
"""Reads the input; returns why the cause is ruled out (quoting the record), or None."""


def _where(ev: Evidence, record: object) -> str:
    for item in ev.items:
        if item.record is record and item.file is not None:
            line = getattr(record, "line", None)
            return f" ({item.file.path}{f' line {line}' if line else ''})"
    return ""


def _records(ev: Evidence, kind: type[object] | tuple[type[object], ...]) -> list[object]:
    return [item.record for item in ev.items if isinstance(item.record, kind)]


def _memlock_unlimited(ev: Evidence) -> str | None:
    """Every ``ulimit`` locked-memory line of the input reads unlimited."""
    limits = [r for r in _records(ev, ResourceLimit) if isinstance(r, ResourceLimit)]
    memlock = [r for r in limits if r.option == "l"]
    if not memlock or not all(r.unlimited for r in memlock):
        return None
    return f"ulimit shows max locked memory unlimited{_where(ev, memlock[0])}"


def _port_state(rec: object) -> tuple[str, bool] | None:
    """(port name, active) of a port-state record."""
    if isinstance(rec, IbvPort):
        return f"{rec.hca_id} port {rec.port}", rec.active
    if isinstance(rec, IbstatPort):
        return f"{rec.ca} port {rec.port}", rec.active  # State Active and LinkUp
    if isinstance(rec, RdmaLink):
        state = (rec.state or "").upper()
        return f"{rec.device}/{rec.port}", state == "ACTIVE"
    return None


def _ports_active(ev: Evidence) -> str | None:
    """The input shows RDMA port states and every one is active."""
    states = [s for r in _records(ev, (IbvPort, IbstatPort, RdmaLink)) if (s := _port_state(r))]
    if not states or not all(active for _, active in states):
        return None
    names = ", ".join(name for name, _ in states[:3]) + (" ..." if len(states) > 3 else "")
    return f"every RDMA port in the input is active ({names}); the remote side is not shown"


def _rdma_device_visible(ev: Evidence) -> str | None:
    """The input lists RDMA devices (``ibv_devinfo``, ``ibv_devices``, ``ibstat``, ``rdma
    link``, ``ls /sys/class/infiniband``)."""
    for rec in _records(ev, (IbvPort, IbstatPort, RdmaLink, IbvDevicesList, SysfsRdmaDevices)):
        if isinstance(rec, SysfsRdmaDevices):
            if rec.devices:
                return f"/sys/class/infiniband lists {rec.devices[0]}{_where(ev, rec)}"
            continue
        if isinstance(rec, IbvDevicesList):
            if rec.devices:
                return f"ibv_devices lists {rec.devices[0].name}{_where(ev, rec)}"
            continue
        state = _port_state(rec)
        if state is not None:
            return f"the input shows RDMA device {state[0]}{_where(ev, rec)}"
    return None


def _gdr_enabled(ev: Evidence) -> str | None:
    """NCCL reports GPUDirect RDMA (or DMA-BUF) enabled, or a peer-memory module is loaded."""
    for rec in _records(ev, GdrStatus):
        if isinstance(rec, GdrStatus) and rec.enabled:
            what = "DMA-BUF" if rec.feature == "dmabuf" else "GPU Direct RDMA"
            return f"NCCL reports {what} enabled{_where(ev, rec)}"
    for rec in _records(ev, KernelModule):
        if isinstance(rec, KernelModule) and rec.name in PEER_MEMORY_MODULES:
            return f"{rec.name} is loaded{_where(ev, rec)}"
    return None


def _roce_v2_gid_selected(ev: Evidence) -> str | None:
    """NCCL_IB_GID_INDEX selects a GID that the input shows is RoCE v2 with a routable address."""
    index = None
    for rec in _records(ev, NcclEnv):
        if isinstance(rec, NcclEnv) and rec.name == "NCCL_IB_GID_INDEX":
            try:
                index = int(rec.value.split()[0].rstrip("."))
            except (ValueError, IndexError):
                return None
    if index is None:
        return None
    gids = [r for r in _records(ev, (GidEntry, IbvGid)) if getattr(r, "index", None) == index]
    if not gids:
        return None
    for g in gids:
        v2 = getattr(g, "roce_version", None) == 2
        gid = str(getattr(g, "gid", "")).lower()
        if not v2 or gid.startswith("fe80") or getattr(g, "link_local", False):
            return None
    return (
        f"NCCL_IB_GID_INDEX={index} and the input's GID table shows index {index} is RoCE v2 "
        f"with a routable address{_where(ev, gids[0])}"
    )


PREDICATES: dict[str, Predicate] = {
    "memlock-unlimited": _memlock_unlimited,
    "ports-active": _ports_active,
    "rdma-device-visible": _rdma_device_visible,
    "gdr-enabled": _gdr_enabled,
    "roce-v2-gid-selected": _roce_v2_gid_selected,
}
"""``ruled_out_by`` names: each reads the input and says why a cause is ruled out."""


# -- ranking ------------------------------------------------------------------------------------

_STATUS_ORDER = {"supported": 0, "possible": 1, "ruled out": 2}


def _supporters(
    findings: Iterable[Finding], covered: dict[str, Differential]
) -> dict[str, Finding]:
    """The first unambiguous error/warning finding naming each cause."""
    out: dict[str, Finding] = {}
    for f in findings:
        if f.cause and f.severity != "info" and f.check not in covered and f.cause not in out:
            if f.check.startswith("diagnose.unrecognised"):
                continue
            out[f.cause] = f
    return out


def apply_differentials(findings: list[Finding], ev: Evidence) -> list[Finding]:
    """``findings`` with every finding that a family covers re-ranked (module doc)."""
    covered = differential_by_check()
    if not any(f.check in covered for f in findings):
        return findings
    support = _supporters(findings, covered)
    ruled: dict[str, str | None] = {}

    def ruled_out(names: Iterable[str]) -> str | None:
        for name in names:
            if name not in ruled:
                ruled[name] = PREDICATES[name](ev)
            if ruled[name]:
                return ruled[name]
        return None

    out: list[Finding] = []
    for f in findings:
        fam = covered.get(f.check)
        if fam is None or f.cause is None:
            out.append(f)
            continue
        ranked: list[Alternative] = []
        for c in sorted(fam.candidates, key=lambda c: c.cause != f.cause):
            backer = support.get(c.cause)
            why = None if backer is not None else ruled_out(c.ruled_out_by)
            if backer is not None:
                alt = Alternative(
                    cause=c.cause, status="supported", check=c.check,
                    because=f"{backer.check} on {backer.target}: {backer.message}"[:300],
                )  # fmt: skip
            elif why:
                alt = Alternative(cause=c.cause, status="ruled out", check=c.check, because=why)
            else:
                alt = Alternative(cause=c.cause, status="possible", check=c.check)
            ranked.append(alt)
        ranked.sort(key=lambda a: _STATUS_ORDER[a.status])  # stable: family order within
        top = ranked[0] if ranked[0].status != "ruled out" else None
        cause = top.cause if top is not None else f.cause
        rest = [a for a in ranked if a.cause != cause]
        out.append(_renamed(f, fam, cause, top, rest))
    return out


def _renamed(
    f: Finding, fam: Differential, cause: str, top: Alternative | None, rest: list[Alternative]
) -> Finding:
    """``f`` naming ``cause``, with the other candidates as alternatives."""
    causes = all_causes()
    possible = [causes[a.cause].title.lower() for a in rest if a.status != "ruled out"]
    note = f" Differential '{fam.id}': {fam.meaning}"
    if possible:
        note += f" Also possible: {'; '.join(possible)} (see alternatives for the checks)."
    update: dict[str, object] = {
        "alternatives": rest,
        "explanation": f"{f.explanation}{note}",
        "refs": list(dict.fromkeys([*f.refs, *fam.sources])),
    }
    if cause != f.cause:
        layer = causes[cause].layer
        if top is not None and top.status == "supported" and top.because:
            reason = "supported by " + top.because.split(":", 1)[0]
        else:
            reason = "the others are ruled out"
        update |= {
            "cause": cause,
            "message": f"{f.message}; most likely {causes[cause].title.lower()} ({reason})"[:600],
            "actual": f"cause in the {layer}" if layer != "config" else "configuration",
        }
    return f.model_copy(update=update)
