"""Traffic patterns, counter arithmetic, the iperf3 row, and the case-study model, without root.

Expected values are worked out by hand from the fabric files: server order is file order
(leaf by leaf for the ToR example), link speeds and MTUs are the files', and TCP payload per
segment is MTU - 52 (IPv4 20 + TCP 20 + timestamps 12)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aifabric.catalog import load_catalog
from aifabric.design import design_fabric, load_fabric
from aifabric.errors import InputError
from aifabric.lab.compare import comm_fraction, expected_throughput, goodput_factor
from aifabric.lab.plan import LabPlan, plan_lab
from aifabric.lab.traffic import (
    Flow,
    TrafficSample,
    flow_result,
    link_stats,
    plan_flows,
    sample_view,
    summarise,
    traffic_table,
)
from aifabric.model import DesignSpec

ROOT = Path(__file__).resolve().parents[3]
EX = ROOT / "examples"


def _plan(name: str, **kw: Any) -> LabPlan:
    return plan_lab(load_fabric(EX / name, load_catalog()), "u", **kw)


@pytest.fixture(scope="module")
def lab2x4() -> LabPlan:
    return _plan("lab-2x4x16.yaml", rate_scale=1000)


def test_lab_example_is_what_its_header_command_designs() -> None:
    """examples/lab-2x4x16.yaml is `aifabric design` output (the command in its header)."""
    spec = DesignSpec(name="lab-2x4x16", gpus=128, gpus_per_server=8, nics_per_server=1,
                      nic_speed_gbps=400, switch_ports=8, switch_speed_gbps=400,
                      oversubscription=1.0, layout="tor", ip_plan="l3", gpu_model="H100")
    cat = load_catalog()
    assert load_fabric(EX / "lab-2x4x16.yaml", cat) == design_fabric(spec, cat).fabric
    text = (EX / "lab-2x4x16.yaml").read_text()
    assert "--ip-plan l3" in text and "--switch-ports 8" in text


def test_example_has_two_spines_four_leaves_sixteen_servers(lab2x4: LabPlan) -> None:
    full = _plan("lab-2x4x16.yaml", servers_per_leaf=4)
    roles = [n.role for n in full.nodes.values()]
    assert (roles.count("spine"), roles.count("leaf"), roles.count("server")) == (2, 4, 16)
    # each leaf: 4 uplinks, two to each spine
    for n in full.nodes.values():
        if n.role == "leaf":
            ups = [i.peer for i in n.ifaces if i.kind == "fabric"]
            assert sorted(ups) == ["spine01", "spine01", "spine02", "spine02"]


def test_patterns_on_the_scaled_example(lab2x4: LabPlan) -> None:
    # 2 servers kept per leaf, in file order: leaf01 srv01 srv02, leaf02 srv05 srv06, ...
    servers = ["srv01", "srv02", "srv05", "srv06", "srv09", "srv10", "srv13", "srv14"]
    pw = plan_flows(lab2x4, "pairwise")
    assert [(f.src, f.dst) for f in pw] == [("srv01", "srv09"), ("srv02", "srv10"),
                                           ("srv05", "srv13"), ("srv06", "srv14")]
    assert [f.port for f in pw] == [5201, 5202, 5203, 5204]
    # routed /31 host links: srv01 is 10.0.0.1 (leaf01 .0), srv09 10.0.0.17 (the file's plan)
    assert (pw[0].src_addr, pw[0].dst_addr) == ("10.0.0.1", "10.0.0.17")
    inc = plan_flows(lab2x4, "incast", port_base=6000)
    assert [(f.src, f.dst) for f in inc] == [(s, "srv01") for s in servers[1:]]
    assert inc[-1].port == 6000 + 6
    ring = plan_flows(lab2x4, "ring")
    assert [(f.src, f.dst) for f in ring] == [
        (servers[i], servers[(i + 1) % 8]) for i in range(8)]
    with pytest.raises(InputError, match="one site"):
        plan_flows(lab2x4, "cross-site")
    with pytest.raises(InputError, match="known patterns"):
        plan_flows(lab2x4, "all-to-all")


def test_cross_site_pairs_first_site_with_second() -> None:
    plan = _plan("s17-case-study-after.yaml")
    flows = plan_flows(plan, "cross-site")
    assert [(f.src, f.dst) for f in flows] == [("site1-srv01", "site2-srv01"),
                                               ("site1-srv02", "site2-srv02")]
    # eight rail NICs per server: the first (nic0) is the one bound with -B
    assert flows[0].src_addr == plan.gateways["site1-srv01"][0][1].split("/")[0]
    assert plan.gateways["site1-srv01"][0][0] == "nic0"


@pytest.mark.parametrize(("pairs", "message"), [
    (["srv01"], "expected SRC:DST"),
    (["srv01:"], "expected SRC:DST"),
    (["srv01:nobody"], "no server 'nobody'"),
    (["leaf01:srv01"], "no server 'leaf01'"),
    (["srv01:srv01"], "the same server"),
])
def test_bad_pairs_are_input_errors(lab2x4: LabPlan, pairs: list[str], message: str) -> None:
    with pytest.raises(InputError, match=message):
        plan_flows(lab2x4, "pairwise", pairs=pairs)


def test_explicit_pairs_replace_the_pattern(lab2x4: LabPlan) -> None:
    flows = plan_flows(lab2x4, "incast", pairs=["srv01:srv13", "srv13:srv01"])
    assert [(f.src, f.dst) for f in flows] == [("srv01", "srv13"), ("srv13", "srv01")]
    with pytest.raises(InputError, match=r"within 1024\.\.65535"):
        plan_flows(lab2x4, "ring", port_base=65530)


# ---------------------------------------------------------------------------------------------
# iperf3 rows

FLOW = Flow("a", "b", "10.0.0.1", "10.0.0.3", 5201)


def _iperf(sent: float, recv: float, retr: int, streams: int) -> str:
    return json.dumps({
        "start": {"test_start": {"num_streams": streams}},
        "end": {"streams": [{}] * streams,
                "sum_sent": {"bits_per_second": sent, "bytes": sent / 4, "retransmits": retr},
                "sum_received": {"bits_per_second": recv, "bytes": recv / 4}},
    })


def test_flow_row_from_iperf3_json() -> None:
    row = flow_result(FLOW, _iperf(4.1e8, 3.96e8, 7, 4), "", 0)
    assert row["received_bits_per_second"] == 3.96e8 and row["sent_bits_per_second"] == 4.1e8
    assert (row["retransmits"], row["streams"], row["error"]) == (7, 4, None)


def test_iperf3_error_key_fails_the_flow_even_with_exit_0() -> None:
    """iperf3 3.12 with --json exits 0 on failure; the 'error' key is what says so."""
    text = json.dumps({"start": {}, "intervals": [], "end": {},
                       "error": "unable to connect to server: Connection refused"})
    row = flow_result(FLOW, text, "", 0)
    assert row["error"] == "unable to connect to server: Connection refused"
    assert row["received_bits_per_second"] is None


def test_no_json_is_an_error_row_quoting_stderr() -> None:
    row = flow_result(FLOW, "", "iperf3: error - bad host\n", 1)
    assert row["error"] == "iperf3 wrote no JSON (exit 1): iperf3: error - bad host"


@given(st.text(max_size=400))
def test_any_output_gives_a_row_never_an_exception(text: str) -> None:
    row = flow_result(FLOW, text, text, None)
    assert row["src"] == "a"
    assert row["error"] is not None or row["received_bits_per_second"] is not None


@given(st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=True) | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["end", "start", "sum_sent", "sum_received", "bits_per_second",
                         "retransmits", "streams", "error", "test_start", "num_streams",
                         "bytes"]), inner, max_size=4),
    max_leaves=20))
def test_hostile_json_shapes_never_raise(doc: Any) -> None:
    row = flow_result(FLOW, json.dumps(doc), "", 0)
    for key in ("sent_bits_per_second", "received_bits_per_second"):
        assert row[key] is None or isinstance(row[key], float)


# ---------------------------------------------------------------------------------------------
# counters -> links -> summary


def _counters(plan: LabPlan, tx: dict[tuple[str, str], int]) -> dict[tuple[str, str],
                                                                     tuple[int, int, int]]:
    return {(n.name, i.name): (tx.get((n.name, i.name), 0), 0, 0)
            for n in plan.nodes.values() if n.router for i in n.ifaces}


def test_link_rates_utilisation_and_ecmp_spread(lab2x4: LabPlan) -> None:
    """leaf01 sends 30 MB, 10 MB, 0, 20 MB on Ethernet5..8 in 2 s: Ethernet5 runs at
    30e6 * 8 / 2 / 1e6 = 120 Mb/s, 30 % of its 400 Mb/s shaped rate; spine01 (Ethernet5 and
    Ethernet7) has 30 / 60 of the bytes, spine02 (Ethernet6, Ethernet8) 30 / 60."""
    plan = lab2x4
    before = _counters(plan, {})
    sent = {("leaf01", "Ethernet5"): 30_000_000, ("leaf01", "Ethernet6"): 10_000_000,
            ("leaf01", "Ethernet8"): 20_000_000, ("leaf02", "Ethernet5"): 500}
    after = _counters(plan, sent)
    rows = link_stats(plan, before, after, 2.0)
    e5 = next(r for r in rows if r["link"] == "leaf01:Ethernet5")
    assert (e5["peer"], e5["uplink"], e5["tx_mbps"], e5["util_percent"]) == (
        "spine01:Ethernet1", True, 120.0, 30.0)
    spine_port = next(r for r in rows if r["link"] == "spine01:Ethernet1")
    assert spine_port["uplink"] is False  # a spine's port toward a leaf is a downlink
    s = summarise(plan, [], rows)
    assert list(s["ecmp_spread"]) == ["leaf01"]  # leaf02's 500 bytes are keepalive noise
    sp = s["ecmp_spread"]["leaf01"]
    assert sp["uplinks"] == {"leaf01:Ethernet5": 0.5, "leaf01:Ethernet6": 0.1667,
                             "leaf01:Ethernet7": 0.0, "leaf01:Ethernet8": 0.3333}
    assert sp["by_peer"] == {"spine01": 0.5, "spine02": 0.5}
    assert (sp["max_share"], sp["even_share"]) == (0.5, 0.25)
    ut = s["uplink_util_percent"]
    assert (ut["max"], ut["max_link"], ut["min"], ut["min_link"]) == (
        30.0, "leaf01:Ethernet5", 0.0, "leaf01:Ethernet7")
    assert s["total_gbps"] == 0 and s["mean_flow_gbps"] is None


def test_summary_totals_skip_failed_flows(lab2x4: LabPlan) -> None:
    ok = flow_result(FLOW, _iperf(4e8, 3e8, 2, 4), "", 0)
    ok2 = flow_result(FLOW, _iperf(2e8, 1e8, 1, 4), "", 0)
    bad = flow_result(FLOW, json.dumps({"error": "x"}), "", 0)
    s = summarise(lab2x4, [ok, ok2, bad], [])
    assert (s["flows"], s["flows_failed"], s["total_gbps"], s["mean_flow_gbps"]) == (
        3, 1, 0.4, 0.2)
    assert s["total_gbps_at_fabric_scale"] == 400.0 and s["retransmits"] == 3


def test_counter_reset_counts_as_zero_not_negative(lab2x4: LabPlan) -> None:
    before = _counters(lab2x4, {("leaf01", "Ethernet5"): 1000})
    after = _counters(lab2x4, {})
    row = next(r for r in link_stats(lab2x4, before, after, 1.0)
               if r["link"] == "leaf01:Ethernet5")
    assert row["tx_bytes"] == 0 and row["tx_mbps"] == 0


def test_renderers_accept_a_result(lab2x4: LabPlan) -> None:
    from rich.console import Console  # noqa: PLC0415

    rows = link_stats(lab2x4, _counters(lab2x4, {}),
                      _counters(lab2x4, {("leaf01", "Ethernet5"): 5_000_000}), 1.0)
    flows = [flow_result(FLOW, _iperf(4e8, 3e8, 2, 4), "", 0)]
    result = {"lab": "u", "pattern": "pairs", "duration_s": 1, "parallel": 4,
              "rate_scale": 1000.0, "flows": flows, "links": rows,
              "summary": summarise(lab2x4, flows, rows), "explanation": "how"}
    console = Console(width=160, record=True)
    console.print(traffic_table(result))
    console.print(sample_view(TrafficSample(1.0, 5.0, 40.0, [("a:x", "b:y", 40.0, 10.0)])))
    text = console.export_text()
    assert "leaf01:Ethernet5" in text and "300.0" in text and "a:x" in text


# ---------------------------------------------------------------------------------------------
# the case-study model


def test_goodput_factors() -> None:
    assert goodput_factor(1500, l2=False) == pytest.approx(1448 / 1500)
    assert goodput_factor(9000) == pytest.approx(8948 / 9014)


def test_expected_throughput_before_is_sessions_times_limit() -> None:
    """S17 before at scale 1000: fw1 10 Gb/s per session -> 10 Mb/s; 2 flows x P sessions.
    P = 2: 2 x 2 x 10 x 1448/1500 = 38.61 Mb/s. P = 16 would be 160 Mb/s per flow, but each
    host's 100G NIC (100 Mb/s) caps it, and the access switch's two 100 Mb/s uplinks carry
    both flows: 2 x 100 x 1448/1514 = 191.3 Mb/s with an even split, half of it if both flows
    take the first uplink."""
    plan = _plan("s17-case-study-before.yaml", rate_scale=1000)
    flows = plan_flows(plan, "cross-site")
    lim = {"fw1": 10.0}
    r2 = expected_throughput(plan, flows, parallel=2, session_limits_gbps=lim)
    assert r2["total_mbps"] == pytest.approx(2 * 2 * 10 * 1448 / 1500, abs=0.02)
    assert all(f["limited_by"].startswith("fw1: 2 session(s)") for f in r2["flows"])
    r16 = expected_throughput(plan, flows, parallel=16, session_limits_gbps=lim)
    assert r16["total_mbps"] == pytest.approx(2 * 100 * 1448 / 1514, abs=0.02)
    polar = expected_throughput(plan, flows, parallel=16, session_limits_gbps=lim, even=False)
    assert polar["total_mbps"] == pytest.approx(100 * 1448 / 1514, abs=0.02)
    assert "a-access1:Ethernet31" in polar["flows"][0]["limited_by"]
    # no limit known: the links decide
    free = expected_throughput(plan, flows, parallel=2)
    assert free["total_mbps"] == pytest.approx(r16["total_mbps"], abs=0.02)


def test_expected_throughput_after_is_the_bottleneck_links() -> None:
    """S17 after at scale 1000: two 400 Mb/s NICs, two 400 Mb/s inter-site links:
    2 x 400 x 8948/9014 = 794.1 Mb/s spread evenly, 397.1 all on one path."""
    plan = _plan("s17-case-study-after.yaml", rate_scale=1000)
    flows = plan_flows(plan, "cross-site")
    even = expected_throughput(plan, flows, parallel=2)
    assert even["total_mbps"] == pytest.approx(2 * 400 * 8948 / 9014, abs=0.02)
    polar = expected_throughput(plan, flows, parallel=2, even=False)
    assert polar["total_mbps"] == pytest.approx(400 * 8948 / 9014, abs=0.02)


def test_comm_fraction_from_the_article() -> None:
    """22 -> 9 min from communication alone: c = 13 / (22 (1 - 1/G))."""
    assert comm_fraction(10, 22, 9) == pytest.approx(13 / (22 * 0.9))
    assert comm_fraction(1e9, 22, 9) == pytest.approx(13 / 22)
    assert comm_fraction(2, 22, 9) > 1  # a 2x network gain cannot explain 22 -> 9 alone
    assert comm_fraction(1, 22, 9) is None
