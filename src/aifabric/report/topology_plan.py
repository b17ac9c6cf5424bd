"""Planning a topology picture: which devices are drawn, grouped how, and what collapses.

Pure data, no geometry and no drawing (:mod:`~aifabric.report.topology_layout` places what is
planned here, :mod:`~aifabric.report.topology` paints it).

Grouping
--------
Each row of a site is split into groups, its natural repeated unit:

* leaves by pod, else plane, else scalable unit (SU): leaf groups line up under spine groups;
* spines by pod, else plane;
* super-spines by plane;
* servers by SU, else rack, else the leaf they plug into.

A switch row whose members do not all carry the attribute is grouped by name stem instead
(``superspine03-07`` belongs to ``superspine03-*``; ``spine07`` to the one group ``spine-*``).

Collapsing repeated units
-------------------------
The rule, applied first to the groups of a row and then to the members of each drawn group:
a sequence of more than ``max_per_group`` entries is drawn as its first ``max_per_group - 2``
entries, one "… N more" ellipsis node that stands for the hidden run, and its last entry, so
at most ``max_per_group`` entries (:func:`split_run`). Every collapsed run counts once in
:attr:`Plan.collapsed`. A row of servers with more than ``max_per_group`` servers is drawn as
one box per server group ("su01: 32 servers x 8 GPUs") instead of single servers.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from aifabric.model import Server, Switch

__all__ = [
    "Group",
    "Item",
    "ItemKind",
    "Plan",
    "Planner",
    "RowSpec",
    "Unit",
    "fit_lines",
    "natural_key",
    "plural",
    "server_units",
    "split_run",
    "switch_units",
    "wrap_text",
]

T = TypeVar("T")

# grouping attributes per tier, in order of preference (see the module docstring)
_GROUP_ATTRS: dict[int, tuple[str, ...]] = {
    1: ("pod", "plane", "su"),
    2: ("pod", "plane"),
    3: ("plane",),
}


# --------------------------------------------------------------------------- model of the scene

ItemKind = Literal["switch", "server", "servers", "ellipsis", "middlebox"]


@dataclass
class Item:
    """One drawn node: a switch, a server, a box of servers, an ellipsis or a middlebox.

    ``x``, ``y`` (centre), ``w``, ``h`` are in inches from the picture's bottom left corner,
    set by :class:`~aifabric.report.topology_layout.Scene`."""

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
class Group:
    """The drawn entries of one unit of a row; ``framed`` groups get a frame (``x0``..``y1``,
    in inches) labelled ``label``."""

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
class Unit:
    """A group of devices of one row before collapsing."""

    key: str | None
    members: list[str]


@dataclass
class RowSpec:
    """One row of one panel to plan: its units, the words for its labels, and whether servers
    are drawn as one box per unit (``boxes``)."""

    panel: int
    row: int
    units: list[Unit]
    unit_plural: str
    noun: str
    style: str
    boxes: bool
    gpus: dict[str, int]


@dataclass
class Plan:
    """What :class:`Planner` chose to draw: items, groups, the drawn item standing for each
    device (``owner``: an ellipsis stands for every device it hides), collapsed runs."""

    items: list[Item] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)
    owner: dict[str, int] = field(default_factory=dict)
    collapsed: int = 0


# --------------------------------------------------------------------------------- small helpers


def natural_key(text: str | None) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders ``leaf2`` before ``leaf10`` (None last)."""
    if text is None:
        return ((2, ""),)
    return tuple(
        (0, int(part)) if part.isdecimal() else (1, part)
        for part in re.split(r"(\d+)", text)
        if part
    )


def split_run(seq: Sequence[T], limit: int, head: int) -> tuple[list[T], list[T], list[T]]:
    """The collapsing rule: ``(drawn head, hidden run, drawn tail)``."""
    if len(seq) <= limit:
        return list(seq), [], []
    head = max(1, min(head, len(seq) - 2))
    return list(seq[:head]), list(seq[head:-1]), [seq[-1]]


def _stem(name: str) -> str:
    stem = re.sub(r"[-_.]?\d+$", "", name)
    return f"{stem}-*" if stem != name and stem else name


def wrap_text(text: str, max_chars: int) -> list[str]:
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


def plural(n: int, singular: str, many: str) -> str:
    """``1 server``, ``1,024 servers``."""
    return f"{n:,} {singular if n == 1 else many}"


# ------------------------------------------------------------------------------------ grouping


def switch_units(switches: list[Switch], tier: int) -> tuple[list[Unit], str]:
    for attr in _GROUP_ATTRS.get(tier, ()):
        values = [getattr(s, attr) for s in switches]
        if all(v is not None for v in values):
            keys = [f"plane {v}" if attr == "plane" else str(v) for v in values]
            return _units(switches, keys), attr
    return _units(switches, [_stem(s.name) for s in switches]), "stem"


def _units(devices: Sequence[Switch | Server], keys: list[str]) -> list[Unit]:
    by_key: dict[str, list[str]] = defaultdict(list)
    for device, key in zip(devices, keys, strict=True):
        by_key[key].append(device.name)
    if len(by_key) == 1:
        only = [d.name for d in devices]
        return [Unit(None, sorted(only, key=natural_key))]
    return [
        Unit(key, sorted(names, key=natural_key))
        for key, names in sorted(by_key.items(), key=lambda kv: natural_key(kv[0]))
    ]


def server_units(servers: list[Server], leaf_of: dict[str, str]) -> tuple[list[Unit], str]:
    for attr in ("su", "rack"):
        values = [getattr(s, attr) for s in servers]
        if all(v is not None for v in values):
            return _units(servers, [str(v) for v in values]), attr
    if all(s.name in leaf_of for s in servers):
        return _units(servers, [leaf_of[s.name] for s in servers]), "leaf"
    return [Unit(None, sorted((s.name for s in servers), key=natural_key))], "stem"


class Planner:
    """Turns row specs into drawn items and groups by the collapsing rule."""

    def __init__(self, limit: int, group_head: int, member_head: int) -> None:
        self.limit = limit
        self.group_head = group_head
        self.member_head = member_head
        self.plan = Plan()

    def run(self, specs: list[RowSpec]) -> Plan:
        for spec in specs:
            kept, hidden, tail = split_run(spec.units, self.limit, self.group_head)
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

    def _group(self, spec: RowSpec, labels: tuple[str, ...]) -> int:
        self.plan.groups.append(Group(len(self.plan.groups), spec.panel, spec.row, labels))
        return len(self.plan.groups) - 1

    def _item(
        self, kind: ItemKind, spec: RowSpec, group: int, style: str, parts: list[str], slots: float
    ) -> int:
        item = Item(len(self.plan.items), kind, spec.panel, spec.row, group, style, parts, slots)
        self.plan.items.append(item)
        self.plan.groups[group].items.append(item.idx)
        return item.idx

    def _unit(self, spec: RowSpec, unit: Unit) -> None:
        n = len(unit.members)
        owner = self.plan.owner
        gpus = {spec.gpus.get(m, 0) for m in unit.members}
        per_server = f"x {next(iter(gpus))} GPUs" if len(gpus) == 1 else ""
        if spec.boxes:
            total = sum(spec.gpus.get(m, 0) for m in unit.members)
            parts = [plural(n, "server", "servers"), per_server or f"{total:,} GPUs"]
            if unit.key is not None:
                parts.insert(0, f"{unit.key}:")
            idx = self._item("servers", spec, self._group(spec, ()), "server", parts, 1.0)
            for name in unit.members:
                owner[name] = idx
            return
        singular = "leaf" if spec.noun == "leaves" else spec.noun.removesuffix("s")
        count = plural(n, singular, spec.noun)
        if spec.row == 0 and per_server:
            count += f" {per_server}"
        labels = (f"{unit.key}: {count}", f"{unit.key} ({n})", unit.key) if unit.key else (count,)
        group = self._group(spec, labels)
        kind: ItemKind = "server" if spec.row == 0 else "switch"
        kept, hidden, tail = split_run(unit.members, self.limit, self.member_head)
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


def fit_lines(parts: list[str], max_chars: int) -> list[str]:
    """Join label ``parts`` greedily into lines of at most ``max_chars`` (long parts wrap)."""
    lines: list[str] = []
    for part in parts:
        if lines and len(lines[-1]) + 1 + len(part) <= max_chars:
            lines[-1] += " " + part
        else:
            lines.extend(wrap_text(part, max_chars))
    return lines
