"""df / ls -l /dev/shm parser and the shared-memory verdicts, against real captures."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind, detect_scores
from aifabric.evidence.shm import DfMount, ShmSegment, parse_df_shm, size_bytes
from tests.unit.evidence.fixtures import Case, all_cases, case, load

CASES = [c for c in all_cases() if c.kind == "df-shm"]


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_fixture_detects_and_parses_without_warnings(c: Case) -> None:
    assert detect_kind(c.text()) == "df-shm"
    res = c.parse()
    assert res.records and not res.warnings, [str(w) for w in res.warnings]


def test_df_h_sizes_are_powers_of_1024() -> None:
    (row,) = load("df-shm", "everydream-183-df-h-docker").of_type(DfMount)
    assert (row.filesystem, row.mount, row.use_pct, row.line) == ("overlay", "/", 88, 4)
    assert row.size_bytes == int(1.9 * 1024**4)
    assert row.avail_bytes == 224 * 1024**3


def test_bare_listing_of_nccl_segments() -> None:
    segs = load("df-shm", "llmd-352-ls-zero-byte-nccl").of_type(ShmSegment)
    assert len(segs) == 24
    assert {s.owner_lib for s in segs} == {"nccl"} and {s.size_bytes for s in segs} == {0}
    assert segs[0].name == "nccl-onFp46" and segs[-1].name == "nccl-sb4oyQ"


@pytest.mark.parametrize(
    ("raw", "unit", "si", "want"),
    [("64M", 1, False, 64 << 20), ("0", 1024, False, 0), ("1.3G", 1, False, int(1.3 * 2**30)),
     ("65536", 1024, False, 64 << 20), ("64M", 1, True, 64_000_000), ("x", 1, False, None)],
)  # fmt: skip
def test_size_bytes(raw: str, unit: int, si: bool, want: int | None) -> None:
    assert size_bytes(raw, unit, si) == want


# df -k of a container (coreutils df.c: "1K-blocks" header, numbers in KiB)
_DF_K = (
    "$ df -k /dev/shm\n"
    "Filesystem     1K-blocks  Used Available Use% Mounted on\n"
    "shm                65536 65536         0 100% /dev/shm\n"
)


def test_df_k_blocks_and_a_full_shm_is_an_error(tmp_path: Path) -> None:
    (row,) = parse_df_shm(_DF_K).of_type(DfMount)
    assert row.size_bytes == 64 << 20 and row.use_pct == 100 and row.avail_bytes == 0
    got = _findings(tmp_path, _DF_K)
    assert ("diagnose.shm-full", "error") in got


def test_container_default_shm_is_a_warning(tmp_path: Path) -> None:
    text = (
        "Filesystem      Size  Used Avail Use% Mounted on\n"
        "overlay         453G   62G  368G  15% /\n"
        "shm              64M     0   64M   0% /dev/shm\n"
    )
    got = _findings(tmp_path, text)
    assert ("diagnose.shm-small", "warning") in got
    assert not any(check == "diagnose.shm-full" for check, _ in got)


def test_left_over_segments_give_one_warning_per_listing(tmp_path: Path) -> None:
    got = _findings(tmp_path, case("df-shm", "llmd-352-ls-zero-byte-nccl").text())
    assert got.count(("diagnose.shm-segments-left", "warning")) == 1


def test_long_filesystem_name_continues_on_the_next_line() -> None:
    text = (
        "Filesystem           Size  Used Avail Use% Mounted on\n"
        "/dev/mapper/vg0-very-long-root-volume\n"
        "                      50G   10G   40G  20% /\n"
    )
    (row,) = parse_df_shm(text).of_type(DfMount)
    assert row.filesystem == "/dev/mapper/vg0-very-long-root-volume" and row.end_line == 3


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_never_raises(text: str) -> None:
    parse_df_shm(text)


def _findings(tmp_path: Path, text: str) -> list[tuple[str, str]]:
    from aifabric.checks.diagnose.engine import diagnose, load_evidence  # noqa: PLC0415

    path = tmp_path / "shm.txt"
    path.write_text(text, encoding="utf-8")
    return [(f.check, f.severity) for f in diagnose(load_evidence([path])).findings]


def test_headerless_rows_as_grep_leaves_them(tmp_path: Path) -> None:
    # `df -h | grep shm` (coreutils -h: suffixed sizes) and `df | grep shm` (1K blocks); a
    # decimal comma as a de_DE locale prints it
    text = "$ df -h | grep shm\nshm              64M     0   64M   0% /dev/shm\n"
    assert detect_kind(text) == "df-shm"
    (row,) = parse_df_shm(text).of_type(DfMount)
    assert (row.size_bytes, row.use_pct, row.mount) == (64 << 20, 0, "/dev/shm")
    (k,) = parse_df_shm("shm 65536 65536 0 100% /dev/shm\n").of_type(DfMount)
    assert k.size_bytes == 64 << 20 and k.use_pct == 100
    (c,) = parse_df_shm("tmpfs 7,8G 0 7,8G 0% /dev/shm\n").of_type(DfMount)
    assert c.size_bytes == int(7.8 * 2**30)
    assert ("diagnose.shm-small", "warning") in _findings(tmp_path, text)


def test_busybox_header_with_size_and_available() -> None:
    # BusyBox df -h: "Size" with "Available" (coreutils prints "Avail")
    text = (
        "Filesystem                Size      Used Available Use% Mounted on\n"
        "shm                      64.0M         0     64.0M   0% /dev/shm\n"
    )
    assert detect_kind(text) == "df-shm"
    (row,) = parse_df_shm(text).of_type(DfMount)
    assert row.size_bytes == 64 << 20 and row.mount == "/dev/shm"



def test_a_headerless_window_of_df_with_container_shm_mounts() -> None:
    c = case("df-shm", "moby-28404-container-shm-window")
    assert detect_kind(c.text()) == "df-shm"
    rows = c.parse().of_type(DfMount)
    assert [r.filesystem for r in rows] == ["overlay", "shm"] * 3
    assert rows[1].size_bytes == 64 * 1024**2 and rows[3].used_bytes == 4 * 1024
    assert all(r.mount.endswith("/shm") for r in rows[1::2])


def test_two_df_rows_and_prose_are_not_a_df_table() -> None:
    two = "".join(case("df-shm", "moby-28404-container-shm-window").text().splitlines(True)[:2])
    text = two + "and then the job died with 50% /tmp usage\n"
    assert "df-shm" not in [k for _, k in detect_scores(text)]
