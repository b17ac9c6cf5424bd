"""The metric catalogue: what the exporter publishes and which raw counters feed each metric.

``monitor/catalogue.yaml`` (packaged) lists every metric with its Prometheus name, help, unit,
type, dashboard group, seed references, label set, whether it is on by default, and per source
(``ethtool``, ``rdma``, ``link``, ``netstat``, ``qdisc``, ``module``, ``nccl_log``, ``sonic``)
the raw counter names that feed it, as regular expressions matched against the whole raw name.
A user file given with ``--catalogue`` is validated the same way and replaces the packaged one.

Validation enforces the Prometheus naming practice (https://prometheus.io/docs/practices/naming/):
``aifabric_`` prefix, snake case, counters end in ``_total`` and gauges do not, the unit appears
as a suffix, and every label a rule can produce (its named groups and ``set`` keys) is declared in
the metric's ``labels``. A raw name is mapped by :class:`Mapper`, memoised per name: a fleet has
few distinct drivers, so the regular expressions run once per counter name, not once per scrape.

Cardinality is bounded by construction: the catalogue maps no per-queue or per-channel driver
counter (mlx5 ``rx0_packets``, bnxt ``[3]: rx_ucast_packets``), metrics that multiply series are
``default: false``, and :class:`Selection` applies the user's allow and deny lists.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from aifabric.errors import InputError
from aifabric.yamlfile import read_text, read_yaml_text, validate_data

__all__ = [
    "SOURCES",
    "Catalogue",
    "Mapped",
    "Mapper",
    "MatchRule",
    "MetricSpec",
    "Selection",
    "load_catalogue",
]

SOURCES = ("ethtool", "rdma", "link", "netstat", "qdisc", "module", "nccl_log", "sonic")
"""The collectors a catalogue rule may name (:mod:`aifabric.monitor.sources`, :mod:`.sonic`)."""

_NAME = re.compile(r"^aifabric_[a-z][a-z0-9_]*[a-z0-9]$")
_LABEL = re.compile(r"^[a-z_][a-z0-9_]*$")
_UNIT_SUFFIX = {
    "seconds": "_seconds",
    "bytes": "_bytes",
    "bits": "_bits",
    "dbm": "_dbm",
    "amperes": "_amperes",
    "celsius": "_celsius",
    "volts": "_volts",
}
"""Base units whose name must appear as a suffix (before ``_total``); count units (frames,
packets, errors) are said by the name's noun and are not suffixes in Prometheus practice."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class MatchRule(_Model):
    """One raw counter name pattern feeding a metric."""

    match: str
    set: dict[str, str] = Field(default_factory=dict)
    scale: float = 1.0

    @field_validator("match")
    @classmethod
    def _compiles(cls, v: str) -> str:
        try:
            re.compile(v)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        return v

    def groups(self) -> builtins.set[str]:
        return builtins.set(re.compile(self.match).groupindex)


class MetricSpec(_Model):
    """One metric of the catalogue."""

    name: str
    help: str
    type: Literal["counter", "gauge"]
    unit: str
    group: str
    seed: list[str] = Field(default_factory=list)
    labels: list[str]
    default: bool = True
    sources: dict[str, list[MatchRule]]

    @model_validator(mode="after")
    def _naming(self) -> MetricSpec:
        if not _NAME.match(self.name):
            raise ValueError(f"{self.name}: metric names are aifabric_ + snake case")
        if self.type == "counter" and not self.name.endswith("_total"):
            raise ValueError(f"{self.name}: a counter's name ends in _total")
        if self.type == "gauge" and self.name.endswith("_total"):
            raise ValueError(f"{self.name}: a gauge's name does not end in _total")
        suffix = _UNIT_SUFFIX.get(self.unit)
        stem = self.name.removesuffix("_total")
        if suffix is not None and not stem.endswith(suffix):
            raise ValueError(f"{self.name}: unit {self.unit} must be the suffix {suffix}")
        bad = [lab for lab in self.labels if not _LABEL.match(lab) or lab.startswith("__")]
        if bad:
            raise ValueError(f"{self.name}: bad label names {bad}")
        if "node" not in self.labels:
            raise ValueError(f"{self.name}: every metric carries the node label")
        unknown = sorted(set(self.sources) - set(SOURCES))
        if unknown:
            raise ValueError(f"{self.name}: unknown sources {unknown} (known: {list(SOURCES)})")
        for src, rules in self.sources.items():
            for rule in rules:
                extra = (rule.groups() | set(rule.set)) - set(self.labels)
                if extra:
                    raise ValueError(
                        f"{self.name}: {src} rule {rule.match!r} gives labels {sorted(extra)} "
                        "not declared in labels"
                    )
        return self


class _CatalogueFile(_Model):
    metrics: list[MetricSpec]


@dataclass(frozen=True, slots=True)
class Mapped:
    """Where one raw counter goes: metric, the labels its name gave, the scale to apply."""

    metric: str
    labels: tuple[tuple[str, str], ...]
    scale: float


class Mapper:
    """Raw counter name → :class:`Mapped` targets for one source, memoised per name.

    All rules of a source are joined into one alternation per metric so a miss (the common case:
    most driver counters feed no metric) costs one regex call per metric, once per name. The
    first matching rule of a metric wins (rules are listed specific-first); one raw name may
    feed several metrics (SONiC queue bytes and drops feed different ones).
    """

    __slots__ = ("_cache", "_rules", "source")

    def __init__(self, source: str, metrics: Sequence[MetricSpec]) -> None:
        self.source = source
        self._rules: list[tuple[MetricSpec, list[tuple[re.Pattern[str], MatchRule]]]] = [
            (m, [(re.compile(r.match), r) for r in m.sources[source]])
            for m in metrics
            if source in m.sources
        ]
        self._cache: dict[str, tuple[Mapped, ...]] = {}

    def map(self, raw: str) -> tuple[Mapped, ...]:
        hit = self._cache.get(raw)
        if hit is not None:
            return hit
        out: list[Mapped] = []
        for metric, rules in self._rules:
            for rx, rule in rules:
                m = rx.fullmatch(raw)
                if m is None:
                    continue
                labels = dict(rule.set)
                labels.update({k: v for k, v in m.groupdict().items() if v is not None})
                out.append(Mapped(metric.name, tuple(sorted(labels.items())), rule.scale))
                break
        got = tuple(out)
        if len(self._cache) < 100_000:
            self._cache[raw] = got
        return got

    def canonical(self, metric: str, labels: Mapping[str, str]) -> str | None:
        """The first rule's raw name for ``metric`` with ``labels`` filled into its named groups
        (``rx_prio3_pause`` for PFC frames rx priority 3), or ``None`` when the first rule is not
        a plain template. Turns Prometheus series back into driver counters for diagnosis."""
        for spec, rules in self._rules:
            if spec.name != metric:
                continue
            for _rx, rule in rules:
                if any(labels.get(k) != v for k, v in rule.set.items()):
                    continue
                raw = _fill(rule.match, labels)
                if raw is not None:
                    return raw
        return None


_GROUP = re.compile(r"\(\?P<(\w+)>[^()]*\)")
_OPTIONAL = re.compile(r"\(\?:[^()]*\)\?")


def _fill(pattern: str, labels: Mapping[str, str]) -> str | None:
    """A regex that is a literal apart from named groups and optional ``(?:...)?`` parts, with
    the groups replaced by label values (``None`` if anything else is left)."""
    missing: list[str] = []

    def sub(m: re.Match[str]) -> str:
        v = labels.get(m.group(1))
        if v is None:
            missing.append(m.group(1))
            return ""
        return re.escape(v)

    text = _OPTIONAL.sub("", _GROUP.sub(sub, pattern))
    if missing or re.search(r"[\[\]()*+?{}|^$]", text.replace("\\.", "")):
        return None
    return text.replace("\\", "")


@dataclass(frozen=True, slots=True)
class Selection:
    """Which metrics are published: defaults, then ``allow`` (regexes over metric names; an
    allowed metric is on even if ``default: false``), then ``deny`` (always wins)."""

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()

    def enabled(self, spec: MetricSpec) -> bool:
        if any(re.fullmatch(d, spec.name) for d in self.deny):
            return False
        return spec.default or any(re.fullmatch(a, spec.name) for a in self.allow)

    def check(self, names: Iterable[str]) -> list[str]:
        """Patterns of allow/deny that match no metric (likely typos), for a warning."""
        names = list(names)
        bad = []
        for pattern in (*self.allow, *self.deny):
            try:
                rx = re.compile(pattern)
            except re.error as exc:
                raise InputError(
                    f"--allow/--deny {pattern!r}: not a regular expression: {exc}"
                ) from None
            if not any(rx.fullmatch(n) for n in names):
                bad.append(pattern)
        return bad


@dataclass
class Catalogue:
    """The loaded catalogue with one :class:`Mapper` per source."""

    metrics: list[MetricSpec]
    path: str
    _mappers: dict[str, Mapper] = field(default_factory=dict)
    by_name: dict[str, MetricSpec] = field(init=False)

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for m in self.metrics:
            if m.name in seen:
                raise InputError(f"{self.path}: metric {m.name} is listed twice")
            seen.add(m.name)
        self.by_name = {m.name: m for m in self.metrics}

    def mapper(self, source: str) -> Mapper:
        got = self._mappers.get(source)
        if got is None:
            got = self._mappers[source] = Mapper(source, self.metrics)
        return got

    def selected(self, selection: Selection) -> Catalogue:
        """The catalogue restricted to the metrics ``selection`` publishes."""
        return Catalogue([m for m in self.metrics if selection.enabled(m)], self.path)

    def groups(self) -> list[str]:
        """Dashboard groups in catalogue order."""
        return list(dict.fromkeys(m.group for m in self.metrics))


@cache
def _packaged() -> Catalogue:
    text = resources.files("aifabric").joinpath("monitor/catalogue.yaml").read_text("utf-8")
    return _parse(text, "monitor/catalogue.yaml")


def _parse(text: str, name: str) -> Catalogue:
    model = validate_data(_CatalogueFile, read_yaml_text(text, file=name), file=name, text=text)
    return Catalogue(list(model.metrics), name)


def load_catalogue(path: Path | None = None) -> Catalogue:
    """The packaged catalogue, or a user's file in the same format (``--catalogue FILE``)."""
    if path is None:
        return _packaged()
    return _parse(read_text(path), str(path))
