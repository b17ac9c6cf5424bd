"""nccl-env: NCCL environment files in the forms people keep them (S15)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from aifabric.evidence import detect_kind, parse_text
from aifabric.evidence.nccl_env import EnvVar, effective_env
from tests.unit.evidence.fixtures import load


def _env(text: str) -> dict[str, str]:
    res = parse_text(text, "nccl-env")
    return {name: rec.value for name, rec in effective_env(res.records).items()}


def test_flagai_script_values_and_lines() -> None:
    res = load("nccl-env", "flagai-run-multi")
    recs = [r for r in res.records if isinstance(r, EnvVar)]
    assert [(r.line, r.name, r.value) for r in recs] == [
        (1, "NCCL_SOCKET_IFNAME", "eth0"),
        (2, "NCCL_IB_DISABLE", "0"),
        (3, "NCCL_IB_CUDA_SUPPORT", "1"),
        (4, "NCCL_IB_GID_INDEX", "0"),
        (5, "NCCL_IB_HCA", "mlx5_2,mlx5_5"),
        (6, "NCCL_DEBUG", "debug"),
        (7, "OMP_NUM_THREADS", "4"),
    ]
    assert all(r.form == "shell" and not r.dynamic for r in recs)
    assert [r.is_nccl for r in recs].count(False) == 1


def test_command_substitution_is_dynamic() -> None:
    env = effective_env(load("nccl-env", "megengine-prepare").records)
    assert env["NCCL_IB_TC"].value == "106"
    assert env["NCCL_IB_HCA"].dynamic
    assert env["NCCL_IB_HCA"].value.startswith("$(pushd /sys/class/infiniband/")
    assert env["NCCL_IB_HCA"].value.endswith("popd > /dev/null)")


def test_backslash_continued_export_block() -> None:
    env = effective_env(load("nccl-env", "mlperf-oracle-b200-config").records)
    assert env["NCCL_IB_HCA"].value == "=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11"
    assert env["NCCL_IB_HCA"].line == 44
    assert env["NCCL_IB_TC"].value == "41"
    assert env["PMIX_MCA_gds"].value == "^ds12"
    assert env["UCX_TLS"].value == "tcp"
    # the commented licence header and "set -eux" are not assignments
    assert min(r.line for r in env.values()) == 15


def test_mpirun_x_in_k8s_manifest() -> None:
    env = effective_env(load("nccl-env", "oci-hpc-oke-kueue-mpijob").records)
    assert env["NCCL_IB_HCA"].form == "mpirun"
    assert env["NCCL_IB_HCA"].value.startswith("=mlx5_0,mlx5_1,mlx5_3")
    assert env["NCCL_IB_HCA"].value.count(",") == 15  # 16 devices
    assert env["NCCL_IB_TIMEOUT"].value == "22"
    assert "ConnectTimeout" not in env  # ssh -o Key=value is an option, not the environment


def test_nccl_conf_example_from_nccl_docs() -> None:
    # NCCL env.rst: "those files could contain: NCCL_DEBUG=WARN / NCCL_SOCKET_IFNAME==ens1f0"
    text = "NCCL_DEBUG=WARN\nNCCL_SOCKET_IFNAME==ens1f0\n"
    assert detect_kind(text) == "nccl-env"
    assert _env(text) == {"NCCL_DEBUG": "WARN", "NCCL_SOCKET_IFNAME": "=ens1f0"}


def test_conf_value_with_spaces_is_the_rest_of_the_line() -> None:
    # the 2.3.7 docs' nccl.conf example
    assert _env("NCCL_RINGS=0 1 2 3|3 2 1 0\n")["NCCL_RINGS"] == "0 1 2 3|3 2 1 0"


def test_k8s_env_list_docker_and_python_forms() -> None:
    text = (
        "env:\n"
        "  - name: NCCL_IB_GID_INDEX\n"
        '    value: "3"\n'
        "  - name: NCCL_IB_HCA\n"
        "    valueFrom:\n"
        "      configMapKeyRef: {name: x, key: y}\n"
        '  - { name: NCCL_DEBUG, value: "INFO" }\n'
        "docker run -e NCCL_SOCKET_IFNAME=eth0 --env NCCL_IB_TC=104 image\n"
        'os.environ["NCCL_P2P_LEVEL"] = "NVL"\n'
        'NCCL_IB_SL = "3"\n'
    )
    res = parse_text(text, "nccl-env")
    env = effective_env(res.records)
    assert env["NCCL_IB_GID_INDEX"].value == "3" and env["NCCL_IB_GID_INDEX"].form == "k8s"
    assert env["NCCL_IB_GID_INDEX"].line == 3
    assert env["NCCL_IB_HCA"].dynamic
    assert env["NCCL_DEBUG"].value == "INFO"
    assert env["NCCL_SOCKET_IFNAME"].form == "docker" and env["NCCL_IB_TC"].value == "104"
    assert env["NCCL_P2P_LEVEL"].value == "NVL"
    assert env["NCCL_IB_SL"].value == "3"


def test_comments_quotes_and_later_assignment_wins() -> None:
    text = (
        "# export NCCL_IB_DISABLE=1\n"
        "export NCCL_IB_HCA='mlx5_0:1,mlx5_1:1'  # rails 0 and 1\n"
        'export NCCL_DEBUG="INFO"\n'
        "export NCCL_DEBUG=WARN\n"
    )
    res = parse_text(text, "nccl-env")
    env = effective_env(res.records)
    assert "NCCL_IB_DISABLE" not in env
    assert env["NCCL_IB_HCA"].value == "mlx5_0:1,mlx5_1:1"
    assert env["NCCL_DEBUG"].value == "WARN" and env["NCCL_DEBUG"].line == 4
    assert len(res.warnings) == 1 and res.warnings[0].line == 4


def test_env_output_and_if_guard() -> None:
    text = "if [ -z ${NCCL_IB_HCA+x} ]; then export NCCL_IB_HCA=mlx5_bond;fi\n"
    assert _env(text) == {"NCCL_IB_HCA": "mlx5_bond"}


_names = st.from_regex(r"NCCL_[A-Z][A-Z0-9_]{0,20}", fullmatch=True)
_values = st.from_regex(r"[A-Za-z0-9_.:,^=/-]{1,30}", fullmatch=True)


@given(st.lists(st.tuples(_names, _values), min_size=1, max_size=8))
def test_export_lines_round_trip(pairs: list[tuple[str, str]]) -> None:
    text = "".join(f"export {n}={v}\n" for n, v in pairs)
    assert _env(text) == dict(pairs)
