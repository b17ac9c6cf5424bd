"""NVIDIA Cumulus Linux 5.x NVUE output → shared switch-QoS records plus NVUE rows and counters.

Handled: ``nv show qos roce`` and ``nv show interface <if> qos roce status`` (a key/value table
with ``operational`` / ``applied`` [/ ``description``] columns, keys nested by two-space
indentation, then titled ``====`` sections: ``RoCE PCP/DSCP->SP mapping configurations``, ``RoCE
SP->TC mapping and ETS configurations``, pool tables); ``nv show interface <if> qos roce
counters`` and other ``... counters`` views (nested counters, ``144 Bytes`` / ``56.52 MB`` /
``92824.38 GB`` → bytes); the ``-o json`` form of any of these, flattened to dotted paths; ``nv
config show -o yaml`` / ``/etc/nvue.d/startup.yaml`` (``- set: qos: roce: ...``, ``interface:
swp1: link: mtu: 9216``, leading ``#`` comments allowed): each leaf of a ``- set:`` / ``-
unset:`` tree is the ``nv set`` command it stands for (the keys from the root, then the value;
an empty mapping ``'3': {}`` ends at its key), so both forms read alike; its flattened leaves
are also kept as ``qos-setting`` records (a key/value view the dialect does not read twice).
Columns are sliced at the positions of the header/dash line, so empty cells and values with
single spaces (``strict priority``, ``15.16 MB``) survive; ``-`` cells mean "none"
(``pfc-priority  -`` in the lossy modes → PFC disabled). Tables end at a blank (or one-space)
line or where the next ``====`` title starts (5.14 prints them with no blank line between);
5.0's ``description`` column and top-level ``cable-length`` are handled. ``nv set`` / ``nv
unset`` command lines become :class:`NvueSet` (their words; ``aifabric.dialects.nvue`` gives
them meaning) plus ``mtu`` for ``nv set interface <ports> link mtu N``; ``nv config apply`` is
skipped; ``nv show int X link`` (abbreviated ``int``) scopes its ``mtu`` row to port ``X``.

Normalised view: ``congestion-control`` min/max-threshold/probability/congestion-mode → ``ecn``
(KB/MB binary, as NVUE prints them); ``pfc`` ``pfc-priority`` / ``switch-priority`` with rx/tx →
``pfc``; the DSCP→switch-priority table → ``dscp-map`` (target ``switch-priority``); SP→TC →
``tc-map`` ``switch-priority-to-tc`` and ``queue-schedule``; ``link.mtu`` → ``mtu``; every other
leaf → ``qos-setting`` (operational value, ``applied`` kept when it differs).

Sources: Cumulus Linux 5.10 user guide "RDMA over Converged Ethernet - RoCE" and "Quality of
Service" (https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-510/
Layer-1-and-Switch-Ports/Quality-of-Service/RDMA-over-Converged-Ethernet-RoCE/), NVUE command
reference (``nv show qos roce``, ``nv show interface <if> qos roce counters``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

import yaml

from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.qos import (
    DscpMap,
    EcnConfig,
    Mtu,
    PfcConfig,
    QosSetting,
    QueueSchedule,
    TcMap,
    parse_id_list,
    size_to_bytes,
)
from aifabric.evidence.registry import register
from aifabric.inputs import check_nesting, loads_json

__all__ = ["NvueCounter", "NvueSet", "NvueTableRow", "parse_nvue"]


@dataclass(slots=True, kw_only=True)
class NvueCounter(Record):
    """One leaf of an NVUE counters view (``tx-stats.tx-roce-stats.unicast-no-buffer-discard``)."""

    record_type: ClassVar[str] = "nvue-counter"
    scope: str
    path: str
    value: float | None
    value_bytes: int | None = None
    raw: str = ""


@dataclass(slots=True, kw_only=True)
class NvueTableRow(Record):
    """One row of a titled NVUE table (pool config/status, mappings), cells by column name."""

    record_type: ClassVar[str] = "nvue-table-row"
    scope: str
    table: str
    cells: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class NvueSet(Record):
    """One ``nv set`` / ``nv unset`` command, its words after ``set`` (``qos roce mode lossy``
    → ``("qos", "roce", "mode", "lossy")``); the dialect interpreter gives them meaning."""

    record_type: ClassVar[str] = "nvue-set"
    words: tuple[str, ...]
    unset: bool = False


_CMD_RE = re.compile(r"(?:^|\$\s*)nv (?:show|config show)\b(?P<args>.*)$")
# ``(.*\S|\s)``: ``(.+?)`` before ``\s*$`` without rescanning blank runs (linear)
_SET_RE = re.compile(r"(?:^|\$\s*)nv (?P<verb>set|unset) (?P<args>.*\S|\s)\s*$")
_APPLY_RE = re.compile(r"(?:^|\$\s*)nv config (?:apply|save|diff)\b")
_IFACE_RE = re.compile(r"\bint(?:erface)? (\S+)")
_VALUE_UNIT_RE = re.compile(r"^(\d+(?:\.\d+)?)\s*(Bytes|B|KB|MB|GB|TB)?$")
_CONFIG_DOC_RE = re.compile(r"^- (?:set|unset):[ \t]*$", re.MULTILINE)
_MAX_CONFIG_NODES = 200_000
"""Nodes walked in one ``- set:`` document at most (YAML aliases could repeat a subtree)."""


_NV_SET_RE = re.compile(r"(?:^|\$\s*)nv (?:set|unset) \S", re.MULTILINE)


_COUNTER_GROUPS = ("rx-pfc-stats", "tx-pfc-stats", "rx-roce-stats", "tx-roce-stats",
                   "no-buffer-discard", "ecn-marked-packets", "cnp-packets")  # fmt: skip
"""Names NVUE prints only in ``nv show interface X qos roce counters``."""


def _detect(text: str) -> float:
    head = text[:200_000]
    if "nv show " in head or "RoCE PCP/DSCP->SP" in head or "nv config show" in head:
        return 0.95
    if "RoCE SP->TC mapping" in head or "RoCE pool config" in head:
        return 0.95  # the later titled sections of 'nv show qos roce' (its top cut off)
    if sum(1 for k in _COUNTER_GROUPS if k in head) >= 2:
        return 0.85  # 'nv show interface X qos roce counters' without its command line
    if ("nv set " in head or "nv unset " in head) and _NV_SET_RE.search(head):
        return 0.9
    if "congestion-control" in head and ("operational" in head or "roce" in head):
        return 0.9
    if "qos:" in head and "roce:" in head:
        return 0.9
    if "qos:" in head and _CONFIG_DOC_RE.search(head):
        return 0.9  # 'nv config show -o yaml' / startup.yaml with explicit QoS settings
    return 0.0


def _first_content(text: str) -> str:
    """The first line that is neither blank nor a ``#`` comment, stripped (YAML files such as
    ``/etc/nvue.d/startup.yaml`` may start with comments)."""
    for line in text[:200_000].split("\n", 2000):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return stripped
    return ""


def _bytes_of(raw: str) -> tuple[float | None, int | None]:
    m = _VALUE_UNIT_RE.match(raw.strip())
    if m is None:
        return None, None
    unit = m.group(2)
    if unit is None:
        return float(m.group(1)), None
    b = size_to_bytes(m.group(1), "B" if unit == "Bytes" else unit)
    return float(m.group(1)), b


@register(
    "nvue",
    summary="Cumulus Linux NVUE 'nv show qos roce', 'nv show interface X qos roce ...', -o json, "
    "'nv config show', 'nv set' commands",
    detect=_detect,
    refs=("S11", "S12", "S13", "S14", "S18", "S22"),
)
def parse_nvue(text: str) -> ParseResult:
    """Parse NVUE show output (table, JSON or YAML) into QoS records."""
    result = ParseResult(kind="nvue")
    text = _blank_command_lines(text)
    first = _first_content(text)
    if first.startswith(("{", "[")) or first.startswith(("- set:", "- unset:", "- header:")):
        _structured(text, result)
        return result
    _tables(text, result)
    return result


# --------------------------------------------------------------------------------------------
# text tables


_NV_COMMAND_RE = re.compile(r"(?:^|[$#>][ \t]*)(?:sudo[ \t]+)?nv[ \t]+(?:show|config)\b")


def _blank_command_lines(text: str) -> str:
    """``text`` with the ``nv show ... -o json`` command line(s) above a JSON/YAML document
    blanked (line numbers kept), so that the document is read as one; other text unchanged."""
    head = text[:4096].split("\n")
    for k, line in enumerate(head):
        stripped = line.strip()
        if not stripped:
            continue
        if not _NV_COMMAND_RE.search(stripped):
            if k and stripped.startswith(("{", "[")):
                return "\n" * k + text.split("\n", k)[k]
            return text
    return text


def _spans(dash: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"-+", dash)]


def _cells(line: str, starts: list[int]) -> list[str]:
    out = []
    for i, s in enumerate(starts):
        e = starts[i + 1] if i + 1 < len(starts) else len(line)
        out.append(line[s:e].strip() if s < len(line) else "")
    return out


def _tables(text: str, result: ParseResult) -> None:
    lines = text.split("\n")
    scope = "qos"
    counters = False
    values: dict[str, tuple[str, str, int]] = {}
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i].rstrip()
        sm = _SET_RE.search(line)
        if sm is not None:
            _set_command(sm.group("verb") == "unset", sm.group("args"), i + 1, result)
            i += 1
            continue
        if _APPLY_RE.search(line):
            i += 1
            continue
        cm = _CMD_RE.search(line)
        if cm is not None:
            args = cm.group("args")
            im = _IFACE_RE.search(args)
            scope = im.group(1) if im else "qos"
            counters = "counters" in args or "pfc-stats" in args
            i += 1
            continue
        nxt = lines[i + 1].rstrip() if i + 1 < n else ""
        if ("operational" in line or "applied" in line) and nxt.lstrip().startswith("---"):
            i = _kv_table(lines, i, scope, counters, values, result)
            continue
        if nxt.strip() and set(nxt.strip()) == {"="} and line.strip():
            i = _titled_table(lines, i, scope, result)
            continue
        i += 1
    _derive(values, scope, result)


def _set_command(unset: bool, args: str, line: int, result: ParseResult) -> None:
    """``nv set interface swp1 link mtu 1500`` → :class:`NvueSet` (and :class:`Mtu`)."""
    words = tuple(args.split())
    result.records.append(NvueSet(line=line, words=words, unset=unset))
    if not unset and len(words) == 5 and words[0] == "interface" and words[2:4] == ("link", "mtu"):
        try:
            mtu = int(words[4])
        except ValueError:
            result.warn(line, "mtu: expected an integer", words[4])
            return
        result.records.append(Mtu(line=line, scope=words[1], port=words[1], mtu_bytes=mtu))


def _col_of(header: str, name: str, starts: list[int]) -> int | None:
    """Index of the dash column nearest to where ``name`` sits in the header (NVUE headers
    are sometimes shifted by a character against the dash line)."""
    pos = header.find(name)
    if pos < 0 or not starts:
        return None
    return min(range(len(starts)), key=lambda k: abs(starts[k] - pos))


def _kv_table(
    lines: list[str],
    i: int,
    scope: str,
    counters: bool,
    values: dict[str, tuple[str, str, int]],
    result: ParseResult,
) -> int:
    header = lines[i]
    starts = [s for s, _ in _spans(lines[i + 1])]
    op_ix = _col_of(header, "operational", starts)
    ap_ix = _col_of(header, "applied", starts)
    if op_ix is None:
        op_ix = 1
    stack: list[tuple[int, str]] = []
    j = i + 2
    while j < len(lines):
        row = lines[j].rstrip()
        if not row.strip():
            break
        if row.lstrip().startswith(("nv ", "cumulus@")) or "$ nv " in row:
            break
        after = lines[j + 1].strip() if j + 1 < len(lines) else ""
        if after and set(after) == {"="}:  # a titled table follows with no blank line (5.14)
            break
        indent = len(row) - len(row.lstrip(" "))
        cells = _cells(row, starts)
        key = cells[0] if cells else ""
        if not key or " " in key:
            result.warn(j + 1, "expected 'key  value' under an NVUE operational/applied table", row)
            j += 1
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, key))
        path = ".".join(k for _, k in stack)
        op = cells[op_ix] if op_ix < len(cells) else ""
        ap = cells[ap_ix] if ap_ix is not None and ap_ix < len(cells) else ""
        if op or ap:
            values[path] = (op, ap, j + 1)
            if counters:
                v, b = _bytes_of(op or ap)
                result.records.append(
                    NvueCounter(line=j + 1, scope=scope, path=path, value=v, value_bytes=b, raw=op)
                )
        j += 1
    return j


def _titled_table(lines: list[str], i: int, scope: str, result: ParseResult) -> int:
    title = lines[i].strip()
    j = i + 2
    while j < len(lines) and not lines[j].strip():
        j += 1
    if j + 1 >= len(lines) or not lines[j + 1].strip().startswith("-"):
        return j
    header, dash = lines[j], lines[j + 1]
    starts = [s for s, _ in _spans(dash)]
    names = _cells(header, starts)
    rows: list[tuple[int, dict[str, str]]] = []
    k = j + 2
    while k < len(lines) and lines[k].strip():
        after = lines[k + 1].strip() if k + 1 < len(lines) else ""
        if after and set(after) == {"="}:  # next title with no blank line before it (5.14)
            break
        cells = _cells(lines[k].rstrip(), starts)
        row = {names[c] or "#": cells[c] for c in range(len(names))}
        rows.append((k + 1, row))
        result.records.append(NvueTableRow(line=k + 1, scope=scope, table=title, cells=row))
        k += 1
    _table_records(title, rows, scope, result)
    return k


def _table_records(
    title: str, rows: list[tuple[int, dict[str, str]]], scope: str, result: ParseResult
) -> None:
    if not rows:
        return
    first = rows[0][0]
    if "DSCP->SP" in title:
        dscp: dict[int, int] = {}
        pcp: dict[int, int] = {}
        for ln, row in rows:
            try:
                sp = int(row.get("switch-prio", ""))
                for d in parse_id_list(_dash(row.get("dscp", ""))):
                    dscp[d] = sp
                if row.get("pcp", "").isdecimal():
                    pcp[int(row["pcp"])] = sp
            except ValueError:
                result.warn(ln, "expected numeric pcp/dscp/switch-prio cells", str(row))
        result.records.append(
            DscpMap(
                line=first,
                end_line=rows[-1][0],
                name=title,
                scope=scope,
                mapping=dict(sorted(dscp.items())),
                target="switch-priority",
            )
        )
        if pcp:
            result.records.append(
                TcMap(line=first, kind="pcp-to-switch-priority", name=title, scope=scope,
                      mapping=dict(sorted(pcp.items())))
            )  # fmt: skip
    elif "SP->TC" in title:
        sp_tc: dict[int, int] = {}
        for ln, row in rows:
            try:
                sp, tc = int(row.get("switch-prio", "")), int(row.get("traffic-class", ""))
            except ValueError:
                result.warn(ln, "expected numeric switch-prio/traffic-class cells", str(row))
                continue
            sp_tc[sp] = tc
            weight = row.get("scheduler-weight", "")
            wm = re.search(r"(?<!\d)(\d+)%", weight)  # from a run's first digit: linear
            result.records.append(
                QueueSchedule(
                    line=ln,
                    scope=scope,
                    queue=tc,
                    bandwidth_pct=float(wm.group(1)) if wm else None,
                    strict_priority="strict" in weight.lower(),
                    scheduler=weight or None,
                )
            )
        result.records.append(
            TcMap(line=first, kind="switch-priority-to-tc", name=title, scope=scope,
                  mapping=dict(sorted(sp_tc.items())))
        )  # fmt: skip


# --------------------------------------------------------------------------------------------
# normalised view from key paths (shared by tables, JSON and YAML)


def _derive(values: dict[str, tuple[str, str, int]], scope: str, result: ParseResult) -> None:
    rec = result.records.append
    cc = {k.rsplit(".", 1)[-1]: v for k, v in values.items() if "congestion-control" in k}
    if "min-threshold" in cc or "max-threshold" in cc:
        mn = cc.get("min-threshold", ("", "", 0))
        mx = cc.get("max-threshold", ("", "", 0))
        prob = cc.get("probability", ("", "", 0))[0] or cc.get("probability", ("", "", 0))[1]
        mode = cc.get("congestion-mode", ("", "", 0))
        tcs = cc.get("enabled-tc", ("", "", 0))
        mn_v, mx_v = mn[0] or mn[1], mx[0] or mx[1]
        rec(
            EcnConfig(
                line=min(x[2] for x in cc.values()),
                scope=scope,
                port=None if scope == "qos" else scope,
                min_bytes=_size(mn_v),
                max_bytes=_size(mx_v),
                min_raw=mn_v or None,
                max_raw=mx_v or None,
                probability_pct=_flt(prob),
                mode=(mode[0] or mode[1]) or None,
                ecn_enabled="ecn" in (mode[0] or mode[1]).lower() if mode[2] else None,
                extra={"enabled-tc": tcs[0] or tcs[1]} if tcs[2] else {},
            )
        )
    pfc = {k.rsplit(".", 1)[-1]: v for k, v in values.items() if k.split(".")[-2:-1] == ["pfc"]}
    prio = pfc.get("pfc-priority") or pfc.get("switch-priority")
    if prio is not None:
        try:
            prios = parse_id_list(_dash(prio[0] or prio[1]))
        except ValueError:
            result.warn(prio[2], "pfc priority: expected a list of priorities", prio[0])
            prios = ()
        rx, tx = pfc.get("rx-enabled"), pfc.get("tx-enabled")
        rec(
            PfcConfig(
                line=prio[2],
                scope=scope,
                port=None if scope == "qos" else scope,
                priorities=prios,
                enabled=bool(prios),
                rx_enabled=_yes(rx),
                tx_enabled=_yes(tx),
            )
        )
    for path, (op, ap, ln) in values.items():
        if path == "mtu" or path.endswith(".mtu"):
            if path.startswith("interface."):
                port: str | None = path.split(".")[1]
            else:
                port = None if scope == "qos" else scope
            try:
                rec(Mtu(line=ln, scope=port or scope, port=port, mtu_bytes=int(op or ap)))
            except ValueError:
                result.warn(ln, "mtu: expected an integer", op or ap)
            continue
        if "stats" in path:
            continue
        rec(
            QosSetting(
                line=ln,
                scope=scope,
                key=path,
                value=op or ap,
                applied=ap if ap and op and ap != op else None,
            )
        )


def _dash(raw: str) -> str:
    """NVUE prints ``-`` for an empty cell (``pfc-priority  -`` in lossy modes)."""
    return "" if raw.strip() == "-" else raw


def _size(raw: str) -> int | None:
    m = _VALUE_UNIT_RE.match(raw.strip()) if raw else None
    if m is None:
        return None
    unit = m.group(2) or "B"
    return size_to_bytes(m.group(1), "B" if unit == "Bytes" else unit)


def _flt(raw: str) -> float | None:
    try:
        return float(raw)
    except ValueError:
        return None


def _yes(v: tuple[str, str, int] | None) -> bool | None:
    if v is None:
        return None
    t = (v[0] or v[1]).lower()
    return t in ("enabled", "yes", "on", "true")


# --------------------------------------------------------------------------------------------
# JSON / YAML


def _flatten(obj: Any, prefix: str, out: dict[str, str]) -> bool:
    """Leaves of ``obj`` as dotted paths; False when :data:`_MAX_CONFIG_NODES` were walked
    (YAML aliases make a small document a huge tree: an alias bomb stops here, not in RAM)."""
    budget = _MAX_CONFIG_NODES
    stack: list[tuple[Any, str]] = [(obj, prefix)]
    while stack:
        budget -= 1
        if budget < 0:
            return False
        node, path = stack.pop()
        if isinstance(node, dict):
            stack.extend(
                (v, f"{path}.{k}" if path else str(k)) for k, v in reversed(list(node.items()))
            )
        elif isinstance(node, list):
            stack.extend((item, path) for item in reversed(node))
        elif node is not None:
            out[path] = str(node).lower() if isinstance(node, bool) else str(node)
    return True


def _structured(text: str, result: ParseResult) -> None:
    try:
        data = loads_json(text) if text.lstrip().startswith(("{", "[")) else None
        if data is None:
            check_nesting(text, "<input>")
            data = yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        mark = getattr(exc, "problem_mark", None)
        line = getattr(exc, "lineno", None) or (mark.line + 1 if mark is not None else None)
        result.warn(line, f"malformed NVUE JSON/YAML: {exc}".split("\n")[0])
        return
    config = _is_config_doc(data)
    if config:
        _config_doc(text, result)
    flat: dict[str, str] = {}
    if not _flatten(data, "", flat):
        result.warn(None, "NVUE JSON/YAML: too many nodes (aliases?); the rest is skipped")
    lines = text.split("\n")
    values: dict[str, tuple[str, str, int]] = {}
    for full, value in flat.items():
        path = full
        for prefix in ("set.", "unset."):
            if path.startswith(prefix):
                path = path[len(prefix) :]
        values[path] = (value, "", _line_of(lines, path.rsplit(".", 1)[-1]))
    if not config:
        _derive(values, "qos", result)
        return
    # a configuration: the commands above carry it; the flattened leaves are kept as a
    # key/value view (what 'aifabric parse' lists), without a second MTU/ECN/PFC reading
    view = ParseResult(kind="nvue")
    _derive(values, "qos", view)
    result.records.extend(r for r in view.records if isinstance(r, QosSetting))


def _line_of(lines: list[str], key: str) -> int:
    needle = re.compile(rf'^\s*(?:- )?"?{re.escape(key)}"?\s*:')
    for i, text in enumerate(lines, 1):
        if needle.match(text):
            return i
    return 0


# --------------------------------------------------------------------------------------------
# nv config show -o yaml / startup.yaml: '- set:' trees as nv set commands


def _is_config_doc(data: Any) -> bool:
    """A list of ``{set: tree}`` / ``{unset: tree}`` (and ``{header: ...}``) entries: the form
    ``nv config show -o yaml`` prints and ``/etc/nvue.d/startup.yaml`` holds."""
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(d, dict) and set(d) <= {"set", "unset", "header"} for d in data)
        and any("set" in d or "unset" in d for d in data)
    )


def _config_doc(text: str, result: ParseResult) -> None:
    """Each leaf of a ``- set:`` tree becomes the :class:`NvueSet` of the ``nv set`` command it
    is equivalent to: the keys from the root down, then the value (``interface: swp1: link:
    mtu: 9216`` → ``interface swp1 link mtu 9216``); an empty mapping (``switch-priority:
    {'3': {}}``) ends the command at its key (``... switch-priority 3``). Scalars are taken as
    written (``enable: on`` stays ``on``, not YAML 1.1's true), with the line they are on."""
    try:
        root = yaml.compose(text)
    except yaml.YAMLError as exc:  # pragma: no cover - safe_load accepted the same text
        result.warn(None, f"malformed NVUE YAML: {exc}".split("\n")[0])
        return
    if not isinstance(root, yaml.SequenceNode):
        return
    budget = _MAX_CONFIG_NODES
    for item in root.value:
        if not isinstance(item, yaml.MappingNode):
            continue
        for key, tree in item.value:
            verb = key.value if isinstance(key, yaml.ScalarNode) else ""
            if verb not in ("set", "unset"):
                continue
            stack: list[tuple[yaml.Node, tuple[str, ...], int]] = [
                (tree, (), key.start_mark.line + 1)
            ]
            out: list[tuple[int, tuple[str, ...]]] = []
            while stack:
                budget -= 1
                if budget < 0:
                    result.warn(None, "NVUE YAML: too many nodes (aliases?); the rest is skipped")
                    return
                node, path, line = stack.pop()
                if isinstance(node, yaml.MappingNode):
                    if not node.value and path:
                        out.append((line, path))
                    for k, v in reversed(node.value):
                        if isinstance(k, yaml.ScalarNode):
                            stack.append((v, (*path, str(k.value)), k.start_mark.line + 1))
                elif isinstance(node, yaml.SequenceNode):
                    stack.extend((v, path, v.start_mark.line + 1) for v in reversed(node.value))
                elif isinstance(node, yaml.ScalarNode) and path:
                    value = str(node.value).strip()
                    out.append((node.start_mark.line + 1, (*path, value) if value else path))
            for line, words in sorted(out, key=lambda x: x[0]):
                _set_command(verb == "unset", " ".join(words), line, result)
