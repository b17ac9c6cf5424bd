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
   is not itself ambiguous (its check is in no family, and it is not a catch-all entry such as
   ``nccl.warn``, which names a cause for any uncatalogued warning), e.g. an interface MTU below the
   fabric's (``fabric.mtu``) beside a retry-exceeded completion; or the input shows the state
   the cause needs though no finding names it (a ``supported_by`` predicate of
   :data:`SUPPORTS`, e.g. ``UCX_IB_GID_INDEX=0`` on a RoCE port selects a link-local GID);
2. **ruled out**: a record of the input shows the state the cause needs is absent (a
   ``ruled_out_by`` predicate of :data:`PREDICATES`, e.g. ``ulimit -a`` showing max locked
   memory unlimited rules out ``host.memlock``);
3. otherwise **possible**, in the family's order with the finding's own cause first; a family
   whose ``lead`` is ``family`` keeps its own order instead (its first candidate is the most
   common cause of the message in real incidents, and ``basis`` says how that was counted).

The predicates live in :mod:`aifabric.checks.diagnose.differential_evidence`.

The finding then names the first supported candidate, else the first not ruled out, as its
cause, and lists the others in ``alternatives`` (supported, possible, ruled out) with their
checks, so the user sees every cause the message can have and how to tell them apart.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Literal

from pydantic import Field, model_validator

from aifabric.checks.diagnose.differential_evidence import PREDICATES, SUPPORTS, InputView
from aifabric.checks.diagnose.signatures import LAYER_WORDS, all_causes, signature_by_id
from aifabric.findings import Alternative, Finding
from aifabric.model import StrictModel, Tup
from aifabric.yamlfile import read_yaml_text, validate_data

if TYPE_CHECKING:
    from aifabric.checks.diagnose.differential_evidence import Predicate
    from aifabric.checks.diagnose.engine import Evidence

__all__ = [
    "PREDICATES",
    "SUPPORTS",
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
    supported_by: Tup[str] = ()

    @model_validator(mode="after")
    def _known(self) -> Candidate:
        if self.cause not in all_causes():
            raise ValueError(f"unknown cause class {self.cause!r} (checks/causes.yaml)")
        for name in self.ruled_out_by:
            if name not in PREDICATES:
                raise ValueError(f"unknown predicate {name!r} (differential_evidence.PREDICATES)")
        for name in self.supported_by:
            if name not in SUPPORTS:
                raise ValueError(f"unknown predicate {name!r} (differential_evidence.SUPPORTS)")
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
    lead: Literal["finding", "family"] = "finding"
    """``finding``: the finding's own cause ranks first among the possible candidates;
    ``family``: the family's order stands (its first candidate is the most common cause of the
    message in real incidents, ``basis`` says which)."""
    basis: str | None = None

    @model_validator(mode="after")
    def _distinct(self) -> Differential:
        causes = [c.cause for c in self.candidates]
        if len(set(causes)) != len(causes):
            raise ValueError(f"{self.id}: a cause is listed twice")
        if self.lead == "family" and not self.basis:
            raise ValueError(f"{self.id}: lead: family needs a basis (why the order stands)")
        if self.basis:
            self.__dict__["basis"] = " ".join(self.basis.split())
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


# -- ranking ------------------------------------------------------------------------------------

_STATUS_ORDER = {"supported": 0, "possible": 1, "ruled out": 2}


@cache
def _catch_all() -> frozenset[str]:
    """Checks of catalogue entries marked ``catch_all`` (a default cause, not a reading of the
    message): their findings support no candidate."""
    return frozenset(f"signature.{sid}" for sid, (sig, _) in signature_by_id().items()
                     if sig.catch_all)  # fmt: skip


def _supporters(
    findings: Iterable[Finding], covered: dict[str, Differential]
) -> dict[str, Finding]:
    """The first unambiguous error/warning finding naming each cause."""
    out: dict[str, Finding] = {}
    catch_all = _catch_all()
    for f in findings:
        if f.cause and f.severity != "info" and f.check not in covered and f.cause not in out:
            if f.check.startswith("diagnose.unrecognised") or f.check in catch_all:
                continue
            out[f.cause] = f
    return out


def apply_differentials(findings: list[Finding], ev: Evidence) -> list[Finding]:
    """``findings`` with every finding that a family covers re-ranked (module doc)."""
    covered = differential_by_check()
    if not any(f.check in covered for f in findings):
        return findings
    support = _supporters(findings, covered)
    said: dict[str, str | None] = {}
    view = InputView(ev)

    def first_said(names: Iterable[str], table: dict[str, Predicate]) -> str | None:
        for name in names:
            if name not in said:
                said[name] = table[name](view)
            if said[name]:
                return said[name]
        return None

    out: list[Finding] = []
    for f in findings:
        fam = covered.get(f.check)
        if fam is None or f.cause is None:
            out.append(f)
            continue
        ranked: list[Alternative] = []
        order = fam.candidates if fam.lead == "family" else sorted(
            fam.candidates, key=lambda c: c.cause != f.cause)  # fmt: skip
        for c in order:
            backer = support.get(c.cause)
            shown = None if backer is not None else first_said(c.supported_by, SUPPORTS)
            why = None if backer is not None or shown else first_said(c.ruled_out_by, PREDICATES)
            if backer is not None:
                alt = Alternative(
                    cause=c.cause, status="supported", check=c.check,
                    because=f"{backer.check} on {backer.target}: {backer.message}"[:300],
                )  # fmt: skip
            elif shown:
                alt = Alternative(cause=c.cause, status="supported", check=c.check, because=shown)
            elif why:
                alt = Alternative(cause=c.cause, status="ruled out", check=c.check, because=why)
            else:
                alt = Alternative(cause=c.cause, status="possible", check=c.check)
            ranked.append(alt)
        ranked.sort(key=lambda a: _STATUS_ORDER[a.status])  # stable: family order within
        top = ranked[0] if ranked[0].status != "ruled out" else None
        cause = top.cause if top is not None else f.cause
        rest = [a for a in ranked if a.cause != cause]
        if top is not None and top.status == "supported" and top.because:
            backer = support.get(top.cause)
            reason = "supported by " + (backer.check if backer is not None else top.because)
        elif top is not None and top.status == "possible" and fam.lead == "family":
            reason = "the most common cause of this message"
        else:
            reason = "the others are ruled out"
        out.append(_renamed(f, fam, cause, reason, rest))
    return out


def _renamed(
    f: Finding, fam: Differential, cause: str, reason: str, rest: list[Alternative]
) -> Finding:
    """``f`` naming ``cause``, with the other candidates as alternatives."""
    causes = all_causes()
    possible = [causes[a.cause].title.lower() for a in rest if a.status != "ruled out"]
    note = f" Differential '{fam.id}': {fam.meaning}"
    if fam.basis and fam.lead == "family":
        note += f" Order: {fam.basis}"
    if cause == f.cause and reason.startswith("supported by "):
        note += f" The input backs this cause: {reason}."
    if possible:
        note += f" Also possible: {'; '.join(possible)} (see alternatives for the checks)."
    update: dict[str, object] = {
        "alternatives": rest,
        "explanation": f"{f.explanation}{note}",
        "refs": list(dict.fromkeys([*f.refs, *fam.sources])),
    }
    if cause != f.cause:
        layer = causes[cause].layer
        message = f.message
        if f.cause in causes:  # the layer words the message opened with follow the new cause
            head = f"{LAYER_WORDS[causes[f.cause].layer]}: "
            if message.startswith(head):
                message = f"{LAYER_WORDS[layer]}: {message[len(head):]}"
        update |= {
            "cause": cause,
            "message": f"{message}; most likely {causes[cause].title.lower()} ({reason})"[:600],
            "actual": f"cause in the {layer}" if layer != "config" else "configuration",
        }
    return f.model_copy(update=update)
