"""Collect one host's evidence: the commands whose output ``aifabric diagnose`` and
``aifabric verify --bundle`` read, run through a :class:`~aifabric.probe.runner.Runner`.

Every collector is an argument vector (never a shell string, never ``sh -c``). Interface names
come from the target's own ``ip -d -j link show`` output (``ip-j-link.json``, kept by the
bundle as a probe-only dot file: ``ip-link.txt`` gives the readers the same interfaces);
each is checked against :data:`IFACE_RE` (the kernel's 15-character limit, no ``/`` or
whitespace, and no leading ``-`` so a name can never read as an option) before it becomes one
element of an argv; other names are skipped and the reason recorded as a capture named
``interfaces-skipped.txt``.

RDMA devices are listed with ``ls -1 /sys/class/infiniband`` (``rdma-devices.txt``, a capture
the probe uses for itself: the bundle keeps it out of the readers' way); each name is checked
against :data:`RDMA_DEV_RE` the same way (refused names join ``interfaces-skipped.txt``). Per
device: ``grep -r -H . /sys/class/infiniband/DEV/ports`` (``sysfs-infiniband-DEV.txt``, kind
``sysfs-infiniband``: port state, rate, GIDs with their type and net device, counters) and,
per port it lists, ``cat /sys/class/infiniband/DEV/tc/PORT/traffic_class``
(``traffic_class-DEV-PORT.txt``, kind ``rdma-traffic-class``; only MLNX_OFED's mlx5 has the
file, elsewhere it is a recorded "not available here"). ``grep`` exits 2 when some entries
cannot be read (a GID type of an empty GID slot gives EINVAL) while printing the rest: that is
a ``partial:`` capture, not a failure. A host with no RDMA device gets a ``rdma-devices.txt``
capture whose error says so.

Per physical or veth Ethernet interface: ``ethtool IFACE``, ``ethtool -i IFACE``,
``ethtool -m IFACE`` and ``ethtool -S IFACE`` twice, :func:`collect_host`'s ``interval_s``
apart (``ethtool-S-IFACE.1.txt`` / ``.2.txt``: diagnose derives counter deltas from the pair).

File names are chosen for the readers: ``ip-link.txt`` (kind ``ip-link``, a host kind verify
folds into the server's observed model), ``tc-qdisc.txt`` (``tc``), ``sysctl.txt``
(``sysctl``), ``lspci.txt`` (``lspci``), ``ibv_devinfo.txt`` (``ibv-devinfo``),
``rdma-link.txt`` (``rdma-link``), ``ibdev2netdev.txt``, ``nvidia-smi-topo.txt``,
``nvidia-smi-q.txt`` (``nvidia-smi``: driver, ECC, remapped rows, PCIe link, NVLink fabric),
``proc-modules.txt`` (``proc-modules``: loaded kernel modules), ``ldconfig-p.txt``
(``ldconfig``: the shared libraries the loader finds, NCCL net plugins among them; run as
``/sbin/ldconfig -p`` when ``ldconfig`` is not on the PATH, :data:`FALLBACKS`),
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
    "FALLBACKS",
    "IFACE_RE",
    "MAX_IFACES",
    "NOT_AVAILABLE",
    "RDMA_DEV_RE",
    "RDMA_LIST",
    "Capture",
    "collect_host",
    "host_commands",
    "interface_commands",
    "rdma_device_commands",
    "select_interfaces",
    "select_rdma_devices",
    "sysfs_ports",
    "traffic_class_command",
]

IFACE_RE = re.compile(r"^[A-Za-z0-9_.:@][A-Za-z0-9_.:@-]{0,14}$")
"""A usable interface name: 1-15 of ``[A-Za-z0-9_.:@-]``, not starting with ``-``."""

RDMA_DEV_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,63}$")
"""A usable RDMA device name (``mlx5_0``, ``mlx5_bond_0``, ``rxe0``, ``rocep1s0f0``): 1-64
of ``[A-Za-z0-9_.:-]``, not starting with ``-`` or ``.`` (the kernel's limit is 64)."""

RDMA_LIST = ("rdma-devices.txt", ("ls", "-1", "/sys/class/infiniband"))
"""The capture that lists RDMA devices (file name, argv)."""

MAX_RDMA_DEVICES = 64
"""RDMA devices probed per host at most."""

MAX_RDMA_PORTS = 8
"""Ports per RDMA device whose ``traffic_class`` is read at most."""

_SYSFS_PORT_RE = re.compile(r"^/sys/class/infiniband/[^/\s]+/ports/(\d{1,3})/")

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
        ("ip-route.txt", ("ip", "route", "show")),
        ("proc-limits.txt", ("cat", "/proc/self/limits")),
        ("proc-modules.txt", ("cat", "/proc/modules")),
        ("ldconfig-p.txt", ("ldconfig", "-p")),
        ("lspci.txt", ("lspci", "-vvv")),
        ("ibv_devinfo.txt", ("ibv_devinfo", "-v")),
        ("rdma-link.txt", ("rdma", "link")),
        ("ibdev2netdev.txt", ("ibdev2netdev",)),
        ("nvidia-smi-topo.txt", ("nvidia-smi", "topo", "-m")),
        ("nvidia-smi-q.txt", ("nvidia-smi", "-q")),
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


FALLBACKS: dict[str, tuple[str, ...]] = {"ldconfig-p.txt": ("/sbin/ldconfig", "-p")}
"""A second argv for a host collector whose tool is often off a non-root user's PATH
(Debian puts ldconfig in /usr/sbin, outside a user's default PATH; /sbin is it or a link to it
on merged-/usr systems); tried only when the first is not installed."""


def rdma_device_commands(dev: str) -> list[tuple[str, tuple[str, ...]]]:
    """(file name, argv) of the per-RDMA-device collector; ``dev`` must already match
    :data:`RDMA_DEV_RE` (it becomes part of one argv element, a path under
    ``/sys/class/infiniband``, never part of a shell string)."""
    return [
        (
            f"sysfs-infiniband-{dev}.txt",
            ("grep", "-r", "-H", ".", f"/sys/class/infiniband/{dev}/ports"),
        ),
    ]


def traffic_class_command(dev: str, port: int) -> tuple[str, tuple[str, ...]]:
    """(file name, argv) reading MLNX_OFED mlx5's ``tc/PORT/traffic_class`` of ``dev``."""
    return (
        f"traffic_class-{dev}-{port}.txt",
        ("cat", f"/sys/class/infiniband/{dev}/tc/{port}/traffic_class"),
    )


def select_rdma_devices(listing: str) -> tuple[list[str], list[str]]:
    """(usable names, reasons for skipped names) from ``ls -1 /sys/class/infiniband``: a name
    failing :data:`RDMA_DEV_RE`, a duplicate or past :data:`MAX_RDMA_DEVICES` is skipped."""
    names: list[str] = []
    skipped: list[str] = []
    for line in listing.splitlines():
        name = line.strip()
        if not name:
            continue
        if RDMA_DEV_RE.match(name) is None:
            skipped.append(f"RDMA device {name[:40]!r}: not a usable device name")
        elif name in names:
            skipped.append(f"RDMA device {name!r}: listed twice")
        elif len(names) >= MAX_RDMA_DEVICES:
            skipped.append(f"RDMA device {name!r}: more than {MAX_RDMA_DEVICES} devices")
        else:
            names.append(name)
    return names, skipped


def sysfs_ports(grep_output: str) -> list[int]:
    """Port numbers a ``grep -r -H . /sys/class/infiniband/DEV/ports`` output lists, sorted,
    at most :data:`MAX_RDMA_PORTS`."""
    ports: set[int] = set()
    for line in grep_output.splitlines():
        m = _SYSFS_PORT_RE.match(line)
        if m is not None:
            ports.add(int(m.group(1)))
    return sorted(ports)[:MAX_RDMA_PORTS]


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


def _classify_grep(res: CmdResult) -> str | None:
    """:func:`_classify` for ``grep -r``: exit 2 with output is partial (some entries could not
    be read), exit 1 is nothing matched (nothing there)."""
    if res.error is None and res.rc == 2 and res.stdout.strip():
        bad = sum(1 for ln in res.stderr.splitlines() if ln.strip())
        return f"partial: {bad} entr{'y' if bad == 1 else 'ies'} unreadable (grep exit 2)"
    return _classify(res)


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
    error = _classify_grep(res) if argv[0] == "grep" else _classify(res)
    return Capture(name, argv, res.rc, res.stdout, res.stderr, res.seconds, error, started)


async def _host_capture(
    runner: Runner, name: str, argv: tuple[str, ...], timeout_s: float, sem: asyncio.Semaphore
) -> Capture:
    """:func:`_capture`, then the :data:`FALLBACKS` argv when the tool was not found."""
    cap = await _capture(runner, name, argv, timeout_s, sem)
    other = FALLBACKS.get(name)
    if other is None or cap.rc not in (None, 127) or "not installed" not in (cap.error or ""):
        return cap
    return await _capture(runner, name, other, timeout_s, sem)


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


async def _rdma_device(
    runner: Runner, dev: str, timeout_s: float, sem: asyncio.Semaphore
) -> list[Capture]:
    """The sysfs ports of ``dev``, then the ``traffic_class`` of each port they list."""
    out = [await _capture(runner, n, a, timeout_s, sem) for n, a in rdma_device_commands(dev)]
    ports = sysfs_ports(out[0].stdout)
    tcs = [traffic_class_command(dev, p) for p in ports]
    out.extend(await asyncio.gather(*(_capture(runner, n, a, timeout_s, sem) for n, a in tcs)))
    return out


def _rdma_listing(cap: Capture) -> tuple[Capture, list[str], list[str]]:
    """The ``ls /sys/class/infiniband`` capture (an empty listing becomes 'not available
    here'), the usable device names and the refused ones."""
    if cap.error is not None:
        return cap, [], []
    names, skipped = select_rdma_devices(cap.stdout)
    if not names and not skipped:
        cap = Capture(cap.name, cap.argv, cap.rc, cap.stdout, cap.stderr, cap.seconds,
                      NOT_AVAILABLE + "no RDMA device (/sys/class/infiniband is empty)",
                      cap.started)
    return cap, names, skipped


async def collect_host(
    runner: Runner, *, timeout_s: float = 20, interval_s: float = 1.0
) -> list[Capture]:
    """Run every collector on ``runner``'s target; one :class:`Capture` per command (plus
    ``interfaces-skipped.txt`` when some interface or RDMA device names were refused), in a
    stable order: host collectors, ``ip -d -j link show``, the RDMA device listing, then per
    interface, then per RDMA device. Never raises on a failing command; ``timeout_s`` bounds
    each command, ``interval_s`` separates the two ``ethtool -S`` snapshots."""
    sem = asyncio.Semaphore(MAX_CONCURRENT)
    ip_json_argv = ("ip", "-d", "-j", "link", "show")
    host_tasks = [_host_capture(runner, n, a, timeout_s, sem) for n, a in host_commands()]
    ip_json_task = _capture(runner, "ip-j-link.json", ip_json_argv, timeout_s, sem)
    rdma_task = _capture(runner, RDMA_LIST[0], RDMA_LIST[1], timeout_s, sem)
    *host_caps, ip_json, rdma_list = await asyncio.gather(*host_tasks, ip_json_task, rdma_task)
    rdma_list, devices, dev_skipped = _rdma_listing(rdma_list)
    out: list[Capture] = [*host_caps, ip_json, rdma_list]
    names: list[str] = []
    skipped: list[str] = []
    if ip_json.error is None:
        names, skipped = select_interfaces(ip_json.stdout)
    skipped += dev_skipped
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
    for dev in devices:
        jobs.append(asyncio.ensure_future(_rdma_device(runner, dev, timeout_s, sem)))
    for group in await asyncio.gather(*jobs):
        out.extend(group)
    return out


async def _gather_list(coros: Sequence[Any]) -> list[Capture]:
    return list(await asyncio.gather(*coros))
