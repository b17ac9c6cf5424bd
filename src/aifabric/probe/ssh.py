"""Commands on a remote host over one SSH connection (asyncssh), as a
:class:`~aifabric.probe.runner.Runner`.

SSH carries a command as one string that the remote user's login shell parses, so an argument
vector has to be turned into a string somewhere: :func:`argv_to_command` is that one place. Each
element is quoted with :func:`shlex.quote` (single quotes; a ``'`` inside becomes ``'"'"'``) and
the quoted elements are joined with spaces, so spaces, ``;``, ``$()``, backticks, quotes and
newlines reach the remote program verbatim. A NUL cannot be carried (C strings end there): such
a command is refused with ``error`` set, never truncated. The quoting assumes a POSIX shell
(sh, bash, dash, zsh, ksh) as the login shell; csh/fish or a switch CLI would parse differently.

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
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import asyncssh

from aifabric.probe.fanout import ConnectError, describe_error, parse_target
from aifabric.probe.runner import CmdResult

__all__ = ["SshRunner", "argv_to_command", "ssh_connect", "ssh_connector"]


def argv_to_command(argv: Sequence[str]) -> str:
    """The remote command line for ``argv``: every element :func:`shlex.quote`-d, joined by
    spaces. Raises ValueError for an empty argv or an element containing NUL."""
    if not argv:
        raise ValueError("empty command")
    for arg in argv:
        if "\x00" in arg:
            raise ValueError("argument contains NUL, which a remote command cannot carry")
    return " ".join(shlex.quote(arg) for arg in argv)


@dataclass
class SshRunner:
    """Runs argument vectors over an open asyncssh connection (one channel per command)."""

    target: str
    conn: asyncssh.SSHClientConnection

    async def run(self, argv: Sequence[str], *, timeout: float) -> CmdResult:
        """Run ``argv``; a non-zero exit is ``rc``, a timeout or lost connection is ``error``.
        On timeout the remote process is sent SIGKILL (if the server honours signal requests)
        and its channel closed."""
        t0 = time.monotonic()
        args = tuple(argv)
        try:
            command = argv_to_command(args)
        except ValueError as exc:
            return CmdResult(args, None, "", "", 0.0, error=str(exc))
        try:
            proc = await asyncio.wait_for(
                self.conn.create_process(command, stdin=asyncssh.DEVNULL, encoding="utf-8",
                                         errors="replace"), timeout)
        except TimeoutError:
            return CmdResult(args, None, "", "", time.monotonic() - t0,
                             error=f"timed out after {timeout:g} s")
        except (asyncssh.Error, OSError) as exc:
            return CmdResult(args, None, "", "", time.monotonic() - t0,
                             error=f"ssh: {_describe(exc)[0]}")
        try:
            done = await proc.wait(check=False, timeout=timeout)
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
        error = None
        if rc is None or rc < 0:
            sig = done.exit_signal[0] if done.exit_signal else "unknown"
            return CmdResult(args, None, stdout, stderr, time.monotonic() - t0,
                             error=f"killed by signal {sig}")
        if rc == 127:
            error = f"{args[0]}: not installed here"
        return CmdResult(args, rc, stdout, stderr, time.monotonic() - t0, error)


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
