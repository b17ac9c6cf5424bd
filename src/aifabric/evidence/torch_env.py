"""PyTorch's environment report: ``python -m torch.utils.collect_env`` (kind ``collect-env``),
and vLLM's ``collect_env.py``, which extends it.

The report is what PyTorch's and vLLM's issue templates ask for, so it sits in many pastes
beside the failure. Its ``Key: value`` lines (``torch/utils/collect_env.py``, ``env_info_fmt``)
say which CUDA PyTorch was built for, whether CUDA works, which driver and GPUs the host has
and, under ``Versions of relevant libraries``, the installed packages: the NCCL wheel
(``[pip3] nvidia-nccl-cu12==2.18.1``) among them::

    PyTorch version: 2.1.0+cu121
    Is debug build: False
    CUDA used to build PyTorch: 12.1
    ROCM used to build PyTorch: N/A
    ...
    Is CUDA available: True
    CUDA runtime version: 12.1.105
    GPU models and configuration:
    GPU 0: NVIDIA A100-SXM4-80GB
    Nvidia driver version: 535.104.05
    ...
    Versions of relevant libraries:
    [pip3] nvidia-nccl-cu12==2.18.1
    [pip3] torch==2.1.0

vLLM's report (0.9 on) aligns the keys (``PyTorch version              : 2.7.0+cu126``) between
``=====`` section banners and adds ``vLLM Version``, a ``GPU Topology`` matrix and the
environment variables set. The ``CPU:`` block (``lscpu``), the package lines, the topology
matrix and the variables are read as part of the report; only the fields below are kept.

One :class:`TorchEnv` record per report. Values the report could not collect (``N/A``,
``Could not collect``, ``None``) read as unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record, looks_like_message, remap_lines
from aifabric.evidence.gpu_topo import parse_nvidia_smi_topo
from aifabric.evidence.registry import register

__all__ = ["EnvMessage", "TorchEnv", "parse_collect_env"]


@dataclass(slots=True, kw_only=True)
class TorchEnv(Record):
    """One environment report."""

    record_type: ClassVar[str] = "torch_env"

    torch_version: str | None = None
    cuda_build: str | None = None
    """``CUDA used to build PyTorch``: ``12.1``."""
    rocm_build: str | None = None
    cuda_available: bool | None = None
    cuda_runtime: str | None = None
    driver_version: str | None = None
    gpus: list[str] = field(default_factory=list)
    nccl_wheels: list[str] = field(default_factory=list)
    """NCCL packages installed: ``nvidia-nccl-cu12==2.18.1`` (pip) or ``nvidia-nccl-cu11
    2.14.3`` (conda), as the report lists them."""
    cuda_wheels: list[str] = field(default_factory=list)
    """Other ``nvidia-*-cuNN`` packages, for the CUDA major they were built for."""
    vllm_version: str | None = None
    os: str | None = None


@dataclass(slots=True, kw_only=True)
class EnvMessage(Record):
    """A line printed before or inside the report that is not part of it: a warning the
    ``import torch`` of the report printed (``The NVIDIA driver on your system is too old
    (found version 11040)``), a log line. Diagnose reads its line with the catalogues."""

    record_type: ClassVar[str] = "collect_env_message"
    message_line: ClassVar[bool] = True

    text: str


_KEY_RE = re.compile(r"^[ \t]*+([A-Za-z][A-Za-z0-9 _./()+-]{1,60}?)[ \t]*+:[ \t]?(.*)$")
_GPU_RE = re.compile(r"^[ \t]*+GPU \d{1,3}: ")
_PKG_RE = re.compile(r"^[ \t]*+\[(?:pip\d?|conda|uv)\][ \t]")
_ENV_RE = re.compile(r"^[ \t]*+[A-Z_][A-Z0-9_]{1,80}=")
_NCCL_PKG_RE = re.compile(r"\bnvidia-nccl-cu(\d{2})\b[= \t]*+(?:=[ \t]*+)?([0-9][\w.+]*)?")
_CUDA_PKG_RE = re.compile(r"\b(nvidia-[a-z-]+-cu(\d{2}))\b")
_QUOTE_RE = re.compile(r"^[ \t]{0,3}>[ \t]?")
_LEGEND_RE = re.compile(r"^[ \t]*+(?:X|SYS|NODE|PHB|PXB|PIX|NV#|NVB|C2C)[ \t]++= ")
"""A line of the topology matrix's legend (``  SYS  = Connection traversing ...``)."""
_LOG_RE = re.compile(r"^[ \t]*+(?:INFO|WARNING|WARN|DEBUG|ERROR|CRITICAL)\b")
_OTHER_KEYS = frozenset({"Is debug build", "Is CUDA available", "GPU models and configuration",
                         "Python version", "Python platform", "GCC version", "Clang version",
                         "CMake version", "Libc version", "CUDA_MODULE_LOADING set to",
                         "cuDNN version", "HIP runtime version", "MIOpen runtime version",
                         "Is XNNPACK available", "CPU", "Versions of relevant libraries",
                         "Neuron SDK Version", "vLLM Build Flags", "GPU Topology"})  # fmt: skip
"""Keys of the report besides :data:`_FIELDS`: a report starts at the first known key."""
_UNKNOWN = {"", "N/A", "Could not collect", "None", "none", "[Not Supported]", "No CUDA"}
_FIELDS = {
    "PyTorch version": "torch_version",
    "CUDA used to build PyTorch": "cuda_build",
    "ROCM used to build PyTorch": "rocm_build",
    "CUDA runtime version": "cuda_runtime",
    "Nvidia driver version": "driver_version",
    "vLLM Version": "vllm_version",
    "OS": "os",
}


def _known(value: str) -> str | None:
    v = value.strip()
    return None if v in _UNKNOWN else v


def _detect(text: str) -> float:
    head = text[:65536]
    hits = sum(k in head for k in ("PyTorch version", "CUDA used to build PyTorch",
                                   "Is CUDA available", "Nvidia driver version",
                                   "Versions of relevant libraries"))  # fmt: skip
    if hits >= 3:
        return 0.95
    return 0.6 if hits == 2 and "CUDA used to build PyTorch" in head else 0.0


@register(
    "collect-env",
    summary="python -m torch.utils.collect_env / vLLM collect_env.py (PyTorch and its CUDA "
    "build, CUDA availability, driver, GPUs, NCCL wheels)",
    detect=_detect,
    refs=("S21",),
)
def parse_collect_env(text: str) -> ParseResult:
    """An environment report → one :class:`TorchEnv` per ``PyTorch version`` line (or one for
    an excerpt without it)."""
    res = ParseResult("collect-env")
    env: TorchEnv | None = None
    in_gpus = in_matrix = in_cpu = in_paths = after_rule = False
    topo: list[tuple[int, str]] | None = None
    for lineno, line in enumerate(text.splitlines(), 1):
        raw = _QUOTE_RE.sub("", line, count=1)  # a report quoted in markdown ("> ")
        s = raw.strip()
        if topo is not None:
            km0 = _KEY_RE.match(raw)
            key0 = km0.group(1).strip() if km0 else None
            if not (_ENV_RE.match(raw) or (s and set(s) <= {"="})
                    or key0 in _FIELDS or key0 in _OTHER_KEYS):  # fmt: skip
                topo.append((lineno, raw))
                continue
            _topology(res, topo)
            topo = None
        if not s:
            in_gpus = in_matrix = in_cpu = in_paths = False
            continue
        if s.startswith("```") or set(s) <= {"=", "-"} or s.startswith("Collecting environment"):
            after_rule = set(s) == {"="}
            continue
        title, after_rule = after_rule and ":" not in s and len(s) < 60, False
        if title:
            continue  # a section title between two rules of '=' (vLLM's report)
        km = _KEY_RE.match(raw)
        key = km.group(1).strip() if km else None
        if env is None and key not in _FIELDS and key not in _OTHER_KEYS:
            _message(res, lineno, raw, preamble=True)  # an import warning, a log line
            continue
        if env is None or (key == "PyTorch version" and env.torch_version is not None):
            env = TorchEnv(line=lineno)
            res.records.append(env)
        env.end_line = lineno
        if in_paths and s.startswith("/"):
            continue  # "cuDNN version: Probably one of the following:" then library paths
        if key is not None and km is not None and not _GPU_RE.match(raw) and not in_cpu:
            value = km.group(2)
            in_gpus = key == "GPU models and configuration"
            in_matrix = key in ("GPU Topology", "Legend")
            if key == "GPU Topology":
                topo = []  # the matrix, read by the nvidia-smi topo parser
            in_cpu = key == "CPU"
            in_paths = key in ("cuDNN version", "HIP runtime version", "MIOpen runtime version")
            attr = _FIELDS.get(key)
            if attr is not None:
                setattr(env, attr, _known(value))
            elif key == "Is CUDA available":
                v = value.strip().lower()
                env.cuda_available = True if v in ("true", "yes") else (
                    False if v in ("false", "no") else None)
            elif in_gpus and _known(value):
                gm = _GPU_RE.match(value)
                env.gpus.append(value[gm.end():].strip() if gm else value.strip())
            continue
        if _GPU_RE.match(raw):
            env.gpus.append(s.split(": ", 1)[1].strip())
            continue
        if _PKG_RE.match(raw):
            in_cpu = False
            nm = _NCCL_PKG_RE.search(s)
            if nm is not None:
                env.nccl_wheels.append(s.split("]", 1)[1].strip())
            else:
                env.cuda_wheels.extend(m.group(1) for m in _CUDA_PKG_RE.finditer(s))
            continue
        if (in_cpu or in_gpus or in_matrix or _ENV_RE.match(raw) or _LEGEND_RE.match(raw)
                or s.startswith(("GPU", "NIC"))):  # fmt: skip
            continue  # lscpu/wmic lines, the topology matrix and its legend, variables
        _message(res, lineno, raw)
    if topo is not None:
        _topology(res, topo)
    return res


def _topology(res: ParseResult, lines: list[tuple[int, str]]) -> None:
    """vLLM's ``GPU Topology`` section: ``nvidia-smi topo -m``'s matrix and legends, parsed by
    that kind's parser, its records and warnings renumbered to the report's lines."""
    while lines and not lines[-1][1].strip():
        lines.pop()
    if not lines:
        return
    sub = parse_nvidia_smi_topo("\n".join(raw for _, raw in lines))
    remap_lines(sub, [n for n, _ in lines])
    res.records.extend(sub.records)
    res.warnings.extend(sub.warnings)


def _message(res: ParseResult, lineno: int, raw: str, preamble: bool = False) -> None:
    """A line outside the report's format: kept for the catalogues when it reads like a
    message (or a log line before the report), else a parse warning."""
    if looks_like_message(raw) or (preamble and _LOG_RE.match(raw)):
        res.records.append(EnvMessage(line=lineno, text=raw.strip()[:300]))
    else:
        res.warn(lineno, "expected a 'Key: value' line of a PyTorch/vLLM environment report",
                 raw)  # fmt: skip
