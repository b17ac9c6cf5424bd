"""Topology picture of a fabric (SVG or PNG), readable from one leaf up to 32,768 GPUs.

Layout
------
One horizontal row per tier, top to bottom: super-spines (tier 3: ``super_spine``, ``core``),
spines (tier 2: ``spine``, ``aggregation``, ``border``), leaves (tier 1: ``leaf``, ``access``),
then the servers. Management switches and links are left out. Each site is a panel; panels
stand side by side, labelled with the site name, and inter-site links arc above them.
Middleboxes (firewall, load balancer, ...) are red hexagons labelled with name and kind: one
that joins two sites stands between their panels, at the height of the devices it connects;
one whose peers are all in one site stands in a column at the right of that site's panel,
level with the row it hangs off, or between the two tiers it connects.

Collapsing repeated units
-------------------------
Each row of a site is split into groups, its natural repeated unit:

* leaves by pod, else plane, else scalable unit (SU): leaf groups line up under spine groups;
* spines by pod, else plane;
* super-spines by plane;
* servers by SU, else rack, else the leaf they plug into.

A switch row whose members do not all carry the attribute is grouped by name stem instead
(``superspine03-07`` belongs to ``superspine03-*``; ``spine07`` to the one group ``spine-*``).

The rule, applied first to the groups of a row and then to the members of each drawn group:
a sequence of more than ``max_per_group`` entries is drawn as its first ``max_per_group - 2``
entries, one "… N more" ellipsis node that stands for the hidden run, and its last entry, so
at most ``max_per_group`` entries. Every collapsed run counts once in
:attr:`PictureStats.collapsed_groups`. When a row would still be wider than the picture allows
(24 in with 7 pt labels), fewer head entries are kept (members first, then groups, down to
one), and failing that a lower limit is used.
A site with more than ``max_per_group`` servers draws one box per server group ("su01: 32
servers x 8 GPUs") instead of single servers. Sites follow the same rule.

Edges
-----
Links are aggregated per pair of drawn nodes; an ellipsis node stands for every device it
hides, and an edge that touches one is drawn dashed, without a label. Dense meshes are then
folded: two framed groups whose drawn members are all connected pairwise become one thick
line between the frames ("4x400G per pair"), and a node connected to every member of a framed
group one thick line to that frame ("32x400G each"). Edge labels (count x speed) are placed
only where they overlap no node and no other label; the left margin always gives the link
totals between consecutive tiers.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Literal, TypeVar

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyBboxPatch, PathPatch, RegularPolygon
from matplotlib.path import Path as MplPath

from aifabric.errors import InputError
from aifabric.model import SWITCH_ROLE_TIER, Fabric, Server, Switch

__all__ = ["PictureStats", "draw_topology"]

T = TypeVar("T")

FORMATS = {".svg": "svg", ".png": "png"}

MAX_WIDTH_IN = 24.0
MIN_WIDTH_IN = 7.5
LEFT_MARGIN_IN = 1.5
RIGHT_MARGIN_IN = 0.3
PANEL_GAP_IN = 1.2
GROUP_GAP = 0.45  # in slots
PITCH_MAX_IN = 1.3
PITCH_MIN_IN = 0.85
ROW_DY_IN = 1.6
ROW_DY_MAX_IN = 2.2
TITLE_H_IN = 0.85
ARC_BAND_IN = 0.9
SITE_LABEL_H_IN = 0.35
LEGEND_H_IN = 0.55
FRAME_PAD_IN = 0.07
STRIP_H_IN = 0.2
CHAR_EM = 0.6  # average glyph width of DejaVu Sans, in em (slightly generous)
MIN_FONT_PT = 7.0
PNG_DPI = 120
MIDDLEBOX_R_IN = 0.36
REPEATED_LABELS = 6  # this many equal labels in one tier gap move to the margin

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
_ROLE_PLURAL = {
    "leaf": "leaves",
    "access": "access switches",
    "spine": "spines",
    "aggregation": "aggregation switches",
    "border": "border switches",
    "super_spine": "super-spines",
    "core": "core switches",
}
_ROW_ROLE_NAMES = {
    "leaf": "leaves",
    "access": "access",
    "spine": "spines",
    "aggregation": "aggregation",
    "border": "border",
    "super_spine": "super-spines",
    "core": "core",
}
# grouping attributes per tier, in order of preference (see the module docstring)
_GROUP_ATTRS: dict[int, tuple[str, ...]] = {
    1: ("pod", "plane", "su"),
    2: ("pod", "plane"),
    3: ("plane",),
}
_UNIT_PLURAL = {
    "pod": "pods",
    "plane": "planes",
    "su": "SUs",
    "rack": "racks",
    "leaf": "leaves",
    "stem": "groups",
    "site": "sites",
}


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


# --------------------------------------------------------------------------- model of the scene

ItemKind = Literal["switch", "server", "servers", "ellipsis", "middlebox"]


@dataclass
class _Item:
    idx: int
    kind: ItemKind
    panel: int
    row: int  # tier; 0: servers; -1: middlebox
    group: int
    style: str
    parts: list[str]  # label pieces, joined into lines that fit the box
    slots: float  # width in layout slots
    lines: list[str] = field(default_factory=list)
    x: float = 0.0
    y: float = 0.0
    w: float = 0.0
    h: float = 0.0


@dataclass
class _Group:
    idx: int
    panel: int
    row: int
    labels: tuple[str, ...]  # frame label candidates, longest first
    items: list[int] = field(default_factory=list)
    framed: bool = False
    x0: float = 0.0
    x1: float = 0.0
    y0: float = 0.0
    y1: float = 0.0
    label: str = ""


@dataclass
class _Unit:
    """A group of devices of one row before collapsing."""

    key: str | None
    members: list[str]


@dataclass
class _RowSpec:
    panel: int
    row: int
    units: list[_Unit]
    unit_plural: str
    noun: str
    style: str
    boxes: bool
    gpus: dict[str, int]


@dataclass
class _Plan:
    items: list[_Item] = field(default_factory=list)
    groups: list[_Group] = field(default_factory=list)
    owner: dict[str, int] = field(default_factory=dict)
    collapsed: int = 0


@dataclass
class _Agg:
    speeds: Counter[float] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)


End = tuple[Literal["item", "group"], int]
_LineStyle = tuple[float, str | tuple[float, tuple[float, float]], float]


@dataclass
class _Line:
    a: End
    b: End
    dashed: bool
    heavy: bool
    kind: str
    label: str | None


# --------------------------------------------------------------------------------- small helpers


def _natural(text: str | None) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders ``leaf2`` before ``leaf10`` (None last)."""
    if text is None:
        return ((2, ""),)
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", text) if part
    )


def _split(seq: Sequence[T], limit: int, head: int) -> tuple[list[T], list[T], list[T]]:
    """The collapsing rule: ``(drawn head, hidden run, drawn tail)``."""
    if len(seq) <= limit:
        return list(seq), [], []
    head = max(1, min(head, len(seq) - 2))
    return list(seq[:head]), list(seq[head:-1]), [seq[-1]]


def _stem(name: str) -> str:
    stem = re.sub(r"[-_.]?\d+$", "", name)
    return f"{stem}-*" if stem != name and stem else name


def _text_w(text: str, font_pt: float) -> float:
    return len(text) * CHAR_EM * font_pt / 72.0


def _wrap(text: str, max_chars: int) -> list[str]:
    """Break ``text`` into lines of at most ``max_chars``: after a separator, else between
    letters and digits, else anywhere."""
    max_chars = max(max_chars, 3)
    lines: list[str] = []
    rest = text
    while len(rest) > max_chars:
        cut = -1
        for i in range(min(max_chars, len(rest) - 1), 0, -1):
            if rest[i - 1] in "-_. :/":
                cut = i
                break
        if cut < 0:
            for i in range(min(max_chars, len(rest) - 1), 0, -1):
                if rest[i - 1].isalpha() != rest[i].isalpha():
                    cut = i
                    break
        if cut < 0:
            cut = max_chars
        lines.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    lines.append(rest)
    return lines


def _bundle(agg: _Agg) -> str:
    return "+".join(f"{n}x{speed:g}G" for speed, n in sorted(agg.speeds.items(), reverse=True))


def _plural(n: int, singular: str, plural: str) -> str:
    return f"{n:,} {singular if n == 1 else plural}"


def _group_gap(a: _Item, b: _Item, groups: list[_Group]) -> float:
    """Extra room (in slots) between neighbours of a row: a gap between groups, none between
    the server boxes of one row."""
    if a.group == b.group:
        return 0.0
    if a.row == 0 and not groups[a.group].framed and not groups[b.group].framed:
        return 0.0
    return GROUP_GAP


def _spread_runs(
    desired: list[float | None], widths: list[float], gaps: list[float]
) -> list[float | None]:
    """Consecutive items that want the same x are spread side by side, centred on it."""
    out = list(desired)
    k = 0
    while k < len(out):
        want = desired[k]
        end = k + 1
        while (
            end < len(out)
            and want is not None
            and desired[end] is not None
            and abs((desired[end] or 0.0) - want) < 1e-6
        ):
            end += 1
        if want is not None and end - k > 1:
            span = sum(widths[k:end]) + sum(gaps[k + 1 : end])
            x = want - span / 2
            for j in range(k, end):
                if j > k:
                    x += gaps[j]
                out[j] = x + widths[j] / 2
                x += widths[j]
        k = end
    return out


# ------------------------------------------------------------------------------------ grouping


def _switch_units(switches: list[Switch], tier: int) -> tuple[list[_Unit], str]:
    for attr in _GROUP_ATTRS.get(tier, ()):
        values = [getattr(s, attr) for s in switches]
        if all(v is not None for v in values):
            keys = [f"plane {v}" if attr == "plane" else str(v) for v in values]
            return _units(switches, keys), attr
    return _units(switches, [_stem(s.name) for s in switches]), "stem"


def _units(devices: Sequence[Switch | Server], keys: list[str]) -> list[_Unit]:
    by_key: dict[str, list[str]] = defaultdict(list)
    for device, key in zip(devices, keys, strict=True):
        by_key[key].append(device.name)
    if len(by_key) == 1:
        only = [d.name for d in devices]
        return [_Unit(None, sorted(only, key=_natural))]
    return [
        _Unit(key, sorted(names, key=_natural))
        for key, names in sorted(by_key.items(), key=lambda kv: _natural(kv[0]))
    ]


def _server_units(servers: list[Server], leaf_of: dict[str, str]) -> tuple[list[_Unit], str]:
    for attr in ("su", "rack"):
        values = [getattr(s, attr) for s in servers]
        if all(v is not None for v in values):
            return _units(servers, [str(v) for v in values]), attr
    if all(s.name in leaf_of for s in servers):
        return _units(servers, [leaf_of[s.name] for s in servers]), "leaf"
    return [_Unit(None, sorted((s.name for s in servers), key=_natural))], "stem"


class _Planner:
    """Turns row specs into drawn items and groups by the collapsing rule."""

    def __init__(self, limit: int, group_head: int, member_head: int) -> None:
        self.limit = limit
        self.group_head = group_head
        self.member_head = member_head
        self.plan = _Plan()

    def run(self, specs: list[_RowSpec]) -> _Plan:
        for spec in specs:
            kept, hidden, tail = _split(spec.units, self.limit, self.group_head)
            for unit in kept:
                self._unit(spec, unit)
            if hidden:
                self.plan.collapsed += 1
                devices = sum(len(u.members) for u in hidden)
                group = self._group(spec, ())
                parts = [f"… {len(hidden)} more", spec.unit_plural, f"({devices:,} {spec.noun})"]
                slots = 1.2 if spec.boxes else 1.5
                idx = self._item("ellipsis", spec, group, "ellipsis", parts, slots)
                for unit in hidden:
                    for name in unit.members:
                        self.plan.owner[name] = idx
            for unit in tail:
                self._unit(spec, unit)
        return self.plan

    def _group(self, spec: _RowSpec, labels: tuple[str, ...]) -> int:
        self.plan.groups.append(_Group(len(self.plan.groups), spec.panel, spec.row, labels))
        return len(self.plan.groups) - 1

    def _item(
        self, kind: ItemKind, spec: _RowSpec, group: int, style: str, parts: list[str], slots: float
    ) -> int:
        item = _Item(len(self.plan.items), kind, spec.panel, spec.row, group, style, parts, slots)
        self.plan.items.append(item)
        self.plan.groups[group].items.append(item.idx)
        return item.idx

    def _unit(self, spec: _RowSpec, unit: _Unit) -> None:
        n = len(unit.members)
        owner = self.plan.owner
        gpus = {spec.gpus.get(m, 0) for m in unit.members}
        per_server = f"x {next(iter(gpus))} GPUs" if len(gpus) == 1 else ""
        if spec.boxes:
            total = sum(spec.gpus.get(m, 0) for m in unit.members)
            parts = [_plural(n, "server", "servers"), per_server or f"{total:,} GPUs"]
            if unit.key is not None:
                parts.insert(0, f"{unit.key}:")
            idx = self._item("servers", spec, self._group(spec, ()), "server", parts, 1.0)
            for name in unit.members:
                owner[name] = idx
            return
        singular = "leaf" if spec.noun == "leaves" else spec.noun.removesuffix("s")
        count = _plural(n, singular, spec.noun)
        if spec.row == 0 and per_server:
            count += f" {per_server}"
        labels = (f"{unit.key}: {count}", f"{unit.key} ({n})", unit.key) if unit.key else (count,)
        group = self._group(spec, labels)
        kind: ItemKind = "server" if spec.row == 0 else "switch"
        kept, hidden, tail = _split(unit.members, self.limit, self.member_head)
        for name in kept:
            owner[name] = self._item(kind, spec, group, spec.style, [name], 1.0)
        if hidden:
            self.plan.collapsed += 1
            idx = self._item("ellipsis", spec, group, "ellipsis", [f"… {len(hidden)} more"], 1.0)
            for name in hidden:
                owner[name] = idx
        for name in tail:
            owner[name] = self._item(kind, spec, group, spec.style, [name], 1.0)
        self.plan.groups[group].framed = len(self.plan.groups[group].items) > 1


def _fit_lines(parts: list[str], max_chars: int) -> list[str]:
    """Join label ``parts`` greedily into lines of at most ``max_chars`` (long parts wrap)."""
    lines: list[str] = []
    for part in parts:
        if lines and len(lines[-1]) + 1 + len(part) <= max_chars:
            lines[-1] += " " + part
        else:
            lines.extend(_wrap(part, max_chars))
    return lines


# ------------------------------------------------------------------------------------- the scene


@dataclass
class _Panel:
    site: str | None
    hidden: int = 0  # > 0: a "… N more sites" placeholder
    reserve: float = 0.0  # a column on the right for the panel's middleboxes
    x0: float = 0.0
    x1: float = 0.0


class _Scene:
    """Everything :func:`draw_topology` draws, positioned in inches (origin bottom left)."""

    def __init__(self, fabric: Fabric, limit: int) -> None:
        self.fabric = fabric
        self.limit = limit
        switches = [s for s in fabric.switches if s.role != "management"]
        self.tier_of: dict[str, int] = {s.name: SWITCH_ROLE_TIER[s.role] for s in switches}
        self.tier_of.update((s.name, 0) for s in fabric.servers)
        tiers = sorted({SWITCH_ROLE_TIER[s.role] for s in switches}, reverse=True)
        self.rows: list[int] = tiers + ([0] if fabric.servers else [])
        self.switch_tiers = tiers
        self.row_roles: dict[int, list[str]] = defaultdict(list)
        for role in SWITCH_ROLE_TIER:
            if any(s.role == role for s in switches):
                self.row_roles[SWITCH_ROLE_TIER[role]].append(_ROW_ROLE_NAMES[role])

        self.panels, self.collapsed_sites = self._panels(fabric, switches)
        self._reserve_middlebox_columns(fabric)
        specs = self._row_specs(fabric, switches)
        self.plan, self.pitch = self._fit(specs)
        self._add_middleboxes(fabric)
        self.items = self.plan.items
        self.groups = self.plan.groups
        self.font = 8.0 if self.pitch >= 0.95 else MIN_FONT_PT
        self.agg, self.gap_links, self.inter_site = self._aggregate(fabric)
        self.neighbours: dict[int, set[int]] = defaultdict(set)
        for a, b in self.agg:
            self.neighbours[a].add(b)
            self.neighbours[b].add(a)
        self.has_arcs = any(self.items[a].row == self.items[b].row >= 0 for a, b in self.agg)
        self.width = 0.0
        self.height = 0.0
        self.row_y: dict[int, float] = {}
        self.arc_base = 0.0
        self.row_h: dict[int, float] = {}
        self._size_items()
        self._place_horizontal()
        self.row_dy = min(ROW_DY_MAX_IN, max(ROW_DY_IN, 0.085 * self.width))
        self._place_vertical()
        self._place_middleboxes()
        self._frames()
        self.gap_notes: dict[tuple[int, int], str] = {}
        self.lines = self._fold_edges()

    # -- structure ---------------------------------------------------------------------------

    def _panels(self, fabric: Fabric, switches: list[Switch]) -> tuple[list[_Panel], int]:
        used: set[str | None] = {s.site for s in fabric.servers}
        used.update(s.site for s in switches)
        # a middlebox without a site is placed by its peers; it needs no panel of its own
        used.update(m.site for m in fabric.middleboxes if m.site is not None)
        listed = [s.name for s in fabric.sites]
        names: list[str | None] = [s for s in listed if s in used]
        names += sorted((s for s in used if s is not None and s not in listed), key=_natural)
        if None in used or not names:
            names.append(None)
        kept, hidden, tail = _split(names, self.limit, self.limit - 2)
        panels = [_Panel(s) for s in kept]
        if hidden:
            panels.append(_Panel(None, hidden=len(hidden)))
        panels += [_Panel(s) for s in tail]
        return panels, 1 if hidden else 0

    def _reserve_middlebox_columns(self, fabric: Fabric) -> None:
        """A middlebox whose peers are all in one site gets a column at the right of that
        site's panel, so that it never sits on top of the lines between the tiers."""
        if not fabric.middleboxes:
            return
        boxes = {m.name for m in fabric.middleboxes}
        site_of: dict[str, str | None] = {s.name: s.site for s in fabric.switches}
        site_of.update((s.name, s.site) for s in fabric.servers)
        peers: dict[str, set[str | None]] = defaultdict(set)
        for link in fabric.links:
            a, b = link.a.device, link.b.device
            if a in boxes and b in site_of:
                peers[a].add(site_of[b])
            if b in boxes and a in site_of:
                peers[b].add(site_of[a])
        panel_of = {p.site: i for i, p in enumerate(self.panels) if not p.hidden}
        for sites in peers.values():
            if len(sites) == 1 and (site := next(iter(sites))) in panel_of:
                self.panels[panel_of[site]].reserve = 2 * MIDDLEBOX_R_IN + 0.5

    def _row_specs(self, fabric: Fabric, switches: list[Switch]) -> list[_RowSpec]:
        panel_of = {p.site: i for i, p in enumerate(self.panels) if not p.hidden}
        by_row: dict[tuple[int, int], list[Switch]] = defaultdict(list)
        for sw in switches:
            if sw.site in panel_of:
                by_row[(panel_of[sw.site], SWITCH_ROLE_TIER[sw.role])].append(sw)
        servers: dict[int, list[Server]] = defaultdict(list)
        for srv in fabric.servers:
            if srv.site in panel_of:
                servers[panel_of[srv.site]].append(srv)
        leaf_of: dict[str, str] = {}
        if any(s.su is None and s.rack is None for s in fabric.servers):
            leaf_of = self._first_leaf(fabric)
        gpus = {s.name: s.gpus for s in fabric.servers}
        specs: list[_RowSpec] = []
        for p in range(len(self.panels)):
            for tier in self.switch_tiers:
                row = by_row.get((p, tier))
                if not row:
                    continue
                units, attr = _switch_units(row, tier)
                role = Counter(s.role for s in row).most_common(1)[0][0]
                noun = _ROLE_PLURAL[role]
                specs.append(
                    _RowSpec(p, tier, units, _UNIT_PLURAL[attr], noun, f"tier{tier}", False, {})
                )
            if servers.get(p):
                units, attr = _server_units(servers[p], leaf_of)
                boxes = len(servers[p]) > self.limit
                specs.append(
                    _RowSpec(p, 0, units, _UNIT_PLURAL[attr], "servers", "server", boxes, gpus)
                )
        return specs

    def _first_leaf(self, fabric: Fabric) -> dict[str, str]:
        servers = {s.name for s in fabric.servers}
        leaf_of: dict[str, str] = {}
        for link in fabric.links:
            for a, b in ((link.a.device, link.b.device), (link.b.device, link.a.device)):
                if a in servers and a not in leaf_of and self.tier_of.get(b, 0) >= 1:
                    leaf_of[a] = b
        return leaf_of

    def _fit(self, specs: list[_RowSpec]) -> tuple[_Plan, float]:
        """The plan with the most drawn entries whose widest row fits at the minimum pitch:
        at ``max_per_group``, fewer member heads, then fewer group heads; then a lower limit."""
        top = max(1, self.limit - 2)
        tries = [(self.limit, top, m) for m in range(top, 0, -1)]
        tries += [(self.limit, g, 1) for g in range(top - 1, 0, -1)]
        tries += [(lim, lim - 2, lim - 2) for lim in range(self.limit - 1, 2, -1)]
        plan = _Plan()
        pitch = PITCH_MAX_IN
        for limit, group_head, member_head in tries:
            plan = _Planner(limit, group_head, member_head).run(specs)
            pitch = self._pitch(plan)
            if pitch >= PITCH_MIN_IN:
                break
        return plan, pitch

    def _row_slots(self, plan: _Plan) -> dict[tuple[int, int], float]:
        slots: dict[tuple[int, int], float] = defaultdict(float)
        last: dict[tuple[int, int], _Item] = {}
        for item in plan.items:
            key = (item.panel, item.row)
            if key in last:
                slots[key] += _group_gap(last[key], item, plan.groups)
            slots[key] += item.slots
            last[key] = item
        return slots

    def _pitch(self, plan: _Plan) -> float:
        slots = self._row_slots(plan)
        per_panel = [
            max((v for (p, _), v in slots.items() if p == i), default=0.0)
            for i in range(len(self.panels))
        ]
        fixed = LEFT_MARGIN_IN + RIGHT_MARGIN_IN + PANEL_GAP_IN * (len(self.panels) - 1)
        fixed += sum(1.2 if p.hidden else p.reserve for p in self.panels)
        total = sum(per_panel)
        if total <= 0:
            return PITCH_MAX_IN
        return min(PITCH_MAX_IN, (MAX_WIDTH_IN - fixed) / total)

    def _add_middleboxes(self, fabric: Fabric) -> None:
        panel_of = {p.site: i for i, p in enumerate(self.panels) if not p.hidden}
        plan = self.plan
        for box in sorted(fabric.middleboxes, key=lambda m: _natural(m.name)):
            panel = panel_of.get(box.site, -1)
            if box.site is not None and panel < 0:
                continue  # its site is collapsed
            plan.groups.append(_Group(len(plan.groups), panel, -1, ()))
            group = len(plan.groups) - 1
            parts = [box.name, box.kind]
            item = _Item(len(plan.items), "middlebox", panel, -1, group, "middlebox", parts, 1.0)
            plan.items.append(item)
            plan.groups[-1].items.append(item.idx)
            plan.owner[box.name] = item.idx

    def _aggregate(
        self, fabric: Fabric
    ) -> tuple[
        dict[tuple[int, int], _Agg],
        dict[tuple[int, int], Counter[tuple[str, float]]],
        Counter[float],
    ]:
        """Links per pair of drawn nodes, and the totals per tier gap (for the margin)."""
        owner = self.plan.owner
        tier_of = self.tier_of
        agg: dict[tuple[int, int], _Agg] = {}
        gaps: dict[tuple[int, int], Counter[tuple[str, float]]] = defaultdict(Counter)
        inter: Counter[float] = Counter()
        for link in fabric.links:
            da, db = link.a.device, link.b.device
            if link.kind == "inter-site":
                inter[link.speed_gbps] += 1
            else:
                ta, tb = tier_of.get(da), tier_of.get(db)
                if ta is not None and tb is not None and ta != tb:
                    gaps[(max(ta, tb), min(ta, tb))][(link.kind, link.speed_gbps)] += 1
            ia, ib = owner.get(da), owner.get(db)
            if ia is None or ib is None or ia == ib or link.kind == "management":
                continue
            key = (ia, ib) if ia < ib else (ib, ia)
            entry = agg.get(key)
            if entry is None:
                entry = agg[key] = _Agg()
            entry.speeds[link.speed_gbps] += 1
            entry.kinds[link.kind] += 1
        return agg, gaps, inter

    # -- geometry ----------------------------------------------------------------------------

    def _size_items(self) -> None:
        cw = CHAR_EM * self.font / 72.0
        line_h = self.font * 1.25 / 72.0
        for item in self.items:
            if item.kind == "middlebox":
                item.lines = _fit_lines(item.parts, int(1.3 * MIDDLEBOX_R_IN / (CHAR_EM * 7 / 72)))
                item.w = 2 * MIDDLEBOX_R_IN
                item.h = math.sqrt(3) * MIDDLEBOX_R_IN
                continue
            item.w = item.slots * self.pitch - 0.14 * self.pitch
            item.lines = _fit_lines(item.parts, int((item.w - 0.08) / cw))
        for row in self.rows:
            n = max((len(i.lines) for i in self.items if i.row == row), default=1)
            self.row_h[row] = n * line_h + 0.14
        for item in self.items:
            if item.row >= 0:
                item.h = self.row_h[item.row]

    def _place_vertical(self) -> None:
        depth = TITLE_H_IN + (ARC_BAND_IN if self.has_arcs else 0.0)
        if len(self.panels) > 1:
            depth += SITE_LABEL_H_IN
        depth += STRIP_H_IN + FRAME_PAD_IN
        centre: dict[int, float] = {}
        prev: int | None = None
        for row in self.rows:
            h = self.row_h[row]
            if prev is None:
                centre[row] = depth + h / 2
            else:
                need = self.row_h[prev] / 2 + h / 2 + STRIP_H_IN + 2 * FRAME_PAD_IN + 0.7
                centre[row] = centre[prev] + max(self.row_dy, need)
            prev = row
        bottom = (centre[prev] + self.row_h[prev] / 2) if prev is not None else depth
        self.height = bottom + FRAME_PAD_IN + 0.2 + LEGEND_H_IN
        for row, d in centre.items():
            self.row_y[row] = self.height - d
        if self.rows:
            top = self.rows[0]
            self.arc_base = self.row_y[top] + self.row_h[top] / 2 + FRAME_PAD_IN + STRIP_H_IN
            if len(self.panels) > 1:
                self.arc_base += SITE_LABEL_H_IN
        for item in self.items:
            if item.row >= 0:
                item.y = self.row_y[item.row]

    def _place_horizontal(self) -> None:
        p = self.pitch
        slots = self._row_slots(self.plan)
        widths: list[float] = []
        for i, panel in enumerate(self.panels):
            if panel.hidden:
                widths.append(1.2)
            else:
                row_w = max((v for (q, _), v in slots.items() if q == i), default=1.0) * p
                widths.append(row_w + panel.reserve)
        used = LEFT_MARGIN_IN + RIGHT_MARGIN_IN + sum(widths) + PANEL_GAP_IN * (len(widths) - 1)
        if any(m.kind == "middlebox" and not self._mb_neighbours(m) for m in self.items):
            used += 1.2  # a column for middleboxes without links
        self.width = max(MIN_WIDTH_IN, used)
        x = LEFT_MARGIN_IN + (self.width - used) / 2
        for panel, w in zip(self.panels, widths, strict=True):
            panel.x0, panel.x1 = x, x + w
            x += w + PANEL_GAP_IN
        by_row: dict[tuple[int, int], list[_Item]] = defaultdict(list)
        for item in self.items:
            if item.row >= 0:
                by_row[(item.panel, item.row)].append(item)
        for (panel_i, row), items in by_row.items():
            panel = self.panels[panel_i]
            if row == 0:
                continue
            cursor = (
                panel.x0 + (panel.x1 - panel.reserve - panel.x0 - slots[(panel_i, row)] * p) / 2
            )
            last = items[0].group
            for item in items:
                if item.group != last:
                    cursor += GROUP_GAP * p
                    last = item.group
                item.x = cursor + item.slots * p / 2
                cursor += item.slots * p
        for (panel_i, row), items in by_row.items():
            if row == 0:
                self._pack_servers(self.panels[panel_i], items)

    def _pack_servers(self, panel: _Panel, items: list[_Item]) -> None:
        """Servers sit under the switches they plug into, in order, without overlapping."""
        p = self.pitch
        gaps = [0.0] + [(0.14 + _group_gap(a, b, self.groups)) * p for a, b in pairwise(items)]
        desired: list[float | None] = []
        for item in items:
            above = [self.items[n].x for n in self.neighbours[item.idx] if self.items[n].row > 0]
            desired.append(sum(above) / len(above) if above else None)
        total = sum(i.w for i in items) + sum(gaps)
        if all(d is None for d in desired):
            start = panel.x0 + (panel.x1 - panel.reserve - panel.x0 - total) / 2
            desired = []
            for item, gap in zip(items, gaps, strict=True):
                start += gap
                desired.append(start + item.w / 2)
                start += item.w
        desired = _spread_runs(desired, [i.w for i in items], gaps)
        xs: list[float] = []
        for k, item in enumerate(items):
            lo = (
                panel.x0 + item.w / 2
                if k == 0
                else xs[-1] + items[k - 1].w / 2 + gaps[k] + item.w / 2
            )
            want = desired[k]
            xs.append(max(lo, want if want is not None else lo))
        for k in range(len(items) - 1, -1, -1):
            item = items[k]
            if k == len(items) - 1:
                hi = max(panel.x1 - panel.reserve, panel.x0 + total) - item.w / 2
            else:
                hi = xs[k + 1] - items[k + 1].w / 2 - gaps[k + 1] - item.w / 2
            xs[k] = min(xs[k], hi)
        for item, x in zip(items, xs, strict=True):
            item.x = x

    def _mb_neighbours(self, item: _Item) -> list[_Item]:
        return [
            self.items[n]
            for n in sorted(self.neighbours[item.idx])
            if self.items[n].kind != "middlebox"
        ]

    def _place_middleboxes(self) -> None:
        placed: list[_Item] = []
        spare_x = self.panels[-1].x1 + PANEL_GAP_IN if self.panels else LEFT_MARGIN_IN
        spare_y = self.row_y[self.rows[0]] if self.rows else self.height / 2
        for item in self.items:
            if item.kind != "middlebox":
                continue
            near = self._mb_neighbours(item)
            if not near:
                item.x, item.y = spare_x, spare_y
                spare_y -= 2.3 * MIDDLEBOX_R_IN
                placed.append(item)
                continue
            panels = sorted({n.panel for n in near})
            ys = [n.y for n in near]
            if len(panels) > 1:
                item.x = self.panels[panels[0]].x1 + PANEL_GAP_IN / 2
                item.y = sum(ys) / len(ys)
            else:
                panel = self.panels[panels[0]]
                if panel.reserve:
                    item.x = panel.x1 - panel.reserve / 2
                else:
                    item.x = sum(n.x for n in near) / len(near)
                if max(ys) - min(ys) > 0.01:
                    item.y = (max(ys) + min(ys)) / 2
                elif panel.reserve:
                    item.y = ys[0]
                else:
                    row = near[0].row
                    pos = self.rows.index(row) if row in self.rows else 0
                    up = pos > 0
                    item.y = ys[0] + (self.row_dy / 2 if up else -self.row_dy / 2)
            while any(
                math.dist((item.x, item.y), (o.x, o.y)) < 2.2 * MIDDLEBOX_R_IN for o in placed
            ):
                item.y -= 2.3 * MIDDLEBOX_R_IN
            placed.append(item)

    def _frames(self) -> None:
        for group in self.groups:
            if not group.framed:
                continue
            members = [self.items[i] for i in group.items]
            group.x0 = min(i.x - i.w / 2 for i in members) - FRAME_PAD_IN
            group.x1 = max(i.x + i.w / 2 for i in members) + FRAME_PAD_IN
            group.y0 = min(i.y - i.h / 2 for i in members) - FRAME_PAD_IN
            group.y1 = max(i.y + i.h / 2 for i in members) + FRAME_PAD_IN + STRIP_H_IN
            room = group.x1 - group.x0 - 0.1
            group.label = next(
                (c for c in group.labels if _text_w(c, MIN_FONT_PT) <= room), group.labels[-1]
            )

    # -- edges -------------------------------------------------------------------------------

    def _fold_edges(self) -> list[_Line]:
        """Aggregated edges, with full meshes between framed groups and full stars from a node
        to a framed group folded into one line each (see the module docstring)."""
        agg = self.agg
        remaining = set(agg)
        framed = [g for g in self.groups if g.framed]
        lines: list[_Line] = []

        def key(a: int, b: int) -> tuple[int, int]:
            return (a, b) if a < b else (b, a)

        def summary(keys: list[tuple[int, int]], suffix: str) -> tuple[str, str | None]:
            kinds: Counter[str] = Counter()
            for k in keys:
                kinds.update(agg[k].kinds)
            solid = [
                _bundle(agg[k])
                for k in keys
                if self.items[k[0]].kind != "ellipsis" and self.items[k[1]].kind != "ellipsis"
            ]
            label = None
            if solid and len(set(solid)) == 1:
                label = f"{solid[0]}{suffix}"
            return kinds.most_common(1)[0][0], label

        for i, g1 in enumerate(framed):
            for g2 in framed[i + 1 :]:
                if g1.row == g2.row and g1.panel == g2.panel:
                    continue
                keys = [key(a, b) for a in g1.items for b in g2.items]
                if all(k in remaining for k in keys):
                    remaining.difference_update(keys)
                    kind, label = summary(keys, " per pair")
                    lines.append(
                        _Line(("group", g1.idx), ("group", g2.idx), False, True, kind, label)
                    )
        for item in self.items:
            for g in framed:
                if (
                    len(g.items) < (2 if item.kind == "middlebox" else 3)
                    or g.idx == item.group
                    or (g.row == item.row and g.panel == item.panel)
                ):
                    continue
                keys = [key(item.idx, b) for b in g.items]
                if all(k in remaining for k in keys):
                    remaining.difference_update(keys)
                    kind, label = summary(keys, " each")
                    dashed = item.kind == "ellipsis"
                    lines.append(
                        _Line(
                            ("item", item.idx),
                            ("group", g.idx),
                            dashed,
                            True,
                            kind,
                            None if dashed else label,
                        )
                    )
        for a, b in sorted(remaining):
            dashed = self.items[a].kind == "ellipsis" or self.items[b].kind == "ellipsis"
            kind, label = summary([(a, b)], "")
            lines.append(
                _Line(("item", a), ("item", b), dashed, False, kind, None if dashed else label)
            )
        self._move_repeated_labels(lines)
        return lines

    def row_of(self, end: End) -> int:
        return self.groups[end[1]].row if end[0] == "group" else self.items[end[1]].row

    def _move_repeated_labels(self, lines: list[_Line]) -> None:
        """A label that many lines of one tier gap (or many arcs over one row) share is said
        once, in the left margin."""
        same: dict[tuple[int, int], Counter[str]] = defaultdict(Counter)
        for line in lines:
            ra, rb = self.row_of(line.a), self.row_of(line.b)
            if line.label and min(ra, rb) >= 0:
                same[(max(ra, rb), min(ra, rb))][line.label] += 1
        for gap, counts in same.items():
            label, n = counts.most_common(1)[0]
            if n < REPEATED_LABELS:
                continue
            self.gap_notes[gap] = f"per line: {label}"
            for line in lines:
                ra, rb = self.row_of(line.a), self.row_of(line.b)
                if line.label == label and (max(ra, rb), min(ra, rb)) == gap:
                    line.label = None

    def stub(self, end: End, at: tuple[float, float]) -> tuple[float, float] | None:
        """Where a line leaving a framed node at ``at`` (its top or bottom) crosses the frame."""
        if end[0] != "item":
            return None
        item = self.items[end[1]]
        group = self.groups[item.group]
        if not group.framed:
            return None
        if at[1] >= item.y + item.h / 2 - 1e-9:
            return at[0], group.y1
        if at[1] <= item.y - item.h / 2 + 1e-9:
            return at[0], group.y0
        return None

    def is_middlebox(self, end: End) -> bool:
        return end[0] == "item" and self.items[end[1]].kind == "middlebox"

    def box(self, end: End) -> tuple[float, float, float, float]:
        """``(x0, y0, x1, y1)`` of a node or a frame."""
        if end[0] == "group":
            g = self.groups[end[1]]
            return g.x0, g.y0, g.x1, g.y1
        i = self.items[end[1]]
        return i.x - i.w / 2, i.y - i.h / 2, i.x + i.w / 2, i.y + i.h / 2


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
    def __init__(self, scene: _Scene, fabric: Fabric, title: str | None) -> None:
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
            _plural(len(fabric.servers), "server", "servers"),
            f"{_plural(tiers, 'switch tier', 'switch tiers')}",
            _plural(
                sum(1 for s in fabric.switches if s.role != "management"), "switch", "switches"
            ),
            _plural(len(fabric.links), "link", "links"),
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
                _wrap(name, 18)[0] if len(name) > 18 else name,
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
                text += _wrap(scene.gap_notes[(upper, lower)], 20)
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
                    text += _wrap(note, 20)
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
            self.obstacles.append((g.x0, y - 0.07, g.x0 + 0.06 + _text_w(g.label, 7), y + 0.07))

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
            lw, ls, alpha = self._style(_Line(("item", 0), ("item", 0), dashed, heavy, "", None))
            self.ax.add_collection(
                LineCollection(
                    segments, colors=colour, linewidths=lw, linestyles=ls, alpha=alpha, zorder=2
                )
            )
        for text, pa, pb in labels:
            self._edge_label(text, pa, pb)

    @staticmethod
    def _style(line: _Line) -> _LineStyle:
        """``(width, dash pattern, alpha)`` of a line."""
        if line.dashed:
            return 0.9, (0.0, (4.0, 3.0)), 0.45
        if line.heavy:
            return 2.6, "-", 0.55
        return 0.9, "-", 0.85

    def _edge_label(self, text: str, pa: tuple[float, float], pb: tuple[float, float]) -> None:
        w = _text_w(text, MIN_FONT_PT) + 0.06
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

    Repeated units are collapsed so that the picture stays legible at any size: see the
    module docstring for the rule that ``max_per_group`` drives. The output is deterministic.

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
    if max_per_group < 3:
        raise InputError(
            f"max_per_group {max_per_group}: need at least 3 (first, '… N more', last)"
        )
    scene = _Scene(fabric, max_per_group)
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
