"""NCCL tuner constants per release, loaded from ``perf/data/nccl.yaml`` (versioned data).

Index conventions follow NCCL ``src/graph/tuning.cc``: protocols ``(LL, LL128, Simple)``;
architecture rows ``volta / ampere / hopper / blackwell``; node columns ``N1 / N2 / N4`` (1 node,
2 nodes, 3 or more nodes).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal

import yaml

from aifabric.errors import InputError

__all__ = [
    "ALGORITHMS",
    "PROTOCOLS",
    "Algorithm",
    "Arch",
    "NcclConstants",
    "Protocol",
    "arch_of",
    "load_constants",
    "releases",
]

Protocol = Literal["LL", "LL128", "Simple"]
PROTOCOLS: tuple[Protocol, ...] = ("LL", "LL128", "Simple")
Algorithm = Literal["tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"]
ALGORITHMS: tuple[Algorithm, ...] = (
    "tree",
    "ring",
    "collnet_direct",
    "collnet_chain",
    "nvls",
    "nvls_tree",
    "pat",
)
Arch = Literal["volta", "ampere", "hopper", "blackwell"]
Triple = tuple[float, float, float]


def arch_of(compute_capability: str | None) -> Arch:
    """NCCL's compCapIndex: ``>= 10.0`` Blackwell, ``9.x`` Hopper, ``8.x`` Ampere, else Volta."""
    try:
        major = float(compute_capability or "8.0")
    except ValueError:
        major = 8.0
    if major >= 10:
        return "blackwell"
    if major >= 9:
        return "hopper"
    if major >= 8:
        return "ampere"
    return "volta"


@dataclass(frozen=True, slots=True)
class NcclConstants:
    """One NCCL release's performance-model constants (see ``perf/data/nccl.yaml``)."""

    release: str
    tag: str
    source: str
    base_latency_us: dict[str, Triple]
    hw_latency_us: dict[str, dict[str, Triple]]
    ll_max_bw_GBps: dict[str, Triple]
    per_ch_max_ring_ll128_bw_GBps: dict[str, Triple]
    per_ch_max_tree_ll128_bw_GBps: dict[str, Triple]
    per_ch_max_tree_bw_GBps: dict[str, Triple]
    per_ch_max_nvls_tree_bw_GBps: dict[str, Triple]
    nvls_efficiency: dict[str, float]
    ring_ll128_factor: float
    ring_ll128_factor_ppn1: float
    ring_plateau: tuple[float, float]
    net_overhead_us: dict[str, float]
    tree_correction: tuple[tuple[float, ...], ...]
    speed_intra_GBps: dict[str, tuple[float, ...]]
    speed_inter_GBps: dict[str, tuple[float, ...]]
    max_search_channels: int
    max_channels: int

    def speeds(self, arch: Arch, inter: bool) -> tuple[float, ...]:
        """The graph search's per-channel speeds for this GPU generation (search.cc)."""
        table = self.speed_inter_GBps if inter else self.speed_intra_GBps
        return table.get(arch, table["default"])


def _raw() -> dict[str, Any]:
    text = resources.files("aifabric.perf").joinpath("data/nccl.yaml").read_text(encoding="utf-8")
    data: dict[str, Any] = yaml.safe_load(text)
    return data


def releases() -> tuple[str, ...]:
    """Releases with constants, newest first."""
    return tuple(
        sorted(_raw()["releases"], key=lambda r: tuple(int(x) for x in r.split(".")))[::-1]
    )


def _resolve(name: str, table: dict[str, Any]) -> dict[str, Any]:
    entry = table[name]
    if "inherits" not in entry:
        return dict(entry)
    merged = copy.deepcopy(_resolve(entry["inherits"], table))
    for key, value in entry.items():
        if key == "hw_latency_patch":
            for hw, rows in value.items():
                merged["hw_latency_us"][hw].update(rows)
        elif key == "ll_max_bw_patch":
            merged["ll_max_bw_GBps"].update(value)
        elif key != "inherits":
            merged[key] = value
    return merged


def _t(v: Any) -> Triple:
    a, b, c = (float(x) for x in v)
    return (a, b, c)


@cache
def load_constants(release: str | None = None) -> NcclConstants:
    """Constants of ``release`` (``"2.30"``, ``"2.21.5"``...; default: the newest)."""
    raw = _raw()
    table = raw["releases"]
    name = release or raw["default_release"]
    if name not in table:
        short = ".".join(name.split(".")[:2])
        if short not in table:
            known = ", ".join(releases())
            raise InputError(f"no NCCL constants for release {name!r}; known: {known}")
        name = short
    e = _resolve(name, table)
    return NcclConstants(
        release=name,
        tag=str(e["tag"]),
        source=str(e["source"]),
        base_latency_us={k: _t(v) for k, v in e["base_latency_us"].items()},
        hw_latency_us={
            hw: {k: _t(v) for k, v in rows.items()} for hw, rows in e["hw_latency_us"].items()
        },
        ll_max_bw_GBps={k: _t(v) for k, v in e["ll_max_bw_GBps"].items()},
        per_ch_max_ring_ll128_bw_GBps={
            k: _t(v) for k, v in e["per_ch_max_ring_ll128_bw_GBps"].items()
        },
        per_ch_max_tree_ll128_bw_GBps={
            k: _t(v) for k, v in e["per_ch_max_tree_ll128_bw_GBps"].items()
        },
        per_ch_max_tree_bw_GBps={k: _t(v) for k, v in e["per_ch_max_tree_bw_GBps"].items()},
        per_ch_max_nvls_tree_bw_GBps={
            k: _t(v) for k, v in e["per_ch_max_nvls_tree_bw_GBps"].items()
        },
        nvls_efficiency={k: float(v) for k, v in e["nvls_efficiency"].items()},
        ring_ll128_factor=float(e["ring_ll128_factor"]),
        ring_ll128_factor_ppn1=float(e["ring_ll128_factor_ppn1"]),
        ring_plateau=(float(e["ring_plateau"][0]), float(e["ring_plateau"][1])),
        net_overhead_us={k: float(v) for k, v in e["net_overhead_us"].items()},
        tree_correction=tuple(tuple(float(x) for x in row) for row in e["tree_correction"]),
        speed_intra_GBps={k: tuple(float(x) for x in v) for k, v in e["speed_intra_GBps"].items()},
        speed_inter_GBps={k: tuple(float(x) for x in v) for k, v in e["speed_inter_GBps"].items()},
        max_search_channels=int(e["max_search_channels"]),
        max_channels=int(e["max_channels"]),
    )
