"""ucx_info and ucx_perftest parsers against real captures."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind
from aifabric.evidence.ucx import (
    UcxBuildConfig,
    UcxConfig,
    UcxDevices,
    UcxPerftestRun,
    UcxTransport,
    UcxVersion,
    is_rdma_transport,
    mib_per_s_to_gbps,
    parse_ucx_info,
    parse_ucx_perftest,
)
from tests.unit.evidence.fixtures import (
    FIXTURES,
    Case,
    all_cases,
    assert_garbage_line_is_one_warning,
    case,
    load,
)

INFO_CASES = [c for c in all_cases() if c.kind == "ucx-info"]
PERF_CASES = [c for c in all_cases() if c.kind == "ucx-perftest"]


@pytest.mark.parametrize("c", INFO_CASES + PERF_CASES, ids=lambda c: c.id)
def test_fixture_detects_and_warns_as_documented(c: Case) -> None:
    assert detect_kind(c.text()) == c.kind
    res = c.parse()
    assert res.records
    assert len(res.warnings) == c.meta.get("warnings", 0), [str(w) for w in res.warnings]


def test_at_least_three_real_fixtures_each() -> None:
    assert len(INFO_CASES) >= 3
    assert len(PERF_CASES) >= 3


# ---- ucx_info -d ---------------------------------------------------------------------------------


def test_azure_hdr_vf_listing() -> None:
    res = load("ucx-info", "azure-flux-hdr-vf-ucx-info-d")
    (lst,) = res.of_type(UcxDevices)
    assert lst.transports == [
        "self", "tcp", "sysv", "posix", "dc_mlx5", "rc_verbs", "rc_mlx5", "ud_verbs", "ud_mlx5",
        "cma", "knem",
    ]  # fmt: skip
    assert lst.rdma_transports == ["dc_mlx5", "rc_verbs", "rc_mlx5", "ud_verbs", "ud_mlx5"]
    assert lst.device_transports["mlx5_0:1"] == lst.rdma_transports
    assert lst.device_transports["eth0"] == ["tcp"]
    assert lst.ib_devices == ["mlx5_0:1"]
    assert lst.ib_devices_without_rdma == []
    assert lst.connection_managers == ["tcp", "rdmacm"]
    assert not lst.transports_only
    gga = [md for md in lst.memory_domains if md.component == "gga"]
    assert len(gga) == 1 and gga[0].name == "mlx5_0" and gga[0].no_devices and not gga[0].devices
    (lst_line, lst_end) = (lst.line, lst.end_line)
    assert (lst_line, lst_end) == (2, 441)
    rc = next(t for t in res.of_type(UcxTransport) if t.transport == "rc_mlx5")
    assert (rc.device, rc.memory_domain, rc.component, rc.device_type) == (
        "mlx5_0:1",
        "mlx5_0",
        "ib",
        "network",
    )
    assert rc.system_device == "mlx5_0 (0)"
    assert rc.bandwidth_raw == "23588.47/ppn + 0.00 MB/sec"
    assert rc.bandwidth_gbps == pytest.approx(23588.47 * 2**20 * 8 / 1e9)  # HDR, ~197.9 Gb/s
    assert (rc.latency_ns, rc.overhead_ns) == (600.0, 40.0)
    assert rc.rdma and (rc.line, rc.end_line) == (279, 321)
    lo = next(t for t in res.of_type(UcxTransport) if t.device == "lo")
    assert lo.bandwidth_gbps == pytest.approx(mib_per_s_to_gbps(11.91))
    assert lo.latency_ns == 10960.0 and not lo.rdma


def test_old_layout_one_transport_line_several_devices() -> None:
    res = load("ucx-info", "ucx-issue-6264-ucx18-old-layout")
    (lst,) = res.of_type(UcxDevices)
    assert lst.transports == [
        "mm", "self", "tcp", "rc", "rc_mlx5", "dc_mlx5", "ud", "ud_mlx5", "cm", "cma", "knem",
    ]  # fmt: skip
    assert lst.rdma_transports == ["rc", "rc_mlx5", "dc_mlx5", "ud", "ud_mlx5", "cm"]
    tcp = [t for t in res.of_type(UcxTransport) if t.transport == "tcp"]
    assert [(t.device, t.memory_domain) for t in tcp] == [("eth2", "tcp"), ("ib0", "tcp")]
    assert tcp[1].bandwidth_gbps == pytest.approx(mib_per_s_to_gbps(11737.53))
    rc = next(t for t in res.of_type(UcxTransport) if t.transport == "rc")
    assert (rc.device, rc.memory_domain, rc.component) == ("mlx5_0:1", "ib/mlx5_0", "ib")
    assert rc.bandwidth_raw == "11794.23 MB/sec" and rc.latency_ns == 600.0  # EDR
    assert rc.device_type is None
    rdmacm = next(md for md in lst.memory_domains if md.name == "rdmacm")
    assert rdmacm.no_devices and rdmacm.component == "rdmacm"
    assert lst.ib_devices == ["mlx5_0:1"] and not lst.ib_devices_without_rdma


def test_grep_transport_capture_without_rdma() -> None:
    res = load("ucx-info", "ornl-bernie-grep-transports-no-ib")
    (lst,) = res.of_type(UcxDevices)
    assert lst.command == "[tvj@bernie ~]$ ucx_info -d | grep Trans"
    assert lst.transports == ["self", "tcp", "sysv", "posix"]
    assert lst.transports_only and not lst.has_rdma
    tls = res.of_type(UcxTransport)
    assert [t.transport for t in tls] == ["self", "tcp", "tcp", "tcp", "sysv", "posix"]
    assert all(t.device is None for t in tls)
    assert (lst.line, lst.end_line) == (2, 7)


def test_grep_transport_capture_after_installing_ib_module() -> None:
    (lst,) = load("ucx-info", "ornl-bernie-grep-transports-after-ucx-ib").of_type(UcxDevices)
    assert lst.rdma_transports == ["rc_verbs", "ud_verbs"]
    assert lst.transports[-1] == "cma"


def test_version_block() -> None:
    (v,) = load("ucx-info", "ornl-bernie-ucx-info-v").of_type(UcxVersion)
    assert (v.library_version, v.library_path, v.api_headers_version) == (
        "1.15.0",
        "/lib64/libucs.so.0",
        "1.15.0",
    )
    assert (v.git_branch, v.git_revision) == ("", "348d14f")
    assert v.configure_flags is not None and v.configure_flags.endswith("--without-ugni")
    assert v.with_verbs is True
    assert (v.line, v.end_line) == (2, 6)


def test_version_block_whose_hashes_a_markdown_renderer_took() -> None:
    """The same real ``ucx_info -v`` pasted unfenced: GitHub renders each ``# ...`` line as a
    heading and the copy keeps only its words."""
    path = FIXTURES / "ucx-info/ornl-bernie-ucx-info-v/input.txt"
    text = path.read_text(encoding="utf-8").replace("# ", "")
    assert "#" not in text
    assert detect_kind(text) == "ucx-info"
    (v,) = parse_ucx_info(text).of_type(UcxVersion)
    assert (v.library_version, v.api_headers_version, v.git_revision) == ("1.15.0", "1.15.0",
                                                                         "348d14f")
    assert v.with_verbs is True


def test_old_version_and_define_lines() -> None:
    # Line shapes of build_info.c in UCX 1.12 and older (printf "# UCT version=%s revision %s",
    # "# configured with: %s", "#define %-25s %s").
    text = (
        "# UCT version=1.11.2 revision 0000000\n"
        "# configured with: --prefix=/usr --without-verbs\n"
        "#define ENABLE_MT                 0\n"
        "#define HAVE_CUDA                 1\n"
    )
    res = parse_ucx_info(text)
    (v,) = res.of_type(UcxVersion)
    assert (v.library_version, v.git_revision, v.with_verbs) == ("1.11.2", "0000000", False)
    (b,) = res.of_type(UcxBuildConfig)
    assert b.defines == {"ENABLE_MT": "0", "HAVE_CUDA": "1"}
    assert not res.warnings


def test_config_print() -> None:
    res = load("ucx-info", "ucx-issue-8440-config-print-excerpt")
    (cfg,) = res.of_type(UcxConfig)
    assert len(cfg.values) == 23
    assert cfg.values["UCX_CMA_BW"] == "11145.00MBps"
    assert cfg.values["UCX_RDMA_CM_SOURCE_ADDRESS"] == ""
    assert cfg.values["UCX_UD_MLX5_MIN_POKE_TIME"] == "250000.00us"
    assert (cfg.line, cfg.end_line) == (1, 23)


def test_no_supported_devices_marks_an_ib_domain_empty() -> None:
    # tl_info.c: printf("# (No supported devices found)\n") after "# Memory domain:" lines.
    text = "#\n# Memory domain: mlx5_1\n#     Component: ib\n#\n# (No supported devices found)\n"
    (lst,) = parse_ucx_info(text).of_type(UcxDevices)
    (md,) = lst.memory_domains
    assert (md.name, md.component, md.no_devices, md.devices) == ("mlx5_1", "ib", True, [])
    assert lst.transports == []


@pytest.mark.parametrize(
    ("kind", "name", "after"),
    [
        ("ucx-info", "azure-flux-hdr-vf-ucx-info-d", 250),
        ("ucx-info", "ucx-issue-6264-ucx18-old-layout", 120),
        ("ucx-info", "ornl-bernie-grep-transports-no-ib", 3),
        ("ucx-perftest", "quasiben-efa-tcp-tag-bw-cuda", 6),
        ("ucx-perftest", "ucx-issue-10532-am-lat", 9),
    ],
)
def test_garbage_line_gives_one_warning_and_changes_nothing_else(
    kind: str, name: str, after: int
) -> None:
    assert_garbage_line_is_one_warning(kind, name, after)


def test_rdma_transport_names() -> None:
    for name in ("rc_mlx5", "rc_verbs", "dc_mlx5", "ud_verbs", "ud_mlx5", "rc", "ud", "srd", "cm"):
        assert is_rdma_transport(name), name
    for name in ("tcp", "self", "sysv", "posix", "mm", "cma", "knem", "cuda_copy", "gdr_copy"):
        assert not is_rdma_transport(name), name


# ---- ucx_perftest --------------------------------------------------------------------------------


def test_efa_srd_server_and_client_commands() -> None:
    server, client = load("ucx-perftest", "quasiben-efa-srd-tag-bw-cuda").of_type(UcxPerftestRun)
    assert server.server is None and server.rows == [] and server.final is None
    assert (server.test, server.message_size_bytes) == ("tag_bw", 100 * 2**20)
    assert client.server == "IP_NODE_A"
    assert (client.send_memory, client.recv_memory, client.metric, client.percentile) == (
        "cuda",
        "cuda",
        "overhead",
        50.0,
    )
    final = client.final
    assert final is not None and final.stage == "final" and final.line == 12
    assert (final.iterations, final.latency_percentile_us, final.latency_avg_us) == (
        10,
        0.353,
        2202.916,
    )
    assert (final.bw_avg_mibps, final.bw_overall_mibps, final.msgrate_overall) == (
        45394.37,
        45394.37,
        454,
    )
    assert final.bw_overall_gbps == pytest.approx(380.8, abs=0.1)
    assert client.is_bandwidth_test and client.transports == []


def test_efa_tcp_continued_environment() -> None:
    (run,) = load("ucx-perftest", "quasiben-efa-tcp-tag-bw-cuda").of_type(UcxPerftestRun)
    assert run.env["UCX_TLS"] == "tcp,cuda_copy,cuda_ipc,sm,self"
    assert run.env["UCX_TCP_SNDBUF"] == "4M"
    assert run.transports == ["tcp", "cuda_copy", "cuda_ipc", "sm", "self"]
    assert run.message_size_bytes == 104857600 and run.server == "IP_NODE_A"
    assert run.final is not None and run.final.bw_overall_mibps == 1136.80
    assert run.final.latency_overall_us == 87966.013
    assert (run.line, run.end_line) == (1, 11)


def test_banner_separated_batch_runs() -> None:
    tag_bw, sync_bw = load("ucx-perftest", "ucx-issue-10649-tag-bw-bond").of_type(UcxPerftestRun)
    assert tag_bw.test == "tag_bw" and sync_bw.test == "tag_sync_bw"
    (row,) = tag_bw.rows
    assert (row.stage, row.iterations, row.bw_overall_mibps, row.msgrate_avg) == (
        "thread 0",
        622,
        46821.78,
        599,
    )
    assert tag_bw.final is not None and tag_bw.final.bw_avg_mibps == 46615.58
    assert tag_bw.final.bw_overall_mibps == 46743.62 and tag_bw.final.latency_overall_us == 1671.351
    assert sync_bw.metric == "overhead" and sync_bw.result is None
    assert tag_bw.message_size_bytes is None


def test_latency_run_with_prompt_and_log_line() -> None:
    (run,) = load("ucx-perftest", "ucx-issue-10532-am-lat").of_type(UcxPerftestRun)
    assert (run.test, run.server, run.message_size_bytes, run.metric) == (
        "ucp_am_lat",
        "172.23.155.50",
        30000,
        "latency",
    )
    assert not run.is_bandwidth_test and run.final is None
    assert [r.iterations for r in run.rows] == [31045, 62188, 92260, 121919]
    assert run.rows[-1].latency_avg_us == 16.859 and run.rows[-1].msgrate_overall == 60958
    assert run.result is run.rows[-1]


def test_typical_column_and_thread_rows() -> None:
    (run,) = load("ucx-perftest", "ucx-issue-5252-tcp-threads-typical").of_type(UcxPerftestRun)
    assert run.percentile is None and run.metric == "overhead"
    assert [r.stage for r in run.rows] == [f"thread {n}" for n in (5, 7, 2, 1, 6, 0)]
    assert run.rows[0].bw_overall_mibps == 161.30 and run.rows[-1].iterations == 1736


def test_box_header_and_multithread_final() -> None:
    # print_header() box lines and the 4-number multi-thread Final format of print_progress().
    text = (
        "+" + "-" * 106 + "+\n"
        "| API:          protocol layer" + " " * 76 + "|\n"
        "| Test:         tag match bandwidth" + " " * 71 + "|\n"
        "| Message size: 1048576" + " " * 83 + "|\n"
        "| Window size:  32" + " " * 88 + "|\n"
        f"Final:    {1000:18.0f} {21.5:29.3f} {46000.0:22.2f} {2300:23.0f}\n"
    )
    (run,) = parse_ucx_perftest(text).of_type(UcxPerftestRun)
    assert (run.api, run.test_description, run.message_size_bytes, run.window_size) == (
        "protocol layer",
        "tag match bandwidth",
        1048576,
        32,
    )
    assert run.is_bandwidth_test
    assert run.final is not None and run.final.bw_overall_mibps == 46000.0
    assert run.final.latency_overall_us == 21.5 and run.final.msgrate_overall == 2300


# ---- properties ----------------------------------------------------------------------------------

_NOISE = st.text(alphabet=" 0123456789%$@!*()[]{}<>=+-_.,;:/|~^&'\"?#", max_size=60)


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_never_raises(text: str) -> None:
    parse_ucx_info(text)
    parse_ucx_perftest(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(
        [
            ("ucx-info", "ucx-issue-6264-ucx18-old-layout"),
            ("ucx-info", "ornl-bernie-grep-transports-no-ib"),
            ("ucx-perftest", "ucx-issue-10649-tag-bw-bond"),
            ("ucx-perftest", "quasiben-efa-tcp-tag-bw-cuda"),
        ]
    ),
    st.integers(min_value=0, max_value=400),
    _NOISE,
)
def test_inserted_noise_line_is_one_warning_at_most(
    which: tuple[str, str], where: int, noise: str
) -> None:
    kind, name = which
    c = case(kind, name)
    lines = c.text().splitlines()
    base = c.parse()
    lines.insert(min(where, len(lines)), noise)
    parser = parse_ucx_info if kind == "ucx-info" else parse_ucx_perftest
    res = parser("\n".join(lines))
    assert len(res.warnings) - len(base.warnings) <= 1
