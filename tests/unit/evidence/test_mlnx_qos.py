"""mlnx_qos parser against real captures."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind
from aifabric.evidence.mlnx_qos import QosReport, parse_mlnx_qos
from tests.unit.evidence.fixtures import all_cases, assert_garbage_line_is_one_warning, case, load

CASES = [c for c in all_cases() if c.kind == "mlnx-qos"]


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_fixture_detects_and_warns_as_documented(c: Any) -> None:
    assert detect_kind(c.text()) == "mlnx-qos"
    res = c.parse()
    assert res.of_type(QosReport)
    assert len(res.warnings) == c.meta.get("warnings", 0), [str(w) for w in res.warnings]


@pytest.mark.parametrize(
    ("name", "after"), [("att-netarbiter-setup-trace", 20), ("cnblogs-bandaoyu-ets-strict", 13)]
)
def test_garbage_line_gives_one_warning_and_changes_nothing_else(name: str, after: int) -> None:
    assert_garbage_line_is_one_warning("mlnx-qos", name, after)


def test_setup_trace_two_reports() -> None:
    res = load("mlnx-qos", "att-netarbiter-setup-trace")
    first, second = res.of_type(QosReport)
    assert (first.line, first.end_line, second.line) == (5, 35, 42)
    for rep in (first, second):
        assert rep.interface == "eth4"
        assert (rep.dcbx_mode, rep.trust, rep.cable_len_m) == ("OS controlled", "dscp", 7)
        assert len(rep.dscp_to_priority) == 64
        assert rep.dscp_to_priority[26] == 3
        assert rep.dscp_to_priority[46] == 5
        assert rep.dscp_to_priority[0] == 0
        assert rep.pfc_enabled_priorities == [3]
        assert rep.pfc_priorities_listed == list(range(8))
        assert rep.receive_buffer_bytes == []
        assert rep.priority_to_buffer == {}
        assert [t.tc for t in rep.tcs] == list(range(8))
        assert all(t.tsa == "vendor" and t.ratelimit_gbps is None for t in rep.tcs)
        assert rep.tcs[0].priorities == [1]
        assert rep.tcs[1].priorities == [0]
        assert rep.priority_tc()[3] == 3


def test_old_layout_ets_and_strict() -> None:
    res = load("mlnx-qos", "cnblogs-bandaoyu-ets-strict")
    (rep,) = res.of_type(QosReport)
    assert (rep.interface, rep.trust, rep.cable_len_m) == ("eth2", "dscp", 10)
    assert rep.dscp_to_priority[31] == 3
    assert rep.pfc_enabled_priorities == [0, 2, 6, 7]
    assert len(rep.tcs) == 7
    tc0 = rep.tcs[0]
    assert (tc0.tsa, tc0.bw_percent, tc0.ratelimit_raw, tc0.priorities) == (
        "ets",
        10,
        "unlimited",
        [1],
    )
    assert (rep.tcs[6].tsa, rep.tcs[6].bw_percent, rep.tcs[6].priorities) == ("strict", None, [])
    assert rep.end_line == 36


def test_receive_buffer_and_ratelimit_lines() -> None:
    # Line shapes from mlnx_qos output with a manual buffer configuration and a rate limit.
    text = (
        "Priority trust state: dscp\n"
        "Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,max_buffer_size=262016\n"
        "PFC configuration:\n"
        "        priority    0   1   2   3   4   5   6   7\n"
        "        enabled     0   0   0   1   0   0   0   0   \n"
        "        buffer      0   0   0   1   0   0   0   0   \n"
        "tc: 3 ratelimit: 100.0 Gbps, tsa: ets, bw: 50%\n"
        "         priority:  3\n"
    )
    (rep,) = parse_mlnx_qos(text).of_type(QosReport)
    assert rep.receive_buffer_bytes == [130944, 130944, 0, 0, 0, 0, 0, 0]
    assert rep.max_buffer_size_bytes == 262016
    assert rep.priority_to_buffer[3] == 1
    assert rep.tcs[0].ratelimit_gbps == 100.0
    assert rep.tcs[0].bw_percent == 50


def test_truncated_report_warns() -> None:
    lines = case("mlnx-qos", "cnblogs-bandaoyu-ets-strict").text().splitlines()[:10]
    res = parse_mlnx_qos("\n".join(lines))
    assert len(res.of_type(QosReport)) == 1
    assert len(res.warnings) == 1


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_never_raises(text: str) -> None:
    parse_mlnx_qos(text)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "DCBX mode: OS controlled",
                "Priority trust state: dscp",
                "prio:3 dscp:26,",
                "prio:x dscp:",
                "PFC configuration:",
                "priority 0 1 2",
                "enabled 1",
                "buffer 9 9 9 9 9 9 9 9 9 9",
                "tc: 1 ratelimit: 5 Mbps, tsa: ets, bw: %",
                "priority: 2",
                "Receive buffer size (bytes): max_buffer_size=",
                "Cable len:",
                "zz",
            ]
        ),
        max_size=30,
    )
)
def test_never_raises_on_marker_soup(parts: list[str]) -> None:
    parse_mlnx_qos("\n".join(parts))


def test_original_community_page_indented_with_blank_lines() -> None:
    res = load("mlnx-qos", "mellanox-doc2792-indented-blank-lines")
    assert not res.warnings
    (rep,) = res.of_type(QosReport)
    assert (rep.interface, rep.dcbx_mode, rep.trust, rep.cable_len_m) == (
        "eth2",
        "OS controlled",
        "dscp",
        10,
    )
    assert len(rep.dscp_to_priority) == 64
    assert rep.dscp_to_priority[26] == 3
    assert rep.dscp_to_priority[46] == 5
    assert rep.pfc_enabled_priorities == [0, 2, 6, 7]
    assert [(t.tc, t.tsa, t.bw_percent) for t in rep.tcs] == [
        (0, "ets", 10),
        (1, "ets", 10),
        (2, "ets", 10),
        (3, "ets", 10),
        (4, "ets", 10),
        (5, "ets", 10),
        (6, "strict", None),
        (7, "ets", 40),
    ]
    assert rep.priority_tc()[1] == 0
    assert rep.priority_tc()[0] == 1
    assert rep.end_line == 49


UNSUPPORTED = """jdamato@test:~/mlnx-tools/python$ ./mlnx_qos -i vlan401
Priority trust state is not supported on your system
Buffers commands are not supported on your system
Rate limit is not supported on your system!
ETS features are not supported on your system
"""
"""source: https://lore.kernel.org/netdev/Zl4HSaP4z_UiYnnc@LQ3V64L9R2/ (mlnx_qos from
Mellanox/mlnx-tools run on a VLAN interface: the lines as mlnx_qos prints them; the same mail is
benchmarks/captures/frozen8/v-mlnx-qos-not-supported-cx5-netdev, a regression capture)."""


def test_not_supported_lines_are_a_report_of_what_is_missing() -> None:
    assert detect_kind(UNSUPPORTED) == "mlnx-qos"
    res = parse_mlnx_qos(UNSUPPORTED)
    (rep,) = res.of_type(QosReport)
    assert rep.interface == "vlan401"
    assert rep.unsupported == [
        "Priority trust state", "Buffers commands", "Rate limit", "ETS features",
    ]  # fmt: skip
    assert not res.warnings  # not a truncated report: mlnx_qos printed all it could


def test_a_report_with_nothing_supported_is_a_qos_warning(tmp_path: Any) -> None:
    from aifabric.checks.diagnose import diagnose, load_evidence  # noqa: PLC0415

    f = tmp_path / "qos.txt"
    f.write_text(UNSUPPORTED, encoding="utf-8")
    (v,) = [x for x in diagnose(load_evidence([f])).findings if x.check.endswith("qos-unsupported")]
    assert v.severity == "warning" and v.cause == "config.qos" and "vlan401" in v.message
