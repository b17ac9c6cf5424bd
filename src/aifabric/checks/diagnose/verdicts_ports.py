"""Record verdicts on InfiniBand/RDMA ports (ibstat, ibv_devinfo, iblinkinfo) and on
``ip link`` interfaces (carrier, MTU against the fabric): see :mod:`.verdicts_core`."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aifabric.checks.diagnose.verdict_support import (
    _DEVINFO_SRC,
    _IB_ADDR_H,
    _IBDIAG_SRC,
    _IBSTAT_DOC,
    _IP_LINK,
    _OPERSTATES,
    Severity,
    _capture,
    _fmt,
    _item,
)
from aifabric.checks.diagnose.verdicts import Verdict, verdict
from aifabric.checks.diagnose.verdicts_lab import fabric_peer, link_peer_down
from aifabric.evidence.base import UNNAMED, Record
from aifabric.evidence.infiniband import (
    IbLink,
    IbstatCA,
    IbstatPort,
    IbvDevice,
    IbvPort,
)
from aifabric.evidence.linux_net import IpLink
from aifabric.evidence.sonic_interfaces import SonicInterfaceStatus
from aifabric.evidence.sysfs_rdma import SysfsRdmaPort
from aifabric.model import Endpoint, fabric_index

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence


__all__ = ["ROCE_HEADER_BYTES"]


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


def _port_words(port: int) -> str:
    """``port 1``; ``a port`` for port 0, which excerpts without their ``Port N:`` /
    ``port: N`` line get (InfiniBand numbers HCA ports from 1)."""
    return f"port {port}" if port else "a port"


def _ibstat_views(records: Sequence[Record]) -> list[tuple[IbstatPort, _PortView]]:
    chips = {r.ca: r.ca_type for r in records if isinstance(r, IbstatCA)}
    return [
        (
            r,
            _PortView(
                r.ca or "the HCA",  # ibstat CA PORT pasted without its CA line
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
                r.hca_id if r.hca_id != UNNAMED else "the HCA",  # an excerpt without hca_id
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


_SYSFS_STATE = {
    "ACTIVE": "Active", "DOWN": "Down", "INIT": "Initializing", "ARMED": "Armed",
    "ACTIVE_DEFER": "ActiveDefer",
}  # fmt: skip
"""sysfs ``ports/N/state`` names (kernel ``drivers/infiniband/core/sysfs.c``) as ibstat prints
them."""


def _sysfs_views(records: Sequence[Record]) -> list[tuple[SysfsRdmaPort, _PortView]]:
    return [
        (
            r,
            _PortView(
                r.device,
                r.port,
                _SYSFS_STATE.get(r.state, r.state) if r.state is not None else None,
                r.phys_state,
                r.state == "ACTIVE",
                r.link_layer,
                r.rate_gbps,
                None,
            ),
        )
        for r in records
        if isinstance(r, SysfsRdmaPort)
    ]


def _port_count(records: Sequence[Record], device: str) -> int | None:
    for r in records:
        if isinstance(r, IbstatCA) and r.ca == device:
            return r.num_ports
        if isinstance(r, IbvDevice) and r.hca_id == device:
            return r.phys_port_cnt
    return None


def _port_down(
    view: _PortView,
    ports: list[_PortView] | None,
    total: int | None,
    twins: list[_PortView] | None = None,
) -> Verdict:
    """The verdict on a port that is not Active; ``ports`` are the same device's ports seen,
    ``twins`` the ports of other devices of the same model in the capture. A port whose physical
    state is Disabled while a twin is Active is a warning, not an error: one function of a
    multi-port adapter (each its own device, as on ConnectX-7 and GB10 hosts) left uncabled or
    disabled on purpose looks exactly like this."""
    if total is None and ports is not None:
        total = len(ports)
    only = total == 1
    all_down = (
        ports is not None
        and total is not None
        and len(ports) >= total
        and not any(p.active for p in ports)
    )
    spare = view.phys == "Disabled" and any(t.active for t in twins or ())
    severity: Severity = "error" if (only or all_down) and not spare else "warning"
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
            f"{view.device} {_port_words(view.port)} is {view.state or 'not Active'} "
            f"(physical state {phys}{layer}): {scope}"
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
            f"{view.device} {_port_words(view.port)} is Active at {_fmt(view.rate_gbps)} Gb/s"
            f" while {len(faster)} other {view.chip} port(s) in the same capture run at "
            f"{_fmt(top)} Gb/s"
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
            twins = [v for v in all_views if v.device != me.device and v.chip == me.chip]
            yield _port_down(me, mine, _port_count(records, me.device), twins)
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


@verdict("sysfs_rdma_port")
def _sysfs_port(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    """A port read from /sys/class/infiniband (``grep -H``, ``cat``) is judged as ibstat's."""
    if not isinstance(rec, SysfsRdmaPort) or rec.state is None:
        return  # only a rate, a LID or pkeys: nothing says whether the port is up
    records = _capture(rec, ev) or [rec]
    yield from _judge_ports(rec, ev, list(_sysfs_views(records)))


# the hint grows word by word so the lookahead reads each run of blanks once (linear)
_COULD_BE = re.compile(r"Could be ([^()](?:\s*+[^()\s])*?)(?=\s*+(?:Could be|$))")


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
        peer = link_peer_down(rec, ev)
        cabled = fabric_peer(rec, ev)
        known = (
            f": its peer {peer.name} is administratively down (no UP flag)" if peer is not None
            else f": the fabric file cables it to {cabled.device}:{cabled.port}"
            if cabled is not None else ""
        )
        yield Verdict(
            id="diagnose.iface-no-carrier",
            severity="error" if known else "warning",
            cause="fabric.link-down",
            message=(
                f"{rec.name}{bond} is administratively UP but has no carrier "
                f"(<{','.join(rec.flags)}>, state {rec.state}){known}"
            ),
            explanation=(
                "UP in the flags is the administrative state (ip link set up); LOWER_UP is "
                "the carrier the driver reports (ifconfig: RUNNING), NO-CARRIER its absence, "
                "and the operational "
                f"state follows it ({_IP_LINK}; {_OPERSTATES}). An interface configured up "
                "without carrier has no physical link: no cable or module, a module that does "
                "not light, a speed/FEC the far end does not match, or the switch port is down "
                "(for a veth pair: the other end was set down)."
            ),
            fix=(
                f"`ethtool {rec.name}` (Link detected, speed), `ethtool -m {rec.name}` (module "
                "present, Rx power), check the switch port (admin up, speed/FEC) and reseat or "
                "replace the cable; ignore it if the port is intentionally unused."
            ),
            refs=("S16", "S20"),
            confidence=0.8 if known else 0.45,
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
        yield from _roce_mtu_below_port(rec, ev)
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


def _roce_mtu_below_port(rec: IbvPort, ev: Evidence) -> Iterator[Verdict]:
    """Without a fabric file: a RoCE port whose active MTU is below what it supports, at 2048 or
    less, means a netdev MTU under 4096 + 96 bytes: no jumbo frames on the host (S11). A warning
    when the same input shows an Ethernet interface with such an MTU (the netdev, seen); an info
    note otherwise, since an Ethernet port that carries no RDMA traffic (a cloud VM's
    accelerated-networking VF, a management port) shows the same at MTU 1500."""
    if rec.max_mtu_bytes is None or rec.active_mtu_bytes is None:
        return
    if rec.active_mtu_bytes >= rec.max_mtu_bytes or rec.active_mtu_bytes > 2048:
        return
    need = rec.max_mtu_bytes + ROCE_HEADER_BYTES
    small = sorted(
        {(i.record.name, i.record.mtu_bytes) for i in ev.items
         if isinstance(i.record, IpLink) and i.record.mtu_bytes is not None
         and i.record.mtu_bytes < need and i.record.name != "lo"}
    )  # fmt: skip
    seen = (
        "; " + ", ".join(f"{name} has MTU {mtu}" for name, mtu in small[:3]) + " in this input"
        if small
        else ""
    )
    who = rec.hca_id if rec.hca_id != UNNAMED else "the HCA"
    yield Verdict(
        id="diagnose.roce-mtu-below-port",
        severity="warning" if small else "info",
        cause="fabric.mtu",
        message=(
            f"{who} {_port_words(rec.port)}: RoCE active_mtu {rec.active_mtu_bytes} while the "
            f"port supports {rec.max_mtu_bytes}: its netdev MTU is below {need}{seen}"
        ),
        explanation=(
            "For RoCE the active RDMA MTU is derived from the netdev MTU: netdev MTU minus "
            f"{ROCE_HEADER_BYTES} bytes of headers, rounded down to 256/512/1024/2048/4096 "
            f"({_IB_ADDR_H}, iboe_get_mtu); a 1500-byte netdev gives 1024. An AI fabric runs "
            f"jumbo frames end to end (S11: 9000 on hosts), which gives {rec.max_mtu_bytes}. "
            "Messages larger than the active MTU are refused by UD queue pairs "
            "(ibv_ud_pingpong: 'Requested size larger than port MTU') and RC traffic runs in "
            "small packets; a path MTU set above it fails to connect or retries (S21)."
        ),
        fix=(
            "Find the netdev (`ibdev2netdev`), raise its MTU (`ip link set NETDEV mtu 9000`, "
            "persistent in the network configuration, and the switch ports at 9216), then "
            f"check that `ibv_devinfo` shows active_mtu {rec.max_mtu_bytes}."
        ),
        refs=("S11", "S21"),
        confidence=0.4,
    )


# -- SONiC show interfaces status -----------------------------------------------------------------

_INTFUTIL = (
    "sonic-utilities scripts/intfutil, show interfaces status "
    "(https://github.com/sonic-net/sonic-utilities/blob/master/doc/Command-Reference.md)"
)


@verdict("sonic_interface_status")
def _sonic_port(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, SonicInterfaceStatus) or not rec.admin_up or rec.oper_up:
        return
    if rec.oper is None or rec.interface.startswith(("PortChannel", "Vlan", "Loopback")):
        return
    no_module = rec.port_type is not None and rec.port_type.upper() == "N/A"
    yield Verdict(
        id="diagnose.switch-port-down",
        # an empty cage that is admin up is how most unused ports look: noted, not a fault
        severity="info" if no_module else "warning",
        cause="fabric.link-down",
        message=(
            f"{rec.interface}{f' ({rec.alias})' if rec.alias else ''} is admin up but oper "
            f"{rec.oper}"
            + (": no transceiver detected (Type N/A)" if no_module else "")
            + (f", {rec.speed_gbps:g}G FEC {rec.fec}" if rec.speed_gbps is not None else "")
        ),
        explanation=(
            "Admin is the configured state (config interface startup/shutdown), Oper the link "
            "state the ASIC reports; admin up with oper down means the link did not come up: "
            "no or unsupported module (Type N/A), cable, a speed, FEC or auto-negotiation the "
            f"far end does not match, or the peer port down ({_INTFUTIL}). A port cabled to a "
            "GPU server that is down removes that NIC's rail from the fabric (S16, S20)."
        ),
        fix=(
            f"`show interfaces transceiver presence {rec.interface}` and `show interfaces "
            f"transceiver eeprom --dom {rec.interface}` (module, Rx power); compare speed and "
            "FEC with the peer (`ethtool` on a host, `show interfaces status` on a switch); "
            "reseat or replace the cable; ignore it if the port is intentionally unused."
        ),
        refs=("S16", "S20"),
        confidence=0.3 if no_module else 0.45,
    )
