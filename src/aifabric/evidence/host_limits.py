"""Placeholder: being written (issue 14)."""
