"""Collectors: where the exporter's raw counters come from, one class per source family.

Every collector has a ``name`` (the ``source`` label of the exporter's own metrics) and
``collect(scrape)``, which writes raw counters into a :class:`~aifabric.monitor.exposition.Scrape`
through the catalogue (:mod:`aifabric.monitor.catalogue`). A counter the catalogue does not map
is ignored; a counter a NIC lacks is simply absent (another vendor's NIC never crashes a scrape);
an interface that vanishes between two scrapes is skipped.

* :class:`NetCollector` — per network namespace (the host's own, or each node of a lab):
  ``ethtool -S`` driver counters by ioctl, rtnetlink link counters (bytes, packets, errors,
  drops, carrier changes, MTU, operational state), root qdisc counters (drops, backlog, ECN
  marks; only root qdiscs: an ``mq`` root sums its per-channel children, which is where
  per-queue cardinality would explode), and TCP counters of ``/proc/net/snmp`` and
  ``/proc/net/netstat`` (sources ``ethtool``, ``link``, ``qdisc``, ``netstat``). No fork per
  scrape (:mod:`aifabric.monitor.kernel`).
* :class:`RdmaSysfsCollector` — ``/sys/class/infiniband/<dev>/ports/<n>/{hw_counters,counters}``
  (source ``rdma``); the files stay open and are re-read with ``pread``.
* :class:`ModuleCollector` — optics DOM through ``ethtool -m IFACE`` parsed by
  :mod:`aifabric.evidence.ethtool_module`, refreshed by a background thread every
  ``interval_s`` (60 s by default: DOM moves slowly and an EEPROM read over I2C takes tens of
  milliseconds per module), so a scrape only reads the last result (source ``module``).
* :class:`NcclLogCollector` — tails NCCL / PyTorch log files and counts lines by kind (source
  ``nccl_log``): ``timeout``, ``retry``, ``error``, ``warn`` (the first that matches, in that
  order). Messages from NCCL ``src/transport/net_ib.cc`` and ``src/misc/socket.cc``
  (https://github.com/NVIDIA/nccl) and PyTorch ``ProcessGroupNCCL.cpp``
  (https://github.com/pytorch/pytorch): ``Got completion from peer ... with error 12`` /
  ``status=12`` is IBV_WC_RETRY_EXC_ERR (the transport retry counter was exhausted: a retry
  failure), ``Watchdog caught collective operation timeout``, ``Call to connect returned
  Connection timed out, retrying``.
"""

from __future__ import annotations

import fnmatch
import os
import re
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from glob import glob
from pathlib import Path
from typing import Protocol

from aifabric.errors import EnvironmentProblem
from aifabric.evidence.ethtool_module import TransceiverModule, parse_ethtool_module
from aifabric.monitor.exposition import Labels, Scrape
from aifabric.monitor.kernel import NetnsHandles

__all__ = [
    "Collector",
    "ModuleCollector",
    "NcclLogCollector",
    "NetCollector",
    "RdmaSysfsCollector",
    "Runner",
    "Target",
    "classify_nccl_line",
    "module_values",
    "run_command",
]


class Collector(Protocol):
    """What the exporter runs on every scrape."""

    name: str

    def collect(self, scrape: Scrape) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Target:
    """One place to collect from: a node name (the ``node`` label), its network namespace
    (``None``: the exporter's own) and which interfaces (shell globs; empty: all but ``lo``)."""

    node: str
    netns: str | None = None
    interfaces: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ("lo",)

    def wants(self, ifname: str) -> bool:
        if any(fnmatch.fnmatchcase(ifname, p) for p in self.exclude):
            return False
        return not self.interfaces or any(fnmatch.fnmatchcase(ifname, p) for p in self.interfaces)


TC_H_ROOT = 0xFFFFFFFF


class NetCollector:
    """ethtool, link, root-qdisc and TCP counters of one or more network namespaces."""

    name = "net"

    def __init__(self, targets: Sequence[Target], *, ethtool: bool = True) -> None:
        self.targets = list(targets)
        self.ethtool = ethtool
        self._handles: dict[int, NetnsHandles] = {}

    def _open(self, i: int) -> NetnsHandles:
        h = self._handles.get(i)
        if h is None:
            try:
                h = self._handles[i] = NetnsHandles.open(self.targets[i].netns)
            except OSError as exc:
                where = self.targets[i].netns or "the host namespace"
                raise EnvironmentProblem(f"cannot open {where}: {exc.strerror or exc}") from None
        return h

    def collect(self, scrape: Scrape) -> None:
        for i, target in enumerate(self.targets):
            try:
                self._collect_one(scrape, target, self._open(i))
            except OSError:
                # a namespace deleted under us: reopen next time, report this scrape's failure
                stale = self._handles.pop(i, None)
                if stale is not None:
                    stale.close()
                raise

    def _collect_one(self, scrape: Scrape, target: Target, h: NetnsHandles) -> None:
        node = ("node", target.node)
        names: dict[int, str] = {}
        for link in h.links():
            if not link.name or not target.wants(link.name):
                continue
            names[link.index] = link.name
            ident: Labels = (node, ("interface", link.name))
            raw: dict[str, float] = dict(link.stats)
            if link.carrier_changes is not None:
                raw["carrier_changes"] = link.carrier_changes
            if link.mtu is not None:
                raw["mtu"] = link.mtu
            if link.oper_up is not None:
                raw["oper_up"] = 1 if link.oper_up else 0
            if link.admin_up is not None:
                raw["admin_up"] = 1 if link.admin_up else 0
            scrape.add_raw("link", ident, raw)
            if self.ethtool:
                counters = h.ethtool.read(link.name)
                if counters:
                    scrape.add_raw("ethtool", ident, counters)
        for q in h.qdiscs():
            ifname = names.get(q.ifindex)
            if ifname is None or q.parent != TC_H_ROOT or q.kind == "noqueue":
                continue
            ident = (node, ("interface", ifname), ("queue", q.handle_text))
            scrape.add_raw("qdisc", ident, q.stats)
        scrape.add_raw("netstat", (node,), h.netstat())

    def close(self) -> None:
        for h in self._handles.values():
            h.close()
        self._handles.clear()


class RdmaSysfsCollector:
    """RDMA port counters from sysfs (``hw_counters`` and the IB PMA ``counters``)."""

    name = "rdma"

    def __init__(
        self, node: str, root: Path = Path("/sys/class/infiniband"), *, rescan_s: float = 60.0
    ) -> None:
        self.node = node
        self.root = root
        self.rescan_s = rescan_s
        self._files: dict[tuple[str, str], dict[str, int]] = {}
        self._scanned = -1e18

    def _scan(self) -> None:
        self._close_files()
        if not self.root.is_dir():
            return
        for dev in sorted(self.root.iterdir()):
            ports = dev / "ports"
            if not ports.is_dir():
                continue
            for port in sorted(ports.iterdir(), key=lambda p: p.name):
                fds: dict[str, int] = {}
                for sub in ("hw_counters", "counters"):
                    folder = port / sub
                    if not folder.is_dir():
                        continue
                    for f in sorted(folder.iterdir()):
                        if f.name == "lifespan" or f.name in fds:
                            continue
                        try:
                            fds[f.name] = os.open(f, os.O_RDONLY | os.O_CLOEXEC)
                        except OSError:
                            continue
                if fds:
                    self._files[(dev.name, port.name)] = fds
        self._scanned = time.monotonic()

    def collect(self, scrape: Scrape) -> None:
        if time.monotonic() - self._scanned > self.rescan_s:
            self._scan()
        for (dev, port), fds in self._files.items():
            raw: dict[str, float] = {}
            for name, fd in fds.items():
                try:
                    text = os.pread(fd, 64, 0)
                    raw[name] = int(text.split()[0])
                except (OSError, ValueError, IndexError):
                    continue  # "N/A (no PMA)", a vanished device
            scrape.add_raw("rdma", (("node", self.node), ("device", dev), ("port", port)), raw)

    def _close_files(self) -> None:
        for fds in self._files.values():
            for fd in fds.values():
                os.close(fd)
        self._files.clear()

    def close(self) -> None:
        self._close_files()


Runner = Callable[[Sequence[str]], str]
"""Runs ``argv`` and returns its stdout; raises :class:`EnvironmentProblem` on failure."""


def run_command(argv: Sequence[str], *, timeout_s: float = 10.0) -> str:
    """The default runner (``ethtool -m``, SONiC's ``sonic-db-cli``/``show``): ``argv`` without
    a shell; stdout, or one-line :class:`EnvironmentProblem` (missing binary, timeout, non-zero
    exit with stderr's first line). Long arguments (a Lua script) are left out of messages."""
    shown = " ".join(a for a in argv[:4] if len(a) < 40 and "\n" not in a)
    try:
        done = subprocess.run(
            list(argv), capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except FileNotFoundError:
        raise EnvironmentProblem(f"{argv[0]}: command not found") from None
    except subprocess.TimeoutExpired:
        raise EnvironmentProblem(f"{shown}: no answer within {timeout_s:g} s") from None
    except OSError as exc:
        raise EnvironmentProblem(f"{shown}: {exc.strerror or exc}") from None
    if done.returncode != 0:
        err = (done.stderr.strip().splitlines() or [""])[0][:200]
        raise EnvironmentProblem(f"{shown}: exit {done.returncode}: {err}")
    return done.stdout


def module_values(mod: TransceiverModule) -> dict[str, float]:
    """Raw ``module`` source values of one parsed module: ``lane1:rx_power_dbm``,
    ``temperature_c``, ``threshold:rx_power_dbm:low_alarm``... (the catalogue's names)."""
    raw: dict[str, float] = {}
    if mod.temperature_c is not None:
        raw["temperature_c"] = mod.temperature_c
    if mod.voltage_v is not None:
        raw["voltage_v"] = mod.voltage_v
    for ln in mod.lanes:
        for key in ("rx_power_dbm", "tx_power_dbm", "tx_bias_ma"):
            v = getattr(ln, key)
            if v is None and key.endswith("_dbm") and getattr(ln, key[:-4] + "_mw") == 0.0:
                v = float("-inf")  # no light at all: 0 mW is -inf dBm, and alerts must see it
            if v is not None:
                raw[f"lane{ln.lane}:{key}"] = v
    for unit_key, thr in mod.thresholds.items():
        for level in ("high_alarm", "high_warning", "low_warning", "low_alarm"):
            v = getattr(thr, level)
            if v is not None:
                raw[f"threshold:{unit_key}:{level}"] = v
    return raw


@dataclass
class _ModuleState:
    values: dict[str, dict[str, float]] = field(default_factory=dict)
    unsupported: set[str] = field(default_factory=set)
    errors: int = 0


class ModuleCollector:
    """Optics DOM per interface, read by ``ethtool -m`` in a background thread."""

    name = "module"

    def __init__(
        self,
        node: str,
        interfaces: Sequence[str],
        *,
        netns: str | None = None,
        interval_s: float = 60.0,
        runner: Runner = run_command,
    ) -> None:
        self.node = node
        self.interfaces = list(interfaces)
        self.netns = netns
        self.interval_s = interval_s
        self.runner = runner
        self._state = _ModuleState()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def refresh(self) -> None:
        """Read every interface's module once (the background thread calls this)."""
        values: dict[str, dict[str, float]] = {}
        for ifname in self.interfaces:
            if ifname in self._state.unsupported:
                continue
            argv = ["ethtool", "-m", ifname]
            if self.netns:
                argv = ["ip", "netns", "exec", self.netns, *argv]
            try:
                text = self.runner(argv)
            except EnvironmentProblem:
                self._state.unsupported.add(ifname)  # no module, or the driver cannot read it
                continue
            for rec in parse_ethtool_module(text).records:
                if isinstance(rec, TransceiverModule) and rec.present:
                    values[ifname] = module_values(rec)
                    break
        with self._lock:
            self._state.values = values

    def start(self) -> None:
        if self._thread is not None:
            return

        def loop() -> None:
            while not self._stop.is_set():
                self.refresh()
                self._stop.wait(self.interval_s)

        self._thread = threading.Thread(target=loop, name="aifabric-dom", daemon=True)
        self._thread.start()

    def collect(self, scrape: Scrape) -> None:
        with self._lock:
            values = dict(self._state.values)
        for ifname, raw in values.items():
            scrape.add_raw("module", (("node", self.node), ("interface", ifname)), raw)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1)


_NCCL_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("timeout", re.compile(
        r"collective operation timeout|Timeout\(ms\)=|NCCL[^\n]{0,200}?(?:timed out|[Tt]imeout)"
        r"|NCCL_TIMEOUT|ncclTimeout")),
    ("retry", re.compile(
        r"with (?:error|status=) ?12\b|IBV_WC_RETRY_EXC_ERR|[Rr]etry counter exceeded"
        r"|, retrying|[Rr]etrying")),
    ("error", re.compile(
        r"NCCL ERROR|NCCL error|ncclSystemError|ncclRemoteError|ncclInternalError"
        r"|ncclUnhandledCudaError|ncclInvalidUsage|unhandled system error|remote process exited"
        r"|NCCL WARN [^\n]{0,200}?(?:[Ff]ailed|[Ee]rror)")),
    ("warn", re.compile(r"NCCL WARN")),
)  # fmt: skip


def classify_nccl_line(line: str) -> str | None:
    """The kind of an NCCL / PyTorch log line: timeout, retry, error, warn, or ``None``.

    >>> classify_nccl_line("h1:5:9 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<5> "
    ...                    "with error 12, opcode 0, len 0, vendor err 129")
    'retry'
    >>> classify_nccl_line("[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(...)")
    'timeout'
    """
    if "NCCL" not in line and "nccl" not in line and "Watchdog" not in line:
        return None
    for kind, rx in _NCCL_KINDS:
        if rx.search(line):
            return kind
    return None


@dataclass
class _Tail:
    inode: int
    offset: int
    partial: bytes = b""


class NcclLogCollector:
    """Counts NCCL / PyTorch log lines by kind in files matching ``globs`` (new bytes only).

    A file is read from its end when first seen (``from_start=False``, the default: history
    before the exporter started is not news) and followed across rotation (a new inode or a
    shorter file starts again from 0). At most ``max_bytes`` are read per file per scrape, so a
    burst of logging never stalls a scrape; the rest is read on the next ones.
    """

    name = "nccl_log"

    def __init__(
        self, node: str, globs: Sequence[str], *, from_start: bool = False, max_bytes: int = 8 << 20
    ) -> None:
        self.node = node
        self.globs = list(globs)
        self.from_start = from_start
        self.max_bytes = max_bytes
        self.counts: dict[str, int] = {"timeout": 0, "retry": 0, "error": 0, "warn": 0}
        self._tails: dict[str, _Tail] = {}

    def _read(self, path: str) -> None:
        try:
            st = os.stat(path)
        except OSError:
            self._tails.pop(path, None)
            return
        tail = self._tails.get(path)
        if tail is None:
            tail = self._tails[path] = _Tail(st.st_ino, 0 if self.from_start else st.st_size)
        elif tail.inode != st.st_ino or st.st_size < tail.offset:
            tail.inode, tail.offset, tail.partial = st.st_ino, 0, b""
        if st.st_size <= tail.offset:
            return
        try:
            with open(path, "rb") as f:
                f.seek(tail.offset)
                data = f.read(self.max_bytes)
        except OSError:
            return
        tail.offset += len(data)
        data = tail.partial + data
        lines = data.split(b"\n")
        tail.partial = lines.pop()[-65536:]
        for raw in lines:
            kind = classify_nccl_line(raw.decode("utf-8", "replace"))
            if kind is not None:
                self.counts[kind] += 1

    def collect(self, scrape: Scrape) -> None:
        for pattern in self.globs:
            for path in sorted(glob(pattern)):
                self._read(path)
        scrape.add_raw("nccl_log", (("node", self.node),), self.counts)

    def close(self) -> None:
        self._tails.clear()
