"""Where a probe's commands run: this machine, a lab namespace, or a host over SSH.

Every command is an argument vector, never a shell string: host names, interface names and
options that come from files or from the target's own output are passed as separate arguments,
so nothing they contain is interpreted by a shell (no injection). Failures are values: a
:class:`CmdResult` with the exit code, or ``error`` when the command could not run at all
(missing tool, timeout, connection lost); collectors record them and go on.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = ["CmdResult", "LocalRunner", "NetnsRunner", "Runner"]


@dataclass(frozen=True)
class CmdResult:
    """What one command did: ``rc`` (None when it did not run), its output, its duration."""

    argv: tuple[str, ...]
    rc: int | None
    stdout: str
    stderr: str
    seconds: float
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.rc == 0


class Runner(Protocol):
    """Runs argument vectors on one target."""

    target: str

    async def run(self, argv: Sequence[str], *, timeout: float) -> CmdResult: ...


async def _exec(prefix: Sequence[str], argv: Sequence[str], timeout: float) -> CmdResult:
    t0 = time.monotonic()
    full = [*prefix, *argv]
    try:
        proc = await asyncio.create_subprocess_exec(
            *full, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            stdin=asyncio.subprocess.DEVNULL,
        )
    except FileNotFoundError:
        return CmdResult(tuple(argv), None, "", "", time.monotonic() - t0,
                         error=f"{full[0]}: not installed here")
    except OSError as exc:
        return CmdResult(tuple(argv), None, "", "", time.monotonic() - t0,
                         error=f"{full[0]}: {exc.strerror or exc}")
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return CmdResult(tuple(argv), None, "", "", time.monotonic() - t0,
                         error=f"timed out after {timeout:g} s")
    rc = proc.returncode
    stderr = err.decode("utf-8", "replace")
    error = None
    if rc == 127 or (prefix and rc == 255 and "No such file" in stderr):
        error = f"{argv[0]}: not installed here"
    return CmdResult(tuple(argv), rc, out.decode("utf-8", "replace"), stderr,
                     time.monotonic() - t0, error)


@dataclass
class LocalRunner:
    """Commands on this machine."""

    target: str = "localhost"

    async def run(self, argv: Sequence[str], *, timeout: float) -> CmdResult:
        return await _exec((), argv, timeout)


@dataclass
class NetnsRunner:
    """Commands inside a network namespace (a lab node): ``ip netns exec NS argv...``."""

    target: str
    namespace: str

    async def run(self, argv: Sequence[str], *, timeout: float) -> CmdResult:
        res = await _exec(("ip", "netns", "exec", self.namespace), argv, timeout)
        if res.rc is not None and res.rc != 0 and res.error is None and (
            "exec of" in res.stderr and "failed" in res.stderr
        ):
            return CmdResult(res.argv, None, res.stdout, res.stderr, res.seconds,
                             error=f"{argv[0]}: not installed here")
        return res
