"""``aifabric parse FILE [--kind K]``: detect the kind of a captured output and print its
records (JSON keys ``kind``, ``records``, ``warnings``).

A file over :data:`aifabric.checks.diagnose.streaming.STREAM_THRESHOLD` of a kind read in
chunks (NCCL logs, ``ethtool -S`` series) is parsed chunk by chunk: JSON output writes each
record as it is produced (same document, one record per line), table output shows the counts
per record type and the first records of each.

Exit codes: 0 parsed (warnings allowed: a malformed line is reported and skipped), 2 when the
input is not text, its kind cannot be told, or nothing in it could be parsed.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from aifabric.checks.diagnose import streaming
from aifabric.cli.common import (
    JSON_FORMAT_VERSION,
    FormatOpt,
    OutputFormat,
    emit_json,
    err_console,
    out_console,
)
from aifabric.errors import InputError
from aifabric.evidence import ParseResult, all_kinds, decode_capture, detect_scores, parse_text
from aifabric.evidence.paste import describe, parse_paste
from aifabric.inputs import read_input

__all__ = ["parse"]


def _read(path: Path) -> tuple[str, str]:
    if str(path) == "-":
        return decode_capture(read_input("-"), "<stdin>"), "<stdin>"
    if path.is_dir():
        raise InputError(f"{path}: is a directory; give one captured output file")
    return decode_capture(read_input(path), str(path)), str(path)


def _kinds_table() -> Table:
    table = Table(title="Evidence kinds", title_justify="left")
    table.add_column("kind")
    table.add_column("what prints it")
    table.add_column("refs")
    for name, kind in sorted(all_kinds().items()):
        table.add_row(name, kind.summary, " ".join(kind.refs))
    return table


def _cell(value: Any, width: int = 48) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, dict):
        shown = [f"{k}={_cell(v, 16)}" for k, v in value.items() if v not in (0, None, "", {}, [])]
        text = f"{len(value)} entries" + (": " + ", ".join(shown) if shown else "")
    elif isinstance(value, (list, tuple)):
        if all(isinstance(v, (int, float, str, type(None))) for v in value):
            text = ",".join(_cell(v, 16) for v in value)
        else:
            text = f"[{len(value)} items]"
    else:
        text = str(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, (str, list, dict)) and len(value) == 0)


def _records_views(result: ParseResult, limit: int) -> list[Table]:
    """One table per record type; a type whose table would not fit the terminal prints one block
    per record instead. Fields empty in every shown record are left out."""
    by_type: dict[str, list[dict[str, Any]]] = {}
    for rec in result.records:
        by_type.setdefault(rec.record_type, []).append(rec.to_json())
    views = []
    for rtype, rows in by_type.items():
        shown = rows if limit <= 0 else rows[:limit]
        more = f" (first {len(shown)} of {len(rows)})" if len(shown) < len(rows) else ""
        title = f"{rtype}: {len(rows)}{more}"
        columns = [
            c
            for c in rows[0]
            if c not in {"type", "line", "end_line"} and not all(_empty(r.get(c)) for r in shown)
        ]
        width = sum(
            3 + max(len(c), *(len(_cell(r.get(c))) for r in shown)) for c in ["line", *columns]
        )
        if width <= max(out_console.width, 80):
            table = Table(title=title, title_justify="left")
            table.add_column("line", justify="right")
            for col in columns:
                table.add_column(col, overflow="fold")
            for row in shown:
                table.add_row(str(row.get("line")), *(_cell(row.get(c)) for c in columns))
            views.append(table)
            continue
        grid = Table(title=title, title_justify="left", show_header=False, box=None)
        grid.add_column("field", style="bold", no_wrap=True)
        grid.add_column("value", overflow="fold")
        for i, row in enumerate(shown):
            if i:
                grid.add_row("", "")
            span = row.get("line")
            if row.get("end_line") not in (None, span):
                span = f"{span}-{row['end_line']}"
            grid.add_row("line", str(span))
            for col in columns:
                if not _empty(row.get(col)):
                    grid.add_row(f"  {col}", _cell(row.get(col), 200))
        views.append(grid)
    return views


MAX_STREAMED_WARNINGS = 1000
"""Warnings written for a file parsed in chunks (the rest are counted)."""


def _streamed(path: Path, kind: str | None, fmt: OutputFormat, limit: int) -> bool:
    """Parse a huge capture chunk by chunk (see the module docstring); False when ``path`` is
    not one (small, a paste of several tools, or a kind not read in chunks)."""
    try:
        big = path.is_file() and path.stat().st_size > streaming.STREAM_THRESHOLD
    except OSError:
        return False
    if not big:
        return False
    if kind is None:
        kind = streaming.streamed_kind(path)
    elif kind not in all_kinds():
        raise InputError(f"unknown kind {kind!r}; known: {', '.join(sorted(all_kinds()))}")
    if kind not in streaming.CUTS:
        return False
    name = str(path)
    counts: Counter[str] = Counter()
    shown = ParseResult(kind)
    warnings: list[Any] = []
    n_warnings = 0
    out = sys.stdout
    for records, warns in streaming.stream_parse(path, kind):
        n_warnings += len(warns)
        warnings += warns[: max(0, MAX_STREAMED_WARNINGS - len(warnings))]
        for rec in records:
            if fmt is OutputFormat.json:
                head = (
                    "{" + f'"format_version": {JSON_FORMAT_VERSION}, "kind": {json.dumps(kind)}, '
                    f'"file": {json.dumps(name)}, "records": [\n'
                    if not counts
                    else ",\n"
                )
                out.write(head + json.dumps(rec.to_json(), ensure_ascii=False, default=str))
            elif limit <= 0 or counts[rec.record_type] < limit:
                shown.records.append(rec)
            counts[rec.record_type] += 1
    if not counts:
        hint = f" (first problem: {warnings[0]})" if warnings else ""
        raise InputError(f"{name}: no {kind} records found{hint}")
    if fmt is OutputFormat.json:
        more = n_warnings - len(warnings)
        tail = f', "warnings_not_shown": {more}' if more else ""
        docs = ",\n".join(json.dumps(w.to_json(), ensure_ascii=False) for w in warnings)
        out.write(f'\n], "warnings": [{docs}]{tail}}}\n')
        return True
    summary = ", ".join(f"{n} {t}" for t, n in counts.items())
    out_console.print(f"{name}: {kind} (read in chunks): {summary}", markup=False)
    for table in _records_views(shown, 0):
        out_console.print(table)
    if warnings:
        err_console.print(f"{n_warnings} warning(s), first {len(warnings)}:")
        for w in warnings:
            err_console.print(f"  {name}: {w}", markup=False)
    return True


def parse(
    file: Annotated[
        Path | None,
        typer.Argument(help="captured output of a tool (- for stdin)", show_default=False),
    ] = None,
    kind: Annotated[
        str | None,
        typer.Option("--kind", "-k", help="the kind of output (default: detected)"),
    ] = None,
    list_kinds: Annotated[
        bool, typer.Option("--list-kinds", help="list the kinds this command reads and exit")
    ] = False,
    limit: Annotated[
        int, typer.Option("--limit", help="records per type shown in table output (0: all)")
    ] = 20,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Turn the captured output of a tool (nccl-tests, NCCL log, ethtool, RDMA/IB tools, lspci,
    ping, tc, switch QoS configs and counters) into typed records with line numbers."""
    if list_kinds:
        if fmt is OutputFormat.json:
            emit_json(
                [
                    {"kind": k.name, "summary": k.summary, "refs": list(k.refs)}
                    for k in sorted(all_kinds().values(), key=lambda k: k.name)
                ]
            )
        else:
            out_console.print(_kinds_table())
        return
    if file is None:
        raise InputError("give a FILE to parse (or --list-kinds)")
    if str(file) != "-" and _streamed(file, kind, fmt, limit):
        return
    text, name = _read(file)
    detected = kind is None
    segments: list[dict[str, Any]] | None = None
    if detected:
        parts = parse_paste(text)
        if len(parts) > 1 and any(p.result is not None for p in parts):
            # several tools in one paste: every part parsed on its own, file lines kept
            result = ParseResult("paste")
            for p in parts:
                if p.result is not None:
                    result.records += p.result.records
                    result.warnings += p.result.warnings
            segments = describe(parts)
    if segments is None:
        result = parse_text(text, kind, name)
    if not result.records:
        hint = f" (first problem: {result.warnings[0]})" if result.warnings else ""
        how = "detected" if detected else "given"
        raise InputError(f"{name}: no {result.kind} records found (kind {how}){hint}")
    if fmt is OutputFormat.json:
        doc = result.to_json()
        doc["file"] = name
        if segments is not None:
            doc["segments"] = segments
        emit_json(doc)
        return
    if segments is not None:
        out_console.print(f"{name}: a paste of {len(segments)} parts")
        for seg in segments:
            what = seg["kind"] or "not recognised (text)"
            cmd = f" [{seg['command']}]" if seg["command"] else ""
            who = f" ({seg['subject']})" if seg["subject"] else ""
            out_console.print(
                f"  lines {seg['start_line']}-{seg['end_line']}: {what}{cmd}{who}, "
                f"{seg['records']} records",
                markup=False,
                highlight=False,
            )
    score = ""
    if detected and segments is None:
        best = detect_scores(text[: 1 << 20])
        score = f" (detected, score {best[0][0]:.2f})" if best else " (detected)"
    counts = Counter(r.record_type for r in result.records)
    summary = ", ".join(f"{n} {t}" for t, n in counts.items())
    out_console.print(f"{name}: {result.kind}{score}: {summary}")
    for table in _records_views(result, limit):
        out_console.print(table)
    if result.warnings:
        err_console.print(f"{len(result.warnings)} warning(s):")
        for w in result.warnings:
            err_console.print(f"  {name}: {w}", markup=False)
