"""host-roce-script: the RoCE settings a provisioning script's commands make."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.catalog import load_catalog
from aifabric.checks import CheckContext, run_checks
from aifabric.design import load_fabric
from aifabric.dialects import host as host_dialect
from aifabric.dialects.observed import Observed
from aifabric.evidence import detect_kind, detect_scores, parse_text
from aifabric.evidence.host_script import (
    KIND,
    ScriptMtu,
    ScriptQos,
    ScriptSysctl,
    ScriptTos,
)
from tests.unit.evidence.fixtures import all_cases, case, draw_garbage_insertion, load


def _parse(text: str) -> list[object]:
    res = parse_text(text, KIND)
    assert not res.warnings, [str(w) for w in res.warnings]
    return list(res.records)


def test_att_netarbiter_script() -> None:
    res = load(KIND, "att-netarbiter-lossless-layer3")
    assert not res.warnings
    trust, tclass, cma, sysctl, pfc = res.records
    assert isinstance(trust, ScriptQos) and isinstance(pfc, ScriptQos)
    assert (trust.line, trust.interface, trust.dynamic, trust.trust) == (
        15,
        "$INTERFACE",
        True,
        "dscp",
    )
    assert trust.pfc_priorities is None
    assert (pfc.line, pfc.pfc_priorities, pfc.trust) == (19, [3], None)
    assert isinstance(tclass, ScriptTos) and isinstance(cma, ScriptTos)
    # 106 = DSCP 26 << 2 | ECT(0)
    assert (tclass.via, tclass.device, tclass.port, tclass.tos, tclass.dscp, tclass.ecn) == (
        "traffic_class", "$DEVICE", 1, 106, 26, 2,
    )  # fmt: skip
    assert (cma.line, cma.via, cma.device, cma.ecn_name) == (
        17,
        "cma_roce_tos",
        "$DEVICE",
        "ECT(0)",
    )
    assert isinstance(sysctl, ScriptSysctl)
    assert (sysctl.name, sysctl.value) == ("net.ipv4.tcp_ecn", "1")


def test_imperial_script_interprets_to_trust_pfc_and_dscp() -> None:
    res = load(KIND, "imperial-rcs-cx3-configure-roce")
    assert [type(r).__name__ for r in res.records] == [
        "ScriptQos", "ScriptQos", "ScriptTos", "ScriptTos", "ScriptSysctl",
    ]  # fmt: skip
    dev = host_dialect.interpret([("05_configure_roce.sh", res)], name="node1")
    v = dev.view("eth0")
    assert v.trust is not None and (v.trust.value, v.trust.src.line) == ("dscp", 10)
    assert v.pfc_priorities is not None and (v.pfc_priorities.value, v.pfc_priorities.src.line) == (
        (3,), 12,
    )  # fmt: skip
    assert [(m.value, m.src.line) for m in dev.host_dscp] == [(26, 14), (26, 15)]
    assert dev.host_dscp[0].src.file == "05_configure_roce.sh"


def test_captured_outputs_are_not_scripts() -> None:
    """The set -x run of the att script prints mlnx_qos reports and the cma_roce_tos value:
    those captures stay mlnx-qos / cma-roce-tos."""
    assert detect_kind(case("mlnx-qos", "att-netarbiter-setup-trace").text()) == "mlnx-qos"
    assert detect_kind(case("cma-roce-tos", "att-netarbiter-setup-trace").text()) == "cma-roce-tos"
    assert detect_kind("mlnx_qos -i eth4 --pfc 0,0,0,1,0,0,0,0\n") == KIND
    scores = dict((k, s) for s, k in detect_scores("cma_roce_tos -d mlx5_0 -t 104\n"))
    assert scores[KIND] == 0.9


def test_shell_forms() -> None:
    text = (
        "#!/bin/bash\n"
        "set -euo pipefail\n"
        "for i in eth2 eth3; do echo $i; done\n"
        "sudo mlnx_qos -i ens1f0np0 \\\n"
        "    --trust=dscp\n"
        "mlnx_qos --interface=ens1f0np0 --dscp2prio set,26,3 --dscp2prio=set,48,6 "
        "-f 0,0,0,1,0,0,0,0\n"
        "echo 104 | sudo tee /sys/class/infiniband/mlx5_0/tc/1/traffic_class >/dev/null\n"
        "sudo sh -c 'echo 104 > /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos'\n"
        "# a comment naming cat <<EOF opens no here-document\n"
        "printf '%s' 104 > /sys/class/infiniband/mlx5_9/tc/1/traffic_class\n"
        "cat <<'EOF'\n"
        "%%% usage text is not a command: mlnx_qos -i x --pfc 1,1,1,1,1,1,1,1\n"
        "EOF\n"
        'echo "a quoted\n'
        '%% newline mlnx_qos -i y --trust pcp"\n'
        "ip link set ens1f0np0 mtu 9000 up && ifconfig eth9 mtu 4200\n"
        "+ cma_roce_tos -d mlx5_3 -p 2 -t 96 # trace prefix, trailing comment\n"
    )
    recs = _parse(text)
    qos = [r for r in recs if isinstance(r, ScriptQos)]
    assert [(q.line, q.interface, q.trust, q.pfc_priorities, q.dscp_set) for q in qos] == [
        (4, "ens1f0np0", "dscp", None, {}),
        (6, "ens1f0np0", None, [3], {26: 3, 48: 6}),
    ]
    tos = [r for r in recs if isinstance(r, ScriptTos)]
    assert [(t.line, t.via, t.device, t.port, t.dscp) for t in tos] == [
        (7, "traffic_class", "mlx5_0", 1, 26),
        (8, "default_roce_tos", "mlx5_0", 1, 26),
        (10, "traffic_class", "mlx5_9", 1, 26),
        (17, "cma_roce_tos", "mlx5_3", 2, 24),
    ]
    mtus = [(r.line, r.interface, r.mtu_bytes) for r in recs if isinstance(r, ScriptMtu)]
    assert mtus == [(16, "ens1f0np0", 9000), (16, "eth9", 4200)]


def test_mlnx_qos_refuses_trust_with_dscp2prio_but_keeps_pfc() -> None:
    res = parse_text(
        "mlnx_qos -i eth0 --trust dscp --dscp2prio set,26,3 --pfc 0,0,0,1,0,0,0,0\n", KIND
    )
    (rec,) = res.records
    assert isinstance(rec, ScriptQos)
    assert (rec.trust, rec.dscp_set, rec.pfc_priorities) == (None, {}, [3])
    assert len(res.warnings) == 1 and "cannot" not in res.warnings[0].message
    assert "refuses --trust with --dscp2prio" in res.warnings[0].message


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("cma_roce_tos -d mlx5_0 -t $TOS", "not a number the script fixes"),
        ("echo 300 > /sys/class/infiniband/mlx5_0/tc/1/traffic_class", "outside 0-255"),
        ("mlnx_qos -i eth0 --pfc 0,0,0,1", "eight comma-separated"),
        ("mlnx_qos -i eth0 --pfc $PFC", "eight comma-separated"),
        ("mlnx_qos -i eth0 --trust vlan", "not pcp or dscp"),
        ("mlnx_qos -i eth0 --dscp2prio set,64,3", "expected set,DSCP,PRIO"),
        ("mlnx_qos --trust dscp", "without -i"),
        ("ip link set dev eth0 mtu 99999", "68-65535"),
        ("%%% not shell %%%", "not a shell command line"),
        ("echo 'open quote", "unterminated quote"),
    ],
)
def test_bad_settings_are_one_warning_each(line: str, why: str) -> None:
    res = parse_text(line + "\n", KIND)
    assert not res.records
    assert len(res.warnings) == 1 and why in res.warnings[0].message
    assert res.warnings[0].line == 1


def test_queries_and_other_commands_are_not_settings() -> None:
    text = (
        "mlnx_qos -i eth0\nmlnx_qos -i eth0 --prio_tc=1,0,2,3,4,5,6,7\n"
        "cma_roce_tos -d mlx5_0\nls -l\n"
    )
    assert _parse(text) == []


def test_dscp2prio_accumulates_across_lines_in_the_interpreter() -> None:
    text = (
        "mlnx_qos -i eth0 --dscp2prio set,26,3 --dscp2prio set,46,5\n"
        "mlnx_qos -i eth0 --dscp2prio del,46,5\n"
        "mlnx_qos -i eth0 --dscp2prio set,48,6\n"
    )
    dev = host_dialect.interpret([("s.sh", parse_text(text, KIND))], name="h")
    d2p = dev.view("eth0").dscp_to_tc
    assert d2p is not None and d2p.value == {26: 3, 48: 6} and d2p.src.line == 3
    dev = host_dialect.interpret(
        [("s.sh", parse_text(text + "mlnx_qos -i eth0 --dscp2prio flush\n", KIND))], name="h"
    )
    flushed = dev.view("eth0").dscp_to_tc
    assert flushed is not None and flushed.value == {}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.booleans(), min_size=8, max_size=8), st.integers(0, 255))
def test_pfc_bits_and_tos_round_trip(bits: list[bool], tos: int) -> None:
    flags = ",".join("1" if b else "0" for b in bits)
    text = (
        f"mlnx_qos -i eth1 --pfc {flags}\n"
        f"cma_roce_tos -d mlx5_1 -t {tos}\n"
        f"echo {tos} > /sys/class/infiniband/mlx5_1/tc/1/traffic_class\n"
    )
    qos, cma, tclass = _parse(text)
    assert isinstance(qos, ScriptQos) and qos.pfc_priorities == [p for p in range(8) if bits[p]]
    for rec in (cma, tclass):
        assert isinstance(rec, ScriptTos)
        assert rec.dscp * 4 + rec.ecn == tos and rec.dscp == tos >> 2 and rec.ecn == tos & 3


_OPS = st.lists(
    st.tuples(st.sampled_from(["set", "del"]), st.integers(0, 63), st.integers(0, 7)),
    min_size=1,
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(_OPS, st.integers(1, 4))
def test_dscp2prio_sequence_gives_the_map_the_nic_ends_with(
    ops: list[tuple[str, int, int]], per_line: int
) -> None:
    lines = []
    for i in range(0, len(ops), per_line):
        args = " ".join(f"--dscp2prio {a},{d},{p}" for a, d, p in ops[i : i + per_line])
        lines.append(f"mlnx_qos -i eth0 {args}")
    expected: dict[int, int] = {}
    for action, dscp, prio in ops:
        if action == "set":
            expected[dscp] = prio
        else:
            expected.pop(dscp, None)
    dev = host_dialect.interpret([("s", parse_text("\n".join(lines), KIND))], name="h")
    d2p = dev.view("eth0").dscp_to_tc
    assert d2p is not None and d2p.value == expected


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_a_garbage_line_is_one_warning(data: st.DataObject) -> None:
    cases = [c for c in all_cases() if c.kind == KIND]
    draw_garbage_insertion(data, cases, lambda kind: lambda t: parse_text(t, kind))


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=400))
def test_any_text_parses_without_raising(text: str) -> None:
    res = parse_text(text, KIND)
    for rec in res.records:
        assert rec.line >= 1


_FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
_SCRIPTS = [c.text() for c in all_cases() if c.kind == KIND] + [
    p.read_text(encoding="utf-8")
    for p in sorted((_FIXTURES / "render" / "host" / "lossless-lab" / "srv01").glob("*.sh"))
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_SCRIPTS), st.integers(0, 60), st.integers(0, 60))
def test_mangled_scripts_interpret_and_verify_without_raising(
    text: str, drop: int, dup: int
) -> None:
    """A script with a line dropped and another duplicated still reads, interprets and goes
    through every verify check (as the other host captures do)."""
    lines = text.splitlines()
    del lines[drop % len(lines)]
    lines.insert(dup % len(lines), lines[dup % len(lines)])
    result = parse_text("\n".join(lines) + "\n", KIND)
    dev = host_dialect.interpret([("srv01/roce-host.sh", result)], name="srv01")
    fabric = load_fabric(_FIXTURES / "verify" / "_fabrics" / "small-l3.yaml", load_catalog())
    ctx = CheckContext(fabric, load_catalog(), Observed(devices={"srv01": dev}))
    for f in run_checks(ctx, category="verify"):
        assert f.explanation and f.fix
