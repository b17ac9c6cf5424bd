"""Alert and recording rules (monitor/rules.py): promtool accepts them and their unit tests pass,
every alert has a firing and a quiet case, a broken threshold fails the tests, every name used is
in the catalogue and every runbook anchor is a heading of docs/diagnose.md; and a real
Prometheus (127.0.0.1:19190, scraping a stub on 19191) takes the required
AifabricTcpRetransmissions from pending to firing with the lab options --window 10s --for 2s.

promtool 2.42 (Debian package ``prometheus``) checks the rule file and runs the unit tests
(https://prometheus.io/docs/prometheus/latest/configuration/unit_testing_rules/); those tests
skip when it is missing.
"""

from __future__ import annotations

import http.server
import json
import re
import shutil
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from aifabric.errors import InputError
from aifabric.monitor.catalogue import Selection, load_catalogue
from aifabric.monitor.rules import (
    RuleSpec,
    anchor,
    build_rule_tests,
    build_rules,
    check_spec,
    dump_yaml,
    humanize,
    load_rule_spec,
    rate_record,
)
from tests.conftest import stop_process

ROOT = Path(__file__).resolve().parents[3]
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None, reason="promtool not installed (Debian package prometheus)"
)


def _write(tmp_path: Path, rules: dict[str, Any], tests: dict[str, Any] | None = None) -> Path:
    (tmp_path / "aifabric-rules.yaml").write_text(dump_yaml(rules))
    test_file = tmp_path / "aifabric-rules-test.yaml"
    if tests is not None:
        test_file.write_text(dump_yaml(tests))
    return test_file


def _promtool(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL is not None
    return subprocess.run(
        [PROMTOOL, *map(str, args)],
        check=False,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _alerts(rules: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["alert"]: r for g in rules["groups"] for r in g["rules"] if "alert" in r}


@needs_promtool
def test_promtool_check_rules_passes(tmp_path: Path) -> None:
    rules = build_rules(load_catalogue())
    _write(tmp_path, rules)
    got = _promtool("check", "rules", "aifabric-rules.yaml", cwd=tmp_path)
    assert got.returncode == 0, got.stdout + got.stderr
    n = sum(len(g["rules"]) for g in rules["groups"])
    assert f"SUCCESS: {n} rules found" in got.stdout


@needs_promtool
def test_promtool_check_rules_with_lab_options(tmp_path: Path) -> None:
    """The lead's lab test runs with --window 10s --for 2s; two lossless priorities; a URL."""
    rules = build_rules(
        load_catalogue(), window="10s", for_="2s", lossless=(4, 3), docs_url="https://x.test/docs/"
    )
    _write(tmp_path, rules)
    got = _promtool("check", "rules", "aifabric-rules.yaml", cwd=tmp_path)
    assert got.returncode == 0, got.stdout + got.stderr
    tcp = _alerts(rules)["AifabricTcpRetransmissions"]
    assert tcp["expr"] == "aifabric:tcp_retransmission_ratio:rate10s > 0.01"
    assert tcp["for"] == "2s"
    assert tcp["labels"] == {"severity": "warning"}
    assert tcp["annotations"]["runbook_url"] == (
        "https://x.test/docs/diagnose.md#diagnoseib-retry-exceeded"
    )
    records = {r["record"]: r["expr"] for r in rules["groups"][0]["rules"] if "record" in r}
    assert records["aifabric:tcp_retransmission_ratio:rate10s"] == (
        "sum by (node) (aifabric:tcp_retransmitted_segments:rate10s) "
        "/ sum by (node) (aifabric:tcp_sent_segments:rate10s)"
    )
    assert (
        records["aifabric:tcp_sent_segments:rate10s"]
        == "rate(aifabric_tcp_sent_segments_total[10s])"
    )
    lossy = _alerts(rules)["AifabricPfcOnLossyPriority"]["expr"]
    assert lossy == 'aifabric:port_pfc_frames:rate10s{priority!~"3|4"} > 0'


@needs_promtool
def test_promtool_unit_tests_pass(tmp_path: Path) -> None:
    cat = load_catalogue()
    test_file = _write(tmp_path, build_rules(cat), build_rule_tests(cat))
    got = _promtool("test", "rules", test_file.name, cwd=tmp_path)
    assert got.returncode == 0, got.stdout + got.stderr
    assert "SUCCESS" in got.stdout


def test_every_alert_has_firing_and_quiet_cases() -> None:
    cat = load_catalogue()
    alerts = set(_alerts(build_rules(cat)))
    firing: set[str] = set()
    quiet: set[str] = set()
    for group in build_rule_tests(cat)["tests"]:
        for t in group["alert_rule_test"]:
            (firing if t["exp_alerts"] else quiet).add(t["alertname"])
    assert alerts == firing == quiet
    assert len(alerts) == len(load_rule_spec().alerts) == 22


@needs_promtool
def test_broken_threshold_fails_promtool(tmp_path: Path) -> None:
    """Known answers: the firing case has ratio 0.02, the quiet one 0.005. A threshold of 0.03
    loses the firing alert; 0.004 makes the quiet case fire."""
    cat = load_catalogue()
    tests = build_rule_tests(cat)
    for threshold, missing in (("0.03", "got:[]"), ("0.004", "exp:[]")):
        rules = build_rules(cat)
        tcp = _alerts(rules)["AifabricTcpRetransmissions"]
        tcp["expr"] = tcp["expr"].replace("> 0.01", f"> {threshold}")
        test_file = _write(tmp_path, rules, tests)
        got = _promtool("test", "rules", test_file.name, cwd=tmp_path)
        assert got.returncode == 1
        out = got.stdout + got.stderr
        assert "AifabricTcpRetransmissions" in out and missing in out.replace(" ", "")
        failed = set(re.findall(r"alertname: (\w+)", out))
        assert failed == {"AifabricTcpRetransmissions"}, out


@needs_promtool
def test_every_firing_case_checks_its_alert(tmp_path: Path) -> None:
    """An alert that can never fire fails promtool for every alert: no case passes by accident."""
    cat = load_catalogue()
    rules = build_rules(cat)
    for alert in _alerts(rules).values():
        alert["expr"] = f"({alert['expr']}) unless ({alert['expr']})"
    test_file = _write(tmp_path, rules, build_rule_tests(cat))
    got = _promtool("test", "rules", test_file.name, cwd=tmp_path)
    assert got.returncode == 1
    failed = set(re.findall(r"alertname: (\w+)", got.stdout + got.stderr))
    assert failed == set(_alerts(rules))


def test_every_name_is_a_catalogue_metric_or_a_record() -> None:
    cat = load_catalogue()
    rules = build_rules(cat)
    recorded = {r["record"] for g in rules["groups"] for r in g["rules"] if "record" in r}
    exprs = [r["expr"] for g in rules["groups"] for r in g["rules"]]
    used_metrics = {m for e in exprs for m in re.findall(r"\baifabric_[a-z0-9_]+", e)}
    used_records = {m for e in exprs for m in re.findall(r"\baifabric:[a-z0-9_]+:rate5m", e)}
    assert used_metrics and used_metrics <= set(cat.by_name)
    assert used_records and used_records <= recorded
    # every counter has its rate, and nothing else is recorded under a counter's name
    counters = {m.name for m in cat.metrics if m.type == "counter"}
    assert {rate_record(m) for m in counters} <= recorded
    assert len(recorded) == len(counters) + len(load_rule_spec().records)


def test_runbook_anchors_exist_in_diagnose_md() -> None:
    text = (ROOT / "docs" / "diagnose.md").read_text()
    anchors = {anchor(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}
    assert "diagnosepfc-storm" in anchors
    for name, alert in _alerts(build_rules(load_catalogue())).items():
        ann = alert["annotations"]
        url = ann["runbook_url"]
        assert url.startswith("docs/diagnose.md#"), name
        assert url.split("#", 1)[1] in anchors, f"{name}: {url}"
        assert f"## `{ann['diagnose_rule']}`" in text
        assert ann["summary"] and len(ann["description"]) > 100
        assert re.fullmatch(r"S\d+(\.\d+)?(, S\d+(\.\d+)?)*", ann["seed"]), ann["seed"]
        assert alert["labels"]["severity"] in {"critical", "warning", "info"}


def test_deselected_metrics_drop_their_rules() -> None:
    cat = load_catalogue().selected(Selection(deny=("aifabric_tcp_.*",)))
    rules = build_rules(cat)
    alerts = _alerts(rules)
    assert "AifabricTcpRetransmissions" not in alerts
    assert "AifabricRdmaRetransmissions" in alerts
    text = dump_yaml(rules)
    assert "tcp_" not in text
    assert all(
        t["alert_rule_test"][0]["alertname"] != "AifabricTcpRetransmissions"
        for t in build_rule_tests(cat)["tests"]
    )


def test_expected_annotations_are_expanded_by_hand_worked_values() -> None:
    tests = build_rule_tests(load_catalogue(), docs_url="https://x.test/docs")
    by_name = {
        t["name"].split(":")[0]: t for t in tests["tests"] if t["alert_rule_test"][0]["exp_alerts"]
    }
    tcp = by_name["AifabricTcpRetransmissions"]["alert_rule_test"][0]["exp_alerts"][0]
    assert tcp["exp_labels"] == {"node": "h1", "severity": "warning"}
    assert tcp["exp_annotations"]["summary"] == "h1 retransmits 2% of its TCP segments"
    assert (
        tcp["exp_annotations"]["runbook_url"]
        == "https://x.test/docs/diagnose.md#diagnoseib-retry-exceeded"
    )
    storm = by_name["AifabricPfcPauseStorm"]["alert_rule_test"][0]["exp_alerts"][0]
    assert "paused 96.67% of the time" in storm["exp_annotations"]["summary"]  # 58/60
    assert tests["rule_files"] == ["aifabric-rules.yaml"]


def test_humanize_matches_prometheus() -> None:
    # template/template.go: %.4g after scaling by 1000s
    assert humanize(2000) == "2k"
    assert humanize(1234567) == "1.235M"
    assert humanize(0.6) == "600m"
    assert humanize(0.0001) == "100u"
    assert humanize(0) == "0"
    assert humanize(10) == "10"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"window": "5 minutes"}, "--window '5 minutes'"),
        ({"for_": "soon"}, "--for 'soon'"),
        ({"lossless": (9,)}, "--lossless-priority [9]"),
        ({"lossless": ()}, "--lossless-priority []"),
        ({"docs_url": ""}, "--docs-url"),
    ],
)
def test_bad_options_are_one_clear_error(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        build_rules(load_catalogue(), **kwargs)


def test_unit_tests_refuse_other_windows() -> None:
    with pytest.raises(InputError, match="worked out for --window 5m"):
        build_rule_tests(load_catalogue(), window="10s", for_="2s")


def test_anchor_is_githubs_slug() -> None:
    assert anchor("`diagnose.roce-lossy-priority`") == "diagnoseroce-lossy-priority"
    assert anchor("How a diagnosis is made") == "how-a-diagnosis-is-made"


PROMETHEUS = shutil.which("prometheus")


class _Counters(http.server.BaseHTTPRequestHandler):
    """/metrics with TCP counters that grow 1000 sent and 20 retransmitted segments per second
    (a 2% retransmission ratio, twice the alert's 1%) from the server's start."""

    start = time.monotonic()

    def do_GET(self) -> None:
        t = time.monotonic() - self.start
        body = (
            "# TYPE aifabric_tcp_sent_segments_total counter\n"
            f'aifabric_tcp_sent_segments_total{{node="h1"}} {int(1000 * t)}\n'
            "# TYPE aifabric_tcp_retransmitted_segments_total counter\n"
            f'aifabric_tcp_retransmitted_segments_total{{node="h1"}} {int(20 * t)}\n'
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return


def _query(port: int, promql: str) -> list[dict[str, Any]]:
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    with urllib.request.urlopen(url, timeout=5) as resp:
        data: dict[str, Any] = json.load(resp)
    result: list[dict[str, Any]] = data["data"]["result"]
    return result


@pytest.mark.skipif(PROMETHEUS is None, reason="prometheus not installed (Debian package)")
def test_tcp_alert_fires_in_a_real_prometheus_with_lab_options(tmp_path: Path) -> None:
    """Prometheus 2.42 on 127.0.0.1:19190 scrapes 127.0.0.1:19191 every second and evaluates the
    rules built with --window 10s --for 2s: AifabricTcpRetransmissions for node h1 goes firing
    (the first sample comes about 5.5 s after start, then 10 s of window and 2 s of for)."""
    assert PROMETHEUS is not None
    rules = build_rules(load_catalogue(), window="10s", for_="2s")
    (tmp_path / "rules.yaml").write_text(dump_yaml(rules))
    (tmp_path / "prometheus.yml").write_text(
        dump_yaml(
            {
                "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                "rule_files": ["rules.yaml"],
                "scrape_configs": [
                    {"job_name": "lab", "static_configs": [{"targets": ["127.0.0.1:19191"]}]}
                ],
            }
        )
    )
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 19191), _Counters)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    log = (tmp_path / "prometheus.log").open("w")
    proc = subprocess.Popen(
        [
            PROMETHEUS,
            f"--config.file={tmp_path / 'prometheus.yml'}",
            f"--storage.tsdb.path={tmp_path / 'data'}",
            "--web.listen-address=127.0.0.1:19190",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        firing: list[dict[str, Any]] = []
        states: list[str] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not firing:
            time.sleep(0.25)
            try:
                got = _query(19190, 'ALERTS{alertname="AifabricTcpRetransmissions"}')
            except OSError:
                continue
            states += [a["metric"]["alertstate"] for a in got]
            firing = [a for a in got if a["metric"]["alertstate"] == "firing"]
        assert firing, (tmp_path / "prometheus.log").read_text()[-2000:]
        assert states[0] == "pending"  # for 2s: pending first, then firing
        labels = firing[0]["metric"]
        assert labels["node"] == "h1" and labels["severity"] == "warning"
        ratio = _query(19190, "aifabric:tcp_retransmission_ratio:rate10s")
        assert abs(float(ratio[0]["value"][1]) - 0.02) < 0.002  # 20/1000, integer truncation
    finally:
        stop_process(proc)
        server.shutdown()
        server.server_close()
        log.close()


def _broken(alert_update: dict[str, Any]) -> RuleSpec:
    spec = load_rule_spec()
    first = spec.alerts[0].model_copy(update=alert_update)
    return spec.model_copy(update={"alerts": [first, *spec.alerts[1:]]})


@pytest.mark.parametrize(
    ("update", "message"),
    [
        ({"expr": "rate(aifabric_pfc_frames_total[${w}]) > 1"}, "aifabric_pfc_frames_total is not"),
        ({"expr": "aifabric:pfc_frames:rate${w} > 1"}, "aifabric:pfc_frames:rate${w} is neither"),
        (
            {"expr": "aifabric:port_pfc_frames:rate${w} > ${limit}"},
            "unknown placeholders ['limit']",
        ),
        ({"summary": "{{ $value | humanizeDuration }}"}, "not one the unit tests can expand"),
        ({"alert": "AifabricPfcPausedFractionHigh"}, "is listed twice"),
    ],
)
def test_rule_spec_errors_are_caught_on_load(update: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        check_spec(_broken(update), load_catalogue(), "rules.yaml")
