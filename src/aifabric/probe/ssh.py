"""Commands on a remote host over one SSH connection (asyncssh), as a
:class:`~aifabric.probe.runner.Runner`.

SSH carries a command as one string that the remote user's login shell parses, so an argument
vector has to be turned into a string somewhere: :func:`argv_to_command` is that one place. Each
element is quoted with :func:`shlex.quote` (single quotes; a ``'`` inside becomes ``'"'"'``) and
the quoted elements are joined with spaces, so spaces, ``;``, ``$()``, backticks, quotes and
newlines reach the remote program verbatim. A NUL cannot be carried (C strings end there): such
a command is refused with ``error`` set, never truncated. The quoting assumes a POSIX shell
(sh, bash, dash, zsh, ksh) as the login shell; csh/fish or a switch CLI would parse differently.

A timed-out command must not keep running on the host: closing the channel alone does not stop
a remote program that neither reads nor writes (``sleep``, a hung ``ibv_devinfo``), and OpenSSH
does not act on every signal request. So :class:`SshRunner` runs each argv under coreutils
``timeout -k 2 T`` on the remote side (:func:`timed_argv`; the duration and the argv stay
separate, quoted elements): the remote ``timeout`` sends SIGTERM to the command's process group
after ``T`` seconds and SIGKILL 2 s later, exit 124 (or 137) reads as a timeout. The client
waits :data:`CLIENT_GRACE_S` longer than ``T`` before it gives up itself, sends SIGKILL and
closes the channel. A host without ``timeout`` (the shell's ``timeout: not found``, exit 127)
is remembered per connection and its commands run bare from then on.

Host keys are checked by default: against ``known_hosts`` when given, else the user's
``~/.ssh/known_hosts`` (a missing file trusts nothing, so every host fails with "host key not
trusted"). ``insecure_no_host_key_check=True`` is the only way to turn checking off.

Connection failures are raised as :class:`~aifabric.probe.fanout.ConnectError` with a short
message ("connection refused", "unreachable", "timeout", "host key not trusted",
"authentication refused") so :func:`~aifabric.probe.fanout.fan_out` rows read clearly and only
retryable failures are retried.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import time
import warnings
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

with warnings.catch_warnings():
    # recent cryptography releases (51 here) deprecate DSA and warn when asyncssh merely
    # imports its DSA types: a library's import-time notice the user cannot act on (it would
    # break the one-line error contract on stderr)
    warnings.simplefilter("ignore")
    import asyncssh

from aifabric.probe.fanout import ConnectError, describe_error, parse_target
from aifabric.probe.runner import CmdResult

__all__ = [
    "CLIENT_GRACE_S",
    "KILL_AFTER_S",
    "SshRunner",
    "argv_to_command",
    "ssh_connect",
    "ssh_connector",
    "timed_argv",
]

KILL_AFTER_S = 2
"""``timeout -k``: seconds between the remote SIGTERM and SIGKILL."""
CLIENT_GRACE_S = KILL_AFTER_S + 3.0
"""How much longer than the command's timeout the client waits for the remote ``timeout``."""
_TIMEOUT_RCS = (124, 137)
"""coreutils ``timeout``: 124 when it sent the signal, 128+9 when ``-k`` had to kill."""


def argv_to_command(argv: Sequence[str]) -> str:
    """The remote command line for ``argv``: every element :func:`shlex.quote`-d, joined by
    spaces. Raises ValueError for an empty argv or an element containing NUL."""
    if not argv:
        raise ValueError("empty command")
    for arg in argv:
        if "\x00" in arg:
            raise ValueError("argument contains NUL, which a remote command cannot carry")
    return " ".join(shlex.quote(arg) for arg in argv)


def _duration(seconds: float) -> str:
    """``timeout``'s DURATION: plain decimal seconds (never an exponent), at least 0.1."""
    return f"{max(seconds, 0.1):.3f}".rstrip("0").rstrip(".")


def timed_argv(argv: Sequence[str], timeout_s: float) -> tuple[str, ...]:
    """``argv`` under coreutils ``timeout -k KILL_AFTER_S T``: the remote side kills it (and
    its process group) when ``timeout_s`` has passed, whatever the client does. ``timeout``
    stops reading options at DURATION, so an argv starting with ``-`` stays the command."""
    return ("timeout", "-k", str(KILL_AFTER_S), _duration(timeout_s), *argv)


def _timeout_missing(rc: int | None, stderr: str) -> bool:
    """The remote shell could not find ``timeout`` itself (its own 127 names the command
    it failed to run: ``timeout: failed to run command 'x'``)."""
    return rc == 127 and "failed to run command" not in stderr and "timeout" in stderr


@dataclass
class SshRunner:
    """Runs argument vectors over an open asyncssh connection (one channel per command),
    each under the remote ``timeout`` (module docstring) unless ``wrap`` is False or the host
    has none."""

    target: str
    conn: asyncssh.SSHClientConnection
    wrap: bool = True
    """Run argv under the remote coreutils ``timeout``; turned off when the host lacks it."""

    async def run(self, argv: Sequence[str], *, timeout: float) -> CmdResult:
        """Run ``argv``; a non-zero exit is ``rc``, a timeout or lost connection is ``error``.
        The remote ``timeout`` stops the command after ``timeout`` seconds; if the host does
        not answer ``CLIENT_GRACE_S`` later, the client sends SIGKILL (if the server honours
        signal requests) and closes the channel."""
        args = tuple(argv)
        if self.wrap:
            res = await self._run(args, timed_argv(args, timeout), timeout, wrapped=True)
            if not _timeout_missing(res.rc, res.stderr):
                return res
            self.wrap = False  # no coreutils timeout there: bare commands from now on
        return await self._run(args, args, timeout, wrapped=False)

    async def _run(
        self, args: tuple[str, ...], remote: tuple[str, ...], timeout: float, *, wrapped: bool
    ) -> CmdResult:
        t0 = time.monotonic()
        try:
            command = argv_to_command(remote)
        except ValueError as exc:
            return CmdResult(args, None, "", "", 0.0, error=str(exc))
        limit = timeout + CLIENT_GRACE_S if wrapped else timeout
        try:
            proc = await asyncio.wait_for(
                self.conn.create_process(command, stdin=asyncssh.DEVNULL, encoding="utf-8",
                                         errors="replace"), limit)
        except TimeoutError:
            return CmdResult(args, None, "", "", time.monotonic() - t0,
                             error=f"timed out after {timeout:g} s")
        except (asyncssh.Error, OSError) as exc:
            return CmdResult(args, None, "", "", time.monotonic() - t0,
                             error=f"ssh: {_describe(exc)[0]}")
        try:
            done = await proc.wait(check=False, timeout=limit)
        except asyncssh.TimeoutError as exc:
            with contextlib.suppress(asyncssh.Error, OSError):  # channel may be gone
                proc.send_signal("KILL")
            return CmdResult(args, None, _text(exc.stdout), _text(exc.stderr),
                             time.monotonic() - t0, error=f"timed out after {timeout:g} s")
        except (asyncssh.Error, OSError) as exc:
            return CmdResult(args, None, "", "", time.monotonic() - t0,
                             error=f"ssh: {_describe(exc)[0]}")
        finally:
            proc.close()
        rc = done.exit_status
        stdout, stderr = _text(done.stdout), _text(done.stderr)
        seconds = time.monotonic() - t0
        error = None
        if rc is None or rc < 0:
            sig = done.exit_signal[0] if done.exit_signal else "unknown"
            return CmdResult(args, None, stdout, stderr, seconds,
                             error=f"killed by signal {sig}")
        if wrapped and rc in _TIMEOUT_RCS and seconds >= timeout * 0.9:
            return CmdResult(args, None, stdout, stderr, seconds,
                             error=f"timed out after {timeout:g} s")
        if rc == 127 and not (wrapped and _timeout_missing(rc, stderr)):
            error = f"{args[0]}: not installed here"
        return CmdResult(args, rc, stdout, stderr, seconds, error)


def _text(data: object) -> str:
    if isinstance(data, bytes):
        return data.decode("utf-8", "replace")
    return data if isinstance(data, str) else ""


def _describe(exc: BaseException) -> tuple[str, bool]:
    """Short message and retryability for asyncssh and socket errors."""
    if isinstance(exc, asyncssh.HostKeyNotVerifiable):
        return "host key not trusted", False
    if isinstance(exc, asyncssh.PermissionDenied):
        return "authentication refused", False
    if isinstance(exc, asyncssh.ConnectionLost):
        return "connection lost", True
    if isinstance(exc, asyncssh.DisconnectError):
        return f"disconnected: {' '.join(exc.reason.split())[:120]}", True
    if isinstance(exc, asyncssh.Error):
        return f"{type(exc).__name__}: {' '.join(str(exc).split())[:120]}", False
    return describe_error(exc)


@asynccontextmanager
async def ssh_connect(
    host: str,
    *,
    port: int = 22,
    user: str | None = None,
    known_hosts: str | Path | None = None,
    client_keys: Sequence[str | Path] | None = None,
    connect_timeout: float = 10,
    insecure_no_host_key_check: bool = False,
) -> AsyncIterator[SshRunner]:
    """An :class:`SshRunner` on ``host`` for the ``async with`` block, closed afterwards.

    ``known_hosts``: a known_hosts file (default ``~/.ssh/known_hosts``; a missing default trusts
    nothing). ``client_keys``: private key files (default: asyncssh's defaults, ``~/.ssh/id_*``
    and the agent). ``user``: default the local user name. Failures to connect raise
    :class:`ConnectError` with a short message.
    """
    kh: object
    if insecure_no_host_key_check:
        kh = None
    elif known_hosts is not None:
        if not Path(known_hosts).is_file():
            raise ConnectError(f"known_hosts file not found: {known_hosts}", retryable=False)
        kh = str(known_hosts)
    else:
        default = Path("~/.ssh/known_hosts").expanduser()
        kh = str(default) if default.is_file() else []
    keys: object = () if client_keys is None else [str(k) for k in client_keys]
    target = f"{user + '@' if user else ''}{'[' + host + ']' if ':' in host else host}" + (
        f":{port}" if port != 22 else "")
    try:
        conn = await asyncssh.connect(
            host, port=port, username=user, known_hosts=kh, client_keys=keys,
            connect_timeout=connect_timeout,
        )
    except (asyncssh.Error, OSError) as exc:
        msg, retryable = _describe(exc)
        raise ConnectError(msg, retryable=retryable) from exc
    try:
        yield SshRunner(target, conn)
    finally:
        conn.close()
        with contextlib.suppress(TimeoutError, asyncssh.Error, OSError):  # best effort
            await asyncio.wait_for(conn.wait_closed(), 5)


def ssh_connector(
    *,
    user: str | None = None,
    known_hosts: str | Path | None = None,
    client_keys: Sequence[str | Path] | None = None,
    connect_timeout: float = 10,
    insecure_no_host_key_check: bool = False,
) -> Callable[[str], AbstractAsyncContextManager[SshRunner]]:
    """A ``connect`` for :func:`~aifabric.probe.fanout.fan_out`: parses ``[user@]host[:port]``
    (the target's user and port win over ``user`` and 22) and calls :func:`ssh_connect`."""

    def connect(spec: str) -> AbstractAsyncContextManager[SshRunner]:
        t = parse_target(spec)
        return ssh_connect(t.host, port=t.port or 22, user=t.user or user,
                           known_hosts=known_hosts, client_keys=client_keys,
                           connect_timeout=connect_timeout,
                           insecure_no_host_key_check=insecure_no_host_key_check)

    return connect
