"""CONFIG_DB hashes as ``redis-cli`` and ``sonic-db-cli`` print them → the flat CONFIG_DB form.

``redis-cli -n 4 hgetall "PORT|Ethernet0"`` (numbered ``1) "field"`` lines, or ``--raw`` and
``| paste - -`` lines), ``redis-cli ... hget "KEY" field`` and ``sonic-db-cli CONFIG_DB HGETALL
"KEY"`` (a Python dict) become ``{"PORT|Ethernet0": {field: value}}``, with the line of the
command that printed each hash; other databases (``-n 0``, ``select 1``, ``APPL_DB``) are
ignored. :mod:`~aifabric.evidence.sonic_config` regroups and reads them like config_db JSON.

Sources: redis-cli reply formatting (numbered multi-bulk replies); sonic-buildimage PR 21797
(the capture under tests/fixtures/evidence/sonic-config-db/).
"""

from __future__ import annotations

import re

from aifabric.evidence.base import ParseResult
from aifabric.evidence.sonic_json import KNOWN_TABLES

__all__ = ["HGET_RE", "redis_output"]

_REDIS_CMD_RE = re.compile(
    r"(?i)\b(hgetall|hget)[ \t]+(\"[^\"\n]{1,300}\"|'[^'\n]{1,300}'|[^\s\"']{1,300})"
    r"(?:[ \t]+(\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s\"']{1,200}))?"
)
_REDIS_DB_RE = re.compile(r"(?:^|\s)-n[ \t]*(\d{1,2})\b|\[(\d{1,2})\]>")
_DB_NAME_RE = re.compile(r"\b([A-Z][A-Z_]{1,30}_DB)\b")
_SELECT_RE = re.compile(r"(?i)\bselect[ \t]+(\d{1,2})\b")
_NUMBERED_RE = re.compile(r"\s{0,8}\d{1,6}\) \"(.*)\"")
_PY_PAIR_RE = re.compile(
    r"(?<![\\\w'])'((?:[^'\\\n]|\\.){0,300})': '((?:[^'\\\n]|\\.){0,4000})'"
)
"""A ``'key': 'value'`` pair of a Python dict repr; a pair starts after ``{``, a space or a comma,
never after a backslash or a letter (an escaped quote inside a value), which also keeps the
search linear on a line of escaped quotes."""
HGET_RE = re.compile(r"(?i)hget")
_REDIS_EMPTY = ("(empty array)", "(empty list or set)", "(nil)", "(integer) 0")


def _unquote(token: str) -> str:
    t = token.strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "\"'":
        return t[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return t


def redis_output(
    lines: list[str], result: ParseResult
) -> tuple[dict[str, dict[str, str]], dict[tuple[str, str], int], set[int]]:
    """CONFIG_DB hashes printed by ``redis-cli -n 4 hgetall "T|k"`` (numbered ``1) "field"``
    lines, or ``--raw``/piped plain lines), ``redis-cli ... hget "T|k" field`` and
    ``sonic-db-cli CONFIG_DB HGETALL "T|k"`` (a Python dict) → ``{"T|k": {field: value}}``,
    the line of each command, and the line indexes used."""
    flat: dict[str, dict[str, str]] = {}
    where: dict[tuple[str, str], int] = {}
    used: set[int] = set()
    selected: int | None = None
    n = len(lines)
    i = 0
    while i < n:
        text = lines[i]
        low = text.lower()
        if "select" in low:
            sm = _SELECT_RE.search(text)
            if sm is not None:
                selected = int(sm.group(1))
        m = _REDIS_CMD_RE.search(text) if "hget" in low else None
        if m is None:
            i += 1
            continue
        key = _unquote(m.group(2))
        table, bar, entry = key.partition("|")
        dbm = _REDIS_DB_RE.search(text)
        db = int(dbm.group(1) or dbm.group(2)) if dbm is not None else selected
        names = _DB_NAME_RE.findall(text) if "sonic-db-cli" in low else []
        if (
            not bar
            or table not in KNOWN_TABLES
            or (db is not None and db != 4)
            or (names and names[0] != "CONFIG_DB")
        ):
            i += 1
            continue
        used.add(i)
        single = m.group(1).lower() == "hget"
        field = _unquote(m.group(3)) if single and m.group(3) else None
        fields: dict[str, str] = {}
        values: list[str] = []
        j = i + 1
        while j < n:
            out = lines[j].strip()
            if not out:
                if values or fields or single:
                    break
                j += 1
                continue
            if "hget" in out.lower() or out.endswith(("$", "#", ">")) or "redis-cli" in out:
                break
            if out.startswith("```"):
                break
            used.add(j)
            nm = _NUMBERED_RE.fullmatch(lines[j].rstrip())
            if nm is not None:
                values.append(nm.group(1).replace('\\"', '"'))
            elif out.startswith("{") and not single:
                fields.update(
                    (a.replace("\\'", "'"), b.replace("\\'", "'"))
                    for a, b in _PY_PAIR_RE.findall(out)
                )
                j += 1
                break
            elif out in _REDIS_EMPTY:
                j += 1
                break
            elif single:
                values.append(_unquote(out))
                j += 1
                break
            elif "\t" in out:  # `| paste - -`
                a, _, b = out.partition("\t")
                fields[a.strip()] = b.strip()
            else:
                values.append(out)  # --raw: field and value on alternate lines
            j += 1
        if single:
            if field is not None and values:
                fields[field] = values[0]
        else:
            if len(values) % 2:
                result.warn(i + 1, f"{key}: odd number of field/value lines; last one ignored")
            fields.update(zip(values[0::2], values[1::2], strict=False))
        if fields:
            flat.setdefault(key, {}).update(fields)
            where.setdefault((table, entry), i + 1)
        i = j
    return flat, where, used
