"""Collect one host's evidence: the commands whose output ``aifabric diagnose`` and
``aifabric verify --bundle`` read, run through a :class:`~aifabric.probe.runner.Runner`.

Every collector is an argument vector (never a shell string, never ``sh -c``). Interface names
come from the target's own ``ip -d -j link show`` output; each is checked against
:data:`IFACE_RE` (the kernel's 15-character limit, no ``/`` or whitespace, and no leading ``-``
so a name can never read as an option) before it becomes one element of an argv; other names
are skipped and the reason recorded as a capture named ``interfaces-skipped.txt``.

Per physical or veth Ethernet interface: ``ethtool IFACE``, ``ethtool -i IFACE``,
``ethtool -m IFACE`` and ``ethtool -S IFACE`` twice, :func:`collect_host`'s ``interval_s``
apart (``ethtool-S-IFACE.1.txt`` / ``.2.txt``: diagnose derives counter deltas from the pair).

File names are chosen for the readers: ``ip-link.txt`` (kind ``ip-link``, a host kind verify
folds into the server's observed model), ``tc-qdisc.txt`` (``tc``), ``sysctl.txt``
(``sysctl``), ``lspci.txt`` (``lspci``), ``ibv_devinfo.txt`` (``ibv-devinfo``),
``rdma-link.txt`` (``rdma-link``), ``ibdev2netdev.txt``, ``nvidia-smi-topo.txt``,
``iptables-save.txt`` (``iptables``), ``ethtool-m-IFACE.txt`` (``ethtool-module``) and
``nccl.conf`` (kind ``nccl-env`` by its name). The kinds are detected, not assumed, when the
bundle is written (:mod:`aifabric.probe.bundle`).

Failures are values: a tool that is not installed, needs root, or finds no device gives a
:class:`Capture` whose ``error`` starts with ``not available here:``; a command that exits
non-zero for another reason gives ``exit N: <first stderr line>``; nothing raises.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from aifabric.probe.runner import CmdResult, Runner

__all__ = [
    "IFACE_RE",
    "MAX_IFACES",
    "NOT_AVAILABLE",
    "Capture",
    "collect_host",
    "host_commands",
    "interface_commands",
    "select_interfaces",
]

IFACE_RE = re.compile(r"^[A-Za-z0-9_.:@][A-Za-z0-9_.:@-]{0,14}$")
"""A usable interface name: 1-15 of ``[A-Za-z0-9_.:@-]``, not starting with ``-``."""

MAX_IFACES = 64
"""Interfaces probed per host at most (more are listed as skipped)."""

NOT_AVAILABLE = "not available here: "
"""Prefix of :attr:`Capture.error` for a missing tool, device, file or privilege."""

MAX_CONCURRENT = 6
"""Commands in flight on one target at once."""

_UNAVAILABLE_RE = re.compile(
    r"not installed|command not found|No such file|No such device|not supported"
    r"|Operation not permitted|Permission denied|must be root|need(?:s)? root|superuser"
    r"|No data available|Cannot get|Failed to open NETLINK_RDMA|No IB devices"
    r"|couldn't communicate with the NVIDIA driver|No devices were found"
    r"|unknown command|Invalid argument",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Capture:
    """One command's output as collected: ``name`` is the bundle file name (``ip-link.txt``);
    ``error`` is None, ``"not available here: ..."`` or another message; ``started`` is the
    epoch time the command was started; ``seconds`` how long it ran."""

    name: str
    argv: tuple[str, ...]
    rc: int | None
    stdout: str
    stderr: str
    seconds: float
    error: str | None
    started: float


def host_commands() -> list[tuple[str, tuple[str, ...]]]:
    """(file name, argv) of the per-host collectors, in bundle order."""
    return [
        ("ip-link.txt", ("ip", "-s", "-d", "link", "show")),
        ("tc-qdisc.txt", ("tc", "-s", "qdisc", "show")),
        ("uname-r.txt", ("uname", "-r")),
        (
            "sysctl.txt",
            (
                "sysctl",
                "net.ipv4.tcp_ecn",
                "net.ipv4.conf.all.rp_filter",
                "net.ipv4.fib_multipath_hash_policy",
                "net.ipv4.ip_forward",
            ),
        ),
        ("proc-limits.txt", ("cat", "/proc/self/limits")),
        ("proc-modules.txt", ("cat", "/proc/modules")),
        ("lspci.txt", ("lspci", "-vvv")),
        ("ibv_devinfo.txt", ("ibv_devinfo", "-v")),
        ("rdma-link.txt", ("rdma", "link")),
        ("ibdev2netdev.txt", ("ibdev2netdev",)),
        ("nvidia-smi-topo.txt", ("nvidia-smi", "topo", "-m")),
        ("iptables-save.txt", ("iptables-save", "-c")),
        ("nccl.conf", ("cat", "/etc/nccl.conf")),
    ]


def interface_commands(iface: str) -> list[tuple[str, tuple[str, ...]]]:
    """(file name, argv) of the per-interface collectors except ``ethtool -S``; ``iface``
    must already match :data:`IFACE_RE` (it is one argv element, never part of a string)."""
    return [
        (f"ethtool-{iface}.txt", ("ethtool", iface)),
        (f"ethtool-i-{iface}.txt", ("ethtool", "-i", iface)),
        (f"ethtool-m-{iface}.txt", ("ethtool", "-m", iface)),
    ]


def _classify(res: CmdResult) -> str | None:
    """The :attr:`Capture.error` of a command result (None: it worked)."""
    first = next((ln.strip() for ln in res.stderr.splitlines() if ln.strip()), "")[:200]
    if res.error is not None:
        if "not installed" in res.error:
            return NOT_AVAILABLE + res.error
        return res.error
    if res.rc == 0:
        if "<access denied>" in res.stdout:
            return "partial: some fields need root (<access denied>)"
        return None
    what = first or f"exit {res.rc}"
    if res.rc == 127 or _UNAVAILABLE_RE.search(first):
        return NOT_AVAILABLE + what
    if res.rc == 1 and not res.stdout.strip() and not first:
        return NOT_AVAILABLE + "no output (nothing to report on this host)"
    return f"exit {res.rc}: {what}"


async def _capture(
    runner: Runner, name: str, argv: tuple[str, ...], timeout_s: float, sem: asyncio.Semaphore
) -> Capture:
    async with sem:
        started = time.time()
        try:
            res = await runner.run(argv, timeout=timeout_s)
        except Exception as exc:  # a runner bug or lost connection is a value, never a crash
            return Capture(
                name,
                argv,
                None,
                "",
                "",
                time.time() - started,
                f"{type(exc).__name__}: {exc}"[:300],
                started,
            )
    return Capture(name, argv, res.rc, res.stdout, res.stderr, res.seconds, _classify(res), started)


def select_interfaces(ip_json: str) -> tuple[list[str], list[str]]:
    """(usable names, reasons for skipped names) from ``ip -d -j link show`` output.

    Kept: Ethernet links (``link_type`` ``ether``) that are physical (no ``linkinfo.info_kind``)
    or veth. A name failing :data:`IFACE_RE` (or ``.``/``..``), a duplicate, or past
    :data:`MAX_IFACES` is
    skipped with its reason (the name shown by ``repr``, cut to 40 characters).
    """
    try:
        doc: Any = json.loads(ip_json)
    except (ValueError, RecursionError):
        return [], ["ip -j link show: output is not JSON"]
    if not isinstance(doc, list):
        return [], ["ip -j link show: output is not a JSON list"]
    names: list[str] = []
    skipped: list[str] = []
    for entry in doc:
        if not isinstance(entry, dict):
            skipped.append("ip -j link show: an entry that is not an object")
            continue
        name = entry.get("ifname")
        if not isinstance(name, str):
            skipped.append("ip -j link show: an entry without a string ifname")
            continue
        info = entry.get("linkinfo")
        kind = info.get("info_kind") if isinstance(info, dict) else None
        if entry.get("link_type") != "ether" or kind not in (None, "veth"):
            continue
        if IFACE_RE.match(name) is None or name in (".", ".."):
            skipped.append(f"{name[:40]!r}: not a usable interface name")
        elif name in names:
            skipped.append(f"{name!r}: listed twice")
        elif len(names) >= MAX_IFACES:
            skipped.append(f"{name!r}: more than {MAX_IFACES} interfaces")
        else:
            names.append(name)
    return names, skipped


async def _ethtool_stats_pair(
    runner: Runner, iface: str, timeout_s: float, interval_s: float, sem: asyncio.Semaphore
) -> list[Capture]:
    argv = ("ethtool", "-S", iface)
    first = await _capture(runner, f"ethtool-S-{iface}.1.txt", argv, timeout_s, sem)
    if first.error is not None and first.error.startswith(NOT_AVAILABLE):
        return [first]  # no second snapshot of something that is not there
    await asyncio.sleep(max(0.0, interval_s))
    second = await _capture(runner, f"ethtool-S-{iface}.2.txt", argv, timeout_s, sem)
    return [first, second]


async def collect_host(
    runner: Runner, *, timeout_s: float = 20, interval_s: float = 1.0
) -> list[Capture]:
    """Run every collector on ``runner``'s target; one :class:`Capture` per command (plus
    ``interfaces-skipped.txt`` when some interface names were refused), in a stable order:
    host collectors, ``ip -d -j link show``, then per interface. Never raises on a failing
    command; ``timeout_s`` bounds each command, ``interval_s`` separates the two
    ``ethtool -S`` snapshots."""
    sem = asyncio.Semaphore(MAX_CONCURRENT)
    ip_json_argv = ("ip", "-d", "-j", "link", "show")
    host_tasks = [_capture(runner, n, a, timeout_s, sem) for n, a in host_commands()]
    ip_json_task = _capture(runner, "ip-j-link.json", ip_json_argv, timeout_s, sem)
    *host_caps, ip_json = await asyncio.gather(*host_tasks, ip_json_task)
    out: list[Capture] = [*host_caps, ip_json]
    names: list[str] = []
    skipped: list[str] = []
    if ip_json.error is None:
        names, skipped = select_interfaces(ip_json.stdout)
    if skipped:
        text = "".join(f"{s}\n" for s in skipped)
        out.append(
            Capture(
                "interfaces-skipped.txt",
                ip_json_argv,
                None,
                text,
                "",
                0.0,
                f"skipped {len(skipped)} interface name(s)",
                time.time(),
            )
        )
    jobs: list[asyncio.Future[list[Capture]]] = []
    for iface in names:
        jobs.append(
            asyncio.ensure_future(_ethtool_stats_pair(runner, iface, timeout_s, interval_s, sem))
        )
        jobs.append(
            asyncio.ensure_future(
                _gather_list(
                    [_capture(runner, n, a, timeout_s, sem) for n, a in interface_commands(iface)]
                )
            )
        )
    for group in await asyncio.gather(*jobs):
        out.extend(group)
    return out


async def _gather_list(coros: Sequence[Any]) -> list[Capture]:
    return list(await asyncio.gather(*coros))
