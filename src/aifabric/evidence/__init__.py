"""Evidence parsers: what real tools print (nccl-tests, NCCL logs, ethtool, RDMA and IB tools,
lspci, ping, tc, switch QoS configs and counters) turned into typed records with line numbers.

Pure functions, one module per family, one registry (:mod:`aifabric.evidence.registry`).
"""

from __future__ import annotations

from aifabric.evidence.base import ParseResult, ParseWarning, Record, decode_capture
from aifabric.evidence.registry import (
    EvidenceKind,
    all_kinds,
    detect_kind,
    detect_scores,
    parse_bytes,
    parse_file,
    parse_text,
    register,
)

__all__ = [
    "EvidenceKind",
    "ParseResult",
    "ParseWarning",
    "Record",
    "all_kinds",
    "decode_capture",
    "detect_kind",
    "detect_scores",
    "parse_bytes",
    "parse_file",
    "parse_text",
    "register",
]
