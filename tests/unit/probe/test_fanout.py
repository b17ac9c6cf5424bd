"""fan_out with a fake connect (no network): concurrency bound, per-host timeout, retries only
on connection errors, order of rows, progress calls; parse_targets forms and refusals."""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aifabric.probe.fanout import (
    ConnectError,
    Target,
    TargetError,
    fan_out,
    parse_target,
    parse_targets,
)
from aifabric.probe.runner import CmdResult, Runner
from aifabric.probe.ssh import argv_to_command, ssh_connector


@dataclass
class FakeRunner:
    target: str
    delay: float
    rc: int = 0

    async def run(self, argv: Sequence[str], *, timeout: float) -> CmdResult:
        await asyncio.sleep(self.delay)
        return CmdResult(tuple(argv), self.rc, f"{self.target}\n", "", self.delay)


@dataclass
class FakeNet:
    """Hosts named ``ok-*`` answer after ``delay``; ``refused-*`` refuse; ``flaky-*`` refuse
    ``flaky`` times then answer; ``hang-*`` never answer; ``badkey-*`` fail for good;
    ``rc-*`` answer with exit 2. Tracks connections in flight."""

    delay: float = 0.01
    flaky: int = 1
    in_flight: int = 0
    max_in_flight: int = 0
    connects: dict[str, int] = field(default_factory=dict)

    def connect(self, host: str) -> AbstractAsyncContextManager[Runner]:
        @asynccontextmanager
        async def cm() -> AsyncIterator[Runner]:
            n = self.connects[host] = self.connects.get(host, 0) + 1
            if host.startswith("refused"):
                raise ConnectionRefusedError(111, "Connection refused")
            if host.startswith("flaky") and n <= self.flaky:
                raise ConnectionRefusedError(111, "Connection refused")
            if host.startswith("badkey"):
                raise ConnectError("host key not trusted", retryable=False)
            if host.startswith("hang"):
                await asyncio.sleep(3600)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                yield FakeRunner(host, self.delay, rc=2 if host.startswith("rc") else 0)
            finally:
                self.in_flight -= 1

        return cm()


async def probe(r: Runner) -> CmdResult:
    return await r.run(["uname", "-r"], timeout=5)


@pytest.mark.parametrize("concurrency", [1, 3, 8])
def test_concurrency_bound_and_order(concurrency: int) -> None:
    net = FakeNet(delay=0.01)
    targets = [f"ok-{i}" for i in range(20)]
    rows = asyncio.run(fan_out(targets, probe, connect=net.connect, concurrency=concurrency))
    assert net.max_in_flight == concurrency
    assert [r.host for r in rows] == targets
    assert all(r.ok and r.value is not None and r.value.stdout == f"{r.host}\n" for r in rows)


def test_order_kept_when_later_hosts_finish_first() -> None:
    @asynccontextmanager
    async def connect(host: str) -> AsyncIterator[Runner]:
        yield FakeRunner(host, delay=0.05 if host == "slow" else 0.0)

    rows = asyncio.run(fan_out(["slow", "a", "b", "slow"], probe, connect=connect))
    assert [r.host for r in rows] == ["slow", "a", "b", "slow"]


def test_timeout_is_a_row() -> None:
    net = FakeNet()
    rows = asyncio.run(
        fan_out(["ok-1", "hang-1", "ok-2"], probe, connect=net.connect, timeout_s=0.2)
    )
    assert [r.ok for r in rows] == [True, False, True]
    assert rows[1].error == "timeout after 0.2 s" and rows[1].value is None
    assert 0.15 < rows[1].seconds < 1.0


def test_retries_on_connection_errors_only() -> None:
    net = FakeNet(flaky=2)
    rows = asyncio.run(
        fan_out(
            ["refused-1", "flaky-1", "badkey-1", "rc-1"],
            probe,
            connect=net.connect,
            retries=2,
            retry_delay_s=0.001,
        )
    )
    refused, flaky, badkey, rc = rows
    assert not refused.ok and refused.error == "connection refused" and refused.attempts == 3
    assert flaky.ok and flaky.attempts == 3
    assert not badkey.ok and badkey.error == "host key not trusted" and badkey.attempts == 1
    # a command's non-zero exit is a value, never a retry
    assert rc.ok and rc.attempts == 1 and rc.value is not None and rc.value.rc == 2
    assert net.connects == {"refused-1": 3, "flaky-1": 3, "badkey-1": 1, "rc-1": 1}


def test_retries_zero_and_default() -> None:
    net = FakeNet()
    rows = asyncio.run(fan_out(["refused-a"], probe, connect=net.connect, retries=0))
    assert rows[0].attempts == 1
    rows = asyncio.run(fan_out(["refused-b"], probe, connect=net.connect, retry_delay_s=0))
    assert rows[0].attempts == 2


def test_work_exception_not_retried() -> None:
    net = FakeNet()

    async def broken(r: Runner) -> int:
        raise KeyError("missing")

    rows = asyncio.run(fan_out(["ok-1"], broken, connect=net.connect))
    assert not rows[0].ok and rows[0].attempts == 1
    assert rows[0].error == "probe failed: KeyError: 'missing'"


def test_progress_called_once_per_host() -> None:
    net = FakeNet()
    calls: list[tuple[int, int, str, bool]] = []
    targets = ["ok-1", "refused-1", "ok-2"]
    asyncio.run(
        fan_out(targets, probe, connect=net.connect, retries=0, progress=lambda *a: calls.append(a))
    )
    assert [c[0] for c in calls] == [1, 2, 3]
    assert {(c[2], c[3]) for c in calls} == {("ok-1", True), ("refused-1", False), ("ok-2", True)}
    assert all(c[1] == 3 for c in calls)


def test_empty_and_bad_arguments() -> None:
    net = FakeNet()
    assert asyncio.run(fan_out([], probe, connect=net.connect)) == []
    with pytest.raises(ValueError, match="concurrency"):
        asyncio.run(fan_out(["a"], probe, connect=net.connect, concurrency=0))


# -- targets ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("gpu1", Target("gpu1")),
        ("root@gpu1", Target("gpu1", None, "root")),
        ("root@gpu1:2222", Target("gpu1", 2222, "root")),
        ("10.0.0.1:22", Target("10.0.0.1", 22)),
        ("[::1]:2222", Target("::1", 2222)),
        ("admin@[fe80::1]", Target("fe80::1", None, "admin")),
        ("fe80::1", Target("fe80::1")),
    ],
)
def test_parse_target_forms(text: str, want: Target) -> None:
    got = parse_target(text)
    assert got == want
    assert parse_target(got.spec) == got


@pytest.mark.parametrize(
    ("text", "msg"),
    [
        ("a b", "whitespace"),
        ("host\x07", "control character"),
        ("-oProxyCommand=x", "host starts with '-'"),
        ("-x@h", "user name starts with '-'"),
        ("h:0", "port must be 1-65535"),
        ("h:65536", "port must be 1-65535"),
        ("h:ab", "port must be 1-65535"),
        ("[::1", "without ']'"),
        ("@h", "empty user"),
        ("u@", "no host"),
    ],
)
def test_parse_target_refused(text: str, msg: str) -> None:
    with pytest.raises(TargetError, match=msg):
        parse_target(text)


def test_parse_targets_hosts_file() -> None:
    lines = ["# cluster A", "", "  gpu1  ", "root@gpu2:2222  # the odd one", "\t", "gpu1"]
    assert [t.spec for t in parse_targets(lines)] == ["gpu1", "root@gpu2:2222", "gpu1"]
    with pytest.raises(TargetError) as err:
        parse_targets(["gpu1", "# c", "bad host"])
    assert str(err.value) == "line 3: target 'bad host' contains whitespace"
    assert "\n" not in str(err.value)


@given(st.text(max_size=40))
def test_parse_target_total(text: str) -> None:
    """Any text either parses to a target without whitespace/control/leading '-', or is
    refused with a one-line TargetError; nothing else is raised."""
    try:
        t = parse_target(text)
    except TargetError as exc:
        assert "\n" not in str(exc)
        return
    assert t.host and not t.host.startswith("-")
    assert all(ch.isprintable() and not ch.isspace() for ch in t.spec)


@given(
    st.lists(
        st.text(st.characters(blacklist_characters="\x00"), max_size=10), min_size=1, max_size=5
    )
)
def test_argv_to_command_round_trips_through_shlex(argv: list[str]) -> None:
    """POSIX shell word splitting (shlex in POSIX mode) gives the argv back."""
    assert shlex.split(argv_to_command(argv)) == argv


def test_argv_to_command_refusals() -> None:
    with pytest.raises(ValueError, match="NUL"):
        argv_to_command(["a\x00"])
    with pytest.raises(ValueError, match="empty"):
        argv_to_command([])
    assert argv_to_command(["echo", "$(id)", "a b"]) == "echo '$(id)' 'a b'"


def test_ssh_missing_known_hosts_is_a_clear_row(tmp_path: Path) -> None:
    """A known_hosts file that does not exist fails before any network I/O, without retry."""
    connect = ssh_connector(known_hosts=tmp_path / "absent", connect_timeout=1)
    rows = asyncio.run(fan_out(["root@127.0.0.1:1"], probe, connect=connect, retry_delay_s=0))
    assert not rows[0].ok and rows[0].attempts == 1
    assert rows[0].error == f"known_hosts file not found: {tmp_path / 'absent'}"


def test_ssh_bad_target_is_a_row() -> None:
    rows = asyncio.run(fan_out(["-oProxyCommand=x"], probe, connect=ssh_connector()))
    assert not rows[0].ok and rows[0].attempts == 1
    assert rows[0].error == "target '-oProxyCommand=x': host starts with '-'"
