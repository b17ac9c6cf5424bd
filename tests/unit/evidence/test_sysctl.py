"""sysctl / /proc/sys: a generic key/value record, conservative detection. Expected values were
read by hand from the captures under ``tests/fixtures/evidence/sysctl/`` (a router network
namespace on Debian 12, kernel 6.18)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind, detect_scores, parse_text
from aifabric.evidence.sysctl import SysctlValue, proc_path_to_key
from tests.unit.evidence.fixtures import all_cases, case, draw_garbage_insertion, load

KIND = "sysctl"
CASES = sorted(c.name for c in all_cases() if c.kind == KIND)


def _values(name: str) -> dict[str, str]:
    result = load(KIND, name)
    assert not result.warnings, [str(w) for w in result.warnings]
    return {r.key: r.value for r in result.of_type(SysctlValue)}


@pytest.mark.parametrize("name", CASES)
def test_detected_without_kind(name: str) -> None:
    assert detect_kind(case(KIND, name).text()) == KIND


def test_sysctl_names() -> None:
    assert _values("lab-router-hash-policy-0") == {
        "net.ipv4.fib_multipath_hash_policy": "0", "net.ipv4.fib_multipath_hash_seed": "1",
        "net.ipv4.ip_forward": "1",
    }  # fmt: skip
    assert _values("lab-router-hash-policy-1")["net.ipv4.fib_multipath_hash_policy"] == "1"


def test_sysctl_a_pattern_keeps_tabs_and_empty_values() -> None:
    values = _values("lab-sysctl-a-pattern")
    assert len(values) == 21
    assert values["net.ipv4.ip_local_port_range"] == "32768 60999"
    assert values["net.ipv4.ip_local_reserved_ports"] == ""
    assert values["net.ipv4.tcp_ecn"] == "2"


def test_proc_sys_forms() -> None:
    assert _values("lab-proc-sys-grep") == {
        "net.ipv4.fib_multipath_hash_fields": "7", "net.ipv4.fib_multipath_hash_policy": "1",
        "net.ipv4.fib_multipath_hash_seed": "1", "net.ipv4.fib_multipath_use_neigh": "0",
    }  # fmt: skip
    [rec] = load(KIND, "lab-proc-sys-cat-prompt").of_type(SysctlValue)
    assert (rec.key, rec.value, rec.int_value, rec.line) == (
        "net.ipv4.fib_multipath_hash_policy", "1", 1, 2)  # fmt: skip


def test_proc_path_to_key_swaps_dots_like_procps() -> None:
    key = proc_path_to_key("net/ipv4/conf/eth0.100/rp_filter")
    assert key == "net.ipv4.conf.eth0/100.rp_filter"


def test_detection_does_not_take_other_key_value_text() -> None:
    ini = "[main]\nname = value\ntimeout = 5\nnet.ipv4.ip_forward = 1\n"
    assert all(k != KIND for _, k in detect_scores(ini))
    mixed = "net.ipv4.ip_forward = 1\nsome prose line here\nanother line\n"
    assert (0.0, KIND) not in detect_scores(mixed)
    assert max((s for s, k in detect_scores(mixed) if k == KIND), default=0.0) < 0.6


def test_errors_and_noise() -> None:
    text = "\n".join([
        "sysctl: permission denied on key 'fs.protected_hardlinks'",
        "sysctl: cannot stat /proc/sys/net/ipv4/nope: No such file or directory",
        "vm.swappiness = 60",
    ])  # fmt: skip
    result = parse_text(text, KIND)
    assert not result.warnings  # the missing key is a SysctlMissing record, not noise
    assert [(r.key, r.int_value) for r in result.of_type(SysctlValue)] == [("vm.swappiness", 60)]
    assert parse_text("sysctl: cannot stat /proc/sys/bogus/x: No such file\n", KIND).warnings


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_garbage_line_is_one_warning(data: st.DataObject) -> None:
    cases = [c for c in all_cases() if c.kind == KIND]
    draw_garbage_insertion(data, cases, lambda kind: lambda t: parse_text(t, kind))


_NAME = st.from_regex(r"\A(net|kernel|vm)\.[a-z_]{1,12}(\.[a-z0-9_]{1,8}){0,2}\Z")


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(_NAME, st.integers(-(2**31), 2**31), min_size=1, max_size=10))
def test_round_trip(values: dict[str, int]) -> None:
    text = "\n".join(f"{k} = {v}" for k, v in values.items())
    result = parse_text(text, KIND)
    assert not result.warnings
    assert {r.key: r.int_value for r in result.of_type(SysctlValue)} == values


def test_a_key_the_kernel_lacks_is_a_record() -> None:
    """``sysctl: cannot stat /proc/sys/...`` after a write or read of a key that does not exist
    (IPv6 has no rp_filter) says something about the host: a SysctlMissing record."""
    from aifabric.evidence.sysctl import SysctlMissing  # noqa: PLC0415

    result = load(KIND, "hashbang-131-cannot-stat")
    assert [(r.line, r.key) for r in result.of_type(SysctlMissing)] == [
        (2, "net.ipv6.conf.all.rp_filter")
    ]
    assert not result.of_type(SysctlValue)


def test_a_value_the_kernel_refused_is_a_record() -> None:
    """procps-ng ``sysctl -w`` prints ``sysctl: setting key "KEY": <strerror>`` when the write
    fails (sysctl.c): the kernel refused the value (out of range, read-only in a namespace)."""
    from aifabric.evidence.sysctl import SysctlSetFailed  # noqa: PLC0415

    text = (
        "sysctl -w net.core.somaxconn=-1\n"
        'sysctl: setting key "net.core.somaxconn": Invalid argument\n'
        'sysctl: setting key "net.ipv4.ip_forward": Read-only file system\n'
    )
    assert detect_kind(text) == KIND
    got = parse_text(text, KIND).of_type(SysctlSetFailed)
    assert [(r.line, r.key, r.error) for r in got] == [
        (2, "net.core.somaxconn", "Invalid argument"),
        (3, "net.ipv4.ip_forward", "Read-only file system"),
    ]
