"""UCX tools: ``ucx_info`` (kind ``ucx-info``) and ``ucx_perftest`` (kind ``ucx-perftest``).

(Over 800 lines because it reads two tools and the layouts of every UCX release from 1.4 to 1.22
that users paste; split it by tool if it grows further.)

``ucx_info`` prints, depending on its flags (``src/tools/info/ucx_info.c``):

* ``-v``: the version block. UCX 1.14 and later (``version_info.c``)::

      # Library version: 1.15.0
      # Library path: /lib64/libucs.so.0
      # API headers version: 1.15.0
      # Git branch '', revision 348d14f
      # Configured with: --build=... --with-verbs ...

  UCX 1.13 prints ``# Version 1.13.0`` and ``# Git branch 'x', revision y``; UCX 1.12 and older
  ``# UCT version=1.11.2 revision 0000000`` and ``# configured with: ...`` (``build_info.c``)
  → :class:`UcxVersion`. ``-b`` adds ``#define NAME VALUE`` lines → :class:`UcxBuildConfig`.
* ``-d``: the memory domains and their transports (``tl_info.c``). UCX 1.8 and later print one
  block per interface::

      # Memory domain: mlx5_0
      #     Component: ib
      #      Transport: rc_mlx5
      #         Device: mlx5_0:1
      #           Type: network
      #  System device: mlx5_0 (0)
      #      capabilities:
      #            bandwidth: 23588.47/ppn + 0.00 MB/sec
      #              latency: 600 + 1.000 * N nsec

  UCX 1.7 and older print ``#   Transport: rc`` once and then ``#   Device: mlx5_0:1`` for each
  device of that transport, with ``bandwidth: 11794.23 MB/sec`` and ``latency: 600 nsec + 1 * N``.
  ``# Connection manager: rdmacm`` blocks, ``(No supported devices found)`` and ``< failed to
  open interface >`` lines are understood. ``ucx_info -d | grep Transport`` captures (Transport
  lines only) are complete transport lists and are read the same way. Each interface becomes a
  :class:`UcxTransport`; each listing (one ``ucx_info -d`` run) one :class:`UcxDevices` summary:
  which transports exist, which of them are RDMA (``rc``/``dc``/``ud`` families, ``srd`` of EFA,
  ``cm``), which IB devices (UCX names them ``device:port``) have no RDMA transport.
* ``-c``: the configuration, ``UCX_NAME=value`` lines (``ucs_config_parser_print_opts``) →
  :class:`UcxConfig`.

UCX's ``MB`` is ``UCS_MBYTE`` (2^20 bytes): bandwidths are kept raw and converted to Gb/s
(``_gbps``). ``bandwidth: S/ppn + D`` is a shared part (divided among the processes of a node)
plus a dedicated part; their sum is UCX's estimate of the interface's bandwidth.

``ucx_perftest`` (``src/tools/perf/perftest.c``, ``perftest_run.c``) prints an optional test box
(``| API: protocol layer |``, ``| Test: tag match bandwidth |``, ``| Message size: 1048576 |``,
``| Send memory: host |``...), the results header (``|  latency (usec)  |  bandwidth (MB/s)  |
message rate (msg/s) |`` with ``overhead`` instead of ``latency`` for bandwidth tests, and a
``50.0%ile`` or, in old versions, ``typical`` column), progress rows (``[thread 0]`` prefix in
OpenMP builds) and a ``Final:`` row of 8 numbers (4 in multi-threaded runs: iterations, latency,
bandwidth, message rate). ``print_progress()`` divides bandwidth by 1024*1024: the ``MB/s``
column is MiB/s. The command line (``ucx_perftest HOST -t tag_bw -s 1048576 -m cuda``) and
``UCX_TLS=``/``UCX_NET_DEVICES=`` assignments before it are read when the capture shows them;
``$((1024*1024*100))`` sizes are evaluated. Each run → :class:`UcxPerftestRun`.

Sources: openucx/ucx ``src/tools/info/{ucx_info,version_info,build_info,tl_info}.c`` and
``src/tools/perf/{perftest,perftest_run}.c`` (tags v1.4.0 to v1.22.0), and the real captures under
``tests/fixtures/evidence/ucx-info/`` and ``tests/fixtures/evidence/ucx-perftest/``.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record, finite_or_none
from aifabric.evidence.registry import register

__all__ = [
    "UcxBuildConfig",
    "UcxConfig",
    "UcxDevices",
    "UcxMemoryDomain",
    "UcxPerftestRow",
    "UcxPerftestRun",
    "UcxTransport",
    "UcxVersion",
    "is_rdma_transport",
    "mib_per_s_to_gbps",
    "parse_ucx_info",
    "parse_ucx_perftest",
]

MIB = 1 << 20
"""Bytes per UCX ``MB`` (``UCS_MBYTE``)."""

_RDMA_TL_RE = re.compile(r"^(?:(?:rc|dc|ud)(?:_\w+)?|srd|cm|gga|ugni_\w+)$")
_IB_DEVICE_RE = re.compile(r"^\S+:\d+$")


def is_rdma_transport(name: str) -> bool:
    """``rc_mlx5``, ``rc_verbs``, ``dc_mlx5``, ``ud_verbs``, old ``rc``/``ud``/``cm``, EFA
    ``srd``: the UCX transports that move data with RDMA (not ``tcp``, ``self``, ``sysv``,
    ``posix``, ``mm``, ``cma``, ``knem``, ``xpmem``, ``cuda_*``, ``gdr_copy``)."""
    return _RDMA_TL_RE.match(name) is not None


def mib_per_s_to_gbps(value: float) -> float:
    """UCX ``MB/s`` (MiB/s) → Gb/s."""
    return value * MIB * 8 / 1e9


# ---- records: ucx_info -------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class UcxVersion(Record):
    """``ucx_info -v``."""

    record_type: ClassVar[str] = "ucx_version"

    library_version: str | None = None
    """``# Library version:`` (1.14+), ``# Version`` (1.13) or ``UCT version=`` (1.12 and older)."""
    library_path: str | None = None
    api_headers_version: str | None = None
    git_branch: str | None = None
    git_revision: str | None = None
    configure_flags: str | None = None
    with_verbs: bool | None = None
    """``--with-verbs`` in the configure flags → True, ``--without-verbs`` → False, else None."""


@dataclass(slots=True, kw_only=True)
class UcxBuildConfig(Record):
    """``ucx_info -b``: the ``#define`` lines of the build."""

    record_type: ClassVar[str] = "ucx_build"

    defines: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class UcxConfig(Record):
    """``ucx_info -c``: ``UCX_NAME=value`` lines, in order (a later value wins)."""

    record_type: ClassVar[str] = "ucx_config"

    values: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class UcxTransport(Record):
    """One transport on one device (one interface block of ``ucx_info -d``)."""

    record_type: ClassVar[str] = "ucx_transport"

    transport: str
    device: str | None = None
    """``mlx5_0:1``, ``eth0``, ``memory``; None in ``grep Transport`` captures."""
    memory_domain: str | None = None
    component: str | None = None
    device_type: str | None = None
    """``network``, ``intra-node``, ``accelerator``, ``loopback`` (UCX 1.12+)."""
    system_device: str | None = None
    bandwidth_raw: str | None = None
    bandwidth_gbps: float | None = None
    """Shared plus dedicated bandwidth, converted from MiB/s."""
    latency_ns: float | None = None
    overhead_ns: float | None = None
    failed: bool = False
    """``< failed to open interface >`` (or ``< failed to query interface >``)."""

    @property
    def rdma(self) -> bool:
        return is_rdma_transport(self.transport)


@dataclass(slots=True, kw_only=True)
class UcxMemoryDomain:
    """One ``# Memory domain:`` block of a listing."""

    name: str
    line: int
    component: str | None = None
    devices: list[str] = field(default_factory=list)
    no_devices: bool = False
    """``(No supported devices found)`` / ``< no supported devices found >`` was printed."""


@dataclass(slots=True, kw_only=True)
class UcxDevices(Record):
    """One ``ucx_info -d`` listing, summarised."""

    record_type: ClassVar[str] = "ucx_devices"

    command: str | None = None
    transports: list[str] = field(default_factory=list)
    """Transport names in order of first appearance."""
    rdma_transports: list[str] = field(default_factory=list)
    device_transports: dict[str, list[str]] = field(default_factory=dict)
    """Device → its transports (devices of ``grep Transport`` captures are unknown)."""
    ib_devices: list[str] = field(default_factory=list)
    """Devices UCX names ``device:port`` (InfiniBand/RoCE HCAs) or of an ``ib`` component."""
    ib_devices_without_rdma: list[str] = field(default_factory=list)
    memory_domains: list[UcxMemoryDomain] = field(default_factory=list)
    connection_managers: list[str] = field(default_factory=list)
    transports_only: bool = False
    """Only ``Transport:`` lines were seen (a ``grep Transport`` capture)."""

    @property
    def has_rdma(self) -> bool:
        return bool(self.rdma_transports)


# ---- records: ucx_perftest ---------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class UcxPerftestRow:
    """One progress or ``Final:`` row. Bandwidth in MiB/s as printed."""

    line: int
    stage: str | None = None
    """``thread 0``, ``final`` or None (a bare progress row)."""
    iterations: float | None = None
    latency_percentile_us: float | None = None
    latency_avg_us: float | None = None
    latency_overall_us: float | None = None
    bw_avg_mibps: float | None = None
    bw_overall_mibps: float | None = None
    msgrate_avg: float | None = None
    msgrate_overall: float | None = None

    @property
    def bw_overall_gbps(self) -> float | None:
        return None if self.bw_overall_mibps is None else mib_per_s_to_gbps(self.bw_overall_mibps)


@dataclass(slots=True, kw_only=True)
class UcxPerftestRun(Record):
    """One ``ucx_perftest`` run: its parameters (when visible) and its rows."""

    record_type: ClassVar[str] = "ucx_perftest"

    command: str | None = None
    test: str | None = None
    """``-t`` name (``tag_bw``, ``ucp_put_bw``, ``am_lat``...) or the ``=== name ===`` banner."""
    test_description: str | None = None
    """``| Test:`` of the box (``tag match bandwidth``)."""
    api: str | None = None
    data_layout: str | None = None
    send_memory: str | None = None
    recv_memory: str | None = None
    message_size_bytes: int | None = None
    window_size: int | None = None
    threads: int | None = None
    server: str | None = None
    """The host the client connected to (positional argument), None on the server side."""
    env: dict[str, str] = field(default_factory=dict)
    """``UCX_*`` assignments on or before the command line (``UCX_TLS``, ``UCX_NET_DEVICES``)."""
    metric: str | None = None
    """``latency`` or ``overhead``: the first column group of the header."""
    percentile: float | None = None
    rows: list[UcxPerftestRow] = field(default_factory=list)
    final: UcxPerftestRow | None = None

    @property
    def is_bandwidth_test(self) -> bool:
        if self.test is not None and ("bw" in self.test or self.test.endswith("_mr")):
            return True
        desc = self.test_description or ""
        return "bandwidth" in desc or self.metric == "overhead"

    @property
    def result(self) -> UcxPerftestRow | None:
        """The ``Final:`` row, else the last progress row."""
        if self.final is not None:
            return self.final
        return self.rows[-1] if self.rows else None

    @property
    def transports(self) -> list[str]:
        tls = self.env.get("UCX_TLS")
        return [t.strip() for t in tls.split(",") if t.strip()] if tls else []


# ---- shared line shapes ------------------------------------------------------------------------

_LOG_RE = re.compile(
    r"^\s*\[\d+\.\d+\]\s*\[|\bUCX\s+(?:ERROR|WARN|INFO|DIAG|DEBUG|TRACE|REQ|DATA|ASYNC|FUNC|"
    r"POLL|PRINT|FATAL)\b"
)
"""UCX log lines (``[1704982673.8] [host:pid:0]  file.c:NN UCX  WARN ...``)."""
_TIMESTAMP_TAIL_RE = re.compile(r"\[\d{6,}\.\d+\].*$")
_UCX_ASSIGN_RE = re.compile(r"^\s*(?:export\s+)?(UCX_[A-Z0-9_]+)=((?:.*\S)?)\s*$")  # linear
_NCCL_ASSIGN_RE = re.compile(r"^\s*(?:export\s+)?NCCL_[A-Z0-9_]+\s*=", re.MULTILINE)


def _is_log(line: str) -> bool:
    return _LOG_RE.search(line) is not None


# ---- ucx_info ----------------------------------------------------------------------------------

_INFO_MARKERS = (
    "# UCP context",
    "# Memory domain:",
    "# Library version:",
    "# UCT version=",
    "# Connection manager:",
    "# API headers version:",
)
_TRANSPORT_LINE_RE = re.compile(r"^#\s+Transport:\s*\S+\s*$", re.MULTILINE)
_HASHLESS_RE = re.compile(
    r"^[ \t]*(?:Memory domain|Transport|Connection manager):[ \t]*\S+[ \t]*$", re.MULTILINE
)
"""A ``ucx_info -d`` block header whose ``#`` the paste lost: GitHub and other Markdown
renderers turn a ``# Transport: rc_mlx5`` line of an unfenced paste into a heading, and the
copy keeps only the words."""
_HASHLESS_VERSION_RE = re.compile(
    r"^[ \t]*+(?:Library version: \d|Library path: |API headers version: \d"
    r"|Git branch '|Configured with: )",
    re.MULTILINE,
)
"""``ucx_info -v`` (1.14+) lines whose ``#`` a Markdown renderer took (the same loss as
:data:`_HASHLESS_RE`)."""
_CONFIG_LINE_RE = re.compile(r"^UCX_[A-Z0-9_]+=", re.MULTILINE)
_GIT_LINE_RE = re.compile(
    r"^#[ \t]*+(?:Git|SCM) branch '[^'\n]*+',?[ \t]++revision[ \t]", re.MULTILINE
)
_CONFIGURED_LINE_RE = re.compile(r"^#[ \t]*+[Cc]onfigured with: --", re.MULTILINE)

_VERSION_RES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("library_version", re.compile(r"^#\s*Library version:\s*(\S+)")),
    ("library_path", re.compile(r"^#\s*Library path:\s*(.*\S|\s)\s*$")),
    ("api_headers_version", re.compile(r"^#\s*API headers version:\s*(\S+)")),
    ("library_version", re.compile(r"^#\s*Version\s+(\d[\w.\-]*)(?![\w.\-])")),
    ("configure_flags", re.compile(r"^#\s*[Cc]onfigured with:\s*((?:.*\S)?)\s*$")),
)
_UCT_VERSION_RE = re.compile(r"^#\s*UCT version=(\S+)(?:\s+revision\s+(\S+))?")
_GIT_RE = re.compile(r"^#\s*(?:Git|SCM) branch '([^']*)',?\s+revision\s+(\S+)")
_DEFINE_RE = re.compile(r"^#define\s+(\w+)(?:\s+((?:.*\S)?))?\s*$")
_MD_RE = re.compile(r"^#\s*Memory domain:\s*(\S+)")
_UCP_RESOURCE_RE = re.compile(
    r"^#[ \t]*+resource[ \t]++\d++[ \t]*+:[ \t]*+md[ \t]++\d++[ \t]++dev[ \t]++\d++[ \t]++"
    r"flags[ \t]++\S++[ \t]++(?P<tl>[\w\-]++)/(?P<dev>\S++)"
)
"""``ucx_info -e`` (``-u t``): the resources of the ``# UCP context`` block,
``#      resource 0  :  md 0  dev 0  flags -- rc_mlx5/mlx5_0:1`` (ucp_context_print_info,
src/ucp/core/ucp_context.c)."""
_COMPONENT_RE = re.compile(r"^#\s*[Cc]omponent:\s*(\S+)")
_TL_RE = re.compile(r"^#\s*Transport:\s*(\S+)\s*$")
_DEV_RE = re.compile(r"^#\s*Device:\s*(\S+)\s*$")
# ``(.*\S|\s)`` is ``(.+?)`` before ``\s*$`` in one pass (up to the last non-blank, or one blank
# when there is none); the lazy form rescans a run of blanks at every character (quadratic)
_TYPE_RE = re.compile(r"^#\s*Type:\s*(.*\S|\s)\s*$")
_SYSDEV_RE = re.compile(r"^#\s*System device:\s*(.*\S|\s)\s*$")
_CM_RE = re.compile(r"^#\s*Connection manager:\s*(\S+)")
_BW_RE = re.compile(r"^#\s*bandwidth:\s*(.*\S|\s)\s*$")
# numbers are read from the first character of their run only (a search rescanned a long run of
# digits from each of them)
_BW_TWO_RE = re.compile(r"(?<![\d.])([\d.]++)\s*+(?:/ppn)?\s*+\+\s*+([\d.]++)\s*+MB/sec")
_BW_ONE_RE = re.compile(r"(?<![\d.])([\d.]++)\s*+MB/sec")
_LAT_RE = re.compile(r"^#\s*latency:\s*([\d.]+)")
_OVERHEAD_RE = re.compile(r"^#\s*overhead:\s*([\d.]+)\s*nsec")
_NO_DEVICES_RE = re.compile(
    r"^#\s*(?:\(No supported devices found\)|<\s*no supported devices found\s*>)"
)
_FAILED_IFACE_RE = re.compile(r"^#\s*<\s*failed to (?:open|query) interface\s*>")
_HASH_LINE_RE = re.compile(r"^#")


def _detect_ucx_info(text: str) -> float:
    if any(m in text for m in _INFO_MARKERS):
        return 0.95
    if "revision" in text and _GIT_LINE_RE.search(text) and _CONFIGURED_LINE_RE.search(text):
        return 0.9  # ucx_info -v of 1.13 ("# Version 1.13.1"): its git and configure lines
    if "Library version: " in text and len(_HASHLESS_VERSION_RE.findall(text, 0, 20_000)) >= 3:
        return 0.85  # ucx_info -v with its "#" lost: version, path, headers, configure
    if "ransport" not in text and "UCX_" not in text and "ucx_info" not in text:
        return 0.0  # every later marker needs one of these: cheap exit
    if _TRANSPORT_LINE_RE.search(text) is not None:
        return 0.9 if "ucx_info" in text or "Device:" in text else 0.6
    if "Device:" in text and "#" not in text and len(_HASHLESS_RE.findall(text)) >= 2:
        return 0.8  # the same listing with its "#" lost
    if "ucx_info" in text and "#define" in text:
        return 0.9
    if _NCCL_ASSIGN_RE.search(text) is None and len(_CONFIG_LINE_RE.findall(text)) >= 10:
        return 0.85
    return 0.0


def _with_verbs(flags: str) -> bool | None:
    if "--without-verbs" in flags:
        return False
    if "--with-verbs" in flags:
        return True
    return None


def _bandwidth(raw: str) -> float | None:
    m = _BW_TWO_RE.search(raw)
    if m is not None:
        a, b = finite_or_none(m.group(1)), finite_or_none(m.group(2))  # "1.2.3": unreadable
        return mib_per_s_to_gbps(a + b) if a is not None and b is not None else None
    m = _BW_ONE_RE.search(raw)
    if m is not None:
        one = finite_or_none(m.group(1))
        return mib_per_s_to_gbps(one) if one is not None else None
    return None


class _InfoState:
    """The listing being read and its current memory domain, transport and interface."""

    def __init__(self, res: ParseResult) -> None:
        self.res = res
        self.listing: UcxDevices | None = None
        self.md: UcxMemoryDomain | None = None
        self.tl: str | None = None
        self.tl_line = 0
        self.tl_has_device = False
        self.iface: UcxTransport | None = None
        self.version: UcxVersion | None = None
        self.build: UcxBuildConfig | None = None
        self.config: UcxConfig | None = None
        self.pending_command: str | None = None
        self.saw_block_line = False

    # -- listings

    def ensure_listing(self, lineno: int) -> UcxDevices:
        if self.listing is None:
            self.listing = UcxDevices(line=lineno, command=self.pending_command)
            self.pending_command = None
            self.saw_block_line = False
            self.res.records.append(self.listing)
        return self.listing

    def close_transport(self) -> None:
        """A ``Transport:`` line with no ``Device:`` after it (``grep Transport``)."""
        if self.tl is not None and not self.tl_has_device and self.listing is not None:
            self.add_iface(UcxTransport(line=self.tl_line, transport=self.tl))
        self.tl, self.tl_has_device, self.iface = None, False, None

    def close_listing(self) -> None:
        self.close_transport()
        lst = self.listing
        if lst is not None:
            ib = [d for md in lst.memory_domains if md.component == "ib" for d in md.devices]
            for dev in lst.device_transports:
                if _IB_DEVICE_RE.match(dev) and dev not in ib:
                    ib.append(dev)
            lst.ib_devices = list(dict.fromkeys(ib))
            lst.ib_devices_without_rdma = [
                d
                for d in lst.ib_devices
                if not any(is_rdma_transport(t) for t in lst.device_transports.get(d, []))
            ]
            lst.transports_only = not self.saw_block_line
        self.listing, self.md = None, None

    def add_iface(self, iface: UcxTransport) -> None:
        lst = self.ensure_listing(iface.line)
        if self.md is not None:
            iface.memory_domain = self.md.name
            iface.component = self.md.component
            if iface.device is not None and iface.device not in self.md.devices:
                self.md.devices.append(iface.device)
        self.res.records.append(iface)
        if iface.transport not in lst.transports:
            lst.transports.append(iface.transport)
        if iface.rdma and iface.transport not in lst.rdma_transports:
            lst.rdma_transports.append(iface.transport)
        if iface.device is not None:
            tls = lst.device_transports.setdefault(iface.device, [])
            if iface.transport not in tls:
                tls.append(iface.transport)
        lst.end_line = max(lst.end_line or lst.line, iface.line)


@register(
    "ucx-info",
    summary="ucx_info -v / -d / -c / -b (UCX version, transports and devices, configuration)",
    detect=_detect_ucx_info,
    refs=("S5", "S17"),
)
def parse_ucx_info(text: str) -> ParseResult:
    """``ucx_info`` output → version, build, config, transport and listing records."""
    if "#" not in text and len(_HASHLESS_RE.findall(text)) >= 2:
        # a listing whose "#" a Markdown renderer took: restored on every line (line numbers
        # unchanged)
        text = "\n".join(f"# {ln}" if ln.strip() else ln for ln in text.split("\n"))
    res = ParseResult("ucx-info")
    st = _InfoState(res)
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if "ucx_info" in line and not line.startswith("#"):
            st.close_listing()
            st.version, st.build, st.config = None, None, None
            st.pending_command = line
            continue
        if _is_log(line):
            continue
        if line[0] != "#" and _HASHLESS_VERSION_RE.match(line):
            line = f"# {line}"
        if _read_version_line(st, lineno, line):
            continue
        dm = _DEFINE_RE.match(line)
        if dm is not None:
            if st.build is None:
                st.build = UcxBuildConfig(line=lineno)
                res.records.append(st.build)
            st.build.defines[dm.group(1)] = dm.group(2) or ""
            st.build.end_line = lineno
            continue
        am = _UCX_ASSIGN_RE.match(line)
        if am is not None:
            if st.config is None:
                st.config = UcxConfig(line=lineno)
                res.records.append(st.config)
            st.config.values[am.group(1)] = am.group(2)
            st.config.end_line = lineno
            continue
        if _HASH_LINE_RE.match(line):
            _read_listing_line(st, lineno, line)
            continue
        res.warn(lineno, "expected a ucx_info line ('# ...', UCX_NAME=value, #define)", raw)
    st.close_listing()
    return res


def _read_version_line(st: _InfoState, lineno: int, line: str) -> bool:
    def version() -> UcxVersion:
        if st.version is None:
            st.version = UcxVersion(line=lineno)
            st.res.records.append(st.version)
        st.version.end_line = lineno
        return st.version

    um = _UCT_VERSION_RE.match(line)
    if um is not None:
        v = version()
        v.library_version = um.group(1)
        v.git_revision = um.group(2)
        return True
    gm = _GIT_RE.match(line)
    if gm is not None:
        v = version()
        v.git_branch, v.git_revision = gm.group(1), gm.group(2)
        return True
    for name, rx in _VERSION_RES:
        m = rx.match(line)
        if m is not None:
            v = version()
            setattr(v, name, m.group(1))
            if name == "configure_flags":
                v.with_verbs = _with_verbs(m.group(1))
            return True
    return False


def _read_listing_line(st: _InfoState, lineno: int, line: str) -> None:
    m = _UCP_RESOURCE_RE.match(line)
    if m is not None:  # ucx_info -e/-u: a transport the UCP context selected
        st.close_transport()
        st.res.records.append(
            UcxTransport(line=lineno, transport=m.group("tl"), device=m.group("dev"))
        )
        return
    m = _MD_RE.match(line)
    if m is not None:
        st.close_transport()
        lst = st.ensure_listing(lineno)
        st.md = UcxMemoryDomain(name=m.group(1), line=lineno)
        if st.md.name.startswith("ib/"):
            st.md.component = "ib"
        lst.memory_domains.append(st.md)
        st.saw_block_line = True
        lst.end_line = lineno
        return
    m = _CM_RE.match(line)
    if m is not None:
        st.close_transport()
        lst = st.ensure_listing(lineno)
        st.md = None
        lst.connection_managers.append(m.group(1))
        st.saw_block_line = True
        lst.end_line = lineno
        return
    m = _TL_RE.match(line)
    if m is not None:
        st.close_transport()
        st.ensure_listing(lineno)
        st.tl, st.tl_line, st.tl_has_device = m.group(1), lineno, False
        return
    m = _DEV_RE.match(line)
    if m is not None:
        st.saw_block_line = True
        if st.tl is None:
            st.res.warn(lineno, "ucx_info Device: line without a Transport: line before it", line)
            return
        st.tl_has_device = True
        st.iface = UcxTransport(line=lineno, transport=st.tl, device=m.group(1))
        st.add_iface(st.iface)
        return
    if st.listing is None and not line.strip("#").strip():
        return  # the '#' separator ucx_info prints first
    if st.listing is not None:
        st.listing.end_line = lineno
    _read_attribute(st, lineno, line)


def _read_attribute(st: _InfoState, lineno: int, line: str) -> None:
    md, iface = st.md, st.iface
    m = _COMPONENT_RE.match(line)
    if m is not None and md is not None:
        md.component = m.group(1)
        return
    if _NO_DEVICES_RE.match(line):
        if md is not None:
            md.no_devices = True
        return
    if iface is None:
        return  # memory-domain attributes (register, remote key, memory types...)
    if _FAILED_IFACE_RE.match(line):
        iface.failed = True
        return
    m = _TYPE_RE.match(line)
    if m is not None:
        iface.device_type = m.group(1)
        return
    m = _SYSDEV_RE.match(line)
    if m is not None:
        iface.system_device = m.group(1)
        return
    m = _BW_RE.match(line)
    if m is not None:
        iface.bandwidth_raw = m.group(1)
        iface.bandwidth_gbps = _bandwidth(m.group(1))
        return
    m = _LAT_RE.match(line)
    if m is not None:
        iface.latency_ns = finite_or_none(m.group(1))
        return
    m = _OVERHEAD_RE.match(line)
    if m is not None:
        iface.overhead_ns = finite_or_none(m.group(1))
    iface.end_line = lineno


# ---- ucx_perftest ------------------------------------------------------------------------------

_PERF_HEADER_RE = re.compile(r"\|\s*(latency|overhead)\s*\(usec\)\s*\|\s*bandwidth \(MB/s\)")
_PERF_STAGE_RE = re.compile(
    r"^\|\s*(?:Stage|Test)\s*\|\s*# iterations\s*\|\s*(?:([\d.]+)%ile|typical)\s*\|"
)
# the value ends at its last non-blank before the closing "|" (greedy); a lazy value between two
# ``\s*`` tried every split of a run of blanks (cubic)
_PERF_BOX_RE = re.compile(r"^\|\s*([A-Za-z][A-Za-z ]*+):\s++((?:.*\S)?)\s*\|\s*$")
_PERF_RULE_RE = re.compile(r"^\+[-+\w/]*[-+]$")
_PERF_BANNER_RE = re.compile(r"^=+[ \t]*([^\s=]+)[ \t]*=+$")  # name without '=': linear
_PERF_ROW_RE = re.compile(
    r"^(?:\[thread\s+(\d+)\]|(Final:))?\s*([-+\w.,']+(?:\s+[-+\w.,']+){3,7})$"
)
# with a "." the digits before it and after it are read once each; without, one backtrack finds
# the last digit (``[\d,']*\.?\d+`` split a run of digits every way: quadratic)
_PERF_NUM_RE = re.compile(
    r"^[-+]?(?:(?:[\d,']*+\.\d++|[\d,']*\d)(?:[eE][-+]?\d+)?|inf|nan|-nan)$", re.I
)
_PERF_QUIET = ("Waiting for connection", "Accepted connection from")
# the lookahead checks "$(( digits, blanks and * ))" in one scan before the groups are split
# (three overlapping ``[\d\s*]`` runs were tried every way: exponential on a long line)
_ARITH_RE = re.compile(r"^\$\(\((?=[\d\s*]+\)\)$)\s*([\d\s*]+)\s*\)\)$")

_BOX_FIELDS = {
    "API": "api",
    "Test": "test_description",
    "Data layout": "data_layout",
    "Send memory": "send_memory",
    "Recv memory": "recv_memory",
}


def _detect_ucx_perftest(text: str) -> float:
    if "| # iterations |" in text or _PERF_HEADER_RE.search(text) is not None:
        return 0.95
    if "ucx_perftest" in text and "Final:" in text:
        return 0.9
    if "| Message size:" in text and "| API:" in text:
        return 0.9
    return 0.0


def _perf_number(cell: str) -> float | None:
    c = cell.replace(",", "").replace("'", "")
    low = c.lower()
    if low in {"inf", "+inf"}:
        return None
    if "nan" in low:
        return None
    return float(c)


def _size(value: str) -> int | None:
    m = _ARITH_RE.match(value)
    if m is not None:
        product = 1
        for part in m.group(1).split("*"):
            if not part.strip():
                return None
            product *= int(part)
        return product
    first = value.split(",", maxsplit=1)[0]
    return int(first) if first.isdecimal() else None


def _read_command(run: UcxPerftestRun, command: str) -> None:
    run.command = command
    cmd = _TIMESTAMP_TAIL_RE.sub("", command).strip()
    try:
        tokens = shlex.split(cmd, comments=False, posix=True)
    except ValueError:
        tokens = cmd.split()
    idx = next((i for i, t in enumerate(tokens) if t.endswith("ucx_perftest")), None)
    if idx is None:
        return
    for tok in tokens[:idx]:
        am = _UCX_ASSIGN_RE.match(tok)
        if am is not None:
            run.env[am.group(1)] = am.group(2)
    args = tokens[idx + 1 :]
    i = 0
    while i < len(args):
        tok = args[i]
        val = args[i + 1] if i + 1 < len(args) else None
        if tok.startswith("-") and len(tok) == 2 and val is not None and not val.startswith("-"):
            opt = tok[1]
            if opt == "t":
                run.test = val
            elif opt == "s":
                run.message_size_bytes = _size(val)
            elif opt == "m":
                mems = val.split(",")
                run.send_memory = run.send_memory or mems[0]
                run.recv_memory = run.recv_memory or mems[-1]
            elif opt == "D":
                run.data_layout = run.data_layout or val
            elif opt == "T" and val.isdecimal():
                run.threads = int(val)
            elif opt == "d":
                run.env.setdefault("UCX_NET_DEVICES", val)
            elif opt == "x":
                run.env.setdefault("UCX_TLS", val)
            i += 2
            continue
        if tok.startswith("-"):
            i += 1
            continue
        if run.server is None and not tok.startswith("$") and not tok.startswith("#"):
            run.server = tok
        i += 1


def _join_continuations(lines: list[str]) -> list[tuple[int, str, str]]:
    """(first line number, joined text, raw first line): ``\\``-continued lines as one."""
    out: list[tuple[int, str, str]] = []
    buf: list[str] = []
    start = 0
    for lineno, raw in enumerate(lines, 1):
        stripped = raw.rstrip()
        if buf:
            buf.append(stripped.rstrip("\\").strip())
            if not stripped.endswith("\\"):
                out.append((start, " ".join(buf), lines[start - 1]))
                buf = []
            continue
        if stripped.endswith("\\") and ("UCX_" in stripped or "ucx_perftest" in stripped):
            start = lineno
            buf = [stripped.rstrip("\\").strip()]
            continue
        out.append((lineno, raw, raw))
    if buf:
        out.append((start, " ".join(buf), lines[start - 1]))
    return out


class _PerfState:
    def __init__(self, res: ParseResult) -> None:
        self.res = res
        self.run: UcxPerftestRun | None = None
        self.pending_env: dict[str, str] = {}

    def new_run(self, lineno: int) -> UcxPerftestRun:
        run = UcxPerftestRun(line=lineno, env=dict(self.pending_env))
        self.pending_env = {}
        self.res.records.append(run)
        self.run = run
        return run

    def current(self, lineno: int, *, fresh_if_done: bool = False) -> UcxPerftestRun:
        run = self.run
        if run is None or (fresh_if_done and (run.rows or run.final is not None)):
            return self.new_run(lineno)
        return run

    def touch(self, lineno: int) -> None:
        if self.run is not None:
            self.run.end_line = max(self.run.end_line or self.run.line, lineno)


@register(
    "ucx-perftest",
    summary="ucx_perftest (UCX point-to-point latency and bandwidth tests)",
    detect=_detect_ucx_perftest,
    refs=("S20", "S23"),
)
def parse_ucx_perftest(text: str) -> ParseResult:
    """``ucx_perftest`` output → one :class:`UcxPerftestRun` per run."""
    res = ParseResult("ucx-perftest")
    st = _PerfState(res)
    for lineno, line, raw in _join_continuations(text.splitlines()):
        stripped = line.strip()
        if not stripped:
            continue
        if "ucx_perftest" in stripped:
            run = st.current(lineno, fresh_if_done=True)
            if run.command is not None:
                run = st.new_run(lineno)
            _read_command(run, stripped)
            st.touch(lineno)
            continue
        if stripped.startswith("#") or _is_log(stripped) or stripped.startswith(_PERF_QUIET):
            continue
        am = _UCX_ASSIGN_RE.match(stripped)
        if am is not None and " " not in am.group(2):
            st.pending_env[am.group(1)] = am.group(2)
            continue
        if _read_perf_line(st, lineno, stripped):
            st.touch(lineno)
            continue
        res.warn(lineno, "expected a ucx_perftest line (test box, results header or row)", raw)
    return res


def _read_perf_line(st: _PerfState, lineno: int, line: str) -> bool:
    m = _PERF_BANNER_RE.match(line)
    if m is not None:
        run = st.current(lineno, fresh_if_done=True)
        if run.test is not None and run.test != m.group(1):
            run = st.new_run(lineno)
        run.test = m.group(1)
        return True
    if _PERF_RULE_RE.match(line):
        return True
    m = _PERF_HEADER_RE.search(line)
    if m is not None:
        run = st.current(lineno, fresh_if_done=True)
        run.metric = m.group(1)
        return True
    m = _PERF_STAGE_RE.match(line)
    if m is not None:
        run = st.current(lineno)
        run.percentile = finite_or_none(m.group(1)) if m.group(1) else None
        return True
    m = _PERF_BOX_RE.match(line)
    if m is not None:
        return _read_box(st, lineno, m.group(1).strip(), m.group(2))
    m = _PERF_ROW_RE.match(line)
    if m is not None:
        return _read_row(st, lineno, m)
    return False


def _read_box(st: _PerfState, lineno: int, key: str, value: str) -> bool:
    run = st.current(lineno, fresh_if_done=key in ("API", "Test"))
    attr = _BOX_FIELDS.get(key)
    if attr is not None:
        setattr(run, attr, value)
        return True
    if key in ("Message size", "Window size", "AM header size", "Send device", "Recv device"):
        if key == "Message size":
            run.message_size_bytes = _size(value)
        elif key == "Window size" and value.isdecimal():
            run.window_size = int(value)
        return True
    return False


def _read_row(st: _PerfState, lineno: int, m: re.Match[str]) -> bool:
    cells = m.group(3).split()
    if not all(_PERF_NUM_RE.match(c) for c in cells) or len(cells) not in (4, 8):
        return False
    try:
        nums = [_perf_number(c) for c in cells]
    except ValueError:
        return False
    thread, final = m.group(1), m.group(2)
    if thread is None and final is None and st.run is None:
        return False  # bare numbers with no perftest context: not ours
    stage = f"thread {thread}" if thread is not None else ("final" if final else None)
    row = UcxPerftestRow(line=lineno, stage=stage, iterations=nums[0])
    if len(nums) == 8:
        (
            row.latency_percentile_us,
            row.latency_avg_us,
            row.latency_overall_us,
            row.bw_avg_mibps,
            row.bw_overall_mibps,
            row.msgrate_avg,
            row.msgrate_overall,
        ) = nums[1:]
    else:
        row.latency_overall_us, row.bw_overall_mibps, row.msgrate_overall = nums[1:]
        row.latency_avg_us, row.bw_avg_mibps, row.msgrate_avg = nums[1:]
    run = st.current(lineno, fresh_if_done=st.run is not None and st.run.final is not None)
    if final:
        run.final = row
    else:
        run.rows.append(row)
    return True
