"""GPU/NIC topology matrix: ``nvidia-smi topo -m`` (kind ``nvidia-smi-topo``).

``nvidia-smi topo -m`` prints one row and one column per GPU and per NIC, the cell naming how the
two devices are connected, then the CPU and NUMA affinity of each GPU, a legend and, on drivers
that number NICs, a NIC legend::

            GPU0    GPU1    NIC0    NIC1    CPU Affinity    NUMA Affinity   GPU NUMA ID
    GPU0     X      NV4     NODE    NODE    64-71   1               N/A
    GPU1    NV4      X      NODE    NODE    64-71   1               N/A
    NIC0    NODE    NODE     X      PIX
    ...
    Legend:

      X    = Self
      SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes
      NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges
             within a NUMA node
      PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
      PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
      PIX  = Connection traversing at most a single PCIe bridge
      NV#  = Connection traversing a bonded set of # NVLinks

    NIC Legend:

      NIC0: mlx5_0

The real output separates cells with tabs and leaves empty cells empty (a GPU whose CPU affinity
is unknown prints ``\\t\\t0\\t\\tN/A``); pasted copies often have spaces instead. Both are read:
tab-separated rows by position, space-separated rows by token. Older drivers name the NIC
columns after the device (``mlx5_0``) and print no NIC legend, and no ``NUMA Affinity`` / ``GPU
NUMA ID`` columns. ``nvidia-smi topo -mp`` prints the same matrix for PCIe only: NVLinks are not
shown, so ``pci_only`` is set when the capture shows that command.

One matrix → one :class:`GpuTopology` record with the pairwise link types, the affinities, the
NIC names and the line of each row. ``link_rank`` orders GPU–NIC link types from nearest to
farthest (PIX < PXB < PHB < NODE < SYS), as the legend describes them.

Sources: the legend printed by nvidia-smi itself (quoted above), ``nvidia-smi topo -h``, and the
real captures under ``tests/fixtures/evidence/nvidia-smi-topo/``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.registry import register

__all__ = ["LINK_RANK", "GpuTopology", "TopoRow", "link_rank", "parse_nvidia_smi_topo"]

LINK_RANK: dict[str, int] = {"PIX": 1, "PXB": 2, "PHB": 3, "NODE": 4, "SYS": 5}
"""PCIe link types from nearest to farthest (nvidia-smi's legend)."""

_NV_RE = re.compile(r"^NV\d+$")
_GPU_RE = re.compile(r"^GPU\d+$")
_CELL_RE = re.compile(r"^(?:X|SYS|NODE|PHB|PXB|PIX|NV\d+|C2C|P2C|NVB)$")
_AFFINITY_HEADERS = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
# ``(.*\S|\s)`` is ``(.+?)`` before ``\s*$`` found in one pass: up to the last non-blank (or one
# blank when there is none); the lazy form rescans a run of blanks at every character
_LEGEND_RE = re.compile(r"^\s*(\S+)\s+=\s+(.*\S|\s)\s*$")
_NIC_LEGEND_RE = re.compile(r"^\s*(NIC\d+):\s*(\S+)\s*$")
_COMMAND_RE = re.compile(r"nvidia-smi\s+topo\b(.*)$")
_HEADER_ANY_RE = re.compile(r"(?m)^[ \t]*+GPU0[ \t]++GPU1\b|^[ \t]*+GPU0[ \t]++(?:NIC0|mlx5_|CPU)")


def link_rank(link: str) -> int | None:
    """Rank of a PCIe link type (1 = PIX, nearest ... 5 = SYS); None for X, NV#, unknown."""
    return LINK_RANK.get(link)


@dataclass(slots=True, kw_only=True)
class TopoRow:
    """Where one device's row of the matrix is."""

    label: str
    line: int


@dataclass(slots=True, kw_only=True)
class GpuTopology(Record):
    """One ``nvidia-smi topo -m`` matrix."""

    record_type: ClassVar[str] = "gpu_topology"

    command: str | None = None
    pci_only: bool = False
    """``nvidia-smi topo -mp``: PCIe paths only, NVLinks not shown."""
    columns: list[str] = field(default_factory=list)
    """Device columns in order (``GPU0``..., ``NIC0``... or ``mlx5_0``...)."""
    gpus: list[str] = field(default_factory=list)
    nics: list[str] = field(default_factory=list)
    links: dict[str, dict[str, str]] = field(default_factory=dict)
    """Row device → column device → link type (``X``, ``NV18``, ``PIX``, ``SYS``...)."""
    rows: dict[str, TopoRow] = field(default_factory=dict)
    """Row device → its row (the line it was read from)."""
    cpu_affinity: dict[str, str | None] = field(default_factory=dict)
    numa_affinity: dict[str, str | None] = field(default_factory=dict)
    gpu_numa_id: dict[str, str | None] = field(default_factory=dict)
    nic_names: dict[str, str] = field(default_factory=dict)
    """``NIC0`` → ``mlx5_0`` from the NIC legend (old drivers: the column is the name)."""
    legend: dict[str, str] = field(default_factory=dict)

    def row_line(self, device: str) -> int | None:
        row = self.rows.get(device)
        return row.line if row is not None else None

    def nic_name(self, nic: str) -> str:
        return self.nic_names.get(nic, nic)

    def link(self, a: str, b: str) -> str | None:
        """Link type between two devices, from a's row or, failing that, b's."""
        cell = self.links.get(a, {}).get(b)
        return cell if cell is not None else self.links.get(b, {}).get(a)

    def nearest_nics(self, gpu: str) -> tuple[str | None, list[str]]:
        """(nearest PCIe link type, the NICs at that distance) for one GPU."""
        best: int | None = None
        names: list[str] = []
        for nic in self.nics:
            cell = self.link(gpu, nic)
            rank = link_rank(cell) if cell is not None else None
            if rank is None:
                continue
            if best is None or rank < best:
                best, names = rank, [nic]
            elif rank == best:
                names.append(nic)
        if best is None:
            return None, []
        return next(k for k, v in LINK_RANK.items() if v == best), names

    def nvlink_peers(self, gpu: str) -> list[str]:
        return [g for g in self.gpus if g != gpu and _NV_RE.match(self.link(gpu, g) or "")]


_ROW_GUESS_RE = re.compile(
    r"(?m)^[ \t]*+(?:GPU|NIC)\d++(?:[ \t]++(?:X|SYS|NODE|PHB|PXB|PIX|NV\d++)){2,}"
)
"""A matrix row (``GPU3  NV12  NV12  X ...``): the header row may be missing from a paste."""


def _infer_columns(text: str) -> list[str] | None:
    """The device columns of a matrix pasted without its header row: each row's ``X`` sits in
    its own column, NIC columns follow the GPU columns, the matrix is square. ``None`` when the
    rows do not agree."""
    named: dict[int, str] = {}
    width = 0
    for m in _ROW_GUESS_RE.finditer(text):
        tokens = m.group().split()
        cells = tokens[1:]
        width = max(width, len(cells))
        if "X" in cells:
            named[cells.index("X")] = tokens[0]
    if width < 2 or not named:
        return None
    nics = [i for i, name in named.items() if name.startswith("NIC")]
    first_nic = min(nics) - int(named[min(nics)][3:]) if nics else width
    columns = []
    for i in range(width):
        guess = f"GPU{i}" if i < first_nic else f"NIC{i - first_nic}"
        if i in named and named[i] != guess:
            return None
        columns.append(guess)
    return columns


def _detect(text: str) -> float:
    if "GPU0" in text:
        if "CPU Affinity" in text or "NV#  = Connection" in text or "NIC Legend:" in text:
            return 0.95
        if "Legend:" in text and "X    = Self" in text:
            return 0.9
    if ("GPU" in text or "NIC" in text) and "X" in text and (
        len(_ROW_GUESS_RE.findall(text, 0, 65536)) >= 2
    ):
        return 0.9 if "X    = Self" in text else 0.6
    return 0.0


def _header(line: str) -> tuple[list[str], list[str]] | None:
    """(device columns, affinity columns) of a header row, or None."""
    body = line.strip()
    tabbed = [c.strip() for c in body.split("\t") if c.strip()]
    cells = tabbed if "\t" in body else body.split()
    if not cells or not _GPU_RE.match(cells[0]):
        return None
    if len(cells) > 1 and _CELL_RE.match(cells[1]):
        return None  # a GPU row, not the header
    devices: list[str] = []
    for c in cells:
        if c in ("CPU", "NUMA", "GPU NUMA ID") or c in _AFFINITY_HEADERS:
            break
        if c == "GPU" and devices:
            break
        devices.append(c)
    rest = body[body.find("CPU Affinity") :] if "CPU Affinity" in body else ""
    affinities = [h for h in _AFFINITY_HEADERS if h in rest]
    return devices, affinities


def _clean(cell: str | None) -> str | None:
    if cell is None:
        return None
    c = cell.strip()
    return c or None


@register(
    "nvidia-smi-topo",
    summary="nvidia-smi topo -m (GPU/NIC PCIe and NVLink matrix, affinities, NIC legend)",
    detect=_detect,
    refs=("S9",),
)
def parse_nvidia_smi_topo(text: str) -> ParseResult:
    """``nvidia-smi topo -m`` → one :class:`GpuTopology` per matrix."""
    res = ParseResult("nvidia-smi-topo")
    topo: GpuTopology | None = None
    affinities: list[str] = []
    section: str | None = None  # "legend" or "nic-legend"
    command: str | None = None
    headless = None if _HEADER_ANY_RE.search(text) else _infer_columns(text)
    for lineno, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("```"):
            continue
        if topo is None and headless is not None and _ROW_GUESS_RE.match(raw):
            # a matrix pasted without its header: columns inferred from the rows' X cells
            topo = GpuTopology(line=lineno, command=command, pci_only=False, columns=headless)
            topo.gpus = [d for d in headless if _GPU_RE.match(d)]
            topo.nics = [d for d in headless if not _GPU_RE.match(d)]
            affinities = ["CPU Affinity", "NUMA Affinity"]
            res.records.append(topo)
            res.warn(lineno, "no header row: device columns inferred from the rows", raw)
        cm = _COMMAND_RE.search(stripped)
        if cm is not None:
            command, topo, section = stripped, None, None
            continue
        hdr = _header(raw)
        if hdr is not None:
            devices, affinities = hdr
            pci_only = command is not None and ("-mp" in command.split() or "matrix_pci" in command)
            topo = GpuTopology(line=lineno, command=command, pci_only=pci_only, columns=devices)
            topo.gpus = [d for d in devices if _GPU_RE.match(d)]
            topo.nics = [d for d in devices if not _GPU_RE.match(d)]
            res.records.append(topo)
            command, section = None, None
            continue
        if stripped == "Legend:":
            section = "legend"
            if topo is not None:
                topo.end_line = lineno
            continue
        if stripped == "NIC Legend:":
            section = "nic-legend"
            if topo is not None:
                topo.end_line = lineno
            continue
        if topo is None:
            res.warn(lineno, "expected an nvidia-smi topo header row (GPU0 GPU1 ...)", raw)
            continue
        if section == "nic-legend":
            nm = _NIC_LEGEND_RE.match(raw)
            if nm is not None:
                topo.nic_names[nm.group(1)] = nm.group(2)
                topo.end_line = lineno
                continue
        elif section == "legend":
            lm = _LEGEND_RE.match(raw)
            if lm is not None:
                topo.legend[lm.group(1)] = lm.group(2)
                topo.end_line = lineno
                continue
        elif _read_row(topo, affinities, lineno, raw):
            topo.end_line = lineno
            continue
        res.warn(lineno, "expected a topology row, a legend line or a NIC legend line", raw)
    return res


def _read_row(topo: GpuTopology, affinities: list[str], lineno: int, raw: str) -> bool:
    n = len(topo.columns)
    body = raw.strip("\n").rstrip()
    if "\t" in body:
        cells = body.lstrip(" ").split("\t")
        label = cells[0].strip()
        links = [c.strip() for c in cells[1 : 1 + n]]
        rest: list[str | None] = [_clean(c) for c in cells[1 + n :]]
    else:
        tokens = body.split()
        if not tokens:
            return False
        label = tokens[0]
        links = tokens[1 : 1 + n]
        rest = list(tokens[1 + n :])
    if label not in topo.columns or len(links) != n:
        return False
    if not all(_CELL_RE.match(c) for c in links):
        return False
    topo.links[label] = dict(zip(topo.columns, links, strict=True))
    topo.rows[label] = TopoRow(label=label, line=lineno)
    if label in topo.gpus:
        _read_affinities(topo, label, affinities, rest)
    return True


def _read_affinities(
    topo: GpuTopology, label: str, affinities: list[str], rest: list[str | None]
) -> None:
    values = list(rest)
    if "CPU Affinity" in affinities:
        topo.cpu_affinity[label] = values.pop(0) if values else None
    if "NUMA Affinity" in affinities:
        topo.numa_affinity[label] = values.pop(0) if values else None
    if "GPU NUMA ID" in affinities:
        present = [v for v in values if v is not None]
        topo.gpu_numa_id[label] = present[-1] if present else None
