"""Record verdicts for host information captures: ``ucx_info``, ``ucx_perftest``,
``nvidia-smi topo -m`` and ``ulimit``.

* ``ucx_devices`` (one ``ucx_info -d`` listing): no RDMA transport at all → ``host.rdma-device``
  (warning when the host is meant to do RDMA: the fabric file says RoCE/InfiniBand, or the same
  host's evidence shows an RDMA device; info otherwise, since a TCP-only host is legitimate); an
  InfiniBand device (``mlx5_0:1``) or ``ib`` memory domain with no ``rc``/``dc``/``ud``
  transport → info.
* ``ucx_perftest``: a bandwidth test with messages of 1 MiB or more whose result is under half
  of the line rate → ``fabric.slow-link`` (warning), or ``config.nccl-env`` when ``UCX_TLS``
  kept UCX off RDMA. The line rate comes from UCX's own estimate for the RDMA device in a
  ``ucx_info -d`` of the same host, else from the fabric file's RDMA ports; without either there
  is no verdict.
* ``gpu_topology``: GPUs whose nearest NIC is beyond PXB (PHB, NODE or SYS: through the CPU) →
  ``host.pcie`` warning, because NCCL enables GPUDirect RDMA by default only up to PXB
  (``NCCL_NET_GDR_LEVEL``; ``netGdrLevel = PATH_PXB`` in ``ncclTopoCheckGdr``, NCCL
  ``src/graph/paths.cc``); info instead when the GPU has an NVLink peer with a near NIC (NCCL's
  PXN can route through it). An 8-GPU matrix with no NVLink, GPUs only through the CPU → info.
* ``ulimit``: max locked memory finite → ``host.memlock`` warning, error at 64 KiB or less (the
  old kernel default, with which verbs cannot even create a completion queue: openucx/ucx#8229);
  open files ≤ 1024 and max user processes < 4096 → ``host.resources`` info.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations
from typing import TYPE_CHECKING

from aifabric.checks.diagnose.verdicts import Verdict, verdict
from aifabric.evidence.base import Record
from aifabric.evidence.gpu_topo import LINK_RANK, GpuTopology
from aifabric.evidence.host_limits import ResourceLimit
from aifabric.evidence.ucx import UcxDevices, UcxPerftestRun, UcxTransport, is_rdma_transport

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence, Item

__all__: list[str] = []

RDMA_HW_RECORDS = frozenset(
    {"ibv_device", "ibv_port", "ibstat_ca", "ibstat_port", "gid", "rdma_dev", "rdma_link"}
)
"""Record types that show an RDMA device on a host (ibv_devinfo, ibstat, show_gids, rdma
link, rdma dev)."""

SLOW_RATIO = 0.5
"""A bandwidth test below this fraction of the line rate is 'far below'."""
MIN_BW_MESSAGE_BYTES = 1 << 20
"""Only messages this large are expected to approach line rate."""
MEMLOCK_ERROR_KB = 64
NOFILE_INFO_MAX = 1024
NPROC_INFO_BELOW = 4096

_GDR_LEVEL_MAX = LINK_RANK["PXB"]

_REF_UCX_DOCKER = (
    "https://openucx.readthedocs.io/en/master/running.html#running-in-docker-containers"
)
_REF_NCCL_GDR = (
    "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-net-gdr-level"
)
_REF_NCCL_GDR_SRC = "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/paths.cc"
_REF_NCCL_PXN = (
    "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-pxn-disable"
)
_REF_UCX_MEMLOCK = "https://github.com/openucx/ucx/blob/master/src/uct/ib/base/ib_log.c"
_REF_RHEL_MEMLOCK = (
    "https://docs.redhat.com/zh-cn/documentation/red_hat_enterprise_linux/7/html/"
    "networking_guide/sec-relaxing_memlock_restrictions_for_users"
)
_REF_NCCL_TESTS_206 = "https://github.com/NVIDIA/nccl-tests/issues/206"
_REF_UCX_8229 = "https://github.com/openucx/ucx/issues/8229"


# ---- helpers ------------------------------------------------------------------------------------


def _item(rec: Record, ev: Evidence) -> Item | None:
    return next((it for it in ev.items if it.record is rec), None)


def _subject(rec: Record, ev: Evidence) -> str | None:
    item = _item(rec, ev)
    return item.subject if item is not None else None


def _same_subject(rec: Record, ev: Evidence) -> list[Record]:
    subject = _subject(rec, ev)
    if subject is None:
        return []
    return [it.record for it in ev.items if it.subject == subject and it.record is not rec]


def _rdma_expected(rec: Record, ev: Evidence) -> str | None:
    """Why this host should do RDMA, or None when nothing says so."""
    fabric = ev.fabric
    if fabric is not None and fabric.transport in ("roce", "ib"):
        return f"the fabric file says transport {fabric.transport}"
    for other in _same_subject(rec, ev):
        if other.record_type in RDMA_HW_RECORDS:
            return f"the same host's {other.record_type} evidence shows an RDMA device"
    return None


def _fabric_port_speed(ev: Evidence, subject: str | None) -> float | None:
    fabric = ev.fabric
    if fabric is None:
        return None
    servers = [s for s in fabric.servers if s.name == subject] or list(fabric.servers)
    speeds = {p.speed_gbps for s in servers for p in s.ports if p.purpose in ("roce", "ib")}
    return speeds.pop() if len(speeds) == 1 else None


def _ucx_device_rate(rec: UcxPerftestRun, ev: Evidence) -> tuple[float, str] | None:
    wanted = rec.env.get("UCX_NET_DEVICES", "")
    devices = [d.strip() for d in wanted.split(",") if d.strip() and d.strip() != "all"]
    best: tuple[float, str] | None = None
    for other in _same_subject(rec, ev):
        if not isinstance(other, UcxTransport) or not other.rdma:
            continue
        if other.bandwidth_gbps is None or (devices and other.device not in devices):
            continue
        if best is None or other.bandwidth_gbps > best[0]:
            best = (other.bandwidth_gbps, f"UCX's estimate for {other.transport}/{other.device}")
    return best


def _line_rate(rec: UcxPerftestRun, ev: Evidence) -> tuple[float, str] | None:
    found = _ucx_device_rate(rec, ev)
    if found is not None:
        return found
    speed = _fabric_port_speed(ev, _subject(rec, ev))
    if speed is not None:
        return speed, "the RDMA port speed of the fabric file"
    return None


def _tls_allows_rdma(tls: list[str]) -> bool:
    if not tls or tls[0].startswith("^"):
        return True
    return any(t in ("all", "ib") or is_rdma_transport(t) for t in tls)


# ---- ucx_info -d --------------------------------------------------------------------------------


@verdict("ucx_devices")
def _ucx_devices(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, UcxDevices) or not rec.transports:
        return
    if not rec.has_rdma:
        why = _rdma_expected(rec, ev)
        listed = ", ".join(rec.transports)
        yield Verdict(
            id="diagnose.ucx-no-rdma-transport",
            severity="warning" if why else "info",
            cause="host.rdma-device",
            message=f"UCX lists no RDMA transport (only {listed}): UCX traffic can only use "
            "TCP and shared memory",
            explanation=(
                "ucx_info -d shows the transports UCX can open on this host. None of them is an "
                "RDMA transport (rc, dc or ud on an InfiniBand/RoCE device, srd on EFA), so "
                "UCX, and MPI or NCCL over UCX, will fall back to TCP"
                + (
                    f"; {why}."
                    if why
                    else ". If this host should use InfiniBand or RoCE, the "
                    "RDMA device is invisible to UCX."
                )
                + " Usual reasons: the UCX build or package without its InfiniBand module (RHEL "
                "and Fedora ship it separately as ucx-ib), no /dev/infiniband in the container, "
                "the HCA driver not loaded, or UCX_TLS / UCX_NET_DEVICES excluding the device."
            ),
            fix=(
                "Check 'ibv_devinfo' shows the HCA with an active port; install the UCX "
                "InfiniBand transport package (e.g. 'dnf install ucx-ib') or rebuild UCX with "
                "--with-verbs; in containers pass --device=/dev/infiniband and --ulimit "
                "memlock=-1; unset UCX_TLS/UCX_NET_DEVICES restrictions; then re-run "
                "'ucx_info -d | grep Transport' and expect rc_*/ud_*/dc_* lines."
            ),
            refs=("S5", "S20", _REF_UCX_DOCKER, "https://github.com/openucx/ucx/issues/8808"),
            confidence=0.7 if why else 0.35,
        )
    for dev in rec.ib_devices_without_rdma:
        yield Verdict(
            id="diagnose.ucx-device-without-rdma",
            severity="info",
            cause="host.rdma-device",
            message=f"UCX sees {dev} but opens no rc, dc or ud transport on it "
            f"(only {', '.join(rec.device_transports.get(dev, [])) or 'none'})",
            explanation=(
                "UCX names InfiniBand/RoCE ports 'device:port'. A port listed without any RDMA "
                "transport is usually down, has no usable GID (RoCE), or is excluded by UCX_TLS."
            ),
            fix=f"Check the port state and GIDs of {dev.split(':')[0]} (ibv_devinfo, show_gids) "
            "and UCX_TLS.",
            refs=("S5", "S20"),
            confidence=0.4,
        )
    for md in rec.memory_domains:
        if md.component == "ib" and md.no_devices and not md.devices:
            yield Verdict(
                id="diagnose.ucx-device-without-rdma",
                severity="info",
                cause="host.rdma-device",
                message=f"UCX memory domain {md.name} (InfiniBand) has no usable device",
                explanation=(
                    "ucx_info printed 'no supported devices found' for an InfiniBand memory "
                    "domain: the HCA is present but none of its ports can carry a UCX transport "
                    "(port down, no GID, or filtered by UCX_NET_DEVICES)."
                ),
                fix=f"Check the ports of {md.name} with ibv_devinfo and the RoCE GID table.",
                refs=("S5", "S20"),
                confidence=0.4,
                line=md.line,
            )


# ---- ucx_perftest -------------------------------------------------------------------------------


@verdict("ucx_perftest")
def _ucx_perftest_bandwidth(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, UcxPerftestRun) or not rec.is_bandwidth_test:
        return
    row = rec.result
    measured = row.bw_overall_gbps if row is not None else None
    if row is None or measured is None:
        return
    if rec.message_size_bytes is None or rec.message_size_bytes < MIN_BW_MESSAGE_BYTES:
        return
    found = _line_rate(rec, ev)
    if found is None:
        return
    rate, source = found
    if rate <= 0 or measured >= SLOW_RATIO * rate:
        return
    pct = 100.0 * measured / rate
    test = rec.test or rec.test_description or "bandwidth test"
    base = (
        f"ucx_perftest {test} reached {measured:.1f} Gb/s ({row.bw_overall_mibps:.0f} MB/s) with "
        f"{rec.message_size_bytes} B messages, {pct:.0f}% of the {rate:.0f} Gb/s line rate "
        f"({source})"
    )
    tls = rec.transports
    if not _tls_allows_rdma(tls):
        yield Verdict(
            id="diagnose.ucx-perftest-slow",
            severity="warning",
            cause="config.nccl-env",
            message=base + f"; UCX_TLS={','.join(tls)} keeps UCX off RDMA",
            explanation=(
                "The run was restricted to non-RDMA transports by UCX_TLS, so the data went "
                "through TCP sockets (and, for GPU buffers, staged through host memory). A single "
                "TCP stream cannot approach the line rate of an RDMA NIC."
            ),
            fix="Allow the RDMA transport (UCX_TLS=rc,... or unset UCX_TLS) and re-run; keep the "
            "TCP run only as a baseline.",
            refs=("S23", "https://github.com/openucx/ucx/issues/5252"),
            confidence=0.6,
            line=row.line,
        )
        return
    yield Verdict(
        id="diagnose.ucx-perftest-slow",
        severity="warning",
        cause="fabric.slow-link",
        message=base,
        explanation=(
            "A bandwidth test with large messages normally reaches most of the link rate. Less "
            "than half points at the path: a port at reduced speed or width, a PCIe slot that "
            "cannot feed the NIC, traffic crossing the CPU socket, a bond using one member, or "
            "losses and retransmissions"
            + (
                "; with GPU buffers, missing GPUDirect RDMA also stages data through host memory"
                if "cuda" in (rec.send_memory or "") + (rec.recv_memory or "")
                else ""
            )
            + ". ucx_perftest MB/s are MiB/s (perftest_run.c divides by 1024*1024)."
        ),
        fix=(
            "Compare with ib_write_bw between the same two ports, check the port's active speed "
            "and width (ibstat, mlxlink) and the NIC's PCIe link (lspci LnkSta), pin the process "
            "to the NIC's NUMA node, and check which device UCX chose (UCX_PROTO_INFO=y)."
        ),
        refs=("S23", "https://github.com/openucx/ucx/issues/10430"),
        confidence=0.5,
        line=row.line,
    )


# ---- nvidia-smi topo -m -------------------------------------------------------------------------


@verdict("gpu_topology")
def _gpu_nic_distance(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, GpuTopology) or not rec.nics:
        return
    far: list[tuple[str, str, list[str]]] = []
    pxn: list[tuple[str, str, str]] = []
    for gpu in rec.gpus:
        kind, nics = rec.nearest_nics(gpu)
        if kind is None or LINK_RANK[kind] <= _GDR_LEVEL_MAX:
            continue
        helper = None
        if not rec.pci_only:
            for peer in rec.nvlink_peers(gpu):
                peer_kind, peer_nics = rec.nearest_nics(peer)
                if peer_kind is not None and LINK_RANK[peer_kind] <= _GDR_LEVEL_MAX:
                    helper = f"{peer} ({rec.nic_name(peer_nics[0])} {peer_kind})"
                    break
        if helper is not None:
            pxn.append((gpu, kind, helper))
        else:
            far.append((gpu, kind, nics))
    if far:
        desc = "; ".join(
            f"{g}: {kind} to {', '.join(rec.nic_name(n) for n in nics)}" for g, kind, nics in far
        )
        yield Verdict(
            id="diagnose.gpu-nic-far",
            severity="warning",
            cause="host.pcie",
            message=f"{len(far)} GPU(s) reach their nearest NIC only through the CPU ({desc})",
            explanation=(
                "PHB, NODE and SYS paths cross a PCIe host bridge, the CPU's internal fabric or "
                "the socket interconnect. NCCL enables GPUDirect RDMA only up to "
                "NCCL_NET_GDR_LEVEL, PXB by default (netGdrLevel = PATH_PXB in ncclTopoCheckGdr), "
                "so network traffic of these GPUs is staged through host memory, and the "
                "CPU-crossing path is slower than a PCIe switch even when GDR is forced."
                + (
                    " The matrix is PCIe-only (topo -mp): NVLink peers that NCCL's PXN could use "
                    "are not visible."
                    if rec.pci_only
                    else ""
                )
            ),
            fix=(
                "Place each GPU and its NIC under the same PCIe switch (server slot layout or "
                "riser), or pin ranks to GPUs that have a PIX/PXB NIC; raising "
                "NCCL_NET_GDR_LEVEL (e.g. PHB) enables GDR across the CPU but rarely restores the "
                "bandwidth. Check 'NCCL_DEBUG=INFO' for 'GPU Direct RDMA Disabled'."
            ),
            refs=("S9", "S20", _REF_NCCL_GDR, _REF_NCCL_GDR_SRC),
            confidence=0.55,
            line=rec.row_line(far[0][0]),
        )
    if pxn:
        desc = "; ".join(f"{g}: {kind}, NVLink peer {helper}" for g, kind, helper in pxn)
        yield Verdict(
            id="diagnose.gpu-nic-far-pxn",
            severity="info",
            cause="host.pcie",
            message=f"{len(pxn)} GPU(s) have no NIC within PXB but an NVLink peer that has one "
            f"({desc})",
            explanation=(
                "These GPUs would not use GPUDirect RDMA on their own (NCCL_NET_GDR_LEVEL "
                "defaults to PXB), but NCCL's PXN (PCI x NVLink) sends their data over NVLink to "
                "a peer GPU next to a NIC, so the topology is workable as long as PXN is enabled."
            ),
            fix="Keep NCCL_PXN_DISABLE unset (PXN on); check NCCL_DEBUG=INFO rings use the near "
            "NICs.",
            refs=("S9", _REF_NCCL_PXN, _REF_NCCL_GDR),
            confidence=0.35,
            line=rec.row_line(pxn[0][0]),
        )


@verdict("gpu_topology")
def _gpu_no_nvlink(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, GpuTopology) or rec.pci_only or len(rec.gpus) < 8:
        return
    pairs = [rec.link(a, b) for a, b in combinations(rec.gpus, 2)]
    seen = [p for p in pairs if p is not None]
    if not seen or not all(p in ("SYS", "NODE", "PHB") for p in seen):
        return
    kinds = ", ".join(sorted(set(seen)))
    yield Verdict(
        id="diagnose.gpu-no-nvlink",
        severity="info",
        cause="host.pcie",
        message=f"{len(rec.gpus)} GPUs with no NVLink between them: every GPU pair is {kinds}",
        explanation=(
            "On an 8-GPU HGX/DGX board the GPUs are connected by NVLink (NV# in the matrix). Here "
            "every pair crosses the CPU, so intra-node collectives run over PCIe and host "
            "bridges. That is normal for PCIe-only servers; on an NVLink board it means NVLink "
            "is not visible (virtual machine passthrough, fabric manager, driver)."
        ),
        fix="If the server has NVLink, check 'nvidia-smi nvlink --status' and the "
        "nvidia-fabricmanager service; otherwise expect PCIe-level intra-node bandwidth.",
        refs=("S8", "S9"),
        confidence=0.3,
        line=rec.row_line(rec.gpus[0]),
    )


# ---- ulimit -------------------------------------------------------------------------------------


def _superseded(rec: ResourceLimit, ev: Evidence) -> bool:
    """A later line of the same capture reports the same limit (``ulimit -l`` then ``-a``)."""
    item = _item(rec, ev)
    if item is None or item.file is None:
        return False
    for other in ev.items:
        o = other.record
        if (
            other.file is item.file
            and isinstance(o, ResourceLimit)
            and o is not rec
            and o.option == rec.option
            and o.scope == rec.scope
            and o.line > rec.line
        ):
            return True
    return False


@verdict("ulimit")
def _ulimit(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, ResourceLimit) or rec.value is None or _superseded(rec, ev):
        return
    if rec.option == "l":
        yield _memlock(rec)
    elif rec.option == "n" and rec.value <= NOFILE_INFO_MAX:
        yield Verdict(
            id="diagnose.open-files-low",
            severity="info",
            cause="host.resources",
            message=f"open files limit is {rec.value}",
            explanation=(
                "NCCL, UCX and MPI open sockets, shared-memory segments and device files per "
                "peer and per channel; at a few hundred ranks per job a 1024 descriptor limit is "
                "reached ('Too many open files')."
            ),
            fix="Raise nofile (e.g. 1048576) in /etc/security/limits.conf, the systemd unit "
            "(LimitNOFILE) or the container runtime (--ulimit nofile=...).",
            refs=("S20",),
            confidence=0.3,
        )
    elif rec.option == "u" and rec.value < NPROC_INFO_BELOW:
        yield Verdict(
            id="diagnose.nproc-low",
            severity="info",
            cause="host.resources",
            message=f"max user processes is {rec.value}",
            explanation=(
                "Threads count against RLIMIT_NPROC. NCCL proxy threads, data loader workers and "
                "MPI progress threads of several ranks of one user add up; below the 4096 that "
                "RHEL sets for non-root users, thread creation can fail."
            ),
            fix="Raise nproc in /etc/security/limits.conf (or limits.d) for the job's user.",
            refs=("S20",),
            confidence=0.25,
        )


def _memlock(rec: ResourceLimit) -> Verdict:
    # kbytes as ulimit prints them; /proc/PID/limits and systemd give bytes
    kb = rec.value_bytes // 1024 if rec.value_bytes is not None else rec.value or 0
    tiny = kb <= MEMLOCK_ERROR_KB
    return Verdict(
        id="diagnose.memlock-limited",
        severity="error" if tiny else "warning",
        cause="host.memlock",
        message=f"max locked memory is {kb} kbytes, not unlimited"
        + (" (the old kernel default: RDMA cannot create its queues)" if tiny else ""),
        explanation=(
            "RDMA pins (locks) every buffer it registers, and the completion queues and queue "
            "pairs themselves; RLIMIT_MEMLOCK caps that for processes without CAP_IPC_LOCK. "
            + (
                "With 64 KB, ibv_create_cq already fails with 'Cannot allocate memory' "
                "(openucx/ucx#8229). "
                if tiny
                else "NCCL, UCX and perftest register many megabytes to gigabytes, and "
                "ibv_reg_mr fails with ENOMEM once the limit is reached (nccl-tests#206 failed at "
                "8192 KB). "
            )
            + "UCX's own error message says \"Please set max locked memory (ulimit -l) to "
            "'unlimited'\", and Red Hat's RDMA guide sets memlock unlimited for all users."
        ),
        fix=(
            "Set '* soft memlock unlimited' and '* hard memlock unlimited' in "
            "/etc/security/limits.d/rdma.conf (log in again), LimitMEMLOCK=infinity for systemd "
            "services and slurmd, '--ulimit memlock=-1' for containers; verify with 'ulimit -l' "
            "inside the job (mpirun/srun), not only in a login shell."
        ),
        refs=(
            "S15", "S20", _REF_UCX_MEMLOCK, _REF_RHEL_MEMLOCK, _REF_NCCL_TESTS_206, _REF_UCX_8229
        ),
        confidence=0.7 if tiny else 0.5,
    )
