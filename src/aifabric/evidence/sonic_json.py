"""SONiC ``config_db.json`` text, however it was captured, → documents of tables with lines.

The JSON half of the ``sonic-config-db`` parser (:mod:`~aifabric.evidence.sonic_config` turns
the tables into records): whole documents, several in one terminal paste with prompts between
them, JSON arrays of configlets, the flat redis form (``"PORT|Ethernet0": {...}``) regrouped,
multi-ASIC namespaces, and excerpts read as far as they go (tables without the outer braces, a
paste that starts inside a table or an entry, JSON cut off, a table's entries without its name,
whose table is found from the command line that printed them or from fields only it has).
:class:`KeyIndex` gives each table and entry the line of its key from its character offset in
the text, right for any layout (pretty-printed, minified, oddly indented).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from aifabric.evidence.base import ParseResult
from aifabric.inputs import loads_json

__all__ = [
    "IMPLICIT",
    "INT_MAP_TABLES",
    "KNOWN_TABLES",
    "KeyIndex",
    "json_docs",
    "regroup",
    "tables_of",
]

INT_MAP_TABLES: dict[str, str] = {
    "TC_TO_QUEUE_MAP": "tc-to-queue",
    "TC_TO_PRIORITY_GROUP_MAP": "tc-to-pg",
    "MAP_PFC_PRIORITY_TO_QUEUE": "pfc-priority-to-queue",
    "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP": "pfc-priority-to-pg",
    "DOT1P_TO_TC_MAP": "dot1p-to-tc",
    "TC_TO_DSCP_MAP": "tc-to-dscp",
    "MPLS_TC_TO_TC_MAP": "mpls-tc-to-tc",
}
"""The SONiC integer-map tables and the ``tc-map`` kind each becomes."""
KNOWN_TABLES = frozenset(
    {
        "DSCP_TO_TC_MAP",
        "PORT_QOS_MAP",
        "WRED_PROFILE",
        "QUEUE",
        "SCHEDULER",
        "BUFFER_POOL",
        "BUFFER_PROFILE",
        "BUFFER_PG",
        "BUFFER_QUEUE",
        "PFC_WD",
        "PORT",
        "CABLE_LENGTH",
        *INT_MAP_TABLES,
    }
)


class KeyIndex:
    """The 1-based line of every ``"TABLE": {`` and of every ``"entry": {`` inside a table,
    taken from the character offset of the key in the text, so it is right however the JSON is
    laid out: pretty-printed, minified on one line, oddly indented, or with the ``{`` on the next
    line.

    One pass over the JSON tokens (strings, so that braces inside them do not count, and
    brackets) keeps the stack of enclosing keys. A key whose value is an object is a table when
    its name is a known table and no table encloses it, with the enclosing key (if any) as its
    namespace (``asic0`` of a multi-ASIC dump); an entry when its parent is a table; a flat
    ``"TABLE|entry": {`` (redis form) is both. ``implicit`` names the table of entries met
    outside any named object (an excerpt of one table, ``--var-json TABLE`` output). A ``}``
    with nothing open (a paste that starts inside a table) is skipped. First occurrence wins.
    """

    def __init__(self, text: str, first_line: int, implicit: str | None = None) -> None:
        self.namespace = ""
        """Namespace of the tables :meth:`line` looks up (set per namespace by the caller)."""
        self._entries: dict[tuple[str, str, str], int] = {}
        self._tables: dict[tuple[str, str], int] = {}
        self._any_entry: dict[tuple[str, str], int] = {}
        self._any_table: dict[str, int] = {}
        if implicit is not None:
            self._add(("", implicit), None, first_line)
        stack: list[str | None] = []
        line, pos = first_line, 0
        for m in _TOKEN_RE.finditer(text):
            kind = m.lastindex
            if kind == 1:  # "key": {
                line += text.count("\n", pos, m.start())
                pos = m.start()
                key = _unescape(m.group(1))
                self._note(key, stack, line, implicit)
                stack.append(key)
            elif kind == 2:
                stack.append(None)
            elif kind == 3 and stack:
                stack.pop()

    def _note(self, key: str, stack: list[str | None], line: int, implicit: str | None) -> None:
        parent = stack[-1] if stack else None
        table, bar, rest = key.partition("|")
        if bar and table in KNOWN_TABLES:  # flat redis form "TABLE|entry": {...}
            self._add((parent or "", table), rest, line)
        elif key in KNOWN_TABLES and not any(s in KNOWN_TABLES for s in stack if s):
            self._add((parent or "", key), None, line)
        elif parent is not None and parent in KNOWN_TABLES:
            self._add(((stack[-2] if len(stack) > 1 else None) or "", parent), key, line)
        elif implicit is not None and not any(stack):
            self._add(("", implicit), key, line)

    def _add(self, where: tuple[str, str], key: str | None, line: int) -> None:
        """Note table ``where`` (namespace, name) at ``line``, and its entry ``key`` if any."""
        self._tables.setdefault(where, line)
        self._any_table.setdefault(where[1], line)
        if key is not None:
            self._entries.setdefault((*where, key), line)
            self._any_entry.setdefault((where[1], key), line)

    @classmethod
    def fixed(cls, entry_line: dict[tuple[str, str], int]) -> KeyIndex:
        """Lines known up front: the command line that printed each CONFIG_DB hash."""
        index = cls("", 1)
        for (table, key), ln in entry_line.items():
            index._add(("", table), key, ln)
        return index

    def line(self, table: str, key: str | None = None) -> int:
        """Line of entry ``key`` of ``table`` in :attr:`namespace` (else in any namespace),
        else of the table, else 0 (not found in the text)."""
        ns = self.namespace
        if key is not None:
            got = self._entries.get((ns, table, key), self._any_entry.get((table, key)))
            if got is not None:
                return got
        return self._tables.get((ns, table), self._any_table.get(table, 0))


_TOKEN_RE = re.compile(
    r'"((?:[^"\\\n]++|\\.)*+)"\s*:\s*\{'  # 1: a key whose value is an object
    r"|([{\[])|([}\]])"  # 2: another object or array opens; 3: one closes
    r'|(?:"(?:[^"\\\n]++|\\.)*+"(?!\s*:\s*\{)|[^"{}\[\]]++)++'  # the rest: strings and text
)
"""The JSON tokens :class:`KeyIndex` needs; strings are read whole so that a bracket inside one
does not count, and a run of strings and text between brackets is one match (possessive
quantifiers: nothing is tried twice, linear in the text)."""


def _unescape(key: str) -> str:
    """A JSON-escaped key as ``json`` decodes it (``\\u0041`` → ``A``); as written if invalid."""
    if "\\" not in key:
        return key
    try:
        out = json.loads(f'"{key}"')
    except ValueError:
        return key
    return out if isinstance(out, str) else key


# ---- excerpts: JSON cut off, or pasted without its enclosing braces

_DECODER = json.JSONDecoder()
_STRUCT_RE = re.compile(r'[{}\[\]"\\]')


def _brackets(text: str, in_string: list[bool]) -> Iterator[tuple[int, str]]:
    """(index, bracket) of every ``{}[]`` of ``text`` outside JSON strings, in one pass over
    the structural characters (escapes inside strings skipped). ``in_string[0]`` says, once
    the iteration ends, whether the text stops inside a string (a cut-off paste)."""
    in_str = False
    skip = -1
    for m in _STRUCT_RE.finditer(text):
        j = m.start()
        if j < skip:
            continue
        ch = text[j]
        if in_str:
            if ch == "\\":
                skip = j + 2
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch != "\\":
            yield j, ch
    in_string[0] = in_str


_JSON_LINE_FIRST = frozenset('{}[]",:-0123456789')
_PARTIAL = "\x00partial"
_MAX_DEPTH = 64
_MAX_DOCS = 64
_MAX_FAILURES = 4


def _json_span(text: str) -> int:
    """Length of the leading part of ``text`` made of JSON lines: up to the first line (after
    the first) that starts with something no JSON line starts with (the next shell prompt)."""
    pos = text.find("\n")
    while pos != -1:
        nxt = text.find("\n", pos + 1)
        line = text[pos + 1 : nxt if nxt != -1 else len(text)].lstrip()
        if line and line[0] not in _JSON_LINE_FIRST:
            return pos
        pos = nxt
    return len(text)


def _repair(text: str, members: bool) -> tuple[Any, int] | None:
    """Read as much of a damaged JSON text as is whole: (object, number of unmatched ``}``).

    ``members``: the text is the inside of an object (``"PORT": {...}, "QUEUE": {...}``, or a
    paste that starts in the middle of a table or an entry). Each ``}`` that closes an object
    opened before the excerpt gets a placeholder key (``_PARTIAL`` + depth) so the rest still
    decodes; the caller drops or re-homes those. A text cut off in the middle keeps what comes
    before its last ``}``: only complete objects are read, never half an entry.
    Linear: one pass over the structural characters; ``None`` when nothing decodes.
    """
    text = text[: _json_span(text)]
    depth = lowest = 0
    for _, ch in _brackets(text, [False]):
        if ch in "{[":
            depth += 1
            if depth > _MAX_DEPTH:
                return None
        elif ch in "}]":
            depth -= 1
            lowest = min(lowest, depth)
    unmatched = -lowest
    if unmatched > _MAX_DEPTH:
        return None
    prefix = ("{" if members else "") + "".join(
        f'"\\u0000partial{i}": {{'
        for i in range(unmatched)  # decodes to _PARTIAL + i
    )
    built = prefix + text
    stack: list[str] = []
    cut: tuple[int, tuple[str, ...]] | None = None
    ended_in_string = [False]
    for j, ch in _brackets(built, ended_in_string):
        if ch in "{[":
            stack.append(ch)
        elif stack:
            stack.pop()
            cut = (j + 1, tuple(stack))
    if not stack and not ended_in_string[0]:
        candidate = built.rstrip().rstrip(",")
    elif cut is not None:
        head, open_ = cut
        candidate = built[:head] + "".join("}" if c == "{" else "]" for c in reversed(open_))
    else:
        return None
    try:
        return loads_json(candidate), unmatched
    except ValueError:  # RecursionError is a ValueError subclass's sibling: caught by caller
        return None


def _split_partials(data: Any) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
    """Take the placeholder keys of :func:`_repair` out of ``data``: (the tables and entries it
    names, the entry sets of tables whose name is not in the excerpt, partial entries dropped)."""
    if not isinstance(data, dict):
        return {}, [], 0
    named: dict[str, Any] = {}
    anonymous: list[dict[str, Any]] = []
    dropped = 0
    for key, value in data.items():
        if not (isinstance(key, str) and key.startswith(_PARTIAL)):
            named[key] = value
            continue
        inner, anon, d = _split_partials(value)
        anonymous.extend(anon)
        dropped += d
        objects = {k: v for k, v in inner.items() if isinstance(v, dict)}
        if len(objects) < len(inner):
            dropped += 1  # scalar fields: the end of an entry whose name is cut away
        if objects and _is_entry_set(objects) and not any(k in KNOWN_TABLES for k in objects):
            anonymous.append(objects)  # entries of a table whose name was cut away
        else:
            for k, v in objects.items():
                named.setdefault(k, v)
    return named, anonymous, dropped


def _is_entry_set(d: dict[str, Any]) -> bool:
    """``{"Ethernet0": {"lanes": "0,1", ...}, ...}``: objects of fields (the inside of one
    table), rather than objects of objects (a document of tables)."""
    return bool(d) and all(
        isinstance(v, dict) and not any(isinstance(f, dict) for f in v.values()) for v in d.values()
    )


# which table a set of entries is, when the table's name is not in the capture
_FIELD_TABLES: tuple[tuple[str, frozenset[str]], ...] = (
    ("PORT", frozenset({"lanes"})),
    ("PORT_QOS_MAP", frozenset({"pfc_enable", "pfcwd_sw_enable", "dscp_to_tc_map",
                                "tc_to_queue_map", "tc_to_pg_map", "pfc_to_queue_map"})),
    ("BUFFER_PROFILE", frozenset({"xoff", "xon", "dynamic_th", "static_th", "pool"})),
    ("WRED_PROFILE", frozenset({"green_min_threshold", "green_max_threshold", "ecn",
                                "wred_green_enable"})),
    ("QUEUE", frozenset({"scheduler", "wred_profile"})),
    ("PFC_WD", frozenset({"detection_time", "restoration_time", "POLL_INTERVAL"})),
)  # fmt: skip
_VAR_JSON_RE = re.compile(r"--var-json[ \t=]+[\"']?([A-Z][A-Z0-9_]{1,60})")
_JQ_TABLE_RE = re.compile(r"\|[ \t]*+jq[ \t]++(?:-\w+[ \t]++)*+[\"']?\.\"?([A-Z][A-Z0-9_]{1,60})\b")
"""``show runningconfiguration all | jq '.TABLE'`` (or ``cat config_db.json | jq .TABLE``):
jq prints the table's entries without its name."""


def _table_hint(lines: list[str], start: int) -> tuple[str, str] | None:
    """(table, reason) named by the command printed just before line index ``start``."""
    for j in range(start - 1, max(-1, start - 4), -1):
        text = lines[j]
        if "--var-json" in text:
            m = _VAR_JSON_RE.search(text)
            if m is not None and m.group(1) in KNOWN_TABLES:
                return m.group(1), f"from the command '{text.strip()[-120:]}'"
        if "jq" in text:
            m = _JQ_TABLE_RE.search(text)
            if m is not None and m.group(1) in KNOWN_TABLES:
                return m.group(1), f"from the command '{text.strip()[-120:]}'"
        if "show runningconfiguration ports" in text:
            return "PORT", "from the command 'show runningconfiguration ports'"
        if text.strip() and text.lstrip()[0] not in _JSON_LINE_FIRST:
            break
    return None


def _table_by_fields(entries: dict[str, Any]) -> str | None:
    """The table a set of entries belongs to, from field names only it uses (``lanes`` → PORT);
    ``None`` when the entries disagree or say nothing distinctive."""
    guesses: set[str] = set()
    for value in entries.values():
        if not isinstance(value, dict):
            return None
        fields = set(value)
        for table, marks in _FIELD_TABLES:
            if fields & marks:
                guesses.add(table)
                break
        else:
            if fields and all(str(k).isdecimal() for k in fields):
                if any(int(k) > 7 for k in fields):
                    guesses.add("DSCP_TO_TC_MAP")  # keys above 7: DSCP, not TC or priority
                else:
                    return None
    return guesses.pop() if len(guesses) == 1 else None


def _salvage(body: str, result: ParseResult, offset: int) -> dict[str, Any]:
    """Decode each ``"TABLE": {`` on its own after a JSON error; a table cut off by the end of
    the capture keeps its complete entries (:func:`_repair`)."""
    out: dict[str, Any] = {}
    for m in re.finditer(r'"([A-Z][A-Z0-9_]*)"\s*:\s*(?=\{)', body):
        name = m.group(1)
        if name in out:
            continue
        try:
            obj, _ = _DECODER.raw_decode(body, m.end())
        except ValueError:
            line = body.count("\n", 0, m.start()) + offset
            fixed = _repair(body[m.end() :], members=False) if name in KNOWN_TABLES else None
            if fixed is not None and isinstance(fixed[0], dict) and fixed[0]:
                out[name] = fixed[0]
                result.warn(
                    line,
                    f"table {name} is cut off: only its complete entries are read (an excerpt)",
                )
                continue
            result.warn(line, f"table {name} could not be salvaged from the malformed JSON")
            continue
        if isinstance(obj, dict):
            out[name] = obj
    return out


def json_docs(
    lines: list[str], result: ParseResult, skip: set[int]
) -> list[tuple[dict[str, Any], int]]:
    """The JSON objects of the capture, in order, with the index of their first line: whole
    documents (a shell prompt or other text may stand between them), a document cut off or
    damaged (its tables salvaged), or an excerpt without the outer braces."""
    docs: list[tuple[dict[str, Any], int]] = []
    n = len(lines)
    i = 0
    failures = 0  # each failed attempt reads the rest of the text: a few, not one per line
    while i < n and len(docs) < _MAX_DOCS:
        stripped = lines[i].lstrip()
        starts = ("{", "[") if failures >= _MAX_FAILURES else ("{", "[", '"')
        if i in skip or not stripped.startswith(starts):
            i += 1
            continue
        body = "\n".join(lines[i:])
        lead = len(body) - len(body.lstrip())
        if stripped[0] == '"':
            fixed = _repair(body[lead:], members=True)
            if fixed is None or not isinstance(fixed[0], dict):
                failures += 1
                i += 1  # a quoted line of prose, not JSON
                continue
            named, anonymous, dropped = _split_partials(fixed[0])
            what = "config_db.json excerpt without its enclosing braces: read as far as it goes"
            if dropped:
                what += "; it starts inside an entry whose name is not in the capture (skipped)"
            result.warn(i + 1, what, lines[i])
            docs.extend(_with_anonymous(named, anonymous, lines, i, result))
            i += body.count("\n", 0, lead + _json_span(body[lead:])) + 1
            continue
        try:
            data, end = _DECODER.raw_decode(body, lead)
        except ValueError as exc:
            span = _json_span(body[lead:])
            multiline = "\n" in body[lead : lead + span]
            lineno = getattr(exc, "lineno", None)
            line = lineno + i if isinstance(lineno, int) else None
            bad = lines[line - 1] if line is not None and 0 < line <= n else ""
            msg = getattr(exc, "msg", str(exc))
            later = ParseResult(kind=result.kind)
            salvaged: dict[str, Any] = _salvage(body, later, i + 1)
            found: list[tuple[dict[str, Any], int]] = []
            if any(k in KNOWN_TABLES for k in salvaged):
                found = [(salvaged, i)]
            else:  # no table name in it: a table's entries, cut off (`--var-json TABLE`)
                fixed = _repair(body[lead:], members=False)
                if fixed is not None:
                    named, anonymous, _dropped = _split_partials(fixed[0])
                    found = _with_anonymous(named, anonymous, lines, i, later)
            if multiline or found:
                result.warn(line, f"malformed JSON ({msg}); salvaging tables", bad)
                result.warnings.extend(later.warnings)
            docs.extend(found)
            if found and found[0][0] is salvaged:
                break  # salvaging read every table to the end of the text
            failures += 1
            if failures > _MAX_FAILURES:
                break
            i += body.count("\n", 0, lead + span) + 1
            continue
        if isinstance(data, list):
            merged = _merge_list(data, result, i + 1)
            if merged is None:
                result.warn(i + 1, "config_db JSON must be an object of tables", lines[i])
            else:
                docs.append((merged, i))
        elif isinstance(data, dict):
            docs.extend(_with_anonymous(data, [], lines, i, result))
        else:
            result.warn(i + 1, "config_db JSON must be an object of tables", lines[i])
        i += body.count("\n", 0, end) + 1
    return docs


def _with_anonymous(
    named: dict[str, Any],
    anonymous: list[dict[str, Any]],
    lines: list[str],
    start: int,
    result: ParseResult,
) -> list[tuple[dict[str, Any], int]]:
    """Documents of ``named`` plus entry sets whose table must be found: a whole object of
    entries (``--var-json TABLE``, ``show runningconfiguration ports``) counts as one."""
    if (
        named
        and not anonymous
        and not any(k in KNOWN_TABLES for k in named)
        and _is_entry_set(named)
        and not list(tables_of(named))
    ):
        anonymous, named = [named], {}
    out: dict[str, Any] = dict(named)
    implicit: str | None = None
    for entries in anonymous:
        hint = _table_hint(lines, start)
        if hint is None:
            guess = _table_by_fields(entries)
            hint = (guess, f"from their fields ({_marks(guess, entries)})") if guess else None
        if hint is None:
            result.warn(
                start + 1,
                f"{len(entries)} entries without their table name and no field that tells the "
                "table; skipped",
            )
            continue
        table, why = hint
        result.warn(start + 1, f"{len(entries)} entries without their table name: read as {table} "
                    f"{why}")  # fmt: skip
        into = out.setdefault(table, {})
        if isinstance(into, dict):
            for k, v in entries.items():
                into.setdefault(k, v)
        implicit = implicit or table
    if not out:
        return []
    if implicit is not None:
        out[IMPLICIT] = implicit
    return [(out, start)]


IMPLICIT = "\x00implicit"
"""Key of a document naming the table its entries without a table name were read as."""


def _marks(table: str, entries: dict[str, Any]) -> str:
    for name, marks in _FIELD_TABLES:
        if name == table:
            seen = sorted({f for v in entries.values() if isinstance(v, dict) for f in v} & marks)
            return ", ".join(seen)
    return "integer keys above 7"


def regroup(data: dict[str, Any]) -> dict[str, Any]:
    """The flat CONFIG_DB form of redis dumps and sonic-utilities ``mock_tables``
    (``"PORT_QOS_MAP|Ethernet0": {...}``; ``sonic-db-dump`` wraps fields as
    ``{"type": "hash", "value": {...}}``) → ``{"PORT_QOS_MAP": {"Ethernet0": {...}}}``."""
    if not any(isinstance(k, str) and k.split("|", 1)[0] in KNOWN_TABLES and "|" in k
               for k in data):  # fmt: skip
        return data
    out: dict[str, Any] = {}
    for key, value in data.items():
        table, bar, rest = str(key).partition("|")
        if not bar:
            out.setdefault(table, value)
            continue
        wrapped = isinstance(value, dict) and isinstance(value.get("value"), dict)
        fields = value["value"] if wrapped and "type" in value else value
        sub = out.setdefault(table, {})
        if isinstance(sub, dict):
            sub[rest] = fields
    return out


def tables_of(data: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(namespace, tables) pairs: the top object, or each ASIC namespace of a multi-ASIC dump."""
    data = regroup(data)
    if any(k in KNOWN_TABLES for k in data):
        yield "", data
        return
    for ns, sub in data.items():
        if isinstance(sub, dict):
            grouped = regroup(sub)
            if any(k in KNOWN_TABLES for k in grouped):
                yield ns, grouped


def _merge_list(items: list[Any], result: ParseResult, line: int) -> dict[str, Any] | None:
    """A JSON array of table objects (sonic-mgmt configlets, ``[{"PORT": {...}}, {"QUEUE":
    {...}}]``) → one object, applied in order as ``sonic-cfggen``/``config load`` would:
    later entries add tables and keys, and their fields update those of the same key."""
    if not items or not all(isinstance(i, dict) for i in items):
        return None
    merged: dict[str, Any] = {}
    for item in items:
        for table, entries in item.items():
            if not isinstance(entries, dict):
                result.warn(line, f"table {table} is not an object; skipped")
                continue
            into = merged.setdefault(table, {})
            for key, fields in entries.items():
                if isinstance(fields, dict) and isinstance(into.get(key), dict):
                    into[key].update(fields)
                else:
                    into[key] = fields
    return merged
