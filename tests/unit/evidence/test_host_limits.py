"""ulimit parser against real captures."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind
from aifabric.evidence.host_limits import ResourceLimit, parse_ulimit
from tests.unit.evidence.fixtures import (
    Case,
    all_cases,
    assert_garbage_line_is_one_warning,
    case,
    load,
)

CASES = [c for c in all_cases() if c.kind == "ulimit"]


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_fixture_detects_and_warns_as_documented(c: Case) -> None:
    assert detect_kind(c.text()) == "ulimit"
    res = c.parse()
    assert res.of_type(ResourceLimit)
    assert len(res.warnings) == c.meta.get("warnings", 0), [str(w) for w in res.warnings]


def test_at_least_three_real_fixtures() -> None:
    assert len(CASES) >= 3


def _by_option(name: str) -> dict[str, ResourceLimit]:
    return {r.option: r for r in load("ulimit", name).of_type(ResourceLimit)}


def test_bash4_layout_memlock_64() -> None:
    limits = _by_option("ucx-issue-8229-bash4-memlock-64")
    assert len(limits) == 16
    ml = limits["l"]
    assert (ml.description, ml.units, ml.value, ml.unlimited, ml.line) == (
        "max locked memory",
        "kbytes",
        64,
        False,
        7,
    )
    assert ml.value_bytes == 65536 and ml.command == "ulimit -a" and ml.scope is None
    assert (limits["n"].value, limits["n"].units) == (1024, None)
    assert limits["u"].value == 1030810
    assert limits["p"].units == "512 bytes" and limits["p"].value_bytes == 8 * 512
    assert limits["q"].value_bytes == 819200
    assert limits["t"].units == "seconds" and limits["t"].value_bytes is None
    assert limits["d"].unlimited and limits["d"].value is None and limits["d"].raw == "unlimited"


def test_bash51_layout() -> None:
    limits = _by_option("vmtouch-94-bash51-memlock-finite")
    assert len(limits) == 17
    assert limits["R"].description == "real-time non-blocking time"
    assert limits["R"].units == "microseconds" and limits["R"].unlimited
    assert limits["l"].value == 5128731 and limits["l"].line == 7
    assert limits["n"].value == 1024 and limits["s"].value == 8192


def test_single_query_then_all() -> None:
    recs = load("ulimit", "tensorflow-11392-unlimited").of_type(ResourceLimit)
    first = recs[0]
    assert (first.option, first.unlimited, first.line, first.description, first.units) == (
        "l",
        True,
        2,
        "max locked memory",
        "kbytes",
    )
    assert first.command == "hsw228$ ulimit -l"
    rest = {r.option: r for r in recs[1:]}
    assert rest["l"].unlimited and rest["l"].command == "hsw228$ ulimit -a"
    assert rest["n"].value == 4096 and rest["u"].value == 4096 and rest["s"].unlimited


def test_bare_query_without_prompt() -> None:
    (ml,) = load("ulimit", "ros2-realtime-12-ulimit-l-65536").of_type(ResourceLimit)
    assert (ml.option, ml.value, ml.value_bytes, ml.line) == ("l", 65536, 65536 * 1024, 2)


def test_scope_and_lone_numbers() -> None:
    # bash prints a bare value for one option; -H/-S select the hard/soft limit.
    res = parse_ulimit("$ ulimit -Hl\nunlimited\n$ ulimit -Sn\n1024\n")
    hard, soft = res.of_type(ResourceLimit)
    assert (hard.option, hard.scope, hard.unlimited) == ("l", "hard", True)
    assert (soft.option, soft.scope, soft.value) == ("n", "soft", 1024)
    lone = parse_ulimit("65536\n")
    assert lone.records == [] and len(lone.warnings) == 1


@pytest.mark.parametrize(
    ("name", "after"),
    [("ucx-issue-8229-bash4-memlock-64", 5), ("vmtouch-94-bash51-memlock-finite", 10)],
)
def test_garbage_line_gives_one_warning_and_changes_nothing_else(name: str, after: int) -> None:
    assert_garbage_line_is_one_warning("ulimit", name, after)


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_never_raises(text: str) -> None:
    parse_ulimit(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["ucx-issue-8229-bash4-memlock-64", "tensorflow-11392-unlimited"]),
    st.integers(min_value=0, max_value=20),
    st.text(alphabet=" 0123456789%$@!*()[]{}<>=+-_.,;:/|~^&'\"?#", max_size=40),
)
def test_inserted_noise_line_is_one_warning_at_most(name: str, where: int, noise: str) -> None:
    c = case("ulimit", name)
    lines = c.text().splitlines()
    lines.insert(min(where, len(lines)), noise)
    res = parse_ulimit("\n".join(lines))
    assert len(res.warnings) - len(c.parse().warnings) <= 1


# /proc/PID/limits as the kernel prints it (fs/proc/base.c, proc_pid_limits(): "%-25s %-20s
# %-20s %-10s" for the header and each row, the lnames[] names and units).
_PROC = (
    f"{'Limit':<25} {'Soft Limit':<20} {'Hard Limit':<20} {'Units':<10}\n"
    f"{'Max cpu time':<25} {'unlimited':<20} {'unlimited':<20} {'seconds':<10}\n"
    f"{'Max open files':<25} {'1024':<20} {'262144':<20} {'files':<10}\n"
    f"{'Max locked memory':<25} {'65536':<20} {'65536':<20} {'bytes':<10}\n"
    f"{'Max realtime timeout':<25} {'unlimited':<20} {'unlimited':<20} {'us':<10}\n"
)


def test_proc_pid_limits_soft_and_hard_in_the_kernels_units() -> None:
    assert detect_kind(_PROC) == "ulimit"
    res = parse_ulimit(_PROC)
    assert not res.warnings
    memlock = [r for r in res.of_type(ResourceLimit) if r.option == "l"]
    assert [(r.scope, r.value, r.value_bytes, r.units) for r in memlock] == [
        ("soft", 65536, 65536, "bytes"), ("hard", 65536, 65536, "bytes"),
    ]  # fmt: skip
    nofile = {r.scope: r.value for r in res.of_type(ResourceLimit) if r.option == "n"}
    assert nofile == {"soft": 1024, "hard": 262144}
    assert all(r.unlimited for r in res.of_type(ResourceLimit) if r.option == "t")


def test_systemd_limit_properties() -> None:
    """``systemctl show slurmd`` (systemd.exec(5)): LimitX= is the hard limit, LimitXSoft= the
    soft one, in bytes for memory; ``infinity`` is unlimited."""
    text = (
        "LimitMEMLOCK=infinity\nLimitMEMLOCKSoft=65536\nLimitNOFILE=524288\n"
        "LimitRTTIME=infinity\n"
    )
    assert detect_kind(text) == "ulimit"
    res = parse_ulimit(text)
    assert not res.warnings
    got = [(r.option, r.scope, r.unlimited, r.value_bytes) for r in res.of_type(ResourceLimit)]
    assert got == [
        ("l", "hard", True, None), ("l", "soft", False, 65536), ("n", "hard", False, None),
    ]  # fmt: skip


def test_memlock_verdict_reads_bytes_as_kbytes(tmp_path: Path) -> None:
    from aifabric.checks.diagnose.engine import diagnose, load_evidence  # noqa: PLC0415

    path = tmp_path / "limits"
    path.write_text(_PROC, encoding="utf-8")
    findings = diagnose(load_evidence([path])).findings
    memlock = [f for f in findings if f.check == "diagnose.memlock-limited"]
    assert memlock and "64 kbytes" in memlock[0].message and memlock[0].severity == "error"
