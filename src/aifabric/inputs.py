"""Input limits as policy, in one place: what aifabric agrees to read, and how much.

Users feed whatever they have: a FIFO, ``/dev/zero``, a 2 GB log, a document nested thousands
of levels deep. The rules, applied wherever a file is read (fabric files, catalogs, captures,
bundles):

* **Regular files and standard input only.** A FIFO, character or block device or socket is
  refused with one line (it may block forever or never end); ``-`` reads standard input, up to
  the same size cap.
* **A size cap per input class** (:data:`LIMITS`): fabric files and catalogs, device configs,
  and captures (logs, counters). ``AIFABRIC_MAX_INPUT`` (a size such as ``8G``) raises or
  lowers every cap at once, for the odd legitimate giant.
* **Nesting depth checked before decoding** JSON or YAML (:func:`check_nesting`): Python's
  decoders recurse once per level and die with ``RecursionError`` a few thousand levels down;
  no real config nests past a few dozen, so anything deeper than :data:`MAX_NESTING` is
  refused with the line where the limit was passed.

Errors are :class:`aifabric.errors.InputError` (exit 2). :class:`NestingError` is also a
``ValueError``, so parsers that treat undecodable JSON as "not this format" keep doing so.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any, Literal

from aifabric.errors import InputError
from aifabric.units import format_bytes, parse_bytes

__all__ = [
    "LIMITS",
    "MAX_NESTING",
    "InputClass",
    "NestingError",
    "check_nesting",
    "close_truncated_json",
    "input_limit",
    "loads_json",
    "nesting_depth",
    "read_input",
]

InputClass = Literal["fabric", "config", "capture"]

LIMITS: dict[InputClass, int] = {
    "fabric": 1 << 30,  # 1 GiB: a 100,000-server fabric file is ~60 MB of YAML
    "config": 256 << 20,  # 256 MiB: the largest config_db.json seen is a few MB
    "capture": 4 << 30,  # 4 GiB: NCCL_DEBUG=INFO of thousands of ranks
}
"""Default size caps per input class (bytes)."""

MAX_NESTING = 200
"""Deepest JSON/YAML nesting decoded (real documents stay under ~30 levels)."""

ENV_OVERRIDE = "AIFABRIC_MAX_INPUT"


class NestingError(InputError, ValueError):
    """A document nested deeper than :data:`MAX_NESTING` (also a ``ValueError``)."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.lineno = line


def input_limit(kind: InputClass) -> int:
    """The size cap of ``kind``: ``AIFABRIC_MAX_INPUT`` when set, else :data:`LIMITS`."""
    raw = os.environ.get(ENV_OVERRIDE)
    if raw:
        try:
            return parse_bytes(raw)
        except InputError as exc:
            raise InputError(f"{ENV_OVERRIDE}={raw!r}: {exc}") from None
    return LIMITS[kind]


def _too_big(name: str, size: int, cap: int, kind: InputClass) -> InputError:
    return InputError(
        f"{name}: {format_bytes(size)} is over the {format_bytes(cap)} limit for {kind} input; "
        f"set {ENV_OVERRIDE} (e.g. {ENV_OVERRIDE}=16G) to read it anyway"
    )


def read_input(path: Path | str, kind: InputClass = "capture") -> bytes:
    """The bytes of ``path`` (``-``: standard input) under the policy of this module."""
    cap = input_limit(kind)
    if str(path) == "-":
        head = sys.stdin.buffer.read(65536)
        if b"\x00" in head:  # ``< /dev/zero``: refuse before reading gigabytes of it
            raise InputError("<stdin>: binary data (NUL bytes), not a captured text output")
        data = head + sys.stdin.buffer.read(cap + 1 - len(head)) if len(head) == 65536 else head
        if len(data) > cap:
            raise _too_big("<stdin>", len(data), cap, kind)
        return data
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise InputError(f"{p}: no such file") from None
    except OSError as exc:
        raise InputError(f"{p}: cannot read: {exc.strerror or exc}") from None
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        raise InputError(f"{p}: is a directory, expected a file")
    if not stat.S_ISREG(mode):
        what = (
            "a FIFO"
            if stat.S_ISFIFO(mode)
            else "a device"
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket"
            if stat.S_ISSOCK(mode)
            else "not a regular file"
        )
        raise InputError(
            f"{p}: is {what}, not a regular file; to read a pipe give '-' and redirect it to "
            "standard input"
        )
    if st.st_size > cap:
        raise _too_big(str(p), st.st_size, cap, kind)
    try:
        with p.open("rb") as fh:
            data = fh.read(cap + 1)  # a file growing while read is still capped
    except OSError as exc:
        raise InputError(f"{p}: cannot read: {exc.strerror or exc}") from None
    if len(data) > cap:
        raise _too_big(str(p), len(data), cap, kind)
    return data


def _block_level(stack: list[tuple[int, int]], marks: list[int], content: int) -> int:
    """Level of a block-YAML line (see :func:`nesting_depth`); updates ``stack`` in place.

    ``marks``: columns of the line's ``-``/``?``/``:`` markers; ``content``: column of its
    content. The parent is the nearest earlier entry whose content column is left of the line
    (or at it, for a marker line: ``key:`` then ``- item`` at the same column)."""
    start = marks[0] if marks else content
    while stack and (stack[-1][0] > start if marks else stack[-1][0] >= start):
        stack.pop()
    level = stack[-1][1] if stack else 0
    for col in marks:
        level += 1
        stack.append((col + 1, level))
    level += 1
    stack.append((content, level))
    return level


def is_parsed_companion(path: Path) -> bool:
    """``X.json`` beside a capture ``X``: the parsed records a probe bundle keeps next to each
    raw output (``ip-link.txt.json`` beside ``ip-link.txt``). Readers of a bundle take the raw
    output and skip these, so a bundle re-parses with newer parsers and nothing is read twice."""
    return path.suffix == ".json" and path.with_suffix("").is_file()


def nesting_depth(text: str, *, yaml: bool = True, stop: int | None = None) -> tuple[int, int]:
    """(deepest nesting, 1-based line where it is reached) of a JSON or YAML document.

    One linear pass. Counts ``[``/``{`` against ``]``/``}`` outside quoted strings (JSON, and
    YAML flow style). With ``yaml``, block style too, as an upper bound: each ``- ``, ``? ``
    or ``: `` marker before a line's content opens a level, and so does the content, each
    child of the nearest earlier line part that starts left of it (:func:`_block_level`), so
    ``- - x`` is a list in a list and the lines under ``- k:`` sit inside a mapping inside a
    list.
    ``stop``: return as soon as the depth passes it.
    """
    deepest, where, line, depth = 0, 1, 1, 0
    quote = ""
    escaped = False
    at_start = True
    indent = 0
    marks: list[int] = []
    stack: list[tuple[int, int]] = []
    block = 0
    for ch in text:
        if at_start:
            if ch in {" ", "\t"}:
                indent += 1
                continue
            if yaml and ch in {"-", "?", ":"}:
                marks.append(indent)
                indent += 1
                continue
            if ch in {"\n", "\r"}:
                indent = 0
                marks = []
                line += ch == "\n"
                continue
            at_start = False
            level = depth
            if yaml:
                block = _block_level(stack, marks, indent)
                level += block
            if level > deepest:
                deepest, where = level, line
                if stop is not None and deepest > stop:
                    return deepest, where
        if ch == "\n":
            line += 1
            at_start, indent = True, 0
            marks = []
            if quote == "'":
                quote = ""
            continue
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\" and quote == '"':
                escaped = True
            elif ch == quote:
                quote = ""
            continue
        if ch == '"' or (yaml and ch == "'"):
            quote = ch
        elif ch in {"[", "{"}:
            depth += 1
            level = depth + (block if yaml else 0)
            if level > deepest:
                deepest, where = level, line
                if stop is not None and deepest > stop:
                    return deepest, where
        elif ch in {"]", "}"}:
            depth = max(depth - 1, 0)
    return deepest, where


def check_nesting(text: str, name: str, *, yaml: bool = True, limit: int = MAX_NESTING) -> None:
    """Raise :class:`NestingError` when ``text`` nests deeper than ``limit`` levels."""
    deepest, line = nesting_depth(text, yaml=yaml, stop=limit)
    if deepest > limit:
        raise NestingError(
            f"{name} line {line}: nested deeper than {limit} levels; refusing to decode it", line
        )


def loads_json(text: str, name: str = "<input>") -> Any:
    """``json.loads`` after the nesting check: raises ``ValueError`` (``JSONDecodeError`` or
    :class:`NestingError`, both with ``lineno``) and never ``RecursionError``."""
    check_nesting(text, name, yaml=False)
    return json.loads(text)


_CLOSER = {"{": "}", "[": "]"}


def close_truncated_json(text: str) -> tuple[str, int] | None:
    """A JSON document cut short (a paste or an excerpt that stops mid-document) closed after
    its last complete member: ``({"a": 1, "b": {"c": 2}}, line)`` for ``{"a": 1, "b": {"c": 2,
    "d"`` , with the 1-based line of the cut; ``None`` when the text is not such a prefix.

    One pass over the text tracking strings and the open ``{``/``[`` stack; the cut is made at the
    last ``,`` outside a string (everything before it is complete members) and the brackets
    open there are closed. The caller parses the result and says that the input was cut.
    """
    stack: list[str] = []
    in_str = esc = False
    cut: tuple[int, str] | None = None
    for i, ch in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch in "{[":
            stack.append(_CLOSER[ch])
        elif ch in "}]":
            if not stack or stack.pop() != ch:
                return None
            if not stack:
                return None  # the document closed: not a truncated one
        elif ch == "," and stack:
            cut = (i, "".join(reversed(stack)))
    if not stack or cut is None:
        return None
    at, closers = cut
    return text[:at] + closers, text.count("\n", 0, at) + 1
