"""The remote ``timeout`` wrapper of SshRunner without a network: the argv it sends, the
duration format, exit 124 read as a timeout, and a host without coreutils ``timeout``
remembered so its commands run bare (the real sshd checks are in
tests/integration/probe/test_ssh_fanout.py)."""

from __future__ import annotations

import asyncio
import shlex
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, cast

import pytest

from aifabric.probe.ssh import KILL_AFTER_S, SshRunner, argv_to_command, timed_argv


def test_timed_argv_and_duration() -> None:
    assert KILL_AFTER_S == 2
    assert timed_argv(["sleep", "30"], 1) == ("timeout", "-k", "2", "1", "sleep", "30")
    assert timed_argv(["x"], 7.5)[3] == "7.5"
    assert timed_argv(["x"], 1000)[3] == "1000"  # never 1e+03
    assert timed_argv(["x"], 0)[3] == "0.1"
    assert timed_argv(["x"], 0.0004)[3] == "0.1"
    hostile = ["-n", "a b", "$(id)", "'"]
    cmd = argv_to_command(timed_argv(hostile, 20))
    assert shlex.split(cmd) == ["timeout", "-k", "2", "20", *hostile]


@dataclass
class _Proc:
    rc: int
    stdout: str = ""
    stderr: str = ""
    delay: float = 0.0

    async def wait(self, check: bool, timeout: float) -> SimpleNamespace:
        await asyncio.sleep(self.delay)
        return SimpleNamespace(exit_status=self.rc, stdout=self.stdout, stderr=self.stderr,
                               exit_signal=None)  # fmt: skip

    def close(self) -> None:
        return None


@dataclass
class _Conn:
    """A host whose shell answers from ``answers`` (first word of the command line)."""

    answers: dict[str, _Proc]
    sent: list[str] = field(default_factory=list)

    async def create_process(self, command: str, **_: Any) -> _Proc:
        self.sent.append(command)
        return self.answers[command.split(" ", 1)[0]]


def _runner(conn: _Conn) -> SshRunner:
    return SshRunner("h", cast(Any, conn))


def test_host_without_timeout_runs_bare_from_then_on() -> None:
    conn = _Conn({"timeout": _Proc(127, stderr="bash: line 1: timeout: command not found\n"),
                  "uname": _Proc(0, "6.1.0\n")})  # fmt: skip
    r = _runner(conn)

    async def go() -> list[Any]:
        return [await r.run(["uname", "-r"], timeout=5), await r.run(["uname", "-r"], timeout=5)]

    first, second = asyncio.run(go())
    assert first.ok and first.stdout == "6.1.0\n" and second.ok
    assert conn.sent == ["timeout -k 2 5 uname -r", "uname -r", "uname -r"]
    assert r.wrap is False


@pytest.mark.parametrize(
    ("rc", "stderr", "want_rc", "want_error"),
    [
        (124, "", None, "timed out after 0.1 s"),
        (137, "", None, "timed out after 0.1 s"),
        (127, "timeout: failed to run command 'ibv_devinfo': No such file or directory\n",
         127, "ibv_devinfo: not installed here"),
        (3, "oops\n", 3, None),
    ],
)
def test_wrapped_exit_codes(rc: int, stderr: str, want_rc: int | None,
                            want_error: str | None) -> None:  # fmt: skip
    """Exit codes of the wrapped command as it runs the full 0.1 s: 124/137 are the remote
    ``timeout`` acting, 127 with its 'failed to run command' a missing tool."""
    conn = _Conn({"timeout": _Proc(rc, stderr=stderr, delay=0.1)})
    res = asyncio.run(_runner(conn).run(["ibv_devinfo"], timeout=0.1))
    assert (res.rc, res.error) == (want_rc, want_error)
    assert conn.sent == ["timeout -k 2 0.1 ibv_devinfo"]


def test_quick_124_is_the_commands_own_exit_code() -> None:
    conn = _Conn({"timeout": _Proc(124)})
    res = asyncio.run(_runner(conn).run(["sh", "-c", "exit 124"], timeout=30))
    assert (res.rc, res.error) == (124, None)
