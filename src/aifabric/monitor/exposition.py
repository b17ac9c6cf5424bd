"""One scrape's samples and their Prometheus text exposition (format 0.0.4).

:class:`Scrape` is what every collector writes into: :meth:`Scrape.add_raw` takes a source's raw
counters (``{"rx_prio3_pause": 12, ...}``) with the labels that identify where they came from
(``node``, ``interface``...) and maps them through the catalogue; :meth:`Scrape.add` takes a
value for a metric directly. Only metrics of the (selected) catalogue are kept; series past
``max_series`` are dropped and counted, never an unbounded response.

Text format: https://prometheus.io/docs/instrumenting/exposition_formats/ (``# HELP``, ``# TYPE``
once per metric family, label values escaped for ``\\``, ``"`` and newline, ``NaN``/``+Inf``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from aifabric.monitor.catalogue import Catalogue

__all__ = ["ExtraFamily", "Scrape", "escape_label", "format_value", "render_family"]

Labels = tuple[tuple[str, str], ...]


def escape_label(value: str) -> str:
    r"""Escape a label value for the text format.

    >>> escape_label('a"b\\c\nd')
    'a\\"b\\\\c\\nd'
    """
    if "\\" in value or '"' in value or "\n" in value:
        return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return value


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def format_value(value: float) -> str:
    """Integers without a decimal point, floats in shortest round-trip form, ``NaN``,
    ``+Inf``/``-Inf``.

    >>> format_value(3.0), format_value(0.25), format_value(float("inf"))
    ('3', '0.25', '+Inf')
    """
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _label_text(labels: Labels) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{escape_label(v)}"' for k, v in labels) + "}"


def render_family(
    name: str, help_text: str, mtype: str, series: Iterable[tuple[Labels, float]]
) -> list[str]:
    """Lines of one metric family."""
    lines = [f"# HELP {name} {_escape_help(help_text)}", f"# TYPE {name} {mtype}"]
    lines.extend(f"{name}{_label_text(labels)} {format_value(v)}" for labels, v in series)
    return lines


@dataclass(slots=True)
class ExtraFamily:
    """A family outside the catalogue (the exporter's own metrics)."""

    name: str
    help: str
    type: str
    series: dict[Labels, float] = field(default_factory=dict)


class Scrape:
    """The samples of one scrape, keyed by metric then label set (first value wins)."""

    __slots__ = ("_mappers", "catalogue", "dropped", "max_series", "series", "values")

    def __init__(self, catalogue: Catalogue, *, max_series: int = 200_000) -> None:
        self.catalogue = catalogue
        self.max_series = max_series
        self.values: dict[str, dict[Labels, float]] = {m.name: {} for m in catalogue.metrics}
        self.series = 0
        self.dropped = 0
        self._mappers = {src: catalogue.mapper(src) for m in catalogue.metrics for src in m.sources}

    def add(self, metric: str, labels: Labels, value: float) -> bool:
        """Keep ``metric{labels} value`` if the metric is selected; ``False`` if not kept."""
        family = self.values.get(metric)
        if family is None or labels in family:
            return False
        if self.series >= self.max_series:
            self.dropped += 1
            return False
        family[labels] = value
        self.series += 1
        return True

    def add_raw(self, source: str, identity: Labels, counters: Mapping[str, float]) -> int:
        """Map a source's raw counters (``ethtool -S`` names, sysfs file names, SAI stat ids)
        into metrics; ``identity`` labels (``node``, ``interface``...) come first on each
        series. Returns how many series were added; unmapped names are ignored."""
        mapper = self._mappers.get(source)
        if mapper is None:
            return 0
        added = 0
        for raw, value in counters.items():
            for target in mapper.map(raw):
                v = value * target.scale if target.scale != 1.0 else value
                if self.add(target.metric, identity + target.labels, v):
                    added += 1
        return added

    def render(self, extra: Iterable[ExtraFamily] = ()) -> bytes:
        """The text exposition: catalogue families with at least one series, then ``extra``."""
        lines: list[str] = []
        for spec in self.catalogue.metrics:
            family = self.values[spec.name]
            if family:
                lines += render_family(spec.name, spec.help, spec.type, family.items())
        for fam in extra:
            if fam.series:
                lines += render_family(fam.name, fam.help, fam.type, fam.series.items())
        lines.append("")
        return "\n".join(lines).encode()
