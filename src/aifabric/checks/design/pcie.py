"""S9: a NIC must not be faster than the PCIe link that feeds it.

For each NIC: ``link gen = min(slot gen, card gen)``, ``lanes = min(slot lanes, card lanes)``;
``effective = GT/s x lanes x encoding / 8 x MPS/(MPS + TLP overhead)`` GB/s per direction
(catalog ``pcie``); demand = sum of configured port speeds (capped by the card's aggregate when
the catalog gives one). NICs with the same figures are reported as one finding.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from aifabric.catalog import Catalog, PcieGenSpec
from aifabric.checks.design._util import some
from aifabric.checks.registry import CheckContext, metadata, register
from aifabric.findings import Finding
from aifabric.units import format_gbps

__all__ = ["pcie_figures"]


def pcie_figures(spec: PcieGenSpec, lanes: int) -> dict[str, float]:
    """Raw and effective per-direction bandwidth of a PCIe link (GB/s and Gb/s)."""
    raw = spec.raw_GBps(lanes)
    eff = spec.effective_GBps(lanes)
    return {
        "raw_GBps": round(raw, 2),
        "effective_GBps": round(eff, 2),
        "effective_Gbps": round(eff * 8, 1),
    }


def _needed_gen(catalog: Catalog, lanes: int, demand_gbps: float) -> int | None:
    for gen in sorted(catalog.pcie):
        if catalog.pcie[gen].effective_GBps(lanes) * 8 >= demand_gbps:
            return gen
    return None


@register("design.nic-pcie-bandwidth")
def nic_pcie_bandwidth(ctx: CheckContext) -> Iterator[Finding]:
    meta = metadata()["design.nic-pcie-bandwidth"]
    catalog = ctx.catalog
    groups: dict[tuple[int, int, float, str | None, int, int], list[str]] = defaultdict(list)
    unknown_models: set[str] = set()
    for server in ctx.fabric.servers:
        for nic in server.nics:
            gen, lanes = nic.pcie_gen, nic.pcie_lanes
            demand = nic.total_gbps
            if nic.model is not None:
                card = catalog.nics.get(nic.model)
                if card is None:
                    unknown_models.add(nic.model)
                else:
                    gen, lanes = min(gen, card.pcie_gen), min(lanes, card.pcie_lanes)
                    if card.total_gbps is not None:
                        demand = min(demand, card.total_gbps)
            groups[(gen, lanes, demand, nic.model, nic.pcie_gen, nic.pcie_lanes)].append(
                f"{server.name}:{nic.name}"
            )
    for (gen, lanes, demand, model, slot_gen, slot_lanes), names in sorted(groups.items()):
        spec = catalog.pcie.get(gen)
        if spec is None:
            continue
        fig = pcie_figures(spec, lanes)
        if fig["effective_Gbps"] >= demand:
            continue
        need = _needed_gen(catalog, lanes, demand)
        need_text = f"PCIe {need}.0 x{lanes}" if need else f"more than x{lanes} lanes"
        limited_by = ""
        if model is not None and (gen, lanes) != (slot_gen, slot_lanes):
            limited_by = f" ({model} runs at most PCIe {gen}.0 x{lanes})"
        nccl = (
            f" NCCL's topology model assumes {spec.nccl_model_x16_GBps:g} GB/s for x16."
            if spec.nccl_model_x16_GBps and lanes == 16
            else ""
        )
        explanation = (
            f"PCIe {gen}.0 x{lanes}: {spec.transfer_rate_GTps:g} GT/s x {lanes} lanes x "
            f"{spec.encoding} ({spec.encoding_efficiency:.4g}) / 8 = {fig['raw_GBps']:g} GB/s raw "
            f"per direction; after TLP overhead ({spec.tlp_overhead_bytes} B per 256-byte "
            f"payload) about {fig['effective_GBps']:g} GB/s = {fig['effective_Gbps']:g} Gb/s of "
            f"data.{nccl} The NIC's ports need {format_gbps(demand)} = {demand / 8:g} GB/s, so "
            f"the slot caps it at about {fig['effective_GBps'] / (demand / 8):.0%} of line rate "
            "and the extra lanes it takes are wasted (S9: PCIe 4 -> 200G NIC, PCIe 5 -> 400G "
            "NIC). The seed quotes raw figures rounded up (32 and 64 GB/s); the usable figures "
            f"are lower. Catalog source: {' '.join(spec.source.split())}."
        )
        yield meta.finding(
            target=f"{some(names)} ({len(names)} NIC{'s' if len(names) > 1 else ''})",
            message=(
                f"{format_gbps(demand)} NIC on PCIe {gen}.0 x{lanes}{limited_by}: the slot "
                f"carries about {fig['effective_Gbps']:g} Gb/s"
            ),
            expected=need_text,
            actual=f"PCIe {gen}.0 x{lanes} ({fig['effective_GBps']:g} GB/s effective)",
            evidence=[
                f"{n}: {model or 'NIC'} in a PCIe {slot_gen}.0 x{slot_lanes} slot"
                for n in names[:3]
            ],
            explanation=explanation,
            fix=(
                f"put the NIC in a {need_text} slot, or run it at "
                f"{format_gbps(_fits(fig['effective_Gbps']))} so the bus is not the bottleneck"
            ),
            refs=["docs/references.md#pcie"],
        )
    if unknown_models:
        yield meta.finding(
            target=", ".join(sorted(unknown_models)),
            severity="info",
            message="NIC model not in the catalog; its own PCIe limit was not checked",
            explanation="Only the slot generation and width were used for these NICs.",
            fix="add the NIC to a catalog file (--catalog) with its pcie_gen and pcie_lanes",
        )


def _fits(effective_gbps: float) -> float:
    """The fastest common Ethernet speed a link of this effective rate can feed."""
    for speed in (800, 400, 200, 100, 50, 25, 10):
        if speed <= effective_gbps:
            return speed
    return 10
