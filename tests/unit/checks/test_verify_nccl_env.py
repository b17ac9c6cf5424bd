"""verify.nccl-env: the S15 lint on hand-written Observed objects and real env files."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aifabric.catalog import Catalog
from aifabric.checks import CheckContext, run_checks
from aifabric.checks.verify.nccl_env import (
    ib_timeout_seconds,
    known_variables,
    levenshtein,
    match_list,
    parse_name_list,
    strtoll,
)
from aifabric.dialects.observed import Observed, ObservedDevice, Src, Val
from aifabric.evidence import parse_text
from aifabric.evidence.nccl_env import effective_env
from aifabric.findings import Finding
from aifabric.model import Fabric, read_document
from tests.unit.evidence.fixtures import case

FABRIC = Path(__file__).resolve().parents[2] / "fixtures" / "fabrics" / "two-servers.yaml"
CHECK = "verify.nccl-env"


@pytest.fixture
def roce() -> Fabric:
    fabric = read_document(FABRIC)
    assert isinstance(fabric, Fabric)
    return fabric


def env_of(text: str, file: str = "nccl.env") -> dict[str, Val[str]]:
    """What the verify loader builds from an env file: name -> value with file and line."""
    recs = effective_env(parse_text(text, "nccl-env").records)
    return {n: Val(r.value, Src(file, r.line, r.text)) for n, r in recs.items()}


def lint(
    fabric: Fabric,
    catalog: Catalog,
    env: dict[str, Val[str]] | None,
    hosts: list[ObservedDevice] | tuple[()] = (),
) -> list[Finding]:
    observed = Observed(devices={h.name: h for h in hosts}, nccl_env=env)
    return [f for f in run_checks(CheckContext(fabric, catalog, observed)) if f.check == CHECK]


def about(findings: list[Finding], var: str) -> list[Finding]:
    return [f for f in findings if f.target.endswith(var)]


def test_nothing_without_an_env_file(roce: Fabric, catalog: Catalog) -> None:
    assert lint(roce, catalog, None) == []
    assert [f for f in run_checks(CheckContext(roce, catalog)) if f.check == CHECK] == []


def test_seed_s15_env(roce: Fabric, catalog: Catalog) -> None:
    text = (
        "export NCCL_DEBUG=INFO\n"
        "export NCCL_IB_HCA=mlx5_0,mlx5_1\n"
        "export NCCL_SOCKET_IFNAME=eth0\n"
        "export NCCL_IB_TIMEOUT=22\n"
        "export NCCL_IB_RETRY_CNT=7\n"
        "export NCCL_IB_ENABLE=1\n"
    )
    fs = lint(roce, catalog, env_of(text))
    (enable,) = about(fs, "NCCL_IB_ENABLE")
    assert enable.severity == "error"
    assert "NCCL_IB_DISABLE=0" in enable.fix or enable.expected == "NCCL_IB_DISABLE=0"
    (item,) = enable.evidence
    assert (item.source, item.line, item.text) == ("nccl.env", 6, "export NCCL_IB_ENABLE=1")
    (timeout,) = about(fs, "NCCL_IB_TIMEOUT")
    # 4.096 us x 2^22 = 17.18 s (NCCL docs table: 22 -> 17.2 seconds, 2 minutes with 7 retries)
    assert (
        timeout.severity == "info" and "17.2 s" in timeout.message and "2.0 min" in timeout.message
    )
    (tc,) = about(fs, "NCCL_IB_TC")
    assert tc.severity == "warning" and tc.expected == 104  # DSCP 26 << 2
    assert not about(fs, "NCCL_DEBUG") and not about(fs, "NCCL_IB_RETRY_CNT")
    assert all(f.explanation and f.fix for f in fs)


@pytest.mark.parametrize(
    ("n", "seconds"),
    [(20, 4.3), (22, 17.2), (23, 34.4), (17, 0.5369)],  # NCCL env docs table
)
def test_ib_timeout_formula(n: int, seconds: float) -> None:
    assert ib_timeout_seconds(n) == pytest.approx(seconds, rel=0.01)


@pytest.mark.parametrize("n", ["0", "32", "40"])
def test_ib_timeout_out_of_range_is_infinite(roce: Fabric, catalog: Catalog, n: str) -> None:
    (f,) = about(lint(roce, catalog, env_of(f"NCCL_IB_TIMEOUT={n}\n")), "NCCL_IB_TIMEOUT")
    assert f.severity == "warning" and "infinite" in f.message
    assert ib_timeout_seconds(int(n)) == float("inf")


@pytest.mark.parametrize(
    ("tos", "severity", "dscp_word"),
    [
        ("41", "error", "DSCP 10"),
        ("106", "info", "ECT(0)"),
        ("107", "error", "CE"),
        ("0", "error", "DSCP 0"),
    ],
)
def test_ib_tc_against_fabric_dscp(
    roce: Fabric, catalog: Catalog, tos: str, severity: str, dscp_word: str
) -> None:
    (f,) = about(lint(roce, catalog, env_of(f"NCCL_IB_TC={tos}\n")), "NCCL_IB_TC")
    assert f.severity == severity and dscp_word in f.message
    assert f.expected == 104 and f.actual == int(tos)


def test_ib_tc_right_value_and_other_dscp(roce: Fabric, catalog: Catalog) -> None:
    assert not about(lint(roce, catalog, env_of("NCCL_IB_TC=104\n")), "NCCL_IB_TC")
    fabric = roce.model_copy(update={"qos": roce.qos.model_copy(update={"roce_dscp": 10})})
    # OCI's NCCL_IB_TC=41 is DSCP 10 with ECT(1): right DSCP there, ECN bits flagged
    (f,) = about(lint(fabric, catalog, env_of("NCCL_IB_TC=41\n")), "NCCL_IB_TC")
    assert f.severity == "info" and f.expected == 40


def test_global_traffic_class_covers_missing_ib_tc(roce: Fabric, catalog: Catalog) -> None:
    host = ObservedDevice("gpu1", "host", "host")
    host.host_dscp.append(Val(26, Src("gpu1/traffic_class", 1, "Global tclass=106")))
    (f,) = about(lint(roce, catalog, env_of("NCCL_DEBUG=WARN\n"), [host]), "NCCL_IB_TC")
    assert f.severity == "info" and [str(e) for e in f.evidence] == [
        "gpu1/traffic_class line 1: Global tclass=106"
    ]


def test_transport_fallbacks(roce: Fabric, catalog: Catalog) -> None:
    fs = lint(roce, catalog, env_of("NCCL_IB_DISABLE=1\nNCCL_NET=Socket\n"))
    assert {f.target: f.severity for f in fs if "DISABLE" in f.target or "NET" in f.target} == {
        "nccl.env:NCCL_IB_DISABLE": "error",
        "nccl.env:NCCL_NET": "error",
    }
    assert all("S5" in f.refs for f in fs if f.severity == "error")
    sock = roce.model_copy(update={"transport": "socket"})
    assert not [
        f for f in lint(sock, catalog, env_of("NCCL_IB_DISABLE=1\n")) if f.severity == "error"
    ]


def test_gid_index(roce: Fabric, catalog: Catalog) -> None:
    (f,) = about(lint(roce, catalog, env_of("NCCL_IB_GID_INDEX=0\n")), "NCCL_IB_GID_INDEX")
    assert f.severity == "warning" and "RoCEv1" in f.message
    assert not about(lint(roce, catalog, env_of("NCCL_IB_GID_INDEX=3\n")), "NCCL_IB_GID_INDEX")
    (f,) = about(lint(roce, catalog, env_of("NCCL_DEBUG=WARN\n")), "NCCL_IB_GID_INDEX")
    assert "2.21" in f.message
    ib = roce.model_copy(update={"transport": "ib"})
    assert not about(lint(ib, catalog, env_of("NCCL_DEBUG=WARN\n")), "NCCL_IB_GID_INDEX")
    assert not about(lint(ib, catalog, env_of("NCCL_DEBUG=WARN\n")), "NCCL_IB_TC")


def test_unknown_removed_and_invalid_values(roce: Fabric, catalog: Catalog) -> None:
    text = (
        "NCCL_SCOKET_IFNAME=eth0\n"
        "NCCL_ASYNC_ERROR_HANDLING=1\n"
        "NCCL_IB_TC=0150\n"
        "NCCL_P2P_LEVEL=NVL\n"
        "NCCL_PROTO=LL128,Simple\n"
        "NCCL_ALGO=ring,bogus\n"
        "NCCL_IB_RETRY_CNT=9\n"
    )
    fs = lint(roce, catalog, env_of(text))
    (typo,) = about(fs, "NCCL_SCOKET_IFNAME")
    assert typo.severity == "warning" and typo.expected == "NCCL_SOCKET_IFNAME"
    (torch,) = about(fs, "NCCL_ASYNC_ERROR_HANDLING")
    assert torch.severity == "info" and "PyTorch" in torch.message
    octal = [f for f in about(fs, "NCCL_IB_TC") if "octal" in f.message]
    assert octal and octal[0].expected == "150"  # 0150 is octal 104, what strtoll reads
    assert not about(fs, "NCCL_P2P_LEVEL") and not about(fs, "NCCL_PROTO")
    (algo,) = about(fs, "NCCL_ALGO")
    assert "bogus" in algo.message
    (retry,) = about(fs, "NCCL_IB_RETRY_CNT")
    assert "0..7" in retry.message


def test_real_flagai_script(roce: Fabric, catalog: Catalog) -> None:
    c = case("nccl-env", "flagai-run-multi")
    fs = lint(roce, catalog, env_of(c.text(), "run_multi.sh"))
    (cuda,) = about(fs, "NCCL_IB_CUDA_SUPPORT")
    assert "removed in NCCL 2.4.0" in cuda.message and str(cuda.evidence[0]).startswith(
        "run_multi.sh line 3"
    )
    (dbg,) = about(fs, "NCCL_DEBUG")
    assert "debug" in dbg.message
    assert about(fs, "NCCL_IB_GID_INDEX")[0].severity == "warning"
    assert not about(fs, "OMP_NUM_THREADS")


def test_dynamic_values_are_not_judged(roce: Fabric, catalog: Catalog) -> None:
    c = case("nccl-env", "megengine-prepare")
    fs = lint(roce, catalog, env_of(c.text(), "prepare.sh"))
    assert not about(fs, "NCCL_IB_HCA")
    (tc,) = about(fs, "NCCL_IB_TC")  # 106: DSCP 26 right, ECT(0) bits set
    assert tc.severity == "info" and [str(e) for e in tc.evidence] == [
        "prepare.sh line 3: export NCCL_IB_TC=106"
    ]


def _host(name: str) -> ObservedDevice:
    h = ObservedDevice(name, "host", "host")
    src = Src(f"{name}/ibv_devinfo.txt", 1)
    h.link_layers = {
        "mlx5_0": Val("Ethernet", src),
        "mlx5_1": Val("Ethernet", src),
        "mlx5_4": Val("InfiniBand", src),
    }
    h.host_interfaces = {"eth0": Val(1500, src), "ens1f0np0": Val(9000, src)}
    return h


def test_hca_link_layer_and_unknown_devices(roce: Fabric, catalog: Catalog) -> None:
    hosts = [_host("gpu1"), _host("gpu2")]
    (f,) = about(lint(roce, catalog, env_of("NCCL_IB_HCA=mlx5\n"), hosts), "NCCL_IB_HCA")
    assert f.severity == "error" and f.actual == "mlx5_4" and f.expected == "mlx5_0, mlx5_1"
    assert not about(lint(roce, catalog, env_of("NCCL_IB_HCA=^mlx5_4\n"), hosts), "NCCL_IB_HCA")
    assert not about(
        lint(roce, catalog, env_of("NCCL_IB_HCA==mlx5_0:1,mlx5_1:1\n"), hosts), "NCCL_IB_HCA"
    )
    (f,) = about(lint(roce, catalog, env_of("NCCL_IB_HCA==mlx5_0,mlx5_9\n"), hosts), "NCCL_IB_HCA")
    assert f.severity == "warning" and "mlx5_9" in f.message
    ib = roce.model_copy(update={"transport": "ib"})
    (f,) = about(lint(ib, catalog, env_of("NCCL_IB_HCA=mlx5_0\n"), hosts), "NCCL_IB_HCA")
    assert f.severity == "error" and "InfiniBand" in f.message


def test_socket_ifname_prefix_exact_exclude(roce: Fabric, catalog: Catalog) -> None:
    hosts = [_host("gpu1"), _host("gpu2")]
    for ok in ("eth0", "eth", "=eth0", "^docker,lo", "ens1f0np0,eth1"):
        assert not about(
            lint(roce, catalog, env_of(f"NCCL_SOCKET_IFNAME={ok}\n"), hosts), "IFNAME"
        ), ok
    for bad in ("bond0", "=eth", "^eth,ens"):
        (f,) = about(lint(roce, catalog, env_of(f"NCCL_SOCKET_IFNAME={bad}\n"), hosts), "IFNAME")
        assert f.severity == "error" and "2 of 2 hosts" in f.message, bad


def test_strtoll_like_c() -> None:
    assert strtoll("22") == (22, True)
    assert strtoll("0x6a") == (106, True)
    assert strtoll("0106") == (70, True)
    assert strtoll("-1") == (-1, True)
    assert strtoll("auto") == (0, False)
    assert strtoll("3 ") == (3, False)


def test_name_lists() -> None:
    spec = parse_name_list("^=mlx5_1,mlx5_4:1")
    assert spec.exclude and spec.exact and spec.entries == (("mlx5_1", None), ("mlx5_4", 1))
    assert match_list(spec, {"mlx5_0", "mlx5_1", "mlx5_4", "mlx5_10"}) == {"mlx5_0", "mlx5_10"}
    assert match_list(parse_name_list("mlx5_1"), {"mlx5_1", "mlx5_10", "mlx5_2"}) == {
        "mlx5_1",
        "mlx5_10",
    }


def test_variable_list_covers_the_brief() -> None:
    known = known_variables()
    assert len(known) > 150 and all(v.source for v in known.values())
    for name in (
        "NCCL_IB_HCA", "NCCL_IB_TC", "NCCL_IB_GID_INDEX", "NCCL_IB_TIMEOUT", "NCCL_IB_RETRY_CNT",
        "NCCL_IB_DISABLE", "NCCL_SOCKET_IFNAME", "NCCL_SOCKET_NTHREADS", "NCCL_NET",
        "NCCL_NET_GDR_LEVEL", "NCCL_P2P_LEVEL", "NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE",
        "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_ALGO", "NCCL_PROTO", "NCCL_NTHREADS",
        "NCCL_BUFFSIZE", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_CROSS_NIC",
        "NCCL_NVLS_ENABLE", "NCCL_COLLNET_ENABLE", "NCCL_TOPO_FILE", "NCCL_IGNORE_CPU_AFFINITY",
        "NCCL_LAUNCH_MODE",
    ):  # fmt: skip
        assert name in known, name
    assert "NCCL_IB_ENABLE" not in known
    assert (known["NCCL_IB_TIMEOUT"].min, known["NCCL_IB_TIMEOUT"].max) == (0, 31)
    assert known["NCCL_IB_CUDA_SUPPORT"].removed == "2.4.0"


@given(st.text("NCL_IBTSOKE", max_size=12), st.text("NCL_IBTSOKE", max_size=12))
def test_levenshtein_is_a_metric(a: str, b: str) -> None:
    assert levenshtein(a, a) == 0
    assert levenshtein(a, b) == levenshtein(b, a)
    assert abs(len(a) - len(b)) <= levenshtein(a, b) <= max(len(a), len(b))
    assert levenshtein(a, a + "X") == 1
