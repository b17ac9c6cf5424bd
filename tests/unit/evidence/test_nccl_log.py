"""nccl-log parser: values read by hand from the real captures under
tests/fixtures/evidence/nccl-log/, detection, malformed and truncated lines, never raising."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind
from aifabric.evidence.nccl_log import (
    ChannelHop,
    CommEvent,
    Connected,
    GdrStatus,
    IbCompletionError,
    IbVerbsCallError,
    NcclEnv,
    NcclErrorReport,
    NcclProblem,
    NcclVersion,
    NetDevices,
    NetPlugin,
    NetSelected,
    ProcessExit,
    RingOrder,
    SocketError,
    TreeLinks,
    WatchdogException,
    WatchdogTimeout,
    detect,
    parse,
)
from tests.unit.evidence.fixtures import Case, all_cases, case, load

KIND = "nccl-log"
CASES = [c for c in all_cases() if c.kind == KIND]


def test_at_least_seven_real_fixtures() -> None:
    assert len(CASES) >= 7
    for c in CASES:
        assert str(c.meta.get("source", "")).startswith("https://"), c.id


@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_fixture_detected_and_warning_count(c: Case) -> None:
    assert detect_kind(c.text()) == KIND
    result = c.parse()
    assert len(result.warnings) == int(c.meta.get("warnings", 0)), result.warnings
    assert result.records, c.id


# ------------------------------------------------------------------ NCCL 2.27, RoCE, one host


def test_roce_2_27_init() -> None:
    r = load(KIND, "roce-2.27-nccl-tests-init")
    boot = [d for d in r.of_type(NetDevices) if d.role == "bootstrap"]
    assert boot[0].line == 1
    assert (boot[0].devices[0].name, boot[0].devices[0].address) == ("eno8303", "192.168.0.3")
    (ver,) = r.of_type(NcclVersion)
    assert (ver.version, ver.cuda, ver.line, ver.host, ver.pid) == (
        "2.27.7",
        "13.0",
        3,
        "mew0",
        64904,
    )
    probes = [d for d in r.of_type(NetDevices) if d.role == "ib_probe"]
    assert [p.devices[0].name for p in probes] == ["mlx5_0", "mlx5_1"]
    assert probes[0].devices[0].speed_gbps == 100.0  # speed=100000 Mb/s
    assert probes[0].devices[0].link_layer == "RoCE"
    (ib,) = [d for d in r.of_type(NetDevices) if d.role == "ib"]
    assert [(d.index, d.name, d.port, d.link_layer) for d in ib.devices] == [
        (0, "mlx5_0", 1, "RoCE"),
        (1, "mlx5_1", 1, "RoCE"),
    ]
    assert ib.relaxed_ordering is True
    assert (ib.oob_interface, ib.oob_address) == ("eno8303", "192.168.0.3")
    assert {n.name for n in r.of_type(NetSelected)} == {"IB"}
    gdr = r.of_type(GdrStatus)
    assert gdr and all(not g.enabled for g in gdr)
    assert gdr[0].hca_name == "mlx5_0"
    assert any(g.hca_name == "mlx5_0+mlx5_1" for g in gdr)
    env = r.of_type(NcclEnv)
    assert [(e.name, e.value, e.from_environment) for e in env] == [
        ("NCCL_TOPO_DUMP_FILE", "nccl_topo_dump.xml", True)
    ]
    done = [c for c in r.of_type(CommEvent) if c.event == "init_complete"]
    assert len(done) == 2
    last = done[-1]
    assert (last.rank, last.nranks, last.bus_id, last.comm_id) == (
        0,
        2,
        "17000",
        "0x54fe282d32a87d85",
    )
    assert last.line == 511
    info = [c for c in r.of_type(CommEvent) if c.event == "info"]
    assert info[0].nnodes == 1 and info[0].local_ranks == 2
    # "Tree 0 : -1 -> 0 -> 1/-1/-1" (rank 0 root of channel 0, child 1)
    trees = {(t.trees[0].channel, t.trees[0].rank): t.trees[0] for t in r.of_type(TreeLinks)}
    assert trees[(0, 0)].parent == -1 and trees[(0, 0)].children == (1,)
    assert trees[(6, 0)].parent == 1 and trees[(6, 0)].children == ()
    rings = r.of_type(RingOrder)
    assert rings[0].ranks == (0, 1) and rings[0].nchannels == 24
    neigh = [x for x in rings if x.neighbours_only]
    assert neigh[0].ranks == (0, 1, 0)


def test_p2p_direct_channels() -> None:
    r = load(KIND, "p2p-direct-channels-2.27")
    hops = r.of_type(ChannelHop)
    assert len(hops) == 48  # 24 channels x 2 directions
    h = hops[0]
    assert (h.channel, h.src_rank, h.dst_rank, h.transport, h.via) == (
        0,
        1,
        0,
        "P2P",
        "P2P/direct pointer/read",
    )
    assert h.net is None and h.gdr is False
    conn = r.of_type(Connected)
    assert [(c.graph, c.pxn, c.gdr) for c in conn] == [("rings", False, True)] * 2


# ------------------------------------------------------------------ socket fallback, garbled


def test_hpcx_plugin_socket_fallback_interleaved() -> None:
    r = load(KIND, "socket-hpcx-plugin-interleaved")
    assert [w.line for w in r.warnings] == [21, 79]
    plugins = r.of_type(NetPlugin)
    assert plugins[0].status == "loaded" and plugins[0].name == "NCCL RDMA Plugin v6 (v6)"
    assert plugins[1].kind == "coll" and plugins[1].name == "SHARP (v6)"
    assert plugins[2].status == "path"
    empty = [d for d in r.of_type(NetDevices) if d.role == "ib"]
    assert len(empty) == 2 and all(d.devices == () for d in empty)  # NET/IB : No device found.
    sock = [d for d in r.of_type(NetDevices) if d.role == "socket"]
    assert sock[0].devices[0].name == "eth0" and sock[0].devices[0].address == "172.17.0.2"
    (sel,) = r.of_type(NetSelected)
    assert (sel.name, sel.transport, sel.line) == ("Socket", "socket", 20)
    env = r.of_type(NcclEnv)
    assert env[0].value == "eth0" and env[0].from_environment
    assert env[1].from_environment is False  # "NCCL_SOCKET_IFNAME set to eth0"
    neigh = r.of_type(RingOrder)
    assert neigh[-1].ranks == (2, 3, 0) and neigh[-1].channel == 15 and neigh[-1].cuda_dev == 3


def test_socket_fallback_ray_ansi_residue() -> None:
    r = load(KIND, "socket-fallback-ray-ansi-residue")
    (boot,) = [d for d in r.of_type(NetDevices) if d.role == "bootstrap"]
    assert boot.host == "ip-172-31-0-137" and boot.pid == 14605
    assert boot.devices[1].address == "fe80::14ad:64ff:fe64:b31e%veth75fa783"
    (prob,) = r.of_type(NcclProblem)
    assert prob.category == "net_plugin" and prob.source == "misc/ibvwrap.cc:63"
    (ver,) = r.of_type(NcclVersion)
    assert (ver.version, ver.line, ver.host) == ("2.7.8", 8, None)
    (trees,) = r.of_type(TreeLinks)
    assert [(t.channel, t.parent, t.children) for t in trees.trees] == [
        (0, -1, (1,)),
        (1, -1, (1,)),
        (2, 1, ()),
        (3, 1, ()),
    ]
    (hop,) = r.of_type(ChannelHop)
    assert (hop.direction, hop.net, hop.net_dev, hop.src_dev) == ("receive", "Socket", 0, "1e0")


def test_socket_connect_abort() -> None:
    r = load(KIND, "socket-connect-abort-proxy")
    probs = r.of_type(NcclProblem)
    assert [p.category for p in probs] == [
        "socket_connect",
        "proxy",
        "socket_closed",
        "socket_error",
    ]
    c = probs[0]
    assert isinstance(c, SocketError)
    assert (c.peer_address, c.peer_port, c.errno) == ("10.0.0.2", 45763, 103)
    assert c.error_text == "Software caused connection abort"
    assert c.source == "misc/socket.cc:483" and c.line == 1
    closed = probs[2]
    assert isinstance(closed, SocketError)
    assert (closed.peer_address, closed.peer_port, closed.line) == ("node1", 57557, 13)
    shm = r.of_type(ChannelHop)
    assert [(h.channel, h.transport, h.cuda_dev) for h in shm] == [(20, "SHM", 5), (21, "SHM", 5)]


# ------------------------------------------------------------------ IB completion errors


def test_ib_status12_v4mapped_gids() -> None:
    r = load(KIND, "ib-completion-status12-roce-v4mapped")
    errs = r.of_type(IbCompletionError)
    assert [(e.line, e.status) for e in errs] == [(1, 12), (6, 5), (11, 5)]
    e = errs[0]
    assert e.status_name == "IBV_WC_RETRY_EXC_ERR"
    assert (e.opcode, e.length_bytes, e.vendor_err, e.direction) == (129, 65536, 129, "Recv")
    assert (e.peer_address, e.peer_port) == ("172.36.143.59", 44206)
    assert (e.local_gid, e.remote_gid) == ("::ffff:29.87.88.182", "::ffff:29.87.4.221")
    assert (e.host, e.pid, e.tid, e.cuda_dev) == ("hostname-test", 984, 1357, 4)
    assert e.source == "ib_plugin.c:1615"
    assert errs[1].status_name == "IBV_WC_WR_FLUSH_ERR" and errs[1].vendor_err == 249


def test_ib_status12_ipv6_gids() -> None:
    errs = load(KIND, "ib-completion-status12-ipv6-gid").of_type(IbCompletionError)
    assert len(errs) == 3
    assert errs[0].remote_gid == "fd00:1148:9000:5000:4:200:3:ff1f"  # "remoteGidsfd00:..."
    assert errs[1].local_gid == "fd00:1148:9000:5000:4:200:3:ff21"
    assert errs[2].peer_port == 49892 and errs[2].opcode == 32616


def test_ib_error4_old_format() -> None:
    errs = load(KIND, "ib-completion-error4-h100-ipv6-oob").of_type(IbCompletionError)
    e = errs[0]
    assert (e.status, e.status_name) == (4, "IBV_WC_LOC_PROT_ERR")
    assert (e.opcode, e.length_bytes, e.vendor_err, e.direction) == (32564, 32564, 81, "Send")
    assert (e.peer_address, e.peer_port) == ("fe80::966d:ae03:8b:df78%ib0", 53249)
    assert e.host == "H100-2" and e.source == "transport/net_ib.cc:1295"  # after "error log `"
    assert errs[1].host == "H100-1" and errs[1].line == 6


def test_ibv_modify_qp_timestamped() -> None:
    (e,) = load(KIND, "ibv-modify-qp-timeout-timestamped").of_type(IbVerbsCallError)
    assert (e.call, e.errno, e.error_text) == ("ibv_modify_qp", 110, "Connection timed out")
    assert (e.device, e.qp_state_from, e.qp_state_to, e.gid_index) == ("mlx_x:1", "INIT", "RTR", 3)
    assert e.local_gid == "::ffff:xxx.xx.xx.xx" and e.remote_gid == "::ffff:xxx.xx.xxx.xx"
    assert e.host is None and e.cuda_dev == 5  # pid was replaced by XXXXXX
    assert e.hint is not None and "NCCL_CROSS_NIC" in e.hint


# ------------------------------------------------------------------ older NCCL, plugins


def test_ib_2_7_init_multi_hca() -> None:
    r = load(KIND, "ib-2.7-a100-multi-hca-init")
    boot, ib = r.of_type(NetDevices)
    assert len(boot.devices) == 7 and boot.devices[6].name == "ib15"
    assert boot.devices[5].address == "192.168.1.14"
    assert len(ib.devices) == 9
    assert [d.link_layer for d in ib.devices].count("RoCE") == 2
    assert ib.devices[8].name == "mlx5_17" and ib.relaxed_ordering is False
    assert (ib.oob_interface, ib.oob_address) == ("ib8", "192.168.1.8")
    (ver,) = r.of_type(NcclVersion)
    assert (ver.version, ver.host) == ("2.7.6", None)
    env = r.of_type(NcclEnv)
    assert [(e.name, e.value) for e in env] == [
        ("NCCL_P2P_LEVEL", "LOC"),
        ("NCCL_SHM_DISABLE", "1"),
    ]


def test_ib_2_7_gdrdma_channels() -> None:
    hops = load(KIND, "ib-2.7-a100-gdrdma-channels").of_type(ChannelHop)
    assert len(hops) == 12 and all(h.gdr and h.net == "IB" for h in hops)
    h = hops[0]
    assert (h.channel, h.src_rank, h.src_dev, h.dst_rank, h.dst_dev) == (1, 2, "c7000", 0, "87000")
    assert (h.direction, h.net_dev) == ("receive", 5)
    assert [x.net_dev for x in hops].count(0) == 2


def test_roce_2_5_no_host_prefix() -> None:
    r = load(KIND, "roce-2.5-no-host-prefix")
    (ib,) = [d for d in r.of_type(NetDevices) if d.role == "ib"]
    assert (ib.devices[0].name, ib.devices[0].link_layer, ib.oob_interface) == (
        "mlx5_0",
        "RoCE",
        "br0",
    )
    assert ib.host is None and ib.cuda_dev == 0 and ib.launcher_rank is None
    (ver,) = r.of_type(NcclVersion)
    assert ver.version == "2.5.7" and ver.line == 5
    gid = [e for e in r.of_type(NcclEnv) if e.name == "NCCL_IB_GID_INDEX"]
    assert gid[0].value == "3"  # printed "3."
    hops = r.of_type(ChannelHop)
    assert hops[0].legacy_ring and hops[0].net == "IB" and not hops[0].gdr
    assert hops[2].transport == "SHM" and hops[2].via == "direct shared memory"
    order = r.of_type(RingOrder)
    assert order[0].ranks == tuple(range(16)) and order[0].nchannels == 2


def test_aws_ofi_mpirun_tagged() -> None:
    r = load(KIND, "aws-ofi-horovod-mpirun-tagged")
    hops = r.of_type(ChannelHop)
    assert hops[0].launcher_rank == 26 and hops[0].cuda_dev == 2 and hops[0].src_rank == 26
    net = [h for h in hops if h.transport == "NET"]
    assert [(h.src_rank, h.dst_rank, h.net, h.net_dev, h.direction) for h in net] == [
        (7, 8, "AWS Libfabric", 0, "send"),
        (15, 16, "AWS Libfabric", 0, "send"),
        (23, 24, "AWS Libfabric", 0, "send"),
    ]
    assert net[0].src_dev is None
    (p,) = r.of_type(NcclProblem)
    assert (p.category, p.launcher_rank, p.line) == ("net_plugin", 23, 13)
    assert p.source == "create_nccl_ofi_component:459"


def test_irdma_ibext_plugin() -> None:
    r = load(KIND, "irdma-roce-ibext-plugin")
    ib = [d for d in r.of_type(NetDevices) if d.role == "ib"]
    assert [d.name for d in ib[0].devices] == ["irdma0", "irdma3"]
    assert ib[1].host == "ai-worker03" and ib[1].oob_address == "172.16.207.69"
    assert {(n.name, n.transport) for n in r.of_type(NetSelected)} == {("IBext_v8", "ib")}


# ------------------------------------------------------------------ PyTorch watchdog


def test_watchdog_numel() -> None:
    r = load(KIND, "pytorch-watchdog-allreduce-numel")
    wd = r.of_type(WatchdogTimeout)
    w = wd[1]
    assert (w.rank, w.seq_num, w.op_type) == (4, 1580, "ALLREDUCE")
    assert (w.numel_in, w.numel_out, w.timeout_ms, w.ran_for_ms) == (
        466119168,
        466119168,
        600000,
        600067,
    )
    assert w.launcher_rank == 4 and w.line == 2
    exc = r.of_type(WatchdogException)
    assert [
        (e.rank, e.process_group, e.seq_num, e.last_enqueued, e.last_completed) for e in exc
    ] == [
        (0, "1", 1580, 1582, 1579),
        (3, "1", 1580, 1582, 1579),
    ]


def test_watchdog_desync_broadcast() -> None:
    r = load(KIND, "pytorch-watchdog-broadcast-indented")
    wd = r.of_type(WatchdogTimeout)
    assert [(w.rank, w.op_type, w.numel_in) for w in wd] == [
        (7, "BROADCAST", 5056),
        (3, "ALLREDUCE", 2106881),
    ]
    (exc,) = r.of_type(WatchdogException)
    assert exc.process_group == "0 (default_pg)" and exc.last_completed == 80077


def test_watchdog_old_format() -> None:
    wd = load(KIND, "pytorch-watchdog-old-format").of_type(WatchdogTimeout)
    assert [w.rank for w in wd] == [1, 3, 2, 6, 7]
    assert wd[4].ran_for_ms == 1802220 and wd[0].timeout_ms == 1800000
    assert wd[0].numel_in is None and wd[0].launcher_rank is None


# ------------------------------------------------------------------ detection


def test_detect_scores() -> None:
    assert detect("x:1:2 [0] NCCL INFO Using network IB\n") == 0.8
    assert (
        detect("[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught ... WorkNCCL(SeqNum=1") == 0.7
    )
    assert detect("hello world\n") == 0.0


def test_nccl_tests_table_wins() -> None:
    text = case(KIND, "roce-2.27-nccl-tests-init").text()
    table = (
        "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)\n"
    )
    assert detect_kind(text + table) == "nccl-tests"


# ------------------------------------------------------------------ malformed, truncated


def test_malformed_line_in_the_middle() -> None:
    text = case(KIND, "ib-2.7-a100-gdrdma-channels").text()
    lines = text.split("\n")
    good = parse(text)
    bad_line = "10-90-43-152:120890:121560 [0] NCCL INFO Channel 01 : 2[c7000] -> @@ via"
    lines.insert(5, bad_line)
    bad = parse("\n".join(lines))
    assert [w.line for w in bad.warnings] == [6]
    assert "Channel" in bad.warnings[0].message
    before = [r.to_json() for r in good.records]
    after = [r.to_json() for r in bad.records]
    for rec in after:
        if rec["line"] > 6:
            rec["line"] -= 1
    assert after == before


def test_garbled_completion_warns() -> None:
    text = case(KIND, "ib-completion-status12-roce-v4mapped").text()
    lines = text.split("\n")
    lines.insert(
        2, "host:1:2 [0] net_ib.cc:1 NCCL WARN NET/IB : Got completion from peer with junk"
    )
    r = parse("\n".join(lines))
    assert [w.line for w in r.warnings] == [3]
    assert len(r.of_type(IbCompletionError)) == 3


def test_truncated_capture() -> None:
    text = case(KIND, "ib-2.7-a100-gdrdma-channels").text().rstrip("\n")
    cut = text[: text.rfind("->") + 3]  # last line cut in the middle of "-> 1[8d000]"
    r = parse(cut)
    assert len(r.warnings) == 1
    assert r.warnings[0].line == 12 and "truncated" in r.warnings[0].message
    assert len(r.of_type(ChannelHop)) == 11


def test_truncated_prefix_only() -> None:
    text = case(KIND, "socket-connect-abort-proxy").text().rstrip("\n")
    r = parse(text + "\nubuntu:39964:40044 [0] NCCL INF")
    assert len(r.warnings) == 1 and "truncated" in r.warnings[0].message


# ------------------------------------------------------------------ robustness, speed


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_never_raises_on_random_text(text: str) -> None:
    parse(text)
    detect(text)


_PIECES = [
    "h:1:2 [0] NCCL INFO ",
    "h:1:2 [0] x.cc:3 NCCL WARN ",
    "Channel ",
    "Ring ",
    "Trees [",
    "Tree ",
    " -> ",
    "[",
    "]",
    " via ",
    "NET/IB : Using ",
    "Got completion from peer ",
    " with error ",
    "comm 0x1 rank ",
    " - Init COMPLETE",
    "Watchdog caught collective operation timeout: WorkNCCL(",
    "NCCL version ",
    "Connect to ",
    "<",
    ">",
    "/",
    ":",
    "0",
    "12",
    " ",
    "\n",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_never_raises_on_nccl_like_text(pieces: list[str]) -> None:
    result = parse("".join(pieces))
    for rec in result.records:
        rec.to_json()


@given(
    st.integers(0, 63),
    st.integers(0, 4095),
    st.integers(0, 4095),
    st.sampled_from(["P2P/IPC", "SHM/direct/direct", "NET/IB/1/GDRDMA", "NET/Socket/0"]),
)
def test_channel_hop_roundtrip(ch: int, src: int, dst: int, via: str) -> None:
    line = f"n1:10:11 [3] NCCL INFO Channel {ch:02d}/0 : {src}[3] -> {dst}[4] via {via}"
    (hop,) = parse(line).of_type(ChannelHop)
    assert (hop.channel, hop.src_rank, hop.dst_rank, hop.via) == (ch, src, dst, via)
    assert hop.gdr == via.endswith("GDRDMA")


def test_format_variants_from_nccl_source() -> None:
    """One line per variant NCCL/PyTorch print (formats as in their sources) that no fixture
    holds: Slurm label, PXN hop, CUMEM, peer-less completion, PyTorch error summaries."""
    text = "\n".join(
        [
            "0: gpu1:11:12 [3] NCCL INFO Channel 00/0 : 0[3] -> 8[3] [send] via NET/IB/0(1)/GDRDMA",
            "  12: gpu1:11:12 [3] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/CUMEM/read",
            "gpu1:11:12 [3] transport/net_ib.cc:818 NCCL WARN NET/IB : Got completion with"
            " error 12, opcode 1, len 32768, vendor err 129",
            "RuntimeError: NCCL error in: ../ProcessGroupNCCL.cpp:1691, unhandled system error (run"
            " with NCCL_DEBUG=INFO for details), NCCL version 2.19.3",
            "gpu1:11:12 [3] NCCL INFO GPU Direct RDMA Enabled for GPU 1b000 / HCA 0"
            " (distance 4 <= 5), read 0",
        ]
    )
    r = parse(text)
    assert not r.warnings
    pxn, cumem = r.of_type(ChannelHop)
    assert (pxn.launcher_rank, pxn.net_dev, pxn.proxy_rank, pxn.gdr) == (0, 0, 1, True)
    assert (cumem.launcher_rank, cumem.transport) == (12, "P2P")
    (ib,) = r.of_type(IbCompletionError)
    assert (ib.status, ib.length_bytes, ib.peer_address, ib.direction) == (12, 32768, None, None)
    (err,) = r.of_type(NcclErrorReport)
    assert (err.category, err.error, err.nccl_version) == (
        "nccl_error",
        "unhandled system error",
        "2.19.3",
    )
    (gdr,) = r.of_type(GdrStatus)
    assert (gdr.enabled, gdr.gpu, gdr.hca_index, gdr.distance, gdr.distance_limit) == (
        True,
        "1b000",
        0,
        4,
        5,
    )


# --------------------------------------------------------------------------------------------
# pdsh-style "host: " prefixes, HPC-X IBext with SHARP, Cuda failures (NVIDIA/nccl issue 1029)


def test_pdsh_prefix_ibext_sharp_and_cuda_failures() -> None:
    r = load("nccl-log", "pdsh-prefix-ibext-sharp-cuda-failure")
    assert not r.warnings
    path, p2p = r.of_type(NetPlugin)
    assert (path.status, path.name) == (
        "path",
        "/opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so",
    )
    assert (p2p.status, p2p.name, p2p.kind, p2p.line) == ("loaded", "IBext", "net", 3)
    ib = next(d for d in r.of_type(NetDevices) if d.role == "ib")
    assert ib.host == "rdma-test-gpu-worker-0"  # NCCL's own prefix, not the runner's
    (hca,) = ib.devices
    assert (hca.name, hca.port, hca.link_layer, hca.sharp) == ("mlx5_50", 1, "IB", True)
    assert (ib.relaxed_ordering, ib.oob_interface, ib.oob_address) == (True, "eth0", "10.224.2.49")
    assert [s.name for s in r.of_type(NetSelected)] == ["IBext", "IBext"]
    cuda = r.of_type(NcclProblem)
    assert [(p.category, p.cuda_dev, p.source) for p in cuda] == [
        ("cuda", 4, "init.cc:263"),
        ("cuda", 5, "misc/cudawrap.cc:33"),
        ("cuda", 0, "misc/cudawrap.cc:33"),
    ]
    assert all(p.message == "Cuda failure 'initialization error'" for p in cuda)
    boot = [d for d in r.of_type(NetDevices) if d.role == "bootstrap"]
    assert [(d.pid, d.devices[0].name, d.devices[0].address) for d in boot] == [
        (2919, "eth0", "10.224.3.43"),
        (2914, "eth0", "10.224.3.43"),
    ]


def test_nvls_cuda_failure_after_distbackenderror() -> None:
    r = load("nccl-log", "pdsh-prefix-nvls-cuda-failure-distbackenderror")
    assert not r.warnings
    (err,) = r.of_type(NcclErrorReport)
    assert (err.line, err.error, err.nccl_version) == (3, "unhandled cuda error", "2.18.3")
    problems = [p for p in r.of_type(NcclProblem) if not isinstance(p, NcclErrorReport)]
    (nvls,) = problems
    assert (nvls.line, nvls.category, nvls.source) == (9, "cuda", "transport/nvls.cc:245")
    assert (nvls.host, nvls.pid, nvls.tid, nvls.cuda_dev) == (
        "rdma-test-gpu-worker-1",
        2914,
        4490,
        0,
    )


def test_tuner_and_profiler_plugin_lines() -> None:
    text = "\n".join(
        [
            "node:12225:12255 [0] NCCL INFO PROFILER/Plugin: Could not find: libnccl-profiler.so.",
            "n0:53:323 [0] NCCL INFO TUNER/Plugin: Failed to find ncclTunerPlugin_v4 symbol.",
            "n0:53:323 [0] NCCL INFO TUNER/Plugin: Failed to find ncclTunerPlugin_v2 symbol, using"
            " internal tuner instead.",
            "node:1:2 [0] NCCL INFO TUNER/Plugin: Could not find: libnccl-tuner.so libnccl-net.so."
            " Using internal tuner plugin.",
        ]
    )
    r = parse(text)
    assert not r.warnings
    got = [(p.line, p.kind, p.status) for p in r.of_type(NetPlugin)]
    assert got == [(1, "profiler", "internal"), (3, "tuner", "internal"), (4, "tuner", "internal")]


# -- rank deaths reported by launchers and the kernel (lines as captured; sources per test) ----


def test_torchrun_failed_line_sigkill() -> None:
    # source: https://github.com/hpcaitech/ColossalAI/issues/3514
    text = "\n".join(
        [
            "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 812916 closing"
            " signal SIGTERM",
            "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank:"
            " 3 (pid: 812917) of binary: /data/chenhao/anaconda3/envs/ColossalAI-Chat/bin/python",
        ]
    )
    r = parse(text)
    (d,) = r.of_type(ProcessExit)
    assert (d.line, d.exit_code, d.signal, d.signal_name, d.reason) == (
        2,
        -9,
        9,
        "SIGKILL",
        "killed",
    )
    assert (d.pid, d.local_rank, d.first_failure, d.category) == (812917, 3, False, "process_exit")


def test_torchrun_summary_root_cause_block() -> None:
    # source: https://github.com/lzhxmu/CPPO/issues/6
    text = "\n".join(
        [
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
            "============================================================",
            "src/open_r1/grpo_gsm.py FAILED",
            "------------------------------------------------------------",
            "Failures:",
            "  <NO_OTHER_FAILURES>",
            "------------------------------------------------------------",
            "Root Cause (first observed failure):",
            "[0]:",
            "  time      : 2025-05-21_15:43:03",
            "  host      : mlxlab115rp2n7682d40d9-20250521025625-6dyyd3-8nir8b-worker",
            "  rank      : 0 (local_rank: 0)",
            "  exitcode  : -9 (pid: 14750)",
            "  error_file: <N/A>",
            "  traceback : Signal 9 (SIGKILL) received by PID 14750",
            "============================================================",
        ]
    )
    (d,) = parse(text).of_type(ProcessExit)
    assert d.host == "mlxlab115rp2n7682d40d9-20250521025625-6dyyd3-8nir8b-worker"
    assert (d.line, d.rank, d.local_rank, d.pid, d.exit_code, d.reason, d.first_failure) == (
        13,
        0,
        0,
        14750,
        -9,
        "killed",
        True,
    )


def test_torchrun_summary_other_failures_are_not_root_cause() -> None:
    # source: https://github.com/vllm-project/speculators/issues/1115 ([1] exit 1, [2] SIGKILL,
    # [3] SIGTERM listed under "Failures:"; the root cause is another block)
    text = "\n".join(
        [
            "Failures:",
            "[1]:",
            "  time      : 2026-09-07_13:02:58",
            "  host      : localhost",
            "  rank      : 3 (local_rank: 3)",
            "  exitcode  : 1 (pid: 14692)",
            "  error_file: <N/A>",
            "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
            "[2]:",
            "  time      : 2026-09-07_13:03:29",
            "  host      : localhost",
            "  rank      : 0 (local_rank: 0)",
            "  exitcode  : -9 (pid: 14689)",
            "  error_file: <N/A>",
            "  traceback : Signal 9 (SIGKILL) received by PID 14689",
            "[3]:",
            "  time      : 2026-09-07_13:03:29",
            "  host      : localhost",
            "  rank      : 2 (local_rank: 2)",
            "  exitcode  : -15 (pid: 14691)",
            "  error_file: <N/A>",
            "  traceback : Signal 15 (SIGTERM) received by PID 14691",
        ]
    )
    got = [
        (d.rank, d.exit_code, d.reason, d.signal_name, d.first_failure)
        for d in parse(text).of_type(ProcessExit)
    ]
    assert got == [
        (3, 1, "exit", None, False),
        (0, -9, "killed", "SIGKILL", False),
        (2, -15, "terminated", "SIGTERM", False),
    ]


def test_mpirun_noticed_signal() -> None:
    # source: https://github.com/open-mpi/ompi/issues/2661
    line = (
        "mpirun noticed that process rank 0 with PID 21183 on node host01 exited on signal 9"
        " (Killed)."
    )
    (d,) = parse(line).of_type(ProcessExit)
    assert (d.host, d.rank, d.pid, d.signal, d.reason, d.first_failure) == (
        "host01",
        0,
        21183,
        9,
        "killed",
        True,
    )


def test_exit_code_zero_and_ordinary_lines_are_not_deaths() -> None:
    text = "\n".join(
        [
            "  exitcode  : 0 (pid: 10)",
            "INFO: process exited normally",
            "reserved memory 3.2 GiB",
        ]
    )
    assert parse(text).of_type(ProcessExit) == []


@given(st.integers(min_value=-64, max_value=255), st.integers(min_value=1, max_value=2**22))
def test_torchrun_exitcode_signal_property(code: int, pid: int) -> None:
    line = f"[E api.py:1] failed (exitcode: {code}) local_rank: 1 (pid: {pid}) of binary: /x"
    got = parse(line).of_type(ProcessExit)
    if code == 0:
        assert got == []
    else:
        (d,) = got
        assert d.pid == pid and d.exit_code == code
        assert d.signal == (-code if code < 0 else None)


def test_prterun_noticed_signal_wrapped_over_two_lines() -> None:
    # PRRTE (Open MPI 5) wraps its report near 80 columns; lines as posted
    # source: https://hpc-community.unige.ch/t/3924 (OpenMPI 5.0.3, PRRTE 3.0.5)
    text = "\n".join(
        [
            "#6  0xffffffffffffffff in ???",
            "--------------------------------------------------------------------------",
            "prterun noticed that process rank 2 with PID 1617008 on node cpu155 exited on",
            "signal 4 (Illegal instruction).",
            "--------------------------------------------------------------------------",
        ]
    )
    got = [
        (d.line, d.host, d.rank, d.pid, d.signal_name, d.reason, d.first_failure)
        for d in parse(text).of_type(ProcessExit)
    ]
    assert got == [
        (3, "cpu155", 2, 1617008, "SIGILL", "crash", True),
    ]


def test_launcher_log_alone_is_detected_as_nccl_log() -> None:
    # a torchrun log without any NCCL line (ColossalAI#3514) still goes to this parser
    text = (
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank:"
        " 3 (pid: 812917) of binary: /usr/bin/python"
    )
    assert detect(text) == 0.6
    assert detect("hello world\n") == 0.0


def test_completion_without_peer_address() -> None:
    # NCCL printed "from peer" with an empty address (NVIDIA/nccl#1052, title line as posted)
    line = (
        "transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer with error 4,"
        " opcode 0, len 0, vendor err 81 (Send) localGid ::ffff: remoteGid ::ffff:"
    )
    res = parse(line)
    (err,) = res.of_type(IbCompletionError)
    assert (err.status, err.vendor_err, err.peer_address, err.direction) == (4, 81, None, "Send")
    assert res.warnings == []


def test_completion_with_hca_suffix() -> None:
    # NCCL 2.2x appends " hca mlx5_10" (NVIDIA/nccl#1698)
    line = (
        "mycl-g2:353236:353423 [6] transport/net_ib.cc:2244 NCCL WARN NET/IB: Got completion from"
        " peer 192.168.3.5<53908> with status=12 opcode=129 len=1048576 vendor err 129 (Recv)"
        " localGid ::ffff:192.168.6.3 remoteGids::ffff:192.168.6.5 hca mlx5_10"
    )
    (err,) = parse(line).of_type(IbCompletionError)
    assert (err.host, err.status, err.peer_address, err.remote_gid) == (
        "mycl-g2",
        12,
        "192.168.3.5",
        "::ffff:192.168.6.5",
    )


def test_completion_quoted_in_pytorch_error() -> None:
    # status 12 only inside PyTorch's "Last error:" text (tatsu-lab/stanford_alpaca#207)
    line = (
        "terminate called after throwing an instance of 'std::runtime_error' what(): NCCL error:"
        " remote process exited or there was a network error, NCCL version 2.14.3 ncclRemoteError:"
        " A call failed possibly due to a network error or a remote process exiting prematurely."
        " Last error: NET/IB : Got completion from peer 11.214.147.122<39138> with error 12,"
        " opcode 0, len 0, vendor err 129"
    )
    (err,) = parse(line).of_type(IbCompletionError)
    assert (err.status, err.peer_address, err.peer_port, err.vendor_err) == (
        12,
        "11.214.147.122",
        39138,
        129,
    )


def test_ibv_call_failed_without_errno() -> None:
    # NCCL < 2.9 prints no errno (NVIDIA/nccl#562)
    line = "hai-a100-3:3778851:3779883 [4] ibvwrap.c:130 NCCL WARN Call to ibv_create_qp failed"
    (err,) = parse(line).of_type(IbVerbsCallError)
    assert (err.category, err.call, err.errno, err.error_text) == (
        "ibv_call",
        "ibv_create_qp",
        None,
        None,
    )


def test_socket_connect_retry_info_line() -> None:
    # Oneflow-Inc/oneflow#3586
    line = (
        "worker:101542:101934 [0] NCCL INFO Call to connect returned Connection timed out, retrying"
    )
    (err,) = parse(line).of_type(SocketError)
    assert (err.category, err.errno, err.error_text) == (
        "socket_retry",
        110,
        "Connection timed out",
    )


def _deaths(text: str) -> list[tuple[object, ...]]:
    return [
        (d.line, d.host, d.rank, d.signal, d.exit_code, d.reason)
        for d in parse(text).of_type(ProcessExit)
    ]


def test_slurm_oom_kill_formats() -> None:
    # brain-score/vision#950 (older slurmstepd wording), nextflow-io/nextflow#5932 (newer)
    old = (
        "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=37205392.0. Some of your"
        " processes may have been killed by the cgroup out-of-memory handler.\n"
        "srun: error: node107: task 0: Out Of Memory"
    )
    assert detect(old) == 0.6
    assert _deaths(old) == [
        (1, None, None, None, None, "oom"),
        (2, "node107", 0, None, None, "oom"),
    ]
    new = (
        "slurmstepd: error: Detected 1 oom_kill event in StepId=11300781.0. Some of the step"
        " tasks have been OOM Killed.\nsrun: error: sdumont6156: task 0: Out Of Memory"
    )
    assert [d[-1] for d in _deaths(new)] == ["oom", "oom"]


def test_srun_killed_after_a_failed_task_is_a_consequence() -> None:
    # task 0 failed first (CUDA OOM, exit 1); srun cancels the step and kills the rest
    # (real console lines from a public BraTS23 hackathon notes file, graham cluster; the
    # stored index names it only by id 4439889379)
    text = "\n".join(
        [
            "srun: error: gra1177: task 0: Exited with exit code 1",
            "srun: launch/slurm: _step_signal: Terminating StepId=8867242.2",
            "slurmstepd: error: *** STEP 8867242.2 ON gra1177 CANCELLED AT 2023-07-09T19:18:33 ***",
            "srun: error: gra1181: task 2: Exited with exit code 1",
            "srun: error: gra1177: task 1: Killed",
            "srun: error: gra1181: task 3: Killed",
        ]
    )
    assert detect(text) == 0.6
    assert _deaths(text) == [
        (1, "gra1177", 0, None, 1, "exit"),
        (4, "gra1181", 2, None, 1, "exit"),
        (5, "gra1177", 1, 15, None, "terminated"),
        (6, "gra1181", 3, 15, None, "terminated"),
    ]
    assert _deaths("srun: error: nid003056: task 1: Killed") == [
        (1, "nid003056", 1, 9, None, "killed")
    ]


def test_hydra_bad_termination() -> None:
    # MPICH/Hydra: openai/jukebox#155 (signal 9) and ggml-org/llama.cpp#4792 (134 = SIGABRT)
    block = (
        "===================================================================================\n"
        "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
        "=   PID {pid} RUNNING AT {host}\n"
        "=   EXIT CODE: {code}\n"
        "=   CLEANING UP REMAINING PROCESSES\n"
        "=   YOU CAN IGNORE THE BELOW CLEANUP MESSAGES\n"
        "===================================================================================\n"
        "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: {string}\n"
    )
    killed = block.format(pid=9665, host="NeuroRTX6000", code=9, string="Killed (signal 9)")
    assert detect(killed) == 0.6
    (d,) = parse(killed).of_type(ProcessExit)
    assert (d.line, d.host, d.pid, d.signal, d.reason) == (4, "NeuroRTX6000", 9665, 9, "killed")
    abort = block.format(pid=108257, host="jetson@node1", code=134, string="Terminated (signal 15)")
    (d,) = parse(abort).of_type(ProcessExit)
    assert (d.signal_name, d.reason, d.exit_code) == ("SIGABRT", "abort", 134)


def test_deepspeed_launcher_return_code() -> None:
    # deepspeedai/DeepSpeed#3232 (argument list shortened: the line's tail is verbatim)
    line = (
        "[2023-04-14 13:11:27,885] [ERROR] [launch.py:434:sigkill_handler] ['/usr/bin/python3',"
        " '-u', 'main.py', '--local_rank=0'] exits with return code = -9"
    )
    assert detect(line) == 0.6
    (d,) = parse(line).of_type(ProcessExit)
    assert (d.signal_name, d.reason, d.exit_code) == ("SIGKILL", "killed", -9)


def test_open_mpi_first_nonzero_exit() -> None:
    # NVIDIA/nccl-tests#294
    text = "\n".join(
        [
            "mpirun detected that one or more processes exited with non-zero status, thus causing",
            "the job to be terminated. The first process to do so was:",
            "",
            "  Process name: [[12167,1],10]",
            "  Exit code:    3",
        ]
    )
    assert detect(text) == 0.6
    (d,) = parse(text).of_type(ProcessExit)
    assert (d.rank, d.exit_code, d.reason, d.first_failure) == (10, 3, "exit", True)


def test_a_log_alone_is_certain_and_a_test_run_is_not() -> None:
    """An NCCL log and nothing else scores 0.95, so detection stops there (a fleet's biggest
    files); a file that also holds an nccl-tests table, or NCCL_X= environment lines, stays at
    0.8 for the kind that prints those."""
    from aifabric.evidence.nccl_log import detect  # noqa: PLC0415

    assert detect(case("nccl-log", "roce-2.27-nccl-tests-init").text()) == 0.95
    for name in ("eks-efa-t4-tag-output-nccl-info", "aws-do-eks-p5-two-node-tag-output-rank10"):
        text = case("nccl-tests", name).text()
        assert detect(text) == 0.8
        assert detect_kind(text) == "nccl-tests"
    env = "export NCCL_IB_HCA=mlx5_0\n" + case("nccl-log", "roce-2.27-nccl-tests-init").text()
    assert detect(env) == 0.8


def test_completion_of_nccl_2_27_and_later() -> None:
    # net_ib/p2p.cc (NCCL v2.30.7-1): names beside the numbers, "vendor_err=", no length
    line = (
        "node1:4021:4090 [0] transport/net_ib/p2p.cc:688 NCCL WARN NET/IB: Got completion from"
        " peer 10.0.0.2<45678> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_RDMA_WRITE(1)"
        " vendor_err=129  localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2 hca mlx5_0"
    )
    (err,) = parse(line).of_type(IbCompletionError)
    assert (err.status, err.opcode, err.length_bytes, err.vendor_err) == (12, 1, None, 129)
    assert (err.peer_address, err.peer_port) == ("10.0.0.2", 45678)
    assert err.local_gid == "::ffff:10.0.0.1"


def test_completion_wrapped_by_hand_is_read_whole() -> None:
    # a WARN the author wrapped over four indented lines, the peer without its port
    # (alisachen-666/gcp-dynamo-cuj, dynamo-disagg-sweep/reports/gke-rdma-issue-a4xmax.md)
    text = (
        "transport/net_ib.cc:2472 NCCL WARN NET/IB: Got completion from peer 192.168.0.20\n"
        "  with status=12 opcode=0 len=0 vendor err 129 (Recv)\n"
        "  localGid  fe80::92e3:17ff:fe1c:647c\n"
        "  remoteGid fe80::92e3:17ff:fe20:8c8c   hca mlx5_6\n"
        "[rank0] ncclRemoteError: A call failed possibly due to a network error ...\n"
    )
    res = parse(text)
    (err,) = res.of_type(IbCompletionError)
    assert (err.line, err.status, err.direction) == (1, 12, "Recv")
    assert (err.peer_address, err.peer_port) == ("192.168.0.20", None)
    assert err.local_gid == "fe80::92e3:17ff:fe1c:647c"
    assert err.remote_gid == "fe80::92e3:17ff:fe20:8c8c"
    assert res.warnings == []


def test_completion_wrapped_at_the_terminal_width_is_read_whole() -> None:
    # a mail client wrapped the WARN after "len" with no indent (stas00/ml-engineering,
    # debug/pytorch.md); the INFO lines after it are NCCL's own
    text = (
        "node-2:5776:5902 [0] transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion from "
        "peer 10.2.0.5<33092> with error 12, opcode 0, len\n"
        "0, vendor err 129 (Recv)\n"
        "node-2:5776:5902 [0] NCCL INFO transport/net.cc:1134 -> 6\n"
    )
    res = parse(text)
    (err,) = res.of_type(IbCompletionError)
    assert (err.line, err.status, err.length_bytes, err.vendor_err) == (1, 12, 0, 129)
    assert (err.peer_address, err.peer_port, err.direction) == ("10.2.0.5", 33092, "Recv")
    assert res.warnings == []


def test_unreadable_completion_is_not_joined_with_the_next_record() -> None:
    # the next line is another NCCL record, not a continuation: the WARN stays unreadable
    text = (
        "h:1:2 [0] net_ib.cc:1 NCCL WARN NET/IB : Got completion from peer with junk\n"
        "h:1:2 [0] NCCL INFO transport/net.cc:1362 -> 6\n"
    )
    res = parse(text)
    assert res.of_type(IbCompletionError) == []
    assert [w.line for w in res.warnings] == [1]


def test_nccl_2_2_lines_without_the_word_nccl_are_read() -> None:
    # NCCL <= 2.2 printed "host:pid:tid [dev] INFO ..." (horovod/horovod issue 489)
    text = (
        "nmyjs-202-75:24500:24664 [1] INFO NET/IB: [0] mlx4_0:1/IB\n"
        "nmyjs-202-75:24502:24684 [3] INFO Using internal Network IB\n"
        "nmyjs-202-75:24503:24695 [4] INFO NET : Using interface eth0:10.141.202.75<0>\n"
        "nmyjs-202-75:24503:24695 [4] INFO NET/IB: [0] mlx4_0:1/IB\n"
    )
    assert detect_kind(text) == "nccl-log"
    res = parse(text)
    got = [(r.line, r.host, r.cuda_dev) for r in res.of_type(NetDevices)]
    assert got == [(1, "nmyjs-202-75", 1), (4, "nmyjs-202-75", 4)]
