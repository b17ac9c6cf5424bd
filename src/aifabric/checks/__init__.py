"""Checks: verify and diagnose rules over the model, one engine, findings out."""

from aifabric.checks.registry import (
    CheckContext,
    CheckMeta,
    all_checks,
    metadata,
    register,
    run_checks,
)

__all__ = ["CheckContext", "CheckMeta", "all_checks", "metadata", "register", "run_checks"]
