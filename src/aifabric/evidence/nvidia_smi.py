"""GPU state as ``nvidia-smi`` prints it (kind ``nvidia-smi``): the default table, the full
query ``nvidia-smi -q`` and the CSV query ``nvidia-smi --query-gpu=... --format=csv``.

**The table** (every driver from 4xx to 58x; the column widths change, the cells do not)::

    +-----------------------------------------------------------------------------------------+
    | NVIDIA-SMI 560.35.03              Driver Version: 560.35.03      CUDA Version: 12.6     |
    |-----------------------------------------+------------------------+----------------------+
    | GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
    | Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
    |                                         |                        |               MIG M. |
    |=========================================+========================+======================|
    |   0  NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |                    0 |
    | N/A   27C    P0             69W /  700W |       1MiB /  81559MiB |      0%      Default |
    |                                         |                        |             Disabled |
    +-----------------------------------------+------------------------+----------------------+

Each GPU is a block of two or three rows of three ``|`` cells: index, name and persistence
mode (``TCC``/``WDDM`` on Windows), bus id and display, the volatile uncorrectable ECC count;
fan, temperature, performance state and power, memory used and total, utilisation and compute
mode; the MIG mode (drivers from 450 on). A field NVML could not read prints ``ERR!``. The
header's ``CUDA Version`` is the newest CUDA the driver supports, not the toolkit installed
(drivers before 410.72 print none). A processes table follows (``GPU GI CI PID Type Process
name GPU Memory``; ``GI``/``CI`` from 450 on) and, with MIG on, a MIG devices table (read as
far as its lines go, not parsed).

**The full query** (``-q``) prints ``key : value`` lines nested by indentation under a
``GPU 00000000:18:00.0`` line per GPU. Values are read by the path of their section names
(``PCI/GPU Link Info/Link Width/Current``), matched by suffix so that a paste that lost its
indentation still reads: the PCIe generation and width (max and current), the volatile and
aggregate uncorrectable ECC counts (``SRAM``/``DRAM Uncorrectable`` from 470 on, ``Double
Bit/Total`` before), retired pages pending, the remapped rows (pending, failure occurred),
the NVLink fabric state and status (Hopper and later with NVSwitch), MIG and compute mode,
performance state, utilisation and framebuffer memory.

**The CSV query** prints a header of the requested field names (``pcie.link.width.current``,
``memory.used [MiB]``) then one row per GPU; the fields below are read, the others kept
nowhere; ``[N/A]`` and ``[Not Supported]`` read as unknown. ``--format=csv,noheader`` cannot be
read (nothing says which field is which) and gives a warning per line.

One :class:`SmiDriver` record per output (driver and CUDA version), one :class:`GpuState`
per GPU and one :class:`GpuProcess` per process row. Sources: ``nvidia-smi(1)`` (the manual
page the driver installs: the table's columns, ``-q`` sections, ``--help-query-gpu`` field
names) and the real captures under ``tests/fixtures/evidence/nvidia-smi/``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record, looks_like_message
from aifabric.evidence.registry import register

__all__ = ["GpuProcess", "GpuState", "SmiDriver", "SmiMessage", "parse_nvidia_smi"]


@dataclass(slots=True, kw_only=True)
class SmiDriver(Record):
    """The driver of one ``nvidia-smi`` output: ``Driver Version: 535.104.05  CUDA Version:
    12.2``."""

    record_type: ClassVar[str] = "nvidia_smi_driver"

    form: str
    """``table``, ``query`` (``-q``) or ``csv``."""
    driver_version: str | None = None
    cuda_version: str | None = None
    """The newest CUDA version the driver supports (the header's ``CUDA Version``)."""
    smi_version: str | None = None
    gpus: int = 0


@dataclass(slots=True, kw_only=True)
class GpuState(Record):
    """One GPU as ``nvidia-smi`` shows it; ``None`` where the output does not show a field."""

    record_type: ClassVar[str] = "gpu_state"

    form: str
    index: int | None = None
    name: str | None = None
    bus_id: str | None = None
    driver_version: str | None = None
    cuda_version: str | None = None
    persistence: str | None = None
    perf_state: str | None = None
    temperature_c: float | None = None
    power_w: float | None = None
    power_cap_w: float | None = None
    memory_used_mib: float | None = None
    memory_total_mib: float | None = None
    utilization_pct: float | None = None
    compute_mode: str | None = None
    mig_mode: str | None = None
    ecc_volatile_uncorrectable: int | None = None
    """Uncorrectable ECC errors since the driver loaded (the table's ``Volatile Uncorr. ECC``)."""
    ecc_aggregate_uncorrectable: int | None = None
    """Uncorrectable ECC errors over the GPU's life (``-q`` and CSV only)."""
    retired_pages_pending: bool | None = None
    remapped_rows_pending: bool | None = None
    remapping_failed: bool | None = None
    pcie_gen_max: int | None = None
    pcie_gen_current: int | None = None
    link_width_max: int | None = None
    link_width_current: int | None = None
    fabric_state: str | None = None
    fabric_status: str | None = None
    errors: list[str] = field(default_factory=list)
    """Fields NVML could not read (``ERR!``), by column name."""


@dataclass(slots=True, kw_only=True)
class GpuProcess(Record):
    """One row of the processes table."""

    record_type: ClassVar[str] = "gpu_process"

    gpu: int | None = None
    pid: int | None = None
    type: str | None = None
    name: str | None = None
    memory_mib: float | None = None


@dataclass(slots=True, kw_only=True)
class SmiMessage(Record):
    """A message nvidia-smi prints instead of (or inside) its output: ``No devices were
    found``, ``Unable to determine the device handle for GPU 0000:03:00.0: GPU is lost``. The
    nvidia-smi signature catalogue says what each means; the record keeps where it was."""

    record_type: ClassVar[str] = "nvidia_smi_message"
    message_line: ClassVar[bool] = True

    text: str
    bus_id: str | None = None


_MESSAGES = ("No devices were found", "NVIDIA-SMI has failed", "Unable to determine the device",
             "Failed to initialize NVML", "Unable to communicate with GPU", "GPU is lost",
             "NVIDIA-SMI couldn't find", "WARNING: infoROM is corrupted", "Make sure that the "
             "latest NVIDIA driver", "GPU access blocked", "Insufficient Permissions",
             "NVML library version")  # fmt: skip
_MSG_BUS_RE = re.compile(r"GPU ?([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])")
_FLAT_RE = re.compile(r"(?m)^[ \t]++[A-Z][^:\n]{0,60}+:")
"""An indented ``key :`` line: the ``-q`` output kept its indentation."""
_FRAGMENT_SECTIONS = frozenset({"Fabric", "GPU Link Info", "ECC Errors", "Remapped Rows",
                                "Retired Pages", "FB Memory Usage", "MIG Mode"})  # fmt: skip


# -- detection ---------------------------------------------------------------------------------

_TABLE_HEADER_RE = re.compile(
    r"NVIDIA-SMI[ \t]++(\S++)[ \t]++(?:Driver|KMD) Version:[ \t]*+(\S++)(?:[ \t]++CUDA "
    r"(?:UMD )?Version:[ \t]*+(\S++))?"
)
_CSV_FIELD_RE = re.compile(
    r"^[ \t]*+[a-z_]++(?:\.[a-z_]++)*+(?: \[[^\]\n]{1,12}\])?"
    r"(?:, [a-z_]++(?:\.[a-z_]++)*+(?: \[[^\]\n]{1,12}\])?)++[ \t]*+$",
    re.MULTILINE,
)
"""A CSV query's header row: ``index, name, pcie.link.width.current, memory.used [MiB]``."""
_CSV_HINTS = ("pcie.link", "memory.used", "memory.total", "driver_version", "pci.bus_id",
              "utilization.gpu", "temperature.gpu", "power.draw", "compute_cap", "gpu_name",
              "clocks.", "ecc.errors", "retired_pages", "remapped_rows")  # fmt: skip


def _only_messages(text: str) -> bool:
    """A short output of nothing but nvidia-smi's own messages (and the command that ran
    it): ``No devices were found``."""
    lines = [ln.strip() for ln in text[:4096].splitlines() if ln.strip()]
    said = [ln for ln in lines if any(m in ln for m in _MESSAGES)]
    return bool(said) and len(lines) <= 8 and all(
        ln in said or _is_command(ln) or ln.startswith("```") for ln in lines)


def _detect(text: str) -> float:
    if "NVIDIA-SMI " in text and ("Driver Version:" in text or "KMD Version:" in text):
        return 0.95
    if "NVSMI LOG" in text:
        return 0.95
    if "Persistence-M" in text and "Bus-Id" in text:
        return 0.9
    if "Attached GPUs" in text and "Product Name" in text:
        return 0.9
    if ("ClusterUUID" in text or "CliqueId" in text or "Remapping Failure Occurred" in text
            or "GPU Link Info" in text) and ("Fabric" in text or "Remapped Rows" in text
                                             or "Link Width" in text):  # fmt: skip
        return 0.85  # a section of nvidia-smi -q
    if "|" in text and _GPU_ROW_RE.search(text, 0, 65536):
        return 0.8  # a GPU block pasted without the table's header
    if any(h in text for h in _CSV_HINTS):
        m = _CSV_FIELD_RE.search(text, 0, 65536)
        if m is not None and any(h in m.group() for h in _CSV_HINTS):
            return 0.9
    if ("NVIDIA" in text or "GPU" in text or "devices" in text) and _only_messages(text):
        return 0.9
    return 0.0


# -- cells -------------------------------------------------------------------------------------

_GPU_ROW_RE = re.compile(
    r"(?m)^[ \t]*+\|[ \t]++\d{1,3}[ \t]++[^|\n]{1,60}\|[ \t]*+[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:"
    r"[0-9A-Fa-f]{2}\.[0-7][ \t]++(?:On|Off)[ \t]*+\|"
)
_NUM_RE = re.compile(r"^[+-]?\d+(?:\.\d+)?$")
_MIB_RE = re.compile(r"^(\d+(?:\.\d+)?)[ \t]*MiB$")
_BUS_RE = re.compile(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]$")
_BUS_HEAD_RE = re.compile(r"^[0-9A-Fa-f]{4,8}:(?:[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{0,2})?)?$")
_GPU_Q_RE = re.compile(r"^GPU[ \t]++([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])[ \t]*$")
_TIMESTAMP_RE = re.compile(r"^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}$")
_UNKNOWN = {"N/A", "[N/A]", "[Not Supported]", "Not Supported", "[Unknown Error]",
            "Unknown Error", "", "[Insufficient Permissions]",
            "Requested functionality has been deprecated"}  # fmt: skip


def _num(cell: str | None) -> float | None:
    if cell is None:
        return None
    c = cell.strip().rstrip("%").rstrip()
    for unit in ("MiB", "W", "C", "x", "MHz", " %"):
        if c.endswith(unit):
            c = c[: -len(unit)].rstrip()
    return float(c) if _NUM_RE.match(c) else None


def _int(cell: str | None) -> int | None:
    n = _num(cell)
    return int(n) if n is not None and n == int(n) else None


def _yes(cell: str | None) -> bool | None:
    if cell is None:
        return None
    c = cell.strip().lower()
    return True if c == "yes" else False if c == "no" else None


def _known(cell: str | None) -> str | None:
    if cell is None:
        return None
    c = cell.strip()
    return None if c in _UNKNOWN else c


# -- the table ---------------------------------------------------------------------------------


def _cells(line: str) -> list[str] | None:
    """The ``|`` cells of a table row, or None when the line is not one."""
    s = line.strip()
    if len(s) < 2 or s[0] != "|" or s[-1] != "|":
        return None
    return [c.strip() for c in s[1:-1].split("|")]


_RULE_CHARS = frozenset("+-=| ")


def _is_rule(line: str) -> bool:
    s = line.strip()
    return len(s) >= 3 and set(s) <= _RULE_CHARS and ("-" in s or "=" in s)


_COLUMN_WORDS = ("Persistence-M", "Bus-Id", "Pwr:Usage/Cap", "MIG M.", "TCC/WDDM",
                 "Memory-Usage", "GPU-Util", "Volatile Uncorr")  # fmt: skip
_PROC_WORDS = ("Process name", "GPU Memory", "Processes:", "No running processes found",
               "MIG devices:", "GI   CI", "ID   ID", "ID  ID", "Usage      |", "Usage")  # fmt: skip
_PERSISTENCE = {"On", "Off", "TCC", "WDDM", "N/A", "ERR!"}
_PROC_TYPES = {"C", "G", "C+G", "M", "M+C"}


@dataclass(slots=True)
class _Table:
    driver: SmiDriver
    gpu: GpuState | None = None
    row: int = 0
    section: str = "gpus"  # gpus | processes | mig


def _gpu_first_row(cells: list[str], lineno: int, t: _Table) -> GpuState | None:
    if len(cells) < 3:
        return None
    head = cells[0].split()
    if len(head) < 2 or not head[0].isdigit():
        return None
    bus = cells[1].split()
    if not bus or not (_BUS_RE.match(bus[0]) or _BUS_HEAD_RE.match(bus[0]) or bus[0] == "ERR!"):
        return None  # (a Bus-Id cut short by the poster, "00000000:", still starts a GPU)
    persistence = head[-1] if head[-1] in _PERSISTENCE and len(head) > 2 else None
    name_tokens = head[1:-1] if persistence is not None else head[1:]
    gpu = GpuState(
        line=lineno, form="table", index=int(head[0]), name=" ".join(name_tokens) or None,
        bus_id=bus[0] if _BUS_RE.match(bus[0]) else None,
        driver_version=t.driver.driver_version, cuda_version=t.driver.cuda_version,
        persistence=persistence,
    )
    ecc = cells[2].strip()
    if ecc == "ERR!":
        gpu.errors.append("Volatile Uncorr. ECC")
    else:
        gpu.ecc_volatile_uncorrectable = _int(ecc)
    if persistence == "ERR!":
        gpu.errors.append("Persistence-M")
    if len(bus) > 1 and bus[1] == "ERR!":
        gpu.errors.append("Disp.A")
    return gpu


def _gpu_second_row(cells: list[str], gpu: GpuState) -> bool:
    if len(cells) < 3:
        return False
    left = cells[0].replace(" / ", "/").split()
    if not left:
        return False
    names = ("Fan", "Temp", "Perf", "Pwr:Usage/Cap")
    for name, tok in zip(names, left, strict=False):
        if tok.startswith("ERR!"):
            gpu.errors.append(name)
    if len(left) >= 2:
        gpu.temperature_c = _num(left[1])
    if len(left) >= 3 and left[2].startswith("P") and left[2][1:].isdigit():
        gpu.perf_state = left[2]
    if len(left) >= 4 and "/" in left[3]:
        used, cap = left[3].split("/", 1)
        gpu.power_w, gpu.power_cap_w = _num(used), _num(cap)
        if cap.startswith("ERR!") and "Pwr:Usage/Cap" not in gpu.errors:
            gpu.errors.append("Pwr:Usage/Cap")
    mem = cells[1].replace(" ", "")
    if "/" in mem:
        used_m, total_m = mem.split("/", 1)
        gpu.memory_used_mib, gpu.memory_total_mib = _num(used_m), _num(total_m)
    elif mem.startswith("ERR!"):
        gpu.errors.append("Memory-Usage")
    right = cells[2].split(None, 1)
    if right:
        if right[0].startswith("ERR!"):
            gpu.errors.append("GPU-Util")
        gpu.utilization_pct = _num(right[0])
        if len(right) > 1:
            gpu.compute_mode = right[1].strip()
    return True


def _process_row(cells: list[str], lineno: int) -> GpuProcess | None:
    tokens = " ".join(cells).split()
    if len(tokens) < 4 or not tokens[0].isdigit():
        return None
    mem = tokens[-1]
    rest = tokens[1:-1]
    kinds = [i for i, tok in enumerate(rest) if tok in _PROC_TYPES]
    if not kinds or kinds[0] == 0 or not rest[kinds[0] - 1].isdigit():
        return None
    at = kinds[0]
    return GpuProcess(line=lineno, gpu=int(tokens[0]), pid=int(rest[at - 1]), type=rest[at],
                      name=" ".join(rest[at + 1 :]) or None,
                      memory_mib=_num(mem))  # fmt: skip


def _table_line(res: ParseResult, t: _Table, lineno: int, raw: str) -> bool:
    """Read one line of the table form; False when it is not one."""
    if _is_rule(raw):
        if t.gpu is not None:
            t.gpu.end_line = lineno
        t.gpu, t.row = None, 0
        return True
    cells = _cells(raw)
    if cells is None:
        return False
    joined = " ".join(cells)
    if "Processes:" in joined:
        t.section = "processes"
        return True
    if "MIG devices:" in joined:
        t.section = "mig"
        return True
    if t.section == "mig":
        return True  # MIG devices table: shown, not read
    if t.section == "processes":
        if any(w in joined for w in _PROC_WORDS) or not joined.strip():
            return True
        proc = _process_row(cells, lineno)
        if proc is not None:
            res.records.append(proc)
            return True
        return False
    if any(w in joined for w in _COLUMN_WORDS):
        return True
    if t.gpu is None:
        gpu = _gpu_first_row(cells, lineno, t)
        if gpu is None:
            return not joined.strip()
        res.records.append(gpu)
        t.driver.gpus += 1
        t.gpu, t.row = gpu, 1
        return True
    t.row += 1
    if t.row == 2:
        return _gpu_second_row(cells, t.gpu)
    if t.row == 3 and len(cells) >= 3:
        mig = cells[2].strip()
        t.gpu.mig_mode = _known(mig)
        if mig == "ERR!":
            t.gpu.errors.append("MIG M.")
        return True
    return not joined.strip()


# -- the full query ----------------------------------------------------------------------------

_QUERY_PATHS: tuple[tuple[str, str], ...] = (
    ("Product Name", "name"),
    ("PCI/Bus Id", "bus_id"),
    ("Persistence Mode", "persistence"),
    ("Performance State", "perf_state"),
    ("Compute Mode", "compute_mode"),
    ("MIG Mode/Current", "mig_mode"),
    ("Fabric/State", "fabric_state"),
    ("Fabric/Status", "fabric_status"),
)


def _q(values: dict[str, str], suffix: str) -> str | None:
    """The value whose section path ends with ``suffix`` (``Link Width/Current``)."""
    for path, value in values.items():
        if path == suffix or path.endswith("/" + suffix):
            return value
    return None


def _ecc_sum(values: dict[str, str], scope: str) -> int | None:
    """Uncorrectable ECC errors of ``scope`` (``Volatile`` or ``Aggregate``): the sum of the
    ``... Uncorrectable ...`` counters (470 on) or the ``Double Bit/Total`` (before)."""
    total: int | None = None
    for path, value in values.items():
        parts = path.split("/")
        if scope not in parts:
            continue
        after = parts[parts.index(scope) + 1 :]
        if not after or ("ECC Errors" not in parts and parts[0] != scope):
            continue
        counted = ("Uncorrectable" in after[-1] and len(after) == 1) or (
            after[0] == "Double Bit" and after[-1] == "Total")
        if counted:
            n = _int(value)
            if n is not None:
                total = (total or 0) + n
    return total


def _finish_query_gpu(gpu: GpuState, values: dict[str, str]) -> None:
    for suffix, attr in _QUERY_PATHS:
        v = _known(_q(values, suffix))
        if v is not None:
            setattr(gpu, attr, v)
    gpu.pcie_gen_max = _int(_q(values, "PCIe Generation/Max"))
    gpu.pcie_gen_current = _int(_q(values, "PCIe Generation/Current"))
    gpu.link_width_max = _int(_q(values, "Link Width/Max"))
    gpu.link_width_current = _int(_q(values, "Link Width/Current"))
    gpu.memory_total_mib = _num(_q(values, "FB Memory Usage/Total"))
    gpu.memory_used_mib = _num(_q(values, "FB Memory Usage/Used"))
    gpu.utilization_pct = _num(_q(values, "Utilization/Gpu"))
    gpu.temperature_c = _num(_q(values, "Temperature/GPU Current Temp"))
    gpu.ecc_volatile_uncorrectable = _ecc_sum(values, "Volatile")
    gpu.ecc_aggregate_uncorrectable = _ecc_sum(values, "Aggregate")
    gpu.remapped_rows_pending = _yes(_q(values, "Remapped Rows/Pending"))
    gpu.remapping_failed = _yes(_q(values, "Remapped Rows/Remapping Failure Occurred"))
    pending = _q(values, "Retired Pages/Pending Page Blacklist")
    if pending is None:
        pending = _q(values, "Retired Pages/Pending Page Retirement")
    gpu.retired_pages_pending = _yes(pending)
    for path, value in values.items():
        if value.strip() == "ERR!" or value.strip() == "[GPU is lost]":
            gpu.errors.append(path)


@dataclass(slots=True)
class _Query:
    driver: SmiDriver
    gpu: GpuState | None = None
    values: dict[str, str] = field(default_factory=dict)
    stack: list[tuple[int, str]] = field(default_factory=list)
    fragment: bool = False
    """A section of ``-q`` pasted without its GPU line: the values go to one GPU."""
    flat: bool = False
    """The paste lost its indentation: a section lasts until the next section line."""


def _query_end(q: _Query) -> None:
    if q.gpu is not None:
        _finish_query_gpu(q.gpu, q.values)
    q.gpu, q.values, q.stack = None, {}, []


def _query_line(res: ParseResult, q: _Query, lineno: int, raw: str) -> bool:
    s = raw.strip()
    if "NVSMI LOG" in s and set(s.replace("NVSMI LOG", "")) <= {"="}:
        return True
    gm = _GPU_Q_RE.match(s)
    if gm is not None:
        _query_end(q)
        q.gpu = GpuState(line=lineno, form="query", bus_id=gm.group(1),
                         driver_version=q.driver.driver_version,
                         cuda_version=q.driver.cuda_version)  # fmt: skip
        q.gpu.index = q.driver.gpus
        q.driver.gpus += 1
        res.records.append(q.gpu)
        return True
    indent = len(raw) - len(raw.lstrip(" \t"))
    key, sep, value = s.partition(":")
    key = key.strip()
    if not key or len(key) > 60:
        return False
    if q.flat:
        if not sep:
            q.stack.clear()
    else:
        while q.stack and q.stack[-1][0] >= indent:
            q.stack.pop()
    if not sep:
        if not all(c.isalnum() or c in " -_()./&+" for c in key):
            return False
        if q.gpu is None and q.fragment:
            q.gpu = GpuState(line=lineno, form="query", index=None)
            q.driver.gpus += 1
            res.records.append(q.gpu)
        q.stack.append((indent, key))
        return True
    value = value.strip()
    if q.gpu is None and q.fragment:
        q.gpu = GpuState(line=lineno, form="query", index=None)
        q.driver.gpus += 1
        res.records.append(q.gpu)
    if q.gpu is None:
        if key == "Driver Version":
            q.driver.driver_version = value
        elif key == "CUDA Version":
            q.driver.cuda_version = _known(value)
        return True
    path = "/".join([name for _, name in q.stack] + [key])
    q.values.setdefault(path, value)
    q.gpu.end_line = lineno
    return True


# -- the CSV query -----------------------------------------------------------------------------

_CSV_FIELDS: dict[str, str] = {
    "index": "index", "name": "name", "gpu_name": "name", "pci.bus_id": "bus_id",
    "gpu_bus_id": "bus_id", "driver_version": "driver_version", "pstate": "perf_state",
    "temperature.gpu": "temperature_c", "power.draw": "power_w", "power.limit": "power_cap_w",
    "memory.used": "memory_used_mib", "memory.total": "memory_total_mib",
    "utilization.gpu": "utilization_pct", "compute_mode": "compute_mode",
    "mig.mode.current": "mig_mode", "persistence_mode": "persistence",
    "ecc.errors.uncorrected.volatile.total": "ecc_volatile_uncorrectable",
    "ecc.errors.uncorrected.aggregate.total": "ecc_aggregate_uncorrectable",
    "retired_pages.pending": "retired_pages_pending",
    "remapped_rows.pending": "remapped_rows_pending",
    "remapped_rows.failure": "remapping_failed",
    "pcie.link.gen.max": "pcie_gen_max", "pcie.link.gen.gpumax": "pcie_gen_max",
    "pcie.link.gen.current": "pcie_gen_current", "pcie.link.gen.gpucurrent": "pcie_gen_current",
    "pcie.link.width.max": "link_width_max", "pcie.link.width.current": "link_width_current",
}  # fmt: skip
_CSV_INT = {"index", "ecc_volatile_uncorrectable", "ecc_aggregate_uncorrectable", "pcie_gen_max",
            "pcie_gen_current", "link_width_max", "link_width_current"}  # fmt: skip
_CSV_FLOAT = {"temperature_c", "power_w", "power_cap_w", "memory_used_mib", "memory_total_mib",
              "utilization_pct"}  # fmt: skip
_CSV_BOOL = {"retired_pages_pending", "remapped_rows_pending", "remapping_failed"}


def _csv_row(res: ParseResult, header: list[str], driver: SmiDriver, samples: dict[str, int],
             lineno: int, raw: str) -> bool:  # fmt: skip
    """One data row of a CSV query; ``samples``: GPU (Bus-Id or index) → its record's place in
    ``res.records`` for this header's rows."""
    cells = [c.strip() for c in raw.split(",")]
    if len(cells) != len(header):
        return False
    gpu = GpuState(line=lineno, form="csv", cuda_version=driver.cuda_version)
    for name, cell in zip(header, cells, strict=True):
        attr = _CSV_FIELDS.get(name)
        if attr is None:
            continue
        value = _known(cell)
        if attr in _CSV_INT:
            setattr(gpu, attr, _int(value))
        elif attr in _CSV_FLOAT:
            setattr(gpu, attr, _num(value))
        elif attr in _CSV_BOOL:
            setattr(gpu, attr, _yes(value))
        else:
            setattr(gpu, attr, value)
        if cell in ("ERR!", "[Unknown Error]", "[GPU is lost]"):
            gpu.errors.append(name)
    if gpu.driver_version is not None and driver.driver_version is None:
        driver.driver_version = gpu.driver_version
    gpu.driver_version = gpu.driver_version or driver.driver_version
    key = gpu.bus_id or (str(gpu.index) if gpu.index is not None else None)
    at = samples.get(key) if key is not None else None
    if at is not None:
        # another sample of a GPU already read (nvidia-smi --query-gpu ... -l N): one GPU,
        # its latest values, every field that failed in any sample
        seen = res.records[at]
        assert isinstance(seen, GpuState)
        errors = [e for e in seen.errors if e not in gpu.errors] + gpu.errors
        res.records[at] = gpu
        gpu.line, gpu.end_line, gpu.errors = seen.line, lineno, errors
        return True
    if key is not None:
        samples[key] = len(res.records)
    driver.gpus += 1
    res.records.append(gpu)
    return True


# -- the parser --------------------------------------------------------------------------------


def _is_command(s: str) -> bool:
    """A command line running nvidia-smi, with or without a shell prompt before it."""
    at = s.find("nvidia-smi")
    if at < 0 or len(s) > 600:
        return False
    before = s[:at].rstrip()
    if before.endswith("sudo"):
        before = before[:-4].rstrip()
    return not before or before[-1] in "$#>%"


@register(
    "nvidia-smi",
    summary="nvidia-smi: the default table, -q and --query-gpu CSV (driver and CUDA version, "
    "per GPU ECC, ERR! fields, PCIe link, remapped rows, NVLink fabric state)",
    detect=_detect,
    refs=("S21",),
)
def parse_nvidia_smi(text: str) -> ParseResult:
    """``nvidia-smi`` (table, ``-q`` or CSV query) → :class:`SmiDriver`, :class:`GpuState`,
    :class:`GpuProcess` records."""
    res = ParseResult("nvidia-smi")
    table: _Table | None = None
    query: _Query | None = None
    csv_header: list[str] | None = None
    csv_driver: SmiDriver | None = None
    csv_samples: dict[str, int] = {}
    flat = _FLAT_RE.search(text) is None  # a -q paste that lost its indentation
    for lineno, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        if not s or s.startswith("```") or _TIMESTAMP_RE.match(s) or _is_command(s):
            continue
        hm = _TABLE_HEADER_RE.search(s) if "NVIDIA-SMI" in s else None
        if hm is not None:
            if query is not None:
                _query_end(query)
            driver = SmiDriver(line=lineno, form="table", smi_version=hm.group(1),
                               driver_version=hm.group(2),
                               cuda_version=_known(hm.group(3)))  # fmt: skip
            res.records.append(driver)
            table, query, csv_header = _Table(driver), None, None
            continue
        if "NVSMI LOG" in s:
            if query is not None:
                _query_end(query)
            driver = SmiDriver(line=lineno, form="query")
            res.records.append(driver)
            query = _Query(driver, flat=flat)
            table, csv_header = None, None
            continue
        if _CSV_FIELD_RE.match(raw) and any(h in s for h in _CSV_HINTS):
            header = [h.strip().split(" [", 1)[0] for h in s.split(",")]
            if any(h in _CSV_FIELDS or h.startswith(_CSV_HINTS) for h in header):
                csv_driver = SmiDriver(line=lineno, form="csv")
                res.records.append(csv_driver)
                csv_header, csv_samples, table, query = header, {}, None, None
                continue
        if query is None and table is None and csv_header is None and _cells(raw) is not None and (
            any(w in s for w in _COLUMN_WORDS) or _GPU_ROW_RE.match(raw)
        ):
            # a table pasted without its NVIDIA-SMI header line
            driver = SmiDriver(line=lineno, form="table")
            res.records.append(driver)
            table = _Table(driver)
        if query is None and table is None and csv_header is None and (
            s.startswith(("Driver Version", "Attached GPUs")) or _GPU_Q_RE.match(s)
            or s in _FRAGMENT_SECTIONS or s.startswith("Product Name")
        ):
            driver = SmiDriver(line=lineno, form="query")
            res.records.append(driver)
            query = _Query(driver, fragment=not s.startswith(("Driver Version", "Attached",
                                                                "GPU ")),
                           flat=flat)  # fmt: skip
        if table is not None and _table_line(res, table, lineno, raw):
            continue
        if table is None and query is None and _is_rule(raw):
            continue  # the table's top border, above its NVIDIA-SMI line
        if query is not None and _query_line(res, query, lineno, raw):
            continue
        if csv_header is not None and csv_driver is not None and _csv_row(
            res, csv_header, csv_driver, csv_samples, lineno, raw
        ):
            continue
        if any(m in s for m in _MESSAGES) or looks_like_message(s):
            bm = _MSG_BUS_RE.search(s)
            res.records.append(SmiMessage(line=lineno, text=s[:300],
                                          bus_id=bm.group(1) if bm else None))  # fmt: skip
            continue
        res.warn(lineno, "expected a line of nvidia-smi's table, -q or CSV output", raw)
    if query is not None:
        _query_end(query)
    return res
