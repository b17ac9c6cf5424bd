"""Grafana dashboard (monitor/dashboard.py): structure, every default-on catalogue metric in some
panel, valid PromQL in every panel (checked by promtool through a throwaway recording-rule file)
and a layout without overlapping panels."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from aifabric.errors import InputError
from aifabric.monitor.catalogue import Selection, load_catalogue
from aifabric.monitor.dashboard import SCHEMA_VERSION, build_dashboard, grafana_unit, panel_exprs
from aifabric.monitor.rules import dump_yaml

PROMTOOL = shutil.which("promtool")


def _all_panels(d: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for p in d["panels"]:
        out.append(p)
        out.extend(p.get("panels", []))
    return out


def test_structure() -> None:
    cat = load_catalogue()
    d = build_dashboard(cat)
    json.dumps(d)  # serialisable
    assert d["schemaVersion"] == SCHEMA_VERSION >= 39
    assert [i["name"] for i in d["__inputs"]] == ["DS_PROMETHEUS"]
    variables = {v["name"]: v for v in d["templating"]["list"]}
    assert set(variables) == {"datasource", "node", "interface"}
    assert variables["datasource"]["current"]["value"] == "${DS_PROMETHEUS}"
    assert variables["node"]["definition"].startswith("label_values(")
    assert variables["interface"]["definition"].endswith(", interface)")
    rows = [p for p in d["panels"] if p["type"] == "row"]
    # the alerts row, then one row per catalogue group in catalogue order
    assert [r["title"] for r in rows] == ["Firing aifabric alerts", *cat.groups()]
    assert cat.groups()[:3] == ["pfc", "congestion", "drops"]
    assert all(not r["collapsed"] for r in rows[:2]) and all(r["collapsed"] for r in rows[2:])
    assert all(r["panels"] for r in rows[2:])
    alert_exprs = [t["expr"] for p in _all_panels(d) for t in p.get("targets", [])]
    assert any(e.startswith("ALERTS{") for e in alert_exprs)
    ids = [p["id"] for p in _all_panels(d)]
    assert len(ids) == len(set(ids))
    for p in _all_panels(d):
        if p["type"] != "row":
            assert p["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
            assert p["description"]


def test_units_and_descriptions_come_from_the_catalogue() -> None:
    cat = load_catalogue()
    by = cat.by_name
    assert grafana_unit(by["aifabric_port_pfc_frames_total"]) == "pps"
    assert grafana_unit(by["aifabric_port_pfc_pause_duration_seconds_total"]) == "percentunit"
    assert grafana_unit(by["aifabric_link_bytes_total"]) == "Bps"
    assert grafana_unit(by["aifabric_port_fec_corrected_bits_total"]) == "bps"
    assert grafana_unit(by["aifabric_optics_rx_power_dbm"]) == "dBm"
    assert grafana_unit(by["aifabric_optics_temperature_celsius"]) == "celsius"
    assert grafana_unit(by["aifabric_link_mtu_bytes"]) == "bytes"
    assert grafana_unit(by["aifabric_nccl_log_events_total"]) == "cps"
    panels = {p["title"]: p for p in _all_panels(build_dashboard(cat))}
    pfc = panels["aifabric_port_pfc_frames_total"]
    assert pfc["description"] == by["aifabric_port_pfc_frames_total"].help
    assert pfc["targets"][0]["expr"] == (
        'rate(aifabric_port_pfc_frames_total{node=~"$node",interface=~"$interface"}'
        "[$__rate_interval])"
    )
    rx = panels["aifabric_optics_rx_power_dbm"]
    assert rx["targets"][0]["expr"] == (
        'aifabric_optics_rx_power_dbm{node=~"$node",interface=~"$interface"}'
    )
    tcp = panels["aifabric_tcp_retransmitted_segments_total"]["targets"][0]["expr"]
    assert tcp == 'rate(aifabric_tcp_retransmitted_segments_total{node=~"$node"}[$__rate_interval])'
    assert "Share of bytes outside the lossless priorities (3)" in panels
    d34 = {p["title"] for p in _all_panels(build_dashboard(cat, lossless=(4, 3)))}
    assert "Share of bytes outside the lossless priorities (3|4)" in d34


def test_every_default_metric_is_in_a_panel() -> None:
    cat = load_catalogue()
    exprs = " ".join(panel_exprs(build_dashboard(cat)))
    for m in cat.metrics:
        if m.default:
            assert re.search(rf"\b{m.name}\{{", exprs), m.name
    # a deselected catalogue gives no panel for the metric
    small = cat.selected(Selection(deny=("aifabric_tcp_.*",)))
    exprs = " ".join(panel_exprs(build_dashboard(small)))
    assert "aifabric_tcp_" not in exprs


def test_grid_positions_do_not_overlap() -> None:
    cells: dict[tuple[int, int], int] = {}
    for p in _all_panels(build_dashboard(load_catalogue())):
        g = p["gridPos"]
        assert g["x"] >= 0 and g["x"] + g["w"] <= 24
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                assert (x, y) not in cells, f"panel {p['id']} overlaps panel {cells[(x, y)]}"
                cells[(x, y)] = p["id"]


@pytest.mark.skipif(PROMTOOL is None, reason="promtool not installed (Debian package prometheus)")
def test_every_panel_expr_is_valid_promql(tmp_path: Path) -> None:
    exprs = panel_exprs(build_dashboard(load_catalogue()))
    assert len(exprs) > 50
    concrete = [
        e.replace("$__rate_interval", "1m").replace("$node", ".*").replace("$interface", ".*")
        for e in exprs
    ]
    assert all("$" not in e for e in concrete)
    records = [{"record": f"dashboard:panel{i}", "expr": e} for i, e in enumerate(concrete)]
    rules = {"groups": [{"name": "dashboard", "rules": records}]}
    (tmp_path / "panels.yaml").write_text(dump_yaml(rules))
    assert PROMTOOL is not None
    got = subprocess.run(
        [PROMTOOL, "check", "rules", "panels.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert got.returncode == 0, got.stdout + got.stderr
    assert f"SUCCESS: {len(exprs)} rules found" in got.stdout
    # and promtool does reject a broken one (the check is not vacuous)
    records.append({"record": "dashboard:bad", "expr": "rate(x[1m]"})
    (tmp_path / "panels.yaml").write_text(dump_yaml(rules))
    bad = subprocess.run(
        [PROMTOOL, "check", "rules", "panels.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert bad.returncode == 1


def test_bad_lossless_priority_is_one_clear_error() -> None:
    with pytest.raises(InputError, match=r"--lossless-priority \[8\]"):
        build_dashboard(load_catalogue(), lossless=(8,))
