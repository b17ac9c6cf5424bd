"""Record verdicts for the core evidence kinds: what one record (or one capture) shows on its own.

The verdicts of this table live in these modules (and more in ``verdicts_links``,
``verdicts_host_state``, ``verdicts_hostinfo``, ``verdicts_fleet``, ``verdicts_lab``,
``verdicts_commands``, ``verdicts_firewall``): ``verdicts_core`` (GIDs, GPUDirect RDMA,
nccl-tests, perftest, ping), ``verdicts_ports`` (InfiniBand/RDMA ports, ip link),
``verdicts_pcie`` (PCIe and kernel log events) and ``verdicts_optics`` (ethtool -m); the
capture index they share is in ``verdict_support``.

Each verdict below judges a record that a parser of :mod:`aifabric.evidence` produces, with the
cause classes of ``checks/causes.yaml``. Where a combination rule of ``checks/rules/*.yaml``
already names the same cause for the same record, the verdict is either left out (ACS redirect,
Socket fallback, busbw against the fabric file's estimate, Rx power under the low alarm, counter
growth) or names the same cause class, so that the engine keeps the rule's finding.

======================================  =====================================  ==================
verdict                                  records                                cause
======================================  =====================================  ==================
``diagnose.ib-port-down``                ``ibstat_port`` (ibstat, ibstatus),    fabric.link-down
                                         ``ibv_port``, ``ib_link``
``diagnose.ib-port-slow``                ``ibstat_port``, ``ibv_port``          fabric.slow-link
                                         (vs same-chip siblings), ``ib_link``
                                         (``Could be ...``)
``diagnose.pcie-link-degraded``          ``pci_device``, ``pcie_bandwidth``     host.pcie
``diagnose.pcie-aer-errors``             ``pci_device`` (AER ``UESta``/         host.pcie
                                         ``CESta``), ``kernel_event`` (aer)
``diagnose.pcie-slot-power``             ``kernel_event`` (pcie-power)          host.pcie
``diagnose.nic-module-event``            ``kernel_event`` (module-event)        fabric.optics
``diagnose.nic-link-down``               ``kernel_event`` (link-down)           fabric.link-down
``diagnose.nic-driver-error``            ``kernel_event`` (health, probe,       host.driver
                                         command timeout/failure, TX timeout)
``diagnose.roce-gid-missing``            ``gid`` (one per device port)          host.gid
``diagnose.gdr-disabled``                ``gdr_status``                         host.gdr
``diagnose.busbw-collapse``              nccl-tests ``header`` (its rows)       fabric.slow-link
``diagnose.nccl-tests-wrong-results``    nccl-tests ``header`` / ``summary``    host.driver
``diagnose.nccl-tests-stopped-one-``     nccl-tests ``header`` of two or more   host.pcie
``node``                                 ranks on one node with no result row,
                                         no failure and no summary
``diagnose.perftest-bw-low``             ``perftest_params`` (with a fabric)    fabric.slow-link
``diagnose.iface-no-carrier``            ``ip_link`` (ip link, ip addr,         fabric.link-down
                                         ifconfig)
``diagnose.switch-port-down``            ``sonic_interface_status`` (admin up,  fabric.link-down
                                         oper down; info for an empty cage)
``diagnose.iface-mtu-low``               ``ip_link``, ``ibv_port`` (fabric)     fabric.mtu
``diagnose.optics-threshold``            ``transceiver_module``                 fabric.optics
``diagnose.optics-tx-fault``             ``transceiver_module``                 fabric.optics
``diagnose.optics-module-fault``         ``transceiver_module``                 fabric.optics
``diagnose.ping-no-reply``               ``ping_summary``                       config.firewall /
                                                                                fabric.mtu
``diagnose.ping-big-packets-lost``       ``ping_summary`` (100 % loss of big    fabric.mtu
                                         probes, smaller ones answered)
``diagnose.pcie-bar-unassigned``         ``kernel_event`` (bar-assign: the PCI  host.pcie
                                         core could not place a BAR / VF BAR)
``diagnose.gdr-module-not-loaded``       ``module_query`` (``lsmod | grep       host.gdr
                                         nv_peer`` that printed nothing)
``diagnose.roce-gid-index-zero``         ``gid_index_choice`` (a test tool run  host.gid
                                         with GID 0 on a RoCE port)
``diagnose.host-firewall-closed``        ``iptables_chain`` INPUT (policy or a  config.firewall
                                         final DROP/REJECT, few ports open)
``diagnose.rdma-path-mtu-above-active``  ``mtu_choice`` (a test tool run with   fabric.mtu
                                         -m above ibv_devinfo's active_mtu)
``diagnose.gpu-p2p-slower-than-host-``   ``p2p_matrix`` (P2P=Enabled below      host.pcie
``copy``                                 half of P2P=Disabled)
``diagnose.mlnx-qos-unsupported``        ``mlnx_qos`` (only "not supported"     config.qos
                                         lines)
======================================  =====================================  ==================

Not judged here: ``ethtool -S`` snapshots (totals since the driver loaded; growth between two
snapshots is what the counter rules read), ``mlnx_qos``, ``tc`` and switch configurations against
an intent (the verify checks do that; a switch config's own consistency is judged in
:mod:`.verdicts_switch_qos`), NCCL's Socket transport (``diagnose.nccl-socket-
fallback``), PCIe ACS redirect (``diagnose.pcie-acs-redirect``), the ``Avg bus bandwidth``
against the hardware (``diagnose.busbw-below-estimate``).

Verdicts that need more than the record (the other ports of an HCA, the rows of a nccl-tests
table, the GIDs of one port) read the records of the same capture from ``ev.items``; without
them (a record judged alone) they judge what the record allows or say nothing.
"""


from __future__ import annotations

import statistics
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from aifabric.checks.diagnose.derive_perf import size_label
from aifabric.checks.diagnose.verdict_support import (
    _NCCL_ENV,
    _NCCL_TESTS_COMMON,
    _NCCL_TESTS_PERF,
    _NCCL_TOPO,
    _PERFTEST,
    _PING,
    _ROCE_GID_SRC,
    Severity,
    _capture,
    _fmt,
    _index,
    _item,
    _line_text,
    several_nodes,
)
from aifabric.checks.diagnose.verdicts import Verdict, verdict
from aifabric.checks.diagnose.verdicts_lab import passed_smaller_ping
from aifabric.evidence.base import Record
from aifabric.evidence.infiniband import (
    GidCount,
    GidEntry,
)
from aifabric.evidence.nccl_log import ChannelHop, CommEvent, GdrStatus
from aifabric.evidence.nccl_tests import NcclTestsHeader, NcclTestsRow, NcclTestsSummary
from aifabric.evidence.perftest import PerftestBwRow, PerftestParams
from aifabric.evidence.ping import PingError, PingHeader, PingSummary

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence
    from aifabric.model import Fabric


__all__ = ["COLLAPSE_SHARE", "PERFTEST_SHARE", "SILENT_MTU_MIN_BYTES", "busbw_collapse"]

SILENT_MTU_MIN_BYTES = 1500
"""A probe above this many bytes on the wire (IPv4 packet) that vanishes while smaller probes
to the same target pass is read as a path-MTU black hole (the smallest MTU in use is 1500)."""


# -- RoCE GIDs -----------------------------------------------------------------------------------


@verdict("gid")
def _gid(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, GidEntry):
        return
    records = _capture(rec, ev)
    if records is None:
        return  # one row cannot say what the port lacks
    key = (rec.device, rec.port)
    rows = [r for r in records if isinstance(r, GidEntry) and (r.device, r.port) == key]
    if not rows or rows[0] is not rec:
        return
    if any(r.netdev is None for r in rows):
        return  # InfiniBand port (no netdev): RoCE GIDs do not apply
    v2 = [r for r in rows if r.roce_version == 2]
    if any(not r.link_local for r in v2):
        return
    trailer = any(isinstance(r, GidCount) and r.line > rows[-1].line for r in records)
    last_group = not any(isinstance(r, GidEntry) and r.line > rows[-1].line for r in records)
    if not trailer and last_group and rows[-1].roce_version == 1:
        return  # the capture may stop between an address's v1 and v2 rows
    netdev = rows[0].netdev
    if not v2:
        what = f"no RoCE v2 GID at all ({len(rows)} RoCE v1 GID(s))"
    else:
        idx = ", ".join(str(r.index) for r in v2)
        what = f"only link-local (fe80::) RoCE v2 GID(s) (index {idx}), no IPv4 or global one"
    yield Verdict(
        id="diagnose.roce-gid-missing",
        severity="warning",
        cause="host.gid",
        message=f"{rec.device} port {rec.port} ({netdev}): {what}",
        explanation=(
            "The kernel adds one RoCE v1 and one RoCE v2 GID per IP address of the port's "
            f"netdev ({_ROCE_GID_SRC}); the fe80:: pair comes from the MAC alone. RoCE v2 "
            "carries RDMA in UDP/IP and NCCL needs a v2 GID with the node's fabric address "
            f"(NCCL_IB_GID_INDEX, {_NCCL_ENV}; S15): without one, NCCL picks a link-local GID "
            "that does not route beyond the L2 segment, or fails to connect."
        ),
        fix=(
            f"Assign the fabric IPv4 address to {netdev} (`ip addr add ADDR/PLEN dev {netdev}`, "
            "persistent in the network configuration), check `show_gids` lists a v2 row with "
            "it, and point NCCL_IB_GID_INDEX at that index (or leave it unset on NCCL >= 2.21)."
        ),
        refs=("S15", "S11"),
        confidence=0.55,
    )



# -- NCCL: GPUDirect RDMA ------------------------------------------------------------------------


@dataclass(slots=True)
class _NcclView:
    """What one NCCL log says about GPUDirect RDMA and the job's span, computed once."""

    disabled: dict[str | None, list[GdrStatus]] = field(default_factory=dict)
    """Per host: the 'GPU Direct RDMA Disabled for HCA' lines of the IB/plugin transport."""
    nnodes: int | None = None
    net_hops: bool = False


def _gdr_off(rec: Record, ev: Evidence) -> bool:
    return (
        isinstance(rec, GdrStatus)
        and rec.feature == "gdr"
        and not rec.enabled
        and rec.hca_index is not None
        and rec.gpu is None  # not the per-GPU distance decision
        and "NET/Socket" not in (_line_text(rec, ev) or "")  # sockets never do GPUDirect
    )


def _nccl_view(rec: GdrStatus, ev: Evidence) -> _NcclView:
    records = _capture(rec, ev)
    if records is None:
        records = [rec]
    key = ("nccl", id(records[0]))
    idx = _index(ev)
    cached = idx.memo.get(key)
    if isinstance(cached, _NcclView):
        return cached
    view = _NcclView()
    for r in records:
        if isinstance(r, GdrStatus) and _gdr_off(r, ev):
            view.disabled.setdefault(r.host, []).append(r)
        elif isinstance(r, CommEvent) and r.nnodes is not None:
            view.nnodes = max(view.nnodes or 0, r.nnodes)
        elif isinstance(r, ChannelHop) and r.transport == "NET":
            view.net_hops = True
    idx.memo[key] = view
    return view


@verdict("gdr_status")
def _gdr(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, GdrStatus) or not _gdr_off(rec, ev):
        return
    view = _nccl_view(rec, ev)
    mine = view.disabled.get(rec.host, [rec])
    if mine[0] is not rec:
        return  # one verdict per host, at its first such line
    hcas = list(dict.fromkeys(r.hca_name or str(r.hca_index) for r in mine))
    severity: Severity
    if view.net_hops or (view.nnodes or 0) > 1:
        severity, conf = "warning", 0.6
        scope = f"the job spans {view.nnodes} nodes" if view.nnodes else "NET channels are used"
    elif view.nnodes:
        severity, scope, conf = "info", "single node: no traffic crosses the NIC here", 0.5
    else:
        severity, scope, conf = "warning", "node count not in the log", 0.45
    host = f"{rec.host}: " if rec.host else ""
    yield Verdict(
        id="diagnose.gdr-disabled",
        severity=severity,
        cause="host.gdr",
        message=f"{host}NCCL reports GPU Direct RDMA Disabled for {', '.join(hcas)} ({scope})",
        explanation=(
            "NCCL prints 'GPU Direct RDMA Disabled for HCA' when the network plugin can "
            "register neither CUDA memory (nvidia-peermem loaded) nor DMA-BUF memory "
            f"(ncclTopoPopulateNics, {_NCCL_TOPO}). Every inter-node transfer is then staged "
            "through host memory: an extra copy over PCIe and CPU memory bandwidth, typically a "
            "large share of busbw lost. Within one node NCCL uses NVLink/P2P and the NIC is "
            "not involved."
        ),
        fix=(
            "Load nvidia-peermem (`modprobe nvidia-peermem`, built against the running "
            "MLNX_OFED/DOCA), or use DMA-BUF (open GPU kernel module, kernel >= 5.12, "
            "rdma-core with ibv_reg_dmabuf_mr/mlx5dv_reg_dmabuf_mr); then look for 'GPU Direct "
            "RDMA Enabled' and '/GDRDMA' on the NET channels. Some platforms do not support "
            "GPUDirect RDMA at all (check the vendor's support matrix)."
        ),
        refs=("S9", "S20"),
        confidence=conf,
    )



# -- nccl-tests ----------------------------------------------------------------------------------

COLLAPSE_SHARE = 0.5
"""Tail busbw below this share of the peak: the curve collapses as messages grow."""
_TAIL = 3
_MIN_TAIL_BYTES = 1 << 20
_MIN_PEAK_GBPS = 1.0
_SPIKE = 1.5


def busbw_collapse(curve: Sequence[tuple[int, float]]) -> tuple[float, int, float, int, int] | None:
    """``(peak, peak_size, tail_median, tail_first_size, tail_last_size)`` when the busbw of
    the largest messages is under :data:`COLLAPSE_SHARE` of the peak at smaller sizes, else
    ``None``.

    ``curve``: (size in bytes, busbw GB/s), sizes ascending, one value per size. The tail is the
    last three sizes (all at least 1 MiB), every one of them under the share (a tail that
    recovers at the largest size is not a collapse), summarised by its median; the peak is the
    highest busbw before the tail that is not a lone spike (a point more than 1.5x both
    neighbours) and at least 1 GB/s.
    """
    if len(curve) < _TAIL + 2:
        return None
    head, tail = list(curve[:-_TAIL]), list(curve[-_TAIL:])
    if tail[0][0] < _MIN_TAIL_BYTES:
        return None
    values = [bw for _, bw in curve]
    best: tuple[float, int] | None = None
    for i, (size, bw) in enumerate(head):
        left = values[i - 1] if i > 0 else None
        right = values[i + 1]
        neighbours = [x for x in (left, right) if x is not None]
        if neighbours and all(bw > _SPIKE * x for x in neighbours):
            continue
        if best is None or bw > best[0]:
            best = (bw, size)
    if best is None or best[0] < _MIN_PEAK_GBPS:
        return None
    if max(bw for _, bw in tail) >= COLLAPSE_SHARE * best[0]:
        return None  # not every one of the largest sizes is down: noise, or a recovery
    tail_bw = statistics.median(bw for _, bw in tail)
    return best[0], best[1], tail_bw, tail[0][0], tail[-1][0]


@verdict("header")
def _nccl_tests(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, NcclTestsHeader) or rec.independent_runs > 1:
        return
    records = _capture(rec, ev)
    if records is None:
        return
    rows = [r for r in records if isinstance(r, NcclTestsRow) and r.test == rec.test]
    name = rec.collective or "nccl-tests"
    yield from _wrong_results(rec, records, rows, name)
    yield from _stopped_on_one_node(rec, records, rows, name, ev)
    if rec.ranks == 1 or len({r.rank for r in rows}) > 1:
        return  # one rank (busbw 0 by definition) or rows of several processes
    by_size: dict[int, float] = {}
    for r in rows:
        bw = r.busbw_GBps
        if bw is not None and r.size_bytes > 0:
            by_size[r.size_bytes] = bw
    hit = busbw_collapse(sorted(by_size.items()))
    if hit is None:
        return
    peak, peak_size, tail_bw, first, last = hit
    pct = round(100 * tail_bw / peak)
    yield Verdict(
        id="diagnose.busbw-collapse",
        severity="warning",
        cause="fabric.slow-link",
        message=(
            f"{name}: busbw falls from {peak:.2f} GB/s at {size_label(peak_size)} to "
            f"{tail_bw:.2f} GB/s (median of {size_label(first)}..{size_label(last)}), "
            f"{pct}% of the peak"
        ),
        explanation=(
            "busbw normalises algbw by the collective's traffic factor so that it should rise "
            "with the message size and flatten at the bottleneck link's speed "
            f"({_NCCL_TESTS_PERF}). A curve whose largest messages get less than "
            f"{round(COLLAPSE_SHARE * 100)}% of the peak reached at smaller ones means something "
            "degrades with volume: loss and retransmission once buffers or the lossless class "
            "overflow (PFC/ECN not working), a congested or flapping link, ECMP collisions of "
            "the long flows, or memory registration/GPUDirect falling back for large buffers. "
            "Computed on the out-of-place column: all three largest sizes under the share "
            "(their median is shown), peak = the best earlier size that is not a lone spike."
        ),
        fix=(
            "Rerun the largest sizes with NCCL_DEBUG=INFO and watch the NICs' loss counters "
            "(`ethtool -S`: out_of_sequence, local_ack_timeout_err, rx_discards; switch PFC and "
            "drop counters) during the run; compare with ib_write_bw per NIC pair and a "
            "single-node run (S20.1, S20.2, S23)."
        ),
        refs=("S23", "S20", "S1"),
        confidence=0.45,
    )


def _wrong_results(
    hdr: NcclTestsHeader, records: Sequence[Record], rows: list[NcclTestsRow], name: str
) -> Iterator[Verdict]:
    wrong = [r for r in rows if (r.oop_wrong or 0) > 0 or (r.ip_wrong or 0) > 0]
    summary = next(
        (r for r in records if isinstance(r, NcclTestsSummary) and r.test == hdr.test), None
    )
    if wrong:
        worst = max(wrong, key=lambda r: max(r.oop_wrong or 0, r.ip_wrong or 0))
        count = max(worst.oop_wrong or 0, worst.ip_wrong or 0)
        what = (
            f"{len(wrong)} message size(s) with wrong results, from "
            f"{size_label(wrong[0].size_bytes)} (#wrong up to {count} at "
            f"{size_label(worst.size_bytes)})"
        )
        line = wrong[0].line
    elif summary is not None and (summary.out_of_bounds or 0) > 0:
        what = f"'Out of bounds values : {summary.out_of_bounds} FAILED'"
        line = summary.line
    else:
        return
    yield Verdict(
        id="diagnose.nccl-tests-wrong-results",
        severity="error",
        cause="host.driver",
        message=f"{name}: {what}: the collective returned corrupted data",
        explanation=(
            "With validation on (-c 1, the default) nccl-tests compares every result element "
            "with the expected value and prints the number of differing elements in #wrong "
            "(summed over the ranks) and 'Out of bounds values' at the end "
            f"({_NCCL_TESTS_COMMON}, CheckData). Loss on the network does not corrupt data: "
            "RDMA and Ethernet checksums drop damaged packets and the transport retransmits. "
            "Wrong values come from the hosts' stack: the NCCL/network-plugin/provider "
            "combination or its settings, GPU memory errors, a driver or firmware bug, or "
            "peer-to-peer/GPUDirect paths that return stale data (ACS/IOMMU)."
        ),
        fix=(
            "Check GPU health (`nvidia-smi -q -d ECC`, Xid errors in `dmesg`), run single-node "
            "and NCCL_NET_GDR_LEVEL=LOC / NCCL_P2P_DISABLE=1 / NCCL_PROTO=Simple variants to "
            "isolate the path, and align NCCL, the network plugin and the provider with the "
            "versions and settings the platform vendor documents."
        ),
        refs=("S23", "S20"),
        confidence=0.5,
        line=line,
    )



_NCCL_ACS = (
    "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html"
    "#pci-access-control-services-acs"
)


def _nccl_lines_after(hdr: NcclTestsHeader, ev: Evidence) -> bool:
    """NCCL's own output (``NCCL INFO``/``NCCL WARN``, ``NCCL version``) follows the last device
    line in the same file: the run went on into communicator creation and the paste kept it."""
    item = _item(hdr, ev)
    if item is None or item.file is None or not isinstance(item.file.lines, list):
        return False  # a huge capture read in chunks keeps only quoted lines (SparseLines)
    lines = item.file.lines
    last = max((i for i, ln in enumerate(lines) if "Rank" in ln and "device" in ln), default=None)
    if last is None:
        return False
    return any(" NCCL " in ln or ln.startswith("NCCL version") for ln in lines[last + 1 :])


def _stopped_on_one_node(
    hdr: NcclTestsHeader, records: Sequence[Record], rows: list[NcclTestsRow], name: str,
    ev: Evidence,
) -> Iterator[Verdict]:
    """A run of two or more GPUs on one node whose output ends before its first result.

    nccl-tests prints its device lines, creates the communicators (``initComms``), prints the
    table header (``writeResultHeader``) and only then runs the warm-up of every size and the
    timed iterations that print the rows (src/common.cu). Output that stops after the device
    lines with no failure line therefore stopped in communicator creation, and output that
    stops after the table header stopped in the first collective: a hang, not a crash (a crash
    prints ``Test NCCL failure`` or the launcher's report). Inside one node the first traffic
    between the GPUs is peer-to-peer over PCIe or NVLink, and NCCL's troubleshooting guide names
    PCI ACS and the IOMMU (which redirect that traffic through the root complex) as the cause of
    such hangs.
    """
    if rows or hdr.failure is not None or hdr.independent_runs > 1 or hdr.ranks < 2:
        return
    if not hdr.single_node or several_nodes(ev):
        return
    for r in records:
        if isinstance(r, NcclTestsSummary) and r.test == hdr.test:
            return
        if isinstance(r, NcclTestsHeader) and r.test > hdr.test:
            return  # a later test in the same capture: this one did finish or fail
    if hdr.columns:
        where = "after its table header, in the first collective (the warm-up)"
    elif _nccl_lines_after(hdr, ev):
        where = "after its device list, while creating the communicators"
    else:
        return  # the device list alone: an excerpt as likely as a hang
    yield Verdict(
        id="diagnose.nccl-tests-stopped-one-node",
        severity="warning",
        cause="host.pcie",
        message=(
            f"{name} on {hdr.ranks} GPUs of one node: the output ends {where}, with no result "
            "and no error: if the run hung there, GPU peer-to-peer inside the node is the first "
            "suspect (PCI ACS or the IOMMU)"
        ),
        explanation=(
            "nccl-tests prints the device lines, creates the communicators, prints the table "
            "header and then runs the warm-up of every size before the first row "
            f"({_NCCL_TESTS_COMMON}, initComms, writeResultHeader, the warm-up loop); an error "
            "on any rank prints 'Test NCCL failure' or 'Test CUDA failure' and ends the run. "
            "Output that stops with neither is a hang, and on one node the path that carries "
            "the first traffic between the GPUs is peer-to-peer over PCIe (or NVLink): with "
            "PCI ACS enabled on the switches or bridges between the GPUs, or an IOMMU in "
            "translated mode, that traffic is redirected through the root complex and the "
            f"transfers can hang ({_NCCL_ACS}). An excerpt that simply ends there reads the "
            "same, hence a warning."
        ),
        fix=(
            "Rerun with NCCL_P2P_DISABLE=1: if it then completes, check 'lspci -vvv | grep "
            "ACSCtl' on the PCIe bridges between the GPUs (SrcValid+ or ReqRedir+ means ACS is "
            "on) and disable ACS in the BIOS or with setpci, and boot with the IOMMU off or in "
            "pass-through mode (iommu=pt, amd_iommu=off / intel_iommu=off); NCCL_DEBUG=INFO "
            "shows the step where it stops."
        ),
        refs=("S9", "S20"),
        confidence=0.4,
        line=hdr.line,
    )


# -- perftest ------------------------------------------------------------------------------------

PERFTEST_SHARE = 0.5
"""Average bandwidth under this share of the line rate (both directions for -b) is judged."""
_PERFTEST_MIN_BYTES = 65536


def _fabric_port_speed(fab: Fabric, name: str, subject: str | None) -> float | None:
    speeds = {
        p.speed_gbps
        for s in fab.servers
        if subject is None or s.name == subject or subject not in {x.name for x in fab.servers}
        for p in s.ports
        if p.name == name
    }
    return speeds.pop() if len(speeds) == 1 else None


@verdict("perftest_params")
def _perftest(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, PerftestParams) or rec.measure != "bw" or ev.fabric is None:
        return
    if rec.device is None:
        return
    item = _item(rec, ev)
    speed = _fabric_port_speed(ev.fabric, rec.device, item.subject if item else None)
    records = _capture(rec, ev)
    if speed is None or records is None:
        return
    rows = [r for r in records if isinstance(r, PerftestBwRow) and r.run == rec.run]
    rows = [r for r in rows if r.bw_avg_gbps is not None and r.size_bytes >= _PERFTEST_MIN_BYTES]
    if not rows:
        return
    last = max(rows, key=lambda r: r.size_bytes)
    bw = last.bw_avg_gbps or 0.0
    line_rate = speed * (2 if rec.bidirectional else 1)
    if bw >= PERFTEST_SHARE * line_rate:
        return
    pct = round(100 * bw / line_rate)
    both = " (both directions)" if rec.bidirectional else ""
    yield Verdict(
        id="diagnose.perftest-bw-low",
        severity="warning",
        cause="fabric.slow-link",
        message=(
            f"{rec.test} on {rec.device}: {bw:.2f} Gb/s average at {size_label(last.size_bytes)}, "
            f"{pct}% of the {_fmt(line_rate)} Gb/s{both} the fabric file gives the port "
            f"({rec.num_qps or 1} QP)"
        ),
        explanation=(
            "perftest's BW average of a large message is the link's RDMA goodput; on a healthy "
            "port it reaches most of the line rate (RoCE framing costs a few percent at 4096-byte "
            f"MTU), bidirectional runs report both directions summed ({_PERFTEST}). Under "
            f"{round(PERFTEST_SHARE * 100)}% of the port speed the fabric file declares means a "
            "link trained at a lower speed, a PCIe link below the NIC's rate, loss and "
            "retransmission, or a run limited by its own settings (one QP, small TX depth, CPU "
            "frequency)."
        ),
        fix=(
            "Check the port's rate (`ibstat`, `ethtool NETDEV`), the NIC's PCIe link "
            "(`lspci -vv` LnkSta), loss counters on both ends; rerun with more QPs (-q 4) and "
            "-D 10 to rule out the test's own limits (S23 baseline: >= 70% of line rate)."
        ),
        refs=("S23", "S20", "S9"),
        confidence=0.4,
        line=last.line,
    )



# -- ping ---------------------------------------------------------------------------------------


def _run_errors(rec: PingSummary, records: Sequence[Record]) -> list[PingError]:
    """The errors of the ping run this summary closes (after the previous summary)."""
    start = max(
        (r.end_line or r.line for r in records if isinstance(r, PingSummary) and r.line < rec.line),
        default=0,
    )
    return [r for r in records if isinstance(r, PingError) and start < r.line < rec.line]


def _run_header(rec: PingSummary, records: Sequence[Record]) -> PingHeader | None:
    heads = [r for r in records if isinstance(r, PingHeader) and r.line < rec.line]
    return heads[-1] if heads else None


@verdict("ping_summary")
def _ping(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, PingSummary) or rec.transmitted <= 0 or rec.received > 0:
        return
    records = _capture(rec, ev) or [rec]
    errors = _run_errors(rec, records)
    header = _run_header(rec, records)
    target = rec.target or (header.target if header else "the target")
    mtu_errs = [e for e in errors if e.kind in ("frag-needed", "message-too-long")]
    if mtu_errs:
        mtus = [e.mtu_bytes for e in mtu_errs if e.mtu_bytes is not None] or (
            [rec.path_mtu_bytes] if rec.path_mtu_bytes else []
        )
        size = rec.packet_bytes or (header.packet_bytes if header else None)
        yield Verdict(
            id="diagnose.ping-no-reply",
            severity="error",
            cause="fabric.mtu",
            message=(
                f"ping {target}: {rec.transmitted} probes of {size or '?'} bytes, none answered, "
                f"'{mtu_errs[0].message}'" + (f" (path MTU {min(mtus)})" if mtus else "")
            ),
            explanation=(
                "With DF set (ping -M do) a probe above a hop's MTU is refused: the router "
                "answers 'Frag needed and DF set (mtu = N)', the sender's stack then reports "
                f"'Message too long' ({_PING}). RoCE never fragments, so the same hop drops "
                "every full-size RDMA packet (S11, S21); diagnose.path-mtu-blackhole ranks it "
                "with the probe that passed."
            ),
            fix=(
                "Set one MTU end to end (S11: 9000 on hosts, 9216 on switch ports) or lower the "
                "hosts' MTU to the path's; find the hop with tracepath."
            ),
            refs=("S11", "S21", "S20"),
            confidence=0.8,
            line=mtu_errs[0].line,
        )
        return
    if header is not None and header.target.endswith(".255"):
        return  # a broadcast ping: no single host to answer
    size = rec.packet_bytes or (header.packet_bytes if header else None)
    small = (
        passed_smaller_ping(rec, ev, target, size)
        if size is not None and size > SILENT_MTU_MIN_BYTES and target != "the target"
        else None
    )
    if small is not None:
        yield Verdict(
            id="diagnose.ping-big-packets-lost",
            severity="error",
            cause="fabric.mtu",
            message=(
                f"ping {target}: all {rec.transmitted} probes of {size} bytes lost with no ICMP "
                f"error, while {small.received} of {small.transmitted} smaller probes"
                + (f" ({small.packet_bytes} bytes)" if small.packet_bytes else "")
                + " to the same target were answered"
            ),
            explanation=(
                "Only the big packets vanish, and no router says why: a hop whose MTU is "
                "smaller than the packet drops it at the receiving end without an ICMP "
                "'Frag needed' (a port left at 1500 after a 9000 rollout receives a 9000-byte "
                "frame as oversized and discards it; only its rx error/drop counters move). "
                "RoCE and NCCL's sockets size their messages to the interface MTU, so the same "
                "hop eats every full-size packet while small control messages pass (S11, S21)."
            ),
            fix=(
                "Set one MTU end to end (S11: 9000 on hosts, 9216 on switch ports); find the "
                "hop with DF pings across each link (`ping -M do -s MTU-28 -I IFACE`) and "
                "`ip link` MTUs on both ends of every link on the path."
            ),
            refs=("S11", "S21", "S20"),
            confidence=0.75,
        )
        return
    unreachable = [e for e in errors if e.kind == "unreachable"]
    how = (
        f"'{unreachable[0].message}' from {unreachable[0].source or target}"
        if unreachable
        else "no reply and no ICMP error"
    )
    yield Verdict(
        id="diagnose.ping-no-reply",
        severity="warning",
        cause="config.firewall",
        message=(
            f"ping {target}: {rec.transmitted} probes, {rec.received} replies (100% loss): {how}"
        ),
        explanation=(
            "Not one echo came back. 'Destination Host Unreachable' means no host answered ARP "
            "or neighbour discovery on the last hop (the target is down, not on that subnet, or "
            "the route points to the wrong interface); silence means the probes or replies are "
            "dropped on the way, most often by a firewall or a security group filtering ICMP, "
            f"else a missing route back ({_PING}). Chosen class: connection blocked (no route, "
            "filtered); a down link shows on the interface and port evidence."
        ),
        fix=(
            "Check the target is up and its address (`ip addr` there), the route (`ip route get "
            "TARGET`), ARP (`ip neigh`), and firewalls/security groups on both ends for ICMP and "
            "for the ports NCCL and the launcher use; retry with the interface the job uses (-I)."
        ),
        refs=("S20", "S21"),
        confidence=0.35,
    )
