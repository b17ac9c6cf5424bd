"""Render a GPU server's side of the lossless intent (dialect ``host``).

Four files per server, under ``<server>/``:

* ``roce-host.sh`` (evidence kind ``host-roce-script``, read back by verify): a bash script with
  one block per RoCE NIC port: ``mlnx_qos --trust``, ``--dscp2prio set,D,P`` for every entry of
  ``qos.dscp_to_tc`` (a separate call: ``mlnx_qos`` refuses ``--trust`` with ``--dscp2prio``),
  ``--pfc`` with only ``qos.pfc_priorities`` enabled, ``cma_roce_tos -t`` and the mlx5
  ``traffic_class`` with ToS ``qos.nccl_ib_tc`` (DSCP << 2), ``ip link set dev IF mtu N``, then
  the sysctls. The fabric's NIC ``name`` is the RDMA device, its port ``name`` the netdev
  (:class:`~aifabric.dialects.intent.HostNicIntent`).
* ``netplan-roce.yaml`` (not read back): the MTU, persistent, as a netplan drop-in that only
  amends interfaces the server's own netplan files define.
* ``sysctl-roce.conf`` (not read back): :data:`SYSCTLS`, each with its reason and source.
* ``nccl.env`` (kind ``nccl-env``): NCCL_IB_TC, NCCL_IB_GID_INDEX (:data:`GID_INDEX`),
  NCCL_IB_HCA (``=`` exact names), NCCL_SOCKET_IFNAME, NCCL_IB_TIMEOUT / NCCL_IB_RETRY_CNT
  (:data:`IB_TIMEOUT`, :data:`IB_RETRY_CNT`).

NCCL_SOCKET_IFNAME names the server's frontend ports when the fabric file links any (a port of
the server that is not a RoCE/IB NIC port and not a management link: the core intent carries no
host-port ``purpose``, so this is inferred), else its RoCE interfaces, which then carry NCCL's
bootstrap too.

Change plans (``--diff``) are unified diffs per file (:func:`plan_unified`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from aifabric.dialects.intent import DeviceIntent
from aifabric.dialects.render import ChangePlan, RenderedFile, plan_unified, template_env

__all__ = [
    "DIALECT",
    "FOLLOWS",
    "GID_INDEX",
    "IB_RETRY_CNT",
    "IB_TIMEOUT",
    "SYSCTLS",
    "HostDialect",
    "Sysctl",
]

FOLLOWS: tuple[str, ...] = (
    "https://enterprise-support.nvidia.com/s/article/mlnx-qos",
    "https://github.com/Mellanox/mlnx-tools",
    "https://enterprise-support.nvidia.com/s/article/"
    "lossless-roce-configuration-for-linux-drivers-in-dscp-based-qos-mode",
    "https://www.kernel.org/doc/Documentation/ABI/testing/configfs-rdma_cm",
    "https://man7.org/linux/man-pages/man8/ip-link.8.html",
    "https://netplan.readthedocs.io/en/stable/netplan-yaml/",
    "https://docs.kernel.org/networking/ip-sysctl.html",
    "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html",
)

GID_INDEX = 3
"""The RoCE v2 IPv4 GID of an mlx5 port with one IPv4 address (0/1 are the MAC-derived
link-local v1/v2 GIDs, 2/3 the address as v1/v2); ``aifabric probe`` and diagnose's
fleet-gid-index check confirm it per host."""

IB_TIMEOUT = 22
"""NCCL_IB_TIMEOUT: 4.096 µs x 2^22 = 17.2 s per attempt (S15's value; NCCL's default is 20)."""

IB_RETRY_CNT = 7
"""NCCL_IB_RETRY_CNT: NCCL's default, the largest the 3-bit IB retry count holds."""


@dataclass(frozen=True, slots=True)
class Sysctl:
    """One kernel setting, with why it is set and where that is documented."""

    name: str
    value: str
    why: str
    source: str


SYSCTLS: tuple[Sysctl, ...] = (
    Sysctl(
        "net.ipv4.tcp_ecn",
        "1",
        "TCP sessions of this host (NCCL bootstrap, storage) ask for ECN, so a switch queue that "
        "ECN-marks slows them instead of dropping; the kernel default 2 only answers peers that "
        "ask. The DSCP-based lossless RoCE recipe sets it.",
        "https://docs.kernel.org/networking/ip-sysctl.html (tcp_ecn); "
        "https://enterprise-support.nvidia.com/s/article/"
        "lossless-roce-configuration-for-linux-drivers-in-dscp-based-qos-mode",
    ),
)
"""Settings for every server with RoCE ports."""

_MULTI_PORT_WHY = (
    "{iface} is one of {n} RoCE ports of this server: answer ARP only for the address of the "
    "port asked (arp_ignore 1) and announce only that port's own address (arp_announce 2), so "
    "each RoCE GID, which is IP based, resolves to the port that holds it."
)


def _sysctls(intent: DeviceIntent, netdevs: list[str]) -> list[Sysctl]:
    if intent.transport != "roce" or not netdevs:
        return []
    out = list(SYSCTLS)
    if len(netdevs) > 1:
        src = "https://docs.kernel.org/networking/ip-sysctl.html (arp_ignore, arp_announce)"
        for iface in netdevs:
            why = _MULTI_PORT_WHY.format(iface=iface, n=len(netdevs))
            out.append(Sysctl(f"net.ipv4.conf.{iface}.arp_ignore", "1", why, src))
            out.append(Sysctl(f"net.ipv4.conf.{iface}.arp_announce", "2", why, src))
    return out


@dataclass(frozen=True, slots=True)
class _Port:
    netdev: str
    rdma: str
    mtu: int
    speed: str


def _ports(intent: DeviceIntent) -> list[_Port]:
    """The RoCE NIC ports of the server, in fabric-file order; the MTU is the port's link MTU
    (what verify reads back), else the NIC's."""
    by_name = {p.name: p for p in intent.ports}
    out: list[_Port] = []
    seen: set[str] = set()
    for nic in intent.nics:
        if nic.port in seen:
            continue
        seen.add(nic.port)
        link = by_name.get(nic.port)
        mtu = link.mtu_bytes if link is not None else nic.mtu_bytes
        out.append(_Port(nic.port, nic.device, mtu, f"{nic.speed_gbps:g}"))
    return out


def _socket_ifnames(intent: DeviceIntent, ports: list[_Port]) -> tuple[list[str], str]:
    roce = {p.netdev for p in ports}
    front = [p.name for p in intent.ports if p.name not in roce and p.kind != "management"]
    if front:
        return sorted(dict.fromkeys(front)), "the server's frontend port(s) in the fabric file"
    return [p.netdev for p in ports], (
        "the fabric file links no frontend port, so the RoCE interfaces carry it"
    )


class HostDialect:
    """GPU servers: mlnx_qos / rdma_cm ToS / MTU script, netplan, sysctl, NCCL environment."""

    name = "host"
    title = "GPU server (mlnx_qos, cma_roce_tos, traffic_class, netplan, sysctl, NCCL env)"
    role: Literal["switch", "host"] = "host"
    follows: tuple[str, ...] = FOLLOWS

    def render(self, intent: DeviceIntent) -> list[RenderedFile]:
        """The four files of one server (see the module doc)."""
        env = template_env("aifabric.dialects.host")
        qos = intent.qos
        roce = intent.transport == "roce"
        ports = _ports(intent)
        ifnames, why = _socket_ifnames(intent, ports)
        timeout_s = 4.096e-6 * 2**IB_TIMEOUT
        ctx = {
            "server": intent.name,
            "fabric": intent.fabric,
            "transport": intent.transport,
            "roce": roce,
            "ports": ports if roce else [],
            "trust": qos.trust,
            "dscp2prio": sorted(qos.dscp_to_tc.items()) if qos.trust == "dscp" else [],
            "pfc_priorities": sorted(qos.pfc_priorities),
            "pfc_bits": ",".join("1" if p in qos.pfc_priorities else "0" for p in range(8)),
            "tos": qos.nccl_ib_tc,
            "dscp": qos.roce_dscp,
            "priority": qos.roce_priority,
            "sysctls": _sysctls(intent, [p.netdev for p in ports]),
            "gid_index": GID_INDEX,
            "hca": list(dict.fromkeys(p.rdma for p in ports)),
            "socket_ifnames": ifnames,
            "socket_why": why,
            "ib_timeout": IB_TIMEOUT,
            "retry_cnt": IB_RETRY_CNT,
            "timeout_s": f"{timeout_s:.1f}",
            "total_s": f"{timeout_s * IB_RETRY_CNT:.0f}",
        }
        base = intent.name

        def text(template: str) -> str:
            return env.get_template(template).render(**ctx)

        return [
            RenderedFile(base, f"{base}/roce-host.sh", text("roce-host.sh.j2"), "host-roce-script"),
            RenderedFile(base, f"{base}/netplan-roce.yaml", text("netplan-roce.yaml.j2"), None),
            RenderedFile(base, f"{base}/sysctl-roce.conf", text("sysctl-roce.conf.j2"), None),
            RenderedFile(base, f"{base}/nccl.env", text("nccl.env.j2"), "nccl-env"),
        ]

    def plan(self, rendered: RenderedFile, existing: str | None) -> ChangePlan:
        """A unified diff of the whole file."""
        return plan_unified(rendered.device, rendered.path, rendered.text, existing)


DIALECT = HostDialect()
