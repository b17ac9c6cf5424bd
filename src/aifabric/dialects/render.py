"""Render one lossless intent to every vendor's syntax, and plan the change against what a device
has now (seed S11-S15, S18, S19).

A *dialect* is one module per vendor OS (``aifabric.dialects.<name>``) that owns both
directions: ``interpret`` (config → :class:`~aifabric.dialects.observed.ObservedDevice`, what
``verify`` reads) and a :class:`Dialect` object named ``DIALECT`` whose ``render`` turns a
:class:`~aifabric.dialects.intent.DeviceIntent` into files, from Jinja2 templates kept next to
it (``templates/``), each template naming the vendor document it follows. Built-in dialects are
listed in :data:`BUILTIN`; others plug in through the ``aifabric.dialects`` entry-point group
(``name = "package.module:DIALECT"``).

Change plans (``aifabric render --diff EXISTING_DIR``) are written in the device's own terms:

* indented CLI configs (EOS, NX-OS): :func:`plan_cli` compares the two configs as trees of
  mode lines and prints, per mode, the lines to add and the ``no`` forms of the lines to remove
  under the sections the intent owns, ready for a configuration session;
* SONiC ``config_db.json``: :func:`plan_json_patch` gives an RFC 6902 JSON Patch over the
  tables the intent owns, the input of SONiC's ``config apply-patch``;
* NVUE: :func:`plan_commands` gives the ``nv set`` lines that are new and the ``nv unset``
  of the owned settings that go;
* anything else: a unified diff (:func:`plan_unified`).

Nothing is pushed to a device.
"""

from __future__ import annotations

import difflib
import importlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Literal, Protocol, cast

import jinja2

from aifabric.catalog import Catalog
from aifabric.dialects.intent import DeviceIntent, build_intents
from aifabric.errors import InputError
from aifabric.model import Fabric

__all__ = [
    "BUILTIN",
    "CHANGES_DIR",
    "ENTRY_POINT_GROUP",
    "ChangePlan",
    "Dialect",
    "RenderResult",
    "RenderedFile",
    "dialect_names",
    "find_existing",
    "get_dialect",
    "plan_cli",
    "plan_commands",
    "plan_json_patch",
    "plan_unified",
    "render_fabric",
    "template_env",
    "write_files",
]

ENTRY_POINT_GROUP = "aifabric.dialects"

CHANGES_DIR = "_changes"
"""Folder of an output directory that holds ``--diff`` change plans; the config readers
(:mod:`aifabric.dialects.load`) skip it."""

BUILTIN: dict[str, str] = {
    "sonic": "aifabric.dialects.sonic.render:DIALECT",
    "eos": "aifabric.dialects.eos.render:DIALECT",
    "nxos": "aifabric.dialects.nxos.render:DIALECT",
    "nvue": "aifabric.dialects.nvue.render:DIALECT",
    "host": "aifabric.dialects.host.render:DIALECT",
}
"""Dialect name → ``module:attribute`` of its :class:`Dialect`."""


@dataclass(frozen=True, slots=True)
class RenderedFile:
    """One rendered file: ``path`` relative to the output directory (``leaf1.json``,
    ``srv01/nccl.env``), its text, the evidence ``kind`` verify reads it as (None: not read
    back, e.g. an apply script), and the device it configures."""

    device: str
    path: str
    text: str
    kind: str | None = None


@dataclass(frozen=True, slots=True)
class ChangePlan:
    """What would change on one device: ``plan`` in the device's own syntax, counts of
    settings added and removed, and the existing file compared (None: nothing found, so the
    whole rendered config is new)."""

    device: str
    path: str
    existing: str | None
    added: int
    removed: int
    plan: str


class Dialect(Protocol):
    """A vendor OS: renders switches (``role`` ``switch``) or servers (``host``)."""

    name: str
    title: str
    role: Literal["switch", "host"]
    follows: tuple[str, ...]
    """The public documents the templates follow (URLs)."""

    def render(self, intent: DeviceIntent) -> list[RenderedFile]: ...

    def plan(self, rendered: RenderedFile, existing: str | None) -> ChangePlan: ...


def dialect_names() -> list[str]:
    """Built-in and plugged-in dialect names, sorted."""
    names = set(BUILTIN)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        names.add(ep.name)
    return sorted(names)


def get_dialect(name: str) -> Dialect:
    """The dialect called ``name``; an :class:`InputError` naming the known ones otherwise."""
    target = BUILTIN.get(name)
    if target is None:
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if ep.name == name:
                return cast(Dialect, ep.load())
        raise InputError(f"unknown dialect {name!r}: one of {', '.join(dialect_names())}")
    module, _, attr = target.partition(":")
    return cast(Dialect, getattr(importlib.import_module(module), attr))


def template_env(package: str) -> jinja2.Environment:
    """The Jinja2 environment of a dialect package's ``templates/`` folder: undefined names
    are errors, blocks trim their own newlines, files keep their final newline."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader(package, "templates"),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["kbytes"] = lambda b: round(int(b) / 1024)
    env.filters["csv"] = lambda xs: ",".join(str(x) for x in xs)
    return env


@dataclass
class RenderResult:
    dialect: str
    files: list[RenderedFile] = field(default_factory=list)
    intents: dict[str, DeviceIntent] = field(default_factory=dict)


def render_fabric(
    fabric: Fabric,
    dialect: str,
    *,
    catalog: Catalog | None = None,
    devices: Sequence[str] | None = None,
) -> RenderResult:
    """Render every device of ``fabric`` the dialect configures (its switches, or its servers
    for ``host``), or only ``devices``; an unknown device name is an :class:`InputError`."""
    d = get_dialect(dialect)
    intents = build_intents(fabric, catalog)
    chosen = [i for i in intents.values() if i.role == d.role]
    if devices:
        known = {i.name for i in chosen}
        missing = [n for n in devices if n not in known]
        if missing:
            raise InputError(
                f"{', '.join(missing)}: not a {'server' if d.role == 'host' else 'switch'} "
                f"of fabric {fabric.name!r}"
            )
        chosen = [i for i in chosen if i.name in set(devices)]
    out = RenderResult(dialect=d.name)
    for intent in chosen:
        out.intents[intent.name] = intent
        out.files.extend(d.render(intent))
    return out


def write_files(files: Iterable[RenderedFile], out_dir: Path) -> list[Path]:
    """Write rendered files under ``out_dir`` (created); returns the paths written."""
    written: list[Path] = []
    root = out_dir.resolve()
    for f in files:
        path = (out_dir / f.path).resolve()
        if root != path and root not in path.parents:
            raise InputError(f"{f.path}: a rendered path outside {out_dir}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f.text, encoding="utf-8")
        written.append(path)
    return written


# ---- change plans -------------------------------------------------------------------------


def _tree(text: str, comment: str) -> list[tuple[tuple[str, ...], str]]:
    """(parent mode lines, line) for every non-blank, non-comment line of an indented CLI
    config, in order; indentation decides nesting, as EOS and NX-OS print it."""
    out: list[tuple[tuple[str, ...], str]] = []
    stack: list[tuple[int, str]] = []
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith(comment) or stripped in ("end", "exit"):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        out.append((tuple(s for _, s in stack), stripped))
        stack.append((indent, stripped))
    return out


def plan_cli(
    device: str,
    path: str,
    rendered: str,
    existing: str | None,
    *,
    owned: Callable[[tuple[str, ...], str], bool],
    comment: str = "!",
) -> ChangePlan:
    """An indented-CLI change plan: for each mode (the chain of parent lines), the rendered
    lines missing from ``existing`` and ``no <line>`` for each existing line under a mode the
    intent owns (``owned(parents, line)``) that the rendered config does not have. Output is a
    configuration-session script: each mode line entered, changes indented under it."""
    if existing is None:
        n = sum(1 for _ in _tree(rendered, comment))
        return ChangePlan(device, path, None, n, 0, rendered)
    want = _tree(rendered, comment)
    have = _tree(existing, comment)
    have_set = set(have)
    want_set = set(want)
    groups: dict[tuple[str, ...], list[str]] = {}
    added = removed = 0
    for parents, line in want:
        if (parents, line) not in have_set:
            groups.setdefault(parents, []).append(line)
            added += 1
    for parents, line in have:
        if (parents, line) in want_set or not owned(parents, line):
            continue
        if any((parents[: i + 1][:-1], parents[i]) not in want_set for i in range(len(parents))):
            continue  # its whole section goes: removing the section line is enough
        groups.setdefault(parents, []).append(_negate(line))
        removed += 1
    lines: list[str] = []
    for parents, changes in groups.items():
        for depth, p in enumerate(parents):
            lines.append("   " * depth + p)
        lines += ["   " * len(parents) + c for c in changes]
        if parents:
            lines.append(comment)
    text = "\n".join(lines) + ("\n" if lines else "")
    return ChangePlan(device, path, "existing", added, removed, text)


def _negate(line: str) -> str:
    return line[3:] if line.startswith("no ") else f"no {line}"


def plan_json_patch(
    device: str, path: str, rendered: str, existing: str | None, *, tables: Iterable[str]
) -> ChangePlan:
    """An RFC 6902 JSON Patch turning ``existing``'s owned ``tables`` (config_db tables) into
    the rendered ones: ``add`` for new tables/keys/fields, ``replace`` for changed fields,
    ``remove`` for keys of an owned table the intent does not have. Paths escape ``~`` and
    ``/`` (RFC 6901), so ``PORT_QOS_MAP/Ethernet0`` keys survive. An ``existing`` that is not a
    config_db JSON object (another vendor's config) gives ``add`` of every owned table."""
    want = json.loads(rendered)
    if existing is None:
        return ChangePlan(device, path, None, len(want), 0, rendered)
    try:
        have = json.loads(existing)
    except ValueError:
        have = None
    if not isinstance(have, dict):
        # another vendor's config (a mixed fabric's directory) or a damaged file: nothing of it
        # carries over, every owned table is added
        ops_new = [{"op": "add", "path": "/" + _ptr(t), "value": want[t]}
                   for t in tables if t in want]
        return ChangePlan(device, path, "not config_db JSON", len(ops_new), 0,
                          json.dumps(ops_new, indent=2) + "\n")
    ops: list[dict[str, Any]] = []
    for table in tables:
        w = want.get(table)
        h = have.get(table)
        t = "/" + _ptr(table)
        if w is None:
            continue
        if not isinstance(h, dict):
            ops.append({"op": "add", "path": t, "value": w})
            continue
        for key, fields in w.items():
            k = f"{t}/{_ptr(key)}"
            hv = h.get(key)
            if not isinstance(hv, dict) or not isinstance(fields, dict):
                if hv != fields:
                    ops.append({"op": "add" if hv is None else "replace", "path": k,
                                "value": fields})
                continue
            for fname, value in fields.items():
                if fname not in hv:
                    ops.append({"op": "add", "path": f"{k}/{_ptr(fname)}", "value": value})
                elif hv[fname] != value:
                    ops.append({"op": "replace", "path": f"{k}/{_ptr(fname)}", "value": value})
        for key in h:
            if key not in w:
                ops.append({"op": "remove", "path": f"{t}/{_ptr(key)}"})
    added = sum(1 for o in ops if o["op"] != "remove")
    removed = sum(1 for o in ops if o["op"] == "remove")
    return ChangePlan(device, path, "existing", added, removed, json.dumps(ops, indent=2) + "\n")


def _ptr(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def plan_commands(
    device: str,
    path: str,
    rendered: str,
    existing: str | None,
    *,
    set_prefix: str = "nv set ",
    unset_prefix: str = "nv unset ",
    owned: Callable[[str], bool] = lambda _line: True,
) -> ChangePlan:
    """A flat command-list plan (NVUE): the rendered ``set`` lines missing from ``existing``,
    then ``unset`` for each owned existing ``set`` line that the rendered list lacks and no
    rendered line overrides (same path, another value)."""
    want = [ln.strip() for ln in rendered.splitlines() if ln.strip().startswith(set_prefix)]
    if existing is None:
        return ChangePlan(device, path, None, len(want), 0, rendered)
    have = [ln.strip() for ln in existing.splitlines() if ln.strip().startswith(set_prefix)]
    have_set, want_set = set(have), set(want)
    add = [ln for ln in want if ln not in have_set]
    want_paths = {_path_of(ln[len(set_prefix):]) for ln in want}
    drop = [
        unset_prefix + ln[len(set_prefix):]
        for ln in have
        if ln not in want_set and owned(ln) and _path_of(ln[len(set_prefix):]) not in want_paths
    ]
    text = "\n".join([*add, *drop]) + ("\n" if add or drop else "")
    return ChangePlan(device, path, "existing", len(add), len(drop), text)


def _path_of(args: str) -> str:
    """An NVUE ``set`` argument list without its final value: the setting it addresses."""
    return args.rsplit(" ", 1)[0] if " " in args else args


def plan_unified(device: str, path: str, rendered: str, existing: str | None) -> ChangePlan:
    """A unified diff of a whole file (host files, scripts)."""
    if existing is None:
        return ChangePlan(device, path, None, len(rendered.splitlines()), 0, rendered)
    diff = list(
        difflib.unified_diff(
            existing.splitlines(keepends=True),
            rendered.splitlines(keepends=True),
            f"existing/{path}",
            f"rendered/{path}",
        )
    )
    added = sum(1 for ln in diff if ln.startswith("+") and not ln.startswith("+++"))
    removed = sum(1 for ln in diff if ln.startswith("-") and not ln.startswith("---"))
    return ChangePlan(device, path, "existing", added, removed, "".join(diff))


def find_existing(existing_dir: Path, rendered: RenderedFile) -> Path | None:
    """The file in ``existing_dir`` that holds what ``rendered`` would replace: the same
    relative path, else a file named after the device with any extension (``leaf1.cfg`` for
    ``leaf1.json``: the name up to the first dot, as ``verify --configs`` reads it)."""
    same = existing_dir / rendered.path
    if same.is_file():
        return same
    parent = (existing_dir / rendered.path).parent
    stem = Path(rendered.path).name.split(".", 1)[0]
    if parent.is_dir():
        for cand in sorted(parent.iterdir()):
            if cand.is_file() and cand.name.split(".", 1)[0] == stem:
                return cand
    return None
