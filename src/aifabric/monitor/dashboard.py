"""Grafana dashboard JSON generated from the metric catalogue (``aifabric monitor dashboard``).

Layout (Grafana dashboard JSON model, https://grafana.com/docs/grafana/latest/dashboards/build-dashboards/view-dashboard-json-model/):

- ``__inputs`` names the Prometheus data source ``DS_PROMETHEUS`` that Grafana asks for on import
  (https://grafana.com/docs/grafana/latest/dashboards/share-dashboards-panels/#export-a-dashboard-as-json);
  a ``datasource`` variable defaults to it and every panel and variable queries through
  ``${datasource}``, so the source can be switched later;
- template variables ``node`` and ``interface`` (multi-value, All) from ``label_values`` over
  every ``aifabric_`` series (Grafana's Prometheus template queries,
  https://grafana.com/docs/grafana/latest/datasources/prometheus/template-variables/);
- first a row of firing aifabric alerts (Prometheus' ``ALERTS`` series,
  https://prometheus.io/docs/prometheus/latest/configuration/alerting_rules/#inspecting-alerts-during-runtime);
- then one collapsible row per catalogue group in catalogue order, one time-series panel per
  metric: counters as ``rate(m[$__rate_interval])`` (Grafana's recommended range for rate,
  https://grafana.com/blog/2020/09/28/new-in-grafana-7.2-__rate_interval-for-prometheus-rate-queries-that-just-work/),
  gauges as they are, the unit mapped to a Grafana unit id (a rate of a ``_seconds_total``
  counter is a fraction of time, ``percentunit``), the catalogue help as the description;
  the derived ratios the alerts use (ECN-mark ratio, TCP retransmission ratio, share of bytes
  outside the lossless priorities) are added to their groups with the same PromQL as the
  recording rules of :mod:`aifabric.monitor.rules`, inline so the dashboard works without them.

Panels are 12 wide and 8 high, two per line, laid out top to bottom as if every row were
expanded, so no two ``gridPos`` overlap expanded or collapsed; ids are unique from 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aifabric.errors import InputError
from aifabric.monitor.catalogue import Catalogue, MetricSpec

__all__ = ["DS", "SCHEMA_VERSION", "build_dashboard", "grafana_unit", "panel_exprs"]

SCHEMA_VERSION = 39
"""The dashboard schema version Grafana 11.0 writes on export; newer Grafana migrates it on load."""

DS = "DS_PROMETHEUS"
_DS_REF = {"type": "prometheus", "uid": "${datasource}"}
_W, _H = 12, 8

_COUNTER_UNITS = {
    "bytes": "Bps",
    "bits": "bps",
    "seconds": "percentunit",
    "frames": "pps",
    "packets": "pps",
    "segments": "pps",
}
"""A counter's unit → the Grafana unit of its per-second rate; other counts are ``cps``."""

_GAUGE_UNITS = {
    "bytes": "bytes",
    "dbm": "dBm",
    "celsius": "celsius",
    "volts": "volt",
    "amperes": "amp",
    "seconds": "s",
    "": "none",
}


def grafana_unit(spec: MetricSpec) -> str:
    """The Grafana unit id of a metric's panel (a rate for counters, the value for gauges)."""
    if spec.type == "counter":
        return _COUNTER_UNITS.get(spec.unit, "cps")
    return _GAUGE_UNITS.get(spec.unit, "short")


def _selector(labels: Sequence[str]) -> str:
    sel = ['node=~"$node"']
    if "interface" in labels:
        sel.append('interface=~"$interface"')
    return "{" + ",".join(sel) + "}"


def _legend(labels: Sequence[str]) -> str:
    return " ".join(f"{{{{{lab}}}}}" for lab in labels)


def _metric_expr(spec: MetricSpec) -> str:
    sel = spec.name + _selector(spec.labels)
    return f"rate({sel}[$__rate_interval])" if spec.type == "counter" else sel


def _ratio(by: str, num: str, den: str) -> str:
    """``sum by (by) (rate(num)) / sum by (by) (rate(den))`` over ``$__rate_interval``."""
    return (
        f"sum by ({by}) (rate({num}[$__rate_interval]))"
        f" / sum by ({by}) (rate({den}[$__rate_interval]))"
    )


def _derived(catalogue: Catalogue, lossless: str) -> dict[str, list[dict[str, str]]]:
    """Extra panels per group (title, expr, unit, legend, description) where the metrics exist."""
    have = catalogue.by_name
    ni = 'node=~"$node",interface=~"$interface"'
    ecn, pkts = "aifabric_queue_ecn_marked_packets_total", "aifabric_link_packets_total"
    retrans, sent = "aifabric_tcp_retransmitted_segments_total", "aifabric_tcp_sent_segments_total"
    prio = "aifabric_port_priority_bytes_total"
    out: dict[str, list[dict[str, str]]] = {}
    if ecn in have and pkts in have:
        out.setdefault(have[ecn].group, []).append(
            {
                "title": "ECN-mark ratio (marked / transmitted packets)",
                "expr": _ratio(
                    "node, interface", f"{ecn}{{{ni}}}", f'{pkts}{{{ni},direction="tx"}}'
                ),
                "unit": "percentunit",
                "legend": "{{node}} {{interface}}",
                "description": "Share of the packets leaving an interface that its queues marked "
                "with ECN CE; alert AifabricEcnMarkRatioHigh above 10%, AifabricEcnMarkRatioRising "
                "when it doubles against an hour before (S13, S22).",
            }
        )
    if retrans in have and sent in have:
        out.setdefault(have[retrans].group, []).append(
            {
                "title": "TCP retransmission ratio",
                "expr": _ratio("node", f'{retrans}{{node=~"$node"}}', f'{sent}{{node=~"$node"}}'),
                "unit": "percentunit",
                "legend": "{{node}}",
                "description": "Retransmitted over sent TCP segments per node (RFC 4022); alert "
                "AifabricTcpRetransmissions above 1%.",
            }
        )
    if prio in have:
        out.setdefault(have[prio].group, []).append(
            {
                "title": f"Share of bytes outside the lossless priorities ({lossless})",
                "expr": _ratio(
                    "node, interface", f'{prio}{{{ni},priority!~"{lossless}"}}', f"{prio}{{{ni}}}"
                ),
                "unit": "percentunit",
                "legend": "{{node}} {{interface}}",
                "description": "RoCE belongs on the lossless priority (S12): near 100% here while "
                "RDMA counts loss is alert AifabricRoceOnLossyPriority "
                "(diagnose.roce-lossy-priority).",
            }
        )
    return out


def _timeseries(
    pid: int, x: int, y: int, title: str, expr: str, unit: str, legend: str, description: str
) -> dict[str, Any]:
    return {
        "id": pid,
        "type": "timeseries",
        "title": title,
        "description": description,
        "datasource": dict(_DS_REF),
        "gridPos": {"h": _H, "w": _W, "x": x, "y": y},
        "fieldConfig": {
            "defaults": {"unit": unit, "custom": {"drawStyle": "line", "fillOpacity": 0}},
            "overrides": [],
        },
        "options": {
            "legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
            "tooltip": {"mode": "multi", "sort": "desc"},
        },
        "targets": [
            {"refId": "A", "datasource": dict(_DS_REF), "expr": expr, "legendFormat": legend}
        ],
    }


def _row(pid: int, y: int, title: str, collapsed: bool) -> dict[str, Any]:
    return {
        "id": pid,
        "type": "row",
        "title": title,
        "collapsed": collapsed,
        "gridPos": {"h": 1, "w": 24, "x": 0, "y": y},
        "panels": [],
    }


def _variable(name: str, label: str, query: str) -> dict[str, Any]:
    return {
        "name": name,
        "label": label,
        "type": "query",
        "datasource": dict(_DS_REF),
        "definition": query,
        "query": {"query": query, "refId": f"{name}-values"},
        "refresh": 2,
        "multi": True,
        "includeAll": True,
        "allValue": ".*",
        "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
        "sort": 1,
        "hide": 0,
    }


def build_dashboard(
    catalogue: Catalogue,
    *,
    title: str = "aifabric: RoCE and InfiniBand fabric health",
    lossless: Sequence[int] = (3,),
    uid: str = "aifabric-fabric-health",
) -> dict[str, Any]:
    """The dashboard as a dict (``json.dumps`` it). ``lossless`` are the PFC priorities RoCE
    should ride (for the lossy-share panel); only the catalogue's metrics appear."""
    prios = sorted(set(lossless))
    if not prios or any(not 0 <= p <= 7 for p in prios):
        raise InputError(f"--lossless-priority {list(lossless)}: expected priorities 0 to 7")
    lossless_rx = "|".join(str(p) for p in prios)
    panels: list[dict[str, Any]] = []
    pid = 0
    y = 0

    def next_id() -> int:
        nonlocal pid
        pid += 1
        return pid

    panels.append(_row(next_id(), y, "Firing aifabric alerts", collapsed=False))
    y += 1
    firing = 'ALERTS{alertname=~"Aifabric.*",alertstate="firing"}'
    panels.append(
        _timeseries(
            next_id(),
            0,
            y,
            "Firing alerts by name and severity",
            f"count by (alertname, severity) ({firing})",
            "none",
            "{{alertname}} ({{severity}})",
            "Number of firing series per aifabric alert (Prometheus ALERTS); the rules come from "
            "`aifabric monitor rules` and link their diagnose rule in the runbook_url annotation.",
        )
    )
    table = _timeseries(
        next_id(),
        _W,
        y,
        "Firing alerts now",
        firing,
        "none",
        "",
        "Every firing aifabric alert series with its labels (node, interface, device, priority).",
    )
    table["type"] = "table"
    table["targets"][0].update({"instant": True, "range": False, "format": "table"})
    table["fieldConfig"] = {"defaults": {"unit": "none"}, "overrides": []}
    table["options"] = {"showHeader": True}
    panels.append(table)
    y += _H

    extra = _derived(catalogue, lossless_rx)
    for index, group in enumerate(catalogue.groups()):
        row = _row(next_id(), y, f"{group}", collapsed=index > 0)
        y += 1
        members: list[dict[str, Any]] = []
        items = [
            (m.name, _metric_expr(m), grafana_unit(m), _legend([lab for lab in m.labels]), m.help)
            for m in catalogue.metrics
            if m.group == group
        ]
        items += [
            (d["title"], d["expr"], d["unit"], d["legend"], d["description"])
            for d in extra.get(group, [])
        ]
        for i, (name, expr, unit, legend, help_) in enumerate(items):
            x = 0 if i % 2 == 0 else _W
            members.append(_timeseries(next_id(), x, y, name, expr, unit, legend, help_))
            if i % 2 == 1 or i == len(items) - 1:
                y += _H
        if row["collapsed"]:
            row["panels"] = members
            panels.append(row)
        else:
            panels.append(row)
            panels.extend(members)

    return {
        "__inputs": [
            {
                "name": DS,
                "label": "Prometheus",
                "description": "The Prometheus that scrapes the aifabric exporters",
                "type": "datasource",
                "pluginId": "prometheus",
                "pluginName": "Prometheus",
            }
        ],
        "__requires": [
            {"type": "grafana", "id": "grafana", "name": "Grafana", "version": "11.0.0"},
            {"type": "datasource", "id": "prometheus", "name": "Prometheus", "version": "1.0.0"},
            {"type": "panel", "id": "timeseries", "name": "Time series", "version": ""},
            {"type": "panel", "id": "table", "name": "Table", "version": ""},
        ],
        "uid": uid,
        "title": title,
        "description": "Generated by `aifabric monitor dashboard` from the metric catalogue.",
        "tags": ["aifabric", "roce", "rdma", "pfc"],
        "editable": True,
        "graphTooltip": 1,
        "schemaVersion": SCHEMA_VERSION,
        "version": 1,
        "time": {"from": "now-6h", "to": "now"},
        "refresh": "30s",
        "timezone": "browser",
        "annotations": {"list": []},
        "links": [],
        "templating": {
            "list": [
                {
                    "name": "datasource",
                    "label": "Data source",
                    "type": "datasource",
                    "query": "prometheus",
                    "current": {"selected": True, "text": DS, "value": "${" + DS + "}"},
                    "hide": 0,
                    "refresh": 1,
                },
                _variable("node", "Node", 'label_values({__name__=~"aifabric_.+"}, node)'),
                _variable(
                    "interface",
                    "Interface",
                    'label_values({__name__=~"aifabric_.+",node=~"$node"}, interface)',
                ),
            ]
        },
        "panels": panels,
    }


def panel_exprs(dashboard: dict[str, Any]) -> list[str]:
    """Every PromQL expression of the dashboard's panels (rows' nested panels included)."""
    out: list[str] = []
    for panel in dashboard["panels"]:
        for p in [panel, *panel.get("panels", [])]:
            out.extend(t["expr"] for t in p.get("targets", []))
    return out
