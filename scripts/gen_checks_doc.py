"""Print docs/checks.md from the check metadata (checks/checks.yaml).

Run ``make docs`` after changing checks.yaml; tests/unit/test_docs.py fails when the committed
page and the metadata disagree.
"""

from __future__ import annotations

from aifabric.checks import all_checks, metadata


def render() -> str:
    registered = set(all_checks())
    lines = [
        "# Checks",
        "",
        "Generated from `src/aifabric/checks/checks.yaml` by `make docs`; do not edit by hand.",
        "Seed ids (S1-S24) refer to the seed digest.",
        "",
        "| id | severity | refs | title |",
        "|---|---|---|---|",
    ]
    metas = sorted(metadata().values(), key=lambda m: m.id)
    for meta in metas:
        lines.append(f"| `{meta.id}` | {meta.severity} | {', '.join(meta.refs)} | {meta.title} |")
    for meta in metas:
        status = "" if meta.id in registered else " (not implemented yet)"
        lines += [
            "",
            f"## `{meta.id}`{status}",
            "",
            f"*{meta.title}*. Category {meta.category}, "
            f"default severity **{meta.severity}**, inputs: {', '.join(meta.inputs)}; "
            f"refs: {', '.join(meta.refs)}.",
            "",
            meta.description.strip(),
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render(), end="")
