"""What ``aifabric estimate`` was given, and the platform it estimates on.

:class:`EstimateArgs` holds the command line as typed (``None`` where a flag was left out);
:func:`prepare` turns it into a :class:`Prepared`: the collective, the platform (from a fabric
file or from flags, every default it had to assume listed), the calibration when results were
given, and the fabric file's workload. The three modes of the command
(:mod:`aifabric.cli.estimate_modes`) start from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from aifabric.catalog import Catalog
from aifabric.cli.common import unit_option
from aifabric.design import load_fabric
from aifabric.errors import InputError
from aifabric.evidence import parse_file
from aifabric.evidence.nccl_tests import NcclTestsHeader, NcclTestsRow
from aifabric.explain import Explained
from aifabric.model.workload import Workload
from aifabric.perf.calibrate import Calibration, Measurement, calibrate
from aifabric.perf.collectives import Collective, normalize_collective
from aifabric.perf.estimate import Platform
from aifabric.perf.fabric import LoadBalance, platform_from_fabric
from aifabric.units import parse_speed_gbps

__all__ = [
    "DEFAULTS",
    "EstimateArgs",
    "GradDtype",
    "Prepared",
    "dtype_of",
    "platform_from_flags",
    "prepare",
]

GradDtype = Literal["fp32", "bf16", "fp16", "fp8"]

DEFAULTS: dict[str, Any] = {
    "nodes": 1,
    "gpu": "H100",
    "gpus_per_node": 8,
    "nic_speed": "400G",
    "transport": "roce",
    "mtu": 9000,
    "pcie_gen": 5,
}
"""What a platform given by flags assumes for a flag left out (each one is reported)."""


@dataclass(frozen=True, slots=True)
class EstimateArgs:
    """The command line of ``aifabric estimate`` (``None``: the flag was not given)."""

    fabric_file: Path | None = None
    collective: str = "allreduce"
    nodes: int | None = None
    gpus_per_node: int | None = None
    gpu: str | None = None
    nic: str | None = None
    nics_per_node: int | None = None
    nic_speed: str | None = None
    transport: str | None = None
    mtu: int | None = None
    pcie_gen: int | None = None
    no_gdr: bool = False
    socket_nthreads: int | None = None
    nsocks_perthread: int | None = None
    tcp_stream_speed: str | None = None
    size: str | None = None
    min_bytes: str = "8"
    max_bytes: str = "8G"
    factor: float = 2.0
    nccl_version: str | None = None
    cpu: str = "intel"
    sharp: bool = False
    load_balance: str = "auto"
    algo: str | None = None
    proto: str | None = None
    calibrate_file: Path | None = None
    params: str | None = None
    dtype: str | None = None
    dp: int | None = None
    tp: int | None = None
    pp: int | None = None
    ep: int | None = None
    overlap: float = 0.0
    zero: bool = False
    hidden: int | None = None
    layers: int | None = None
    seq_len: int | None = None
    micro_batch: int | None = None
    micro_batches: int | None = None
    moe_layers: int | None = None
    top_k: int = 1
    inference: bool = False
    batch: int | None = None
    use_workload: bool = False


@dataclass(frozen=True, slots=True)
class Prepared:
    """The platform and inputs every mode starts from."""

    collective: Collective
    platform: Platform
    assumed: tuple[str, ...]
    """Defaults used for flags that were left out, as ``--flag value`` (shown, never silent)."""
    calibration: Calibration | None = None
    fabric_workload: Workload | None = None
    extra_assumed: list[str] = field(default_factory=list)

    def all_assumed(self) -> list[str]:
        return [*self.assumed, *self.extra_assumed]

    def assume(self, text: str) -> None:
        """Record one more default a mode had to assume (workload flags)."""
        self.extra_assumed.append(text)

    def assumed_step(self) -> Explained | None:
        """The assumed defaults as one explanation step (None when nothing was assumed)."""
        items = self.all_assumed()
        if not items:
            return None
        return Explained.fast(
            quantity="assumed defaults",
            value=len(items),
            formula="flags left out take these values; give them to change the estimate",
            inputs={f"assumed_{i + 1}": text for i, text in enumerate(items)},
            sources=["aifabric estimate --help"],
        )


def dtype_of(value: str) -> GradDtype:
    """``--dtype`` as one of the gradient dtypes."""
    if value == "fp32":
        return "fp32"
    if value == "fp16":
        return "fp16"
    if value == "fp8":
        return "fp8"
    if value == "bf16":
        return "bf16"
    raise InputError(f"--dtype {value!r}: expected fp32, bf16, fp16 or fp8")


def platform_from_flags(
    cat: Catalog,
    *,
    nodes: int | None,
    gpus_per_node: int | None,
    gpu: str | None,
    nics_per_node: int | None,
    nic_speed: str | None,
    transport: str | None,
    mtu: int | None,
    pcie_gen: int | None,
    assumed: list[str],
    nic: str | None = None,
) -> Platform:
    """A platform from command-line flags; what the user left out is assumed and listed.

    ``nic`` names a catalog NIC: its fastest port speed, PCIe slot and PCI vendor stand in for
    ``--nic-speed`` and ``--pcie-gen`` when those are not given."""

    def pick(value: Any, name: str, shown: Any = None) -> Any:
        if value is None:
            assumed.append(f"--{name.replace('_', '-')} {shown or DEFAULTS[name]}")
            return DEFAULTS[name]
        return value

    nic_spec = cat.nic(nic) if nic else None
    gpu_spec = cat.gpu(pick(gpu, "gpu"))
    g = int(pick(gpus_per_node, "gpus_per_node"))
    n = int(pick(nodes, "nodes"))
    nics = nics_per_node if nics_per_node is not None else g
    if nics_per_node is None and n > 1:
        assumed.append(f"--nics-per-node {g} (one NIC per GPU)")
    if nic_spec is not None and nic_speed is None:
        nic_speed = f"{nic_spec.max_speed_gbps:g}G"
    speed = unit_option(parse_speed_gbps, pick(nic_speed, "nic_speed"), "--nic-speed") or 400.0
    tr = pick(transport, "transport")
    if nic_spec is not None and pcie_gen is None:
        pcie_gen = nic_spec.pcie_gen
    gen = int(pick(pcie_gen, "pcie_gen", "5 (NIC slots)"))
    eth_mtu = int(pick(mtu, "mtu"))
    return Platform(
        gpu=gpu_spec,
        nodes=n,
        gpus_per_node=g,
        nics_per_node=nics,
        nic_speed_gbps=speed,
        transport=tr,
        nic_pcie=cat.pcie_gen(gen),
        nic_pcie_lanes=nic_spec.pcie_lanes if nic_spec is not None else 16,
        gpu_pcie=cat.pcie_gen(gpu_spec.pcie_gen),
        eth_mtu=eth_mtu,
        nic_label=f"{nic_spec.name} {speed:g}G" if nic_spec is not None else "",
        nic_pci_vendor=nic_spec.pci_vendor_id if nic_spec is not None else None,
    )


def _measurements(path: Path) -> tuple[Collective | None, int, list[Measurement]]:
    """nccl-tests results (any format the parser reads) → collective, ranks, out-of-place times."""
    result = parse_file(path, "nccl-tests")
    headers = [r for r in result.records if isinstance(r, NcclTestsHeader)]
    rows = [r for r in result.records if isinstance(r, NcclTestsRow)]
    if not rows:
        raise InputError(f"{path}: no nccl-tests result rows to calibrate on")
    coll = normalize_collective(headers[0].collective or "") if headers else None
    ranks = headers[0].ranks if headers else 0
    first_test = rows[0].test
    out: list[Measurement] = []
    for r in rows:
        t = r.oop_time_us if r.oop_time_us is not None else r.ip_time_us
        if r.test == first_test and t is not None and t > 0:
            out.append(Measurement(r.size_bytes, t, r.line))
    return coll, ranks, out


def _lb(value: str) -> LoadBalance:
    if value == "ecmp":
        return "ecmp"
    if value == "adaptive":
        return "adaptive"
    if value == "auto":
        return "auto"
    raise InputError(f"--load-balance {value!r}: expected auto, ecmp or adaptive")


_ALGO_FLAG = {
    "ring": "ring",
    "tree": "tree",
    "nvls": "nvls",
    "nvlstree": "nvls_tree",
    "collnetdirect": "collnet_direct",
    "collnetchain": "collnet_chain",
    "collnet": "collnet_direct",
    "pat": "pat",
}
_PROTO_FLAG = {"ll": "LL", "ll128": "LL128", "simple": "Simple"}


def masks(algo: str | None, proto: str | None) -> frozenset[str]:
    """NCCL_ALGO / NCCL_PROTO style lists (``^`` excludes) → the set of disabled names."""
    disabled: set[str] = set()
    for text, table, flag in ((algo, _ALGO_FLAG, "--algo"), (proto, _PROTO_FLAG, "--proto")):
        if not text:
            continue
        exclude = text.startswith("^")
        names = set()
        for item in text.lstrip("^").split(","):
            key = item.strip().lower().replace("_", "")
            if key not in table:
                raise InputError(f"{flag} {item!r}: expected one of {', '.join(sorted(table))}")
            names.add(table[key])
        universe = set(table.values())
        disabled |= names if exclude else universe - names
    return frozenset(disabled)


def prepare(cat: Catalog, args: EstimateArgs) -> Prepared:
    """The collective, the platform (calibrated when results were given) and what was assumed."""
    coll: Collective = normalize_collective(args.collective) or "allreduce"
    nodes, gpus_per_node = args.nodes, args.gpus_per_node
    measured: list[Measurement] = []
    measured_nodes: int | None = None
    if args.calibrate_file is not None:
        m_coll, m_ranks, measured = _measurements(args.calibrate_file)
        if m_coll is not None and m_coll != coll:
            if args.collective != "allreduce":
                raise InputError(
                    f"--calibrate {args.calibrate_file}: results are {m_coll}, not {coll}"
                )
            coll = m_coll
        if m_ranks:
            g = min(gpus_per_node or 8, m_ranks)
            if m_ranks % g:
                raise InputError(
                    f"--calibrate {args.calibrate_file}: {m_ranks} ranks is not a multiple of "
                    f"{g} GPUs per node; give --gpus-per-node"
                )
            measured_nodes, gpus_per_node = m_ranks // g, g
            nodes = nodes or measured_nodes
    if args.cpu not in ("intel", "amd", "other"):
        raise InputError(f"--cpu {args.cpu!r}: expected intel, amd or other")
    lb = _lb(args.load_balance)
    assumed: list[str] = []
    fab_workload: Workload | None = None
    if args.fabric_file is not None:
        fab = load_fabric(args.fabric_file, cat)
        fab_workload = fab.workload
        p = platform_from_fabric(fab, cat, nodes=nodes, gpu=args.gpu, load_balance=lb)
    else:
        p = platform_from_flags(
            cat,
            nodes=nodes,
            gpus_per_node=gpus_per_node,
            gpu=args.gpu,
            nics_per_node=args.nics_per_node,
            nic_speed=args.nic_speed,
            transport=args.transport,
            mtu=args.mtu,
            pcie_gen=args.pcie_gen,
            assumed=assumed,
            nic=args.nic,
        )
    flow = unit_option(parse_speed_gbps, args.tcp_stream_speed, "--tcp-stream-speed")
    p = replace(
        p,
        cpu=args.cpu,  # type: ignore[arg-type]
        sharp=args.sharp,
        nccl_release=args.nccl_version,
        disabled=masks(args.algo, args.proto),
        gdr=p.gdr and not args.no_gdr,
        socket_threads=args.socket_nthreads,
        socket_socks_per_thread=args.nsocks_perthread,
        tcp_flow_GBps=flow / 8.0 if flow else p.tcp_flow_GBps,
    )
    cal: Calibration | None = None
    if measured:
        # fit on the platform the results came from; predict for the one asked (--nodes)
        at = replace(p, nodes=measured_nodes or p.nodes)
        cal = calibrate(at, coll, measured)
        p = replace(p, efficiency=cal.efficiency)
    return Prepared(coll, p, tuple(assumed), cal, fab_workload)
