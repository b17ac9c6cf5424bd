"""Prometheus recording and alert rules, and their promtool unit tests, from ``rules.yaml``.

``monitor/rules.yaml`` (packaged) holds the derived recording rules, the alerts (expression with
``${w}``, ``${lossless}`` and threshold placeholders, severity, ``for``, seed references, the
diagnose rule it links, summary and description) and, per alert, unit-test cases written by hand.
:func:`build_rules` turns it into a Prometheus rule file
(https://prometheus.io/docs/prometheus/latest/configuration/alerting_rules/): one group
``aifabric`` whose rules run in order with one evaluation time ("Rules within a group are run
sequentially at a regular interval, with the same evaluation time",
https://prometheus.io/docs/prometheus/latest/configuration/recording_rules/), so the alerts
read the rates recorded in the same cycle:

1. ``aifabric:<metric stem>:rate<w>`` = ``rate(<metric>[w])`` for every counter of the catalogue
   (the stem is the name without ``aifabric_`` and ``_total``; labels kept), the ``level:metric:
   operations`` naming of https://prometheus.io/docs/practices/rules/;
2. the derived records of ``rules.yaml`` (TCP retransmission ratio, RDMA loss events, ECN-mark
   ratio, lossy-priority byte share);
3. the alerts, each with ``severity`` and annotations ``summary``, ``description``, ``seed``,
   ``diagnose_rule`` and ``runbook_url`` = ``<docs_url>/diagnose.md#<anchor>``, the anchor being
   GitHub's slug of the rule's heading in docs/diagnose.md (``## `diagnose.pfc-storm``` →
   ``diagnosepfc-storm``).

Filtering: a rule is generated only when every catalogue metric it reads (directly or through a
record) is in the catalogue given, so a catalogue restricted with ``Catalogue.selected`` yields
no rule over a deselected metric. A name in ``rules.yaml`` that the packaged catalogue does not
know is an error (a typo), raised when the file is loaded.

:func:`build_rule_tests` compiles the hand-written cases into a ``promtool test rules`` file
(https://prometheus.io/docs/prometheus/latest/configuration/unit_testing_rules/): per case one
test group (interval 1m), its input series and one ``alert_rule_test`` with the exact labels and
expanded annotations. Annotations may use only ``{{ $labels.X }}``, ``{{ $value | humanize }}``,
``{{ $value | humanizePercentage }}`` and ``{{ printf "%.Nf" $value }}``; :func:`_expand`
reproduces Prometheus' template functions (prometheus/prometheus ``template/template.go``,
v2.42.0; humanize divides by 1000 with k, M, G... or multiplies with m, u, n... and prints
``%.4g``; humanizePercentage prints ``%.4g%%`` of value x 100), so the expected text is
computed, not copied. The cases' numbers
hold for the default window, ``for`` and lossless priority; other values are refused for tests.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from aifabric.errors import InputError
from aifabric.monitor.catalogue import Catalogue, load_catalogue
from aifabric.yamlfile import read_yaml_text, validate_data

__all__ = [
    "DEFAULT_DOCS_URL",
    "DEFAULT_WINDOW",
    "GROUP",
    "TEST_INTERVAL",
    "AlertSpec",
    "ExpectedAlert",
    "RecordSpec",
    "RuleSpec",
    "TestCase",
    "anchor",
    "build_rule_tests",
    "build_rules",
    "check_spec",
    "dump_yaml",
    "humanize",
    "load_rule_spec",
    "rate_record",
    "rate_stem",
    "runbook_url",
]

DEFAULT_WINDOW = "5m"
DEFAULT_DOCS_URL = "docs"
"""Base of the runbook links: relative to the repository root; ``--docs-url`` replaces it with
e.g. ``https://github.com/ORG/aifabric/blob/main/docs``."""

GROUP = "aifabric"
TEST_INTERVAL = "1m"

_DURATION = re.compile(r"^(?:[0-9]+(?:ms|s|m|h|d|w|y))+$")
_PLACEHOLDER = re.compile(r"\$\{(\w+)\}")
_METRIC = re.compile(r"\baifabric_[a-z0-9_]*[a-z0-9]\b")
_RECORD = re.compile(r"\baifabric:([a-z0-9_]+):rate\$\{w\}")
_TEMPLATE = re.compile(r"\{\{(.*?)\}\}")
_LABEL_T = re.compile(r"^\s*\$labels\.([a-z_][a-z0-9_]*)\s*$")
_VALUE_T = re.compile(r"^\s*\$value\s*\|\s*(humanize|humanizePercentage)\s*$")
_PRINTF_T = re.compile(r'^\s*printf\s+"%\.([0-9])f"\s+\$value\s*$')


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ExpectedAlert(_Model):
    """One alert a test case expects: its labels besides ``severity``, and the value the
    annotations print (required when they print ``$value``)."""

    labels: dict[str, str]
    value: float | None = None


class TestCase(_Model):
    """A hand-written promtool case: input series (promtool expanding notation, one sample per
    minute), the evaluation time and the alerts firing then (``[]``: quiet)."""

    __test__ = False  # not a pytest class

    case: str
    series: dict[str, str]
    at: str
    alerts: list[ExpectedAlert]

    @field_validator("at")
    @classmethod
    def _duration(cls, v: str) -> str:
        if not _DURATION.match(v):
            raise ValueError(f"{v!r} is not a Prometheus duration such as 15m")
        return v


class RecordSpec(_Model):
    """A derived recording rule."""

    record: str = Field(pattern=r"^aifabric:[a-z0-9_]+:rate\$\{w\}$")
    help: str
    expr: str


class AlertSpec(_Model):
    """One alert of ``rules.yaml``."""

    alert: str = Field(pattern=r"^Aifabric[A-Z][A-Za-z0-9]*$")
    severity: Literal["critical", "warning", "info"]
    for_: str = Field(alias="for")
    seed: list[str] = Field(min_length=1)
    diagnose_rule: str = Field(pattern=r"^diagnose\.[a-z0-9-]+$")
    params: dict[str, float | int | str]
    expr: str
    summary: str
    description: str
    tests: list[TestCase] = Field(min_length=2)

    @field_validator("for_")
    @classmethod
    def _duration(cls, v: str) -> str:
        if not _DURATION.match(v):
            raise ValueError(f"{v!r} is not a Prometheus duration such as 5m")
        return v


class _Defaults(_Model):
    window: str
    lossless: list[int]


class RuleSpec(_Model):
    """The whole ``rules.yaml``."""

    defaults: _Defaults
    records: list[RecordSpec]
    alerts: list[AlertSpec]


@cache
def load_rule_spec() -> RuleSpec:
    """The packaged ``rules.yaml``, validated, its names checked against the packaged catalogue,
    its placeholders against the params, its annotation templates against what tests expand."""
    name = "monitor/rules.yaml"
    text = resources.files("aifabric").joinpath(name).read_text("utf-8")
    spec = validate_data(RuleSpec, read_yaml_text(text, file=name), file=name, text=text)
    check_spec(spec, load_catalogue(), name)
    return spec


def check_spec(spec: RuleSpec, catalogue: Catalogue, name: str) -> None:
    """Raise :class:`InputError` for a duplicate alert, an unknown placeholder, an annotation
    template the tests cannot expand, or a metric or record name nobody defines."""
    known = set(catalogue.by_name)
    records = {r.record for r in spec.records}
    stems = {rate_stem(m.name) for m in catalogue.metrics if m.type == "counter"}
    seen: set[str] = set()
    for alert in spec.alerts:
        where = f"{name}: alert {alert.alert}"
        if alert.alert in seen:
            raise InputError(f"{where} is listed twice")
        seen.add(alert.alert)
        placeholders = {"w", "lossless", *alert.params}
        texts = [alert.expr, alert.summary, alert.description]
        for t in texts:
            bad = set(_PLACEHOLDER.findall(t)) - placeholders
            if bad:
                raise InputError(
                    f"{where}: unknown placeholders {sorted(bad)} (known: {sorted(placeholders)})"
                )
        for t in (alert.summary, alert.description):
            for tmpl in _TEMPLATE.findall(t):
                if not (_LABEL_T.match(tmpl) or _VALUE_T.match(tmpl) or _PRINTF_T.match(tmpl)):
                    raise InputError(
                        f"{where}: template {{{{{tmpl}}}}} is not one the unit tests can expand"
                    )
        for case in alert.tests:
            for series in case.series:
                metric = series.split("{", 1)[0]
                if metric not in known:
                    raise InputError(f"{where}: test series {series!r} names no catalogue metric")
    for text in [r.expr for r in spec.records] + [a.expr for a in spec.alerts]:
        for metric in _METRIC.findall(text):
            if metric not in known:
                raise InputError(f"{name}: {metric} is not in the catalogue ({catalogue.path})")
        for stem in _RECORD.findall(text):
            if stem not in stems and f"aifabric:{stem}:rate${{w}}" not in records:
                raise InputError(
                    f"{name}: aifabric:{stem}:rate${{w}} is neither a counter's rate nor a record"
                )


def rate_stem(metric: str) -> str:
    """``aifabric_port_pfc_frames_total`` → ``port_pfc_frames``."""
    return metric.removeprefix("aifabric_").removesuffix("_total")


def rate_record(metric: str, window: str = DEFAULT_WINDOW) -> str:
    """The recorded name of a counter's rate: ``aifabric:port_pfc_frames:rate5m``."""
    return f"aifabric:{rate_stem(metric)}:rate{window}"


_SLUG_DROP = re.compile(r"[^\w\- ]")


def anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation other than ``-`` and
    ``_`` removed, spaces to ``-`` (``\\`diagnose.pfc-storm\\``` → ``diagnosepfc-storm``)."""
    return _SLUG_DROP.sub("", heading.strip().lower()).replace(" ", "-")


def runbook_url(rule_id: str, docs_url: str = DEFAULT_DOCS_URL) -> str:
    """Link to a diagnose rule's section of docs/diagnose.md under ``docs_url``."""
    return f"{docs_url.rstrip('/')}/diagnose.md#{anchor(f'`{rule_id}`')}"


@dataclass(frozen=True, slots=True)
class _Options:
    window: str
    for_: str | None
    lossless: tuple[int, ...]
    docs_url: str

    @property
    def lossless_regex(self) -> str:
        return "|".join(str(p) for p in self.lossless)


def _options(window: str, for_: str | None, lossless: Iterable[int], docs_url: str) -> _Options:
    if not _DURATION.match(window):
        raise InputError(f"--window {window!r}: expected a Prometheus duration such as 5m or 10s")
    if for_ is not None and not _DURATION.match(for_):
        raise InputError(f"--for {for_!r}: expected a Prometheus duration such as 2m or 0s")
    prios = tuple(sorted(set(lossless)))
    if not prios or any(not 0 <= p <= 7 for p in prios):
        raise InputError(f"--lossless-priority {list(lossless)}: expected priorities 0 to 7")
    if not docs_url:
        raise InputError("--docs-url '': expected a URL or path such as https://host/aifabric/docs")
    return _Options(window, for_, prios, docs_url)


def _fmt(v: float | int | str) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _substitute(text: str, opts: _Options, params: Mapping[str, float | int | str]) -> str:
    values = {"w": opts.window, "lossless": opts.lossless_regex}
    values.update({k: _fmt(v) for k, v in params.items()})
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], text)


def _dependencies(
    expr: str, records: Mapping[str, RecordSpec], seen: frozenset[str] = frozenset()
) -> set[str]:
    """Catalogue metrics an expression reads, directly or through records."""
    out = set(_METRIC.findall(expr))
    for stem in _RECORD.findall(expr):
        name = f"aifabric:{stem}:rate${{w}}"
        rec = records.get(name)
        if rec is not None and name not in seen:
            out |= _dependencies(rec.expr, records, seen | {name})
        elif rec is None:
            out.add(f"aifabric_{stem}_total")
    return out


def _kept(
    spec: RuleSpec, catalogue: Catalogue
) -> tuple[list[str], list[RecordSpec], list[AlertSpec]]:
    names = set(catalogue.by_name)
    records = {r.record: r for r in spec.records}
    counters = [m.name for m in catalogue.metrics if m.type == "counter"]
    derived = [r for r in spec.records if _dependencies(r.expr, records) <= names]
    alerts = [a for a in spec.alerts if _dependencies(a.expr, records) <= names]
    return counters, derived, alerts


def _annotations(alert: AlertSpec, opts: _Options) -> dict[str, str]:
    return {
        "summary": _substitute(alert.summary, opts, alert.params),
        "description": _substitute(" ".join(alert.description.split()), opts, alert.params),
        "seed": ", ".join(alert.seed),
        "diagnose_rule": alert.diagnose_rule,
        "runbook_url": runbook_url(alert.diagnose_rule, opts.docs_url),
    }


def build_rules(
    catalogue: Catalogue,
    *,
    window: str = DEFAULT_WINDOW,
    for_: str | None = None,
    lossless: Sequence[int] = (3,),
    docs_url: str = DEFAULT_DOCS_URL,
) -> dict[str, Any]:
    """The Prometheus rule file as a dict (``groups`` → one group ``aifabric`` → ``rules``).

    ``window`` is the range of every ``rate()``; ``for_`` replaces each alert's own ``for``
    (``None`` keeps them); ``lossless`` are the PFC priorities RoCE should ride; ``docs_url``
    the base of the runbook links. Rules over metrics absent from ``catalogue`` are left out.
    """
    opts = _options(window, for_, lossless, docs_url)
    spec = load_rule_spec()
    counters, derived, alerts = _kept(spec, catalogue)
    rules: list[dict[str, Any]] = [
        {"record": rate_record(m, opts.window), "expr": f"rate({m}[{opts.window}])"}
        for m in counters
    ]
    for rec in derived:
        rules.append(
            {
                "record": _substitute(rec.record, opts, {}),
                "expr": " ".join(_substitute(rec.expr, opts, {}).split()),
            }
        )
    for alert in alerts:
        rules.append(
            {
                "alert": alert.alert,
                "expr": " ".join(_substitute(alert.expr, opts, alert.params).split()),
                "for": opts.for_ if opts.for_ is not None else alert.for_,
                "labels": {"severity": alert.severity},
                "annotations": _annotations(alert, opts),
            }
        )
    return {"groups": [{"name": GROUP, "rules": rules}]}


def build_rule_tests(
    catalogue: Catalogue,
    *,
    rules_file: str = "aifabric-rules.yaml",
    window: str = DEFAULT_WINDOW,
    for_: str | None = None,
    lossless: Sequence[int] = (3,),
    docs_url: str = DEFAULT_DOCS_URL,
) -> dict[str, Any]:
    """A ``promtool test rules`` file for the rules :func:`build_rules` makes with the same
    arguments; ``rules_file`` is the rule file's path relative to the test file.

    The hand-worked numbers hold for the defaults only: another ``window``, any ``for_`` or other
    ``lossless`` priorities raise :class:`InputError` (generate the rules alone then).
    """
    opts = _options(window, for_, lossless, docs_url)
    spec = load_rule_spec()
    if (opts.window, opts.for_, list(opts.lossless)) != (
        spec.defaults.window,
        None,
        spec.defaults.lossless,
    ):
        raise InputError(
            f"the rule unit tests are worked out for --window {spec.defaults.window}, each alert's "
            f"own --for and --lossless-priority {spec.defaults.lossless}; got --window {window}, "
            f"--for {for_}, --lossless-priority {list(lossless)}: drop --tests or those options"
        )
    _counters, _derived, alerts = _kept(spec, catalogue)
    tests: list[dict[str, Any]] = []
    for alert in alerts:
        ann = _annotations(alert, opts)
        for case in alert.tests:
            exp = []
            for e in case.alerts:
                labels = {**e.labels, "severity": alert.severity}
                exp.append(
                    {
                        "exp_labels": labels,
                        "exp_annotations": {
                            k: _expand(v, labels, e.value, f"{alert.alert}: {case.case}")
                            for k, v in ann.items()
                        },
                    }
                )
            tests.append(
                {
                    "name": f"{alert.alert}: {' '.join(case.case.split())}",
                    "interval": TEST_INTERVAL,
                    "input_series": [{"series": s, "values": v} for s, v in case.series.items()],
                    "alert_rule_test": [
                        {"eval_time": case.at, "alertname": alert.alert, "exp_alerts": exp}
                    ],
                }
            )
    return {"rule_files": [rules_file], "evaluation_interval": TEST_INTERVAL, "tests": tests}


def humanize(v: float) -> str:
    """Prometheus' ``humanize`` template function (template/template.go)."""
    if v == 0 or math.isnan(v) or math.isinf(v):
        return _g4(v)
    prefix = ""
    if abs(v) >= 1:
        for p in ("k", "M", "G", "T", "P", "E", "Z", "Y"):
            if abs(v) < 1000:
                break
            prefix = p
            v /= 1000
        return _g4(v) + prefix
    for p in ("m", "u", "n", "p", "f", "a", "z", "y"):
        if abs(v) >= 1:
            break
        prefix = p
        v *= 1000
    return _g4(v) + prefix


def _g4(v: float) -> str:
    """Go's ``%.4g`` (same as C's, apart from NaN/Inf spelling)."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return f"{v:.4g}"


def _expand(text: str, labels: Mapping[str, str], value: float | None, where: str) -> str:
    """Expand the annotation templates the way Prometheus would for this alert."""

    def sub(m: re.Match[str]) -> str:
        body = m.group(1)
        lab = _LABEL_T.match(body)
        if lab is not None:
            return labels.get(lab.group(1), "")
        if value is None:
            raise InputError(f"{where}: the annotations print $value; give the case's value")
        fn = _VALUE_T.match(body)
        if fn is not None:
            if fn.group(1) == "humanize":
                return humanize(value)
            return _g4(value * 100) + "%"
        pf = _PRINTF_T.match(body)
        assert pf is not None  # checked on load
        return f"{value:.{int(pf.group(1))}f}"

    return _TEMPLATE.sub(sub, text)


class _Dumper(yaml.SafeDumper):
    """Block style, no aliases, long strings kept on one line."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump_yaml(d: Mapping[str, Any]) -> str:
    """YAML text of a rule or test file (keys in the order built, no anchors)."""
    return yaml.dump(dict(d), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1_000_000)
