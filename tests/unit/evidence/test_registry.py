"""The evidence registry as a whole: every fixture is real (has a source), is detected as its own
kind without ``--kind``, parses without unexpected warnings; no input crashes any parser; binary
input is refused with one line and exit code 2 (issue 3 "must show")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.errors import InputError
from aifabric.evidence import all_kinds, decode_capture, detect_kind, detect_scores, parse_text
from aifabric.evidence.base import mw_to_dbm, parse_number, split_launcher_prefix
from aifabric.evidence.registry import DETECT_CERTAIN, DETECT_MIN_SCORE
from tests.conftest import run_cli
from tests.unit.evidence.fixtures import FIXTURES, Case, all_cases

CONTRACT_KINDS = {
    "nccl-tests", "nccl-log", "ethtool-stats", "ethtool-module", "rdma-hw-counters",
    "ibv-devinfo", "ibstat", "show-gids", "lspci", "ping", "perftest", "sonic-config-db",
    "eos-config", "nxos-config", "nvue", "mlnx-qos", "pfc-counters",
}  # fmt: skip
CASES = all_cases()


def test_contract_kinds_are_registered() -> None:
    missing = CONTRACT_KINDS - set(all_kinds())
    assert not missing, f"contracts.md parse kinds not registered: {sorted(missing)}"


def test_at_least_40_real_fixtures_and_one_per_kind() -> None:
    assert len(CASES) >= 40, f"only {len(CASES)} fixtures under {FIXTURES}"
    without = set(all_kinds()) - {c.kind for c in CASES}
    assert not without, f"kinds without a real fixture: {sorted(without)}"
    unknown = {c.kind for c in CASES} - set(all_kinds())
    assert not unknown, f"fixture directories of no registered kind: {sorted(unknown)}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_fixture_has_a_source(case: Case) -> None:
    source = str(case.meta.get("source", "")).strip()
    assert source, f"{case.path.parent}/meta.yaml needs a source: line"
    assert "invented" not in source.lower()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_fixture_detected_without_kind(case: Case) -> None:
    text = case.text()
    scores = detect_scores(text)
    assert scores, "no kind recognised"
    assert scores[0][1] == case.kind, f"detected {scores[:3]}"
    assert detect_kind(text) == case.kind  # the early-exit path agrees with the full ranking
    assert all(s <= DETECT_CERTAIN for s, _ in scores)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_fixture_parses_with_expected_warnings(case: Case) -> None:
    text = case.text()
    result = parse_text(text, case.kind)
    assert result.kind == case.kind
    assert result.records, "no records"
    expected = int(case.meta.get("warnings", 0))
    assert len(result.warnings) == expected, [str(w) for w in result.warnings]
    n_lines = text.count("\n") + 1
    for rec in result.records:
        assert 0 <= rec.line <= n_lines, rec
        if rec.end_line is not None:
            assert rec.line <= rec.end_line <= n_lines, rec
    json.dumps(result.to_json(), allow_nan=False)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=3000))
def test_no_text_crashes_any_parser(text: str) -> None:
    for name in all_kinds():
        result = parse_text(text, name)
        json.dumps(result.to_json(), allow_nan=False)
    detect_scores(text)


_TOKENS = st.sampled_from(
    [
        "NIC statistics:", "     rx_prio3_pause: 12", "# Avg bus bandwidth    : 1.5",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong",
        "     1048576        262144     float     sum      -1   1626.5    0.64    1.13      0",
        "hca_id:\tmlx5_0", "CA 'mlx5_0'", "\tPort 1:", "LnkSta:\tSpeed 8GT/s (downgraded)",
        "PING 10.0.0.2 (10.0.0.2) 8972(9000) bytes of data.", "--- 10.0.0.2 ping statistics ---",
        '{"PORT_QOS_MAP": {', "qos map dscp 26 to traffic-class 3", "policy-map type network-qos",
        "Port Rx    PFC0    PFC1", "Identifier : 0x11 (QSFP28)", "host:1:2 [0] NCCL INFO NET/IB",
        "tc: 3 ratelimit: unlimited, tsa: ets, bw: 50%", "qdisc mq 0: root", "2: eth0: <UP> mtu",
        "hca_id:", "NIC statistics:\n  rx_bytes: 1", "#bytes     #iterations    BW peak[MB/sec]",
        "", " ", ":", "::::", "-1[0]", "N/A", "\t", "0x", "ÿ", "1e309", "-0", "9" * 40,
    ]
)  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TOKENS, max_size=60))
def test_no_mix_of_real_markers_crashes_any_parser(lines: list[str]) -> None:
    text = "\n".join(lines)
    scores = detect_scores(text)
    if scores and scores[0][0] >= DETECT_MIN_SCORE:
        assert detect_kind(text) == scores[0][1]
    for name in all_kinds():
        json.dumps(parse_text(text, name).to_json(), allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=2000))
def test_bytes_are_decoded_or_refused_with_input_error(data: bytes) -> None:
    try:
        text = decode_capture(data, "x.bin")
    except InputError as exc:
        assert "\n" not in str(exc)
        return
    try:
        parse_text(text, None, "x.bin")
    except InputError as exc:
        assert "\n" not in str(exc)


def test_decode_normalises_line_ends_ansi_and_bom() -> None:
    raw = b"\xef\xbb\xbfa\r\nb\rc\x1b[31mred\x1b[0m\n"
    assert decode_capture(raw) == "a\nb\ncred\n"
    assert decode_capture("caf\xe9\n".encode("latin-1")) == "caf\xe9\n"


@pytest.mark.parametrize(
    "data", [b"", b"   \n", b"\x7fELF\x02\x01\x01\x00\x00", bytes(range(256)) * 4]
)
def test_decode_refuses_empty_and_binary(data: bytes) -> None:
    with pytest.raises(InputError):
        decode_capture(data, "f")


@pytest.mark.parametrize(
    ("line", "rest", "rank"),
    [
        ("[1,3]<stdout>:#  Rank  0 Group", "#  Rank  0 Group", 3),
        ("[12,0]<stderr>:host:1:1 [0] NCCL INFO x", "host:1:1 [0] NCCL INFO x", 0),
        ("  7: host:1:1 [7] NCCL INFO x", "host:1:1 [7] NCCL INFO x", 7),
        ("     1048576        262144", "     1048576        262144", None),
        ("plain text", "plain text", None),
    ],
)
def test_launcher_prefixes(line: str, rest: str, rank: int | None) -> None:
    assert split_launcher_prefix(line) == (rest, rank)


def test_number_cells_and_power() -> None:
    assert parse_number(" N/A ") is None
    assert parse_number("1626.5") == 1626.5
    with pytest.raises(ValueError):
        parse_number("12x")
    assert mw_to_dbm(1.0) == 0.0
    assert mw_to_dbm(0.5) == pytest.approx(-3.0103, abs=1e-4)
    assert mw_to_dbm(0.0) is None


# ---- the CLI --------------------------------------------------------------------------------


def test_cli_parse_json_has_contract_keys() -> None:
    case = CASES[0]
    res = run_cli("parse", str(case.path), "--format", "json")
    assert res.code == 0, res.err
    doc = res.json()
    assert {"kind", "records", "warnings"} <= set(doc)
    assert doc["kind"] == case.kind
    assert all("type" in r and "line" in r for r in doc["records"])


def test_cli_parse_table_and_kind_option() -> None:
    case = CASES[-1]
    res = run_cli("parse", str(case.path), "--kind", case.kind)
    assert res.code == 0, res.err
    assert case.kind in res.out


def test_cli_list_kinds() -> None:
    res = run_cli("parse", "--list-kinds", "--format", "json")
    assert res.code == 0
    assert {k["kind"] for k in res.json()} >= CONTRACT_KINDS


@pytest.mark.parametrize(
    ("content", "args", "needle"),
    [
        (b"\x00\x01\x02binary\xff\xfe" * 50, (), "binary"),
        (b"", (), "empty"),
        (b"hello world\nnothing to see\n", (), "cannot tell"),
        (b"NIC statistics:\n     rx_bytes: 1\n", ("--kind", "no-such-kind"), "unknown kind"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(
    tmp_path: Path, content: bytes, args: tuple[str, ...], needle: str
) -> None:
    path = tmp_path / "capture.txt"
    path.write_bytes(content)
    res = run_cli("parse", str(path), *args)
    assert res.code == 2
    assert res.out == ""
    lines = res.err.strip().splitlines()
    assert len(lines) == 1, res.err
    assert needle in lines[0]


def test_cli_missing_file_exits_2() -> None:
    res = run_cli("parse", "/nonexistent/capture.txt")
    assert res.code == 2
    assert len(res.err.strip().splitlines()) == 1
