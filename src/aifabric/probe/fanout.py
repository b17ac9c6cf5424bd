"""Run one probe on many hosts at once: bounded concurrency, a per-host deadline, retries on
connection errors only, and every host's fate as a row (a dead host is data, not an exception).

:func:`fan_out` is transport-agnostic: ``connect(target)`` returns an async context manager that
yields a :class:`~aifabric.probe.runner.Runner` (``aifabric.probe.ssh.ssh_connector`` for SSH,
a fake in tests). Errors raised while *connecting* are retried (``retries`` more attempts);
errors from ``work`` (a bug, or a command that failed and was turned into an exception) are
not: a command's non-zero exit is a :class:`~aifabric.probe.runner.CmdResult`, never a retry.
A connection error that will not change on retry (:class:`ConnectError` with ``retryable=False``:
host key not trusted, authentication refused) is not retried either.

:func:`parse_targets` reads ``[user@]host[:port]`` (IPv6 in brackets: ``[::1]:2222``) from
command-line arguments or a hosts file (``#`` comments, blank lines); a name with whitespace,
a control character or a leading ``-`` (it could be read as an option by a tool) is refused
with one error line naming the line number.
"""

from __future__ import annotations

import asyncio
import errno
import socket
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgress

from aifabric.probe.runner import Runner

__all__ = [
    "ConnectError",
    "HostOutcome",
    "Progress",
    "Target",
    "TargetError",
    "describe_error",
    "fan_out",
    "parse_target",
    "parse_targets",
    "read_hosts_file",
    "rich_progress",
]

T = TypeVar("T")

Progress = Callable[[int, int, str, bool], None]
"""``progress(done, total, host, ok)``: called once per host when its row is final."""


class ConnectError(Exception):
    """A connection failure with a short, human message; ``retryable`` False for failures a
    retry cannot fix (host key not trusted, authentication refused, bad configuration)."""

    def __init__(self, message: str, *, retryable: bool = True) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable


class TargetError(ValueError):
    """A target that cannot be used; the message is one line and names the input line."""


@dataclass(frozen=True)
class HostOutcome(Generic[T]):
    """One host's row: ``ok`` with ``value``, or not ok with a short ``error``; ``attempts`` is
    the number of connection attempts made, ``seconds`` the wall time spent on the host (not
    counting the wait for a concurrency slot)."""

    host: str
    ok: bool
    value: T | None
    error: str | None
    attempts: int
    seconds: float


def describe_error(exc: BaseException) -> tuple[str, bool]:
    """A short message for a connection failure and whether a retry may help."""
    if isinstance(exc, ConnectError):
        return exc.message, exc.retryable
    if isinstance(exc, TargetError):
        return str(exc), False
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused", True
    if isinstance(exc, socket.gaierror):
        return "name not resolved", False
    if isinstance(exc, TimeoutError):
        return "timeout", True
    if isinstance(exc, OSError):
        if exc.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH):
            return "unreachable", True
        if exc.errno in (errno.ECONNRESET, errno.EPIPE, errno.ECONNABORTED):
            return "connection reset", True
        return f"connection failed: {exc.strerror or exc}", True
    return f"connection failed: {type(exc).__name__}: {_short(str(exc))}", False


def _short(text: str, limit: int = 160) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 3] + "..."


class _WorkError(Exception):
    """Wraps an exception raised by ``work`` so it is not mistaken for a connection error."""

    def __init__(self, exc: BaseException) -> None:
        super().__init__(str(exc))
        self.exc = exc


async def _attempts(
    target: str,
    work: Callable[[Runner], Awaitable[T]],
    connect: Callable[[str], AbstractAsyncContextManager[Runner]],
    retries: int,
    retry_delay_s: float,
    state: list[int],
) -> T:
    """Connect and run ``work``, retrying connection errors; ``state[0]`` counts attempts."""
    while True:
        state[0] += 1
        try:
            async with connect(target) as runner:
                try:
                    return await work(runner)
                except Exception as exc:
                    raise _WorkError(exc) from exc
        except _WorkError:
            raise
        except Exception as exc:
            _, retryable = describe_error(exc)
            if not retryable or state[0] > retries:
                raise
        await asyncio.sleep(retry_delay_s * state[0])


async def fan_out(
    targets: Sequence[str],
    work: Callable[[Runner], Awaitable[T]],
    *,
    connect: Callable[[str], AbstractAsyncContextManager[Runner]],
    concurrency: int = 32,
    timeout_s: float = 60,
    retries: int = 1,
    retry_delay_s: float = 0.2,
    progress: Progress | None = None,
) -> list[HostOutcome[T]]:
    """Run ``work(runner)`` on every target, at most ``concurrency`` at a time.

    ``timeout_s`` bounds each host overall (connecting, retries and work together); a host
    that runs over is a row with error ``timeout after N s``. ``retries`` is the number of
    extra connection attempts after a retryable connection error (delay ``retry_delay_s``
    times the attempt number). Results are in the order of ``targets``; duplicates are run
    as given. Never raises for a host's failure; cancelling the call cancels all hosts.
    """
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    if retries < 0:
        raise ValueError("retries must be 0 or more")
    sem = asyncio.Semaphore(concurrency)
    total = len(targets)
    done = 0

    async def one(target: str) -> HostOutcome[T]:
        nonlocal done
        async with sem:
            t0 = time.monotonic()
            state = [0]
            try:
                async with asyncio.timeout(timeout_s):
                    value = await _attempts(target, work, connect, retries, retry_delay_s, state)
                row: HostOutcome[T] = HostOutcome(target, True, value, None, state[0],
                                                  time.monotonic() - t0)
            except TimeoutError:
                row = HostOutcome(target, False, None, f"timeout after {timeout_s:g} s",
                                  state[0], time.monotonic() - t0)
            except _WorkError as werr:
                exc = werr.exc
                msg = f"probe failed: {type(exc).__name__}: {_short(str(exc))}"
                row = HostOutcome(target, False, None, msg, state[0], time.monotonic() - t0)
            except Exception as exc:
                row = HostOutcome(target, False, None, describe_error(exc)[0], state[0],
                                  time.monotonic() - t0)
        done += 1
        if progress is not None:
            progress(done, total, target, row.ok)
        return row

    return list(await asyncio.gather(*(one(t) for t in targets)))


@contextmanager
def rich_progress(total: int, description: str = "probing") -> Iterator[Progress]:
    """A :data:`Progress` callback drawing a rich progress bar (hosts done / failed so far)."""
    failed = 0
    with RichProgress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("{task.fields[failed]} failed"), TimeElapsedColumn(),
                      transient=False) as bar:
        task = bar.add_task(description, total=total, failed=0)

        def update(done: int, total_: int, host: str, ok: bool) -> None:
            nonlocal failed
            failed += 0 if ok else 1
            bar.update(task, completed=done, total=total_, failed=failed)

        yield update


# -- targets ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """``[user@]host[:port]``; ``spec`` is the canonical text (what :func:`fan_out` gets)."""

    host: str
    port: int | None = None
    user: str | None = None

    @property
    def spec(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        user = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port is not None else ""
        return f"{user}{host}{port}"


def _bad_chars(text: str) -> str | None:
    for ch in text:
        if ch.isspace():
            return "contains whitespace"
        if not ch.isprintable() or ch == "\ufffd":
            return "contains a control character"
    return None


def parse_target(text: str) -> Target:
    """One ``[user@]host[:port]``; raises :class:`TargetError` (one line) when unusable."""
    shown = repr(text) if len(text) <= 80 else repr(text[:77] + "...")
    problem = _bad_chars(text)
    if problem:
        raise TargetError(f"target {shown} {problem}")
    user: str | None = None
    rest = text
    if "@" in rest:
        user, _, rest = rest.rpartition("@")
        if not user:
            raise TargetError(f"target {shown} has an empty user name")
        if user.startswith("-"):
            raise TargetError(f"target {shown}: user name starts with '-'")
    port_text: str | None = None
    if rest.startswith("["):
        host, sep, tail = rest[1:].partition("]")
        if not sep:
            raise TargetError(f"target {shown}: '[' without ']'")
        if tail:
            if not tail.startswith(":"):
                raise TargetError(f"target {shown}: unexpected text after ']'")
            port_text = tail[1:]
    elif rest.count(":") == 1:
        host, _, port_text = rest.partition(":")
    else:
        host = rest  # a bare IPv6 address (several ':') or a plain name
    if not host:
        raise TargetError(f"target {shown} has no host")
    if host.startswith("-"):
        raise TargetError(f"target {shown}: host starts with '-'")
    port: int | None = None
    if port_text is not None:
        if not port_text.isascii() or not port_text.isdecimal() or not 1 <= int(port_text) <= 65535:
            raise TargetError(f"target {shown}: port must be 1-65535")
        port = int(port_text)
    return Target(host, port, user)


def parse_targets(lines: Iterable[str]) -> list[Target]:
    """Targets from lines (a hosts file or arguments): ``#`` starts a comment, blank lines are
    skipped, one target per line, order kept. Raises :class:`TargetError` naming the line."""
    out: list[Target] = []
    for n, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].strip(" \t\r\n")
        if not line:
            continue
        try:
            out.append(parse_target(line))
        except TargetError as exc:
            raise TargetError(f"line {n}: {exc}") from None
    return out


def read_hosts_file(path: str | Path) -> list[Target]:
    """:func:`parse_targets` over a file (UTF-8; undecodable bytes are refused like control
    characters; lines split on newline only, so other separators are refused too)."""
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    return parse_targets(text.split("\n"))
