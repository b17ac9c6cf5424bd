"""Helpers the verdict tests share."""

from __future__ import annotations

from aifabric.checks.diagnose.verdicts import Verdict


def only(vs: list[Verdict], vid: str) -> Verdict:
    """The one verdict with id ``vid`` (fails, listing them all, when there is not exactly one)."""
    hits = [v for v in vs if v.id == vid]
    assert len(hits) == 1, [f"{v.severity} {v.id}: {v.message}" for v in vs]
    return hits[0]


def problems(vs: list[Verdict]) -> list[str]:
    """Every verdict above info, as 'severity id: message'."""
    return [f"{v.severity} {v.id}: {v.message}" for v in vs if v.severity != "info"]
