"""Outputs pasted inside something else: a program's log prefix, a grep over several files, a
line wrapped at a tab, a command glued to its prompt (real captures, tests/fixtures/evidence)."""

from __future__ import annotations

from pathlib import Path

from aifabric.evidence import decode_capture, detect_kind
from aifabric.evidence.bonding import BondInfo
from aifabric.evidence.ethtool_info import EthtoolLink
from aifabric.evidence.linux_net import IpLink
from aifabric.evidence.paste import Part, parse_paste
from aifabric.evidence.rdma_counters import RdmaCounters
from aifabric.evidence.rdma_tools import Ibdev2netdev, RdmaLink
from aifabric.evidence.sysctl import SysctlValue

from .fixtures import case, load


def test_rdma_statistic_pretty_form_of_a_mana_port_is_detected_and_read() -> None:
    c = case("rdma-hw-counters", "mana-statistic-pretty-glued-prompt")
    assert detect_kind(c.text()) == "rdma-hw-counters"
    (rec,) = [r for r in c.parse().records if isinstance(r, RdmaCounters)]
    assert (rec.device, rec.port, rec.source) == ("mana_0", 1, "rdma-statistic")
    assert rec.counters["requester_timeout"] == 45
    assert rec.counters["requester_retries_exceeded"] == 5
    assert rec.nonzero_errors()["requester_timeout"] == 45


def test_rdma_statistic_mr_lines_are_one_record_per_memory_region() -> None:
    recs = [r for r in load("rdma-hw-counters", "rdma-stat-mr-odp-before-after").records
            if isinstance(r, RdmaCounters)]  # fmt: skip
    assert [(r.device, r.port, r.source, r.attributes["mrn"]) for r in recs] == [
        ("rocep8s0f0", None, "rdma-statistic-mr", "8"),
        ("rocep8s0f0", None, "rdma-statistic-mr", "21"),
    ]
    # the second record continues on the next line (the patch wrapped it)
    assert recs[1].counters["page_prefetch"] == 51200
    assert recs[1].counters["page_invalidations_handled"] == 0


def test_an_rdma_link_line_wrapped_at_a_tab_keeps_its_state() -> None:
    (rec,) = [r for r in load("rdma-link", "ib-port-netdev-tab-wrapped").records
              if isinstance(r, RdmaLink)]  # fmt: skip
    assert (rec.device, rec.port, rec.state, rec.physical_state) == (
        "mlx5_0", 1, "ACTIVE", "LINK_UP")  # fmt: skip
    assert rec.netdev == "ibp196s0f0"


def test_ibdev2netdev_behind_a_log_prefix() -> None:
    recs = [r for r in load("ibdev2netdev", "3fs-monitor-log-prefixed").records
            if isinstance(r, Ibdev2netdev)]  # fmt: skip
    assert len(recs) == 8
    assert (recs[0].device, recs[0].netdev, recs[0].netdev_state) == ("hns_0", "bond0", "Up")
    assert sum(r.netdev_state == "Down" for r in recs) == 2


def test_grep_over_two_bonding_files_gives_one_bond_each() -> None:
    recs = [r for r in load("proc-bonding", "grep-bonding-mode-two-bonds").records
            if isinstance(r, BondInfo)]  # fmt: skip
    assert [(r.bond, r.mode) for r in recs] == [
        ("bond0", "IEEE 802.3ad Dynamic link aggregation"),
        ("bond1", "load balancing (round-robin)"),
    ]


# -- commands the paste names (tests/fixtures/pastes) -------------------------------------------

PASTES = Path(__file__).resolve().parents[2] / "fixtures" / "pastes"


def _paste(name: str) -> list[Part]:
    return parse_paste(decode_capture((PASTES / name / "input.txt").read_bytes()))


def test_ethtool_grep_speed_after_each_prompt_is_ethtool_output() -> None:
    parts = [p for p in _paste("ethtool-grep-speed-after-prompts") if p.kind == "ethtool-info"]
    recs = [r for p in parts if p.result for r in p.result.records if isinstance(r, EthtoolLink)]
    assert [(r.interface, r.speed_mbps) for r in recs] == [
        ("enp1s0f1np1", 100000), ("enP2p1s0f1np1", 100000)]  # fmt: skip


def test_ip_addr_lines_without_interface_lines_take_the_label() -> None:
    (part,) = [p for p in _paste("ip-addr-grep-inet-opa-labels") if p.kind == "ip-addr"]
    assert part.result is not None
    recs = [r for r in part.result.records if isinstance(r, IpLink)]
    assert [(r.name, r.addresses[0]) for r in recs] == [
        ("hfi1_opa0", "172.31.20.15/24"),
        ("hfi1_opa0.8022", "172.31.22.15/24"),
        ("hfi1_opa0.8024", "172.31.24.15/24"),
    ]


def test_lspci_title_lines_alone_are_lspci() -> None:
    (part,) = [p for p in _paste("lspci-grep-vendor-title-lines") if p.kind == "lspci"]
    assert part.result is not None and len(part.result.records) == 9


def test_a_prompt_naming_ip_link_splits_it_from_lsmod_above() -> None:
    kinds = [(p.kind, len(p.result.records) if p.result else 0)
             for p in _paste("lsmod-then-ip-link-tunnel") if p.kind]  # fmt: skip
    assert kinds == [("proc-modules", 3), ("ip-link", 1)]


def test_cat_of_a_proc_sys_file_behind_a_gt_prompt_names_its_key() -> None:
    recs = [r for r in load("sysctl", "eigenda-cat-tcp-rmem-gt-prompt").records
            if isinstance(r, SysctlValue)]  # fmt: skip
    assert [(r.key, r.value) for r in recs] == [("net.ipv4.tcp_rmem", "4096 131072 6291456")]


def test_ip_brief_addr_lines_are_interfaces_with_state_and_addresses() -> None:
    (part,) = [p for p in _paste("ip-br-addr-igc-after-resume") if p.kind == "ip-addr"]
    assert part.result is not None
    recs = [r for r in part.result.records if isinstance(r, IpLink)]
    assert (recs[0].name, recs[0].state, recs[0].addresses) == (
        "lo", "UNKNOWN", ["127.0.0.1/8", "::1/128"])  # fmt: skip
    assert [r.name for r in recs if r.state == "DOWN"][:2] == ["enp87s0", "enp90s0"]
