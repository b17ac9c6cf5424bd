"""Topology layout without drawing: the scene of the bundled examples (nodes per tier, no
overlapping boxes, order), computed without matplotlib.

Expected counts come from the example files themselves, read with PyYAML (not with aifabric's
loader), and from the collapsing rule as documented: a run of more than ``max_per_group``
entries shows its first ``max_per_group - 2``, one "… N more" node and its last.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import yaml

from aifabric.catalog import Catalog
from aifabric.design import load_fabric
from aifabric.errors import InputError
from aifabric.model import SWITCH_ROLE_TIER, Fabric
from aifabric.report.topology_layout import Scene, layout_topology
from aifabric.report.topology_plan import Item, natural_key

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"

Box = tuple[float, float, float, float]


def _raw(name: str) -> dict[str, Any]:
    data = yaml.safe_load((EXAMPLES / name).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _roles(name: str) -> Counter[str]:
    return Counter(str(s["role"]) for s in _raw(name)["switches"])


def _fabric(catalog: Catalog, name: str) -> Fabric:
    return load_fabric(EXAMPLES / name, catalog)


def _box(item: Item) -> Box:
    return item.x - item.w / 2, item.y - item.h / 2, item.x + item.w / 2, item.y + item.h / 2


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _overlapping(boxes: Iterable[tuple[str, Box]]) -> list[tuple[str, str]]:
    seen = list(boxes)
    return [(na, nb) for i, (na, a) in enumerate(seen) for nb, b in seen[i + 1 :] if _overlap(a, b)]


def _row(scene: Scene, row: int, panel: int = 0) -> list[Item]:
    """The drawn items of one row of one panel, left to right."""
    return sorted((i for i in scene.items if i.row == row and i.panel == panel), key=lambda i: i.x)


def _names(items: list[Item]) -> list[str]:
    return [" ".join(i.parts) for i in items]


def _assert_sound(scene: Scene) -> None:
    """What holds for every scene: nothing overlaps, everything is inside the picture, rows are
    stacked top (highest tier) to bottom (servers), frames hold their members."""
    boxes = [(" ".join(i.parts), _box(i)) for i in scene.items]
    assert _overlapping(boxes) == []
    for name, (x0, y0, x1, y1) in boxes:
        assert 0.0 <= x0 < x1 <= scene.width, name
        assert 0.0 <= y0 < y1 <= scene.height, name
    heights = [scene.row_y[r] for r in scene.rows]
    assert heights == sorted(heights, reverse=True)
    assert scene.rows == sorted(scene.rows, reverse=True)
    frames = [(f"group {g.idx}", (g.x0, g.y0, g.x1, g.y1)) for g in scene.groups if g.framed]
    assert _overlapping(frames) == []
    for g in scene.groups:
        if not g.framed:
            continue
        for idx in g.items:
            x0, y0, x1, y1 = _box(scene.items[idx])
            assert g.x0 <= x0 and x1 <= g.x1 and g.y0 <= y0 and y1 <= g.y1


def test_layout_imports_no_matplotlib() -> None:
    lab = EXAMPLES / "lossless-lab" / "fabric.yaml"
    code = (
        "import sys\n"
        "from aifabric.catalog import load_catalog\n"
        "from aifabric.design import load_fabric\n"
        "from aifabric.report.topology_layout import layout_topology\n"
        f"fabric = load_fabric({str(lab)!r}, load_catalog())\n"
        "scene = layout_topology(fabric)\n"
        "assert scene.items and scene.width > 0\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]"


def test_report_package_loads_without_matplotlib() -> None:
    code = (
        "import sys\n"
        "import aifabric.report, aifabric.report.sarif, aifabric.report.junit\n"
        "assert 'matplotlib' not in sys.modules\n"
        "from aifabric.report import draw_topology\n"
        "assert 'matplotlib' in sys.modules and callable(draw_topology)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_lossless_lab_draws_every_device(catalog: Catalog) -> None:
    name = "lossless-lab/fabric.yaml"
    roles, servers = _roles(name), len(_raw(name)["servers"])
    assert (roles["spine"], roles["leaf"], servers) == (2, 2, 4)  # the example as shipped
    scene = layout_topology(_fabric(catalog, name))
    _assert_sound(scene)
    assert scene.rows == [2, 1, 0]
    for row, count in ((2, roles["spine"]), (1, roles["leaf"]), (0, servers)):
        items = _row(scene, row)
        assert len(items) == count
        assert {i.kind for i in items} == {"switch" if row else "server"}
        assert _names(items) == sorted(_names(items), key=natural_key)
    assert scene.plan.collapsed == 0


def test_s17_before_two_sites_and_a_firewall(catalog: Catalog) -> None:
    name = "s17-case-study-before.yaml"
    raw = _raw(name)
    scene = layout_topology(_fabric(catalog, name), max_per_group=20)
    _assert_sound(scene)
    sites = [s["name"] for s in raw["sites"]]
    assert [p.site for p in scene.panels] == sites  # in the file's order, left to right
    assert scene.panels[0].x1 < scene.panels[1].x0
    tiers = Counter(SWITCH_ROLE_TIER[r] for r in _roles(name).elements())
    drawn = Counter(i.row for i in scene.items if i.kind == "switch")
    assert drawn == tiers  # every core, aggregation and access switch, in its tier
    assert sum(i.kind == "server" for i in scene.items) == len(raw["servers"])
    for panel, site in enumerate(sites):
        on_site = {s["name"] for s in raw["servers"] if s["site"] == site}
        assert set(_names(_row(scene, 0, panel))) == on_site
    (fw,) = [i for i in scene.items if i.kind == "middlebox"]
    assert fw.parts[0] == raw["middleboxes"][0]["name"]
    # joins the two sites: it stands between their panels
    assert scene.panels[0].x1 < fw.x < scene.panels[1].x0


def test_s7_rows_collapse_by_the_rule(catalog: Catalog) -> None:
    name = "s7-worked-example.yaml"
    raw = _raw(name)
    roles = _roles(name)
    racks = Counter(str(s["rack"]) for s in raw["servers"])
    assert (roles["spine"], roles["leaf"], len(racks)) == (8, 16, 16)
    fabric = _fabric(catalog, name)

    wide = layout_topology(fabric, max_per_group=20)
    _assert_sound(wide)
    assert _names(_row(wide, 2)) == sorted(
        (s["name"] for s in raw["switches"] if s["role"] == "spine"), key=natural_key
    )
    assert _names(_row(wide, 1)) == sorted(
        (s["name"] for s in raw["switches"] if s["role"] == "leaf"), key=natural_key
    )
    boxes = _row(wide, 0)  # 128 servers > 20: one box per rack, racks in order
    assert [b.kind for b in boxes] == ["servers"] * len(racks)
    assert [b.parts[0] for b in boxes] == [f"{r}:" for r in sorted(racks, key=natural_key)]
    assert all(b.parts[1] == f"{racks[b.parts[0][:-1]]} servers" for b in boxes)

    small = layout_topology(fabric, max_per_group=6)
    _assert_sound(small)
    for row, total in ((2, roles["spine"]), (1, roles["leaf"]), (0, len(racks))):
        items = _row(small, row)
        assert len(items) == 6
        assert [i.kind == "ellipsis" for i in items] == [False] * 4 + [True, False]
        hidden = total - 5
        assert items[4].parts[0] == f"… {hidden} more"
    assert small.plan.collapsed == 3
    assert _names(_row(small, 1))[:4] == ["leaf01", "leaf02", "leaf03", "leaf04"]
    assert _names(_row(small, 1))[5] == "leaf16"


def test_layout_is_deterministic(catalog: Catalog) -> None:
    fabric = _fabric(catalog, "s17-case-study-after.yaml")
    a, b = layout_topology(fabric), layout_topology(fabric)
    assert [(i.x, i.y, i.w, i.h, i.lines) for i in a.items] == [
        (i.x, i.y, i.w, i.h, i.lines) for i in b.items
    ]
    assert [(ln.a, ln.b, ln.label) for ln in a.lines] == [(ln.a, ln.b, ln.label) for ln in b.lines]
    _assert_sound(a)


@pytest.mark.parametrize("limit", [2, 0, -1])
def test_too_small_a_limit_is_refused(catalog: Catalog, limit: int) -> None:
    fabric = _fabric(catalog, "lossless-lab/fabric.yaml")
    with pytest.raises(InputError, match="need at least 3"):
        layout_topology(fabric, max_per_group=limit)
