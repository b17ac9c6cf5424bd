"""Every YAML file the package ships parses with PyYAML's pure-Python loader too.

``aifabric.yamlfile`` uses libyaml's ``CSafeLoader`` when PyYAML was built with it and falls
back to the pure-Python ``SafeLoader`` otherwise. The two parsers do not accept exactly the same
text: libyaml reads ``{url: https://host/file.c?h=v6.1}`` while the Python parser stops at the
``?`` inside a flow mapping (2026-12-06, a catalogue citing git.kernel.org URLs). A catalogue
that only one parser reads breaks diagnose on installs without libyaml.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "aifabric"
FILES = sorted(PACKAGE.rglob("*.yaml"))


def test_the_package_ships_yaml() -> None:
    assert len(FILES) > 100


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_parses_without_libyaml(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    pure = yaml.load(text, Loader=yaml.SafeLoader)
    if hasattr(yaml, "CSafeLoader"):
        assert pure == yaml.load(text, Loader=yaml.CSafeLoader)
