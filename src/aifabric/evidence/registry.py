"""One registry of evidence kinds: name → (parse, detect, summary, seed refs).

A family module registers its kinds with :func:`register` at import; :func:`all_kinds` imports
every family module listed in :data:`FAMILY_MODULES` once. Detection asks every kind's
``detect(text)`` for a score in [0, 1] and takes the best; the scores follow one scale so they
compare across families:

* 0.0  none of the kind's markers;
* 0.3  generic markers only (``name: value`` lines, a table of numbers);
* 0.6  markers typical of the kind but shared with a neighbour;
* 0.9+ a marker only this kind prints (a header line, a unique key, a JSON table name).

Ties and near-ties are settled by the order of :data:`FAMILY_MODULES`, most specific first.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aifabric.errors import InputError
from aifabric.evidence.base import (
    ParseResult,
    cap_line_length,
    cut_lines_warning,
    decode_capture,
    drop_out_of_range,
)
from aifabric.inputs import read_input

__all__ = [
    "DETECT_MIN_SCORE",
    "FAMILY_MODULES",
    "EvidenceKind",
    "all_kinds",
    "dedent_block",
    "detect_kind",
    "detect_scores",
    "parse_bytes",
    "parse_file",
    "parse_text",
    "register",
]

Parser = Callable[[str], ParseResult]
Detector = Callable[[str], float]

FAMILY_MODULES: tuple[str, ...] = (
    # ethtool -S first: its 0.95 marker ("NIC statistics:") is printed by nothing else, and it is
    # the kind parsed most often in bulk (one dump per port per host), so detection stops early
    "ethtool_stats",
    "nccl_tests",
    "nccl_log",
    "perftest",
    "infiniband",
    "mlnx_qos",
    "ethtool_module",
    "ethtool_info",
    "ethtool_pause",
    # before rdma_counters: a grep -r of ports/ holds counter paths too (0.95 over its 0.9)
    "sysfs_rdma",
    "rdma_counters",
    "ib_counters",
    "pcie",
    "pciconf",
    "ping",
    "ip_addr",
    "linux_net",
    "sonic_config",
    "eos_config",
    "nxos_config",
    "nvue",
    "cumulus_traffic",
    "switch_counters",
    "mlxlink",
    "mlxconfig",
    "sonic_transceiver",
    "sonic_interfaces",
    "rdma_tools",
    "ucx",
    "torch_env",
    "gpu_topo",
    "nvidia_smi",
    "p2p_bandwidth",
    "host_limits",
    "host_roce",
    "host_script",
    "kernel_modules",
    "shared_libs",
    "nccl_env",
    "iperf3",
    "frr",
    "routes",
    "netfilter",
    "shm",
    "bonding",
    # last: key = value lines, detected only when most lines are sysctl names
    "sysctl",
)
"""The family modules under ``aifabric.evidence``, in tie-break order."""

DETECT_MIN_SCORE = 0.25
"""Below this best score the input is reported as of unknown kind (exit 2)."""

DETECT_WINDOW = 1 << 20
"""Detectors see at most the first MiB of the input (markers sit near the top)."""

_NON_BLANK_RE = re.compile(r"\S")


@dataclass(frozen=True, slots=True)
class EvidenceKind:
    """One parseable kind of captured output."""

    name: str
    summary: str
    """What command or file produces it, e.g. ``ethtool -S IFACE``."""
    parse: Parser
    detect: Detector
    refs: tuple[str, ...]
    """Seed ids (S1–S24) and other references this evidence serves."""
    module: str


_KINDS: dict[str, EvidenceKind] = {}
_LOADED = False


def register(
    name: str, *, summary: str, detect: Detector, refs: tuple[str, ...] = ()
) -> Callable[[Parser], Parser]:
    """Decorator: register ``parse`` as the parser of kind ``name``."""

    def deco(fn: Parser) -> Parser:
        if name in _KINDS and _KINDS[name].parse is not fn:
            raise RuntimeError(f"evidence kind {name!r} registered twice")
        _KINDS[name] = EvidenceKind(name, summary, fn, detect, refs, fn.__module__)
        return fn

    return deco


def all_kinds() -> dict[str, EvidenceKind]:
    """Every registered kind, after importing all family modules."""
    global _LOADED  # noqa: PLW0603 - one-time lazy import of the family modules
    if not _LOADED:
        for mod in FAMILY_MODULES:
            importlib.import_module(f"aifabric.evidence.{mod}")
        _LOADED = True
    return _KINDS


DETECT_CERTAIN = 0.95
"""The top of the score scale: a marker only this kind prints. No detector scores higher."""

_ORDERED: list[EvidenceKind] = []


def _ordered_kinds() -> list[EvidenceKind]:
    """Every kind in tie-break order (:data:`FAMILY_MODULES`, then registration order)."""
    kinds = all_kinds()
    if len(_ORDERED) != len(kinds):
        order = {m: i for i, m in enumerate(FAMILY_MODULES)}
        _ORDERED[:] = sorted(
            kinds.values(), key=lambda k: order.get(k.module.rsplit(".", 1)[-1], len(order))
        )
    return _ORDERED


def _score(kind: EvidenceKind, head: str) -> float:
    try:
        return float(kind.detect(head))
    except Exception:  # a detector bug must not stop detection of the other kinds
        return 0.0


def _is_json_document(text: str) -> bool:
    """Whether ``text`` reads as one JSON value: first non-blank "{" or "[", last "}" or "]"."""
    first = _NON_BLANK_RE.search(text, 0, 4096)
    last = text[-4096:].rstrip()[-1:]
    return first is not None and first.group() in "{[" and last in ("}", "]")


_INDENT_RE = re.compile(r"^[ \t]*+(?=[^ \t\r\n])", re.MULTILINE)
_FIRST_CHAR_RE = re.compile(r"[^\r\n]")


def dedent_block(text: str) -> str:
    """``text`` without the indentation every non-blank line shares (a paste kept in a markdown
    or wiki code block, a mail quote's lost indent): ``  eth0: flags=...`` → ``eth0: flags=...``.
    Relative indentation stays; line numbers do not change. Text whose first non-blank line
    starts at column 0 (nearly every capture) is returned as is after one look."""
    m = _FIRST_CHAR_RE.search(text, 0, 65536)
    if m is None or m.group() not in (" ", "\t"):
        return text
    common: str | None = None
    for m in _INDENT_RE.finditer(text):
        ind = m.group()
        if common is None:
            common = ind
        elif not ind.startswith(common):
            n = 0
            while n < min(len(ind), len(common)) and ind[n] == common[n]:
                n += 1
            common = common[:n]
        if not common:
            return text
    if not common:
        return text
    cut = len(common)
    return "\n".join(line[cut:] if line.strip(" \t\r") else line for line in text.split("\n"))


def _capped(text: str, json: bool | None = None) -> tuple[str, list[tuple[int, int, int]]]:
    """``text`` with over-long lines and giant numbers cut (``MAX_LINE_CHARS``, ``MAX_DIGITS``
    of :mod:`aifabric.evidence.base`); a JSON document keeps its long lines (see
    ``MAX_LINE_CHARS``): only a line holding a giant number is cut."""
    text = dedent_block(text)
    if _is_json_document(text) if json is None else json:
        return cap_line_length(text, limit=len(text) + 1)
    return cap_line_length(text)


def _head(text: str) -> str:
    """What detectors see: the first :data:`DETECT_WINDOW` characters, long lines cut."""
    return _capped(text[:DETECT_WINDOW], _is_json_document(text))[0]


def detect_scores(text: str) -> list[tuple[float, str]]:
    """(score, kind) for every kind that scores above zero, best first (ties in family order)."""
    head = _head(text)
    scored = [(_score(k, head), i, k.name) for i, k in enumerate(_ordered_kinds())]
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [(s, k) for s, _, k in scored if s > 0]


def detect_kind(text: str, name: str = "<input>") -> str:
    """The kind of ``text``; :class:`InputError` (exit 2) when nothing matches.

    Same answer as the head of :func:`detect_scores`, but stops at the first kind (in tie-break
    order) that reaches :data:`DETECT_CERTAIN`, since no later kind can beat it.
    """
    head = _head(text)
    best, best_name = 0.0, ""
    for kind in _ordered_kinds():
        score = _score(kind, head)
        if score > best:
            best, best_name = score, kind.name
            if score >= DETECT_CERTAIN:
                break
    if best < DETECT_MIN_SCORE:
        known = ", ".join(sorted(all_kinds()))
        raise InputError(
            f"{name}: cannot tell what kind of output this is; give --kind (known: {known})"
        )
    return best_name


def parse_text(text: str, kind: str | None = None, name: str = "<input>") -> ParseResult:
    """Parse decoded text as ``kind`` (detected when ``None``).

    The one door to every parser: lines longer than
    :data:`~aifabric.evidence.base.MAX_LINE_CHARS` are cut before detection and parsing (JSON
    documents excepted), and the result then starts with one warning naming the cut lines;
    records holding ``nan``, ``inf`` or out-of-range numbers are dropped with a warning quoting
    their line (:func:`~aifabric.evidence.base.drop_out_of_range`).
    """
    kinds = all_kinds()
    if kind is not None and kind not in kinds:
        known = ", ".join(sorted(kinds))
        raise InputError(f"unknown kind {kind!r}; known: {known}")
    text, cut = _capped(text)
    if kind is None:
        kind = detect_kind(text, name)
    result = kinds[kind].parse(text)
    result.kind = kind
    drop_out_of_range(result, text)
    if cut:
        result.warnings.insert(0, cut_lines_warning(cut))
    return result


def parse_bytes(data: bytes, kind: str | None = None, name: str = "<input>") -> ParseResult:
    """Decode (refusing binary input) and parse."""
    return parse_text(decode_capture(data, name), kind, name)


def parse_file(path: Path, kind: str | None = None) -> ParseResult:
    """Read (under the input policy, :func:`aifabric.inputs.read_input`) and parse one captured
    output file."""
    return parse_bytes(read_input(path, "capture"), kind, str(path))
