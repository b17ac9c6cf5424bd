"""Topology picture of a fabric (SVG or PNG), readable from one leaf up to 32,768 GPUs.

Three steps, one module each: :mod:`~aifabric.report.topology_plan` decides what is drawn
(grouping each row into its repeated units and collapsing long runs into "… N more" nodes),
:mod:`~aifabric.report.topology_layout` places it (rows per tier, site panels, middleboxes,
aggregated and folded edges; pure geometry, no matplotlib), and this module paints the placed
scene with matplotlib and writes the file.

Painting
--------
Boxes are coloured by tier (super-spines, spines, leaves, servers), middleboxes are red
hexagons, ellipsis nodes dashed. Edges are coloured by link kind (host, fabric, core,
inter-site); lines between tiers are straight (leaving a frame straight up or down), lines
within a row arc above it. Edge labels (count x speed) are placed only where they overlap no
node and no other label; the left margin always gives the tier names and the link totals
between consecutive tiers. The output is deterministic (no date in SVG metadata, fixed hash
salt).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyBboxPatch, PathPatch, RegularPolygon
from matplotlib.path import Path as MplPath

from aifabric.errors import InputError
from aifabric.model import Fabric
from aifabric.report.topology_layout import (
    ARC_BAND_IN,
    MIDDLEBOX_R_IN,
    MIN_FONT_PT,
    SITE_LABEL_H_IN,
    STRIP_H_IN,
    TITLE_H_IN,
    Line,
    Scene,
    layout_topology,
    text_width_in,
)
from aifabric.report.topology_plan import plural, wrap_text

__all__ = ["PictureStats", "draw_topology"]

FORMATS = {".svg": "svg", ".png": "png"}

PNG_DPI = 120

KIND_COLOURS: dict[str, str] = {
    "host": "#2e7d32",
    "fabric": "#1565c0",
    "core": "#6a1b9a",
    "inter-site": "#e65100",
    "management": "#757575",
}
_STYLES: dict[str, tuple[str, str]] = {  # face, edge
    "tier3": ("#ede7f6", "#6a1b9a"),
    "tier2": ("#e3f2fd", "#1565c0"),
    "tier1": ("#e0f2f1", "#00796b"),
    "server": ("#f5f5f5", "#616161"),
    "ellipsis": ("#ffffff", "#9e9e9e"),
    "middlebox": ("#ffcdd2", "#c62828"),
}

_LineStyle = tuple[float, str | tuple[float, tuple[float, float]], float]


@dataclass(frozen=True)
class PictureStats:
    """What :func:`draw_topology` drew.

    ``nodes_drawn`` counts every box, ellipsis node and middlebox; ``edges_drawn`` every line
    (after aggregation and folding); ``collapsed_groups`` every "… N more" run.
    """

    nodes_drawn: int
    edges_drawn: int
    collapsed_groups: int
    path: Path


# ----------------------------------------------------------------------------------- rendering


def _anchor(
    box: tuple[float, float, float, float], towards: tuple[float, float, float, float]
) -> tuple[float, float]:
    x0, y0, x1, y1 = box
    cy_other = (towards[1] + towards[3]) / 2
    if cy_other > y1:
        return (x0 + x1) / 2, y1
    if cy_other < y0:
        return (x0 + x1) / 2, y0
    return (x0 + x1) / 2, y1


def _overlaps(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


class _Painter:
    """Paints a :class:`Scene` on a matplotlib figure: titles, site panels, the margin's tier
    names and link totals, frames, edges with labels where they overlap nothing, nodes, legend."""

    def __init__(self, scene: Scene, fabric: Fabric, title: str | None) -> None:
        self.scene = scene
        self.fabric = fabric
        self.title = title
        self.fig = Figure(figsize=(scene.width, scene.height))
        FigureCanvasAgg(self.fig)
        ax = self.fig.add_axes((0.0, 0.0, 1.0, 1.0))
        ax.set_xlim(0.0, scene.width)
        ax.set_ylim(0.0, scene.height)
        ax.set_axis_off()
        self.ax = ax
        self.obstacles: list[tuple[float, float, float, float]] = []
        self.any_dashed = False
        self.any_heavy = False

    def paint(self) -> Figure:
        self._titles()
        self._panels()
        self._margin()
        self._frames()
        self._edges()
        self._nodes()
        self._legend()
        return self.fig

    def _titles(self) -> None:
        fabric, scene = self.fabric, self.scene
        gpus = sum(s.gpus for s in fabric.servers)
        tiers = len(scene.switch_tiers)
        head = self.title if self.title is not None else fabric.name
        sub = [
            f"{gpus:,} GPUs",
            plural(len(fabric.servers), "server", "servers"),
            f"{plural(tiers, 'switch tier', 'switch tiers')}",
            plural(sum(1 for s in fabric.switches if s.role != "management"), "switch", "switches"),
            plural(len(fabric.links), "link", "links"),
        ]
        if len(scene.panels) > 1:
            sub.append(f"{sum(p.hidden or 1 for p in scene.panels)} sites")
        h = scene.height
        self.ax.text(
            scene.width / 2, h - 0.3, head, ha="center", va="center", fontsize=13, fontweight="bold"
        )
        self.ax.text(
            scene.width / 2,
            h - 0.62,
            " · ".join(sub),
            ha="center",
            va="center",
            fontsize=9.5,
            color="#424242",
        )

    def _panels(self) -> None:
        scene = self.scene
        if len(scene.panels) < 2 or not scene.rows:
            return
        top = scene.row_y[scene.rows[0]] + scene.row_h[scene.rows[0]] / 2 + STRIP_H_IN
        bottom = scene.row_y[scene.rows[-1]] - scene.row_h[scene.rows[-1]] / 2 - 0.15
        for panel in scene.panels:
            if panel.hidden:
                self.ax.text(
                    (panel.x0 + panel.x1) / 2,
                    (top + bottom) / 2,
                    f"… {panel.hidden} more\nsites",
                    ha="center",
                    va="center",
                    fontsize=9,
                    style="italic",
                    color="#757575",
                )
                continue
            self.ax.add_patch(
                FancyBboxPatch(
                    (panel.x0 - 0.15, bottom),
                    panel.x1 - panel.x0 + 0.3,
                    top + SITE_LABEL_H_IN + 0.02 - bottom,
                    boxstyle="round,pad=0,rounding_size=0.12",
                    fc="none",
                    ec="#9e9e9e",
                    lw=1.0,
                    ls=(0, (6, 4)),
                    zorder=0.5,
                )
            )
            self.ax.text(
                (panel.x0 + panel.x1) / 2,
                top + SITE_LABEL_H_IN / 2 + 0.05,
                panel.site if panel.site else "(no site)",
                ha="center",
                va="center",
                fontsize=10,
                fontweight="bold",
                color="#37474f",
                zorder=6,
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none"},
            )

    def _margin(self) -> None:
        scene = self.scene
        for row in scene.rows:
            name = "servers" if row == 0 else " / ".join(scene.row_roles[row])
            colour = _STYLES[f"tier{row}" if row else "server"][1]
            self.ax.text(
                0.12,
                scene.row_y[row],
                wrap_text(name, 18)[0] if len(name) > 18 else name,
                ha="left",
                va="center",
                fontsize=8.5,
                fontweight="bold",
                color=colour,
            )
        for upper, lower in pairwise(scene.rows):
            counts = scene.gap_links.get((upper, lower))
            if not counts:
                continue
            by_kind: dict[str, list[tuple[float, int]]] = defaultdict(list)
            for (kind, speed), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
                by_kind[kind].append((speed, n))
            text: list[str] = []
            colour = "#424242"
            for kind, speeds in list(by_kind.items())[:2]:
                colour = KIND_COLOURS.get(kind, colour)
                text.append(f"{kind} links")
                text += [f"{n:,} x {speed:g}G" for speed, n in speeds[:2]]
            if (upper, lower) in scene.gap_notes:
                text += wrap_text(scene.gap_notes[(upper, lower)], 20)
            y = (scene.row_y[upper] + scene.row_y[lower]) / 2
            self.ax.text(
                0.12,
                y,
                "\n".join(text),
                ha="left",
                va="center",
                fontsize=MIN_FONT_PT,
                color=colour,
                linespacing=1.2,
            )
        if scene.inter_site:
            text = ["inter-site links"] + [
                f"{n:,} x {speed:g}G" for speed, n in sorted(scene.inter_site.items())[:2]
            ]
            for (upper, lower), note in sorted(scene.gap_notes.items()):
                if upper == lower:
                    text += wrap_text(note, 20)
            y = scene.height - TITLE_H_IN - 0.35
            self.ax.text(
                0.12,
                y,
                "\n".join(text),
                ha="left",
                va="center",
                fontsize=MIN_FONT_PT,
                color=KIND_COLOURS["inter-site"],
                linespacing=1.2,
            )

    def _frames(self) -> None:
        for g in self.scene.groups:
            if not g.framed:
                continue
            self.ax.add_patch(
                FancyBboxPatch(
                    (g.x0, g.y0),
                    g.x1 - g.x0,
                    g.y1 - g.y0,
                    boxstyle="round,pad=0,rounding_size=0.06",
                    fc="#f7f7f7",
                    ec="#bdbdbd",
                    lw=0.8,
                    zorder=1,
                )
            )
            y = g.y1 - STRIP_H_IN / 2 - 0.01
            self.ax.text(
                g.x0 + 0.06,
                y,
                g.label,
                ha="left",
                va="center",
                fontsize=MIN_FONT_PT,
                color="#424242",
                zorder=6,
                bbox={"boxstyle": "square,pad=0.1", "fc": "#f7f7f7", "ec": "none"},
            )
            self.obstacles.append(
                (g.x0, y - 0.07, g.x0 + 0.06 + text_width_in(g.label, 7), y + 0.07)
            )

    def _edges(self) -> None:
        scene = self.scene
        for item in scene.items:
            self.obstacles.append(scene.box(("item", item.idx)))
        straight: dict[tuple[str, bool, bool], list[list[tuple[float, float]]]]
        straight = defaultdict(list)
        labels: list[tuple[str, tuple[float, float], tuple[float, float]]] = []
        for line in scene.lines:
            ba, bb = scene.box(line.a), scene.box(line.b)
            colour = KIND_COLOURS.get(line.kind, "#616161")
            self.any_dashed |= line.dashed
            self.any_heavy |= line.heavy
            beside = ba[1] < bb[3] and bb[1] < ba[3]  # vertical extents overlap
            if beside and (scene.is_middlebox(line.a) or scene.is_middlebox(line.b)):
                left, right = (ba, bb) if ba[0] < bb[0] else (bb, ba)
                pa = (left[2], (left[1] + left[3]) / 2)
                pb = (right[0], (right[1] + right[3]) / 2)
            else:
                pa, pb = _anchor(ba, bb), _anchor(bb, ba)
            stub_a, stub_b = scene.stub(line.a, pa), scene.stub(line.b, pb)
            if beside and abs(pa[1] - pb[1]) < 1e-6 and pa[1] >= max(ba[3], bb[3]) - 1e-6:
                qa, qb = stub_a or pa, stub_b or pb
                dx = abs(qa[0] - qb[0])
                if scene.rows and scene.row_of(line.a) == scene.rows[0]:
                    apex_y = scene.arc_base + min(0.2 + 0.1 * dx, ARC_BAND_IN - 0.2)
                else:
                    apex_y = max(qa[1], qb[1]) + 0.35
                ctrl = ((qa[0] + qb[0]) / 2, 2 * apex_y - (qa[1] + qb[1]) / 2)
                path = MplPath(
                    [pa, qa, ctrl, qb, pb],
                    [
                        MplPath.MOVETO,
                        MplPath.LINETO,
                        MplPath.CURVE3,
                        MplPath.CURVE3,
                        MplPath.LINETO,
                    ],
                )
                lw, ls, alpha = self._style(line)
                self.ax.add_patch(
                    PathPatch(path, fc="none", ec=colour, lw=lw, ls=ls, alpha=alpha, zorder=2)
                )
                apex = ((qa[0] + qb[0]) / 2, apex_y)
                if line.label:
                    labels.append((line.label, apex, apex))
            else:
                # leave a frame straight up or down, then head for the other end
                qa, qb = stub_a or pa, stub_b or pb
                points = [pa, qa, qb, pb] if stub_a or stub_b else [pa, pb]
                straight[(colour, line.dashed, line.heavy)].append(points)
                if line.label:
                    labels.append((line.label, qa, qb))
        for (colour, dashed, heavy), segments in sorted(straight.items()):
            lw, ls, alpha = self._style(Line(("item", 0), ("item", 0), dashed, heavy, "", None))
            self.ax.add_collection(
                LineCollection(
                    segments, colors=colour, linewidths=lw, linestyles=ls, alpha=alpha, zorder=2
                )
            )
        for text, pa, pb in labels:
            self._edge_label(text, pa, pb)

    @staticmethod
    def _style(line: Line) -> _LineStyle:
        """``(width, dash pattern, alpha)`` of a line."""
        if line.dashed:
            return 0.9, (0.0, (4.0, 3.0)), 0.45
        if line.heavy:
            return 2.6, "-", 0.55
        return 0.9, "-", 0.85

    def _edge_label(self, text: str, pa: tuple[float, float], pb: tuple[float, float]) -> None:
        w = text_width_in(text, MIN_FONT_PT) + 0.06
        h = MIN_FONT_PT / 72 * 1.3 + 0.04
        for t in (0.5, 0.38, 0.62, 0.28, 0.72):
            x = pa[0] + (pb[0] - pa[0]) * t
            y = pa[1] + (pb[1] - pa[1]) * t
            rect = (x - w / 2 - 0.06, y - h / 2, x + w / 2 + 0.06, y + h / 2)  # with a margin
            if not any(_overlaps(rect, o) for o in self.obstacles):
                self.obstacles.append(rect)
                self.ax.text(
                    x,
                    y,
                    text,
                    ha="center",
                    va="center",
                    fontsize=MIN_FONT_PT,
                    color="#212121",
                    zorder=7,
                    bbox={"boxstyle": "round,pad=0.12", "fc": "white", "ec": "none", "alpha": 0.9},
                )
                return

    def _nodes(self) -> None:
        scene = self.scene
        for item in scene.items:
            face, edge = _STYLES[item.style]
            if item.kind == "middlebox":
                self.ax.add_patch(
                    RegularPolygon(
                        (item.x, item.y),
                        6,
                        radius=MIDDLEBOX_R_IN,
                        orientation=math.pi / 6,
                        fc=face,
                        ec=edge,
                        lw=1.4,
                        zorder=3,
                    )
                )
                self.ax.text(
                    item.x,
                    item.y,
                    "\n".join(item.lines),
                    ha="center",
                    va="center",
                    fontsize=MIN_FONT_PT,
                    color="#b71c1c",
                    fontweight="bold",
                    zorder=4,
                    linespacing=1.1,
                )
                continue
            dashed = item.kind == "ellipsis"
            self.ax.add_patch(
                FancyBboxPatch(
                    (item.x - item.w / 2, item.y - item.h / 2),
                    item.w,
                    item.h,
                    boxstyle="round,pad=0,rounding_size=0.05",
                    fc=face,
                    ec=edge,
                    lw=1.0,
                    ls=(0, (3, 2)) if dashed else "-",
                    zorder=3,
                )
            )
            self.ax.text(
                item.x,
                item.y,
                "\n".join(item.lines),
                ha="center",
                va="center",
                fontsize=scene.font,
                color="#616161" if dashed else "#212121",
                style="italic" if dashed else "normal",
                zorder=4,
                linespacing=1.1,
            )

    def _legend(self) -> None:
        kinds = {line.kind for line in self.scene.lines}
        handles = [
            Line2D([], [], color=KIND_COLOURS[k], lw=2.2, label=f"{k} link")
            for k in ("host", "fabric", "core", "inter-site")
            if k in kinds
        ]
        if self.any_heavy:
            handles.append(
                Line2D(
                    [],
                    [],
                    color="#616161",
                    lw=2.6,
                    alpha=0.55,
                    label="thick: one line per group pair",
                )
            )
        if self.any_dashed:
            handles.append(
                Line2D(
                    [],
                    [],
                    color="#616161",
                    lw=1.0,
                    ls=(0, (4, 3)),
                    label="dashed: to collapsed nodes",
                )
            )
        if handles:
            self.ax.legend(
                handles=handles,
                loc="lower center",
                bbox_to_anchor=(0.5, 0.0),
                ncol=len(handles),
                fontsize=8,
                frameon=False,
                handlelength=2.4,
            )


def draw_topology(
    fabric: Fabric, path: str | Path, *, max_per_group: int = 6, title: str | None = None
) -> PictureStats:
    """Draw ``fabric`` as a tiered topology picture and write it to ``path`` (.svg or .png).

    Repeated units are collapsed so that the picture stays legible at any size: see
    :mod:`~aifabric.report.topology_plan` for the rule that ``max_per_group`` drives and
    :func:`~aifabric.report.topology_layout.layout_topology` for the placement. The output is
    deterministic.

    Raises :class:`~aifabric.errors.InputError` for another suffix, for ``max_per_group``
    below 3, or when the file cannot be written.
    """
    out = Path(path)
    fmt = FORMATS.get(out.suffix.lower())
    if fmt is None:
        raise InputError(
            f"picture file {str(out)!r}: suffix {out.suffix or '(none)'!r} is not supported; "
            "use .svg or .png"
        )
    scene = layout_topology(fabric, max_per_group=max_per_group)
    fig = _Painter(scene, fabric, title).paint()
    metadata: dict[str, str | None] = {"Date": None} if fmt == "svg" else {}
    try:
        with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "aifabric"}):
            fig.savefig(out, format=fmt, dpi=PNG_DPI, metadata=metadata)
    except OSError as exc:
        raise InputError(f"cannot write picture {str(out)!r}: {exc.strerror or exc}") from exc
    return PictureStats(
        nodes_drawn=len(scene.items),
        edges_drawn=len(scene.lines),
        collapsed_groups=scene.plan.collapsed + scene.collapsed_sites,
        path=out,
    )
