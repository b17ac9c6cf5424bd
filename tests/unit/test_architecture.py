"""The layer rule of architecture.md: imports point inward only. Also the public surface and
the generated docs."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "aifabric"

LAYERS = {
    "core": {"units", "errors", "findings", "explain", "bulk", "yamlfile", "model", "catalog"},
    "analysis": {"design", "topology", "perf"},
    "formats": {"dialects", "evidence"},
    "engines": {"checks", "sim", "bench", "monitor", "report"},
    "actuators": {"probe", "lab"},
    "shell": {"cli", "__main__"},
}
ORDER = ["core", "analysis", "formats", "engines", "actuators", "shell"]


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
