"""Design: from cluster parameters to a full fabric (devices, port map, media, IP plan).

>>> from aifabric.catalog import load_catalog
>>> from aifabric.model import DesignSpec
>>> spec = DesignSpec(gpus=1024, gpus_per_server=8, nic_speed_gbps=200, switch_ports=64,
...                   switch_speed_gbps=400, layout="tor")
>>> result = design_fabric(spec, load_catalog())
>>> (result.capacity.servers, result.capacity.leaves, result.capacity.spines)
(128, 16, 8)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from aifabric.bulk import gc_paused
from aifabric.catalog import Catalog
from aifabric.design.addressing import AddressPlan, choose_scheme
from aifabric.design.bom import BomItem, bill_of_materials
from aifabric.design.clos import (
    Hardware,
    build_wiring,
    host_links_total,
    switch_links_total,
    switches_total,
)
from aifabric.design.sizing import FabricPlan, plan_fabric
from aifabric.errors import DesignError
from aifabric.explain import Explained
from aifabric.model import DesignDocument, DesignSpec, Fabric, read_document
from aifabric.topology.capacity import Capacity, fabric_capacity

__all__ = [
    "DesignResult",
    "bill_of_materials",
    "design_fabric",
    "load_fabric",
    "resolve_hardware",
]

_GENERIC_BREAKOUTS = (1, 2, 4, 8)


def resolve_hardware(spec: DesignSpec, catalog: Catalog) -> Hardware:
    """Switch and NIC facts from the catalog (or the generic flags), with the breakout factor."""
    if spec.switch_model is not None:
        sw = catalog.switch(spec.switch_model)
        for given, have, what in (
            (spec.switch_ports, sw.ports, "ports"),
            (spec.switch_speed_gbps, sw.port_speed_gbps, "port speed"),
        ):
            if given is not None and given != have:
                raise DesignError(
                    f"{sw.name} has {sw.ports} ports at {sw.port_speed_gbps:g}G; --switch-"
                    f"{'ports' if what == 'ports' else 'speed'} {given:g} contradicts its {what} "
                    "(drop the flag, or add your own model with --catalog FILE)"
                )
        ports, port_gbps = sw.ports, sw.port_speed_gbps
        switch_class, buffer_bytes, model = sw.switch_class, sw.buffer_bytes, sw.name
        switch_ff = sw.form_factor
        modes = {(b.count, b.speed_gbps) for b in sw.breakouts}
    else:
        assert spec.switch_ports is not None and spec.switch_speed_gbps is not None
        ports, port_gbps = spec.switch_ports, spec.switch_speed_gbps
        switch_class, buffer_bytes, model = "datacenter", None, None
        switch_ff = None
        modes = None
    nic_ff = None
    if spec.nic_model is not None:
        nic = catalog.nic(spec.nic_model)
        if spec.nic_speed_gbps not in nic.speeds_gbps:
            speeds = ", ".join(f"{s:g}G" for s in nic.speeds_gbps)
            raise DesignError(
                f"{nic.name} does not run at {spec.nic_speed_gbps:g}G (it supports {speeds})"
            )
        if spec.nic_ports > nic.ports:
            raise DesignError(f"{nic.name} has {nic.ports} port(s); --nic-ports {spec.nic_ports}")
        nic_ff = nic.form_factor
    if spec.gpu_model is not None:
        catalog.gpu(spec.gpu_model)
    s = spec.nic_speed_gbps
    if s > port_gbps:
        raise DesignError(f"NIC speed {s:g}G is faster than the {port_gbps:g}G switch ports")
    ratio = port_gbps / s
    breakout = round(ratio)
    if abs(ratio - breakout) > 1e-9 or breakout not in _GENERIC_BREAKOUTS:
        raise DesignError(
            f"a {port_gbps:g}G switch port cannot be split into {s:g}G sub-ports "
            f"(breakouts are 2, 4 or 8 equal lanes groups)"
        )
    if breakout > 1 and modes is not None and (breakout, s) not in modes:
        known = ", ".join(f"{c}x{v:g}G" for c, v in sorted(modes)) or "none"
        raise DesignError(f"{model} does not list a {breakout}x{s:g}G breakout (it lists: {known})")
    return Hardware(
        switch_model=model,
        switch_class=switch_class,
        ports=ports,
        port_gbps=port_gbps,
        buffer_bytes=buffer_bytes,
        nic_model=spec.nic_model,
        nic_form_factor=nic_ff,
        switch_form_factor=switch_ff,
        breakout=breakout,
    )


@dataclass
class DesignResult:
    """What ``aifabric design`` computed."""

    spec: DesignSpec
    fabric: Fabric
    plan: FabricPlan
    capacity: Capacity
    bom: list[BomItem]
    explain: list[Explained] = field(default_factory=list)


def design_fabric(spec: DesignSpec, catalog: Catalog) -> DesignResult:
    """Size, wire, address and cost a fabric for ``spec``."""
    with gc_paused():
        return _design(spec, catalog)


def _design(spec: DesignSpec, catalog: Catalog) -> DesignResult:
    hw = resolve_hardware(spec, catalog)
    per_plane = spec.host_ports_per_server // spec.planes
    reserve = 0
    if spec.sites > 1:
        reserve = (spec.sites - 1) * spec.inter_site_links_per_spine
    plan = plan_fabric(
        servers=spec.servers // spec.sites,
        host_ports_per_server=per_plane,
        nic_gbps=spec.nic_speed_gbps,
        ports=hw.ports,
        port_gbps=hw.port_gbps,
        breakout=hw.breakout,
        oversubscription=spec.oversubscription,
        spine_oversubscription=spec.spine_oversubscription,
        layout=spec.layout,
        servers_per_su=spec.servers_per_su,
        tiers=spec.tiers,
        min_spines=spec.min_spines,
        top_free_ports=reserve,
    )
    host_per_plane = spec.servers * per_plane
    scheme, why = choose_scheme(spec.ip_plan, host_per_plane, spec.l2_max_hosts, spec.transport)
    addresses = AddressPlan(
        scheme=scheme,
        rationale=why,
        planes=spec.planes,
        host_ports_per_plane=host_per_plane,
        host_links=host_links_total(spec),
        switch_links=switch_links_total(spec, plan),
        switches=switches_total(spec, plan),
    )
    wiring = build_wiring(spec, plan, hw, catalog, addresses)
    fabric = Fabric(
        name=spec.name,
        description=(
            f"{spec.gpus} GPUs, {spec.servers} servers x {spec.host_ports_per_server} x "
            f"{spec.nic_speed_gbps:g}G, {spec.layout} layout, designed by aifabric"
        ),
        transport=spec.transport,
        sites=tuple(wiring.sites),
        pods=tuple(wiring.pods),
        servers=tuple(wiring.servers),
        switches=tuple(wiring.switches),
        links=tuple(wiring.links),
        addressing=addresses.record(),
        design=spec,
    )
    capacity = fabric_capacity(fabric)
    bom = bill_of_materials(
        fabric, catalog, spares_percent=spec.spares_percent, spare_switches=spec.spare_switches
    )
    explain = [
        Explained(
            quantity="servers",
            value=spec.servers,
            formula="S = GPUs / GPUs per server",
            inputs={"GPUs": spec.gpus, "GPUs per server": spec.gpus_per_server},
            sources=["S7"],
        ),
        Explained(
            quantity="host ports per server",
            value=spec.host_ports_per_server,
            formula="NICs x ports per NIC",
            inputs={"NICs": spec.nics, "ports per NIC": spec.nic_ports},
        ),
        Explained(
            quantity="breakout factor",
            value=hw.breakout,
            formula="b = p / s",
            inputs={"p_Gbps": hw.port_gbps, "s_Gbps": spec.nic_speed_gbps},
            sources=["S7"],
            note="each leaf down port carries b NIC ports",
        ),
    ]
    if spec.planes > 1 or spec.sites > 1:
        explain.append(
            Explained(
                quantity="independent fabrics",
                value=spec.planes * spec.sites,
                formula="planes x sites (each sized below)",
                inputs={"planes": spec.planes, "sites": spec.sites},
                note="host port h of a server belongs to plane h mod planes",
            )
        )
    explain.extend(plan.explain)
    explain.extend(capacity.explain)
    explain.append(
        Explained(
            quantity="IP plan",
            value=scheme,
            formula="see rationale",
            sources=["S19", "https://www.rfc-editor.org/rfc/rfc7938"],
            note=why,
        )
    )
    return DesignResult(
        spec=spec, fabric=fabric, plan=plan, capacity=capacity, bom=bom, explain=explain
    )


def load_fabric(path: str | Path, catalog: Catalog) -> Fabric:
    """Read a fabric file; a design document (only ``design:``) is designed on the fly."""
    doc = read_document(path)
    if isinstance(doc, Fabric):
        return doc
    return expand_document(doc, catalog)


def expand_document(doc: DesignDocument, catalog: Catalog) -> Fabric:
    """The full fabric of a design document, with its workload, QoS and description applied."""
    fabric = design_fabric(doc.design, catalog).fabric
    update: dict[str, object] = {}
    if doc.workload is not None:
        update["workload"] = doc.workload
    if doc.qos is not None:
        update["qos"] = doc.qos
    if doc.description is not None:
        update["description"] = doc.description
    if doc.name is not None:
        update["name"] = doc.name
    return fabric.model_copy(update=update) if update else fabric
