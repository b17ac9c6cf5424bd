"""``python -m aifabric`` runs the CLI."""

from aifabric.cli.app import main

main()
