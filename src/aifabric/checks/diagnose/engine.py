"""The diagnosis engine: evidence files in, ranked findings out (S20, S21).

1. **Load** every path given (files, or bundle directories ``DIR/<host>/<captures>``): each file
   is detected and parsed by the evidence parsers; its text is kept so findings quote lines.
   Files no parser knows are listed, never silently dropped.
2. **Subjects**: records belong to the host or device they describe: the bundle directory
   they sit in, else the ``host`` a log line names, else the file.
3. **Derive** records that need more than one capture, e.g. ``ethtool_delta`` and
   ``rdma_counters_delta`` (counter growth between two snapshots of the same interface),
   registered with :func:`deriver`.
4. **Match** every rule (:mod:`.rules`) per subject (or over all input), and turn each match into
   a :class:`~aifabric.findings.Finding` whose message says the layer (fabric, host,
   configuration, application), whose evidence quotes ``file line N: text``, and whose
   confidence is the rule's. Findings are ranked: errors first, then by confidence.
"""

from __future__ import annotations

import string
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from aifabric.catalog import Catalog
from aifabric.checks.diagnose.rules import Match, Rule, all_rules, op_holds
from aifabric.errors import InputError
from aifabric.evidence import parse_file
from aifabric.evidence.base import ParseResult, Record
from aifabric.findings import Finding
from aifabric.model import Fabric

__all__ = [
    "Diagnosis",
    "Evidence",
    "EvidenceFile",
    "Item",
    "deriver",
    "diagnose",
    "field_value",
    "load_evidence",
]

LAYER_WORDS = {
    "fabric": "Fabric",
    "host": "Host, not the fabric",
    "config": "Configuration",
    "application": "Application, not the network",
}


@dataclass(slots=True)
class EvidenceFile:
    """One parsed capture: where it came from, what it is, its lines (for quoting)."""

    path: str
    kind: str
    result: ParseResult
    lines: list[str]
    subject: str

    def quote(self, line: int | None) -> str:
        if not line or line > len(self.lines):
            return self.path
        return f"{self.path} line {line}: {self.lines[line - 1].strip()[:160]}"


@dataclass(frozen=True, slots=True)
class Item:
    """A record with the file it came from (``None`` for derived records without one line)."""

    record: Record
    file: EvidenceFile | None
    subject: str
    kind: str


@dataclass(slots=True)
class Evidence:
    """Everything given to diagnose: files, records by subject, what was skipped."""

    files: list[EvidenceFile] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
    fabric: Fabric | None = None
    """The fabric file, when given (derivers compare evidence with what it should deliver)."""
    catalog: Catalog | None = None

    def subjects(self) -> dict[str, list[Item]]:
        out: dict[str, list[Item]] = defaultdict(list)
        for item in self.items:
            out[item.subject].append(item)
        return out


# -- loading ----------------------------------------------------------------------------------


def _walk(path: Path) -> Iterator[tuple[Path, str | None]]:
    if path.is_dir():
        for child in sorted(path.iterdir()):
            if child.name.startswith("."):
                continue
            if child.is_dir():
                for sub in sorted(child.rglob("*")):
                    if sub.is_file() and not sub.name.startswith("."):
                        yield sub, child.name
            elif child.is_file():
                yield child, None
    elif path.is_file():
        yield path, None
    else:
        raise InputError(f"{path}: no such file or directory")


def load_evidence(
    paths: Sequence[Path],
    *,
    fabric: Fabric | None = None,
    catalog: Catalog | None = None,
    on_file: Callable[[Path], None] | None = None,
) -> Evidence:
    """Parse every file under ``paths`` (bundle directories give the host by folder name)."""
    ev = Evidence(fabric=fabric, catalog=catalog)
    for root in paths:
        for path, host in _walk(root):
            if on_file is not None:
                on_file(path)
            if path.name in ("meta.yaml", "case.yaml", "README.md", "SOURCES.md"):
                continue
            try:
                result = parse_file(path)
            except InputError as exc:
                ev.skipped.append(f"{path}: {exc}")
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            subject = host or _record_host(result) or path.name
            ef = EvidenceFile(str(path), result.kind, result, text.splitlines(), subject)
            ev.files.append(ef)
            for w in result.warnings[:3]:
                ev.skipped.append(f"{path} line {w.line}: {w.message}")
            for rec in result.records:
                who = host or getattr(rec, "host", None) or subject
                ev.items.append(Item(rec, ef, str(who), result.kind))
    # derivers live in their own modules and register on import
    from aifabric.checks.diagnose import (  # noqa: F401, PLC0415
        derive_counters,
        derive_nccl,
        derive_perf,
    )

    for fn in _DERIVERS:
        ev.items.extend(fn(ev))
    return ev


def _record_host(result: ParseResult) -> str | None:
    hosts = {getattr(r, "host", None) for r in result.records} - {None}
    return str(next(iter(hosts))) if len(hosts) == 1 else None


# -- derived records --------------------------------------------------------------------------

Deriver = Callable[[Evidence], Iterable[Item]]
_DERIVERS: list[Deriver] = []


def deriver(fn: Deriver) -> Deriver:
    """Register a function that adds derived records (needing more than one capture)."""
    _DERIVERS.append(fn)
    return fn


@dataclass(slots=True, kw_only=True)
class CounterDelta(Record):
    """Growth of counters between two snapshots of one interface or RDMA port (second minus
    first, for every counter in both; a counter that went down, a reset, is left out)."""

    record_type: ClassVar[str] = "counter_delta"
    source_type: str
    name: str | None
    counters: dict[str, int] = field(default_factory=dict)
    by_prio: dict[str, dict[int, int]] = field(default_factory=dict)
    """``rx_pause_by_prio`` etc. of ethtool dumps, as deltas per priority."""
    snapshots: int = 2


@dataclass(slots=True, kw_only=True)
class EthtoolDelta(CounterDelta):
    record_type: ClassVar[str] = "ethtool_delta"


@dataclass(slots=True, kw_only=True)
class RdmaDelta(CounterDelta):
    record_type: ClassVar[str] = "rdma_counters_delta"


_BY_PRIO = (
    "rx_pause_by_prio",
    "tx_pause_by_prio",
    "rx_pause_duration_us_by_prio",
    "tx_pause_duration_us_by_prio",
    "discards_by_prio",
)


def _diff(a: dict[Any, Any], b: dict[Any, Any]) -> dict[Any, int]:
    out: dict[Any, int] = {}
    for key, vb in b.items():
        va = a.get(key)
        if isinstance(va, int) and isinstance(vb, int) and vb >= va:
            out[key] = vb - va
    return out


@deriver
def _counter_deltas(ev: Evidence) -> Iterator[Item]:
    groups: dict[tuple[str, str, str | None], list[Item]] = defaultdict(list)
    for item in ev.items:
        rtype = item.record.record_type
        if rtype == "ethtool_stats":
            name = getattr(item.record, "interface", None)
        elif rtype == "rdma_counters":
            dev, port = getattr(item.record, "device", None), getattr(item.record, "port", None)
            name = f"{dev}/{port}" if dev else None
        else:
            continue
        groups[(item.subject, rtype, name)].append(item)
    for (subject, rtype, name), items in groups.items():
        if len(items) < 2:
            continue
        first, last = items[0], items[-1]
        counters = _diff(
            getattr(first.record, "counters", {}), getattr(last.record, "counters", {})
        )
        by_prio = {
            view: _diff(getattr(first.record, view, {}), getattr(last.record, view, {}))
            for view in _BY_PRIO
            if hasattr(last.record, view)
        }
        cls = EthtoolDelta if rtype == "ethtool_stats" else RdmaDelta
        rec = cls(
            line=last.record.line,
            source_type=rtype,
            name=name,
            counters=counters,
            by_prio=by_prio,
            snapshots=len(items),
        )
        yield Item(rec, last.file, subject, last.kind)


# -- matching ---------------------------------------------------------------------------------


def field_value(record: object, path: str) -> Any:
    """Walk ``a.b.3`` through attributes and dict keys (int keys tried for digits)."""
    value: Any = record
    for part in path.split("."):
        if value is None:
            return None
        if isinstance(value, dict):
            if part in value:
                value = value[part]
            elif part.lstrip("-").isdigit() and int(part) in value:
                value = value[int(part)]
            else:
                return None
        else:
            value = getattr(value, part, None)
    return value


ByType = dict[str, list[Item]]


def _by_type(items: Iterable[Item]) -> ByType:
    out: ByType = defaultdict(list)
    for item in items:
        out[item.record.record_type].append(item)
    return out


def _select(items: ByType, m: Match) -> list[Item]:
    out = []
    for item in items.get(m.record, ()):
        if m.kind is not None and item.kind != m.kind:
            continue
        if all(
            op_holds(op, field_value(item.record, path), want)
            for path, tests in m.where.items()
            for op, want in tests.items()
        ):
            out.append(item)
    return out


def _holds(m: Match, found: list[Item]) -> bool:
    if m.count is None:
        return bool(found)
    return all(op_holds(op, len(found), n) for op, n in m.count.items())


@dataclass(slots=True)
class Diagnosis:
    """Findings ranked, and the inputs with nothing wrong."""

    findings: list[Finding]
    evidence: Evidence
    healthy: list[str]


class _Fields(string.Formatter):
    def __init__(self, named: dict[str, Item]) -> None:
        super().__init__()
        self.named = named

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> tuple[Any, str]:
        head, _, rest = field_name.partition(".")
        if head in kwargs and not rest:
            return kwargs[head], field_name
        item = self.named.get(head)
        value = field_value(item.record, rest) if item is not None and rest else None
        return ("?" if value is None else value), field_name


def _render(rule: Rule, subject: str, matched: list[tuple[Match, list[Item]]]) -> str:
    named: dict[str, Item] = {}
    for m, found in matched:
        if m.as_ and found:
            named.setdefault(m.as_, found[0])  # the first match that names it (an `any` order)
    count = len(matched[0][1]) if matched else 0
    try:
        return _Fields(named).format(rule.message, subject=subject, count=count)
    except (ValueError, IndexError, KeyError):
        return rule.message


def _evaluate(rule: Rule, subject: str, own: ByType, everything: ByType) -> Finding | None:
    cond = rule.when
    matched: list[tuple[Match, list[Item]]] = []

    def pool(m: Match) -> ByType:
        return everything if m.scope == "input" else own

    for m in cond.all:
        found = _select(pool(m), m)
        if not _holds(m, found):
            return None
        matched.append((m, found))
    if cond.any:
        any_hit = [(m, f) for m in cond.any if _holds(m, f := _select(pool(m), m))]
        if not any_hit:
            return None
        matched += any_hit
    for m in cond.none:
        if _holds(m, _select(pool(m), m)):
            return None
    quotes: list[str] = []
    for _, found in matched:
        for item in found[:3]:
            q = item.file.quote(item.record.line) if item.file else subject
            if q not in quotes:
                quotes.append(q)
    return Finding(
        check=rule.id,
        severity=rule.severity,
        target=subject,
        message=f"{LAYER_WORDS[rule.layer]}: {_render(rule, subject, matched)}",
        expected=None,
        actual=f"cause in the {rule.layer}" if rule.layer != "config" else "configuration",
        evidence=quotes[:8],
        explanation=f"Cause: {' '.join(rule.cause.split())} {' '.join(rule.explanation.split())}",
        fix=rule.fix,
        refs=list(rule.refs),
        confidence=rule.confidence,
    )


def diagnose(ev: Evidence, rules: Sequence[Rule] | None = None) -> Diagnosis:
    """Run ``rules`` (all shipped rules by default) over ``ev``."""
    rules = all_rules() if rules is None else rules
    findings: list[Finding] = []
    subjects = {name: _by_type(items) for name, items in ev.subjects().items()}
    everything = _by_type(ev.items)
    for rule in rules:
        if rule.scope == "input":
            f = _evaluate(rule, "all input", everything, everything)
            if f is not None:
                findings.append(f)
            continue
        for subject, items in sorted(subjects.items()):
            f = _evaluate(rule, subject, items, everything)
            if f is not None:
                findings.append(f)
    order = {"error": 0, "warning": 1, "info": 2}
    findings.sort(key=lambda f: (order[f.severity], -(f.confidence or 0), f.check, f.target))
    hit = {f.target for f in findings if f.severity != "info"}
    healthy = sorted({ef.subject for ef in ev.files} - hit)
    return Diagnosis(findings, ev, healthy)
