"""The layer rule of architecture.md: imports point inward only; the layer table names exactly
the packages that exist (planned ones marked as planned); the evidence and report modules are
each named in architecture.md. Also the public surface and the generated docs."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "aifabric"

DOC = ROOT / "docs" / "architecture.md"

LAYERS: dict[str, set[str]] = {
    "core": {
        "units",
        "errors",
        "inputs",
        "findings",
        "explain",
        "bulk",
        "yamlfile",
        "cache",
        "model",
        "catalog",
    },
    "analysis": {"design", "topology", "perf"},
    "formats": {"dialects", "evidence"},
    "engines": {"checks", "report", "bench", "monitor"},
    "actuators": {"lab", "probe"},
    "shell": {"cli", "__main__"},
}
"""Packages (and top-level modules) of ``src/aifabric`` by layer, as built."""

PLANNED: dict[str, set[str]] = {
    "engines": {"sim"},
}
"""Packages architecture.md plans and nobody has written yet."""

ORDER = ["core", "analysis", "formats", "engines", "actuators", "shell"]


def _existing() -> set[str]:
    """Top-level packages and modules of ``src/aifabric`` (without ``__init__``)."""
    out = {p.stem for p in SRC.glob("*.py") if p.stem != "__init__"}
    return out | {p.name for p in SRC.iterdir() if (p / "__init__.py").is_file()}


def _doc_layers() -> dict[str, tuple[set[str], set[str]]]:
    """architecture.md's layer table: layer → (packages as built, planned packages)."""
    text = DOC.read_text(encoding="utf-8")
    table = text.split("## Layers", 1)[1].split("\n\n", 2)[1]
    rows: dict[str, tuple[set[str], set[str]]] = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        built, planned = (
            {n.rstrip("/") for n in re.findall(r"`([\w/.]+)`", cell) if "/" not in n[:-1]}
            for cell in cells[1:3]
        )
        rows[cells[0]] = (built, planned)
    return rows


def test_layer_table_names_what_exists() -> None:
    existing = _existing()
    built = set().union(*LAYERS.values())
    planned = set().union(*PLANNED.values())
    assert built == existing, "add new packages to LAYERS and architecture.md's layer table"
    assert planned & existing == set(), "a planned package exists: move it to LAYERS"
    assert list(_doc_layers()) == ORDER
    for layer, (doc_built, doc_planned) in _doc_layers().items():
        assert doc_built == LAYERS[layer], layer
        assert doc_planned == PLANNED.get(layer, set()), layer


@pytest.mark.parametrize("package", ["evidence", "report"])
def test_architecture_names_every_module(package: str) -> None:
    text = DOC.read_text(encoding="utf-8")
    for path in sorted((SRC / package).glob("*.py")):
        if path.stem != "__init__":
            assert f"`{path.stem}`" in text or f"{package}/{path.name}" in text, path.name


def _layer(top: str) -> str:
    for name, members in LAYERS.items():
        if top in members:
            return name
    raise AssertionError(f"aifabric.{top} is in no layer: add it to architecture.md and here")


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return [n for n in names if n == "aifabric" or n.startswith("aifabric.")]


def test_imports_point_inward() -> None:
    bad = []
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC)
        top = rel.parts[0].removesuffix(".py")
        if top == "__init__":
            continue
        mine = _layer(top)
        for name in _imports(path):
            parts = name.split(".")
            if len(parts) < 2:
                continue
            other = parts[1]
            theirs = _layer(other)
            if ORDER.index(theirs) > ORDER.index(mine):
                bad.append(f"{rel}: {mine} imports {name} ({theirs})")
            elif theirs == mine == "engines" and other != top:
                bad.append(f"{rel}: engine {top} imports another engine's {name}")
    assert bad == []


@pytest.mark.parametrize(
    "module",
    [
        "aifabric.model",
        "aifabric.catalog",
        "aifabric.checks",
        "aifabric.design",
        "aifabric.units",
        "aifabric.findings",
        "aifabric.errors",
        "aifabric.evidence",
        "aifabric.evidence.nccl_log",
        "aifabric.evidence.qos",
        "aifabric.evidence.sonic_config",
        "aifabric.report",
        "aifabric.report.topology_layout",
    ],
)
def test_public_surface_is_explicit(module: str) -> None:
    mod = importlib.import_module(module)
    exported = mod.__all__
    assert sorted(exported) == sorted(set(exported))
    for name in exported:
        assert hasattr(mod, name), f"{module}.__all__ names missing {name}"


@pytest.mark.parametrize(
    ("script", "page"),
    [
        ("gen_checks_doc.py", "checks.md"),
        ("gen_evidence_doc.py", "evidence.md"),
        ("gen_rules_doc.py", "diagnose.md"),
        ("gen_signatures_doc.py", "signatures.md"),
    ],
)
def test_generated_docs_are_current(script: str, page: str) -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / script)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert (ROOT / "docs" / page).read_text() == out, "run `make docs`"
