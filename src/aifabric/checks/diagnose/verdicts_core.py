"""Record verdicts for the core evidence kinds: what one record (or one capture) shows on its own.

Each verdict below judges a record that a parser of :mod:`aifabric.evidence` produces, with the
cause classes of ``checks/causes.yaml``. Where a combination rule of ``checks/rules/*.yaml``
already names the same cause for the same record, the verdict is either left out (ACS redirect,
Socket fallback, busbw against the fabric file's estimate, Rx power under the low alarm, counter
growth) or names the same cause class, so that the engine keeps the rule's finding.

======================================  =====================================  ==================
verdict                                  records                                cause
======================================  =====================================  ==================
``diagnose.ib-port-down``                ``ibstat_port``, ``ibv_port``,         fabric.link-down
                                         ``ib_link``
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
``diagnose.perftest-bw-low``             ``perftest_params`` (with a fabric)    fabric.slow-link
``diagnose.iface-no-carrier``            ``ip_link``                            fabric.link-down
``diagnose.iface-mtu-low``               ``ip_link``, ``ibv_port`` (fabric)     fabric.mtu
``diagnose.optics-threshold``            ``transceiver_module``                 fabric.optics
``diagnose.optics-tx-fault``             ``transceiver_module``                 fabric.optics
``diagnose.optics-module-fault``         ``transceiver_module``                 fabric.optics
``diagnose.ping-no-reply``               ``ping_summary``                       config.firewall /
                                                                                fabric.mtu
======================================  =====================================  ==================

Not judged here: ``ethtool -S`` snapshots (totals since the driver loaded; growth between two
snapshots is what the counter rules read), ``mlnx_qos``, ``tc`` and switch configurations (the
verify checks compare them with intent), NCCL's Socket transport (``diagnose.nccl-socket-
fallback``), PCIe ACS redirect (``diagnose.pcie-acs-redirect``), the ``Avg bus bandwidth``
against the hardware (``diagnose.busbw-below-estimate``).

Verdicts that need more than the record (the other ports of an HCA, the rows of a nccl-tests
table, the GIDs of one port) read the records of the same capture from ``ev.items``; without
them (a record judged alone) they judge what the record allows or say nothing.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from aifabric.catalog import builtin_catalog
from aifabric.checks.diagnose.derive_perf import size_label
from aifabric.checks.diagnose.verdicts import Verdict, verdict
from aifabric.evidence.base import Record
from aifabric.evidence.ethtool_module import ModuleLane, Threshold, TransceiverModule
from aifabric.evidence.infiniband import (
    GidCount,
    GidEntry,
    IbLink,
    IbstatCA,
    IbstatPort,
    IbvDevice,
    IbvPort,
)
from aifabric.evidence.linux_net import IpLink
from aifabric.evidence.nccl_log import ChannelHop, CommEvent, GdrStatus
from aifabric.evidence.nccl_tests import NcclTestsHeader, NcclTestsRow, NcclTestsSummary
from aifabric.evidence.pcie import KernelEvent, PciDevice, PcieBandwidth, pcie_generation
from aifabric.evidence.perftest import PerftestBwRow, PerftestParams
from aifabric.evidence.ping import PingError, PingHeader, PingSummary
from aifabric.model import Endpoint, fabric_index

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence, Item
    from aifabric.model import Fabric

__all__ = ["COLLAPSE_SHARE", "PERFTEST_SHARE", "ROCE_HEADER_BYTES", "busbw_collapse"]
# (the verdicts themselves register on import)

Severity = Literal["error", "warning", "info"]

# Public sources quoted in explanations.
_IBSTAT_DOC = (
    "https://github.com/linux-rdma/rdma-core/blob/master/infiniband-diags/man/ibstat.8.in.rst"
)
_DEVINFO_SRC = "https://github.com/linux-rdma/rdma-core/blob/master/libibverbs/examples/devinfo.c"
_IBDIAG_SRC = "https://github.com/linux-rdma/rdma-core/blob/master/infiniband-diags/ibdiag_common.c"
_LSPCI_SRC = "https://github.com/pciutils/pciutils/blob/master/ls-caps.c"
_AER_SRC = "https://github.com/pciutils/pciutils/blob/master/ls-ecaps.c"
_PCI_C = "https://github.com/torvalds/linux/blob/master/drivers/pci/pci.c"
_MLX5_EVENTS = (
    "https://github.com/torvalds/linux/blob/master/drivers/net/ethernet/mellanox/mlx5/core/events.c"
)
_MLX5_EN_MAIN = "https://github.com/torvalds/linux/blob/master/drivers/net/ethernet/mellanox/mlx5/core/en_main.c"
_MLX5_HEALTH = (
    "https://github.com/torvalds/linux/blob/master/drivers/net/ethernet/mellanox/mlx5/core/health.c"
)
_ROCE_GID_SRC = (
    "https://github.com/torvalds/linux/blob/master/drivers/infiniband/core/roce_gid_mgmt.c"
)
_IB_ADDR_H = "https://github.com/torvalds/linux/blob/master/include/rdma/ib_addr.h"
_NCCL_ENV = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html"
_NCCL_TOPO = "https://github.com/NVIDIA/nccl/blob/master/src/graph/topo.cc"
_NCCL_TESTS_PERF = "https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md"
_NCCL_TESTS_COMMON = "https://github.com/NVIDIA/nccl-tests/blob/master/src/common.cu"
_PERFTEST = "https://github.com/linux-rdma/perftest"
_IP_LINK = "https://man7.org/linux/man-pages/man8/ip-link.8.html"
_OPERSTATES = "https://docs.kernel.org/networking/operstates.html"
_ETHTOOL = "https://man7.org/linux/man-pages/man8/ethtool.8.html"
_PING = "https://man7.org/linux/man-pages/man8/ping.8.html"


# -- the capture a record belongs to -------------------------------------------------------------


@dataclass(slots=True)
class _Index:
    ev: Evidence
    size: int
    item_of: dict[int, Item] = field(default_factory=dict)
    parts: dict[int, list[Record]] = field(default_factory=dict)
    memo: dict[tuple[str, int], object] = field(default_factory=dict)
    """Per-capture summaries computed once (keyed by kind and the capture's first record)."""


_LAST: list[_Index] = []
"""The index of the last :class:`Evidence` seen (verdicts run over one evidence at a time)."""


def _index(ev: Evidence) -> _Index:
    if _LAST and _LAST[0].ev is ev and _LAST[0].size == len(ev.items):
        return _LAST[0]
    idx = _Index(ev, len(ev.items))
    for item in ev.items:
        idx.item_of[id(item.record)] = item
        if item.file is not None:
            idx.parts.setdefault(id(item.file), []).append(item.record)
    _LAST[:] = [idx]
    return idx


def _item(rec: Record, ev: Evidence) -> Item | None:
    return _index(ev).item_of.get(id(rec))


def _capture(rec: Record, ev: Evidence) -> list[Record] | None:
    """The records of the capture (file, or part of a paste) ``rec`` comes from, in order;
    ``None`` when ``rec`` was not loaded into ``ev`` (judged alone)."""
    item = _item(rec, ev)
    if item is None:
        return None
    if item.file is None:
        return [rec]
    return _index(ev).parts.get(id(item.file), [rec])


def _line_text(rec: Record, ev: Evidence) -> str | None:
    item = _item(rec, ev)
    if item is None or item.file is None or not 1 <= rec.line <= len(item.file.lines):
        return None
    return item.file.lines[rec.line - 1]


def _fmt(x: float) -> str:
    """``200.0`` → ``200``, ``126.0308`` → ``126.0``."""
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.1f}"


# -- InfiniBand / RDMA ports ---------------------------------------------------------------------

_IBV_STATE = {
    "PORT_ACTIVE": "Active",
    "PORT_DOWN": "Down",
    "PORT_INIT": "Initializing",
    "PORT_ARMED": "Armed",
    "PORT_ACTIVE_DEFER": "ActiveDefer",
    "PORT_NOP": "Nop",
}
_IBV_PHYS = {
    "LINK_UP": "LinkUp",
    "POLLING": "Polling",
    "DISABLED": "Disabled",
    "SLEEP": "Sleep",
    "PORT_CONFIGURATION_TRAINING": "PortConfigurationTraining",
    "LINK_ERROR_RECOVERY": "LinkErrorRecovery",
    "PHY_TEST": "PhyTest",
}

_PHYS_WHY = {
    "Polling": (
        "Physical state Polling: the port is looking for a link partner and finds none (no "
        "cable, a module not seated or not powered, a cable that does not train at any common "
        "speed, or the far end is down)."
    ),
    "Disabled": (
        "Physical state Disabled: on an InfiniBand port the port was disabled (by the subnet "
        "manager or ibportstate); on a RoCE port (link layer Ethernet) mlx5 and bnxt_re report "
        "Down/Disabled whenever the netdev is not running or has no carrier."
    ),
    "LinkUp": (
        "Physical state LinkUp but logical state not Active: the link trained, but the subnet "
        "manager has not brought the port to Active (no SM running or reachable, an SM that "
        "rejects the port, or an SR-IOV VF without a configured GUID/vport policy)."
    ),
    "LinkErrorRecovery": (
        "Physical state LinkErrorRecovery: the link is retraining after errors, a sign of a "
        "marginal cable or module."
    ),
}

_PHYS_FIX = {
    "Polling": (
        "Check the cable and the module at both ends (seated, supported type and speed, far end "
        "powered and enabled), read `ethtool -m`/`mlxlink -d DEV` for the module and the switch "
        "side with `iblinkinfo`; swap the cable to tell a bad cable from a bad port."
    ),
    "Disabled": (
        "RoCE: `ip link set NETDEV up` and check the carrier (`ip link show NETDEV`, `ethtool "
        "NETDEV`: Link detected); InfiniBand: enable the port (`ibportstate LID PORT enable`) "
        "and check the subnet manager's log for why it disabled it."
    ),
    "LinkUp": (
        "Check the subnet manager: `sminfo` must answer, opensm/UFM must be running on the "
        "fabric; for an SR-IOV VF configure its GUID and policy (`ip link set PF vf N "
        "node_guid/port_guid ... state auto`) and check the PF port is Active."
    ),
}


@dataclass(slots=True)
class _PortView:
    """One RDMA port as both ``ibstat`` and ``ibv_devinfo`` describe it."""

    device: str
    port: int
    state: str | None
    phys: str | None
    active: bool
    link_layer: str | None
    rate_gbps: float | None
    chip: str | None
    """``MT4129`` (ibstat CA type) or ``4129`` (ibv_devinfo vendor_part_id): same-model ports."""


def _ibstat_views(records: Sequence[Record]) -> list[tuple[IbstatPort, _PortView]]:
    chips = {r.ca: r.ca_type for r in records if isinstance(r, IbstatCA)}
    return [
        (
            r,
            _PortView(
                r.ca,
                r.port,
                r.state,
                r.physical_state,
                r.active,
                r.link_layer,
                r.rate_gbps,
                chips.get(r.ca),
            ),
        )
        for r in records
        if isinstance(r, IbstatPort)
    ]


def _ibv_views(records: Sequence[Record]) -> list[tuple[IbvPort, _PortView]]:
    chips = {
        r.hca_id: str(r.vendor_part_id) if r.vendor_part_id is not None else None
        for r in records
        if isinstance(r, IbvDevice)
    }
    return [
        (
            r,
            _PortView(
                r.hca_id,
                r.port,
                _IBV_STATE.get(r.state or "", r.state),
                _IBV_PHYS.get(r.phys_state or "", r.phys_state),
                r.active,
                r.link_layer,
                r.rate_gbps,
                chips.get(r.hca_id),
            ),
        )
        for r in records
        if isinstance(r, IbvPort)
    ]


def _port_count(records: Sequence[Record], device: str) -> int | None:
    for r in records:
        if isinstance(r, IbstatCA) and r.ca == device:
            return r.num_ports
        if isinstance(r, IbvDevice) and r.hca_id == device:
            return r.phys_port_cnt
    return None


def _port_down(view: _PortView, ports: list[_PortView] | None, total: int | None) -> Verdict:
    """The verdict on a port that is not Active; ``ports`` are the same device's ports seen."""
    if total is None and ports is not None:
        total = len(ports)
    only = total == 1
    all_down = (
        ports is not None
        and total is not None
        and len(ports) >= total
        and not any(p.active for p in ports)
    )
    severity: Severity = "error" if only or all_down else "warning"
    if only:
        scope = f"the only port of {view.device}"
    elif all_down:
        scope = f"all {total} ports of {view.device} are down"
    elif total is not None:
        down = sum(1 for p in ports or [] if not p.active)
        scope = f"{down} of {total} ports of {view.device} down"
    else:
        scope = "the other ports of the device are not in the capture"
    phys = view.phys or "not printed"
    layer = f", link layer {view.link_layer}" if view.link_layer else ""
    why = _PHYS_WHY.get(view.phys or "", "")
    return Verdict(
        id="diagnose.ib-port-down",
        severity=severity,
        cause="fabric.link-down",
        message=(
            f"{view.device} port {view.port} is {view.state or 'not Active'} (physical state "
            f"{phys}{layer}): {scope}"
        ),
        explanation=(
            "ibstat and ibv_devinfo print the port's logical state (Down, Initializing, Armed, "
            "Active) and physical state (Polling, Disabled, LinkUp, ...); only Active over LinkUp "
            f"carries traffic. {why} An unused second port of a dual-port card is often down, "
            "hence a warning; the only port of an HCA, or every port of one, down means that NIC "
            f"carries nothing (error). Sources: ibstat(8) {_IBSTAT_DOC}; ibv_devinfo "
            f"{_DEVINFO_SRC}."
        ),
        fix=_PHYS_FIX.get(
            view.phys or "",
            "Bring the port up: check the cable and module at both ends, the far end's port, "
            "and for InfiniBand that a subnet manager is running (`sminfo`).",
        ),
        refs=("S16", "S20"),
        confidence=0.6 if severity == "error" else 0.4,
    )


def _port_slow(view: _PortView, peers: list[_PortView]) -> Verdict | None:
    """An Active port below the rate most of the same chip's Active ports run at."""
    if not view.active or view.rate_gbps is None or view.chip is None:
        return None
    same = [
        p
        for p in peers
        if p.active
        and p.chip == view.chip
        and p.link_layer == view.link_layer
        and p.rate_gbps is not None
        and (p.device, p.port) != (view.device, view.port)
    ]
    if not same:
        return None
    top = max(p.rate_gbps or 0.0 for p in same)
    faster = [p for p in same if p.rate_gbps == top]
    if top <= view.rate_gbps or len(faster) < 2 or 2 * len(faster) < len(same) + 1:
        return None
    return Verdict(
        id="diagnose.ib-port-slow",
        severity="warning",
        cause="fabric.slow-link",
        message=(
            f"{view.device} port {view.port} is Active at {_fmt(view.rate_gbps)} Gb/s while "
            f"{len(faster)} other {view.chip} port(s) in the same capture run at {_fmt(top)} Gb/s"
        ),
        explanation=(
            "The rate is the port's width x lane speed as negotiated with its link partner. "
            "Ports of the same adapter model on one host are normally cabled and configured "
            "alike, so one port that trained lower (fewer lanes or a lower lane speed) is the "
            "sign of a cable or module that does not support the full rate, a lane that failed "
            "to train, or a switch port set to a lower speed; NCCL paces a ring at its slowest "
            f"link. Neither ibstat nor ibv_devinfo prints the supported maximum ({_IBSTAT_DOC}), "
            "so the comparison is with the other ports."
        ),
        fix=(
            "Read the port's enabled and supported widths/speeds (`ibportstate LID PORT`, "
            "`mlxlink -d DEV -m`), check the cable type against the rate, reseat or replace the "
            "cable, and check the switch port's configured speed."
        ),
        refs=("S16", "S20"),
        confidence=0.35,
    )


def _judge_ports(
    rec: Record, ev: Evidence, views: list[tuple[Record, _PortView]]
) -> Iterator[Verdict]:
    me = next((v for r, v in views if r is rec), None)
    if me is None:
        return
    records = _capture(rec, ev)
    all_views = [v for _, v in views]
    if not me.active:
        if me.state is None:
            return  # a cut-off port block: nothing was printed to judge
        if records is None:
            yield _port_down(me, None, None)
        else:
            mine = [v for v in all_views if v.device == me.device]
            yield _port_down(me, mine, _port_count(records, me.device))
        return
    if records is not None:
        slow = _port_slow(me, all_views)
        if slow is not None:
            yield slow


@verdict("ibstat_port")
def _ibstat_port(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, IbstatPort):
        return
    records = _capture(rec, ev) or [rec]
    yield from _judge_ports(rec, ev, list(_ibstat_views(records)))


@verdict("ibv_port")
def _ibv_port(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, IbvPort):
        return
    records = _capture(rec, ev) or [rec]
    yield from _judge_ports(rec, ev, list(_ibv_views(records)))
    yield from _roce_mtu(rec, ev)


_COULD_BE = re.compile(r"Could be ([^()]+?)(?=\s*Could be|\s*$)")


@verdict("ib_link")
def _ib_link(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, IbLink):
        return
    who = f"{rec.node_name or rec.node_guid or rec.port_guid or 'port'} port {rec.port}"
    peer = f" to {rec.peer_name} port {rec.peer_port}" if rec.peer_name else ""
    note = rec.annotation or ""
    if rec.active:
        could = [m.strip() for m in _COULD_BE.findall(note)]
        if could:
            yield Verdict(
                id="diagnose.ib-port-slow",
                severity="warning",
                cause="fabric.slow-link",
                message=(
                    f"{who}{peer} is Active at {rec.width} {rec.lane_speed_gbps} Gbps per lane "
                    f"but iblinkinfo says it could run at {' / '.join(could)}"
                ),
                explanation=(
                    "iblinkinfo prints 'Could be X' when the width or speed the link trained at "
                    "is not the highest one that both ends support (the supported width/speed "
                    "masks of the port and its peer ANDed, compared with the active value: "
                    f"get_max_msg() in infiniband-diags, {_IBDIAG_SRC}). The link runs below "
                    "what its two ports can do: a cable or module rated lower, lanes that "
                    "failed to train, or a port whose enabled speeds were restricted."
                ),
                fix=(
                    "Check the cable/module against the rate (`mlxlink -d DEV -m`), the enabled "
                    "widths and speeds (`ibportstate LID PORT`), reseat or replace the cable, "
                    "then reset the port so it retrains and check iblinkinfo again."
                ),
                refs=("S16", "S20"),
                confidence=0.6,
            )
        return
    ca_port = rec.node_type == "ca" or rec.port_guid is not None
    if rec.physical_state == "LinkUp" or ca_port:
        # A switch port Down/Polling with no peer is an empty port: not judged.
        phys = rec.physical_state
        yield Verdict(
            id="diagnose.ib-port-down",
            severity="warning",
            cause="fabric.link-down",
            message=f"{who}{peer} is {rec.state}/{phys} in iblinkinfo",
            explanation=(
                f"{_PHYS_WHY.get(phys, '')} iblinkinfo shows every port the subnet "
                "discovery reached; switch ports Down/Polling without a peer are empty ports "
                f"and are not reported. Sources: ibstat(8) {_IBSTAT_DOC}."
            ),
            fix=_PHYS_FIX.get(phys, _PHYS_FIX["Polling"]),
            refs=("S16", "S20"),
            confidence=0.45,
        )


# -- PCIe ----------------------------------------------------------------------------------------

_GPU_CLASSES = frozenset({"VGA compatible controller", "3D controller", "Display controller"})
_GPU_DRIVERS = frozenset({"nvidia", "amdgpu", "nouveau"})


def _encoding(gen: int | None, speed_gts: float) -> float:
    """Payload share of the line code: catalog value of the generation, else 8b/10b up to
    5 GT/s and 128b/130b above."""
    if gen is not None:
        spec = builtin_catalog().pcie.get(gen)
        if spec is not None:
            return spec.encoding_efficiency
    return 0.8 if speed_gts <= 5.0 else 128 / 130


def _raw_gbps(speed_gts: float, width: int) -> float:
    """Raw per-direction bandwidth after line encoding, Gb/s: GT/s x lanes x efficiency."""
    return speed_gts * width * _encoding(pcie_generation(speed_gts), speed_gts)


def _nic_line_rate(description: str | None) -> tuple[str, float] | None:
    """``Mellanox ... [ConnectX-7]`` → (``ConnectX-7``, 400.0) from the built-in catalog."""
    if not description:
        return None
    m = re.search(r"\[([^\]]+)\]\s*$", description)
    if m is None:
        return None
    name = m.group(1).strip().replace(" ", "-").casefold()
    for key, nic in builtin_catalog().nics.items():
        if key.casefold() == name:
            return key, nic.max_speed_gbps
    return None


def _pcie_verdict(
    *,
    device: str,
    cap: tuple[float, int],
    now: tuple[float, int],
    gpu: bool,
    nic: tuple[str, float] | None,
    limiting: str | None = None,
) -> Verdict | None:
    (cs, cw), (ss, sw) = cap, now
    if ss >= cs and sw >= cw:
        return None
    cap_bw, now_bw = _raw_gbps(cs, cw), _raw_gbps(ss, sw)
    lost = cap_bw - now_bw
    pct = round(100 * lost / cap_bw) if cap_bw else 0
    cap_gen, now_gen = pcie_generation(cs), pcie_generation(ss)
    gens_down = (cap_gen - now_gen) if cap_gen is not None and now_gen is not None else 0
    severity: Severity
    if sw < cw:
        severity, why = (
            "warning",
            (
                "fewer lanes than the device and slot have: a lane that failed to train, a riser "
                "or adapter wired narrower, a card in a narrower slot"
            ),
        )
    elif gpu:
        severity, why = (
            "info",
            (
                "GPUs lower the link speed when idle (PCIe power management) and raise it under "
                "load: read LnkSta while a job runs before acting"
            ),
        )
    elif nic is not None and now_bw < nic[1]:
        severity, why = (
            "warning",
            (
                f"at this speed the link cannot carry one {nic[0]} port at its {_fmt(nic[1])} Gb/s "
                "line rate"
            ),
        )
    elif gens_down >= 2:
        severity, why = (
            "warning",
            (
                f"{gens_down} generations below the device's capability: far more than a slot one "
                "generation older explains; a link that trained down (signal integrity: riser, "
                "retimer, OCP adapter, BIOS setting)"
            ),
        )
    else:
        severity, why = (
            "info",
            (
                "one generation below the device's capability at full width: expected when the "
                "slot (root port or switch) is one generation older, a link that trained down "
                "otherwise"
            ),
        )
    at = f" (limited by the link at {limiting})" if limiting else ""
    return Verdict(
        id="diagnose.pcie-link-degraded",
        severity=severity,
        cause="host.pcie",
        message=(
            f"{device}: PCIe link at {_fmt(ss)} GT/s x{sw} ({_fmt(now_bw)} Gb/s) below its "
            f"capability {_fmt(cs)} GT/s x{cw} ({_fmt(cap_bw)} Gb/s){at}: {_fmt(lost)} Gb/s "
            f"({pct}%) lost; {why}"
        ),
        explanation=(
            "Per-direction PCIe bandwidth = transfer rate (GT/s) x lanes x line-code "
            "efficiency: 8b/10b (0.8) for Gen1/Gen2 (2.5/5 GT/s), 128b/130b (0.9846) for "
            "Gen3-Gen5 (8/16/32 GT/s), 236/256 for Gen6 FLIT mode (catalog/data/pcie.yaml); "
            f"Gen4 x16 = 16 x 16 x 128/130 = 252.0 Gb/s. LnkCap is what the device supports, "
            f"LnkSta what the link trained at (pciutils {_LSPCI_SRC}); the kernel prints the "
            f"same comparison for the whole path at probe time ({_PCI_C}, "
            "__pcie_print_link_status). A NIC whose PCIe link carries less than its line rate "
            "caps RDMA and GPUDirect bandwidth at the PCIe figure (S9)."
        ),
        fix=(
            "Compare LnkCap of the upstream bridge/root port (`lspci -vv -s BRIDGE`): if it "
            "supports the device's speed and width, reseat the card, move it to a x16 slot wired "
            "to the CPU, remove risers/adapters, check the BIOS slot setting (Gen/bifurcation) "
            "and retimers; `setpci`/a reboot retrains the link. For GPUs, read LnkSta under load."
        ),
        refs=("S9", "S20", "S23"),
        confidence=0.55 if severity == "warning" else 0.3,
    )


def _fabric_slot_gen(ev: Evidence) -> int | None:
    """The lowest PCIe generation the fabric file declares for NIC slots."""
    fab = ev.fabric
    if fab is None:
        return None
    gens = [nic.pcie_gen for s in fab.servers for nic in s.nics]
    return min(gens) if gens else None


_NET_CLASSES = frozenset({"Ethernet controller", "Infiniband controller", "Network controller"})


@verdict("pci_device")
def _pci_link(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, PciDevice):
        return
    cs, cw, ss, sw = rec.lnkcap_speed_gts, rec.lnkcap_width, rec.lnksta_speed_gts, rec.lnksta_width
    if cs is not None and cw is not None and ss is not None and sw is not None:
        gpu = rec.device_class in _GPU_CLASSES or rec.kernel_driver in _GPU_DRIVERS
        nic = _nic_line_rate(rec.description) if rec.device_class in _NET_CLASSES else None
        v = _pcie_verdict(
            device=f"{rec.address or rec.bdf or 'device'} ({rec.description or rec.device_class})",
            cap=(cs, cw),
            now=(ss, sw),
            gpu=gpu,
            nic=nic,
        )
        if v is not None and not gpu and rec.device_class in _NET_CLASSES:
            v = _with_fabric(v, ss, ev)
        if v is not None:
            yield v
    yield from _aer(rec)


_UE_FAULTS = (
    "DLP", "SDES", "TLP", "FCP", "CmpltTO", "CmpltAbrt", "UnxCmplt", "RxOF", "MalfTLP",
    "ECRC", "ACSViol", "UncorrIntErr",
)  # fmt: skip
"""Uncorrectable AER status bits that mean a fault (UnsupReq is left out: config-space probes
of absent functions set it on healthy systems, and AdvNonFatalErr accompanies it)."""
_CE_FAULTS = ("RxErr", "BadTLP", "BadDLLP", "Rollover", "Timeout", "CorrIntErr", "HeaderOF")


def _aer(rec: PciDevice) -> Iterator[Verdict]:
    ue = [b for b in rec.aer_uncorrectable if b in _UE_FAULTS]
    ce = [b for b in rec.aer_correctable if b in _CE_FAULTS]
    fatal = "FatalErr" in rec.devsta_errors
    if not (ue or ce or fatal):
        return
    severity: Severity = "warning" if ue or fatal else "info"
    bits = []
    if ue:
        bits.append("UESta " + " ".join(f"{b}+" for b in ue))
    if ce:
        bits.append("CESta " + " ".join(f"{b}+" for b in ce))
    if fatal and not ue:
        bits.append("DevSta FatalErr+")
    yield Verdict(
        id="diagnose.pcie-aer-errors",
        severity=severity,
        cause="host.pcie",
        message=(
            f"{rec.address or rec.bdf or 'device'} ({rec.description or rec.device_class}): "
            f"PCIe errors latched: {'; '.join(bits)}"
        ),
        explanation=(
            "Advanced Error Reporting status bits are sticky: set by the first error since they "
            "were last cleared. Uncorrectable errors (data link protocol, surprise down, "
            "poisoned or malformed TLPs, completion timeouts) lose or corrupt transactions and "
            "can hang DMA; correctable ones (receiver errors, bad TLP/DLLP, replay timer "
            "expiry/rollover) were repaired by replay but mean a marginal link that loses "
            "bandwidth. UnsupReq and AdvNonFatalErr are ignored: probing absent functions sets "
            f"them on healthy systems. Bit names: pciutils {_AER_SRC}."
        ),
        fix=(
            "Clear the bits (`setpci -s BDF ECAP_AER+0x04.l=0xffffffff` for UESta, "
            "`ECAP_AER+0x10.l=0xffffffff` for CESta) and read them again under load; check "
            "`dmesg | grep -i aer` for repeats, reseat the card, check risers/retimers and "
            "update the BIOS/firmware if they come back."
        ),
        refs=("S9", "S20"),
        confidence=0.45 if severity == "warning" else 0.25,
    )


@verdict("pcie_bandwidth")
def _pcie_bandwidth(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, PcieBandwidth) or not rec.limited:
        return
    cs, cw, ss, sw = rec.capable_speed_gts, rec.capable_width, rec.speed_gts, rec.width
    if cs is None or cw is None or ss is None or sw is None:
        return
    gpu = rec.driver in _GPU_DRIVERS
    nic = _nic_from_firmware(rec, ev) if rec.driver == "mlx5_core" else None
    v = _pcie_verdict(
        device=f"{rec.device or 'device'} ({nic[0] if nic else rec.driver or 'kernel'})",
        cap=(cs, cw),
        now=(ss, sw),
        gpu=gpu,
        nic=nic,
        limiting=rec.limiting_device,
    )
    if v is not None and rec.driver == "mlx5_core":
        v = _with_fabric(v, ss, ev)
    if v is not None:
        yield v


_MLX5_FW_FAMILY = {20: "ConnectX-6", 22: "ConnectX-6-Dx", 28: "ConnectX-7", 40: "ConnectX-8"}
"""Firmware major version -> adapter family (the first number of an mlx5 firmware version
names the chip's firmware branch: 20.x ConnectX-6, 22.x ConnectX-6 Dx, 28.x ConnectX-7, 40.x
ConnectX-8; only families in the built-in catalog are listed)."""


def _nic_from_firmware(rec: PcieBandwidth, ev: Evidence) -> tuple[str, float] | None:
    """The adapter's catalog line rate, from the ``firmware version:`` line of the same
    device in the capture."""
    for r in _capture(rec, ev) or []:
        major = re.match(r"(\d+)\.", r.fw_version or "") if isinstance(r, KernelEvent) else None
        if isinstance(r, KernelEvent) and r.device == rec.device and major is not None:
            family = _MLX5_FW_FAMILY.get(int(major.group(1)))
            nic = builtin_catalog().nics.get(family) if family else None
            if family is not None and nic is not None:
                return family, nic.max_speed_gbps
    return None


def _with_fabric(v: Verdict, now_speed: float, ev: Evidence) -> Verdict:
    """An ``info`` (one generation down) made a warning when the fabric file declares the
    NIC slots faster than the link trained."""
    slot_gen = _fabric_slot_gen(ev)
    now_gen = pcie_generation(now_speed)
    if v.severity != "info" or slot_gen is None or now_gen is None or now_gen >= slot_gen:
        return v
    return Verdict(
        id=v.id,
        severity="warning",
        cause=v.cause,
        message=f"{v.message}; the fabric file says the NIC slots run at Gen{slot_gen}",
        explanation=v.explanation,
        fix=v.fix,
        refs=v.refs,
        confidence=0.5,
    )


# -- kernel log events ---------------------------------------------------------------------------

_DRIVER_CATEGORIES: dict[str, tuple[Severity, str]] = {
    "health": ("error", "firmware health failure"),
    "probe-failed": ("error", "driver probe failed"),
    "cmd-timeout": ("warning", "firmware command timeout"),
    "tx-timeout": ("warning", "transmit queue timeout"),
    "cmd-error": ("warning", "firmware command failed"),
}


def _card(device: str | None) -> str | None:
    """``0000:0d:00.3`` → ``0000:0d:00``: the functions of one adapter share a verdict."""
    if device and re.fullmatch(
        r"(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]", device
    ):
        return device.rsplit(".", 1)[0]
    return device


@dataclass(slots=True)
class _KernelLog:
    """What the kernel events of one capture say, computed once for all of them."""

    last_link: dict[tuple[str | None, str | None], KernelEvent] = field(default_factory=dict)
    """The last 'Link up'/'Link down' of each (device, netdev)."""
    last_module: dict[tuple[str | None, int | None], KernelEvent] = field(default_factory=dict)
    """The last port module event of each (device, module)."""
    by_card: dict[tuple[str | None, str], list[KernelEvent]] = field(default_factory=dict)
    """The events of each (adapter, category), in order."""


def _kernel_log(rec: KernelEvent, ev: Evidence) -> _KernelLog:
    records = _capture(rec, ev)
    if records is None:
        records = [rec]
    key = ("kernel", id(records[0]) if records else 0)
    idx = _index(ev)
    cached = idx.memo.get(key)
    if isinstance(cached, _KernelLog):
        return cached
    log = _KernelLog()
    for r in records:
        if not isinstance(r, KernelEvent):
            continue
        if r.category in ("link-up", "link-down"):
            log.last_link[(r.device, r.netdev)] = r
        elif r.category == "module-event":
            log.last_module[(r.device, r.module)] = r
        log.by_card.setdefault((_card(r.device), r.category), []).append(r)
    idx.memo[key] = log
    return log


def _first_of(rec: KernelEvent, ev: Evidence) -> list[KernelEvent]:
    """The events of ``rec``'s adapter and category when ``rec`` is the first of them, else
    ``[]`` (one verdict per adapter and kind of event)."""
    same = _kernel_log(rec, ev).by_card.get((_card(rec.device), rec.category), [])
    return same if same and same[0] is rec else []


@verdict("kernel_event")
def _kernel_event(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, KernelEvent):
        return
    dev = rec.device or rec.driver or "device"
    if rec.category == "module-event":
        yield from _module_event(rec, ev, dev)
    elif rec.category == "link-down":
        yield from _link_down_event(rec, ev, dev)
    elif rec.category == "pcie-power" and "insufficient power" in rec.message:
        yield Verdict(
            id="diagnose.pcie-slot-power",
            severity="warning",
            cause="host.pcie",
            message=f"{dev}: {rec.message.split('): ', 1)[-1]}",
            explanation=(
                "mlx5 reads the power the PCIe slot advertises (MPEIN register) and warns when "
                "it is below what the adapter needs: the card may not power its modules or may "
                f"throttle (mlx5_pcie_event in {_MLX5_EVENTS})."
            ),
            fix=(
                "Move the adapter to a slot that advertises enough power (75 W for a standard "
                "x16 slot), or connect the auxiliary power the riser/OCP adapter needs."
            ),
            refs=("S9", "S20"),
            confidence=0.5,
        )
    elif rec.category in _DRIVER_CATEGORIES and (same := _first_of(rec, ev)):
        severity, what = _DRIVER_CATEGORIES[rec.category]
        funcs = sorted({r.device for r in same if r.device})
        also = f" (and {len(funcs) - 1} more function(s) of the adapter)" if len(funcs) > 1 else ""
        yield Verdict(
            id="diagnose.nic-driver-error",
            severity=severity,
            cause="host.driver",
            message=f"{dev}{also}: {what}: {rec.message}",
            explanation=(
                "The NIC driver reports that the adapter or its firmware stopped answering "
                "(health poll misses and syndromes, command timeouts), that the device could "
                "not be initialised, or that a transmit queue stalled: the host's NIC, not the "
                f"fabric (mlx5 health.c {_MLX5_HEALTH}). Only the first such line per device is "
                "reported."
            ),
            fix=(
                "Read the whole kernel log around the line (`dmesg -T`), check the firmware "
                "version against the driver's release notes and update it, collect `mlxfwreset`"
                "/`devlink health` reports; a probe failure needs the driver/firmware pair "
                "fixed before anything else."
            ),
            refs=("S20", "S22"),
            confidence=0.55,
        )
    elif rec.category == "aer" and _first_of(rec, ev):
        corrected = "Corrected" in rec.message and "Uncorrected" not in rec.message
        yield Verdict(
            id="diagnose.pcie-aer-errors",
            severity="info" if corrected else "warning",
            cause="host.pcie",
            message=f"{dev}: {rec.message}",
            explanation=(
                "The kernel's AER driver logged a PCIe error on this device; uncorrected "
                "errors lose transactions, corrected ones mean link-level retries on a "
                f"marginal link. Bit names: pciutils {_AER_SRC}."
            ),
            fix=(
                "Count how often it repeats (`dmesg | grep -c AER`), reseat the card, check "
                "risers and retimers, and update the BIOS/firmware."
            ),
            refs=("S9", "S20"),
            confidence=0.35,
        )


def _module_event(rec: KernelEvent, ev: Evidence, dev: str) -> Iterator[Verdict]:
    if _kernel_log(rec, ev).last_module.get((rec.device, rec.module)) is not rec:
        return  # judged at the module's last event (a later plug supersedes an unplug)
    status = rec.module_status or ""
    if status.startswith("Cable plugged"):
        return
    error = status.startswith("Cable error")
    yield Verdict(
        id="diagnose.nic-module-event",
        severity="error" if error else "warning",
        cause="fabric.optics",
        message=f"{dev}: port module {rec.module}: {status}",
        explanation=(
            "mlx5 logs every change of a port's pluggable module: 'Cable plugged', 'Cable "
            "unplugged', 'Cable disabled', or 'Cable error' with the reason (power budget "
            "exceeded, high temperature, bad or shorted cable/module, unsupported or "
            f"unreadable EEPROM, bus stuck) ({_MLX5_EVENTS}, port_module). A module in error "
            "keeps its link down; an unplugged module leaves the port without a link (an "
            "unused second port of a dual-port card is often unplugged, hence a warning)."
        ),
        fix=(
            "Reseat or replace the module/cable named; for 'Power budget exceeded' use a "
            "module within the adapter's power class, for 'High Temperature' improve airflow "
            "or use passive DAC; check `ethtool -m` afterwards."
        ),
        refs=("S16", "S20"),
        confidence=0.6 if error else 0.35,
    )


def _link_down_event(rec: KernelEvent, ev: Evidence, dev: str) -> Iterator[Verdict]:
    if _kernel_log(rec, ev).last_link.get((rec.device, rec.netdev)) is not rec:
        return  # a later 'Link up' (boot-time training, a flap that recovered) or 'Link down'
    yield Verdict(
        id="diagnose.nic-link-down",
        severity="warning",
        cause="fabric.link-down",
        message=f"{dev}{' ' + rec.netdev if rec.netdev else ''}: 'Link down' with no later "
        "'Link up' in the log",
        explanation=(
            "mlx5e prints 'Link down'/'Link up' when the port's carrier changes "
            f"(mlx5e_update_carrier, {_MLX5_EN_MAIN}); a down with no up after it in the "
            "captured log means the port stayed without a link: cable, module, or the switch "
            "port is down."
        ),
        fix=(
            "Check the port now (`ip link show NETDEV`, `ethtool NETDEV`), the module "
            "(`ethtool -m NETDEV`) and the switch port; if the log was cut, take it again."
        ),
        refs=("S16", "S20"),
        confidence=0.4,
    )


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


# -- ip link ---------------------------------------------------------------------------------------

_VIRTUAL = re.compile(
    r"^(?:lo|docker|virbr|br-|cni|flannel|cali|veth|vnet|tun|tap|lxc|kube|vxlan|geneve|"
    r"wg|tailscale|zt|dummy|ovs-|genev_sys|cilium|weave|podman|nodelocaldns)",
    re.IGNORECASE,
)


def _physical(rec: IpLink) -> bool:
    return rec.link_type in ("ether", "infiniband") and not _VIRTUAL.match(rec.name)


@verdict("ip_link")
def _ip_link(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, IpLink) or not _physical(rec):
        return
    no_carrier = "NO-CARRIER" in rec.flags or (rec.state == "DOWN" and not rec.carrier)
    if rec.admin_up and no_carrier:
        bond = f" (member of {rec.master})" if rec.master else ""
        yield Verdict(
            id="diagnose.iface-no-carrier",
            severity="warning",
            cause="fabric.link-down",
            message=(
                f"{rec.name}{bond} is administratively UP but has no carrier "
                f"(<{','.join(rec.flags)}>, state {rec.state})"
            ),
            explanation=(
                "UP in the flags is the administrative state (ip link set up); LOWER_UP is "
                "the carrier the driver reports, NO-CARRIER its absence, and the operational "
                f"state follows it ({_IP_LINK}; {_OPERSTATES}). An interface configured up "
                "without carrier has no physical link: no cable or module, a module that does "
                "not light, a speed/FEC the far end does not match, or the switch port is down."
            ),
            fix=(
                f"`ethtool {rec.name}` (Link detected, speed), `ethtool -m {rec.name}` (module "
                "present, Rx power), check the switch port (admin up, speed/FEC) and reseat or "
                "replace the cable; ignore it if the port is intentionally unused."
            ),
            refs=("S16", "S20"),
            confidence=0.45,
        )
    yield from _iface_mtu(rec, ev)


def _intended_mtu(ev: Evidence, rec: Record, port: str) -> tuple[int, str] | None:
    """The MTU the fabric file gives the host link at ``port`` (an RDMA/data port)."""
    fab = ev.fabric
    if fab is None:
        return None
    idx = fabric_index(fab)
    item = _item(rec, ev)
    subject = item.subject if item is not None else None
    found: set[int] = set()
    where = ""
    for server in fab.servers:
        if subject in idx.servers and server.name != subject:
            continue
        for p in server.ports:
            if p.name != port or p.purpose not in ("roce", "ib", "storage"):
                continue
            link = idx.link_at.get(Endpoint(server.name, p.name))
            if link is not None:
                found.add(link.mtu_bytes)
                where = f"{server.name}:{p.name}"
    if len(found) != 1:
        return None
    return found.pop(), where


def _iface_mtu(rec: IpLink, ev: Evidence) -> Iterator[Verdict]:
    if rec.mtu_bytes is None or rec.link_type != "ether":
        return
    want = _intended_mtu(ev, rec, rec.name)
    if want is None or rec.mtu_bytes >= want[0]:
        return
    yield Verdict(
        id="diagnose.iface-mtu-low",
        severity="warning",
        cause="fabric.mtu",
        message=(
            f"{rec.name}: MTU {rec.mtu_bytes} below the {want[0]} bytes the fabric file gives "
            f"its link ({want[1]})"
        ),
        explanation=(
            "Every hop of a RoCE path must carry the same jumbo MTU (S11: 9000 on hosts, 9216 "
            "on switch ports). The RDMA path MTU follows the netdev MTU: the kernel subtracts "
            f"96 bytes of RoCE headers and picks the largest IB MTU that fits ({_IB_ADDR_H}, "
            "iboe_get_mtu), so 1500 gives 1024-byte RDMA packets, and a host below its peers' "
            "MTU drops or fragments their large packets (S21)."
        ),
        fix=(
            f"`ip link set {rec.name} mtu {want[0]}` and make it persistent in the network "
            f"configuration; verify with `ping -M do -s {want[0] - 28} PEER`."
        ),
        refs=("S11", "S21"),
        confidence=0.55,
    )


_IB_MTUS = (4096, 2048, 1024, 512, 256)
ROCE_HEADER_BYTES = 96
"""GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 + ICRC 4 (iboe_get_mtu)."""


def _roce_mtu(rec: IbvPort, ev: Evidence) -> Iterator[Verdict]:
    if rec.link_layer != "Ethernet" or rec.active_mtu_bytes is None or not rec.active:
        return
    want = _intended_mtu(ev, rec, rec.hca_id)
    if want is None:
        return
    expect = next((m for m in _IB_MTUS if m <= want[0] - ROCE_HEADER_BYTES), None)
    if expect is None or rec.active_mtu_bytes >= expect:
        return
    yield Verdict(
        id="diagnose.iface-mtu-low",
        severity="warning",
        cause="fabric.mtu",
        message=(
            f"{rec.hca_id} port {rec.port}: RoCE active_mtu {rec.active_mtu_bytes}, while the "
            f"{want[0]}-byte MTU the fabric file gives {want[1]} allows {expect}: the netdev's "
            "MTU is below the fabric's"
        ),
        explanation=(
            "For RoCE the active RDMA MTU is derived from the netdev MTU: netdev MTU minus "
            f"{ROCE_HEADER_BYTES} bytes of headers (GRH 40, UDP 8, BTH 12, XRC 4, AtomicETH 28, "
            f"ICRC 4), rounded down to 256/512/1024/2048/4096 ({_IB_ADDR_H}, iboe_get_mtu). "
            f"{want[0]} - {ROCE_HEADER_BYTES} allows {expect}; {rec.active_mtu_bytes} means the "
            "netdev runs a smaller MTU than the fabric (S11)."
        ),
        fix=(
            f"Raise the MTU of {rec.hca_id}'s netdev (`ibdev2netdev`, then `ip link set NETDEV "
            f"mtu {want[0]}`) and check `ibv_devinfo` shows active_mtu {expect}."
        ),
        refs=("S11",),
        confidence=0.5,
    )


# -- optics (ethtool -m) ------------------------------------------------------------------------

_QTY = {
    "temperature_c": ("temperature", "C"),
    "voltage_v": ("supply voltage", "V"),
    "tx_bias_ma": ("laser bias", "mA"),
    "tx_power_dbm": ("Tx power", "dBm"),
    "rx_power_dbm": ("Rx power", "dBm"),
}


def _valid(t: Threshold | None) -> bool:
    """Thresholds a module really programmed (all zero / high <= low: not set)."""
    if t is None:
        return False
    hi = t.high_alarm if t.high_alarm is not None else t.high_warning
    lo = t.low_alarm if t.low_alarm is not None else t.low_warning
    return hi is not None and lo is not None and hi > lo


def _level(value: float, t: Threshold) -> tuple[str, str, float] | None:
    """(``alarm``|``warning``, ``high``|``low``, threshold) beyond which ``value`` lies."""
    for kind in ("alarm", "warning"):
        hi = getattr(t, f"high_{kind}")
        lo = getattr(t, f"low_{kind}")
        if hi is not None and value > hi:
            return kind, "high", hi
        if lo is not None and value < lo:
            return kind, "low", lo
    return None


def _lit(lane: ModuleLane) -> bool | None:
    readings = [v for v in (lane.tx_bias_ma, lane.tx_power_mw) if v is not None]
    if not readings:
        return None
    return any(v > 0 for v in readings)


@dataclass(slots=True)
class _Excess:
    qty: str
    kind: str
    side: str
    limit: float
    worst: float
    lanes: list[int] = field(default_factory=list)


def _excesses(mod: TransceiverModule) -> list[_Excess]:
    out: dict[tuple[str, str, str], _Excess] = {}

    def note(qty: str, value: float, lane: int | None) -> None:
        t = mod.thresholds.get(qty)
        if t is None or not _valid(t):
            return
        lv = _level(value, t)
        if lv is None:
            return
        kind, side, limit = lv
        if qty == "rx_power_dbm" and side == "low" and kind == "alarm":
            return  # diagnose.optics-rx-low (rule) judges Rx under the low alarm
        ex = out.setdefault((qty, kind, side), _Excess(qty, kind, side, limit, value))
        if (side == "high" and value > ex.worst) or (side == "low" and value < ex.worst):
            ex.worst = value
        if lane is not None:
            ex.lanes.append(lane)

    if mod.temperature_c is not None:
        note("temperature_c", mod.temperature_c, None)
    if mod.voltage_v is not None:
        note("voltage_v", mod.voltage_v, None)
    for lane in mod.lanes:
        if _lit(lane) is False:
            continue  # laser off: an unused lane, a disabled transmitter, low-power mode
        if lane.tx_bias_ma is not None:
            note("tx_bias_ma", lane.tx_bias_ma, lane.lane)
        if lane.tx_power_dbm is not None:
            note("tx_power_dbm", lane.tx_power_dbm, lane.lane)
        rx = lane.rx_power_dbm
        if rx is not None and rx > -30.0:  # no light at all is the rule's (dark lane)
            note("rx_power_dbm", rx, lane.lane)
    # an alarm and a warning on the same side of the same quantity: keep the alarm
    for (qty, kind, side), _ex in list(out.items()):
        if kind == "warning" and (qty, "alarm", side) in out:
            del out[(qty, kind, side)]
    return list(out.values())


_FLAG_QTY = {
    "temperature": "temperature_c",
    "voltage": "voltage_v",
    "tx_bias": "tx_bias_ma",
    "tx_power": "tx_power_dbm",
    "rx_power": "rx_power_dbm",
}


_FLAG_RE = re.compile(
    r"^(temperature|voltage|tx_bias|tx_power|rx_power)_(high|low)_(alarm|warning)$"
)


def _flag_excesses(mod: TransceiverModule, judged: set[str]) -> list[_Excess]:
    """Alarm/warning flags set for quantities the module printed no reading for."""
    out: list[_Excess] = []
    for key, on in mod.flags.items():
        m = _FLAG_RE.match(key)
        if not on or m is None:
            continue
        qty = _FLAG_QTY[m.group(1)]
        if qty in judged or (qty == "rx_power_dbm" and m.group(2) == "low"):
            continue  # a reading was judged (a set flag is latched history) / the rule's case
        out.append(_Excess(qty, m.group(3), m.group(2), float("nan"), float("nan")))
    return out


def _module_name(mod: TransceiverModule) -> str:
    what = " ".join(x for x in (mod.vendor_name, mod.vendor_pn) if x) or mod.form_factor or "module"
    return f"{mod.interface or 'port'} ({what})"


@verdict("transceiver_module")
def _optics(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, TransceiverModule) or not rec.present:
        return
    name = _module_name(rec)
    found = _excesses(rec)
    judged = {
        q
        for q in _QTY
        if (q == "temperature_c" and rec.temperature_c is not None)
        or (q == "voltage_v" and rec.voltage_v is not None)
        or (q == "tx_bias_ma" and any(ln.tx_bias_ma is not None for ln in rec.lanes))
        or (q == "tx_power_dbm" and any(ln.tx_power_dbm is not None for ln in rec.lanes))
        or (q == "rx_power_dbm" and any(ln.rx_power_dbm is not None for ln in rec.lanes))
    }
    found += _flag_excesses(rec, judged)
    for ex in found:
        label, unit = _QTY[ex.qty]
        where = f" on lane(s) {', '.join(map(str, sorted(set(ex.lanes))))}" if ex.lanes else ""
        if ex.limit == ex.limit:  # not NaN: a reading against a threshold
            detail = (
                f"{label} {ex.worst:g} {unit}{where} {'above' if ex.side == 'high' else 'below'} "
                f"the module's {ex.side} {ex.kind} {ex.limit:g} {unit}"
            )
        else:
            detail = f"the module flags {label} {ex.side} {ex.kind}"
        yield Verdict(
            id="diagnose.optics-threshold",
            severity="error" if ex.kind == "alarm" else "warning",
            cause="fabric.optics",
            message=f"{name}: {detail}",
            explanation=(
                "ethtool -m reads the module's digital optical monitoring and the alarm and "
                "warning thresholds its vendor programmed (SFF-8472, SFF-8636, CMIS; "
                f"{_ETHTOOL}). Beyond an alarm threshold the module is out of its operating "
                "range: high temperature or bias ages or shuts the laser, low Tx power or bias "
                "means a failing transmitter, Rx power above the overload level saturates the "
                "receiver (a short fibre without attenuator), Rx power in the warning band "
                "leaves little margin before errors (S16, S20.5). Lanes whose laser is off are "
                "not judged; thresholds left at zero are ignored."
            ),
            fix=(
                "Compare with the far end's ethtool -m; clean the connectors (inspection "
                "scope), check fibre type and length against the module's reach, add an "
                "attenuator for overload, improve airflow for temperature, and replace the "
                "module if its own Tx side is out of range."
            ),
            refs=("S16", "S20"),
            confidence=0.6 if ex.kind == "alarm" else 0.4,
        )
    faulty = [ln.lane for ln in rec.lanes if ln.tx_fault and _lit(ln) is not False]
    if faulty or rec.flags.get("tx_fault"):
        lanes = f" on lane(s) {', '.join(map(str, faulty))}" if faulty else ""
        yield Verdict(
            id="diagnose.optics-tx-fault",
            severity="warning",
            cause="fabric.optics",
            message=f"{name}: transmitter fault flagged{lanes}",
            explanation=(
                "TX fault is the module's own report that a laser driver failed (SFF-8472 "
                "status bits, SFF-8636/CMIS per-lane flags). In SFF-8636 and CMIS the flags are "
                "latched until read, so one read may show an old event: read ethtool -m twice "
                f"({_ETHTOOL})."
            ),
            fix=(
                "Read `ethtool -m` again; if the fault stays, replace the module; check the "
                "far end's Rx power on the flagged lanes."
            ),
            refs=("S16", "S20"),
            confidence=0.4,
        )
    if rec.module_state and "fault" in rec.module_state.lower():
        yield Verdict(
            id="diagnose.optics-module-fault",
            severity="error",
            cause="fabric.optics",
            message=f"{name}: CMIS module state {rec.module_state}",
            explanation=(
                "A CMIS module reports ModuleFault when it detected an internal fault and shut "
                f"its data path down (CMIS module state machine; {_ETHTOOL}); the port has no "
                "link through it."
            ),
            fix="Reseat the module (a power cycle clears a transient fault), else replace it.",
            refs=("S16", "S20"),
            confidence=0.65,
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
