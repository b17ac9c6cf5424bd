"""Print docs/signatures.md from the signature catalogues (src/aifabric/checks/signatures/*.yaml).

Run ``make docs`` after changing a catalogue; tests/unit/test_architecture.py fails when the
committed page and the catalogues disagree.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import yaml

from aifabric.checks.diagnose.signatures import all_catalogues

ROOT = Path(__file__).resolve().parents[1]


def _pastes() -> dict[str, list[str]]:
    """Entry id -> real paste cases (tests/fixtures/signatures/<program>/<case>/)."""
    out: dict[str, list[str]] = {}
    for meta in sorted((ROOT / "tests" / "fixtures" / "signatures").glob("*/*/meta.yaml")):
        data = yaml.safe_load(meta.read_text(encoding="utf-8")) or {}
        for sid in data.get("expect", []):
            out.setdefault(str(sid), []).append(f"{meta.parent.parent.name}/{meta.parent.name}")
    return out


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render() -> str:
    cats = all_catalogues()
    pastes = _pastes()
    total = sum(len(c.entries) for c in cats)
    lines = [
        "# Signature catalogues",
        "",
        "Generated from `src/aifabric/checks/signatures/*.yaml` by `make docs`; do not edit by",
        "hand. Each entry recognises one message as a program prints it, taken from that",
        "program's source or documentation at the version named, and says what it means, the",
        "cause class (`docs/diagnose.md`), what to check next and the fix. `aifabric diagnose`",
        "matches every line of log-like inputs (NCCL logs, launcher output, dmesg, unrecognised",
        "text) against them; `benign` entries explain lines that look like errors and are not.",
        "Real pastes of the messages are under `tests/fixtures/signatures/<program>/<case>/`.",
        "",
        f"{total} entries for {len(cats)} programs.",
        "",
        "| program | entries | error | warning | info | benign | real pastes |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for c in cats:
        sev = Counter(e.severity for e in c.entries)
        real = sum(1 for e in c.entries if e.id in pastes)
        lines.append(
            f"| {c.program} | {len(c.entries)} | {sev['error']} | {sev['warning']} | "
            f"{sev['info']} | {sev['benign']} | {real} |"
        )
    for c in cats:
        lines += ["", f"## {c.title} (`{c.program}`)", ""]
        if c.url:
            lines += [f"Source: {c.url}", ""]
        if c.notes:
            lines += [_cell(c.notes), ""]
        lines += [
            "| id | severity | cause | message (as printed) | meaning | next / fix | source |",
            "|---|---|---|---|---|---|---|",
        ]
        for e in c.entries:
            ex = _cell(e.examples[0])[:160]
            nxt = _cell(" ".join(x for x in (e.next, e.fix) if x))[:300]
            src = e.source.link()
            ver = f" ({e.versions})" if e.versions else ""
            seen = f"; pasted in {', '.join(pastes[e.id][:2])}" if e.id in pastes else ""
            lines.append(
                f"| `{e.id}` | {e.severity} | `{e.cause}` | `{ex}` | {_cell(e.meaning)[:300]} | "
                f"{nxt} | [{src.rsplit('/', 1)[-1] or src}]({src}){ver}{seen} |"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render(), end="")
