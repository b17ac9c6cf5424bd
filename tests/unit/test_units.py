"""units.py: the forms engineers type (contracts.md), and refusal of ambiguous ones."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aifabric.errors import UnitError
from aifabric.units import (
    format_gbps,
    parse_bytes,
    parse_duration_ns,
    parse_length_m,
    parse_ratio,
    parse_speed_gbps,
)


@pytest.mark.parametrize(
    ("text", "gbps"),
    [
        ("400G", 400.0),
        ("400Gbps", 400.0),
        ("200Gb/s", 200.0),
        ("100GbE", 100.0),
        ("1.6T", 1600.0),
        ("800 Gb/s", 800.0),
        ("25g", 25.0),
        ("100M", 0.1),
    ],
)
def test_speed_forms(text: str, gbps: float) -> None:
    assert parse_speed_gbps(text) == pytest.approx(gbps)


@pytest.mark.parametrize("text", ["400", "400GB/s", "400GBps", "fast", "", "400X", "-400G"])
def test_speed_refuses_ambiguous(text: str) -> None:
    with pytest.raises(UnitError):
        parse_speed_gbps(text)


def test_speed_bare_number_message_suggests_unit() -> None:
    with pytest.raises(UnitError, match="400G"):
        parse_speed_gbps("400")


@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("9000", 9000),
        ("9216B", 9216),
        ("100KB", 102400),
        ("1.5MB", 1572864),
        ("128M", 134217728),
        ("8G", 8 * 2**30),
        ("4KiB", 4096),
        ("1k", 1024),
    ],
)
def test_bytes_forms_are_powers_of_two_like_nccl_tests(text: str, n: int) -> None:
    assert parse_bytes(text) == n


@pytest.mark.parametrize("text", ["8Gb", "1.3B", "12Q", "x"])
def test_bytes_refuses(text: str) -> None:
    with pytest.raises(UnitError):
        parse_bytes(text)


@pytest.mark.parametrize(
    ("text", "ns"),
    [("5us", 5000), ("2ms", 2_000_000), ("100ns", 100), ("1.5s", 1_500_000_000), ("3µs", 3000)],
)
def test_durations(text: str, ns: int) -> None:
    assert parse_duration_ns(text) == ns


def test_duration_needs_unit() -> None:
    with pytest.raises(UnitError):
        parse_duration_ns("5")


@pytest.mark.parametrize(("text", "m"), [("3m", 3.0), ("2km", 2000.0), ("50cm", 0.5)])
def test_lengths(text: str, m: float) -> None:
    assert parse_length_m(text) == pytest.approx(m)


@pytest.mark.parametrize(
    ("text", "r"), [("1:1", 1.0), ("3:1", 3.0), ("1.5:1", 1.5), ("2", 2.0), ("1:2", 0.5)]
)
def test_ratios(text: str, r: float) -> None:
    assert parse_ratio(text) == r


@pytest.mark.parametrize("text", ["0:1", "1:0", "a:b", ""])
def test_ratio_refuses(text: str) -> None:
    with pytest.raises(UnitError):
        parse_ratio(text)


@given(st.integers(min_value=1, max_value=10**6))
def test_speed_roundtrip_any_integer_gbps(n: int) -> None:
    assert parse_speed_gbps(f"{n}G") == n
    assert parse_speed_gbps(f"{n}Gb/s") == n


@given(st.integers(min_value=0, max_value=2**40), st.sampled_from(["", "K", "M", "G"]))
def test_bytes_scale(n: int, unit: str) -> None:
    scale = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[unit]
    assert parse_bytes(f"{n}{unit}") == n * scale


@given(st.text(max_size=12))
def test_speed_parser_never_crashes(text: str) -> None:
    try:
        value = parse_speed_gbps(text)
    except UnitError:
        return
    assert value > 0


def test_format_gbps() -> None:
    assert format_gbps(400) == "400 Gb/s"
    assert format_gbps(12800) == "12.8 Tb/s"
