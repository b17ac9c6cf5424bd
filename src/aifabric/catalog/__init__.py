"""The hardware catalog: GPUs, NICs, PCIe generations, switches, optics and cables, as data.

Built-in entries live in ``catalog/data/*.yaml``, each with its source. Users add or override
entries with files of the same shape (``aifabric design --catalog my-hw.yaml``): an entry with
the name of a built-in one replaces it.

>>> cat = load_catalog()
>>> round(cat.pcie_gen(5).raw_GBps(16), 1)
63.0
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TypeVar

from aifabric.catalog.models import (
    BreakoutMode,
    CableSpec,
    CatalogFile,
    GpuSpec,
    ModuleSpec,
    NicSpec,
    PcieGenSpec,
    SwitchClass,
    SwitchSpec,
)
from aifabric.errors import CatalogError
from aifabric.yamlfile import read_text, read_yaml_text, validate_data

__all__ = [
    "BreakoutMode",
    "CableSpec",
    "Catalog",
    "CatalogFile",
    "GpuSpec",
    "ModuleSpec",
    "NicSpec",
    "PcieGenSpec",
    "SwitchClass",
    "SwitchSpec",
    "builtin_catalog",
    "load_catalog",
]

E = TypeVar("E", GpuSpec, NicSpec, SwitchSpec, ModuleSpec, CableSpec)

_KINDS = ("gpus", "nics", "pcie", "switches", "modules", "cables")


def _lookup(kind: str, table: Mapping[str, E], name: str) -> E:
    entry = table.get(name)
    if entry is not None:
        return entry
    folded = {k.casefold(): v for k, v in table.items()}
    entry = folded.get(name.casefold())
    if entry is not None:
        return entry
    known = ", ".join(sorted(table)) or "(none)"
    raise CatalogError(
        f"unknown {kind} {name!r}; known: {known} (add your own with --catalog FILE)"
    )


@dataclass(frozen=True, eq=False)
class Catalog:
    """All catalog entries by kind and name (hashed by identity: usable as a cache key)."""

    gpus: dict[str, GpuSpec] = field(default_factory=dict)
    nics: dict[str, NicSpec] = field(default_factory=dict)
    pcie: dict[int, PcieGenSpec] = field(default_factory=dict)
    switches: dict[str, SwitchSpec] = field(default_factory=dict)
    modules: dict[str, ModuleSpec] = field(default_factory=dict)
    cables: dict[str, CableSpec] = field(default_factory=dict)
    files: tuple[str, ...] = ()

    def gpu(self, name: str) -> GpuSpec:
        return _lookup("GPU", self.gpus, name)

    def nic(self, name: str) -> NicSpec:
        return _lookup("NIC", self.nics, name)

    def switch(self, name: str) -> SwitchSpec:
        return _lookup("switch model", self.switches, name)

    def module(self, name: str) -> ModuleSpec:
        return _lookup("optical module", self.modules, name)

    def cable(self, name: str) -> CableSpec:
        return _lookup("cable", self.cables, name)

    def pcie_gen(self, gen: int) -> PcieGenSpec:
        spec = self.pcie.get(gen)
        if spec is None:
            known = ", ".join(str(g) for g in sorted(self.pcie))
            raise CatalogError(f"unknown PCIe generation {gen}; known: {known}")
        return spec

    def merged(self, other: CatalogFile, *, file: str) -> Catalog:
        """A new catalog with ``other``'s entries added (same name: replaced)."""
        return Catalog(
            gpus={**self.gpus, **{e.name: e for e in other.gpus}},
            nics={**self.nics, **{e.name: e for e in other.nics}},
            pcie={**self.pcie, **{e.gen: e for e in other.pcie}},
            switches={**self.switches, **{e.name: e for e in other.switches}},
            modules={**self.modules, **{e.name: e for e in other.modules}},
            cables={**self.cables, **{e.name: e for e in other.cables}},
            files=(*self.files, file),
        )


def _read_catalog_file(text: str, file: str) -> CatalogFile:
    data = read_yaml_text(text, file=file)
    cat = validate_data(CatalogFile, data, file=file, text=text)
    for kind in _KINDS:
        entries = getattr(cat, kind)
        keys = [e.gen if kind == "pcie" else e.name for e in entries]
        dupes = sorted({str(k) for k in keys if keys.count(k) > 1})
        if dupes:
            raise CatalogError(f"{file}: {kind} entries listed twice: {', '.join(dupes)}")
    return cat


@cache
def builtin_catalog() -> Catalog:
    """The catalog shipped with aifabric (cached)."""
    catalog = Catalog()
    data_dir = resources.files("aifabric.catalog").joinpath("data")
    for kind in _KINDS:
        res = data_dir.joinpath(f"{kind}.yaml")
        if not res.is_file():
            continue
        text = res.read_text(encoding="utf-8")
        catalog = catalog.merged(
            _read_catalog_file(text, f"catalog/data/{kind}.yaml"), file=f"builtin:{kind}"
        )
    return catalog


def load_catalog(extra_files: Iterable[str | Path] = ()) -> Catalog:
    """The built-in catalog plus the user's files, later files overriding earlier ones."""
    catalog = builtin_catalog()
    for path in extra_files:
        text = read_text(path)
        catalog = catalog.merged(_read_catalog_file(text, str(path)), file=str(path))
    return catalog
