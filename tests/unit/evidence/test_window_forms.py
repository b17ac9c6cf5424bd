"""Windows of a tool's output that keep none of its headers: rows of ``show bgp summary``
without the table header, ``iperf3 --title`` prefixes and ``--bidir`` role columns, ethtool's
speed and duplex lines alone, ``sysctl``'s echo inside another program's log, a config_db
table printed by ``jq '.TABLE'``. Line shapes are the programs' own (FRR
bgpd/bgp_vty.c, iperf3 src/iperf_api.c, ethtool, procps-ng sysctl, SONiC config_db)."""

from __future__ import annotations

from aifabric.evidence.paste import parse_paste
from aifabric.evidence.pcie import pcie_lane_gbps
from aifabric.evidence.registry import detect_kind, detect_scores, parse_text

BGP_ROWS = (
    "10.0.0.1         4  65200       3192         53         0      0       0  00:02:29   6370"
    "            ARISTA01T2\n"
    "10.0.0.5         4  65200       3192         53         0      0       0  00:02:29   6370"
    "            ARISTA03T2\n"
    "10.0.0.33        4  64001          8       3926         0      0       0  00:02:28   Active"
    "          ARISTA01T0\n"
)


def test_bgp_summary_rows_without_their_header_are_the_table() -> None:
    assert detect_kind(BGP_ROWS) == "frr-bgp-summary"
    res = parse_text(BGP_ROWS, "frr-bgp-summary")
    peers = [(r.peer, r.remote_as, r.state, r.prefixes_received) for r in res.records]
    assert peers == [
        ("10.0.0.1", 65200, "Established", 6370),
        ("10.0.0.5", 65200, "Established", 6370),
        ("10.0.0.33", 64001, "Active", None),
    ]


def test_a_multi_asic_summary_head_is_a_summary() -> None:
    text = (
        "IPv4 Unicast Summary:\n"
        "asic0: BGP router identifier 10.212.65.8, local AS number 64902 vrf-id 0\n"
        "BGP table version 2303\n"
        "asic1: BGP router identifier 10.212.65.9, local AS number 64902 vrf-id 0\n"
    )
    res = parse_text(text, "frr-bgp-summary")
    assert [(r.router_id, r.local_as) for r in res.records] == [
        ("10.212.65.8", 64902), ("10.212.65.9", 64902)]  # fmt: skip


def test_iperf3_title_prefix_and_bidir_roles() -> None:
    titled = (
        "iperf3 -c 10.0.0.2 -u -b 50M -T 200 -t 10\n"
        "200:  [ ID] Interval           Transfer     Bandwidth       Jitter    "
        "Lost/Total Datagrams\n"
        "200:  [  4]   0.00-10.00  sec  59.0 MBytes  49.5 Mbits/sec  0.062 ms  8274/15114 (55%)\n"
        "200:  [  4] Sent 15114 datagrams\n"
    )
    (part,) = parse_paste(titled)
    assert part.kind == "iperf3" and part.result is not None and part.result.records
    bidir = (
        "[  6][TX-S] 153320.00-153321.00 sec   312 MBytes  2.62 Gbits/sec            227543\n"
        "[  5][RX-S] 153321.00-153322.00 sec   509 MBytes  4.27 Gbits/sec  0.001 ms  "
        "62207/432494 (14%)\n"
    )
    assert detect_kind(bidir) == "iperf3"


def test_ethtool_speed_and_duplex_alone_are_ethtool() -> None:
    text = "...\n        Speed: 10Mb/s\n        Duplex: Half\n...\n"
    assert detect_kind(text) == "ethtool-info"
    (rec,) = parse_text(text, "ethtool-info").records
    assert (rec.speed_mbps, rec.duplex) == (10, "Half")
    memory = "Memory Device\n\tSpeed: 2400 MT/s\n\tDuplex: Full\n"  # dmidecode, not ethtool
    assert "ethtool-info" not in {k for _, k in detect_scores(memory)}


def test_sysctl_echo_inside_an_installer_log() -> None:
    text = (
        "Setting up uhd-host (3.14.1.1-0ubuntu1~bionic1) ...\n"
        "net.core.rmem_max = 50000000\n"
        "net.core.wmem_max = 1048576\n"
        "Setting up libuhd003:amd64 (3.13.0.1-0ubuntu1~bionic1) ...\n"
        "Processing triggers for libc-bin (2.27-3ubuntu1) ...\n"
    )
    assert detect_kind(text) == "sysctl"
    keys = [r.key for r in parse_text(text, "sysctl").records]
    assert keys == ["net.core.rmem_max", "net.core.wmem_max"]
    one = "Setting up x ...\nnet.core.rmem_max = 50000000\nProcessing triggers ...\nDone\n"
    assert "sysctl" not in {k for _, k in detect_scores(one)}  # one echoed line is not enough


def test_a_config_db_table_printed_by_jq_is_that_table() -> None:
    text = (
        'root@sonic:/home/admin# show runningconfiguration all | jq ".TC_TO_PRIORITY_GROUP_MAP"\n'
        '{\n  "AZURE": {\n    "0": "0",\n    "3": "3",\n    "4": "4"\n  }\n}\n'
    )
    res = parse_text(text, "sonic-config-db")
    assert res.records, res.warnings
    assert {type(r).__name__ for r in res.records}


def test_iptables_rows_and_chain_lines_without_their_table() -> None:
    # `iptables -vnL | grep DROP`: rule rows of the verbose listing, no "Chain" line above them
    rows = (
        "   12   720 DROP       tcp  --  *      *       0.0.0.0/0            0.0.0.0/0"
        "            tcp dpt:22\n"
        "    0     0 DROP       all  --  eth1   *       10.0.0.0/8           0.0.0.0/0\n"
    )
    assert detect_kind(rows) == "iptables"
    res = parse_text(rows, "iptables")
    got = [(r.chain, r.target, r.protocol, r.packets, r.in_iface) for r in res.records]
    assert got == [("?", "DROP", "tcp", 12, None), ("?", "DROP", None, 0, "eth1")]
    # the listing without -v (no counters) and the chain lines alone
    plain = (
        "DROP       tcp  --  anywhere   anywhere   tcp dpt:ssh\n"
        "ACCEPT     all  --  anywhere   anywhere\n"
    )
    assert [r.target for r in parse_text(plain, "iptables").records] == ["DROP", "ACCEPT"]
    for chains in (
        ":INPUT ACCEPT [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n",
        "Chain INPUT (policy DROP 0 packets, 0 bytes)\nChain OUTPUT (policy ACCEPT)\n",
    ):
        assert detect_kind(chains) == "iptables"


def test_ucx_info_version_of_1_13_and_the_ucp_context_block() -> None:
    # ucx_info -v of UCX 1.13 ("# Version", no "Library version") and ucx_info -e's context
    version = (
        "# Version 1.13.1\n"
        "# Git branch 'v1.13.x', revision 1e3f5b3\n"
        "# Configured with: --prefix=/opt/ucx --with-cuda=/usr/local/cuda --with-verbs\n"
    )
    assert detect_kind(version) == "ucx-info"
    (rec,) = parse_text(version, "ucx-info").records
    assert (rec.library_version, rec.git_revision, rec.with_verbs) == ("1.13.1", "1e3f5b3", True)
    context = (
        "#\n# UCP context\n#\n#            md 0  :  self\n#            md 1  :  mlx5_0\n#\n"
        "#      resource 0  :  md 0  dev 0  flags -- self/memory\n"
        "#      resource 1  :  md 1  dev 1  flags -- rc_mlx5/mlx5_0:1\n"
    )
    recs = parse_text(context, "ucx-info").records
    assert [(r.transport, r.device) for r in recs] == [("self", "memory"), ("rc_mlx5", "mlx5_0:1")]


def test_lspci_link_fields_on_the_device_line() -> None:
    # a summary script: `echo $bdf $(lspci -s $bdf -vv | grep -E 'LnkCap|LnkSta')`
    text = (
        "0000:01:00.0  LnkCap: Speed 32GT/s, Width x4    LnkSta: Speed 32GT/s, Width x4\n"
        "0002:01:00.0  LnkCap: Speed 32GT/s, Width x4    LnkSta: Speed 32GT/s, Width x2 "
        "(downgraded)\n"
    )
    recs = parse_text(text, "lspci").records
    got = [(r.bdf, r.lnkcap_width, r.lnksta_width, r.lnksta_speed_gts) for r in recs]
    assert got == [("0000:01:00.0", 4, 4, 32.0), ("0002:01:00.0", 4, 2, 32.0)]
    assert all(r.device_class is None for r in recs)


def test_pcie_lane_rate_matches_the_kernel_report() -> None:
    # pcie_print_link_status() figures as printed by real kernels: 63.008 Gb/s (8 GT/s x8),
    # 252.048 Gb/s (16 GT/s x16), 32.000 Gb/s (5 GT/s x8), 504.112 Gb/s (32 GT/s x16)
    for speed, width, printed in ((8.0, 8, 63.008), (16.0, 16, 252.048), (5.0, 8, 32.0),
                                  (32.0, 16, 504.112)):  # fmt: skip
        assert round(pcie_lane_gbps(speed) * width, 3) == printed


def test_kernel_lines_wrapped_by_a_mail_client_and_the_i40e_link_line() -> None:
    text = (
        "[240677.031802] ixgbe: Intel(R) 10 Gigabit PCI Express Network Driver\n"
        "[240677.816262] ixgbe 0000:84:00.0: 31.504 Gb/s available PCIe\n"
        "bandwidth (8 GT/s x4 link)\n"
        "[    1.414634] i40e 0000:01:00.0: PCI-Express: Speed 8.0GT/s Width x8\n"
    )
    recs = parse_text(text, "dmesg-mlx5").records
    got = [(r.device, r.available_gbps, r.speed_gts, r.width, r.line) for r in recs]
    assert got == [("0000:84:00.0", 31.504, 8.0, 4, 2), ("0000:01:00.0", 63.008, 8.0, 8, 4)]
