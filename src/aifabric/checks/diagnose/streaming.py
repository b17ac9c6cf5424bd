"""Huge captures read in chunks, with per-subject summaries instead of every record (issue 16).

A 1 GiB ``NCCL_DEBUG=INFO`` log holds ~12 million lines and ~3 million records, nearly all of
them the same few hundred messages printed again by every rank and every communicator. Held
whole (the text, its lines, one record per line) that is ~10× the file in memory. A file larger
than :data:`STREAM_THRESHOLD` whose head is one tool's output of a kind in :data:`CUTS` is
therefore read here instead of by :func:`aifabric.checks.diagnose.engine.load_evidence`'s
whole-file path (smaller files, pastes of several tools, and other kinds take that path
unchanged):

1. **Chunks of whole lines**, ~:data:`CHUNK_BYTES` each, decoded like the whole file
   (:func:`aifabric.evidence.base.decode_capture`), then cut where the kind allows
   (:data:`CUTS`): an NCCL log before a line holding ``NCCL`` (every such line is read on its
   own; the launcher reports read over several lines carry no ``NCCL``); an ``ethtool -S``
   series before a line that starts a dump (``NIC statistics:``, an ``ethtool -S`` prompt, a
   ``==> file <==`` header, and the interface-name lines just above them). The lines after the
   cut go to the next chunk. A chunk with no such line is cut at its end and, for ``ethtool
   -S``, the dump it ends in is continued by the first record of the next chunk
   (:func:`aifabric.evidence.ethtool_stats.extend_dump`), as one pass would read it.
2. Each chunk is parsed with the kind's parser and its records' line fields (``line``,
   ``*_line``, ``*_lines``) moved by the chunk's first line, so evidence quotes file lines.
3. **Summaries**: ``ethtool -S`` snapshots are kept per (host, interface) as the first and the
   latest, the latest standing for all but the first (:class:`_Series`). Other records whose
   content is the same (every field but the line numbers) are kept :data:`KEEP_SAME` times;
   further ones only add to the last kept item's ``repeat``. Catalogue
   hits (same entry, same captured groups) and error-looking lines (same text with numbers
   masked) are kept the same way. Whatever counts records (rule ``count`` conditions and
   ``{count}``, "(N records)", "(N lines)", snapshot counts) sums ``repeat``
   (:func:`aifabric.checks.diagnose.engine.weight`), so a rule concludes what it concludes on
   the whole file; what changes is that evidence quotes the first occurrences only.
4. Only the lines kept items and suspects quote are held (:class:`SparseLines`, at most
   :data:`KEEP_SPAN` lines of one record), so ``quote()`` works as on a whole file.

Memory is then bounded by the number of *distinct* messages (a property of the fleet and the
job, not of how long it ran) plus one chunk.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from aifabric.errors import InputError
from aifabric.evidence.base import ParseResult, ParseWarning, Record, decode_capture
from aifabric.evidence.ethtool_stats import EthtoolStats, extend_dump
from aifabric.evidence.paste import parse_paste, prompt_lines
from aifabric.evidence.registry import DETECT_WINDOW, parse_text
from aifabric.inputs import input_limit

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence
    from aifabric.checks.diagnose.signatures import SignatureIndex

__all__ = [
    "CHUNK_BYTES",
    "CUTS",
    "KEEP_SAME",
    "KEEP_SPAN",
    "STREAM_THRESHOLD",
    "SparseLines",
    "chunks",
    "load_streamed",
    "offset_record",
    "stream_parse",
    "streamed_kind",
]

STREAM_THRESHOLD = 32 << 20
"""Files larger than this (bytes) are read in chunks; smaller ones whole."""

CHUNK_BYTES = 4 << 20
"""Bytes read per chunk (then cut at a line boundary the kind allows)."""

KEEP_SAME = 3
"""Items kept per distinct content (record, catalogue hit, error-looking line): enough to quote
a few occurrences; the rest are counted on the last kept one."""

KEEP_SPAN = 4096
"""Lines of one kept record held for quoting (a dump of a few thousand counters at most)."""

_NORMALISE = re.compile(r"0x[0-9a-fA-F]+|\d+")


class SparseLines(Sequence[str]):
    """The lines of a file read in chunks: only those kept for quoting are held; the others read
    as empty. Same interface as the ``list[str]`` of a whole file (``len`` is the file's)."""

    __slots__ = ("_kept", "total")

    def __init__(self) -> None:
        self._kept: dict[int, str] = {}
        self.total = 0

    def keep(self, number: int, text: str) -> None:
        """Hold line ``number`` (1-based)."""
        self._kept[number] = text

    def drop(self, numbers: range) -> None:
        """Stop holding ``numbers``."""
        for n in numbers:
            self._kept.pop(n, None)

    def __len__(self) -> int:
        return self.total

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            start, stop, step = index.indices(self.total)
            return [self[i] for i in range(start, stop, step)]
        if index < 0:
            index += self.total
        if not 0 <= index < self.total:
            raise IndexError(index)
        return self._kept.get(index + 1, "")

    def __iter__(self) -> Iterator[str]:
        for i in range(self.total):
            yield self._kept.get(i + 1, "")


# -- cutting ----------------------------------------------------------------------------------

Cut = Callable[[list[str]], int]
"""Index of the line a chunk is cut before (the lines from there go to the next chunk); 0 when
the chunk holds no line it may be cut before."""


def _cut_nccl(lines: list[str]) -> int:
    for i in range(len(lines) - 1, 0, -1):
        if "NCCL" in lines[i]:
            return i
    return 0


_COUNTER = re.compile(r"^[ \t]*[^\s:][^:]{0,200}:[ \t]*-?\d+\b")


def _cut_ethtool(lines: list[str]) -> int:
    for i in range(len(lines) - 1, 0, -1):
        s = lines[i].lstrip()
        if "NIC statistics" in s or "ethtool" in s or s.startswith("==>"):
            cut = i
            # the interface name (or prompt) a dump's header follows belongs with it
            while cut > max(0, i - 3) and not _COUNTER.match(lines[cut - 1]):
                cut -= 1
            if cut > 0:
                return cut
    return 0


CUTS: dict[str, Cut] = {"nccl-log": _cut_nccl, "ethtool-stats": _cut_ethtool}
"""Kinds read in chunks, and where a chunk of each may be cut."""


def chunks(path: Path, kind: str) -> Iterator[tuple[int, list[str], bool]]:
    """(first file line, lines, whether the previous chunk was cut at a boundary the kind
    allows) of ``path``, decoded, ~:data:`CHUNK_BYTES` at a time."""
    cut = CUTS[kind]
    carry: list[str] = []
    first = 1
    clean = True
    name = str(path)
    with path.open("rb") as fh:
        rest = b""
        while True:
            data = fh.read(CHUNK_BYTES)
            final = not data
            data = rest + data
            end = len(data) if final else data.rfind(b"\n") + 1
            rest = data[end:]
            body = data[:end]
            if not final and end == 0:
                continue  # one line longer than a chunk: read on (the parsers cap long lines)
            lines = carry + (_decode(body, name) if body else [])
            if final:
                if lines:
                    yield first, lines, clean
                return
            at = cut(lines)
            was_clean = clean
            clean = at > 0
            if at <= 0:
                at = len(lines)
            carry = lines[at:]
            if at:
                yield first, lines[:at], was_clean
                first += at


def _decode(body: bytes, name: str) -> list[str]:
    if not body.strip():
        return body.decode("latin-1").replace("\r\n", "\n").replace("\r", "\n").split("\n")[:-1]
    text = decode_capture(body, name)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


# -- records ----------------------------------------------------------------------------------

_LINE_FIELDS: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {}


def _line_fields(cls: type) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(line fields, other fields) of a record class: ``line``, ``*_line``, ``*_lines``."""
    got = _LINE_FIELDS.get(cls)
    if got is None:
        names = [f.name for f in fields(cls)]
        lines = tuple(n for n in names if n in ("line", "lines") or n.endswith(("_line", "_lines")))
        got = _LINE_FIELDS[cls] = (lines, tuple(n for n in names if n not in lines))
    return got


def _moved(value: Any, offset: int) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value + offset if value > 0 else value
    if isinstance(value, dict):
        return {k: _moved(v, offset) for k, v in value.items()}
    if isinstance(value, list):
        return [_moved(v, offset) for v in value]
    return value


def offset_record(rec: Record, offset: int) -> None:
    """Move every line field of ``rec`` (and of the records it holds) down by ``offset``."""
    names, others = _line_fields(type(rec))
    for n in names:
        setattr(rec, n, _moved(getattr(rec, n), offset))
    for n in others:
        value = getattr(rec, n)
        if isinstance(value, Record):
            offset_record(value, offset)
        elif isinstance(value, (list, tuple)):
            for v in value:
                if isinstance(v, Record):
                    offset_record(v, offset)


def _span(rec: Record) -> range:
    """The lines of ``rec`` held for quoting."""
    end = rec.end_line if rec.end_line and rec.end_line > rec.line else rec.line
    return range(rec.line, min(end, rec.line + KEEP_SPAN) + 1)


class _Series:
    """``ethtool -S`` snapshots per (host, interface): the first and the latest, and how many.

    Counters are totals since the driver loaded, so what diagnosis reads of a series is its two
    ends (growth, :mod:`.derive_counters`) and how many snapshots it had; ``ethtool -S`` dumps are
    judged by no record verdict. A nameless dump takes the name of the dump before it when it
    prints the same counter names (or a subset or superset), as ``derive_counters`` groups them;
    the kept record carries that name so the grouping reads the same over the kept records."""

    __slots__ = ("ends", "prev")

    def __init__(self) -> None:
        self.ends: dict[tuple[Any, str | None], list[Any]] = {}
        """key → [first, latest or None, count]."""
        self.prev: tuple[str | None, frozenset[str]] | None = None

    def add(self, rec: EthtoolStats, lines: SparseLines, chunk: list[str], offset: int) -> None:
        name = rec.interface
        keys = frozenset(rec.counters)
        if name is None and self.prev is not None:
            pname, pkeys = self.prev
            if pname is not None and (keys <= pkeys or pkeys <= keys):
                name = rec.interface = pname
        self.prev = (name, keys)
        key = (getattr(rec, "host", None), name)
        got = self.ends.get(key)
        if got is None:
            self.ends[key] = [rec, None, 1]
        else:
            if got[1] is not None:
                lines.drop(_span(got[1]))  # the spans of two dumps never overlap
            got[1] = rec
            got[2] += 1
        for n in _span(rec):
            if offset < n <= lines.total:
                lines.keep(n, chunk[n - offset - 1])

    def kept(self) -> list[tuple[Record, int]]:
        """(record, how many snapshots it stands for), in input order."""
        out: list[tuple[Record, int]] = []
        for first, last, count in self.ends.values():
            out.append((first, 1))
            if last is not None:
                out.append((last, count - 1))
        out.sort(key=lambda p: p[0].line)
        return out


def _content(rec: Record) -> str:
    """What makes two records the same: type and every field but the line numbers."""
    _, others = _line_fields(type(rec))
    return f"{rec.record_type}{[getattr(rec, n) for n in others]!r}"


class _Kept:
    """First :data:`KEEP_SAME` occurrences per key, in order of first occurrence, with counts."""

    __slots__ = ("counts", "order", "seen")

    def __init__(self) -> None:
        self.seen: dict[Any, list[int]] = {}
        self.order: list[Any] = []
        self.counts: list[int] = []

    def add(self, key: Any, thing: Any) -> bool:
        """Keep ``thing`` (True) or count it on the last kept one of its key (False)."""
        at = self.seen.get(key)
        if at is None:
            at = self.seen[key] = []
        if len(at) < KEEP_SAME:
            at.append(len(self.order))
            self.order.append(thing)
            self.counts.append(1)
            return True
        self.counts[at[-1]] += 1
        return False


def _shifted(warnings: Sequence[ParseWarning], offset: int) -> list[ParseWarning]:
    """A chunk's warnings with file line numbers."""
    return [
        ParseWarning(w.line + offset if w.line else w.line, w.message, w.text) for w in warnings
    ]


def _stitch(
    prev: Record | None, prev_end: int, recs: list[Record], offset: int, clean: bool
) -> tuple[list[Record], int]:
    """A chunk's records with file line numbers; when the chunk was cut inside a dump, its first
    record continues ``prev`` (merged into it, :func:`extend_dump`) and is dropped. Returns the
    records left and ``prev``'s (new) last line."""
    if not clean and recs and _continues(prev, prev_end, recs[0], offset):
        offset_record(recs[0], offset)
        assert isinstance(prev, EthtoolStats) and isinstance(recs[0], EthtoolStats)
        extend_dump(prev, recs[0])
        prev_end = prev.end_line or prev.line
        recs = recs[1:]
    for rec in recs:
        offset_record(rec, offset)
    return recs, prev_end


def _continues(last: Record | None, last_end: int, rec: Record, offset: int) -> bool:
    """Whether ``rec`` (first record of a chunk starting after file line ``offset``, its lines
    not yet moved) continues ``last``, an ``ethtool -S`` dump ending on the line before: a chunk
    cut where no dump starts, inside a headerless dump."""
    return (
        isinstance(last, EthtoolStats)
        and isinstance(rec, EthtoolStats)
        and last_end == offset
        and rec.line == 1
        and not rec.header
        and rec.interface is None
    )


def stream_parse(path: Path, kind: str) -> Iterator[tuple[list[Record], list[ParseWarning]]]:
    """Records and warnings of ``path`` (a kind in :data:`CUTS`), chunk by chunk, with file line
    numbers: what one parse of the whole file gives, without holding it (``aifabric parse``).
    The last record of a chunk is held back until the next chunk shows whether it continues."""
    held: Record | None = None
    held_end = 0
    for first, chunk, clean in chunks(path, kind):
        offset = first - 1
        result = parse_text("\n".join(chunk) + "\n", kind, str(path))
        recs = result.records
        warns = _shifted(result.warnings, offset)
        recs, held_end = _stitch(held, held_end, recs, offset, clean)
        if not recs:
            yield [], warns
            continue
        out = ([held] if held is not None else []) + recs[:-1]
        held = recs[-1]
        held_end = held.end_line or held.line
        yield out, warns
    if held is not None:
        yield [held], []


# -- loading ----------------------------------------------------------------------------------


def streamed_kind(path: Path) -> str | None:
    """The kind ``path`` is read in chunks as: a regular file over :data:`STREAM_THRESHOLD` (and
    within the capture size cap) whose head is one tool's output of a kind in :data:`CUTS`;
    ``None`` for the whole-file path."""
    try:
        st = path.stat()
    except OSError:
        return None
    if not path.is_file() or st.st_size <= STREAM_THRESHOLD or st.st_size > input_limit("capture"):
        return None
    with path.open("rb") as fh:
        head = fh.read(DETECT_WINDOW)
    end = head.rfind(b"\n") + 1
    try:
        parts = parse_paste(decode_capture(head[:end] or head, str(path)), companions=False)
    except (InputError, RecursionError):
        return None
    if len(parts) != 1 or parts[0].subject is not None or parts[0].kind not in CUTS:
        return None
    return parts[0].kind


def load_streamed(
    ev: Evidence, path: Path, kind: str, host: str | None, index: SignatureIndex
) -> None:
    """Read ``path`` (of ``kind``, see :func:`streamed_kind`) in chunks into ``ev``."""
    from aifabric.checks.diagnose.engine import (  # noqa: PLC0415 - engine imports this module
        SCANNED_KINDS,
        EvidenceFile,
        Item,
        SignatureRecord,
        Suspect,
    )
    from aifabric.checks.diagnose.engine import _scan_line as scan_line  # noqa: PLC0415

    lines = SparseLines()
    ef = EvidenceFile(str(path), kind, ParseResult(kind), lines, path.name)
    records, hits, suspects = _Kept(), _Kept(), _Kept()
    series = _Series()
    hosts: set[str] = set()
    warnings: list[ParseWarning] = []
    prompts: set[int] = set()
    last: Record | None = None
    last_end = 0
    scanned = kind in SCANNED_KINDS
    for first, chunk, clean in chunks(path, kind):
        offset = first - 1
        lines.total = offset + len(chunk)
        text = "\n".join(chunk) + "\n"
        result = parse_text(text, kind, str(path))
        if len(warnings) < 100:
            warnings += _shifted(result.warnings[: 100 - len(warnings)], offset)
        recs, last_end = _stitch(last, last_end, result.records, offset, clean)
        for rec in recs:
            if isinstance(rec, EthtoolStats):
                series.add(rec, lines, chunk, offset)
                continue
            h = getattr(rec, "host", None)
            if h is not None and len(hosts) < 2:
                hosts.add(str(h))
            if records.add((h, _content(rec)), rec):
                for n in _span(rec):
                    if offset < n <= lines.total:
                        lines.keep(n, chunk[n - offset - 1])
        if recs:
            last = recs[-1]
            last_end = last.end_line or last.line
        if not scanned:
            continue
        here = {n + offset for n in prompt_lines(text)}
        prompts |= here
        for i, raw in enumerate(chunk):
            n = first + i
            if n in here:
                continue
            line = raw[:4096]
            found, errorish = scan_line(line, index)
            for hit in found:
                sig = hit.signature
                key = (sig.id, hit.program, tuple(sorted(hit.groups.items())))
                rec = SignatureRecord(
                    line=n, id=sig.id, program=hit.program, severity=sig.severity,
                    cause=sig.cause, groups=hit.groups,
                )  # fmt: skip
                if hits.add(key, rec):
                    lines.keep(n, raw)
            if not found and errorish:
                text_ = line.strip()
                if suspects.add(_NORMALISE.sub("#", text_)[:200], (n, text_)):
                    lines.keep(n, raw)
    subject = host or (next(iter(hosts)) if len(hosts) == 1 else None) or path.name
    ef.subject = subject
    ef.prompts = frozenset(prompts)
    snapshots = series.kept()
    ef.result.records = list(records.order) + [rec for rec, _ in snapshots]
    ef.result.warnings = warnings
    ev.files.append(ef)
    for w in warnings[:3]:
        ev.skipped.append(f"{path} line {w.line}: {w.message}")
    for rec, count in [*zip(records.order, records.counts, strict=True), *snapshots]:
        who = host or getattr(rec, "host", None) or subject
        ev.items.append(Item(rec, ef, str(who), kind, count))
    for rec, count in zip(hits.order, hits.counts, strict=True):
        ev.items.append(Item(rec, ef, subject, kind, count))
    for (n, text_), count in zip(suspects.order, suspects.counts, strict=True):
        ev.suspects.append(Suspect(ef, n, text_, count))
