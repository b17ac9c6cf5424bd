"""From a fabric file to the platform a collective runs on (S6, S8, S9, S11).

:func:`platform_from_fabric` reads the servers (GPU model, GPUs, data NICs, their PCIe slots),
the transport, the host-link MTU and the topology, and works out what the collective's traffic
crosses:

* the **tier**: a job whose servers all reach the same leaf on each rail (one ToR, or one
  rail-optimized scalable unit) never leaves the leaves; otherwise it crosses the spines (and the
  super-spines when its servers sit in different pods);
* the **oversubscription** of each tier crossed (``topology/capacity.py``): traffic through a
  ``r:1`` leaf gets ``1/r`` of its NIC rate at most;
* the expected **ECMP collision penalty** (balls into bins): a synchronous collective finishes
  at its slowest flow; ``k`` flows hashed onto ``m`` uplinks put
  ``E[max load]`` flows on the busiest one where ``k/m`` was the fair share, so the collective
  gets ``(k/m) / E[max load]`` of the uplink capacity. It applies to RoCE with hash-based ECMP
  (``load_balance="ecmp"``, the default for RoCE); InfiniBand's static fat-tree routing and
  adaptive routing / packet spraying (``"adaptive"``) are treated as collision-free;
* the **host path**: ``gdr: false`` on a data NIC means GPUDirect RDMA is off (traffic staged
  through host memory), and a NIC listing its local ``gpus`` shares their PCIe switch; the NIC
  model's PCI vendor picks NCCL's socket-transport defaults.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Literal

from aifabric.catalog import Catalog
from aifabric.errors import CatalogError, InputError
from aifabric.explain import Explained
from aifabric.model import Fabric
from aifabric.model.device import Server
from aifabric.model.fabric import fabric_index
from aifabric.model.link import Link
from aifabric.perf.ecmp import ecmp_expected_max, ecmp_factor
from aifabric.perf.estimate import Efficiency, FabricFactor, Platform
from aifabric.topology.capacity import fabric_capacity

__all__ = ["LoadBalance", "ecmp_expected_max", "ecmp_factor", "platform_from_fabric"]

LoadBalance = Literal["auto", "ecmp", "adaptive"]
DATA_PURPOSES = ("roce", "ib")
REF_ECMP = (
    "balls into bins: Raab & Steger, 'Balls into Bins - A Simple and Tight Analysis', "
    "RANDOM 1998, https://doi.org/10.1007/3-540-49543-6_13 (E[max load] of k flows on m uplinks)"
)


def _data_ports(server: Server) -> list[tuple[int, int, float]]:
    """(nic index, port index, speed) of the ports collectives use: the RDMA data ports, or the
    front-end ports when a server has none (NCCL's socket transport then runs over them, S5)."""
    for purposes in (DATA_PURPOSES, ("frontend",)):
        out = [
            (i, j, port.speed_gbps)
            for i, nic in enumerate(server.nics)
            for j, port in enumerate(nic.ports)
            if port.purpose in purposes
        ]
        if out:
            return out
    return []


def platform_from_fabric(
    fabric: Fabric,
    catalog: Catalog,
    *,
    nodes: int | None = None,
    gpu: str | None = None,
    efficiency: Efficiency | None = None,
    nccl_release: str | None = None,
    load_balance: LoadBalance = "auto",
) -> Platform:
    """The platform of a job over ``nodes`` servers of ``fabric`` (default: all GPU servers)."""
    servers = [s for s in fabric.servers if s.gpus > 0]
    if not servers:
        raise InputError(f"fabric {fabric.name!r} has no GPU servers to estimate on")
    shape = Counter((s.gpu_model, s.gpus, len(_data_ports(s))) for s in servers).most_common(1)[0][
        0
    ]
    same = [s for s in servers if (s.gpu_model, s.gpus, len(_data_ports(s))) == shape]
    model = gpu or shape[0]
    if model is None:
        raise InputError(
            f"fabric {fabric.name!r}: servers have no gpu_model; give --gpu (e.g. H100)"
        )
    gpu_spec = catalog.gpu(model)
    n = nodes or len(same)
    if n > len(same):
        raise InputError(f"--nodes {n}: the fabric has {len(same)} servers of that shape")
    job = same[:n]
    first = job[0]
    ports = _data_ports(first)
    nic_speed = max((sp for _, _, sp in ports), default=0.0)
    nic = first.nics[ports[0][0]] if ports else None
    idx = fabric_index(fabric)
    mtus = [
        link.mtu_bytes for s in job for link in idx.links_of.get(s.name, []) if link.kind == "host"
    ]
    eth_mtu = min(mtus) if mtus else 9000
    transport = fabric.transport
    factor = _fabric_factor(fabric, job, transport, load_balance, nic_speed, len(ports))
    model_nic = nic.model if nic and nic.model else None
    label = f"{model_nic} {nic_speed:g}G" if model_nic else f"{nic_speed:g}G NIC"
    data_nics = [first.nics[i] for i in sorted({i for i, _, _ in ports})]
    vendor = _nic_vendor(catalog, model_nic)
    shared = True if data_nics and all(n.gpus for n in data_nics) else None
    return Platform(
        gpu=gpu_spec,
        nodes=n,
        gpus_per_node=first.gpus,
        nics_per_node=len(ports),
        nic_speed_gbps=nic_speed,
        transport=transport,
        nic_pcie=catalog.pcie_gen(nic.pcie_gen if nic else 5),
        nic_pcie_lanes=nic.pcie_lanes if nic else 16,
        gpu_pcie=catalog.pcie_gen(gpu_spec.pcie_gen),
        eth_mtu=eth_mtu,
        nccl_release=nccl_release,
        efficiency=efficiency or Efficiency(),
        fabric=factor,
        nic_label=label,
        gdr=not any(n.gdr is False for n in data_nics),
        shared_pcie_switch=shared,
        nic_pci_vendor=vendor,
    )


def _nic_vendor(catalog: Catalog, model: str | None) -> str | None:
    """The catalog NIC's PCI vendor id (None when the model is not named or not catalogued)."""
    if model is None:
        return None
    try:
        return catalog.nic(model).pci_vendor_id
    except CatalogError:
        return None


def _fabric_factor(
    fabric: Fabric,
    job: list[Server],
    transport: str,
    load_balance: LoadBalance,
    nic_speed: float,
    ports_per_server: int,
) -> FabricFactor:
    if len(job) <= 1:
        return FabricFactor(1.0, (), "none")
    idx = fabric_index(fabric)
    switches = {s.name: s for s in fabric.switches}

    def far_end(device: str, link: Link) -> str:
        return link.b.device if link.a.device == device else link.a.device

    # leaves each server reaches, per rail (host-port order)
    leaves_per_rail: dict[int, set[str]] = defaultdict(set)
    servers_on_leaf: Counter[str] = Counter()
    ports_on_leaf: Counter[str] = Counter()
    for s in job:
        seen: set[str] = set()
        host_links = [lk for lk in idx.links_of.get(s.name, []) if lk.kind == "host"]
        for k, link in enumerate(host_links):
            leaf = far_end(s.name, link)
            if leaf in switches:
                leaves_per_rail[k].add(leaf)
                ports_on_leaf[leaf] += 1
                if leaf not in seen:
                    servers_on_leaf[leaf] += 1
                    seen.add(leaf)
    pods = {s.pod for s in job}
    if not any(len(v) > 1 for v in leaves_per_rail.values()):
        step = Explained.fast(
            quantity="tier crossed",
            value="leaf only",
            formula="every server of the job reaches the same leaf on each rail",
            inputs={"servers": len(job)},
            sources=["S6", "S8"],
            note="traffic stays inside the leaves: no oversubscription or ECMP applies",
        )
        return FabricFactor(1.0, (step,), "leaf")
    cap = fabric_capacity(fabric)
    crosses = "super-spine" if len(pods) > 1 and cap.super_spines > 0 else "spine"
    busiest = max(ports_on_leaf, key=lambda name: ports_on_leaf[name])
    uplinks = [
        lk
        for lk in idx.links_of.get(busiest, [])
        if lk.kind == "fabric"
        and far_end(busiest, lk) in switches
        and switches[far_end(busiest, lk)].role != "leaf"
    ]
    m = len(uplinks)
    up_speed = min((lk.speed_gbps for lk in uplinks), default=nic_speed)
    lb = load_balance
    if lb == "auto":
        lb = "ecmp" if transport == "roce" else "adaptive"
    rail = ports_on_leaf[busiest] <= servers_on_leaf[busiest]  # one port per server: a rail leaf
    steps = (
        Explained.fast(
            quantity="tier crossed",
            value=crosses,
            formula="servers of the job reach different leaves: some hops cross the spines",
            inputs={
                "servers": len(job),
                "pods": len(pods),
                "busiest leaf": busiest,
                "job ports on it": ports_on_leaf[busiest],
                "uplinks": m,
                "uplink_gbps": up_speed,
                "load balance": lb,
            },
            sources=["S6", "S8", REF_ECMP],
        ),
    )
    return FabricFactor(
        1.0,
        steps,
        crosses,
        uplinks=m,
        uplink_GBps=up_speed / 8.0,
        leaf_ports=ports_on_leaf[busiest],
        rail=rail,
        ecmp=lb == "ecmp",
    )
