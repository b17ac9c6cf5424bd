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
from typing import Any, ClassVar, TypedDict

from aifabric.evidence.base import ParseResult, Record, split_launcher_prefix
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
    "RingOrder",
    "SocketError",
    "TreeEdge",
    "TreeLinks",
    "WatchdogException",
    "WatchdogTimeout",
    "detect",
    "parse",
]

IBV_WC_STATUS: dict[int, str] = {
    0: "IBV_WC_SUCCESS",
    1: "IBV_WC_LOC_LEN_ERR",
    2: "IBV_WC_LOC_QP_OP_ERR",
    3: "IBV_WC_LOC_EEC_OP_ERR",
    4: "IBV_WC_LOC_PROT_ERR",
    5: "IBV_WC_WR_FLUSH_ERR",
    6: "IBV_WC_MW_BIND_ERR",
    7: "IBV_WC_BAD_RESP_ERR",
    8: "IBV_WC_LOC_ACCESS_ERR",
    9: "IBV_WC_REM_INV_REQ_ERR",
    10: "IBV_WC_REM_ACCESS_ERR",
    11: "IBV_WC_REM_OP_ERR",
    12: "IBV_WC_RETRY_EXC_ERR",
    13: "IBV_WC_RNR_RETRY_EXC_ERR",
    14: "IBV_WC_LOC_RDD_VIOL_ERR",
    15: "IBV_WC_REM_INV_RD_REQ_ERR",
    16: "IBV_WC_REM_ABORT_ERR",
    17: "IBV_WC_INV_EECN_ERR",
    18: "IBV_WC_INV_EEC_STATE_ERR",
    19: "IBV_WC_FATAL_ERR",
    20: "IBV_WC_RESP_TIMEOUT_ERR",
    21: "IBV_WC_GENERAL_ERR",
    22: "IBV_WC_TM_ERR",
    23: "IBV_WC_TM_RNDV_INCOMPLETE",
}
"""``enum ibv_wc_status`` of rdma-core libibverbs/verbs.h, by value (what NCCL prints)."""

_WC_MEANING: dict[int, str] = {
    4: "local protection error: the HCA could not access the registered buffer "
    "(GPUDirect RDMA / IOMMU / ACS / peer-memory problem)",
    5: "work request flushed: the QP was already in the error state (follows a first error)",
    10: "remote access error: the peer rejected the RDMA access (rkey / registration)",
    12: "transport retry counter exceeded: no ACK from the peer after NCCL_IB_RETRY_CNT "
    "retries of NCCL_IB_TIMEOUT (packet loss, link down, wrong GID/route, PFC/ECN problems)",
    13: "RNR retry counter exceeded: the receiver had no receive buffer posted",
}

# errno names for the texts strerror() gives (glibc, Linux).
_ERRNO_BY_TEXT: dict[str, int] = {
    "Operation not permitted": 1,
    "No such file or directory": 2,
    "Interrupted system call": 4,
    "Input/output error": 5,
    "Cannot allocate memory": 12,
    "Permission denied": 13,
    "Bad address": 14,
    "Device or resource busy": 16,
    "No such device": 19,
    "Invalid argument": 22,
    "Operation not supported": 95,
    "Protocol not available": 92,
    "Address already in use": 98,
    "Cannot assign requested address": 99,
    "Network is down": 100,
    "Network is unreachable": 101,
    "Software caused connection abort": 103,
    "Connection reset by peer": 104,
    "Connection timed out": 110,
    "Connection refused": 111,
    "No route to host": 113,
    "Operation now in progress": 115,
}


# --------------------------------------------------------------------------------------------
# records


@dataclass(slots=True, kw_only=True)
class NcclLogRecord(Record):
    """Fields from the line prefix ``host:pid:tid [cudaDev] [file.cc:N]``, each ``None`` when
    absent; ``launcher_rank`` is the MPI/Slurm/PyTorch rank of an outer prefix."""

    record_type: ClassVar[str] = "nccl_log"

    host: str | None = None
    pid: int | None = None
    tid: int | None = None
    cuda_dev: int | None = None
    launcher_rank: int | None = None


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
class ChannelHop(NcclLogRecord):
    """One connection of a ring/tree/p2p channel and its transport:
    ``Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA``."""

    record_type: ClassVar[str] = "channel_hop"

    channel: int
    src_rank: int
    dst_rank: int
    src_dev: str | None = None
    """Bracketed value after the rank: a local GPU index (≥2.12) or PCI bus id (2.7-2.11)."""
    dst_dev: str | None = None
    direction: str | None = None
    """``send`` / ``receive`` for network hops, ``None`` otherwise."""
    transport: str
    """``P2P``, ``SHM``, ``NET``, ``COLLNET``, ``NVLS`` ... (first element of ``via``)."""
    net: str | None = None
    """For NET hops: ``IB``, ``Socket``, ``AWS Libfabric``, ``IBext_v8`` ..."""
    net_dev: int | None = None
    """NIC index in the ``Using [i]`` list."""
    proxy_rank: int | None = None
    """PXN: ``NET/IB/0(1)`` routes through local rank 1's NIC."""
    gdr: bool = False
    """``/GDRDMA``: data moves NIC <-> GPU memory directly."""
    via: str
    """Everything after ``via`` as printed (``P2P/CUMEM/read``)."""
    legacy_ring: bool = False
    """Printed as ``Ring NN :`` (NCCL ≤2.6) instead of ``Channel``."""


@dataclass(slots=True, kw_only=True)
class RingOrder(NcclLogRecord):
    """``Channel 00/24 :    0   1   2   3`` (rank order of ring 0 of 24 channels) or the
    per-rank ``Ring 00 : prev -> rank -> next`` of NCCL ≥2.19 (``ranks`` = the three)."""

    record_type: ClassVar[str] = "ring_order"

    channel: int
    nchannels: int | None = None
    ranks: tuple[int, ...] = ()
    neighbours_only: bool = False
    """True for ``prev -> rank -> next`` lines: ``ranks`` is (prev, rank, next)."""


@dataclass(frozen=True, slots=True)
class TreeEdge:
    """A rank's place in one channel's tree."""

    channel: int
    rank: int
    parent: int
    """-1: root."""
    children: tuple[int, ...]
    """-1 entries removed."""


@dataclass(slots=True, kw_only=True)
class TreeLinks(NcclLogRecord):
    """``Trees [0] -1/-1/-1->0->1 [1] ...`` (children->rank->parent) or NCCL ≥2.19
    ``Tree 0 : parent -> rank -> c/c/c``; the 2.5-2.7 ``|down`` part is dropped."""

    record_type: ClassVar[str] = "tree_links"

    trees: tuple[TreeEdge, ...] = ()


@dataclass(slots=True, kw_only=True)
class Connected(NcclLogRecord):
    """``Connected all rings`` / ``Connected all trees`` / ``Connected NVLS`` milestones."""

    record_type: ClassVar[str] = "connected"

    graph: str
    """``rings``, ``trees``, ``nvls``, ``collnet`` ..."""
    pxn: bool | None = None
    gdr: bool | None = None
    """From ``use ring PXN 0 GDR 1`` (NCCL ≥2.23)."""


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


@dataclass(slots=True, kw_only=True)
class NcclProblem(NcclLogRecord):
    """A WARN line or an error line of PyTorch about NCCL, classified.

    ``category``: ``ib_completion``, ``ibv_call``, ``socket_connect``, ``socket_closed``,
    ``socket_error``, ``socket_retry``, ``proxy``, ``net_plugin``, ``dmabuf``, ``cuda``,
    ``nccl_error`` (``unhandled system error`` ...), ``remote_error``, ``watchdog_timeout``,
    ``watchdog_exception``, ``process_exit`` (:class:`ProcessExit`), ``other``.
    """

    record_type: ClassVar[str] = "problem"

    category: str
    message: str
    """The message after the prefix, as printed."""
    source: str | None = None
    """NCCL source location printed on WARN lines, ``transport/net_ib.cc:1295``."""
    hint: str | None = None
    """What this usually means for the fabric (network engineers' reading, S20)."""


@dataclass(slots=True, kw_only=True)
class IbCompletionError(NcclProblem):
    """``NET/IB : Got completion from peer 10.0.0.2<1234> with error 12, opcode 0, len 0, vendor
    err 129 (Recv)`` and the ``status=12 opcode=.. len=.. .. localGid .. remoteGids..`` form."""

    status: int
    status_name: str | None = None
    """``IBV_WC_RETRY_EXC_ERR`` for 12 (rdma-core verbs.h)."""
    opcode: int | None = None
    length_bytes: int | None = None
    vendor_err: int | None = None
    direction: str | None = None
    """``Send`` / ``Recv``."""
    peer_address: str | None = None
    peer_port: int | None = None
    local_gid: str | None = None
    remote_gid: str | None = None


@dataclass(slots=True, kw_only=True)
class IbVerbsCallError(NcclProblem):
    """``Call to ibv_modify_qp failed with error Connection timed out`` / ``with 110 ..., on dev
    mlx5_0:1, curr state INIT, next state RTR, local GID index 3 ...`` /
    ``ibv_reg_mr_iova2 failed with error Cannot allocate memory``."""

    call: str
    errno: int | None = None
    error_text: str | None = None
    device: str | None = None
    qp_state_from: str | None = None
    qp_state_to: str | None = None
    gid_index: int | None = None
    local_gid: str | None = None
    remote_gid: str | None = None


@dataclass(slots=True, kw_only=True)
class SocketError(NcclProblem):
    """``socketStartConnect: Connect to 10.0.0.2<45763> failed : Connection timed out``,
    ``socketProgress: Connection closed by remote peer node1<57557>``."""

    peer_address: str | None = None
    peer_port: int | None = None
    errno: int | None = None
    error_text: str | None = None


@dataclass(slots=True, kw_only=True)
class NcclErrorReport(NcclProblem):
    """PyTorch/NCCL error summaries: ``NCCL error in: ...ProcessGroupNCCL.cpp:1191, unhandled
    system error, NCCL version 2.10.3``, ``ncclSystemError: ...``, ``remote process exited or
    there was a network error``."""

    error: str
    """``unhandled system error``, ``remote process exited or there was a network error`` ..."""
    nccl_version: str | None = None


@dataclass(slots=True, kw_only=True)
class WatchdogTimeout(NcclProblem):
    """``[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1234,
    OpType=ALLREDUCE, NumelIn=.., NumelOut=.., Timeout(ms)=600000) ran for 600021 milliseconds
    before timing out.``"""

    rank: int | None = None
    seq_num: int
    op_type: str
    numel_in: int | None = None
    numel_out: int | None = None
    timeout_ms: int
    ran_for_ms: int


@dataclass(slots=True, kw_only=True)
class WatchdogException(NcclProblem):
    """``[PG 1 Rank 0] Exception (either an error or timeout) detected by watchdog at work:
    1580, last enqueued NCCL work: 1582, last completed NCCL work: 1579.``"""

    rank: int | None = None
    process_group: str | None = None
    seq_num: int
    last_enqueued: int | None = None
    last_completed: int | None = None


@dataclass(slots=True, kw_only=True)
class ProcessExit(NcclProblem):
    """A rank's process that ended abnormally, as its launcher or the kernel reported it.

    Formats (real captures under tests/fixtures/evidence/nccl-log/ and tests/fixtures/diagnose/
    peer-exit-*): torchrun ``failed (exitcode: -9) local_rank: 3 (pid: 812917) of binary: ...``
    and its failure summary block (``host : h`` / ``rank : 0 (local_rank: 0)`` / ``exitcode :
    -9 (pid: 14750)`` under ``Root Cause (first observed failure):``); Open MPI ``mpirun noticed
    that process rank 0 with PID 21183 on node host01 exited on signal 9 (Killed).``; PyTorch
    ``torch.cuda.OutOfMemoryError: CUDA out of memory`` / ``RuntimeError: CUDA out of memory``;
    the kernel's ``Out of memory: Killed process 1234 (python)``; Slurm ``slurmstepd: error:
    Detected 1 oom-kill event(s) in StepId=...`` / ``... oom_kill event ...`` and ``srun: error:
    node107: task 0: Out Of Memory`` / ``task 1: Killed`` / ``Exited with exit code 1`` (a
    ``Killed`` after the step was aborted or cancelled, or after another task exited, is srun
    tearing down the rest: ``terminated``); MPICH/Hydra ``BAD TERMINATION OF ONE OF YOUR
    APPLICATION PROCESSES`` / ``PID n RUNNING AT host`` / ``EXIT CODE: 9`` / ``EXIT STRING:
    Killed (signal 9)`` (a code above 128 is 128 + the signal); DeepSpeed ``[launch.py:..:
    sigkill_handler] [...] exits with return code = -9``; Open MPI ``Process name:
    [[12167,1],10]`` / ``Exit code: 3`` under ``mpirun detected that one or more processes
    exited with non-zero status``.

    ``reason`` reads the exit the way the failure chain needs it: ``oom`` (GPU or host memory),
    ``killed`` (SIGKILL: the OOM killer, the scheduler or an operator), ``crash`` (SIGSEGV,
    SIGBUS, SIGILL, SIGFPE) are causes a peer's RDMA retries cannot survive; ``abort`` (SIGABRT:
    what PyTorch does to a process after an NCCL error), ``terminated`` (SIGTERM/SIGINT/SIGHUP:
    the launcher tearing down the other ranks) and ``exit`` (a non-zero exit code) usually
    follow a failure rather than cause it.
    """

    reason: str
    exit_code: int | None = None
    """As reported: torchrun gives ``-N`` for a process killed by signal N."""
    signal: int | None = None
    signal_name: str | None = None
    rank: int | None = None
    local_rank: int | None = None
    first_failure: bool = False
    """torchrun listed it under ``Root Cause (first observed failure)``, or mpirun named it as
    the first process that died."""


# --------------------------------------------------------------------------------------------
# regexes (compiled once)

_MARK_RE = re.compile(r"NCCL (INFO|WARN|TRACE|ABORT)\b ?")
_PREFIX_RE = re.compile(
    r"(?:(?P<host>[^\s:\[\]<>`]+):(?P<pid>\d+):(?P<tid>\d+)\s+)?"
    r"\[(?P<dev>\d+)\](?:\s+(?P<src>[\w./+-]+:\d+))?\s*$"
)
_TORCH_RANK_RE = re.compile(r"\[rank(\d+)\]:")
_VERSION_RE = re.compile(r"NCCL version (\d+\.\d+\.\d+)(?:\+cuda([\d.]+))?")
_HOP_RE = re.compile(
    r"^(?P<kw>Channel|Ring) (?P<ch>\d+)(?:/\d+)? : (?P<src>\d+)(?:\[(?P<sdev>[0-9a-fA-F]+)\])?"
    r" -> (?P<dst>\d+)(?:\[(?P<ddev>[0-9a-fA-F]+)\])?(?: \[(?P<dir>send|receive)\])?"
    r" via (?P<via>\S.*?)\s*$"
)
_RING_ORDER_RE = re.compile(r"^(?:Channel|Ring) (\d+)(?:/(\d+))? :((?:\s+\d+)+)\s*$")
_RING_NEIGH_RE = re.compile(r"^Ring (\d+) : (-?\d+) -> (\d+) -> (-?\d+)\s*$")
_TREES_ENTRY_RE = re.compile(r"\[(\d+)\] ([-\d/]+)->(-?\d+)->(-?\d+)")
_TREE_RE = re.compile(r"^Tree (\d+) : (-?\d+) -> (\d+) -> ([-\d/]+)\s*$")
_COMM_RE = re.compile(
    r"comm (0x[0-9a-fA-F]+) rank (\d+) n[rR]anks (\d+)(.*?)(?: - (Init START|Init COMPLETE|"
    r"Destroy COMPLETE|Abort COMPLETE))?\s*$"
)
_COMM_KV_RE = re.compile(r"\b(cudaDev|nvmlDev|busId|commId|nNodes|localRanks) (\S+)")
_ENV_RE = re.compile(r"^(NCCL_[A-Z0-9_]+) set (by environment )?to (.*?)\s*$")
_IFACE_RE = re.compile(r"(?:\[(\d+)\])?([^\s:\[\]]+):(\S+?)<\d+>")
_HCA_RE = re.compile(r"\[(\d+)\]([^\s:\[\]]+):(\d+)/(\w+)(/SHARP)?")
_OOB_RE = re.compile(r"OOB ([^\s:]+):(\S+?)<\d+>")
_IB_PROBE_RE = re.compile(
    r"^NET/IB ?: \[(\d+)\] ([^\s:]+):(?:[^\s:]+:)?(\d+)/(\w+)(?:.*?speed=(\d+))?"
)
_COMPLETION_RE = re.compile(
    r"Got completion(?: from peer(?: (?P<peer>\S+?)<(?P<port>\d+)>)?)?"
    r" with (?:error |status=)(?P<status>\d+),? opcode[ =](?P<op>\d+),? len[ =](?P<len>\d+),?"
    r" vendor err (?P<verr>\d+)(?: \((?P<dir>\w+)\))?"
)
_LGID_RE = re.compile(r"localGid\s*(\S+)")
_RGID_RE = re.compile(r"remoteGids?\s*(\S+)")
_IBV_RE = re.compile(
    r"(?:Call to )?(?P<call>ibv_\w+|mlx5dv_\w+|wrap_ibv_\w+)(?:\([^)]*\))? failed(?: with"
    r" (?:error )?(?:(?P<num>\d+) )?(?P<text>[^,]+?)(?: errno (?P<errno>\d+))?)?(?:,|\s*$)"
)
_IBV_DEV_RE = re.compile(r"on dev (\S+?),")
_IBV_STATE_RE = re.compile(r"curr state (\w+), next state (\w+)")
_IBV_GIDX_RE = re.compile(r"local GID index (\d+)")
_IBV_LGID_RE = re.compile(r"local GID (\S+?),")
_IBV_RGID_RE = re.compile(r"remote GID (\S+)")
_CONNECT_RE = re.compile(r"Connect to (?P<peer>\S+?)<(?P<port>\d+)> failed\s*:\s*(?P<text>.+?)\s*$")
_CLOSED_RE = re.compile(r"Connection closed by remote peer (?P<peer>\S+?)<(?P<port>\d+)>")
_WATCHDOG_RE = re.compile(
    r"Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(?P<seq>\d+),"
    r" OpType=(?P<op>\w+)(?:, NumelIn=(?P<nin>-?\d+), NumelOut=(?P<nout>-?\d+))?.*?"
    r"Timeout\(ms\)=(?P<to>\d+)\) ran for (?P<ran>\d+) milliseconds"
)
_WD_EXC_RE = re.compile(
    r"detected by watchdog at work: (?P<seq>\d+)(?:, last enqueued NCCL work: (?P<enq>-?\d+))?"
    r"(?:, last completed NCCL work: (?P<done>-?\d+))?"
)
_PG_RANK_RE = re.compile(r"\[(?:PG (?P<pg>.*?) )?Rank (?P<rank>\d+)\]")
_NCCL_ERR_RE = re.compile(
    r"NCCL error(?: in: (?P<where>\S+?))?,? (?P<err>[a-z][^,]*?)(?:, NCCL version (?P<ver>[\d.]+))?"
    r"\s*$"
)
_GDR_HCA_RE = re.compile(r"GPU Direct RDMA (Enabled|Disabled) for HCA (\d+) '([^']*)'")
_GDR_GPU_RE = re.compile(
    r"GPU Direct RDMA (Enabled|Disabled) for GPU (\w+) / HCA (\d+)"
    r"(?: \(distance (\d+) [<>]=? (\d+)\))?"
)
_TORCHRUN_FAILED_RE = re.compile(
    r"failed \(exitcode: (?P<code>-?\d+)\) local_rank: (?P<lr>\d+) \(pid: (?P<pid>\d+)\)"
)
_SUMMARY_EXIT_RE = re.compile(r"^\s*exitcode\s*:\s*(?P<code>-?\d+) \(pid: (?P<pid>\d+)\)")
_SUMMARY_HOST_RE = re.compile(r"^\s*host\s*:\s*(\S+)")
_SUMMARY_RANK_RE = re.compile(r"^\s*rank\s*:\s*(\d+)(?: \(local_rank: (\d+)\))?")
_MPIRUN_SIGNAL_RE = re.compile(
    r"process rank (?P<rank>\d+)(?: with PID (?P<pid>\d+))?(?: on node (?P<host>\S+))?"
    r" exited on signal (?P<sig>\d+)"
)
_CUDA_OOM_RE = re.compile(r"(?:OutOfMemoryError|RuntimeError): CUDA out of memory")
_KERNEL_OOM_RE = re.compile(r"Out of memory: Kill(?:ed)? process (?P<pid>\d+)")
_SLURM_OOM_RE = re.compile(r"slurmstepd: error: Detected (?P<n>\d+) oom[-_]kill event")
_SRUN_TASK_RE = re.compile(
    r"srun: error: (?P<host>[^\s:]+): tasks? (?P<tasks>[\d,\-\[\]]+): (?P<what>Out Of Memory|"
    r"Killed|Segmentation fault|Bus error|Aborted|Terminated|Exited with exit code (?P<code>\d+))"
)
_SRUN_STEP_DOWN = (
    "Job step aborted",
    "_step_signal: Terminating",
    "CANCELLED AT",
    "Exited with exit code",
)
_HYDRA_CODE_RE = re.compile(r"^=\s+EXIT CODE: (?P<code>\d+)")
_HYDRA_AT_RE = re.compile(r"^=\s+PID (?P<pid>\d+) RUNNING AT (?P<host>\S+)")
_HYDRA_SIG_RE = re.compile(r"EXIT STRING: .*\(signal (?P<sig>\d+)\)")
_DS_RETURN_RE = re.compile(r"exits with return code = (?P<code>-?\d+)")
_OMPI_EXIT_RE = re.compile(r"^\s*Exit code:\s+(?P<code>\d+)")
_OMPI_NAME_RE = re.compile(r"Process name:\s+\[\[\d+,\d+\],(?P<rank>\d+)\]")
_LAUNCHER_MARKS = (
    "slurmstepd: error: Detected",
    "srun: error:",
    "BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES",
    "exits with return code =",
    "mpirun detected that one or more processes exited",
    "OutOfMemoryError: CUDA out of memory",
)
_INTERLEAVE_RE = re.compile(r"\S:\d+:\d+ \[\d+\] (?:[\w./+-]+:\d+ )?NCCL (?:INFO|WARN)")


# --------------------------------------------------------------------------------------------
# detection


def detect(text: str) -> float:
    """0.8 for NCCL debug markers, 0.7 for PyTorch NCCL watchdog lines alone, 0.6 for a
    launcher's report of ranks that died (torchrun's elastic agent, mpirun/prterun), else 0.

    Kept below 0.9 so a file that also holds an nccl-tests result table goes to ``nccl-tests``.
    """
    if "NCCL INFO" in text or "NCCL WARN" in text:
        return 0.8
    if "WorkNCCL(" in text or "ProcessGroupNCCL" in text:
        return 0.7
    if "NCCL version " in text and "NCCL error" in text:
        return 0.5
    if (
        "torch.distributed.elastic" in text
        or "Root Cause (first observed failure)" in text
        or _MPIRUN_SIGNAL_RE.search(text) is not None
        or any(mark in text for mark in _LAUNCHER_MARKS)
    ):
        return 0.6
    return 0.0


# --------------------------------------------------------------------------------------------
# parsing helpers


def _int(s: str | None) -> int | None:
    return int(s) if s is not None else None


def _errno_of(text: str) -> int | None:
    return _ERRNO_BY_TEXT.get(text.strip().rstrip(".").strip())


class _Common(TypedDict):
    line: int
    host: str | None
    pid: int | None
    tid: int | None
    cuda_dev: int | None
    launcher_rank: int | None


class _ProblemCommon(_Common):
    message: str
    source: str | None


def _parse_prefix(head: str, ln: int) -> tuple[_Common, str | None]:
    """``[1,3]<stdout>:host:12:34 [0] file.cc:5 `` → common fields and the source location.

    Parsed from the right without regexes: ``[dev]`` is the last bracket (after an optional
    ``file.cc:N`` token), ``host:pid:tid`` the token before it; what precedes may be a launcher
    prefix (MPI, Slurm, PyTorch ``[rankN]:``), read only if it ends before the ``[dev]``.
    """
    base = _Common(line=ln, host=None, pid=None, tid=None, cuda_dev=None, launcher_rank=None)
    source: str | None = None
    h = head.rstrip()
    if h and h[-1] != "]":
        sp = h.rfind(" ")
        tok = h[sp + 1 :]
        loc, _, num = tok.rpartition(":")
        if loc and num.isdigit():
            source = tok.lstrip("`")
            h = h[:sp].rstrip() if sp >= 0 else ""
    lb = len(h)
    if h.endswith("]"):
        lb = h.rfind("[")
        dev = h[lb + 1 : -1]
        if lb >= 0 and dev.isdigit():
            base["cuda_dev"] = int(dev)
            before = h[:lb].rstrip()
            sp = before.rfind(" ")
            parts = before[sp + 1 :].rsplit(":", 2)
            if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
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
        tm = _TORCH_RANK_RE.search(h)
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


def _parse_via(via: str) -> tuple[str, str | None, int | None, int | None, bool]:
    """``NET/IB/0(1)/GDRDMA`` → (NET, IB, 0, 1, True)."""
    if via.startswith("direct shared memory"):
        return "SHM", None, None, None, False
    parts = via.split("/")
    transport = parts[0].strip().upper() or via
    if transport != "NET" or len(parts) < 2:
        return transport, None, None, None, False
    net = parts[1].strip()
    dev: int | None = None
    proxy: int | None = None
    gdr = False
    if len(parts) >= 3:
        d = parts[2]
        base, _, rest = d.partition("(")
        if base.isdigit():
            dev = int(base)
        if rest[:-1].isdigit() and rest.endswith(")"):
            proxy = int(rest[:-1])
        gdr = any(x.startswith("GDRDMA") for x in parts[3:])
    return transport, net, dev, proxy, gdr


def _children(spec: str) -> tuple[int, ...]:
    out = []
    for part in spec.split("/"):
        c = part.strip()
        if c.isdigit():
            out.append(int(c))
    return tuple(out)


# --------------------------------------------------------------------------------------------
# message handlers: each returns a record, None (irrelevant), or raises _Unreadable


class _Unreadable(Exception):
    """A message that starts like a known one but does not parse."""


def _info(msg: str, base: _Common) -> Record | None:
    c0 = msg[:1]
    if c0 == "C":
        if msg.startswith("Call to connect returned"):
            text = msg[len("Call to connect returned") :].split(",", 1)[0].strip()
            return SocketError(
                category="socket_retry",
                errno=_errno_of(text),
                error_text=text or None,
                message=msg.strip(),
                source=None,
                **base,
            )
        if msg.startswith(("Channel ", "Ring ")):
            return _channel_or_ring(msg, base)
        if msg.startswith("Connected "):
            return _connected(msg, base)
        return None
    if c0 == "R" and msg.startswith("Ring "):
        return _channel_or_ring(msg, base)
    if c0 == "T":
        if msg.startswith("Trees "):
            entries = []
            for tm in _TREES_ENTRY_RE.finditer(msg):
                ch, kids, rank, parent = tm.groups()
                entries.append(TreeEdge(int(ch), int(rank), int(parent), _children(kids)))
            if not entries:
                raise _Unreadable("expected 'Trees [ch] c/c/c->rank->parent ...'")
            return TreeLinks(trees=tuple(entries), **base)
        if msg.startswith("Tree "):
            t1 = _TREE_RE.match(msg)
            if t1 is None:
                raise _Unreadable("expected 'Tree N : parent -> rank -> c/c/c'")
            edge = TreeEdge(int(t1[1]), int(t1[3]), int(t1[2]), _children(t1[4]))
            return TreeLinks(trees=(edge,), **base)
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
            if value.endswith(".") and value[:-1].lstrip("-").isdigit():
                value = value[:-1]
            return NcclEnv(name=m[1], value=value, from_environment=bool(m[2]), **base)
        if msg.startswith("NET/"):
            return _net(msg, base)
        return None
    if c0 == "B" and msg.startswith("Bootstrap") and "Using" in msg:
        rest = msg.partition("Using")[2]
        devs = _ifaces(rest)
        if not devs:
            raise _Unreadable("expected 'Bootstrap : Using IFACE:ADDR<0>'")
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


def _aux_plugin(msg: str, kind: str, base: _Common) -> Record | None:
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


def _version(msg: str, base: _Common) -> Record:
    m = _VERSION_RE.search(msg)
    if m is None:
        raise _Unreadable("expected 'NCCL version X.Y.Z+cudaA.B'")
    return NcclVersion(version=m[1], cuda=m[2], **base)


def _ifaces(rest: str) -> tuple[NetDevice, ...]:
    out = []
    for m in _IFACE_RE.finditer(rest):
        idx, name, addr = m.groups()
        out.append(NetDevice(_int(idx), name, address=addr))
    return tuple(out)


def _net(msg: str, base: _Common) -> Record | None:
    if msg.startswith(("NET/IB : Using", "NET/IB: Using", "NET/IBext : Using")):
        head, sep, tail = msg.partition("OOB ")
        devs = tuple(
            NetDevice(int(m[1]), m[2], port=int(m[3]), link_layer=m[4], sharp=bool(m[5]))
            for m in _HCA_RE.finditer(head)
        )
        if not devs:
            raise _Unreadable("expected 'NET/IB : Using [0]mlx5_0:1/IB ...'")
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
            raise _Unreadable("expected 'NET/Socket : Using [0]IFACE:ADDR<0>'")
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


def _gdr(msg: str, base: _Common) -> Record | None:
    m = _GDR_GPU_RE.search(msg)
    if m is not None:
        return GdrStatus(
            feature="gdr",
            enabled=m[1] == "Enabled",
            gpu=m[2],
            hca_index=int(m[3]),
            distance=_int(m[4]),
            distance_limit=_int(m[5]),
            **base,
        )
    m = _GDR_HCA_RE.search(msg)
    if m is not None:
        return GdrStatus(
            feature="gdr", enabled=m[1] == "Enabled", hca_index=int(m[2]), hca_name=m[3], **base
        )
    return None


def _channel_or_ring(msg: str, base: _Common) -> Record | None:
    if " via " in msg or msg.endswith(" via"):
        m = _HOP_RE.match(msg)
        if m is None:
            raise _Unreadable("expected 'Channel NN : SRC[dev] -> DST[dev] [send|receive] via T'")
        via = m["via"]
        transport, net, dev, proxy, gdr = _parse_via(via)
        return ChannelHop(
            channel=int(m["ch"]),
            src_rank=int(m["src"]),
            dst_rank=int(m["dst"]),
            src_dev=m["sdev"],
            dst_dev=m["ddev"],
            direction=m["dir"],
            transport=transport,
            net=net,
            net_dev=dev,
            proxy_rank=proxy,
            gdr=gdr,
            via=via,
            legacy_ring=m["kw"] == "Ring",
            **base,
        )
    if " -> " in msg:
        nm = _RING_NEIGH_RE.match(msg)
        if nm is None:
            raise _Unreadable("expected 'Ring NN : prev -> rank -> next' or a hop with 'via'")
        return RingOrder(
            channel=int(nm[1]),
            ranks=(int(nm[2]), int(nm[3]), int(nm[4])),
            neighbours_only=True,
            **base,
        )
    om = _RING_ORDER_RE.match(msg)
    if om is None:
        if " : " in msg and msg.split(" ", 2)[1][:1].isdigit():
            tail = msg.partition(" : ")[2].strip()
            if not tail or tail[0].isdigit() or tail[0] == "-":
                raise _Unreadable("expected 'Channel NN/MM : r r r ...'")
        return None
    return RingOrder(
        channel=int(om[1]),
        nchannels=_int(om[2]),
        ranks=tuple(int(x) for x in om[3].split()),
        **base,
    )


def _connected(msg: str, base: _Common) -> Record | None:
    if not msg.startswith("Connected all ") and not msg.startswith("Connected NVLS"):
        return None
    graph = (
        "nvls"
        if msg.startswith("Connected NVLS")
        else msg[14:].split(",", maxsplit=1)[0].split(maxsplit=1)[0]
    )
    pxn = gdr = None
    if "PXN " in msg:
        pxn = msg.partition("PXN ")[2][:1] == "1"
    if "GDR " in msg:
        gdr = msg.partition("GDR ")[2][:1] == "1"
    return Connected(graph=graph, pxn=pxn, gdr=gdr, **base)


_COMM_EVENTS = {
    "Init START": "init_start",
    "Init COMPLETE": "init_complete",
    "Destroy COMPLETE": "destroy_complete",
    "Abort COMPLETE": "abort_complete",
}


def _comm(msg: str, base: _Common) -> Record:
    m = _COMM_RE.search(msg)
    if m is None:
        raise _Unreadable("expected 'comm 0x.. rank R nranks N ... - Init COMPLETE'")
    kv = dict(_COMM_KV_RE.findall(m[4]))
    event = _COMM_EVENTS.get(m[5] or "", "info")

    def num(key: str) -> int | None:
        v = kv.get(key)
        return int(v) if v is not None and v.isdigit() else None

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


def _problem(msg: str, common: _Common, source: str | None) -> NcclProblem:
    base = _ProblemCommon(**common, message=msg.strip(), source=source)
    if "Got completion" in msg:
        m = _COMPLETION_RE.search(msg)
        if m is None:
            raise _Unreadable("expected 'Got completion ... with error N, opcode N, len N, ...'")
        status = int(m["status"])
        lg = _LGID_RE.search(msg)
        rg = _RGID_RE.search(msg)
        return IbCompletionError(
            category="ib_completion",
            hint=_WC_MEANING.get(status),
            status=status,
            status_name=IBV_WC_STATUS.get(status),
            opcode=int(m["op"]),
            length_bytes=int(m["len"]),
            vendor_err=int(m["verr"]),
            direction=m["dir"],
            peer_address=m["peer"],
            peer_port=_int(m["port"]),
            local_gid=lg[1] if lg else None,
            remote_gid=rg[1] if rg else None,
            **base,
        )
    if "ibv_" in msg or "mlx5dv_" in msg:
        m = _IBV_RE.search(msg)
        if m is not None:
            text = (m["text"] or "").strip()
            errno = _int(m["num"]) or _int(m["errno"]) or (_errno_of(text) if text else None)
            dev = _IBV_DEV_RE.search(msg)
            st = _IBV_STATE_RE.search(msg)
            gi = _IBV_GIDX_RE.search(msg)
            lg = _IBV_LGID_RE.search(msg)
            rg = _IBV_RGID_RE.search(msg)
            cat = "dmabuf" if "dmabuf" in m["call"] else "ibv_call"
            hint = None
            if m["call"].endswith("modify_qp") and errno == 110:
                hint = (
                    "QP could not reach the peer: no route between these GIDs (rail-only "
                    "fabric and NCCL_CROSS_NIC, wrong NCCL_IB_GID_INDEX, down link)"
                )
            return IbVerbsCallError(
                category=cat,
                hint=hint,
                call=m["call"],
                errno=errno,
                error_text=text or None,
                device=dev[1] if dev else None,
                qp_state_from=st[1] if st else None,
                qp_state_to=st[2] if st else None,
                gid_index=int(gi[1]) if gi else None,
                local_gid=lg[1] if lg else None,
                remote_gid=rg[1] if rg else None,
                **base,
            )
    if "Connect to " in msg and "failed" in msg:
        m = _CONNECT_RE.search(msg)
        if m is not None:
            text = m["text"]
            return SocketError(
                category="socket_connect",
                peer_address=m["peer"],
                peer_port=int(m["port"]),
                errno=_errno_of(text),
                error_text=text,
                **base,
            )
    if "Connection closed by remote peer" in msg:
        m = _CLOSED_RE.search(msg)
        return SocketError(
            category="socket_closed",
            peer_address=m["peer"] if m else None,
            peer_port=int(m["port"]) if m else None,
            **base,
        )
    low = msg.lower()
    if "call to connect" in low or "socket" in low:
        text = msg.rpartition(":")[2].strip() if ":" in msg else None
        return SocketError(
            category="socket_error",
            errno=_errno_of(text) if text else None,
            error_text=text,
            **base,
        )
    if "dma-buf" in low or "dmabuf" in low:
        return NcclProblem(category="dmabuf", **base)
    if "remote process exited" in low:
        return NcclProblem(category="remote_error", **base)
    if "unhandled system error" in low:
        return NcclProblem(category="nccl_error", **base)
    if "[proxy" in low or "proxy" in low.split(" ", 1)[0]:
        return NcclProblem(category="proxy", **base)
    if msg.startswith(("NET/OFI", "NET/Plugin")) or "libibverbs" in msg:
        return NcclProblem(category="net_plugin", **base)
    if low.startswith("cuda") or "cuda failure" in low:
        return NcclProblem(category="cuda", **base)
    hint = "NCCL_IB_TIMEOUT" if "NCCL_IB_TIMEOUT" in msg else None
    return NcclProblem(category="other", hint=hint, **base)


def _torch(line: str, ln: int) -> Record | None:
    """PyTorch ProcessGroupNCCL lines (no NCCL INFO/WARN marker)."""
    tm = _TORCH_RANK_RE.search(line)
    base = _ProblemCommon(
        line=ln,
        host=None,
        pid=None,
        tid=None,
        cuda_dev=None,
        launcher_rank=int(tm.group(1)) if tm is not None else None,
        message=line.strip(),
        source=None,
    )
    if "Got completion" in line and "Watchdog caught" not in line:
        return _embedded_completion(line, ln, base["launcher_rank"])
    if "Watchdog caught" in line:
        m = _WATCHDOG_RE.search(line)
        if m is None:
            raise _Unreadable("expected 'Watchdog caught ... WorkNCCL(SeqNum=.., ...) ran for N'")
        rk = _PG_RANK_RE.search(line)
        return WatchdogTimeout(
            category="watchdog_timeout",
            hint="a collective did not finish in time: a stalled or lost network path, a rank "
            "that died or diverged (different OpType/SeqNum across ranks: desync)",
            rank=int(rk["rank"]) if rk else None,
            seq_num=int(m["seq"]),
            op_type=m["op"],
            numel_in=_int(m["nin"]),
            numel_out=_int(m["nout"]),
            timeout_ms=int(m["to"]),
            ran_for_ms=int(m["ran"]),
            **base,
        )
    if "detected by watchdog at work" in line:
        m = _WD_EXC_RE.search(line)
        if m is None:
            raise _Unreadable("expected 'detected by watchdog at work: N, ...'")
        rk = _PG_RANK_RE.search(line)
        return WatchdogException(
            category="watchdog_exception",
            rank=int(rk["rank"]) if rk else None,
            process_group=rk["pg"] if rk else None,
            seq_num=int(m["seq"]),
            last_enqueued=_int(m["enq"]),
            last_completed=_int(m["done"]),
            **base,
        )
    if "NCCL error" in line:
        m = _NCCL_ERR_RE.search(line)
        if m is None:
            return None
        err = m["err"].split(" (run with", 1)[0].strip()
        cat = "remote_error" if "remote process" in err else "nccl_error"
        return NcclErrorReport(category=cat, error=err, nccl_version=m["ver"], **base)
    return None


def _embedded_completion(line: str, ln: int, rank: int | None) -> Record | None:
    """An IB completion error PyTorch quotes (``... Last error: NET/IB : Got completion from
    peer 11.214.147.122<39138> with error 12, opcode 0, len 0, vendor err 129``) or that a
    launcher printed without NCCL's prefix; ``None`` when it does not parse."""
    at = line.find("Got completion")
    start = line.rfind("NET/", 0, at)
    common = _Common(line=ln, host=None, pid=None, tid=None, cuda_dev=None, launcher_rank=rank)
    try:
        return _problem(line[start if start >= 0 else at :], common, None)
    except _Unreadable:
        return None


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
    lines = text.split("\n")
    last = len(lines)
    while last > 0 and not lines[last - 1].strip():
        last -= 1
    for idx in range(last):
        line = lines[idx]
        if "NCCL" not in line:
            if "Got completion" in line:
                tr = _TORCH_RANK_RE.search(line)
                emb = _embedded_completion(line, idx + 1, int(tr[1]) if tr else None)
                if emb is not None:
                    records.append(emb)
                continue
            if _may_be_exit(line):
                died = _process_exit(lines, idx)
                if died is not None:
                    records.append(died)
            continue
        ln = idx + 1
        try:
            rec = _parse_line(line, ln, result)
        except _Unreadable as exc:
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


_SIGNALS: dict[int, tuple[str, str]] = {
    1: ("SIGHUP", "terminated"),
    2: ("SIGINT", "terminated"),
    4: ("SIGILL", "crash"),
    6: ("SIGABRT", "abort"),
    7: ("SIGBUS", "crash"),
    8: ("SIGFPE", "crash"),
    9: ("SIGKILL", "killed"),
    11: ("SIGSEGV", "crash"),
    15: ("SIGTERM", "terminated"),
}
"""Linux signal numbers (signal(7)) and how a rank's death by each reads in a failure chain."""


def _may_be_exit(line: str) -> bool:
    """Cheap pre-filter for :func:`_process_exit` (most lines of a log are neither)."""
    return (
        "exit" in line
        or "emory" in line
        or "noticed that" in line
        or "srun: error:" in line
        or "EXIT CODE" in line
        or "Exit code:" in line
        or "oom" in line
    )


def _process_exit(lines: list[str], idx: int) -> ProcessExit | None:
    """A launcher's or the kernel's report of a rank that died; ``None`` for anything else
    (exit code 0 included)."""
    line = lines[idx]
    if "noticed that process rank" in line and "signal" not in line and idx + 1 < len(lines):
        # Open MPI/PRRTE wrap their help text near 80 columns ("... on node cn517 exited on" /
        # "signal 9 (Killed)."): read the report as one line, at the line where it starts
        line = f"{line.rstrip()} {lines[idx + 1].strip()}"
    elif (
        idx > 0
        and "noticed that process rank" in lines[idx - 1]
        and "signal" not in (lines[idx - 1])
    ):
        return None  # the wrapped tail of the report above, read there
    tr = _TORCH_RANK_RE.search(line)
    base = _ProblemCommon(
        line=idx + 1,
        host=None,
        pid=None,
        tid=None,
        cuda_dev=None,
        launcher_rank=int(tr.group(1)) if tr is not None else None,
        message=line.strip(),
        source=None,
    )
    m = _TORCHRUN_FAILED_RE.search(line)
    if m is not None:
        return _exited(base, int(m["code"]), pid=int(m["pid"]), local_rank=int(m["lr"]))
    m = _SUMMARY_EXIT_RE.search(line)
    if m is not None:
        host: str | None = None
        rank: int | None = None
        local: int | None = None
        first = False
        for back in range(idx - 1, max(-1, idx - 10), -1):
            prev = lines[back]
            if host is None and (hm := _SUMMARY_HOST_RE.match(prev)) is not None:
                host = hm[1]
            elif rank is None and (rm := _SUMMARY_RANK_RE.match(prev)) is not None:
                rank, local = int(rm[1]), _int(rm[2])
            elif "Root Cause" in prev:
                first = True
                break
            elif "Failures:" in prev or prev.startswith("---") or prev.startswith("==="):
                break
        base["host"] = host
        return _exited(
            base, int(m["code"]), pid=int(m["pid"]), rank=rank, local_rank=local, first=first
        )
    m = _MPIRUN_SIGNAL_RE.search(line)
    if m is not None:
        base["host"] = m["host"].rstrip(".") if m["host"] else None
        base["pid"] = _int(m["pid"])
        sig = int(m["sig"])
        name, reason = _SIGNALS.get(sig, (f"signal {sig}", "crash"))
        return ProcessExit(
            category="process_exit",
            hint=_EXIT_HINT[reason],
            reason=reason,
            signal=sig,
            signal_name=name,
            rank=int(m["rank"]),
            first_failure="run noticed that" in line,  # mpirun (Open MPI) and prterun (PRRTE)
            **base,
        )
    launcher = _launcher_exit(lines, idx, line, base)
    if launcher is not None:
        return launcher
    if _CUDA_OOM_RE.search(line) is not None:
        return ProcessExit(category="process_exit", hint=_EXIT_HINT["oom"], reason="oom", **base)
    m = _KERNEL_OOM_RE.search(line)
    if m is not None:
        base["pid"] = int(m["pid"])
        return ProcessExit(
            category="process_exit",
            hint=_EXIT_HINT["oom"],
            reason="oom",
            signal=9,
            signal_name="SIGKILL",
            **base,
        )
    return None


def _signalled(base: _ProblemCommon, sig: int, **extra: Any) -> ProcessExit:
    name, reason = _SIGNALS.get(sig, (f"signal {sig}", "crash"))
    return ProcessExit(
        category="process_exit",
        hint=_EXIT_HINT[reason],
        reason=reason,
        signal=sig,
        signal_name=name,
        **extra,
        **base,
    )


def _code_exit(base: _ProblemCommon, code: int, **extra: Any) -> ProcessExit | None:
    """An exit code as launchers print it: 0 is no death, a negative code is the signal that
    killed the process (Python's ``returncode``), a positive one the process's own exit."""
    if code == 0:
        return None
    if code < 0:
        return _signalled(base, -code, exit_code=code, **extra)
    return ProcessExit(
        category="process_exit",
        hint=_EXIT_HINT["exit"],
        reason="exit",
        exit_code=code,
        **extra,
        **base,
    )


def _launcher_exit(
    lines: list[str], idx: int, line: str, base: _ProblemCommon
) -> ProcessExit | None:
    """Slurm, MPICH/Hydra, DeepSpeed and Open MPI reports of a rank that ended (formats in
    :class:`ProcessExit`); ``None`` for anything else."""
    m = _SLURM_OOM_RE.search(line)
    if m is not None:
        return ProcessExit(category="process_exit", hint=_EXIT_HINT["oom"], reason="oom", **base)
    m = _SRUN_TASK_RE.search(line)
    if m is not None:
        base["host"] = m["host"]
        tasks = m["tasks"]
        rank = int(tasks) if tasks.isdigit() else None
        what = m["what"]
        if what == "Out Of Memory":
            return ProcessExit(
                category="process_exit", hint=_EXIT_HINT["oom"], reason="oom", rank=rank, **base
            )
        if m["code"] is not None:
            return _code_exit(base, int(m["code"]), rank=rank)
        sig = {"Killed": 9, "Segmentation fault": 11, "Bus error": 7, "Aborted": 6}.get(what, 15)
        if sig == 9 and any(mark in prev for prev in lines[:idx] for mark in _SRUN_STEP_DOWN):
            # srun kills the remaining tasks once one failed or the step was cancelled: a
            # consequence, not the death that started the failure
            sig = 15
        return _signalled(base, sig, rank=rank)
    m = _HYDRA_CODE_RE.search(line)
    if m is not None and any("BAD TERMINATION" in prev for prev in lines[max(0, idx - 4) : idx]):
        code = int(m["code"])
        for prev in lines[max(0, idx - 3) : idx]:
            if (at := _HYDRA_AT_RE.search(prev)) is not None:
                base["host"], base["pid"] = at["host"], int(at["pid"])
        if code > 128:
            return _signalled(base, code - 128, exit_code=code)
        for nxt in lines[idx + 1 : idx + 6]:
            if (sm := _HYDRA_SIG_RE.search(nxt)) is not None:
                return _signalled(base, int(sm["sig"]), exit_code=code)
        return _code_exit(base, code)
    m = _DS_RETURN_RE.search(line)
    if m is not None:
        return _code_exit(base, int(m["code"]))
    m = _OMPI_EXIT_RE.search(line)
    if m is not None and idx > 0 and (nm := _OMPI_NAME_RE.search(lines[idx - 1])) is not None:
        return _code_exit(
            base,
            int(m["code"]),
            rank=int(nm["rank"]),
            first_failure=any(
                "first process to do so" in prev for prev in lines[max(0, idx - 5) : idx]
            ),
        )
    return None


_EXIT_HINT: dict[str, str] = {
    "oom": "out of memory: the rank died (or stopped answering) and its peers' RDMA "
    "retries and socket reads fail after it",
    "killed": "SIGKILL: the kernel OOM killer, the scheduler or an operator ended the rank",
    "crash": "the rank crashed (segfault, bus error, illegal instruction)",
    "abort": "SIGABRT: PyTorch aborts a rank after an NCCL error; usually a consequence",
    "terminated": "the launcher stopped the rank after another one failed; a consequence",
    "exit": "the rank exited with an error code",
}


def _exited(
    base: _ProblemCommon,
    code: int,
    *,
    pid: int,
    rank: int | None = None,
    local_rank: int | None = None,
    first: bool = False,
) -> ProcessExit | None:
    """torchrun's ``exitcode``: negative is the signal that killed the process."""
    base["pid"] = pid
    return _code_exit(base, code, rank=rank, local_rank=local_rank, first_failure=first)


def _looks_cut(line: str) -> bool:
    """A last line that holds only an NCCL prefix (``host:1:2 [0] NCCL INF``)."""
    s = line.rstrip()
    return bool(s) and s.endswith((" NCCL", " NCCL I", " NCCL IN", " NCCL INF", " NCCL W"))


def _parse_line(line: str, ln: int, result: ParseResult) -> Record | None:
    m = _MARK_RE.search(line)
    if m is None:
        if "NCCL version" in line and "NCCL error" not in line:
            vm = _VERSION_RE.search(line)
            if vm is not None:
                base, _ = _parse_prefix(line[: vm.start()], ln)
                return NcclVersion(version=vm[1], cuda=vm[2], **base)
        if "atchdog" in line or "NCCL error" in line:
            return _torch(line, ln)
        return None
    level = m.group(1)
    msg = line[m.end() :]
    if ("NCCL INFO" in msg or "NCCL WARN" in msg) and _INTERLEAVE_RE.search(msg) is not None:
        result.warn(ln, "output of several processes interleaved in one line; skipped", line)
        return None
    if level == "WARN":
        base, source = _parse_prefix(line[: m.start()], ln)
        return _problem(msg, base, source)
    if level != "INFO":
        return None
    c0 = msg[:1]
    if c0 not in _INFO_FIRST and "comm 0x" not in msg and "GPU Direct" not in msg:
        return None
    if "Watchdog caught" in msg or "NCCL error" in msg:
        return _torch(msg, ln)
    base, _ = _parse_prefix(line[: m.start()], ln)
    return _info(msg, base)


_INFO_FIRST = frozenset("CRTNBUPD")
