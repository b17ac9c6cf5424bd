"""Shapes of real pastes the parsers used to miss, each from a capture under
``tests/fixtures/evidence/<kind>/`` (its ``meta.yaml`` names the thread): a matrix without its
header row, ``--json`` reports cut short, a counter dump with one header per file, review diffs
of environment lists, tables with markdown bold or trailing blanks, grep excerpts that lost their
indentation, and the verdicts the new records feed."""

from __future__ import annotations

from aifabric.checks.diagnose.engine import Evidence, diagnose, load_evidence
from aifabric.checks.diagnose.verdicts import Verdict, verdicts_for
from aifabric.evidence.base import Record, decode_capture
from aifabric.evidence.ethtool_stats import EthtoolStats
from aifabric.evidence.frr import BgpPeer
from aifabric.evidence.gpu_topo import GpuTopology
from aifabric.evidence.mlxlink import MlxlinkLink
from aifabric.evidence.nccl_env import EnvVar, effective_env
from aifabric.evidence.paste import parse_paste
from aifabric.evidence.pcie import KernelEvent, PciDevice
from aifabric.evidence.perftest import PerftestBwRow
from aifabric.evidence.rdma_counters import RdmaCounters
from aifabric.evidence.rdma_tools import IbvDevicesList
from aifabric.evidence.registry import parse_text
from aifabric.evidence.switch_counters import PortCounters
from aifabric.evidence.sysfs_rdma import SysfsRdmaDevices
from tests.unit.evidence.fixtures import FIXTURES, load


def _judge(rec: Record) -> list[Verdict]:
    ev = Evidence()
    return [v for fn in verdicts_for(rec.record_type) for v in fn(rec, ev)]


def test_topology_without_header_infers_columns_from_the_x_cells() -> None:
    [topo] = load("nvidia-smi-topo", "fastdeploy-4044-no-header-row").of_type(GpuTopology)
    assert topo.gpus == [f"GPU{i}" for i in range(8)] and topo.nics == ["NIC0", "NIC1", "NIC2"]
    assert topo.links["GPU3"]["GPU3"] == "X" and topo.links["GPU3"]["NIC2"] == "PXB"
    assert topo.links["NIC0"]["GPU0"] == "PXB"


def test_mlxlink_json_cut_short_gives_the_operational_info() -> None:
    res = load("mlxlink", "lshca-11-json-edr-cut-short")
    [link] = res.of_type(MlxlinkLink)
    assert (link.state, link.physical_state, link.speed, link.width) == (
        "Active", "LinkUp", "IB-EDR", 4,
    )  # fmt: skip
    assert link.device == "/dev/mst/mt4119_pciconf0" and link.line > 1


def test_counter_dump_with_one_header_per_file() -> None:
    [rec] = load("rdma-hw-counters", "gpud-943-loop-file-headers").of_type(RdmaCounters)
    assert (rec.device, rec.port) == ("mlx5_1", 1)
    assert rec.counters["unicast_rcv_packets"] == 240037171331
    assert rec.counters["port_rcv_errors"] == 0


def test_python_dict_diff_takes_the_added_value() -> None:
    env = effective_env(load("nccl-env", "areal-640-python-dict-diff").records)
    assert env["NCCL_IB_TIMEOUT"].value == "22"  # "-" line 2 and "+" line 3 of the diff
    assert env["NCCL_IB_GID_INDEX"].value == "3"


def test_k8s_flow_style_env_in_a_diff() -> None:
    recs = load("nccl-env", "awsome-1256-k8s-flow-env-diff").of_type(EnvVar)
    env = {r.name: r.value for r in recs}
    assert env["NCCL_NVLS_ENABLE"] == "0" and env["FI_PROVIDER"] == "efa"
    assert env["NCCL_DEBUG"] == "WARN"  # the trailing "# INFO to see ..." comment is not the value


def test_perftest_rows_with_markdown_bold() -> None:
    text = (FIXTURES.parent / "pastes" / "perftest-markdown-bold-rows" / "input.txt").read_text()
    rows = parse_text(text, "perftest").of_type(PerftestBwRow)
    assert [r.bw_avg_raw for r in rows] == [5544.28, 920.13]


def test_headerless_ethtool_dump_with_trailing_blanks() -> None:
    [st] = load("ethtool-stats", "ethq-21-mlx4-headerless-trailing-blanks").of_type(EthtoolStats)
    assert st.counters["rx_packets"] == 555096842386 and st.counters["tx5_bytes"] == 69542805022445


def test_grep_of_link_fields_that_lost_its_tabs() -> None:
    [dev] = load("lspci", "pciutils-128-cx5-grep-flush-left").of_type(PciDevice)
    assert dev.lnkcap_width == 8 and dev.lnksta_width == 8


def test_frr_sonic_typo_header_and_cut_json() -> None:
    peers = load("frr-bgp-summary", "sonic-mgmt-17797-neighbhor-header").of_type(BgpPeer)
    assert len(peers) == 7 and peers[0].peer == "10.0.0.1"
    cut = load("frr-bgp-summary", "frrexp-24-json-cut-short")
    assert [p.peer for p in cut.of_type(BgpPeer)] == ["ens4f0", "ens4f1"]
    assert "cut short" in cut.warnings[0].message


def test_sonic_counters_errors_view() -> None:
    rows = load("pfc-counters", "sonic-utilities-900-counters-errors").of_type(PortCounters)
    assert len(rows) == 7 and rows[0].port == "Ethernet0"
    assert rows[0].counters["RX_DRP"] == 4


def test_ibv_devinfo_without_devices_is_the_no_rdma_device_verdict() -> None:
    [rec] = load("ibv-devinfo", "mooncake-75-no-ib-devices-container").of_type(IbvDevicesList)
    assert rec.tool == "ibv_devinfo" and rec.devices == []
    [v] = _judge(rec)
    assert (v.id, v.severity, v.cause) == ("diagnose.no-rdma-device", "error", "host.rdma-device")


def test_ls_of_class_infiniband() -> None:
    [rec] = load("sysfs-infiniband", "vllm-44919-ls-class-infiniband-b300").of_type(
        SysfsRdmaDevices
    )
    assert len(rec.devices) == 16 and "mlx5_20" in rec.devices
    long_form = (
        "# ls -l /sys/class/infiniband/\ntotal 0\nlrwxrwxrwx 1 root root 0 Mar  1 10:00 mlx5_0 -> "
        "../../devices/pci0000:16/0000:16:02.0/0000:17:00.0/infiniband/mlx5_0\n"
    )
    [rec] = parse_text(long_form).of_type(SysfsRdmaDevices)
    assert rec.pci == {"mlx5_0": "0000:17:00.0"}
    [empty] = parse_text("$ ls /sys/class/infiniband\n", "sysfs-infiniband").of_type(
        SysfsRdmaDevices
    )
    assert [v.id for v in _judge(empty)] == ["diagnose.no-rdma-device"]


def test_vf_bar_that_cannot_be_assigned() -> None:
    events = load("dmesg-mlx5", "mstflint-448-cx4lx-vf-bar-unassigned").of_type(KernelEvent)
    assert {e.category for e in events} == {"bar-assign"} and len(events) == 3
    path = FIXTURES / "dmesg-mlx5" / "mstflint-448-cx4lx-vf-bar-unassigned" / "input.txt"
    found = [f for f in diagnose(load_evidence([path])).findings if f.cause == "host.pcie"]
    # one finding per adapter: functions .0 and .1 of the ConnectX-4 Lx are one card
    assert [f.check for f in found] == ["diagnose.pcie-bar-unassigned"]
    assert "SR-IOV VF BAR" in found[0].message


def _kinds(text: str) -> list[str]:
    return [p.kind for p in parse_paste(text) if p.kind and p.result.records]


def test_a_ping_then_an_iperf3_run_without_prompts_are_two_tools() -> None:
    # a test log: ping's statistics, then iperf3's client banner starts the next tool
    ping = (FIXTURES / "ping/lab-df-8972-healthy-9000/input.txt").read_text()
    iperf = (FIXTURES / "iperf3/lab-tcp-p4-text-client/input.txt").read_text()
    assert _kinds(ping + "\n" + iperf) == ["ping", "iperf3"]


def test_rdma_link_lines_then_ip_link_in_one_script_output() -> None:
    rdma = (FIXTURES / "rdma-link/daocloud-docs-cx5-active/input.txt").read_text()
    rdma = "\n".join(ln.strip() for ln in rdma.splitlines() if ln.strip().startswith("link "))
    iplink = (FIXTURES / "ip-link/lab-veth-healthy/input.txt").read_text()
    text = "Configuring...\n" + rdma + "\nHost stats:\n" + iplink
    assert _kinds(text) == ["rdma-link", "ip-link"]


def test_ucx_info_listing_whose_hashes_markdown_took() -> None:
    # an unfenced paste on GitHub: every "# Transport: ..." line became a heading, the "#" gone
    c = FIXTURES / "ucx-info/azure-flux-hdr-vf-ucx-info-d/input.txt"
    whole = parse_text(c.read_text(), "ucx-info")
    bare = "\n".join(ln.lstrip("#").strip() for ln in c.read_text().splitlines())
    got = parse_text(bare)
    assert got.kind == "ucx-info"
    assert sorted(type(x).__name__ for x in got.records) == sorted(
        type(x).__name__ for x in whole.records
    )


def test_a_tmux_pane_border_on_every_line_is_not_part_of_the_output() -> None:
    text = (FIXTURES / "ibstat/linpack-19a-edr/input.txt").read_text()
    boxed = "\n".join(f"\u2502{ln:<60}\u2502" if ln else "\u2502" for ln in text.splitlines())
    got = parse_text(decode_capture(boxed.encode()))
    assert got.kind == "ibstat"
    whole = parse_text(text, "ibstat")
    assert [type(r).__name__ for r in got.records] == [type(r).__name__ for r in whole.records]


def test_a_line_number_gutter_on_every_line_is_not_part_of_the_output() -> None:
    """The same real capture numbered by cat -n ("%6d\\t", blank lines numbered too) or an
    editor ("%3d "): read as the capture itself."""
    text = (FIXTURES / "ibstat/linpack-19a-edr/input.txt").read_text()
    whole = parse_text(text, "ibstat")
    for fmt in ("{:6d}\t{}", "{:3d} {}"):
        numbered = "\n".join(fmt.format(i, ln) for i, ln in enumerate(text.splitlines(), 1))
        got = parse_text(decode_capture(numbered.encode()))
        assert got.kind == "ibstat", fmt
        assert [type(r).__name__ for r in got.records] == [type(r).__name__ for r in whole.records]


def test_numbers_that_are_the_data_are_kept() -> None:
    for text in ("1\n2\n3\n4\n", "1 ACCEPT all\n2 DROP all\n1 ACCEPT tcp\n3 x\n",
                 "64 bytes from 10.0.0.2: icmp_seq=1\n64 bytes from 10.0.0.2: icmp_seq=2\n"
                 "64 bytes from 10.0.0.2: icmp_seq=3\n"):  # fmt: skip
        assert decode_capture(text.encode()) == text


def test_a_tools_output_kept_as_comments_among_other_lines() -> None:
    # a TAP test log: the harness's lines, then ping's output behind "# " marks
    ping = (FIXTURES / "ping/lab-df-8972-healthy-9000/input.txt").read_text()
    tap = "TAP version 13\n1..1\n" + "\n".join(f"# {ln}" for ln in ping.splitlines()) + "\nok 1\n"
    parts = [p for p in parse_paste(tap) if p.result and p.result.records]
    assert [p.kind for p in parts] == ["ping"]


def test_the_prompts_command_names_the_kind_of_a_cut_down_output() -> None:
    # "# ethtool -i IF" then two of its lines: too little for detection, the command says
    lines = (FIXTURES / "ethtool-info/captured-virtio-driver/input.txt").read_text().splitlines()
    text = "NIC driver\n# ethtool -i eth0\n" + "\n".join(lines[:2]) + "\n"
    parts = [p for p in parse_paste(text) if p.result and p.result.records]
    assert [p.kind for p in parts] == ["ethtool-info"]
    # without the command line nothing says what the two lines are
    assert not [p for p in parse_paste("\n".join(lines[:2]) + "\n") if p.kind == "ethtool-info"]
