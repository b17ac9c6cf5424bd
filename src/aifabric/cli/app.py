"""The ``aifabric`` command line: a thin shell that parses arguments, calls one function and
renders its result. Errors of the :mod:`aifabric.errors` tree become one line on stderr and the
contract exit code (2 bad input, 3 environment); never a traceback."""

from __future__ import annotations

import io
import os
import sys
from typing import TextIO

import typer

from aifabric import __version__
from aifabric.cli.bench_cmd import bench_app
from aifabric.cli.bench_run_cmd import bench_run
from aifabric.cli.check_cmd import check
from aifabric.cli.design_cmd import design
from aifabric.cli.diagnose_cmd import diagnose_cmd
from aifabric.cli.estimate_cmd import estimate_cmd
from aifabric.cli.lab_cmd import lab_app
from aifabric.cli.misc_cmd import catalog, schema
from aifabric.cli.monitor_cmd import monitor_app
from aifabric.cli.parse_cmd import parse
from aifabric.cli.probe_cmd import probe
from aifabric.cli.render_cmd import render
from aifabric.cli.show_cmd import show
from aifabric.cli.verify_cmd import verify
from aifabric.errors import AifabricError, EnvironmentProblem

__all__ = ["app", "main"]

app = typer.Typer(
    name="aifabric",
    help="Design, check and explain the network of an AI cluster (RoCEv2/InfiniBand, CLOS).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,
)
app.command("design")(design)
app.command("show")(show)
app.command("check")(check)
app.command("verify")(verify)
app.command("diagnose")(diagnose_cmd)
app.command("parse")(parse)
app.command("estimate")(estimate_cmd)
app.command("schema")(schema)
app.command("catalog")(catalog)
app.add_typer(lab_app)
bench_app.command("run")(bench_run)
app.add_typer(bench_app)
app.add_typer(monitor_app)
app.command("probe")(probe)
app.command("render")(render)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"aifabric {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="print the version and exit"
    ),
) -> None:
    """aifabric: one tool from GPU count to a checked, explained fabric."""


class OutputError(EnvironmentProblem):
    """Standard output cannot be written (closed pipe, full disk): exit 3."""


class _GuardedStdout(io.TextIOBase):
    """``sys.stdout`` whose write errors become :class:`OutputError` (not ``OSError``, which
    the command-line framework would turn into a silent exit 1 for a closed pipe)."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        try:
            return self._inner.write(text)
        except OSError as exc:
            raise OutputError(f"cannot write output: {exc.strerror or exc}") from None

    def flush(self) -> None:
        try:
            self._inner.flush()
        except OSError as exc:
            raise OutputError(f"cannot write output: {exc.strerror or exc}") from None

    def isatty(self) -> bool:
        return self._inner.isatty()

    def fileno(self) -> int:
        return self._inner.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._inner.encoding


def _silence_stdout() -> None:
    """After an output error: point fd 1 at /dev/null so that the interpreter's final flush
    does not print a second error."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass
    sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115


def main() -> None:
    """Entry point: run the app, turn our errors into one line and an exit code.

    Exit codes (README "Conventions"): 0/1 from the command, 2 bad usage or input (also input
    nested too deep for Python to walk), 3 environment (output cannot be written, out of
    memory), 130 interrupted.
    """
    real = sys.stdout
    sys.stdout = _GuardedStdout(real)
    try:
        try:
            app()
        finally:
            sys.stdout.flush()  # a full disk shows here, not at interpreter exit
    except OutputError as exc:
        _silence_stdout()
        typer.echo(f"aifabric: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except AifabricError as exc:
        typer.echo(f"aifabric: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except RecursionError:
        typer.echo("aifabric: error: input nested too deeply to process", err=True)
        sys.exit(2)
    except MemoryError:
        typer.echo(
            "aifabric: error: out of memory; split the input or raise the memory limit", err=True
        )
        sys.exit(3)
    except KeyboardInterrupt:
        typer.echo("aifabric: interrupted", err=True)
        sys.exit(130)
