"""Collectors on real inputs: an RDMA sysfs tree materialised from a ``grep -r -H .`` capture,
``ethtool -m`` captures through an injected runner, tailed NCCL / PyTorch logs, and the text
exposition of the result (escaping, families, values)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aifabric.errors import EnvironmentProblem
from aifabric.monitor.catalogue import load_catalogue
from aifabric.monitor.exposition import Scrape, escape_label, format_value
from aifabric.monitor.sources import (
    ModuleCollector,
    NcclLogCollector,
    RdmaSysfsCollector,
    Target,
    classify_nccl_line,
)

FIX = Path(__file__).resolve().parents[2] / "fixtures"
CAT = load_catalogue()


def series(text: str) -> dict[str, float]:
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


def materialise(listing: Path, root: Path) -> Path:
    """Recreate the files of a ``grep -r -H . /sys/class/infiniband/...`` capture."""
    for line in listing.read_text().splitlines():
        m = re.match(r"/sys/class/infiniband/(\S+?):(.*)$", line)
        if m:
            p = root / m.group(1)
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(m.group(2) + "\n")
    return root


def test_rdma_sysfs_counters(tmp_path: Path) -> None:
    root = materialise(
        FIX
        / "evidence"
        / "sysfs-infiniband"
        / "kernel-format-roce-mlx5-grep-r-ports"
        / "input.txt",
        tmp_path / "infiniband",
    )
    col = RdmaSysfsCollector("h1", root)
    scrape = Scrape(CAT)
    col.collect(scrape)
    got = series(scrape.render().decode())
    ident = 'node="h1",device="mlx5_0",port="1"'
    assert got[f"aifabric_rdma_out_of_sequence_total{{{ident}}}"] == 12
    assert got[f"aifabric_rdma_packet_sequence_errors_total{{{ident}}}"] == 3
    assert got[f"aifabric_rdma_ecn_marked_packets_total{{{ident}}}"] == 4021
    assert got[f"aifabric_rdma_cnp_sent_total{{{ident}}}"] == 3990
    assert got[f"aifabric_rdma_cnp_handled_total{{{ident}}}"] == 1875
    # the file changes: the next scrape reads the new value through the open descriptor
    (root / "mlx5_0/ports/1/hw_counters/out_of_sequence").write_text("40\n")
    scrape = Scrape(CAT)
    col.collect(scrape)
    assert series(scrape.render().decode())[f"aifabric_rdma_out_of_sequence_total{{{ident}}}"] == 40
    col.close()


def test_rdma_sysfs_missing_root_and_na_values(tmp_path: Path) -> None:
    scrape = Scrape(CAT)
    RdmaSysfsCollector("h1", tmp_path / "absent").collect(scrape)
    assert scrape.series == 0
    d = tmp_path / "ib" / "i40iw0" / "ports" / "1" / "counters"
    d.mkdir(parents=True)
    (d / "symbol_error").write_text("N/A (no PMA)\n")
    (d / "link_downed").write_text("2\n")
    RdmaSysfsCollector("h1", tmp_path / "ib").collect(scrape)
    got = series(scrape.render().decode())
    assert got == {'aifabric_rdma_port_link_downed_total{node="h1",device="i40iw0",port="1"}': 2}


def test_optics_from_ethtool_m_capture() -> None:
    """cumulus-docs SFP-10G-SR: rx -2.66 dBm, thresholds low alarm -20.00, low warning -18.01,
    temperature high alarm 78 °C (values read off the capture)."""
    text = (
        FIX / "evidence" / "ethtool-module" / "cumulus-docs-sfp-10g-sr-prompt" / "input.txt"
    ).read_text()
    calls: list[list[str]] = []

    def runner(argv: list[str]) -> str:
        calls.append(list(argv))
        if argv[-1] == "eth9":
            raise EnvironmentProblem("ethtool -m eth9: Operation not supported")
        return text

    col = ModuleCollector("h1", ["swp1", "eth9"], netns="afl:x:h1", runner=runner)
    col.refresh()
    col.refresh()  # eth9 is not asked again
    assert calls[0] == ["ip", "netns", "exec", "afl:x:h1", "ethtool", "-m", "swp1"]
    assert sum(1 for c in calls if c[-1] == "eth9") == 1
    scrape = Scrape(CAT)
    col.collect(scrape)
    got = series(scrape.render().decode())
    assert got['aifabric_optics_rx_power_dbm{node="h1",interface="swp1",lane="1"}'] == -2.66
    lvl = 'aifabric_optics_rx_power_threshold_dbm{node="h1",interface="swp1",level="%s"}'
    assert got[lvl % "low_alarm"] == -20.0
    assert got[lvl % "low_warning"] == -18.01
    assert (
        got[
            'aifabric_optics_temperature_threshold_celsius{node="h1",interface="swp1",'
            'level="high_alarm"}'
        ]
        == 78.0
    )
    assert not any("eth9" in k for k in got)


def test_dark_lane_is_minus_infinity() -> None:
    text = (
        FIX / "evidence" / "ethtool-module" / "netdev-mlx4-qsfp-plus-40g-sr4" / "input.txt"
    ).read_text()
    col = ModuleCollector("h1", ["eth2"], runner=lambda argv: text)
    col.refresh()
    scrape = Scrape(CAT)
    col.collect(scrape)
    rendered = scrape.render().decode()
    assert 'aifabric_optics_rx_power_dbm{node="h1",interface="eth2",lane="1"} -1.15' in rendered
    assert 'aifabric_optics_rx_power_dbm{node="h1",interface="eth2",lane="2"} -Inf' in rendered
    assert (
        'aifabric_optics_tx_bias_amperes{node="h1",interface="eth2",lane="1"} 0.006662' in rendered
    )


@pytest.mark.parametrize(
    ("fixture", "kind"),
    [
        ("evidence/nccl-log/ib-completion-status12-roce-v4mapped", "retry"),
        ("signatures/pytorch/watchdog-timeout-sglang-1693", "timeout"),
    ],
)
def test_nccl_log_lines_from_real_logs(fixture: str, kind: str) -> None:
    lines = (FIX / fixture / "input.txt").read_text().splitlines()
    kinds = {classify_nccl_line(ln) for ln in lines}
    assert kind in kinds


def test_nccl_log_tail_counts_new_lines_and_follows_rotation(tmp_path: Path) -> None:
    log = tmp_path / "rank0.log"
    log.write_text("h:1:2 [0] NCCL WARN old warning before the exporter started\n")
    col = NcclLogCollector("h1", [str(tmp_path / "*.log")])
    scrape = Scrape(CAT)
    col.collect(scrape)
    assert col.counts == {"timeout": 0, "retry": 0, "error": 0, "warn": 0}
    with log.open("a") as f:
        f.write(
            "h:1:2 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<5> with error 12, "
            "opcode 0, len 0, vendor err 129\n"
        )
        f.write(
            "[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9) ran "
            "for 600005 milliseconds before timing out.\n"
        )
        f.write(
            "h:1:2 [0] NCCL WARN Call to ibv_modify_qp failed with error Connection timed"
        )  # no \n yet
    col.collect(Scrape(CAT))
    assert col.counts == {"timeout": 1, "retry": 1, "error": 0, "warn": 0}
    with log.open("a") as f:
        f.write(" out\nh:1:2 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via P2P/IPC\n")
    col.collect(Scrape(CAT))
    assert col.counts["timeout"] == 2  # the completed line: "timed out" in an NCCL WARN
    log.unlink()
    log.write_text("h:1:2 [0] NCCL WARN plain warning\n")  # rotated: new inode, read from 0
    scrape = Scrape(CAT)
    col.collect(scrape)
    assert col.counts["warn"] == 1
    got = series(scrape.render().decode())
    assert got['aifabric_nccl_log_events_total{node="h1",kind="timeout"}'] == 2


def test_target_interface_globs() -> None:
    t = Target("h1", None, ("eth*", "ens1f*"))
    assert t.wants("eth0") and t.wants("ens1f0np0")
    assert not t.wants("lo") and not t.wants("docker0")
    assert Target("h1").wants("anything") and not Target("h1").wants("lo")


def test_exposition_escaping_and_values() -> None:
    assert escape_label('a"b') == 'a\\"b'
    assert format_value(float("nan")) == "NaN" and format_value(-math.inf) == "-Inf"
    scrape = Scrape(CAT, max_series=2)
    ident = (("node", 'we"ird\\name'), ("interface", "eth0"))
    scrape.add_raw("link", ident, {"mtu": 9000, "oper_up": 1, "rx_bytes": 5})
    assert scrape.series == 2 and scrape.dropped == 1
    text = scrape.render().decode()
    assert 'node="we\\"ird\\\\name"' in text
    assert text.count("# TYPE") == 2


@given(
    st.dictionaries(st.text(max_size=40), st.integers(0, 2**64 - 1), max_size=30),
    st.text(max_size=20),
)
def test_scrape_of_any_counters_renders(counters: dict[str, int], node: str) -> None:
    scrape = Scrape(CAT)
    for source in ("ethtool", "rdma", "link", "sonic", "qdisc"):
        scrape.add_raw(source, (("node", node), ("interface", "x")), counters)
    text = scrape.render().decode()
    for line in text.splitlines():
        if line and not line.startswith("#"):
            float(line.rpartition(" ")[2])
