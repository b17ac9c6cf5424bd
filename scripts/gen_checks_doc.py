"""Print docs/checks.md from the check metadata (checks/checks.yaml).

Run ``make docs`` after changing checks.yaml; tests/unit/test_docs.py fails when the committed
page and the metadata disagree.
"""

from __future__ import annotations

from collections.abc import Sequence

from aifabric.checks import all_checks, metadata


def _ref(ref: str) -> str:
    """A ref as a link: ``S12`` -> practices.md#s12, a URL or a ``docs/`` path as it is."""
    if ref.startswith("S") and ref[1:].isdigit():
        return f"[{ref}](practices.md#s{ref[1:]})"
    if ref.startswith("docs/"):
        return f"[{ref}]({ref.removeprefix('docs/')})"
    return f"<{ref}>" if ref.startswith("https://") else ref


def _refs(refs: Sequence[str]) -> str:
    return ", ".join(_ref(r) for r in refs)


def render() -> str:
    registered = set(all_checks())
    lines = [
        "# Checks",
        "",
        "Generated from `src/aifabric/checks/checks.yaml` by `make docs`; do not edit by hand.",
        "Seed ids (S1-S24) are the rules in [practices.md](practices.md); other sources are in",
        "[references.md](references.md).",
        "",
        "| id | severity | refs | title |",
        "|---|---|---|---|",
    ]
    metas = sorted(metadata().values(), key=lambda m: m.id)
    for meta in metas:
        lines.append(f"| `{meta.id}` | {meta.severity} | {_refs(meta.refs)} | {meta.title} |")
    for meta in metas:
        status = "" if meta.id in registered else " (not implemented yet)"
        lines += [
            "",
            f"## `{meta.id}`{status}",
            "",
            f"*{meta.title}*. Category {meta.category}, "
            f"default severity **{meta.severity}**, inputs: {', '.join(meta.inputs)}; "
            f"refs: {_refs(meta.refs)}.",
            "",
            meta.description.strip(),
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render(), end="")
