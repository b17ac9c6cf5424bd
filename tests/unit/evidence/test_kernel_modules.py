"""proc-modules: /proc/modules and lsmod against real captures."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind, detect_scores, parse_text
from aifabric.evidence.kernel_modules import KernelModule, parse_kernel_modules
from tests.unit.evidence.fixtures import (
    Case,
    all_cases,
    assert_garbage_line_is_one_warning,
    draw_garbage_insertion,
    load,
)

KIND = "proc-modules"
CASES = [c for c in all_cases() if c.kind == KIND]
LORE = "lore-linux-scsi-2021-mlx5-ib-mail-wrapped"
GPUD = "gpud-pr39-lsmod-grep-peermem"


def _by_name(name: str) -> dict[str, KernelModule]:
    return {r.name: r for r in load(KIND, name).of_type(KernelModule)}


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_fixture_detects_and_warns_as_documented(c: Case) -> None:
    assert detect_kind(c.text()) == KIND
    res = c.parse()
    assert res.of_type(KernelModule)
    assert len(res.warnings) == c.meta.get("warnings", 0), [str(w) for w in res.warnings]


def test_at_least_two_real_fixtures() -> None:
    assert len([c for c in CASES if c.meta.get("origin") == "captured"]) >= 2


def test_proc_modules_mlx5_host() -> None:
    res = load(KIND, LORE)
    mods = _by_name(LORE)
    assert len(mods) == 71 and len(res.records) == 71  # 73 rows, two of them wrapped
    ib = mods["ib_core"]
    assert (ib.size, ib.refcount, ib.used_by, ib.state, ib.taint, ib.line) == (
        413696,
        2,
        ("mlx5_ib", "ib_uverbs"),
        "Live",
        None,
        44,
    )
    assert mods["mlx5_ib"].used_by == () and mods["mlx5_ib"].refcount == 0
    assert mods["mlx5_core"].used_by == ("mlx5_ib",)
    assert "nvidia_peermem" not in mods and "nv_peer_mem" not in mods
    # the mail-wrapped rows keep their users and span the address line
    wrapped = mods["ip6_tables"]
    assert wrapped.used_by == ("ip6table_mangle", "ip6table_filter", "ip6table_raw")
    assert (wrapped.line, wrapped.end_line) == (14, 15)
    assert mods["i2c_core"].used_by == ("mgag200", "drm_kms_helper", "drm", "i2c_algo_bit")
    assert mods["i2c_core"].end_line == mods["i2c_core"].line + 1


def test_lsmod_grep_peermem_registered_with_ib_core() -> None:
    mods = _by_name(GPUD)
    peer = mods["nvidia_peermem"]
    assert (peer.size, peer.refcount, peer.used_by, peer.state, peer.taint) == (
        16384,
        0,
        (),
        None,
        None,
    )
    assert "nvidia_peermem" in mods["ib_core"].used_by and mods["ib_core"].refcount == 9
    assert len(mods["ib_core"].used_by) == 9
    assert mods["nvidia"].refcount == 550 and mods["nvidia"].size == 56717312


def test_taint_state_and_header() -> None:
    text = (
        "nvidia_peermem 16384 0 - Live 0x0000000000000000 (OE)\n"
        "nvidia 56717312 2 nvidia_uvm,nvidia_peermem, Live 0xffffffffc0a00000 (POE)\n"
        "mlx5_ib 421888 0 - Loading 0x0000000000000000 (+)\n"
        "foo 4096 0 [permanent], Unloading 0x0000000000000000 (O-)\n"
        "bar 8192 - - Live 0x0000000000000000\n"
    )
    a, b, c, d, e = parse_kernel_modules(text).of_type(KernelModule)
    assert (a.taint, a.state, a.used_by) == ("OE", "Live", ())
    assert (b.taint, b.used_by) == ("POE", ("nvidia_uvm", "nvidia_peermem"))
    assert (c.state, c.taint) == ("Loading", "+")
    assert (d.state, d.taint, d.used_by) == ("Unloading", "O-", ("[permanent]",))
    assert e.refcount is None  # a kernel without CONFIG_MODULE_UNLOAD prints "- -"
    lsmod = "Module                  Size  Used by\nib_core               442368  1 mlx5_ib\n"
    assert detect_kind(lsmod) == KIND
    (row,) = parse_kernel_modules(lsmod).of_type(KernelModule)
    assert (row.name, row.size, row.refcount, row.used_by, row.line) == (
        "ib_core",
        442368,
        1,
        ("mlx5_ib",),
        2,
    )


def test_cut_lines_are_warnings() -> None:
    text = (
        "$ cat /proc/modules\n"
        "ib_core 413696 2 mlx5_ib,ib_uverbs, Live\n"  # cut before the address, nothing follows
        "mlx5_ib 389120 0 - Live 0x0000000000000000\n"
        "ib_uverbs 167936 1 mlx5_ib Live 0x0000000000000000\n"  # users without the final comma
        "mlx5_core 12984\n"
    )
    res = parse_kernel_modules(text)
    assert [r.name for r in res.of_type(KernelModule)] == ["ib_core", "mlx5_ib"]
    assert [w.line for w in res.warnings] == [2, 4, 5]


def test_detection_does_not_fire_on_numbers_or_other_text() -> None:
    assert not [k for _, k in detect_scores("a 1 2\nb 3 4\n") if k == KIND]
    assert not [k for _, k in detect_scores("hello world\n") if k == KIND]


@pytest.mark.parametrize(("name", "after"), [(LORE, 14), (LORE, 30), (GPUD, 1)])
def test_garbage_line_gives_one_warning_and_changes_nothing_else(name: str, after: int) -> None:
    assert_garbage_line_is_one_warning(KIND, name, after)


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_never_raises(text: str) -> None:
    parse_kernel_modules(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_inserted_garbage_line_gives_exactly_one_warning(data: st.DataObject) -> None:
    draw_garbage_insertion(data, CASES, lambda kind: lambda t: parse_text(t, kind))


@settings(max_examples=80, deadline=None)
@given(
    st.from_regex(r"[a-z][a-z0-9_]{0,20}", fullmatch=True),
    st.integers(0, 10**9),
    st.integers(0, 10**4),
    st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True), max_size=5),
    st.sampled_from(["", " (OE)", " (POE)", " (+)"]),
)
def test_proc_row_round_trip(name: str, size: int, refs: int, users: list[str], taint: str) -> None:
    used = "".join(f"{u}," for u in users) or "-"
    line = f"{name} {size} {refs} {used} Live 0x0000000000000000{taint}\n"
    (rec,) = parse_kernel_modules(line).of_type(KernelModule)
    assert (rec.name, rec.size, rec.refcount, rec.used_by) == (name, size, refs, tuple(users))
    assert rec.taint == (taint.strip(" ()") or None)


def test_two_lsmod_rows_and_one_other_line_are_lsmod() -> None:
    # lsmod | grep -E "nvidia_peermem|gdrdrv" || ...; dmesg | grep ... in one pod log (EKS notes)
    text = ("gdrdrv                 32768  2\n"
            "nvidia              14422016  270 nvidia_uvm,gdrdrv,nvidia_modeset\n"
            "efa: Acquired peer memory using P2P\n")  # fmt: skip
    assert detect_kind(text) == "proc-modules"
    other = detect_scores("gdrdrv                 32768  2\nsome other line\nand another\n")
    assert "proc-modules" not in [kind for _, kind in other]
