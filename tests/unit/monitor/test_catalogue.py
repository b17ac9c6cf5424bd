"""The metric catalogue: Prometheus naming rules, label completeness, raw-name mapping of real
driver counter names (mlx5, ice, bnxt captures), canonical names back, and the selection."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aifabric.errors import InputError
from aifabric.evidence.ethtool_stats import parse_ethtool_stats
from aifabric.monitor.catalogue import SOURCES, Selection, load_catalogue

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "evidence" / "ethtool-stats"
CAT = load_catalogue()


def test_names_follow_prometheus_practice() -> None:
    for m in CAT.metrics:
        assert re.fullmatch(r"aifabric_[a-z0-9_]+", m.name)
        assert m.name.endswith("_total") == (m.type == "counter"), m.name
        assert m.labels[0] == "node"
        assert set(m.sources) <= set(SOURCES)
        assert m.help.endswith("."), m.name


def test_every_seed_reference_is_an_s_id() -> None:
    for m in CAT.metrics:
        assert m.seed, m.name
        for s in m.seed:
            assert re.fullmatch(r"S\d+(?:\.\d+)?", s), (m.name, s)


@pytest.mark.parametrize(
    ("raw", "metric", "labels", "scale"),
    [
        (
            "rx_prio3_pause",
            "aifabric_port_pfc_frames_total",
            {"direction": "rx", "priority": "3"},
            1,
        ),
        (
            "tx_prio3_pause",
            "aifabric_port_pfc_frames_total",
            {"direction": "tx", "priority": "3"},
            1,
        ),
        (
            "rx_priority_3_xoff.nic",
            "aifabric_port_pfc_frames_total",
            {"direction": "rx", "priority": "3"},
            1,
        ),
        (
            "port.tx_priority_5_xoff",
            "aifabric_port_pfc_frames_total",
            {"direction": "tx", "priority": "5"},
            1,
        ),
        (
            "rx_pfc_ena_frames_pri4",
            "aifabric_port_pfc_frames_total",
            {"direction": "rx", "priority": "4"},
            1,
        ),
        (
            "rx_prio3_pause_duration",
            "aifabric_port_pfc_pause_duration_seconds_total",
            {"direction": "rx", "priority": "3"},
            1e-6,
        ),
        (
            "pfc_pri3_tx_duration_us",
            "aifabric_port_pfc_pause_duration_seconds_total",
            {"direction": "tx", "priority": "3"},
            1e-6,
        ),
        ("tx_pause_ctrl_phy", "aifabric_port_global_pause_frames_total", {"direction": "tx"}, 1),
        ("rx_discards_phy", "aifabric_port_discards_total", {"direction": "rx"}, 1),
        ("rx_out_of_buffer", "aifabric_nic_out_of_buffer_packets_total", {}, 1),
        ("rx_symbol_err_phy", "aifabric_port_phy_errors_total", {"kind": "symbol"}, 1),
    ],
)
def test_ethtool_names_map(raw: str, metric: str, labels: dict[str, str], scale: float) -> None:
    got = CAT.mapper("ethtool").map(raw)
    assert len(got) == 1
    assert got[0].metric == metric
    assert dict(got[0].labels) == labels
    assert got[0].scale == pytest.approx(scale)


@pytest.mark.parametrize(
    "raw",
    [
        "rx0_packets",
        "tx12_xmit_more",
        "rx_queue_0_drops",
        "[3]: rx_ucast_packets",
        "ch5_poll",
        "rx_prio3_packets_x",
    ],
)
def test_per_queue_and_unknown_names_map_to_nothing(raw: str) -> None:
    assert CAT.mapper("ethtool").map(raw) == ()


def test_a_real_mlx5_dump_maps_only_bounded_series() -> None:
    """The kernel 6.5 mlx5 dump (lore.kernel.org bpf list): 100+ counters, per-channel ones
    among them; what maps is a bounded set with the dump's known values."""
    rec = parse_ethtool_stats((FIX / "mlx5-kernel-6.5-xdp-bpf-list" / "input.txt").read_text())
    counters = rec.records[0].counters  # type: ignore[attr-defined]
    mapper = CAT.mapper("ethtool")
    mapped = {
        (t.metric, t.labels): counters[raw] * t.scale for raw in counters for t in mapper.map(raw)
    }
    assert mapped[("aifabric_port_discards_total", (("direction", "rx"),))] == 441063206498
    assert mapped[("aifabric_port_global_pause_frames_total", (("direction", "tx"),))] == 44414017
    assert mapped[("aifabric_nic_out_of_buffer_packets_total", ())] == 534918379
    assert not any(re.match(r"(rx|tx)\d+_", raw) and mapper.map(raw) for raw in counters)


def test_canonical_names_round_trip() -> None:
    for source in ("ethtool", "sonic", "rdma"):
        mapper = CAT.mapper(source)
        for m in CAT.metrics:
            for rule in m.sources.get(source, [])[:1]:
                groups = re.compile(rule.match).groupindex
                labels = {g: "3" for g in groups} | dict(rule.set)
                raw = mapper.canonical(m.name, labels)
                assert raw is not None, (m.name, rule.match)
                assert any(
                    t.metric == m.name and dict(t.labels) == labels for t in mapper.map(raw)
                ), (m.name, raw)


def test_selection_defaults_allow_deny() -> None:
    off = CAT.by_name["aifabric_port_priority_packets_total"]
    on = CAT.by_name["aifabric_port_pfc_frames_total"]
    assert not Selection().enabled(off) and Selection().enabled(on)
    assert Selection(allow=("aifabric_port_priority_.*",)).enabled(off)
    assert not Selection(allow=(".*",), deny=("aifabric_port_pfc_.*",)).enabled(on)
    assert Selection(deny=("nothing_like_this",)).check([on.name]) == ["nothing_like_this"]
    with pytest.raises(InputError, match="not a regular expression"):
        Selection(allow=("(",)).check([on.name])


def _write(tmp: Path, body: str) -> Path:
    p = tmp / "cat.yaml"
    p.write_text(body)
    return p


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "metrics:\n- {name: aifabric_xy, help: h., type: counter, unit: frames, group: g,"
            " labels: [node], sources: {}}\n",
            "ends in _total",
        ),
        (
            "metrics:\n- {name: aifabric_x_total, help: h., type: gauge, unit: frames, group: g,"
            " labels: [node], sources: {}}\n",
            "does not end in _total",
        ),
        (
            "metrics:\n- {name: aifabric_x_total, help: h., type: counter, unit: seconds, group: g,"
            " labels: [node], sources: {}}\n",
            "suffix _seconds",
        ),
        (
            "metrics:\n- {name: aifabric_x_total, help: h., type: counter, unit: frames, group: g,"
            " labels: [node], sources: {ethtool: [{match: 'rx_prio(?P<priority>[0-7])'}]}}\n",
            "not declared",
        ),
        (
            "metrics:\n- {name: aifabric_x_total, help: h., type: counter, unit: frames, group: g,"
            " labels: [node], sources: {snmp: []}}\n",
            "unknown sources",
        ),
        (
            "metrics:\n- {name: aifabric_x_total, help: h., type: counter, unit: frames, group: g,"
            " labels: [interface], sources: {}}\n",
            "node label",
        ),
    ],
)
def test_bad_catalogue_is_one_clear_error(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        load_catalogue(_write(tmp_path, body))


@given(st.text(max_size=60))
def test_mapping_never_raises(raw: str) -> None:
    for source in SOURCES:
        for t in CAT.mapper(source).map(raw):
            assert t.metric in CAT.by_name
