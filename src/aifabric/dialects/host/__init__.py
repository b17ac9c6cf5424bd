"""Host state of a GPU server → :class:`ObservedDevice` (role ``host``).

Reads what a server says about its RoCE ports, from any of these captures (evidence kinds):

* ``mlnx-qos``: trust state (``pcp``/``dscp``), PFC-enabled priorities, the DSCP→priority map
  the NIC uses to pick the priority of outgoing RoCE, TC schedulers (``strict`` for CNP).
* ``ip-link``: interface MTUs (the host MTU the path must carry, S11).
* ``ibv-devinfo``: ``active_mtu`` (the RDMA MTU, an IB MTU ≤ 4096) and ``link_layer``
  (``Ethernet`` for RoCE, ``InfiniBand``) per device and port (S15: NCCL_IB_HCA).
* ``rdma-traffic-class`` / ``cma-roce-tos`` (sysfs ``tc/<port>/traffic_class``, rdma_cm
  ``default_roce_tos``): the ToS byte RoCE traffic is sent with; its DSCP is ``tos >> 2`` (S14).
* ``host-roce-script``: a provisioning script's *commands* (what ``aifabric render --dialect
  host`` writes as ``roce-host.sh``): ``mlnx_qos --trust`` / ``--pfc`` / ``--dscp2prio`` per
  interface, the ToS written by ``cma_roce_tos -t`` or into ``traffic_class``, ``ip link set IF
  mtu N``; each value's source is the script line that sets it. ``--dscp2prio`` entries of one
  interface accumulate in script order (``del`` removes, ``flush`` clears), as the NIC applies
  them.

Each interface becomes a port view keyed by its name (``ens1f0np0``, ``mlx5_0``); values every
interface shares become the host's defaults (:meth:`ObservedDevice.settle_defaults`), which is
what a fabric link end (``nic0``) is judged by when names differ between the fabric file and the
host.
"""

from __future__ import annotations

import re

from aifabric.dialects.observed import ObservedDevice, PortView, Src, Val
from aifabric.evidence.base import ParseResult, Record

__all__ = ["HOST_KINDS", "interpret"]

HOST_KINDS = frozenset(
    {
        "mlnx-qos",
        "ip-link",
        "ibv-devinfo",
        "rdma-traffic-class",
        "cma-roce-tos",
        "show-gids",
        "host-roce-script",
    }
)
"""Evidence kinds a host directory may hold (others are skipped and reported)."""


def interpret(
    results: list[tuple[str, ParseResult]], *, name: str, dev: ObservedDevice | None = None
) -> ObservedDevice:
    """Fold ``(file, parsed capture)`` pairs of one server into its observed model."""
    if dev is None:
        dev = ObservedDevice(name=name, role="host", dialect="host")
    for file, result in results:
        dev.files.append(file)
        for rec in result.records:
            _apply(dev, file, result.kind, rec)
    dev.settle_defaults()
    return dev


_SUBPORT_RE = re.compile(r"^([A-Za-z]+\d+)-(\d+)$")


def linux_port_to_neutral(name: str) -> str | None:
    """A Linux interface name of a switch port as aifabric's neutral port name: ``Ethernet8``
    stays, ``Ethernet1-2`` (a lab veth for a broken-out port; Linux names have no ``/``)
    becomes ``Ethernet1/2``; ``lo`` and bridges are not ports."""
    if name == "lo" or name.startswith(("br", "docker", "virbr")):
        return None
    m = _SUBPORT_RE.match(name)
    return f"{m.group(1)}/{m.group(2)}" if m else name


def interpret_linux_switch(
    results: list[tuple[str, ParseResult]], *, name: str
) -> ObservedDevice:
    """A switch that runs Linux (SONiC, Cumulus, a lab namespace): its ``ip link`` gives the
    MTU of each front-panel port; nothing else of the host dialect applies to a switch."""
    dev = ObservedDevice(name=name, role="switch", dialect="linux")
    for file, result in results:
        dev.files.append(file)
        if result.kind != "ip-link":
            dev.notes.append(f"{file}: a {result.kind} capture of a switch; verify does not use it")
            continue
        for rec in result.records:
            iface = getattr(rec, "name", None)
            mtu = getattr(rec, "mtu_bytes", None)
            if not iface or mtu is None or linux_port_to_neutral(iface) is None:
                continue
            _port(dev, iface).mtu_bytes = Val(int(mtu), Src(file, rec.line, f"{iface}: mtu {mtu}"))
    return dev.finish(linux_port_to_neutral)


def _port(dev: ObservedDevice, name: str) -> PortView:
    if name not in dev.ports:
        dev.ports[name] = PortView(port=name)
    return dev.ports[name]


def _apply(dev: ObservedDevice, file: str, kind: str, rec: Record) -> None:
    rtype = rec.record_type
    line = rec.line
    if rtype == "mlnx_qos":
        iface = getattr(rec, "interface", None) or "nic"
        v = _port(dev, iface)
        trust = getattr(rec, "trust", None)
        if trust:
            v.trust = Val(str(trust).lower(), Src(file, line, f"Priority trust state: {trust}"))
        pfc = getattr(rec, "pfc_enabled_priorities", None)
        listed = getattr(rec, "pfc_priorities_listed", None)
        if pfc is not None and (pfc or listed):
            v.pfc_priorities = Val(tuple(sorted(pfc)), Src(file, line, "PFC configuration"))
        d2p = getattr(rec, "dscp_to_priority", None)
        if d2p:
            v.dscp_to_tc = Val(dict(d2p), Src(file, line, "dscp2prio mapping"))
        for tc in getattr(rec, "tcs", []) or []:
            if tc.tsa:
                kind_ = "strict" if tc.tsa.lower() == "strict" else tc.tsa.lower()
                for prio in tc.priorities:
                    dev.schedulers.setdefault(prio, Val(kind_, Src(file, tc.line, f"tc: {tc.tc}")))
    elif rtype == "ip_link":
        mtu = getattr(rec, "mtu_bytes", None)
        iface = getattr(rec, "name", None)
        if mtu is not None and iface and iface != "lo":
            val = Val(int(mtu), Src(file, line, f"{iface}: mtu {mtu}"))
            dev.host_interfaces[iface] = val
            if getattr(rec, "link_type", None) in (None, "ether"):
                _port(dev, iface).mtu_bytes = val
    elif rtype == "ibv_port":
        hca = getattr(rec, "hca_id", "?")
        port = getattr(rec, "port", 1)
        mtu = getattr(rec, "active_mtu_bytes", None)
        if mtu is not None:
            dev.rdma_mtu[f"{hca}:{port}"] = Val(int(mtu), Src(file, line, f"active_mtu: {mtu}"))
        ll = getattr(rec, "link_layer", None)
        if ll:
            layer = Val(str(ll), Src(file, line, f"link_layer: {ll}"))
            dev.link_layers[f"{hca}:{port}"] = layer
            dev.link_layers.setdefault(hca, layer)
    elif rtype == "script_mlnx_qos":
        _apply_script_qos(dev, file, rec)
    elif rtype == "script_mtu":
        iface = str(getattr(rec, "interface", ""))
        mtu = int(getattr(rec, "mtu_bytes", 0))
        val = Val(mtu, Src(file, line, f"ip link set dev {iface} mtu {mtu}"))
        dev.host_interfaces[iface] = val
        _port(dev, iface).mtu_bytes = val
    elif rtype == "script_roce_tos":
        marked = int(getattr(rec, "dscp", 0))
        tos = getattr(rec, "tos", None)
        where = f"{getattr(rec, 'via', 'script')} {getattr(rec, 'device', None) or ''}".strip()
        dev.host_dscp.append(Val(marked, Src(file, line, f"{where}: ToS {tos} = DSCP {marked}")))
    elif kind in ("rdma-traffic-class", "cma-roce-tos"):
        dscp = getattr(rec, "dscp", None)
        if isinstance(dscp, int):
            tos = getattr(rec, "tos", None)
            where = getattr(rec, "device", None) or kind
            text = f"{where}: ToS {tos} = DSCP {dscp}" if tos is not None else f"DSCP {dscp}"
            dev.host_dscp.append(Val(dscp, Src(file, line, text)))


def _apply_script_qos(dev: ObservedDevice, file: str, rec: Record) -> None:
    """One ``mlnx_qos`` line of a script: trust, PFC priorities, DSCP → priority entries."""
    iface = getattr(rec, "interface", None) or "nic"
    v = _port(dev, iface)
    text = str(getattr(rec, "text", "") or "mlnx_qos")
    src = Src(file, rec.line, text)
    trust = getattr(rec, "trust", None)
    if trust:
        v.trust = Val(str(trust), src)
    pfc = getattr(rec, "pfc_priorities", None)
    if pfc is not None:
        v.pfc_priorities = Val(tuple(sorted(pfc)), src)
    added: dict[int, int] = dict(getattr(rec, "dscp_set", None) or {})
    deleted: list[int] = list(getattr(rec, "dscp_deleted", None) or [])
    flush = bool(getattr(rec, "dscp_flush", False))
    if added or deleted or flush:
        current = {} if flush or v.dscp_to_tc is None else dict(v.dscp_to_tc.value)
        for dscp in deleted:
            current.pop(dscp, None)
        current.update(added)
        v.dscp_to_tc = Val(dict(sorted(current.items())), src)
