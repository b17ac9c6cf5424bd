"""CUDA ``p2pBandwidthLatencyTest`` output (kind ``p2p-bandwidth``).

The CUDA sample measures every GPU pair twice: copies staged through host memory (``P2P=Disabled``)
and direct peer-to-peer copies (``P2P=Enabled``). Engineers run it when NCCL hangs or is slow
inside one server, because peer traffic that PCIe Access Control Services redirect to the root
complex, or that the IOMMU translates, shows up here as P2P copies slower than the host-staged
ones. Its output, as printed by ``Samples/5_Domain_Specific/p2pBandwidthLatencyTest/
p2pBandwidthLatencyTest.cu`` (NVIDIA/cuda-samples)::

    [P2P (Peer-to-Peer) GPU Bandwidth Latency Test]
    Device: 0, NVIDIA RTX A6000, pciBusID: 3, pciDeviceID: 0, pciDomainID:0
    Device=0 CAN Access Peer Device=1            (or CANNOT)
    P2P Connectivity Matrix
         D\\D     0     1
         0\t     1     1                       (a tab after the row index)
    Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)
       D\\D     0      1
         0 673.20  13.15                        ("%6.02f " cells: a trailing blank)
    Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)
    Unidirectional P2P=Enabled Bandwidth (P2P Reads) Matrix (GB/s)     (with --p2p_read)
    Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)
    Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)
    P2P=Disabled Latency Matrix (us)
       GPU     0      1                         (then a "   CPU ..." block: host-side times)
    P2P=Enabled Latency (P2P Writes) Matrix (us)

Records: one :class:`P2PDevice` per ``Device:`` line, one :class:`P2PAccess` per peer-access
line, one :class:`P2PMatrix` per matrix (the latency matrices' GPU and CPU blocks are two). A
``P2P=Enabled`` bandwidth matrix carries the ``P2P=Disabled`` values of the same direction from
the same capture in ``staged``, so a verdict can compare the two. Windows of the output (a matrix
or two pasted alone, rows without their title) are read as far as they go; lines starting with
``#`` (the poster's notes) are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.registry import register

__all__ = ["P2PAccess", "P2PDevice", "P2PMatrix", "parse_p2p_bandwidth"]

SAMPLE_SOURCE = (
    "NVIDIA/cuda-samples Samples/5_Domain_Specific/p2pBandwidthLatencyTest/"
    "p2pBandwidthLatencyTest.cu"
)

_BANNER = "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]"
_DEVICE_RE = re.compile(
    r"^\s*Device: (\d+), (.*?), pciBusID: ([0-9a-fA-F]+), pciDeviceID: ([0-9a-fA-F]+),"
    r" pciDomainID:\s*([0-9a-fA-F]+)\s*$"
)
_ACCESS_RE = re.compile(r"^\s*Device=(\d+) (CAN|CANNOT) Access Peer Device=(\d+)\s*$")
_BW_TITLE_RE = re.compile(
    r"^\s*(Unidirectional|Bidirectional) P2P=(Enabled|Disabled) Bandwidth"
    r"(?: \(P2P (Writes|Reads)\))? Matrix \(GB/s\)\s*$"
)
_LAT_TITLE_RE = re.compile(
    r"^\s*P2P=(Enabled|Disabled) Latency(?: \(P2P (Writes|Reads)\))? Matrix \(us\)\s*$"
)
_CONN_TITLE = "P2P Connectivity Matrix"
_HEADER_RE = re.compile(r"^\s*(D\\D|GPU|CPU)((?:\s+\d+)+)\s*$")
_ROW_RE = re.compile(r"^\s*(\d+)((?:\s+-?\d+(?:\.\d+)?)+)\s*$")
_NOTES = (
    "***NOTE: In case a device",
    "So you can see lesser Bandwidth",
    "NOTE: The CUDA Samples are not meant",
)

Measure = Literal["connectivity", "bandwidth", "latency"]


@dataclass(slots=True, kw_only=True)
class P2PDevice(Record):
    """One ``Device: N, NAME, pciBusID: X, ...`` line."""

    record_type: ClassVar[str] = "p2p_device"
    index: int
    name: str
    bus_id: str
    """``domain:bus`` in hex as the sample prints them (``0:3``)."""


@dataclass(slots=True, kw_only=True)
class P2PAccess(Record):
    """``Device=I CAN|CANNOT Access Peer Device=J`` (cudaDeviceCanAccessPeer)."""

    record_type: ClassVar[str] = "p2p_access"
    src: int
    dst: int
    can: bool


@dataclass(slots=True, kw_only=True)
class P2PMatrix(Record):
    """One matrix: rows by source GPU, columns by destination GPU."""

    record_type: ClassVar[str] = "p2p_matrix"
    title: str | None
    """The title line as printed; ``None`` for rows pasted without it."""
    measure: Measure | None
    p2p: bool | None
    """``P2P=Enabled`` (True) or ``P2P=Disabled`` (False)."""
    direction: Literal["uni", "bi"] | None = None
    method: Literal["writes", "reads"] | None = None
    clock: Literal["gpu", "cpu"] | None = None
    """Latency matrices: GPU-timed or host-timed block."""
    unit: str | None = None
    columns: list[int] = field(default_factory=list)
    rows: dict[int, list[float]] = field(default_factory=dict)
    staged: dict[int, list[float]] | None = None
    """For a P2P=Enabled bandwidth matrix: the P2P=Disabled values of the same direction in the
    same capture (copies through host memory), when it holds them."""

    def value(
        self, src: int, dst: int, table: dict[int, list[float]] | None = None
    ) -> float | None:
        """The cell for ``src`` → ``dst`` (of ``table``, the rows by default)."""
        rows = self.rows if table is None else table
        row = rows.get(src)
        if row is None or dst not in self.columns:
            return None
        j = self.columns.index(dst)
        return row[j] if j < len(row) else None


def _detect(text: str) -> float:
    head = text[:65536]
    if _BANNER in head or _CONN_TITLE in head:
        return 0.95
    if ("P2P=Enabled" in head or "P2P=Disabled" in head) and "Matrix (" in head:
        return 0.95
    if " Access Peer Device=" in head:
        return 0.9
    return 0.0


def _method(word: str | None) -> Literal["writes", "reads"]:
    return "reads" if word == "Reads" else "writes"


def _title(line: str) -> P2PMatrix | None:
    m = _BW_TITLE_RE.match(line)
    if m is not None:
        enabled, uni = m.group(2) == "Enabled", m.group(1) == "Unidirectional"
        return P2PMatrix(
            line=0, title=line.strip(), measure="bandwidth", p2p=enabled,
            direction="uni" if uni else "bi",
            method=_method(m.group(3)) if enabled and uni else None, unit="GB/s",
        )  # fmt: skip
    m = _LAT_TITLE_RE.match(line)
    if m is not None:
        enabled = m.group(1) == "Enabled"
        return P2PMatrix(
            line=0, title=line.strip(), measure="latency", p2p=enabled,
            method=_method(m.group(2)) if enabled else None, unit="us",
        )  # fmt: skip
    if line.strip() == _CONN_TITLE:
        return P2PMatrix(line=0, title=_CONN_TITLE, measure="connectivity", p2p=None)
    return None


@register(
    "p2p-bandwidth",
    summary=(
        "p2pBandwidthLatencyTest (CUDA samples: GPU peer access, P2P vs host-staged bandwidth "
        "and latency matrices)"
    ),
    detect=_detect,
    refs=("S9",),
)
def parse_p2p_bandwidth(text: str) -> ParseResult:
    """``p2pBandwidthLatencyTest`` output → devices, peer access and matrices (module doc)."""
    res = ParseResult("p2p-bandwidth")
    pending: P2PMatrix | None = None  # a title seen, its header not yet
    current: P2PMatrix | None = None  # the matrix whose rows are being read
    for lineno, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if (
            not stripped
            or stripped.startswith(("#", "```", "[..."))
            or stripped == _BANNER
            or stripped.startswith(_NOTES)
            or "p2pBandwidthLatencyTest" in stripped  # the command line, a prompt
        ):
            continue
        m = _DEVICE_RE.match(raw)
        if m is not None:
            bus = f"{m.group(5)}:{m.group(3)}".lower()
            dev = P2PDevice(line=lineno, index=int(m.group(1)), name=m.group(2).strip(), bus_id=bus)
            res.records.append(dev)
            continue
        m = _ACCESS_RE.match(raw)
        if m is not None:
            src, dst, can = int(m.group(1)), int(m.group(3)), m.group(2) == "CAN"
            res.records.append(P2PAccess(line=lineno, src=src, dst=dst, can=can))
            continue
        titled = _title(raw)
        if titled is not None:
            titled.line = lineno
            pending, current = titled, None
            continue
        h = _HEADER_RE.match(raw)
        if h is not None:
            mat = pending
            if mat is None or mat.rows or mat.columns:
                # a header without its title (a window of the output), or the CPU block that
                # follows a latency matrix's GPU block under the same title
                base = current
                mat = P2PMatrix(
                    line=lineno,
                    title=base.title if base is not None else None,
                    measure=base.measure if base is not None else None,
                    p2p=base.p2p if base is not None else None,
                    direction=base.direction if base is not None else None,
                    method=base.method if base is not None else None,
                    unit=base.unit if base is not None else None,
                )
            if h.group(1) != "D\\D":
                mat.clock = "gpu" if h.group(1) == "GPU" else "cpu"
            mat.columns = [int(c) for c in h.group(2).split()]
            mat.end_line = lineno
            res.records.append(mat)
            pending, current = None, mat
            continue
        r = _ROW_RE.match(raw)
        if r is not None and current is not None:
            values = [float(v) for v in r.group(2).split()]
            if len(values) == len(current.columns):
                current.rows[int(r.group(1))] = values
                current.end_line = lineno
                continue
        res.warn(lineno, "expected a p2pBandwidthLatencyTest line (device, title or row)", raw)
    _link_staged(res)
    return res


def _link_staged(res: ParseResult) -> None:
    """Give each P2P=Enabled bandwidth matrix the P2P=Disabled values of its direction."""
    disabled: dict[str | None, P2PMatrix] = {}
    for rec in res.records:
        if not isinstance(rec, P2PMatrix) or rec.measure != "bandwidth" or not rec.rows:
            continue
        if rec.p2p is False:
            disabled[rec.direction] = rec
        elif rec.p2p:
            base = disabled.get(rec.direction)
            if base is not None and base.columns == rec.columns:
                rec.staged = base.rows
