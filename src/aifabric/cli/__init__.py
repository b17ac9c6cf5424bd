"""Command line interface (typer + rich)."""
