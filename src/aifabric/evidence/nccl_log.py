"""NCCL debug logs (``NCCL_DEBUG=INFO`` or ``WARN``) and PyTorch ``ProcessGroupNCCL`` errors.

Input: whatever a training job or an nccl-tests run wrote to stdout/stderr with NCCL's debug
output switched on: lines ``host:pid:tid [cudaDev] NCCL INFO <message>`` and
``host:pid:tid [cudaDev] file.cc:123 NCCL WARN <message>``, mixed with application output.
Handled variants, all seen in real captures:

* prefixes before NCCL's own: Open MPI ``--tag-output`` (``[1,26]<stdout>:``), Slurm ``--label``
  (``0: ``), MPICH ``[0] ``, timestamps (``[2026-03-13 22:26:02] ``), Ray's colour-reset residue
  (``[0m ``), PyTorch ``[rank0]:``; lines without the host part (`` [0] NCCL INFO ...``) or
  without any prefix (``NCCL version 2.4.7+cuda10.0`` as rank 0 printed it before 2.9);
* NCCL 2.4 to 2.27 message formats: ``Ring 00 : 26[2] -> 30[6] via P2P/IPC`` (≤2.6),
  ``Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read`` (≥2.7), ``via NET/IB/0/GDRDMA``,
  ``via NET/AWS Libfabric/0``, ``via direct shared memory``; ``Trees [0] a/b/c->r->p`` with the
  2.5-2.7 ``|`` down-tree, 2.2x per-channel ``Tree 0 : p -> r -> a/b/c`` and
  ``Ring 00 : prev -> r -> next``; ``NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:...`` and
  the old ``... ; OOB ...`` separator, HPC-X ``[0]mlx5_50:1/IB/SHARP``; 2.2x
  ``NET/IB: [0] mlx5_0:uverbs0:1/RoCE speed=100000``; ``P2P plugin IBext``, 2.2x
  ``TUNER/Plugin`` / ``PROFILER/Plugin`` lines; pdsh/deepspeed ``worker-1: `` runner prefixes;
  IB completion errors as ``with error 12, opcode 0, len 0, vendor err 129 (Recv)`` (≤2.18)
  and ``with status=12 opcode=129 len=65536 vendor err 129 (Recv) localGid .. remoteGids..``
  (≥2.19, ib_plugin.c of the HPC-X plugin too);
* PyTorch watchdog lines with and without ``NumelIn``/``NumelOut`` (PyTorch 1.x and 2.x), and
  ``Exception ... detected by watchdog at work: N, last enqueued NCCL work: M, last completed
  NCCL work: K``;
* output of several processes interleaved inside one line (unbuffered writes to one file): one
  warning per such line, nothing guessed from it;
* the death of a rank as its launcher or the kernel reported it in the same output (torchrun
  ``failed (exitcode: -9) local_rank: ..`` and its ``Root Cause (first observed failure)``
  summary, ``mpirun noticed that process rank N ... exited on signal 9``, ``CUDA out of memory``,
  ``Out of memory: Killed process N``, Slurm oom-kill / srun task reports, MPICH/Hydra ``BAD
  TERMINATION``, DeepSpeed ``exits with return code = -9``, Open MPI ``Exit code:``):
  :class:`ProcessExit`, so a peer's retry-exceeded error can be told from a fabric fault (S20
  row 1);
* IB completion errors without a peer address (``Got completion from peer with error 4``), or
  quoted by PyTorch (``Last error: NET/IB : Got completion ...``); ``Call to ibv_create_qp
  failed`` without an errno (NCCL < 2.9); ``Call to connect returned Connection timed out,
  retrying`` (``socket_retry``).

Records: :class:`NcclVersion`, :class:`NetSelected`, :class:`NetPlugin`, :class:`NetDevices`
(bootstrap/socket interfaces and HCAs with port and link layer), :class:`NcclEnv`,
:class:`GdrStatus`, :class:`ChannelHop` (one connection and its transport), :class:`RingOrder`,
:class:`TreeLinks`, :class:`Connected`, :class:`CommEvent` (Init START/COMPLETE, Destroy), and
:class:`NcclProblem` with its subclasses for the failures that matter to a network engineer
(S20 row 1, S22: NCCL timeouts and retries in logs): IB completion errors with the
``ibv_wc_status`` name, ``ibv_*`` call failures with errno, socket connect/close errors, plugin
errors, ``unhandled system error`` / remote errors, PyTorch watchdog timeouts.

Where each part lives, split by who printed the line: this module holds the parser's entry
point (detection, the line prefix, dispatch) and NCCL's INFO records about the version, the
network, the environment, GPUDirect and communicators; :mod:`~aifabric.evidence.nccl_graph`
the channel, ring and tree records; :mod:`~aifabric.evidence.nccl_warn` NCCL's WARN lines;
:mod:`~aifabric.evidence.pytorch_log` PyTorch's ``ProcessGroupNCCL`` (c10d) records;
:mod:`~aifabric.evidence.launcher_log` the launchers' and the kernel's reports of ranks that
died (out-of-memory kills included); :mod:`~aifabric.evidence.nccl_log_base` the shared record
bases. Every record type stays importable from here.

Lines that are neither NCCL nor PyTorch-NCCL are skipped silently; NCCL's return-code trace
lines (``misc/socket.cc:564 -> 2``), allocation and topology dumps are skipped too (they carry
no fabric facts). A line that starts like a known message but does not parse (a truncated
``Channel`` line, a mangled ``Got completion``) becomes a warning.

Sources for the formats: NCCL source (src/transport/net_ib.cc, src/misc/socket.cc,
src/graph/connect.cc, src/init.cc) at https://github.com/NVIDIA/nccl; NCCL environment and
troubleshooting docs
https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html; the
``ibv_wc_status`` enumeration of rdma-core
https://github.com/linux-rdma/rdma-core/blob/master/libibverbs/verbs.h; PyTorch
torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp; the captures under
tests/fixtures/evidence/nccl-log/ (NVIDIA/nccl issues 392, 707, 928, 1405, 1814, 2013;
nccl-tests issues 166, 227; aws-ofi-nccl issue 24; pytorch issue 68893 ...).
Seed refs: S15 (NCCL environment), S17 (Socket vs RoCE), S20, S22.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record, split_launcher_prefix
from aifabric.evidence.launcher_log import ProcessExit, may_be_exit, process_exit, reports_a_death
from aifabric.evidence.nccl_graph import (
    ChannelHop,
    Connected,
    RingOrder,
    TreeEdge,
    TreeLinks,
    channel_or_ring,
    connected,
    tree_links,
)
from aifabric.evidence.nccl_log_base import (
    TORCH_RANK_RE,
    LineFields,
    NcclLogRecord,
    NcclProblem,
    Unreadable,
    opt_int,
)
from aifabric.evidence.nccl_warn import (
    IBV_WC_STATUS,
    IbCompletionError,
    IbVerbsCallError,
    SocketError,
    classify_problem,
    errno_of,
)
from aifabric.evidence.pytorch_log import (
    NcclErrorReport,
    RankBanner,
    WatchdogException,
    WatchdogTimeout,
    embedded_completion,
    parse_torch_line,
)
from aifabric.evidence.registry import register

__all__ = [
    "IBV_WC_STATUS",
    "ChannelHop",
    "CommEvent",
    "Connected",
    "GdrStatus",
    "IbCompletionError",
    "IbVerbsCallError",
    "NcclEnv",
    "NcclErrorReport",
    "NcclLogRecord",
    "NcclProblem",
    "NcclVersion",
    "NetDevice",
    "NetDevices",
    "NetPlugin",
    "NetSelected",
    "ProcessExit",
    "RankBanner",
    "RingOrder",
    "SocketError",
    "TreeEdge",
    "TreeLinks",
    "WatchdogException",
    "WatchdogTimeout",
    "detect",
    "parse",
]


@dataclass(slots=True, kw_only=True)
class NcclVersion(NcclLogRecord):
    """``NCCL version 2.18.3+cuda12.2``."""

    record_type: ClassVar[str] = "nccl_version"

    version: str
    """``2.18.3``."""
    cuda: str | None = None
    """CUDA the library was built for, ``12.2``."""


@dataclass(slots=True, kw_only=True)
class NetSelected(NcclLogRecord):
    """``Using network IB`` / ``Socket`` / ``IBext_v8`` / ``AWS Libfabric`` / ``Libfabric``."""

    record_type: ClassVar[str] = "net_selected"

    name: str
    transport: str
    """Normalised: ``ib`` (internal verbs, also the HPC-X IBext plugin), ``socket`` (TCP),
    ``ofi`` (libfabric: AWS EFA, Slingshot), or ``plugin`` for other plugin names."""


@dataclass(slots=True, kw_only=True)
class NetPlugin(NcclLogRecord):
    """Net plugin loading: ``NET/Plugin: Loaded net plugin NCCL RDMA Plugin v6 (v6)``,
    ``No plugin found (libnccl-net.so), using internal implementation``, ``Plugin Path : ...``,
    ``NET/OFI Selected Provider is efa (found 16 nics)``."""

    record_type: ClassVar[str] = "net_plugin"

    status: str
    """``loaded``, ``not_found``, ``path``, ``provider`` or ``internal`` (tuner/profiler plugin
    absent: ``TUNER/Plugin: Could not find: libnccl-tuner.so``, NCCL uses its own)."""
    name: str | None = None
    """Plugin name, library path, or libfabric provider (``efa``)."""
    kind: str | None = None
    """``net``, ``coll`` (CollNet/SHARP), ``tuner`` or ``profiler`` when the line says."""


@dataclass(frozen=True, slots=True)
class NetDevice:
    """One interface or HCA port in a ``Using [i]...`` list."""

    index: int | None
    name: str
    port: int | None = None
    """HCA port (``mlx5_0:1`` → 1); ``None`` for IP interfaces."""
    link_layer: str | None = None
    """``IB`` or ``RoCE`` for HCAs."""
    address: str | None = None
    """IP address for interfaces (IPv6 keeps its ``%scope``)."""
    speed_gbps: float | None = None
    """From NCCL ≥2.23 ``speed=100000`` (Mb/s) probe lines."""
    sharp: bool = False
    """``mlx5_50:1/IB/SHARP``: the HPC-X IBext plugin found SHARP (in-network reduction) on it."""


@dataclass(slots=True, kw_only=True)
class NetDevices(NcclLogRecord):
    """Interfaces/HCAs NCCL uses: ``Bootstrap : Using eth0:10.1.2.3<0>``, ``NET/Socket : Using
    [0]eth0:...``, ``NET/IB : Using [0]mlx5_2:1/RoCE [1]mlx5_3:1/IB [RO]; OOB eth0:10.0.0.1<0>``,
    ``NET/IB : No device found.`` (empty ``devices``)."""

    record_type: ClassVar[str] = "net_devices"

    role: str
    """``bootstrap``, ``socket``, ``ib`` (NET/IB), or ``ib_probe`` (one 2.2x per-HCA line)."""
    devices: tuple[NetDevice, ...] = ()
    relaxed_ordering: bool | None = None
    """``[RO]``: PCIe relaxed ordering enabled for the HCAs (IB only)."""
    oob_interface: str | None = None
    oob_address: str | None = None


@dataclass(slots=True, kw_only=True)
class NcclEnv(NcclLogRecord):
    """``NCCL_IB_HCA set by environment to mlx5_0`` (or ``set to`` for a config-file value)."""

    record_type: ClassVar[str] = "nccl_env"

    name: str
    value: str
    """As printed, without the trailing period NCCL <2.9 put after integers."""
    from_environment: bool


@dataclass(slots=True, kw_only=True)
class GdrStatus(NcclLogRecord):
    """GPUDirect RDMA / DMA-BUF availability: ``GPU Direct RDMA Enabled for GPU 1b000 / HCA 0
    (distance 4 <= 5), read 0``, ``GPU Direct RDMA Disabled for HCA 0 'mlx5_0'``,
    ``DMA-BUF is available on GPU device 0``, ``NET/OFI Support for DMA-BUF registrations:
    false``."""

    record_type: ClassVar[str] = "gdr_status"

    feature: str
    """``gdr`` or ``dmabuf``."""
    enabled: bool
    hca_index: int | None = None
    hca_name: str | None = None
    gpu: str | None = None
    """GPU bus id or device number as printed."""
    distance: int | None = None
    distance_limit: int | None = None


@dataclass(slots=True, kw_only=True)
class CommEvent(NcclLogRecord):
    """``comm 0x.. rank 0 nranks 16 cudaDev 0 nvmlDev 0 busId 18000 commId 0x.. - Init
    COMPLETE`` and its START / Destroy / Abort siblings, and the 2.2x ``nNodes`` line."""

    record_type: ClassVar[str] = "comm_event"

    event: str
    """``init_start``, ``init_complete``, ``destroy_complete``, ``abort_complete``, ``info``."""
    comm: str
    """Communicator pointer ``0x55b6aa64a990`` (unique per process)."""
    rank: int
    nranks: int
    cuda_dev_of_comm: int | None = None
    nvml_dev: int | None = None
    bus_id: str | None = None
    comm_id: str | None = None
    """``commId`` hash shared by all ranks of one communicator (≥2.12)."""
    nnodes: int | None = None
    local_ranks: int | None = None


# --------------------------------------------------------------------------------------------
# regexes (compiled once)

_MARK_RE = re.compile(r"NCCL (INFO|WARN|TRACE|ABORT)\b ?")
_VERSION_RE = re.compile(r"NCCL version (\d+\.\d+\.\d+)(?:\+cuda([\d.]+))?")
_COMM_RE = re.compile(r"comm (0x[0-9a-fA-F]+) rank (\d+) n[rR]anks (\d+)")
_COMM_STATUS = ("Init START", "Init COMPLETE", "Destroy COMPLETE", "Abort COMPLETE")
"""The `` - <status>`` a comm line ends with, read from the stripped tail (a lazy group before
an optional status and an end anchor after blanks is quadratic over a run of blanks: issue 16)."""
_COMM_KV_RE = re.compile(r"\b(cudaDev|nvmlDev|busId|commId|nNodes|localRanks) (\S+)")
_ENV_RE = re.compile(r"^(NCCL_[A-Z0-9_]+) set (by environment )?to (.*\S|)\s*$")  # linear
_IFACE_RE = re.compile(r"^(?:\[(\d+)\])?([^\s:\[\]]+):(\S+?)<\d+>$")
"""One ``[0]eth0:10.0.0.1<0>`` token, matched whole (``fullmatch``) on each blank-separated
token: searched over a whole line it would restart at every name character (issue 16)."""
_HCA_RE = re.compile(r"\[(\d+)\]([^\s:\[\]]+):(\d+)/(\w+)(/SHARP)?")
_OOB_RE = re.compile(r"OOB ([^\s:]+):(\S+?)<\d+>")
_IB_PROBE_RE = re.compile(
    r"^NET/IB ?: \[(\d+)\] ([^\s:]+):(?:[^\s:]+:)?(\d+)/(\w+)(?:.*?speed=(\d+))?"
)
_GDR_HCA_RE = re.compile(r"GPU Direct RDMA (Enabled|Disabled) for HCA (\d+) '([^']*)'")
_GDR_GPU_RE = re.compile(
    r"GPU Direct RDMA (Enabled|Disabled) for GPU (\w+) / HCA (\d+)"
    r"(?: \(distance (\d+) [<>]=? (\d+)\))?"
)
_INTERLEAVE_RE = re.compile(r"\S:\d+:\d+ \[\d+\] (?:[\w./+-]+:\d+ )?NCCL (?:INFO|WARN)")


# --------------------------------------------------------------------------------------------
# detection


_CERTAIN_LINES = 5
_TESTS_MARKERS = ("# nThread", "out-of-place", "Avg bus bandwidth", "busbw", "#  Rank ",
                  "# Rank ", "Collective test")  # fmt: skip
"""What an nccl-tests run prints besides the NCCL log it carries (nccl-tests ``common.cu``)."""
_ENV_LINE_RE = re.compile(r"^[ \t]*(?:export[ \t]+|-x[ \t]+)?NCCL_\w+=", re.MULTILINE)


_OLD_FORMAT_RE = re.compile(
    r"^(?P<head>[ \t]*+[\w.\-]++:\d++:\d++ \[\d++\] )(?=(?:INFO|WARN) )", re.MULTILINE
)
"""NCCL 2.2 and older: ``host:pid:tid [dev] INFO ...`` without the word ``NCCL`` (the level
followed the prefix directly; 2.3 added ``NCCL``)."""


def _modern(text: str) -> str:
    """``text`` with the word ``NCCL`` put before the level of old-format lines, so one reader
    serves both (line numbers unchanged)."""
    if "] INFO " not in text and "] WARN " not in text:
        return text
    return _OLD_FORMAT_RE.sub(r"\g<head>NCCL ", text)


def detect(text: str) -> float:
    """0.95 for an NCCL log and nothing else (five ``NCCL INFO`` lines, no nccl-tests marker,
    no ``NCCL_X=`` environment lines), 0.8 for NCCL debug markers, 0.7 for PyTorch NCCL
    watchdog lines alone, 0.6 for a launcher's report of ranks that died (torchrun's elastic
    agent, mpirun/prterun), 0.4 for Lightning's process-group banners, else 0.

    Kept below 0.9 otherwise, so a file that also holds an nccl-tests result table goes to
    ``nccl-tests`` and an environment dump with log lines to ``nccl-env``.
    """
    if "NCCL INFO" in text or "NCCL WARN" in text:
        if (
            text.count(" NCCL INFO ", 0, 65536) >= _CERTAIN_LINES
            and not any(m in text for m in _TESTS_MARKERS)
            and _ENV_LINE_RE.search(text) is None
        ):
            return 0.95  # a log and nothing else: no nccl-tests table, no NCCL_X= env lines
        return 0.8
    if "WorkNCCL(" in text or "ProcessGroupNCCL" in text:
        return 0.7
    if ("] INFO " in text or "] WARN " in text) and (
        len(_OLD_FORMAT_RE.findall(text, 0, 65536)) >= 3
    ):
        return 0.8  # NCCL 2.2 and older, without the word NCCL
    if "NCCL version " in text and "NCCL error" in text:
        return 0.5
    if reports_a_death(text):
        return 0.6
    if "GLOBAL_RANK: " in text and "MEMBER: " in text:
        return 0.4  # Lightning's process-group banners alone (pytorch_log.RankBanner)
    return 0.0


# --------------------------------------------------------------------------------------------
# parsing helpers


def _parse_prefix(head: str, ln: int) -> tuple[LineFields, str | None]:
    """``[1,3]<stdout>:host:12:34 [0] file.cc:5 `` → common fields and the source location.

    Parsed from the right without regexes: ``[dev]`` is the last bracket (after an optional
    ``file.cc:N`` token), ``host:pid:tid`` the token before it; what precedes may be a launcher
    prefix (MPI, Slurm, PyTorch ``[rankN]:``), read only if it ends before the ``[dev]``.
    """
    base = LineFields(line=ln, host=None, pid=None, tid=None, cuda_dev=None, launcher_rank=None)
    source: str | None = None
    h = head.rstrip()
    if h and h[-1] != "]":
        sp = h.rfind(" ")
        tok = h[sp + 1 :]
        loc, _, num = tok.rpartition(":")
        if loc and num.isdecimal():
            source = tok.lstrip("`")
            h = h[:sp].rstrip() if sp >= 0 else ""
    lb = len(h)
    if h.endswith("]"):
        lb = h.rfind("[")
        dev = h[lb + 1 : -1]
        if lb >= 0 and dev.isdecimal():
            base["cuda_dev"] = int(dev)
            before = h[:lb].rstrip()
            sp = before.rfind(" ")
            parts = before[sp + 1 :].rsplit(":", 2)
            if len(parts) == 3 and parts[1].isdecimal() and parts[2].isdecimal():
                host = parts[0]
                for ch in ">]`":
                    host = host.rpartition(ch)[2]
                host = host.rpartition(":")[2]
                base["host"] = host or None
                base["pid"] = int(parts[1])
                base["tid"] = int(parts[2])
        else:
            lb = len(h)
    if h and h[0] in "[ 0123456789":
        rest, rank = split_launcher_prefix(h)
        if rank is not None and len(h) - len(rest) <= lb:
            base["launcher_rank"] = rank
    if base["launcher_rank"] is None and "[rank" in h:
        tm = TORCH_RANK_RE.search(h)
        if tm is not None:
            base["launcher_rank"] = int(tm.group(1))
    return base, source


def _net_name(name: str) -> str:
    low = name.lower()
    if low.startswith("ib"):
        return "ib"
    if low.startswith("socket"):
        return "socket"
    if "libfabric" in low or "ofi" in low:
        return "ofi"
    return "plugin"


# --------------------------------------------------------------------------------------------
# message handlers: each returns a record, None (irrelevant), or raises Unreadable


def _info(msg: str, base: LineFields) -> Record | None:
    c0 = msg[:1]
    if c0 == "C":
        if msg.startswith("Call to connect returned"):
            text = msg[len("Call to connect returned") :].split(",", 1)[0].strip()
            return SocketError(
                category="socket_retry",
                errno=errno_of(text),
                error_text=text or None,
                message=msg.strip(),
                source=None,
                **base,
            )
        if msg.startswith(("Channel ", "Ring ")):
            return channel_or_ring(msg, base)
        if msg.startswith("Connected "):
            return connected(msg, base)
        return None
    if c0 == "R" and msg.startswith("Ring "):
        return channel_or_ring(msg, base)
    if c0 == "T":
        if msg.startswith(("Trees ", "Tree ")):
            return tree_links(msg, base)
        if msg.startswith("TUNER/Plugin"):
            return _aux_plugin(msg, "tuner", base)
        return None
    if c0 == "N":
        if msg.startswith("NCCL version"):
            return _version(msg, base)
        if msg.startswith("NCCL_"):
            m = _ENV_RE.match(msg)
            if m is None:
                return None
            value = m[3]
            if value.endswith(".") and value[:-1].lstrip("-").isdecimal():
                value = value[:-1]
            return NcclEnv(name=m[1], value=value, from_environment=bool(m[2]), **base)
        if msg.startswith("NET/"):
            return _net(msg, base)
        return None
    if c0 == "B" and msg.startswith("Bootstrap") and "Using" in msg:
        rest = msg.partition("Using")[2]
        devs = _ifaces(rest)
        if not devs:
            raise Unreadable("expected 'Bootstrap : Using IFACE:ADDR<0>'")
        return NetDevices(role="bootstrap", devices=devs, **base)
    if c0 == "U" and msg.startswith("Using network "):
        name = msg[len("Using network ") :].strip()
        return NetSelected(name=name, transport=_net_name(name), **base)
    if "comm 0x" in msg and (" - " in msg or "nNodes" in msg):
        return _comm(msg, base)
    if c0 == "P":
        if msg.startswith("Plugin Path"):
            return NetPlugin(status="path", name=msg.partition(":")[2].strip() or None, **base)
        if msg.startswith("P2P plugin "):  # HPC-X nccl_rdma_sharp_plugin: "P2P plugin IBext_v8"
            p2p = msg[len("P2P plugin ") :].strip() or None
            return NetPlugin(status="loaded", name=p2p, kind="net", **base)
        if msg.startswith("PROFILER/Plugin"):
            return _aux_plugin(msg, "profiler", base)
        return None
    if c0 == "D" and msg.startswith("DMA-BUF"):
        enabled = "is available" in msg or "enabled" in msg.lower().split("dma-buf", 1)[1]
        gpu = msg.rsplit(" ", 1)[-1] if "device" in msg else None
        return GdrStatus(feature="dmabuf", enabled=enabled, gpu=gpu, **base)
    if "GPU Direct RDMA" in msg:
        return _gdr(msg, base)
    return None


def _aux_plugin(msg: str, kind: str, base: LineFields) -> Record | None:
    """``TUNER/Plugin: Could not find: libnccl-tuner.so``, ``... Failed to find
    ncclTunerPlugin_v2 symbol, using internal tuner instead``, ``PROFILER/Plugin: Could not
    find: libnccl-profiler.so.`` (2.2x); ``Using tuner plugin X`` / ``Loaded ... plugin X``."""
    low = msg.lower()
    if "could not find" in low or "using internal" in low:
        if "failed to find" in low and "internal" not in low:
            return None  # one symbol version probed; the final line says what NCCL did
        return NetPlugin(status="internal", name=None, kind=kind, **base)
    if "loaded" in low or "using " in low:
        name = msg.rpartition(" ")[2].strip(".") or None
        return NetPlugin(status="loaded", name=name, kind=kind, **base)
    return None


def _version(msg: str, base: LineFields) -> Record:
    m = _VERSION_RE.search(msg)
    if m is None:
        raise Unreadable("expected 'NCCL version X.Y.Z+cudaA.B'")
    return NcclVersion(version=m[1], cuda=m[2], **base)


def _ifaces(rest: str) -> tuple[NetDevice, ...]:
    out = []
    for token in rest.split():
        m = _IFACE_RE.fullmatch(token)
        if m is None:
            continue
        idx, name, addr = m.groups()
        out.append(NetDevice(opt_int(idx), name, address=addr))
    return tuple(out)


def _net(msg: str, base: LineFields) -> Record | None:
    if msg.startswith(("NET/IB : Using", "NET/IB: Using", "NET/IBext : Using")):
        head, sep, tail = msg.partition("OOB ")
        devs = tuple(
            NetDevice(int(m[1]), m[2], port=int(m[3]), link_layer=m[4], sharp=bool(m[5]))
            for m in _HCA_RE.finditer(head)
        )
        if not devs:
            raise Unreadable("expected 'NET/IB : Using [0]mlx5_0:1/IB ...'")
        oob_if = oob_addr = None
        if sep:
            om = _OOB_RE.search("OOB " + tail)
            if om is not None:
                oob_if, oob_addr = om[1], om[2]
        return NetDevices(
            role="ib",
            devices=devs,
            relaxed_ordering="[RO]" in head,
            oob_interface=oob_if,
            oob_address=oob_addr,
            **base,
        )
    if msg.startswith("NET/Socket") and "Using" in msg:
        devs = _ifaces(msg.partition("Using")[2])
        if not devs:
            raise Unreadable("expected 'NET/Socket : Using [0]IFACE:ADDR<0>'")
        return NetDevices(role="socket", devices=devs, **base)
    if "No device found" in msg:
        role = "ib" if msg.startswith("NET/IB") else msg[4:].split(maxsplit=1)[0].lower()
        return NetDevices(role=role, devices=(), **base)
    if msg.startswith(("NET/IB: [", "NET/IB : [")) and "/" in msg[8:]:
        m = _IB_PROBE_RE.match(msg)
        if m is None:
            return None
        speed = int(m[5]) / 1000.0 if m[5] else None
        dev = NetDevice(int(m[1]), m[2], port=int(m[3]), link_layer=m[4], speed_gbps=speed)
        return NetDevices(role="ib_probe", devices=(dev,), **base)
    if msg.startswith("NET/Plugin"):
        if "Loaded" in msg:
            after = msg.partition("Loaded ")[2]
            kind = "coll" if after.startswith("coll") else "net"
            name = after.split("plugin", 1)[-1].strip() or None
            return NetPlugin(status="loaded", name=name, kind=kind, **base)
        if "No plugin found" in msg or "Could not find" in msg:
            return NetPlugin(status="not_found", name=None, kind="net", **base)
        return None
    if msg.startswith("NET/OFI") and "Selected Provider is" in msg:
        prov = msg.partition("Selected Provider is ")[2].split()[0]
        return NetPlugin(status="provider", name=prov, kind="net", **base)
    if "DMA-BUF" in msg and ":" in msg and msg.startswith("NET/OFI"):
        val = msg.rsplit(":", 1)[1].strip().lower()
        return GdrStatus(feature="dmabuf", enabled=val in {"true", "1", "yes"}, **base)
    if "GPU Direct RDMA" in msg:
        return _gdr(msg, base)
    return None


def _gdr(msg: str, base: LineFields) -> Record | None:
    m = _GDR_GPU_RE.search(msg)
    if m is not None:
        return GdrStatus(
            feature="gdr",
            enabled=m[1] == "Enabled",
            gpu=m[2],
            hca_index=int(m[3]),
            distance=opt_int(m[4]),
            distance_limit=opt_int(m[5]),
            **base,
        )
    m = _GDR_HCA_RE.search(msg)
    if m is not None:
        return GdrStatus(
            feature="gdr", enabled=m[1] == "Enabled", hca_index=int(m[2]), hca_name=m[3], **base
        )
    return None


_COMM_EVENTS = {
    "Init START": "init_start",
    "Init COMPLETE": "init_complete",
    "Destroy COMPLETE": "destroy_complete",
    "Abort COMPLETE": "abort_complete",
}


def _comm(msg: str, base: LineFields) -> Record:
    m = _COMM_RE.search(msg)
    if m is None:
        raise Unreadable("expected 'comm 0x.. rank R nranks N ... - Init COMPLETE'")
    rest, status = msg[m.end() :].rstrip(), ""
    for s in _COMM_STATUS:
        if rest.endswith(" - " + s):
            rest, status = rest[: -len(s) - 3], s
            break
    kv = dict(_COMM_KV_RE.findall(rest))
    event = _COMM_EVENTS.get(status, "info")

    def num(key: str) -> int | None:
        v = kv.get(key)
        return int(v) if v is not None and v.isdecimal() else None

    return CommEvent(
        event=event,
        comm=m[1],
        rank=int(m[2]),
        nranks=int(m[3]),
        cuda_dev_of_comm=num("cudaDev"),
        nvml_dev=num("nvmlDev"),
        bus_id=kv.get("busId"),
        comm_id=kv.get("commId"),
        nnodes=num("nNodes"),
        local_ranks=num("localRanks"),
        **base,
    )


# --------------------------------------------------------------------------------------------
# the parser


@register(
    "nccl-log",
    summary="NCCL_DEBUG=INFO/WARN output of a training job or nccl-tests (and PyTorch "
    "ProcessGroupNCCL watchdog errors, launcher reports of ranks that died)",
    detect=detect,
    refs=("S15", "S17", "S20", "S22"),
)
def parse(text: str) -> ParseResult:
    """Parse an NCCL debug log into records; see the module docstring for what is read."""
    result = ParseResult(kind="nccl-log")
    records = result.records
    lines = _modern(text).split("\n")
    last = len(lines)
    while last > 0 and not lines[last - 1].strip():
        last -= 1
    for idx in range(last):
        line = lines[idx]
        if "NCCL" not in line:
            if "Got completion" in line:
                tr = TORCH_RANK_RE.search(line)
                emb = embedded_completion(line, idx + 1, int(tr[1]) if tr else None)
                if emb is not None:
                    records.append(emb)
                continue
            if "GLOBAL_RANK: " in line:
                banner = parse_torch_line(line, idx + 1)
                if banner is not None:
                    records.append(banner)
                continue
            if may_be_exit(line):
                died = process_exit(lines, idx)
                if died is not None:
                    records.append(died)
            continue
        ln = idx + 1
        try:
            rec = _parse_line(line, ln, result)
        except Unreadable as exc:
            rec = _rejoined(lines, idx, last, result)
            if rec is not None:
                records.append(rec)
                continue
            if ln == last:
                result.warn(ln, f"capture ends in the middle of a line (truncated?); {exc}", line)
            else:
                result.warn(ln, str(exc), line)
            continue
        except (ValueError, IndexError, KeyError) as exc:  # defensive: never raise on input
            result.warn(ln, f"unreadable NCCL line ({type(exc).__name__})", line)
            continue
        if rec is not None:
            records.append(rec)
    if last and _looks_cut(lines[last - 1]):
        result.warn(
            last, "capture ends in the middle of an NCCL line (truncated?)", lines[last - 1]
        )
    return result


def _looks_cut(line: str) -> bool:
    """A last line that holds only an NCCL prefix (``host:1:2 [0] NCCL INF``)."""
    s = line.rstrip()
    return bool(s) and s.endswith((" NCCL", " NCCL I", " NCCL IN", " NCCL INF", " NCCL W"))


_MAX_WRAPPED = 4
"""Continuation lines a hand- or mail-wrapped WARN may take (the GIDs and the HCA name)."""


def _rejoined(lines: list[str], idx: int, last: int, result: ParseResult) -> Record | None:
    """A WARN that did not parse, read again with the indented lines after it: users wrap long
    messages when they paste them (``NET/IB: Got completion from peer X`` / ``  with status=12
    ...`` / ``  localGid ...``), and a mail client or a terminal wraps them at its width without
    an indent (``..., opcode 0, len`` / ``0, vendor err 129 (Recv)``). Indented lines without
    an NCCL prefix of their own are taken first; when they give no readable record, the one
    next line alone (a wrap at the terminal's width). ``None`` when neither reads."""
    first = lines[idx].rstrip()
    parts = [first]
    for j in range(idx + 1, min(last, idx + 1 + _MAX_WRAPPED)):
        nxt = lines[j]
        if not nxt[:1].isspace() or not nxt.strip() or "NCCL" in nxt:
            break
        parts.append(nxt.strip())
    tries = [" ".join(parts)] if len(parts) > 1 else []
    nxt = lines[idx + 1] if idx + 1 < last else ""
    if len(parts) == 1 and nxt.strip() and "NCCL" not in nxt:
        tries.append(f"{first} {nxt.strip()}")
    for joined in tries:
        try:
            return _parse_line(joined, idx + 1, result)
        except (Unreadable, ValueError, IndexError, KeyError):
            continue
    return None


def _parse_line(line: str, ln: int, result: ParseResult) -> Record | None:
    m = _MARK_RE.search(line)
    if m is None:
        if "NCCL version" in line and "NCCL error" not in line:
            vm = _VERSION_RE.search(line)
            if vm is not None:
                base, _ = _parse_prefix(line[: vm.start()], ln)
                return NcclVersion(version=vm[1], cuda=vm[2], **base)
        if "atchdog" in line or "NCCL error" in line or "GLOBAL_RANK: " in line:
            return parse_torch_line(line, ln)
        return None
    level = m.group(1)
    msg = line[m.end() :]
    if ("NCCL INFO" in msg or "NCCL WARN" in msg) and _INTERLEAVE_RE.search(msg) is not None:
        result.warn(ln, "output of several processes interleaved in one line; skipped", line)
        return None
    if level == "WARN":
        base, source = _parse_prefix(line[: m.start()], ln)
        return classify_problem(msg, base, source)
    if level != "INFO":
        return None
    c0 = msg[:1]
    if c0 not in _INFO_FIRST and "comm 0x" not in msg and "GPU Direct" not in msg:
        return None
    if "Watchdog caught" in msg or "NCCL error" in msg:
        return parse_torch_line(msg, ln)
    base, _ = _parse_prefix(line[: m.start()], ln)
    return _info(msg, base)


_INFO_FIRST = frozenset("CRTNBUPD")
