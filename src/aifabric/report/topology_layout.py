"""Layout of a topology picture: positions of every node, frame and line, in inches.

Pure geometry over the plan of :mod:`~aifabric.report.topology_plan`; nothing here imports a
drawing library, so the layout is computed and tested without matplotlib
(:mod:`~aifabric.report.topology` paints a :class:`Scene`).

Layout
------
One horizontal row per tier, top to bottom: super-spines (tier 3: ``super_spine``, ``core``),
spines (tier 2: ``spine``, ``aggregation``, ``border``), leaves (tier 1: ``leaf``, ``access``),
then the servers. Management switches and links are left out. Each site is a panel; panels
stand side by side, labelled with the site name, and inter-site links arc above them. Sites
collapse by the same rule as the units of a row.
Middleboxes (firewall, load balancer, ...) are hexagons labelled with name and kind: one
that joins two sites stands between their panels, at the height of the devices it connects;
one whose peers are all in one site stands in a column at the right of that site's panel,
level with the row it hangs off, or between the two tiers it connects. Servers sit under the
switches they plug into, in order, without overlapping.

Fitting: the plan with the most drawn entries whose widest row fits 24 in at the minimum
pitch is kept: at ``max_per_group``, fewer member heads, then fewer group heads (down to one),
and failing that a lower limit.

Edges
-----
Links are aggregated per pair of drawn nodes; an ellipsis node stands for every device it
hides, and an edge that touches one is dashed, without a label. Dense meshes are then
folded: two framed groups whose drawn members are all connected pairwise become one thick
line between the frames ("4x400G per pair"), and a node connected to every member of a framed
group one thick line to that frame ("32x400G each"). A label that many lines of one tier gap
share moves to the left margin (``gap_notes``).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Literal

from aifabric.errors import InputError
from aifabric.model import SWITCH_ROLE_TIER, Fabric, Server, Switch
from aifabric.report.topology_plan import (
    Group,
    Item,
    Plan,
    Planner,
    RowSpec,
    fit_lines,
    natural_key,
    server_units,
    split_run,
    switch_units,
)

__all__ = [
    "End",
    "Line",
    "LinkBundle",
    "Panel",
    "Scene",
    "layout_topology",
    "text_width_in",
]

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
MIDDLEBOX_R_IN = 0.36
REPEATED_LABELS = 6  # this many equal labels in one tier gap move to the margin

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
_UNIT_PLURAL = {
    "pod": "pods",
    "plane": "planes",
    "su": "SUs",
    "rack": "racks",
    "leaf": "leaves",
    "stem": "groups",
    "site": "sites",
}


@dataclass
class LinkBundle:
    """The links between one pair of drawn nodes: counts by speed (Gb/s) and by link kind."""

    speeds: Counter[float] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)


End = tuple[Literal["item", "group"], int]


@dataclass
class Line:
    """One drawn line between two nodes or frames (``End``: ``("item", idx)`` or
    ``("group", idx)``); ``heavy`` for a folded mesh or star, ``dashed`` to an ellipsis."""

    a: End
    b: End
    dashed: bool
    heavy: bool
    kind: str
    label: str | None


def text_width_in(text: str, font_pt: float) -> float:
    """Width in inches of ``text`` at ``font_pt`` (``CHAR_EM`` per glyph: no font metrics)."""
    return len(text) * CHAR_EM * font_pt / 72.0


def _bundle(agg: LinkBundle) -> str:
    return "+".join(f"{n}x{speed:g}G" for speed, n in sorted(agg.speeds.items(), reverse=True))


def _group_gap(a: Item, b: Item, groups: list[Group]) -> float:
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


# ------------------------------------------------------------------------------------- the scene


@dataclass
class Panel:
    """One site's column of the picture (``x0``..``x1`` in inches)."""

    site: str | None
    hidden: int = 0  # > 0: a "… N more sites" placeholder
    reserve: float = 0.0  # a column on the right for the panel's middleboxes
    x0: float = 0.0
    x1: float = 0.0


class Scene:
    """Everything :func:`~aifabric.report.topology.draw_topology` draws, positioned in inches
    (origin bottom left): ``items`` (nodes, centre ``x``/``y``, size ``w``/``h``), ``groups``
    (frames), ``panels`` (sites), ``lines`` (edges after aggregation and folding), ``rows``
    (tiers top to bottom, 0 the servers) at heights ``row_y``, ``width`` x ``height``."""

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

    def _panels(self, fabric: Fabric, switches: list[Switch]) -> tuple[list[Panel], int]:
        used: set[str | None] = {s.site for s in fabric.servers}
        used.update(s.site for s in switches)
        # a middlebox without a site is placed by its peers; it needs no panel of its own
        used.update(m.site for m in fabric.middleboxes if m.site is not None)
        listed = [s.name for s in fabric.sites]
        names: list[str | None] = [s for s in listed if s in used]
        names += sorted((s for s in used if s is not None and s not in listed), key=natural_key)
        if None in used or not names:
            names.append(None)
        kept, hidden, tail = split_run(names, self.limit, self.limit - 2)
        panels = [Panel(s) for s in kept]
        if hidden:
            panels.append(Panel(None, hidden=len(hidden)))
        panels += [Panel(s) for s in tail]
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

    def _row_specs(self, fabric: Fabric, switches: list[Switch]) -> list[RowSpec]:
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
        specs: list[RowSpec] = []
        for p in range(len(self.panels)):
            for tier in self.switch_tiers:
                row = by_row.get((p, tier))
                if not row:
                    continue
                units, attr = switch_units(row, tier)
                role = Counter(s.role for s in row).most_common(1)[0][0]
                noun = _ROLE_PLURAL[role]
                specs.append(
                    RowSpec(p, tier, units, _UNIT_PLURAL[attr], noun, f"tier{tier}", False, {})
                )
            if servers.get(p):
                units, attr = server_units(servers[p], leaf_of)
                boxes = len(servers[p]) > self.limit
                specs.append(
                    RowSpec(p, 0, units, _UNIT_PLURAL[attr], "servers", "server", boxes, gpus)
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

    def _fit(self, specs: list[RowSpec]) -> tuple[Plan, float]:
        """The plan with the most drawn entries whose widest row fits at the minimum pitch:
        at ``max_per_group``, fewer member heads, then fewer group heads; then a lower limit."""
        top = max(1, self.limit - 2)
        tries = [(self.limit, top, m) for m in range(top, 0, -1)]
        tries += [(self.limit, g, 1) for g in range(top - 1, 0, -1)]
        tries += [(lim, lim - 2, lim - 2) for lim in range(self.limit - 1, 2, -1)]
        plan = Plan()
        pitch = PITCH_MAX_IN
        for limit, group_head, member_head in tries:
            plan = Planner(limit, group_head, member_head).run(specs)
            pitch = self._pitch(plan)
            if pitch >= PITCH_MIN_IN:
                break
        return plan, pitch

    def _row_slots(self, plan: Plan) -> dict[tuple[int, int], float]:
        slots: dict[tuple[int, int], float] = defaultdict(float)
        last: dict[tuple[int, int], Item] = {}
        for item in plan.items:
            key = (item.panel, item.row)
            if key in last:
                slots[key] += _group_gap(last[key], item, plan.groups)
            slots[key] += item.slots
            last[key] = item
        return slots

    def _pitch(self, plan: Plan) -> float:
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
        for box in sorted(fabric.middleboxes, key=lambda m: natural_key(m.name)):
            panel = panel_of.get(box.site, -1)
            if box.site is not None and panel < 0:
                continue  # its site is collapsed
            plan.groups.append(Group(len(plan.groups), panel, -1, ()))
            group = len(plan.groups) - 1
            parts = [box.name, box.kind]
            item = Item(len(plan.items), "middlebox", panel, -1, group, "middlebox", parts, 1.0)
            plan.items.append(item)
            plan.groups[-1].items.append(item.idx)
            plan.owner[box.name] = item.idx

    def _aggregate(
        self, fabric: Fabric
    ) -> tuple[
        dict[tuple[int, int], LinkBundle],
        dict[tuple[int, int], Counter[tuple[str, float]]],
        Counter[float],
    ]:
        """Links per pair of drawn nodes, and the totals per tier gap (for the margin)."""
        owner = self.plan.owner
        tier_of = self.tier_of
        agg: dict[tuple[int, int], LinkBundle] = {}
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
                entry = agg[key] = LinkBundle()
            entry.speeds[link.speed_gbps] += 1
            entry.kinds[link.kind] += 1
        return agg, gaps, inter

    # -- geometry ----------------------------------------------------------------------------

    def _size_items(self) -> None:
        cw = CHAR_EM * self.font / 72.0
        line_h = self.font * 1.25 / 72.0
        for item in self.items:
            if item.kind == "middlebox":
                item.lines = fit_lines(item.parts, int(1.3 * MIDDLEBOX_R_IN / (CHAR_EM * 7 / 72)))
                item.w = 2 * MIDDLEBOX_R_IN
                item.h = math.sqrt(3) * MIDDLEBOX_R_IN
                continue
            item.w = item.slots * self.pitch - 0.14 * self.pitch
            item.lines = fit_lines(item.parts, int((item.w - 0.08) / cw))
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
        by_row: dict[tuple[int, int], list[Item]] = defaultdict(list)
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

    def _pack_servers(self, panel: Panel, items: list[Item]) -> None:
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

    def _mb_neighbours(self, item: Item) -> list[Item]:
        return [
            self.items[n]
            for n in sorted(self.neighbours[item.idx])
            if self.items[n].kind != "middlebox"
        ]

    def _place_middleboxes(self) -> None:
        placed: list[Item] = []
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
                (c for c in group.labels if text_width_in(c, MIN_FONT_PT) <= room), group.labels[-1]
            )

    # -- edges -------------------------------------------------------------------------------

    def _fold_edges(self) -> list[Line]:
        """Aggregated edges, with full meshes between framed groups and full stars from a node
        to a framed group folded into one line each (see the module docstring)."""
        agg = self.agg
        remaining = set(agg)
        framed = [g for g in self.groups if g.framed]
        lines: list[Line] = []

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
                        Line(("group", g1.idx), ("group", g2.idx), False, True, kind, label)
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
                        Line(
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
                Line(("item", a), ("item", b), dashed, False, kind, None if dashed else label)
            )
        self._move_repeated_labels(lines)
        return lines

    def row_of(self, end: End) -> int:
        return self.groups[end[1]].row if end[0] == "group" else self.items[end[1]].row

    def _move_repeated_labels(self, lines: list[Line]) -> None:
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


def layout_topology(fabric: Fabric, *, max_per_group: int = 6) -> Scene:
    """Plan and place the picture of ``fabric``: every node, frame and line with its position,
    without drawing anything (no matplotlib).

    ``max_per_group`` drives the collapsing rule (:mod:`~aifabric.report.topology_plan`);
    below 3 is an :class:`~aifabric.errors.InputError`. Deterministic.
    """
    if max_per_group < 3:
        raise InputError(
            f"max_per_group {max_per_group}: need at least 3 (first, '… N more', last)"
        )
    return Scene(fabric, max_per_group)
