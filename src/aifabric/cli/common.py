"""What every command shares: output format, consoles, JSON emission, finding tables.

stdout carries results only (one JSON document with ``--format json``); progress, logs and
errors go to stderr.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console, Group
from rich.text import Text

from aifabric.catalog import Catalog, load_catalog
from aifabric.errors import UnitError
from aifabric.explain import Explained
from aifabric.findings import Finding, Summary

__all__ = [
    "CatalogOpt",
    "ExplainOpt",
    "FormatOpt",
    "OutputFormat",
    "emit_json",
    "err_console",
    "findings_table",
    "get_catalog",
    "out_console",
    "print_explain",
    "progress",
    "unit_option",
]

out_console = Console(highlight=False, soft_wrap=False)
err_console = Console(stderr=True, highlight=False)


class OutputFormat(StrEnum):
    table = "table"
    json = "json"


FormatOpt = Annotated[
    OutputFormat, typer.Option("--format", "-F", help="table or json", case_sensitive=False)
]
CatalogOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--catalog",
        help="extra hardware catalog YAML (repeatable); same names override built-ins",
        show_default=False,
    ),
]
ExplainOpt = Annotated[bool, typer.Option("--explain", help="show how every number was computed")]


def get_catalog(files: list[Path] | None) -> Catalog:
    return load_catalog(files or [])


JSON_FORMAT_VERSION = 2
"""Version of the JSON documents the commands write (``format_version``, first key). 2: finding
``evidence`` items are objects ``{source, line, text, subject}`` (1: strings)."""


def emit_json(document: Any) -> None:
    """Write exactly one JSON document to stdout (an object gets ``format_version`` first)."""
    if isinstance(document, dict) and "format_version" not in document:
        document = {"format_version": JSON_FORMAT_VERSION, **document}
    sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False, default=str))
    sys.stdout.write("\n")


T = TypeVar("T")


def unit_option(parse: Callable[[str], T], value: str | None, flag: str) -> T | None:
    """Parse a unit-bearing option; errors name the flag."""
    if value is None:
        return None
    try:
        return parse(value)
    except UnitError as exc:
        raise UnitError(f"{flag}: {exc}") from None


@contextmanager
def progress(message: str, *, enabled: bool = True) -> Iterator[None]:
    """A spinner on stderr while a slow step runs (only on a terminal)."""
    if enabled and err_console.is_terminal:
        with err_console.status(message):
            yield
    else:
        yield


_SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def findings_table(findings: Iterable[Finding], *, title: str = "Findings") -> Group:
    """Findings as readable blocks (a wide table wraps into unreadable columns on 80-column
    terminals): headline, expected/actual, why, fix, evidence, refs."""
    blocks: list[Text] = [Text(title, style="bold underline")]
    for f in findings:
        text = Text()
        text.append(f"{f.severity.upper():8}", style=_SEVERITY_STYLE[f.severity])
        text.append(f"{f.check}", style="bold")
        text.append(f"  {f.target}\n")
        text.append(f"  {f.message}\n")
        if f.expected is not None:
            text.append(f"  expected: {f.expected}   actual: {f.actual}\n", style="dim")
        elif f.actual is not None:
            text.append(f"  found: {f.actual}\n", style="dim")
        if f.confidence is not None:
            text.append(f"  confidence: {f.confidence:.2f}\n", style="dim")
        text.append("  why: ", style="bold")
        text.append(f"{f.explanation}\n")
        text.append("  fix: ", style="bold green")
        text.append(f"{f.fix}\n")
        for alt in f.alternatives:
            text.append(f"  {alt.status}: {alt.cause}", style="magenta")
            text.append(f" ({alt.because})" if alt.because else f" - check: {alt.check}")
            text.append("\n")
        for item in f.evidence[:3]:
            text.append(f"  evidence: {item}\n", style="dim")
        if f.refs:
            text.append(f"  refs: {', '.join(f.refs)}\n", style="dim")
        blocks.append(text)
    return Group(*blocks)


def summary_line(summary: Summary) -> str:
    return f"{summary.error} error(s), {summary.warning} warning(s), {summary.info} info"


def print_explain(items: Iterable[Explained], console: Console | None = None) -> None:
    target = console or out_console
    target.print("[bold]How the numbers were computed[/bold]")
    for item in items:
        target.print(f"  • {item.line()}", markup=False)
