"""aifabric: design, predict, verify and diagnose the network of an AI cluster."""

__version__ = "0.1.0"

__all__ = ["__version__"]
