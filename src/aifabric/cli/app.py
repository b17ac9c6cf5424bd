"""The ``aifabric`` command line: a thin shell that parses arguments, calls one function and
renders its result. Errors of the :mod:`aifabric.errors` tree become one line on stderr and the
contract exit code (2 bad input, 3 environment); never a traceback."""

from __future__ import annotations

import sys

import typer

from aifabric import __version__
from aifabric.cli.check_cmd import check
from aifabric.cli.design_cmd import design
from aifabric.cli.diagnose_cmd import diagnose_cmd
from aifabric.cli.estimate_cmd import estimate_cmd
from aifabric.cli.misc_cmd import catalog, schema
from aifabric.cli.parse_cmd import parse
from aifabric.cli.show_cmd import show
from aifabric.cli.verify_cmd import verify
from aifabric.errors import AifabricError

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


def main() -> None:
    """Entry point: run the app, turn our errors into one line and an exit code."""
    try:
        app()
    except AifabricError as exc:
        typer.echo(f"aifabric: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        typer.echo("aifabric: interrupted", err=True)
        sys.exit(130)
