"""Fleet diagnosis from Prometheus (:mod:`aifabric.monitor.fleet`, :mod:`aifabric.monitor.promql`)
with a fake API client: known series at the window's start and end → known records (driver
names, unscaled values, growth) → the same findings the rules give on captured files.

Known answers, worked out by hand:

* eth2 carries 50e6 rx + 100e6 tx bytes on priority 0 and 1,000 rx bytes on priority 3 over
  the window: share 150e6 / 150.001e6 = 0.999993 (99 %), PFC frames flat (0 growth), and
  mlx5_0/1 ``out_of_sequence`` 100 → 142 (growth 42): ``diagnose.roce-lossy-priority``;
* a tx pause duration of 0.000123 s (exporter scale 1e-6 from µs) is 123 µs; 4,000 RDMA data
  bytes (scale 4 from 4-byte words) are 1,000 ``port_rcv_data`` words;
* leaf1 Ethernet4 queue 3: watchdog storms 2 → 5 (3 in the window), tx drops 10 → 110 (100):
  ``diagnose.pfc-storm``; storms 2 → 2 (an old storm) give no finding.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from aifabric.checks.diagnose import diagnose, load_evidence
from aifabric.checks.diagnose.derive_counters import PrioTraffic, RdmaLoss
from aifabric.errors import EnvironmentProblem, InputError
from aifabric.evidence.ethtool_stats import EthtoolStats
from aifabric.evidence.rdma_counters import RdmaCounters
from aifabric.evidence.switch_counters import PfcCounters, PfcwdStats
from aifabric.monitor.fleet import (
    SELECTOR,
    FleetEvidence,
    parse_time,
    parse_window,
    prometheus_captures,
)
from aifabric.monitor.promql import PromClient, Sample, format_time
from tests.conftest import run_cli

AT = parse_time("2026-12-04T12:00:00Z")
WINDOW = 900.0
START = AT - WINDOW
URL = "http://prom.example:9090"

Labels = dict[str, str]


def s(name: str, value: float, t: float, **labels: str) -> Sample:
    return Sample({"__name__": name, "job": "aifabric", "instance": "h:9877", **labels}, t, value)


class FakeProm:
    """Answers :data:`SELECTOR` at two times from tables, and the series listing."""

    def __init__(
        self,
        start: list[Sample],
        end: list[Sample],
        extra_series: Sequence[Labels] = (),
    ) -> None:
        self.url = URL
        self.at = {START: start, AT: end}
        self.extra = list(extra_series)
        self.calls: list[tuple[str, float | None]] = []

    def query(self, expr: str, *, at: float | None = None) -> list[Sample]:
        assert expr == SELECTOR
        self.calls.append((expr, at))
        assert at is not None
        return [Sample(x.labels, at, x.value) for x in self.at.get(at, [])]

    def series(
        self, match: Sequence[str], *, start: float | None = None, end: float | None = None
    ) -> list[dict[str, str]]:
        assert (start, end) == (START, AT)
        got = [dict(x.labels) for xs in self.at.values() for x in xs]
        return got + [dict(x) for x in self.extra]


PAUSE_S = "aifabric_port_pfc_pause_duration_seconds_total"


def _host(t: float, *, prio0: tuple[int, int], ooo: int, prio3_rx: int = 0) -> list[Sample]:
    node = {"node": "gpu-node-1", "interface": "eth2"}
    rdma = {"node": "gpu-node-1", "device": "mlx5_0", "port": "1"}
    bytes_ = "aifabric_port_priority_bytes_total"
    frames = "aifabric_port_pfc_frames_total"
    return [
        s(bytes_, prio0[0], t, **node, direction="rx", priority="0"),
        s(bytes_, prio0[1], t, **node, direction="tx", priority="0"),
        s(bytes_, prio3_rx, t, **node, direction="rx", priority="3"),
        s(bytes_, 0, t, **node, direction="tx", priority="3"),
        s(frames, 5, t, **node, direction="rx", priority="3"),
        s(frames, 7, t, **node, direction="tx", priority="3"),
        s(PAUSE_S, 0.000123, t, **node, direction="tx", priority="3"),
        s("aifabric_rdma_out_of_sequence_total", ooo, t, **rdma),
        s("aifabric_rdma_local_ack_timeouts_total", 3, t, **rdma),
        s("aifabric_rdma_packet_sequence_errors_total", 0, t, **rdma),
        s("aifabric_rdma_port_data_bytes_total", 4000, t, **rdma, direction="rx"),
        s("aifabric_nccl_log_events_total", 1, t, node="gpu-node-1", kind="warn"),
    ]


def _lossy() -> FakeProm:
    return FakeProm(
        _host(START, prio0=(1_000_000, 2_000_000), ooo=100),
        _host(AT, prio0=(51_000_000, 102_000_000), ooo=142, prio3_rx=1000),
    )


def _fleet(client: FakeProm) -> FleetEvidence:
    return prometheus_captures(client, window_s=WINDOW, at_s=AT)


def test_records_carry_driver_names_and_unscaled_values() -> None:
    fleet = _fleet(_lossy())
    assert fleet.nodes == ["gpu-node-1"]
    kinds = {c.kind for c in fleet.captures}
    assert kinds == {"ethtool-stats", "rdma-hw-counters"}
    eth = [r for c in fleet.captures for r in c.result.records if isinstance(r, EthtoolStats)]
    assert [r.interface for r in eth] == ["eth2", "eth2"]  # start, then end
    first, last = eth
    assert first.counters["rx_prio0_bytes"] == 1_000_000
    assert last.counters["tx_prio0_bytes"] == 102_000_000
    assert last.counters["tx_prio3_pause_duration"] == 123  # 0.000123 s / 1e-6
    assert last.tx_pause_duration_us_by_prio == {3: 123}
    assert last.rx_pause_by_prio == {3: 5} and last.tx_pause_by_prio == {3: 7}
    assert last.per_priority[0] == {"rx_prio0_bytes": 51_000_000, "tx_prio0_bytes": 102_000_000}
    rdma = [r for c in fleet.captures for r in c.result.records if isinstance(r, RdmaCounters)]
    assert [(r.device, r.port) for r in rdma] == [("mlx5_0", 1), ("mlx5_0", 1)]
    assert rdma[1].counters["out_of_sequence"] == 142
    assert rdma[1].counters["port_rcv_data"] == 1000  # 4000 bytes / 4
    assert rdma[1].errors["out_of_sequence"] == 142  # the parser's groups are filled
    # each counter's line quotes its series, value and time
    cap = fleet.captures[0]
    line = cap.lines[last.line_of("tx_prio0_bytes") - 1]  # type: ignore[operator]
    assert line == (  # 102,000,000 - 2,000,000 bytes since the window start
        'aifabric_port_priority_bytes_total{direction="tx",interface="eth2",priority="0"} '
        "102000000 @ 2026-12-04T12:00:00Z (+100000000 since 11:45:00Z) # tx_prio0_bytes"
    )
    line = cap.lines[first.line_of("tx_prio3_pause_duration") - 1]  # type: ignore[operator]
    assert line == (  # the start snapshot: no growth to quote; seconds as Prometheus has them
        'aifabric_port_pfc_pause_duration_seconds_total{direction="tx",interface="eth2",'
        'priority="3"} 0.000123 @ 2026-12-04T11:45:00Z # tx_prio3_pause_duration'
    )
    assert cap.path == f"prometheus:{URL}#gpu-node-1"
    assert any("aifabric_nccl_log_events_total" in n for n in fleet.notes)
    assert "window 900 s" in fleet.notes[0] and "2026-12-04T11:45:00Z" in fleet.notes[0]


def test_lossy_priority_growth_gives_the_rule_finding() -> None:
    ev = load_evidence([], captures=_fleet(_lossy()).captures)
    traffic = [i.record for i in ev.items if isinstance(i.record, PrioTraffic)]
    assert len(traffic) == 1
    t = traffic[0]
    assert t.basis == "growth" and t.snapshots == 2
    assert t.bytes_by_prio == {0: 150_000_000, 3: 1000}
    assert t.share_pct == 99 and t.top_prio == 0 and t.pfc_pause == 0
    loss = [i.record for i in ev.items if isinstance(i.record, RdmaLoss)]
    assert len(loss) == 1
    assert loss[0].counters == {"out_of_sequence": 42} and loss[0].total == 42
    assert loss[0].basis == "growth"
    found = [f for f in diagnose(ev).findings if f.check == "diagnose.roce-lossy-priority"]
    assert len(found) == 1
    f = found[0]
    assert f.target == "gpu-node-1"
    assert "eth2: 99% of the bytes on priority 0 (growth over 2 snapshot(s))" in f.message
    assert "mlx5_0/1 counts out_of_sequence 42 (growth)" in f.message
    assert f.evidence[0].source == f"prometheus:{URL}#gpu-node-1"
    assert f.evidence[0].text.startswith("aifabric_port_priority_bytes_total{")
    assert "@ 2026-12-04T12:00:00Z" in f.evidence[0].text


def test_flat_rdma_counters_give_no_finding() -> None:
    client = FakeProm(
        _host(START, prio0=(1_000_000, 2_000_000), ooo=142),
        _host(AT, prio0=(51_000_000, 102_000_000), ooo=142),
    )
    ev = load_evidence([], captures=_fleet(client).captures)
    loss = [i.record for i in ev.items if isinstance(i.record, RdmaLoss)]
    assert loss and loss[0].total == 0  # 142 since boot, none in the window
    assert not [f for f in diagnose(ev).findings if f.check == "diagnose.roce-lossy-priority"]


def _switch(t: float, storms: int, drops: int) -> list[Sample]:
    port = {"node": "leaf1", "interface": "Ethernet4"}
    return [
        s("aifabric_pfcwd_storms_detected_total", storms, t, **port, queue="3"),
        s("aifabric_pfcwd_storms_restored_total", storms, t, **port, queue="3"),
        s("aifabric_pfcwd_dropped_packets_total", drops, t, **port, queue="3", direction="tx"),
        s("aifabric_pfcwd_dropped_packets_total", 0, t, **port, queue="3", direction="rx"),
        s("aifabric_port_pfc_frames_total", 40 + storms, t, **port, direction="rx", priority="3"),
        s("aifabric_queue_bytes_total", 9000 + drops, t, **port, queue="3"),
    ]


def test_watchdog_storm_in_the_window_gives_pfc_storm() -> None:
    fleet = _fleet(FakeProm(_switch(START, 2, 10), _switch(AT, 5, 110)))
    recs = [r for c in fleet.captures for r in c.result.records]
    wd = [r for r in recs if isinstance(r, PfcwdStats)]
    assert len(wd) == 1
    assert (wd[0].port, wd[0].queue, wd[0].storms_detected, wd[0].tx_drop) == (
        "Ethernet4", 3, 3, 100,
    )  # fmt: skip
    pfc = [r for r in recs if isinstance(r, PfcCounters)]
    assert [(p.direction, p.frames[3]) for p in pfc] == [("rx", 3)]
    ev = load_evidence([], captures=fleet.captures)
    found = [f for f in diagnose(ev).findings if f.check == "diagnose.pfc-storm"]
    assert len(found) == 1 and found[0].target == "leaf1"
    assert "detected 3 storm(s) on one port (Ethernet4; lossless queue(s) 3)" in found[0].message
    assert "dropped 100 packet(s)" in found[0].message


def test_lossless_queue_drops_without_pause_give_roce_drops_without_pfc() -> None:
    def leaf(t: float, drops: int) -> list[Sample]:
        port = {"node": "leaf2", "interface": "Ethernet8"}
        return [
            s("aifabric_queue_dropped_packets_total", drops, t, **port, queue="3"),
            s("aifabric_queue_bytes_total", 10 * drops, t, **port, queue="3"),
            s("aifabric_port_pfc_frames_total", 12, t, **port, direction="rx", priority="3"),
            s("aifabric_port_pfc_frames_total", 30, t, **port, direction="tx", priority="3"),
        ]

    fleet = _fleet(FakeProm(leaf(START, 20), leaf(AT, 520)))
    found = [
        f
        for f in diagnose(load_evidence([], captures=fleet.captures)).findings
        if f.check == "diagnose.roce-drops-without-pfc"
    ]
    assert len(found) == 1 and found[0].target == "leaf2"
    # 520 - 20 drops in the window on queue UC3, PFC frames flat (12 and 30 since boot)
    assert "Ethernet8: 500 RoCE/lossless packets dropped" in found[0].message
    assert "queues UC3) with 0 PFC pause frames" in found[0].message


def test_nic_global_pause_and_discards_give_nic_rx_overload() -> None:
    def nic(t: float, pause: int, discards: int) -> list[Sample]:
        port = {"node": "gpu-node-2", "interface": "ens1f0"}
        return [
            s("aifabric_port_global_pause_frames_total", pause, t, **port, direction="tx"),
            s("aifabric_port_discards_total", discards, t, **port, direction="rx"),
            s("aifabric_nic_out_of_buffer_packets_total", 4, t, **port),
        ]

    fleet = _fleet(FakeProm(nic(START, 100, 7), nic(AT, 1100, 57)))
    found = [
        f
        for f in diagnose(load_evidence([], captures=fleet.captures)).findings
        if f.check == "diagnose.nic-rx-overload"
    ]
    assert len(found) == 1 and found[0].target == "gpu-node-2"
    # tx_pause_ctrl_phy 100 -> 1100, rx_discards_phy 7 -> 57, rx_out_of_buffer flat at 4
    assert "ens1f0: the NIC sent 1000 pause frame(s) and discarded 50 packet(s)" in found[0].message
    assert "(rx_out_of_buffer 0; growth over 2 snapshot(s))" in found[0].message


def test_an_old_storm_gives_no_finding() -> None:
    fleet = _fleet(FakeProm(_switch(START, 2, 10), _switch(AT, 2, 10)))
    ev = load_evidence([], captures=fleet.captures)
    assert not [f for f in diagnose(ev).findings if f.check == "diagnose.pfc-storm"]


def test_nodes_without_data_are_named() -> None:
    late = [s("aifabric_rdma_out_of_sequence_total", 9, AT, node="new-node", device="m", port="1")]
    gone = [s("aifabric_rdma_out_of_sequence_total", 9, START, node="dead", device="m", port="1")]
    client = FakeProm(gone, late, extra_series=[{"__name__": "x", "node": "ghost"}])
    fleet = _fleet(client)
    notes = "\n".join(fleet.notes)
    assert "no sample at the window start 2026-12-04T11:45:00Z" in notes and "new-node" in notes
    assert "no sample at the window end 2026-12-04T12:00:00Z (exporter down?): dead" in notes
    assert "series in the window but no sample at its start or end: ghost" in notes
    empty = _fleet(FakeProm([], []))
    assert empty.captures == [] and "is the aifabric exporter" in empty.notes[-1]


@pytest.mark.parametrize(
    ("text", "seconds"), [("30s", 30.0), ("15m", 900.0), ("1h", 3600.0), ("2d", 172800.0)]
)
def test_parse_window(text: str, seconds: float) -> None:
    assert parse_window(text) == seconds


@pytest.mark.parametrize("bad", ["15", "fifteen minutes", "0s", "-5m", "1y"])
def test_parse_window_refuses(bad: str) -> None:
    with pytest.raises(InputError, match="--window"):
        parse_window(bad)


def test_parse_time() -> None:
    assert parse_time("2026-12-04T12:00:00Z") == AT
    assert parse_time("2026-12-04T13:00:00+01:00") == AT
    assert parse_time(str(int(AT))) == AT
    assert format_time(AT) == "2026-12-04T12:00:00Z"
    for bad in ("yesterday", "2026-12-04T12:00:00", "-1", "nan"):
        with pytest.raises(InputError, match="--at"):
            parse_time(bad)


# -- the HTTP client against a local stand-in ----------------------------------------------

PORT = 19297  # this task's range: 19290-19299


class _Handler(BaseHTTPRequestHandler):
    answers: ClassVar[dict[str, tuple[int, Any]]] = {}
    seen: ClassVar[list[tuple[str, str, str]]] = []
    auth: ClassVar[list[str | None]] = []

    def _answer(self, body: str) -> None:
        path = self.path.split("?", 1)[0]
        self.seen.append((self.command, self.path, body))
        self.auth.append(self.headers.get("Authorization"))
        code, doc = self.answers.get(path, (404, "404 page not found"))
        data = doc.encode() if isinstance(doc, str) else json.dumps(doc).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._answer("")

    def do_POST(self) -> None:
        n = int(self.headers.get("Content-Length", "0"))
        self._answer(self.rfile.read(n).decode())

    def log_message(self, *args: Any) -> None:
        return


@pytest.fixture
def api() -> Iterator[type[_Handler]]:
    _Handler.answers, _Handler.seen, _Handler.auth = {}, [], []
    server = HTTPServer(("127.0.0.1", PORT), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield _Handler
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_client_reads_vectors_series_and_labels(api: type[_Handler]) -> None:
    # response shapes from https://prometheus.io/docs/prometheus/latest/querying/api/
    api.answers["/api/v1/query"] = (200, {"status": "success", "data": {
        "resultType": "vector",
        "result": [{"metric": {"__name__": "up", "job": "prometheus"},
                    "value": [1435781451.781, "1"]},
                   {"metric": {"__name__": "up", "job": "node"}, "value": [1435781451.781, "NaN"]}],
    }})  # fmt: skip
    api.answers["/api/v1/query_range"] = (200, {"status": "success", "data": {
        "resultType": "matrix",
        "result": [{"metric": {"__name__": "up", "job": "prometheus"},
                    "values": [[1435781430.781, "1"], [1435781445.781, "0"]]}],
    }})  # fmt: skip
    api.answers["/api/v1/series"] = (200, {"status": "success", "data": [
        {"__name__": "up", "job": "prometheus", "instance": "localhost:9090"}]})  # fmt: skip
    api.answers["/api/v1/label/job/values"] = (200, {"status": "success", "data": ["node"]})
    client = PromClient(f"http://127.0.0.1:{PORT}/", user="ops", password="s3cret")
    got = client.query("up", at=1435781451.781)
    assert (got[0].labels["job"], got[0].value) == ("prometheus", 1.0)
    assert got[1].value != got[1].value  # NaN
    rng = client.query_range("up", start=1435781430.781, end=1435781445.781, step_s=15)
    assert rng[0].points == ((1435781430.781, 1.0), (1435781445.781, 0.0))
    assert client.series(["up"], start=1, end=2)[0]["instance"] == "localhost:9090"
    assert client.label_values("job", match=["up"]) == ["node"]
    method, path, body = api.seen[0]
    assert (method, path) == ("POST", "/api/v1/query")
    assert "query=up" in body and "time=1435781451.781" in body
    assert api.seen[-1][0] == "GET" and "match%5B%5D=up" in api.seen[-1][1]
    assert set(api.auth) == {"Basic b3BzOnMzY3JldA=="}  # base64 of "ops:s3cret" (RFC 7617)


def test_client_quotes_prometheus_errors(api: type[_Handler]) -> None:
    api.answers["/api/v1/query"] = (400, {
        "status": "error", "errorType": "bad_data",
        "error": 'invalid parameter "query": 1:5: parse error: unexpected end of input',
    })  # fmt: skip
    client = PromClient(f"http://127.0.0.1:{PORT}")
    with pytest.raises(EnvironmentProblem) as exc:
        client.query("sum(")
    assert str(exc.value) == (
        f"Prometheus at http://127.0.0.1:{PORT} answered query with HTTP 400 Bad Request: "
        'bad_data: invalid parameter "query": 1:5: parse error: unexpected end of input'
    )
    with pytest.raises(EnvironmentProblem, match="HTTP 404 Not Found: 404 page not found"):
        client.series(["up"])
    api.answers["/api/v1/query"] = (200, "<html>grafana</html>")
    with pytest.raises(EnvironmentProblem, match="not a Prometheus API answer"):
        client.query("up")


def test_client_refusals_are_one_line() -> None:
    with pytest.raises(EnvironmentProblem, match=r"cannot reach Prometheus at http://127\.0\.0\.1"):
        PromClient("http://127.0.0.1:19299", timeout_s=2).query("up")
    for bad in ("prom:9090", "ftp://x", "http://", "http://h:99999", "http://h:9090/?q=1"):
        with pytest.raises(InputError, match="--prometheus"):
            PromClient(bad)
    with pytest.raises(InputError, match="no such file"):
        PromClient("https://h:9090", ca_file=Path("/nonexistent/ca.pem"))


def test_cli_bad_arguments_exit_2_in_one_line() -> None:
    res = run_cli("diagnose", "--prometheus", "http://127.0.0.1:19299", "--window", "soon")
    assert res.code == 2 and "--window 'soon'" in res.err and "Traceback" not in res.err
    res = run_cli("diagnose", "--at", "2026-12-04T12:00:00Z")
    assert res.code == 2 and "need --prometheus" in res.err
    res = run_cli("diagnose", "--prometheus", "http://127.0.0.1:19299", "--prometheus-user", "u")
    assert res.code == 2 and "AIFABRIC_PROMETHEUS_PASSWORD" in res.err


def test_cli_unreachable_prometheus_exits_3() -> None:
    res = run_cli("diagnose", "--prometheus", "http://127.0.0.1:19299", "-F", "json")
    assert res.code == 3, res.err
    assert "cannot reach Prometheus at http://127.0.0.1:19299" in res.err
    assert "Traceback" not in res.err
