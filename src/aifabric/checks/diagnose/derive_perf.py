"""Derived evidence records (see :func:`aifabric.checks.diagnose.engine.deriver`)."""
