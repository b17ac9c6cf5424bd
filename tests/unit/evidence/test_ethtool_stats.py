"""ethtool -S parser: real captures (tests/fixtures/evidence/ethtool-stats/), variants, speed."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind
from aifabric.evidence.ethtool_stats import (
    EthtoolStats,
    _parse_fast,
    _parse_general,
    classify_counter,
    parse_ethtool_stats,
)
from aifabric.evidence.registry import detect_scores
from tests.unit.evidence.fixtures import case, load

KIND = "ethtool-stats"
CASES = (
    "mlx5-kernel-5.15-xdp-bpf-list",
    "mlx5-kernel-6.5-xdp-bpf-list",
    "bnx2x-per-queue-ethq-6",
    "be2net-with-ethtool-i-ethq-7",
    "node-exporter-r8169-duplicate",
    "virtio-net-netdata-17015",
    "mlx5-grep-prio-before-after-byteps",
    "bnxt-en-pfc-ena-frames-ethq-tests",
    "ice-e810-priority-xoff-nic-ethq-tests",
    "i40e-v2.3.2k-priority-xoff-rx-ethq-tests",
    "ena-flush-left-ethq-tests",
    "mlx5-flush-left-no-header-ethq-tests",
)


def _one(name: str) -> EthtoolStats:
    res = load(KIND, name)
    assert res.warnings == []
    assert len(res.records) == 1
    rec = res.records[0]
    assert isinstance(rec, EthtoolStats)
    return rec


def test_detect_every_fixture() -> None:
    for name in CASES:
        assert detect_kind(case(KIND, name).text()) == KIND, name


def test_mlx5_5_15_counters_groups_and_lines() -> None:
    rec = _one("mlx5-kernel-5.15-xdp-bpf-list")
    assert rec.interface is None and rec.header
    assert rec.line == 4 and rec.first_counter_line == 5 and rec.end_line == 105
    assert len(rec.counters) == 101
    assert rec.counters["rx_discards_phy"] == 58591428329
    assert rec.line_of("rx_discards_phy") == 41
    assert rec.line_of("tx_pause_ctrl_phy") == 40
    assert rec.line_of("rx_out_of_buffer") == 28
    assert rec.line_of("no_such_counter") is None
    assert rec.out_of_buffer == 990473555
    assert rec.pause_counters == {"tx_pause_ctrl_phy": 5745055, "tx_global_pause": 5745042}
    assert rec.discards_by_prio == {0: 58591314012}
    assert rec.per_priority[0]["tx_prio0_packets"] == 5582625883
    assert rec.rx_pause_by_prio == {} and rec.tx_pause_by_prio == {}
    assert rec.discard_counters["rx_discards_phy"] == 58591428329
    assert rec.error_counters["rx_jabbers_phy"] == 0
    # per-channel counters are kept but not grouped
    assert rec.counters["rx0_xdp_drop"] == 3753342954
    assert "rx0_xdp_drop" not in rec.discard_counters


def test_mlx5_6_5_newer_names() -> None:
    rec = _one("mlx5-kernel-6.5-xdp-bpf-list")
    assert len(rec.counters) == 108
    assert rec.counters["rx_discards_phy"] == 441063206498
    assert rec.counters["rx_buffer_passed_thres_phy"] == 1192226
    assert rec.counters["tx_global_pause_duration"] == 5961284324
    assert rec.pause_counters["tx_pause_ctrl_phy"] == 44414017
    assert rec.out_of_buffer == 534918379
    assert rec.nonzero(rec.discard_counters)["rx_discards_phy"] == 441063206498


def test_bnx2x_queue_prefixed_names() -> None:
    rec = _one("bnx2x-per-queue-ethq-6")
    assert rec.interface == "eth0"
    assert len(rec.counters) == 36
    assert rec.counters["[1]: tx_bcast_packets"] == 8249
    assert rec.counters["[2]: rx_ucast_packets"] == 201407420
    assert rec.discard_counters == {} and rec.error_counters == {}


def test_be2net_ignores_ethtool_i_lines() -> None:
    rec = _one("be2net-with-ethtool-i-ethq-7")
    assert rec.interface == "eth0" and rec.line == 14
    assert len(rec.counters) == 37
    assert "driver" not in rec.counters
    assert rec.discard_counters["rx_dropped_too_short"] == 5710
    assert rec.line_of("rx_dropped_too_short") == 24
    assert rec.pause_counters["rx_pause_frames"] == 0
    assert "rx_tcp_checksum_errs" not in rec.error_counters
    assert rec.counters["rx_tcp_checksum_errs"] == 93915


def test_node_exporter_name_with_space() -> None:
    rec = _one("node-exporter-r8169-duplicate")
    assert rec.interface == "eth0"
    assert rec.counters["duplicate metric"] == 1
    assert rec.counters["duplicate_metric"] == 2
    assert rec.discard_counters == {"rx_missed": 401}


def test_virtio_queue_only() -> None:
    rec = _one("virtio-net-netdata-17015")
    assert len(rec.counters) == 27
    assert rec.counters["rx_queue_1_kicks"] == 6
    assert rec.discard_counters == {}


def test_headerless_grep_before_after() -> None:
    res = load(KIND, "mlx5-grep-prio-before-after-byteps")
    assert res.warnings == []
    before, after = res.records
    assert isinstance(before, EthtoolStats) and isinstance(after, EthtoolStats)
    assert before.interface == "enp178s0f0" and not before.header
    assert len(before.counters) == 32 and len(after.counters) == 18
    assert before.counters["rx_prio0_bytes"] == 88034564921216
    assert after.counters["rx_prio0_bytes"] == 88171136852706
    assert after.first_counter_line == 39
    assert sorted(before.per_priority) == list(range(8))
    assert before.per_priority[3] == {
        "rx_prio3_bytes": 0,
        "rx_prio3_packets": 0,
        "tx_prio3_bytes": 0,
        "tx_prio3_packets": 0,
    }


def test_garbled_line_inside_dump_warns_once() -> None:
    text = case(KIND, "mlx5-kernel-5.15-xdp-bpf-list").text()
    clean = parse_ethtool_stats(text).records[0]
    for bad in ("     rx_prio3_pause: 12ab##", "@@@ garbage @@@"):
        lines = text.split("\n")
        lines.insert(30, bad)  # becomes line 31
        res = parse_ethtool_stats("\n".join(lines))
        assert [w.line for w in res.warnings] == [31]
        assert len(res.records) == 1
        rec = res.records[0]
        assert isinstance(clean, EthtoolStats) and isinstance(rec, EthtoolStats)
        assert rec.counters == clean.counters
        assert rec.discard_counters == clean.discard_counters
        assert rec.line_of("rx_discards_phy") == 42  # shifted by the inserted line


def test_truncated_capture() -> None:
    text = case(KIND, "be2net-with-ethtool-i-ethq-7").text()
    cut = text[: text.index("rx_drops_mtu") + 6]  # "...     rx_dro" mid-line
    res = parse_ethtool_stats(cut)
    assert len(res.warnings) == 1 and res.warnings[0].line == 44
    assert parse_ethtool_stats("$ ethtool -S eth0\nNIC statistics:\n").warnings[0].line == 2


def test_several_interfaces_with_prompts_and_tail_headers() -> None:
    a = case(KIND, "node-exporter-r8169-duplicate").text()
    v = case(KIND, "virtio-net-netdata-17015").text().replace("# ethtool -S eth0", "==> eth7 <==")
    res = parse_ethtool_stats(a.replace("eth0", "eth2") + "\n" + v)
    assert [r.interface for r in res.records] == ["eth2", "eth7"]  # type: ignore[attr-defined]


def test_classify_intel_and_bnxt_names() -> None:
    assert classify_counter("rx_priority_3_xoff.nic") == ("rx_pause", 3)
    assert classify_counter("port.tx_priority_3_xoff") == ("tx_pause", 3)
    assert classify_counter("rx_pfc_ena_frames_pri3") == ("rx_pause", 3)
    assert classify_counter("rx_prio3_pause_duration") == ("rx_pause_dur", 3)
    assert classify_counter("rx_prio3_buf_discard") == ("prio_discard", 3)
    assert classify_counter("rx_crc_errors_phy") == ("error", None)
    assert classify_counter("rx_symbol_err_phy") == ("error", None)
    assert classify_counter("rx_corrected_bits_phy") == ("corrected_bits", None)
    assert classify_counter("rx12_packets") is None
    assert classify_counter("admin_q_pause") is None  # ena: admin queue paused, no pause frame


_NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,24}", fullmatch=True)


@given(st.dictionaries(_NAMES, st.integers(min_value=0, max_value=2**64 - 1), min_size=1))
@settings(max_examples=60, deadline=None)
def test_round_trip_random_counters(counters: dict[str, int]) -> None:
    text = "NIC statistics:\n" + "".join(f"     {k}: {v}\n" for k, v in counters.items())
    res = parse_ethtool_stats(text)
    assert res.warnings == []
    rec = res.records[0]
    assert isinstance(rec, EthtoolStats)
    assert rec.counters == counters
    assert all(rec.line_of(k) == i + 2 for i, k in enumerate(counters))


@given(st.text(max_size=400))
@settings(max_examples=150, deadline=None)
def test_never_raises(text: str) -> None:
    parse_ethtool_stats(text)


def test_bnxt_en_pfc_and_ring_discards() -> None:
    rec = _one("bnxt-en-pfc-ena-frames-ethq-tests")
    assert rec.header and len(rec.counters) == 499
    assert rec.counters["[0]: rx_discards"] == 11763190  # per-ring: not a port discard
    assert "[0]: rx_discards" not in rec.discard_counters
    assert rec.discard_counters["rx_total_ring_discards"] == 655430134
    assert rec.line_of("rx_total_ring_discards") == 295
    assert rec.rx_pause_by_prio == dict.fromkeys(range(8), 0)  # rx_pfc_ena_frames_pri0..7
    # bnxt_en pfc_priN_rx_duration_us is the pause duration (µs), the transitions are not
    assert rec.rx_pause_duration_us_by_prio == dict.fromkeys(range(8), 0)
    assert rec.tx_pause_duration_us_by_prio == dict.fromkeys(range(8), 0)
    assert classify_counter("pfc_pri3_rx_transitions") == ("prio", 3)
    assert rec.per_priority[3]["pfc_pri3_tx_duration_us"] == 0
    assert rec.error_counters["rx_pcs_symbol_err"] == 0
    assert rec.link_down_events == 0


def test_ice_priority_xoff_nic() -> None:
    rec = _one("ice-e810-priority-xoff-nic-ethq-tests")
    assert len(rec.counters) == 602 and rec.counters["rx_unicast"] == 12117448
    assert set(rec.per_priority[3]) == {
        "tx_priority_3_xon.nic",
        "tx_priority_3_xoff.nic",
        "rx_priority_3_xon.nic",
        "rx_priority_3_xoff.nic",
    }
    assert rec.rx_pause_by_prio[3] == 0 and rec.tx_pause_by_prio[7] == 0
    assert rec.line_of("rx_priority_3_xoff.nic") == 595
    assert rec.error_counters["rx_crc_errors.nic"] == 0


def test_i40e_xoff_rx_names_and_xon_2_xoff_is_not_a_pause() -> None:
    rec = _one("i40e-v2.3.2k-priority-xoff-rx-ethq-tests")
    assert rec.discard_counters["rx_dropped"] == 179160
    assert classify_counter("port.rx_priority_3_xoff_rx") == ("rx_pause", 3)
    assert classify_counter("port.tx_priority_3_xoff_tx") == ("tx_pause", 3)
    assert classify_counter("port.rx_priority_3_xon_2_xoff") == ("prio", 3)
    assert rec.line_of("port.rx_priority_3_xoff_rx") == 398
    assert len(rec.rx_pause_by_prio) == 8


def test_mlx5_flush_left_without_header() -> None:
    text = case(KIND, "mlx5-flush-left-no-header-ethq-tests").text()
    assert detect_kind(text) == KIND
    rec = _one("mlx5-flush-left-no-header-ethq-tests")
    assert not rec.header and rec.first_counter_line == 1 and len(rec.counters) == 751
    assert rec.counters["rx_packets"] == 845320277
    assert rec.per_priority[0]["rx_prio0_bytes"] == 2202570777997
    assert rec.pause_counters["rx_pause_ctrl_phy"] == 0
    assert rec.discard_counters["rx_discards_phy"] == 0 and rec.line_of("rx_discards_phy") == 78
    assert rec.out_of_buffer == 0 and rec.line_of("rx_out_of_buffer") == 39


def test_ixgbe_pb_pxoff_is_a_priority_pause() -> None:
    assert classify_counter("rx_pb_3_pxoff") == ("rx_pause", 3)
    assert classify_counter("tx_pb_3_pxoff") == ("tx_pause", 3)


def test_annotation_after_value_is_not_a_garbled_line() -> None:
    text = (
        "NIC statistics:\n"
        "     rx_prio3_pause: 41927                 \u2190 pause frames RECEIVED\n"
        "     rx_vport_rdma_unicast_packets: 7  # RDMA unicast\n"
    )
    res = parse_ethtool_stats(text)
    assert res.warnings == []
    rec = res.records[0]
    assert isinstance(rec, EthtoolStats)
    assert rec.rx_pause_by_prio == {3: 41927}
    assert rec.counters["rx_vport_rdma_unicast_packets"] == 7


_NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.]{0,20}", fullmatch=True)


@settings(max_examples=80, deadline=None)
@given(
    st.booleans(),
    st.sampled_from(["", "     ", "\t"]),
    st.lists(st.tuples(_NAMES, st.integers(min_value=-5, max_value=2**63)), min_size=1),
)
def test_fast_path_equals_general_parser(
    header: bool, indent: str, pairs: list[tuple[str, int]]
) -> None:
    text = ("NIC statistics:\n" if header else "") + "".join(
        f"{indent}{n}: {v}\n" for n, v in pairs
    )
    fast = _parse_fast(text)
    if fast is not None:
        assert fast.to_json() == _parse_general(text).to_json()


@pytest.mark.parametrize("name", CASES)
def test_fast_path_equals_general_parser_on_fixtures(name: str) -> None:
    text = case(KIND, name).text()
    fast = _parse_fast(text)
    if fast is not None:
        assert fast.to_json() == _parse_general(text).to_json()


def test_ena_flush_left_without_rx_tx_prefixes() -> None:
    # AWS ENA as ethq stores it: no header, no indent, queue_N_* / ena_admin_q_* names
    c = case("ethtool-stats", "ena-flush-left-ethq-tests")
    assert detect_kind(c.text()) == "ethtool-stats"
    res = load("ethtool-stats", "ena-flush-left-ethq-tests")
    assert res.warnings == []
    [rec] = res.records
    assert isinstance(rec, EthtoolStats)
    assert (rec.header, rec.first_counter_line, len(rec.counters)) == (
        False,
        1,
        104,
    )  # 104 lines, one counter each
    assert rec.counters["queue_3_rx_bytes"] == 66809815952
    assert rec.counters["ena_admin_q_completed_cmd"] == 28 and rec.line_of("tx_timeout") == 1
    # per-queue counters are not port-level groups; nothing here is a pause, discard or error
    assert rec.pause_counters == {} and rec.error_counters == {}
    assert not rec.nonzero(rec.discard_counters)


@given(
    st.dictionaries(
        st.from_regex(r"[a-z]{2,8}_[a-z0-9_]{1,16}", fullmatch=True),
        st.integers(min_value=0, max_value=2**64 - 1),
        min_size=8,
        max_size=40,
    )
)
@settings(max_examples=60, deadline=None)
def test_headerless_snake_case_list_detected_and_round_trips(counters: dict[str, int]) -> None:
    text = "".join(f"{k}: {v}\n" for k, v in counters.items())
    assert detect_kind(text) == "ethtool-stats"
    res = parse_ethtool_stats(text)
    assert res.warnings == []
    assert res.records[0].counters == counters  # type: ignore[attr-defined]


def test_few_flush_left_pairs_are_not_ethtool() -> None:
    # three "snake_case: integer" lines (an ethtool -i tail, a config excerpt) are too few
    scores = dict((k, v) for v, k in detect_scores("bus_info: 3\nsupports_test: 1\nmax_x: 2\n"))
    assert scores.get(KIND, 0.0) == 0.0
