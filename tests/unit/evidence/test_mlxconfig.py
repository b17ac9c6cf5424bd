"""mlxconfig / mstconfig parser and its verdicts, against real captures."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind
from aifabric.evidence.mlxconfig import (
    MftMessage,
    NvConfigDevice,
    NvConfigParam,
    nv_value,
    parse_mlxconfig,
)
from tests.unit.evidence.fixtures import (
    Case,
    all_cases,
    assert_garbage_line_is_one_warning,
    case,
    load,
)

CASES = [c for c in all_cases() if c.kind == "mlxconfig"]


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_fixture_detects_and_parses_without_warnings(c: Case) -> None:
    assert detect_kind(c.text()) == "mlxconfig"
    res = c.parse()
    assert res.of_type(NvConfigParam)
    assert len(res.warnings) == c.meta.get("warnings", 0), [str(w) for w in res.warnings]


def test_at_least_five_real_fixtures() -> None:
    assert len(CASES) >= 5


def _params(name: str) -> dict[str, NvConfigParam]:
    return {p.name: p for p in load("mlxconfig", name).of_type(NvConfigParam)}


def test_set_output_columns_device_and_reboot_message() -> None:
    res = load("mlxconfig", "mstflint-551-set-sriov")
    (dev,) = res.of_type(NvConfigDevice)
    assert (dev.index, dev.device_type, dev.part, dev.device, dev.line) == (
        1, "ConnectX5", "MCX512A-ACA_Ax_Bx", "5e:00.0", 3,
    )  # fmt: skip
    assert dev.description is not None and dev.description.startswith("ConnectX-5 EN")
    p = {r.name: r for r in res.of_type(NvConfigParam)}
    assert list(p) == ["SRIOV_EN", "NUM_OF_VFS"]
    assert (p["SRIOV_EN"].next_boot, p["SRIOV_EN"].new, p["SRIOV_EN"].line) == (
        "True(1)", "True(1)", 12,
    )  # fmt: skip
    assert p["NUM_OF_VFS"].columns == ["Next Boot", "New"] and p["NUM_OF_VFS"].new == "8"
    assert not p["NUM_OF_VFS"].pending  # no Current column: nothing to compare
    (msg,) = res.of_type(MftMessage)
    assert (msg.level, msg.line) == ("info", 17)
    assert msg.text == "Please reboot machine to load new configurations."


def test_extended_query_inside_glog_lines() -> None:
    res = load("mlxconfig", "sriov-operator-48-extended-query-glog")
    (dev,) = res.of_type(NvConfigDevice)
    assert dev.device == "0000:02:00.1" and dev.part == "MCX556A-ECA_Ax"
    p = {r.name: r for r in res.of_type(NvConfigParam)}
    assert p["MEMIC_SIZE_LIMIT"].default == p["MEMIC_SIZE_LIMIT"].current == "_256KB(1)"
    assert p["HOST_CHAINING_MODE"].next_boot == "DISABLED(0)"
    assert p["HOST_CHAINING_MODE"].device == "0000:02:00.1"
    assert p["HOST_CHAINING_MODE"].columns == ["Default", "Current", "Next Boot"]


def test_headerless_rows_take_their_columns_from_the_value_count() -> None:
    one = _params("sriov-device-plugin-601-rows-only")
    assert len(one) == 18 and one["ATS_ENABLED"].next_boot == "False(0)"
    assert one["EXP_ROM_UEFI_x86_ENABLE"].next_boot == "True(1)"  # a lower-case x in a name
    three = _params("mstflint-830-extended-rows")
    assert three["NUM_OF_VL_P1"].default == three["NUM_OF_VL_P1"].current == "_4_VLs(3)"
    # two values without a header: Current/Next Boot or Next Boot/New cannot be told apart
    (ip_ver,) = [
        r for r in load("mlxconfig", "maas-2-set-boot-options").of_type(NvConfigParam)
        if r.name == "IP_VER"
    ]  # fmt: skip
    assert ip_ver.values == ["IPv4(0)", "IPv4_IPv6(2)"] and ip_ver.columns == []
    assert ip_ver.next_boot is None and not ip_ver.pending


def test_collapsed_arrays_and_numbers() -> None:
    p = _params("sriov-operator-358-extended-arrays")
    assert p["HOST_CHAINING_DESCRIPTORS"].current == "Array[0..7]"
    assert nv_value(p["HOST_CHAINING_DESCRIPTORS"].current) is None
    assert nv_value(p["ROCE_NEXT_PROTOCOL"].next_boot) == 254


def test_elided_plain_query_with_prompt() -> None:
    res = load("mlxconfig", "blog-connectx4-query-elided")
    p = {r.name: r for r in res.of_type(NvConfigParam)}
    assert [(r.name, r.next_boot) for r in p.values()] == [
        ("LINK_TYPE_P1", "ETH(2)"), ("SRIOV_EN", "True(1)"), ("NUM_OF_VFS", "8"),
    ]  # fmt: skip
    assert p["LINK_TYPE_P1"].device == "/dev/mst/mt4115_pciconf0"


@pytest.mark.parametrize(
    ("raw", "value"),
    [("ETH(2)", 2), ("True(1)", 1), ("_256KB(1)", 1), ("255", 255), ("0xff", 255),
     ("0x08", 8), ("N/A", None), ("Array[0..7]", None), (None, None), ("IPv4_IPv6(2)", 2)],
)  # fmt: skip
def test_nv_value(raw: str | None, value: int | None) -> None:
    assert nv_value(raw) == value


@pytest.mark.parametrize(
    ("name", "after"),
    [("mstflint-551-set-sriov", 12), ("sriov-operator-358-extended-arrays", 5)],
)
def test_garbage_line_gives_one_warning_and_changes_nothing_else(name: str, after: int) -> None:
    assert_garbage_line_is_one_warning("mlxconfig", name, after)


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_never_raises(text: str) -> None:
    parse_mlxconfig(text)


@settings(max_examples=100, deadline=None)
@given(
    st.integers(min_value=0, max_value=2**32 - 1),
    st.from_regex(r"[A-Z][A-Z_]{0,12}", fullmatch=True),
)
def test_nv_value_reads_every_printed_form(n: int, enum: str) -> None:
    assert nv_value(str(n)) == n
    assert nv_value(hex(n)) == n
    assert nv_value(f"{enum}({n})") == n


# -- verdicts --------------------------------------------------------------------------------


def _findings(tmp_path: Path, text: str) -> list[tuple[str, str, str]]:
    from aifabric.checks.diagnose.engine import diagnose, load_evidence  # noqa: PLC0415

    path = tmp_path / "mlxconfig.txt"
    path.write_text(text, encoding="utf-8")
    return [
        (f.check, f.severity, f.message) for f in diagnose(load_evidence([path])).findings
    ]


def _extended(rows: str) -> str:
    """A real extended-query header (sriov-network-operator#48) over the rows under test."""
    text = case("mlxconfig", "sriov-operator-48-extended-query-glog").text()
    top = text.split("         MEMIC_BAR_SIZE")[0]
    return top + rows


def test_real_captures_are_healthy(tmp_path: Path) -> None:
    for c in CASES:
        got = [f for f in _findings(tmp_path, c.text()) if f[1] in ("error", "warning")]
        assert got == [], (c.id, got)


def test_pending_change_is_a_warning(tmp_path: Path) -> None:
    # the same row layout as the capture, with Current and Next Boot differing as a 'set'
    # followed by no reset leaves them
    text = _extended(
        "*        LINK_TYPE_P1                        ETH(2)          IB(1)           ETH(2)\n"
    )
    got = _findings(tmp_path, text)
    pending = [f for f in got if f[0] == "diagnose.nic-config-pending"]
    assert pending and pending[0][1] == "warning"
    assert "IB(1) now but ETH(2) after the next reset" in pending[0][2]
    assert "0000:02:00.1" in pending[0][2]
    # the value in effect is Current: the port runs InfiniBand now
    assert any(f[0] == "diagnose.nic-port-infiniband" for f in got)


def test_roce_cc_mask_zero_is_a_qos_warning(tmp_path: Path) -> None:
    text = _extended(
        "         ROCE_CC_PRIO_MASK_P1                255             0               0\n"
        "         ROCE_CC_PRIO_MASK_P2                255             255             255\n"
    )
    got = [f for f in _findings(tmp_path, text) if f[0] == "diagnose.roce-cc-disabled"]
    assert len(got) == 1 and got[0][1] == "warning" and "port 1" in got[0][2]


def test_ats_enabled_is_info_only(tmp_path: Path) -> None:
    text = _extended(
        "*        ATS_ENABLED                         False(0)        True(1)         True(1)\n"
    )
    got = {f[0]: f[1] for f in _findings(tmp_path, text)}
    assert got.get("diagnose.nic-ats-enabled") == "info"
    assert "diagnose.nic-config-pending" not in got  # Current equals Next Boot


def test_mft_error_line_is_never_silent(tmp_path: Path) -> None:
    # the prefix every MFT tool prints errors with (mstflint: printf("-E- %s\n", ...))
    # (no error word in the text: the prefix alone makes it error-looking; a message no entry
    # takes, from mstflint's sources: "-E- Unsupported device" has an entry now)
    text = "root@h:~# mstflint -d 3b:00.0 q\n-E- zipped size not as expected\n"
    got = _findings(tmp_path, text)
    want = (
        "diagnose.unrecognised-line", "warning", "not recognised: -E- zipped size not as expected"
    )
    assert want in got
