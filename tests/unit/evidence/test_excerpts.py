"""Excerpts of real captures: a window from the middle of a tool's output (its naming or header
line cut), the rows of a table without their header, ``| grep`` output. Each case cuts a real
parser fixture (its ``source:`` is in the fixture's folder) and checks that what the excerpt
still shows is read, with the values it shows, and that the missing name is said to be unknown.
benchmarks/excerpts.py measures the same over every fixture and development capture."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.evidence.base import UNNAMED, decode_capture
from aifabric.evidence.paste import parse_paste

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "evidence"


def _lines(kind: str, case: str) -> list[str]:
    path = next((FIXTURES / kind / case).glob("input.*"))
    return decode_capture(path.read_bytes(), str(path)).splitlines()


def _records(lines: list[str], kind: str) -> list[Any]:
    text = decode_capture(("\n".join(lines) + "\n").encode())
    return [r for p in parse_paste(text) if p.kind == kind and p.result for r in p.result.records]


def _middle(lines: list[str]) -> list[str]:
    n = len(lines)
    return lines[n // 4 : n - n // 4]


def test_ethtool_link_block_without_settings_line() -> None:
    lines = _lines("ethtool-info", "aqc111-1g-link-prompt")
    cut = _middle(lines)
    assert not any("Settings for" in x for x in cut)
    (link,) = _records(cut, "ethtool-info")
    assert (link.interface, link.speed_mbps, link.duplex, link.port) == (
        UNNAMED,
        1000,
        "Full",
        "MII",
    )
    assert link.advertised_modes == ["100baseT/Full", "1000baseT/Full"]


def test_ethtool_grep_speed_duplex_link() -> None:
    lines = _lines("ethtool-info", "aqc111-1g-link-prompt")
    grep = [x for x in lines if any(k in x for k in ("Speed:", "Duplex:", "Link detected:"))]
    (link,) = _records(grep, "ethtool-info")
    assert (link.speed_mbps, link.duplex, link.link_detected) == (1000, "Full", True)


def test_ethtool_driver_without_driver_line() -> None:
    lines = _lines("ethtool-info", "ethq-mlx5-connectx4lx-driver")
    cut = [x for x in lines if not x.startswith("driver:")]
    (drv,) = _records(cut, "ethtool-info")
    assert (drv.driver, drv.firmware, drv.bus_info) == (None, "14.23.1020", "0000:af:00.0")


def test_ibv_devinfo_window_without_hca_id() -> None:
    cut = _middle(_lines("ibv-devinfo", "deepep-38-h100-roce-cx7"))
    assert not any("hca_id" in x for x in cut)
    recs = _records(cut, "ibv-devinfo")
    dev, port = recs[0], recs[1]
    assert (dev.hca_id, dev.vendor_part_id, dev.board_id) == (UNNAMED, 4129, "MT_0000000838")
    assert (port.hca_id, port.port, port.state, port.active_mtu_bytes) == (
        UNNAMED, 1, "PORT_ACTIVE", 4096
    )  # fmt: skip


def test_ibv_devinfo_port_lines_only() -> None:
    lines = _lines("ibv-devinfo", "deepep-38-h100-roce-cx7")
    grep = [x for x in lines if any(k in x for k in ("state:", "active_mtu:", "link_layer:"))]
    recs = _records(grep, "ibv-devinfo")
    ports = [r for r in recs if type(r).__name__ == "IbvPort"]
    assert ports and ports[0].state == "PORT_ACTIVE" and ports[0].active_mtu_bytes == 4096


def test_ibstat_port_block_without_ca_line() -> None:
    cut = _middle(_lines("ibstat", "gpud-482-cx7-polling"))
    assert not any("CA '" in x for x in cut)
    ports = [r for r in _records(cut, "ibstat") if type(r).__name__ == "IbstatPort"]
    assert [(p.port, p.state, p.physical_state, p.rate_gbps) for p in ports] == [
        (1, "Down", "Polling", 10.0)
    ]


def test_show_gids_rows_without_header() -> None:
    cut = _middle(_lines("show-gids", "nccl-1538-k8s-pod-gid7"))
    assert not any("DEV" in x for x in cut)
    rows = _records(cut, "show-gids")
    assert len(rows) == len(cut)
    v2 = [r for r in rows if r.roce_version == 2 and r.ipv4]
    assert (v2[0].device, v2[0].index, v2[0].ipv4, v2[0].netdev) == (
        "mlx5_0", 7, "10.156.129.132", "net1"
    )  # fmt: skip


def test_lspci_window_of_express_capability() -> None:
    cut = _middle(_lines("lspci", "asus-esc8000a-cx7-gen5-x16"))
    assert not any("LnkCap:" in x or "LnkSta:" in x for x in cut)
    (dev,) = _records(cut, "lspci")
    assert (dev.bdf, dev.lnkcap2_max_speed_gts, dev.target_link_speed_gts) == (None, 32.0, 32.0)


def test_ethtool_module_without_identifier() -> None:
    cut = _middle(_lines("ethtool-module", "jc-sfp-10g-lr-no-rx-light"))
    assert not any("Identifier" in x for x in cut)
    (mod,) = _records(cut, "ethtool-module")
    assert (mod.vendor_name, mod.vendor_pn) == ("EDGE", "SFP-10/25GLR-31")


def test_nccl_tests_rows_without_header() -> None:
    lines = _lines("nccl-tests", "issue214-sendrecv-inplace-wrong-na")
    rows = [x for x in lines if x.strip()[:1].isdigit() and " float " in x]
    assert len(rows) >= 2
    recs = _records(rows, "nccl-tests")
    results = [r for r in recs if type(r).__name__ == "NcclTestsRow"]
    assert len(results) == len(rows)
    last = rows[-1].split()
    assert results[-1].size_bytes == int(last[0])


KINDS = ("ethtool-info", "ibv-devinfo", "ibstat", "show-gids", "lspci", "ethtool-module")


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(KINDS),
    start=st.floats(min_value=0, max_value=1),
    length=st.floats(min_value=0, max_value=1),
)
def test_any_window_parses_without_raising(kind: str, start: float, length: float) -> None:
    cases = sorted(p.name for p in (FIXTURES / kind).iterdir() if p.is_dir())
    lines = _lines(kind, cases[int(start * 1000) % len(cases)])
    a = int(start * len(lines))
    b = min(len(lines), a + 1 + int(length * len(lines)))
    if not any(x.strip() for x in lines[a:b]):
        return
    n = b - a
    for part in parse_paste("\n".join(lines[a:b]) + "\n"):
        if part.result is None:
            continue
        json.dumps(part.result.to_json(), allow_nan=False)
        for rec in part.result.records:  # every record points into the window it came from
            assert 1 <= rec.line <= n, (kind, a, b, rec)


@pytest.mark.parametrize(
    ("kind", "case"),
    [("ethtool-info", "aqc111-1g-link-prompt"), ("ibv-devinfo", "deepep-38-h100-roce-cx7")],
)
def test_excerpt_name_unknown_is_warned(kind: str, case: str) -> None:
    """Where a record's name was cut, the parse says so (a warning), never a silent guess."""
    cut = _middle(_lines(kind, case))
    text = decode_capture(("\n".join(cut) + "\n").encode())
    parts = [p for p in parse_paste(text) if p.kind == kind and p.result]
    assert any("unknown" in w.message for p in parts for w in p.result.warnings)


def test_rdma_counter_loop_without_its_directory_line() -> None:
    # `for f in *; do echo "=== $f ==="; cat $f; done` in a port's counters directory, the lines
    # naming the directory cut off: the counters are read, device and port unknown
    lines = _lines("rdma-hw-counters", "gpud-943-loop-file-headers")
    start = next(i for i, x in enumerate(lines) if x.startswith("=== ./") and i > 0)
    cut = lines[start:]
    assert not any("/infiniband/" in x for x in cut)
    want = {}
    for i, x in enumerate(cut[:-1]):
        if x.startswith("=== ./") and cut[i + 1].strip().isdigit():
            want[x[6:-4]] = int(cut[i + 1])
    recs = _records(cut, "rdma-hw-counters")
    got = {k: v for r in recs for k, v in r.counters.items()}
    assert got == want and len(got) >= 20
    assert {r.device for r in recs} == {None}


def test_a_mail_quoted_export_script_is_one_quoted_block() -> None:
    # every line "> export NCCL_..." (a reply quoting the script): a quote, not "> " prompts
    lines = _lines("nccl-env", "megengine-prepare")
    quoted = [f"> {x}" for x in lines]
    recs = _records(quoted, "nccl-env")
    names = {getattr(r, "name", None) for r in recs}
    assert {"NCCL_IB_GID_INDEX", "NCCL_IB_TC"} <= names
