"""Record verdicts on GPU state as ``nvidia-smi`` shows it (kind ``nvidia-smi``).

A GPU that cannot take part in a collective rarely says so in the collective's own log: NCCL
sees a peer that hangs, a slow PCIe path or a CUDA error. ``nvidia-smi`` shows the state that
explains it, and one record is enough to read it:

* ``diagnose.gpu-field-error`` (``host.driver`` warning): a field prints ``ERR!``: NVML asked
  the GPU and got no answer (a GPU falling off the bus, a failed fan or power sensor, a GPU
  that needs a reset). The kernel log has the matching Xid.
* ``diagnose.gpu-ecc-uncorrectable`` (``host.driver`` warning): uncorrectable ECC errors since
  the driver loaded (the table's ``Volatile Uncorr. ECC``, ``-q``'s volatile counters): the
  process that touched the bad memory was killed (Xid 48/63/94/95) and its peers then fail in
  their collectives.
* ``diagnose.gpu-memory-repair-pending`` (``host.driver`` warning): a remapped row or a
  retired page is pending; it takes effect at the next GPU reset, and until then the bad
  memory stays in use.
* ``diagnose.gpu-row-remap-failed`` (``host.driver`` error): the GPU ran out of spare rows:
  NVIDIA's memory-error guide says such a GPU is to be replaced.
* ``diagnose.gpu-pcie-degraded`` (``host.pcie`` warning): the GPU's PCIe link trained at a
  narrower width than it supports, or at a lower generation while the GPU is busy (GPUs lower
  the generation when idle to save power, so an idle GPU's generation says nothing).
* ``diagnose.gpu-fabric-not-ready`` (``host.driver`` warning): the NVLink fabric of an
  NVSwitch system (``-q``'s ``Fabric`` state, Hopper and later) is not ``Completed`` /
  ``Success``: Fabric Manager (or NVLink Subnet Manager) is not running or failed, and CUDA
  returns ``cudaErrorSystemNotReady`` (802) until it has trained the fabric.
* ``diagnose.cuda-driver-too-old`` (``config.version-mismatch`` warning): a library in the
  same input was built for a newer CUDA major version than the driver supports (NCCL's
  ``NCCL version 2.21.5+cuda12.4`` beside nvidia-smi's ``CUDA Version: 11.8``). Within one
  major version CUDA's minor version compatibility lets it run (``info``: PTX of the newer
  minor cannot be JIT-compiled).
* ``diagnose.gpu-driver-versions-differ`` (``config.version-mismatch`` warning): the hosts of
  one input run different driver releases.
* ``diagnose.torch-driver-too-old`` (``config.version-mismatch`` warning): PyTorch's
  environment report (``collect_env``) names a CUDA build whose minimum Linux driver
  (:data:`MIN_DRIVER`: from CUDA 11 on the minimum of the major release under minor version
  compatibility, before it the driver of the toolkit's release) is above the driver the same
  report names: CUDA cannot initialise (``Is CUDA available: False``, "The NVIDIA driver on
  your system is too old").
* ``diagnose.nccl-wheel-cuda-differs`` (``config.version-mismatch`` warning): the report lists
  an NCCL wheel for another CUDA major than PyTorch's build (``nvidia-nccl-cu11`` beside
  ``torch 2.1.0+cu121``), or NCCL wheels for two majors: the process can load the wrong
  ``libnccl`` (NCCL errors such as "Invalid config blocking attribute value").

Sources: nvidia-smi(1); NVIDIA's GPU memory error management guide (dynamic page retirement,
row remapping: https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html); the Xid
catalogue (https://docs.nvidia.com/deploy/xid-errors/index.html); the Fabric Manager user guide
(https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html); CUDA
compatibility (https://docs.nvidia.com/deploy/cuda-compatibility/index.html).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from aifabric.checks.diagnose.verdict_support import _index, _item
from aifabric.checks.diagnose.verdicts import Verdict, verdict
from aifabric.evidence.base import Record
from aifabric.evidence.nccl_log import NcclVersion
from aifabric.evidence.nvidia_smi import GpuState, SmiDriver
from aifabric.evidence.torch_env import TorchEnv

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence

__all__ = ["MIN_DRIVER", "cuda_major_minor", "driver_tuple", "min_driver"]

_SMI = "https://docs.nvidia.com/deploy/nvidia-smi/index.html"
_MEM = "https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html"
_XID = "https://docs.nvidia.com/deploy/xid-errors/index.html"
_FM = "https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html"
_COMPAT = "https://docs.nvidia.com/deploy/cuda-compatibility/index.html"
_MINOR = "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html"
_NOTES = "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html"
MIN_DRIVER: dict[tuple[int, int | None], tuple[int, ...]] = {
    (13, None): (580,),
    (12, None): (525, 60, 13),
    (11, None): (450, 80, 2),
    (10, 2): (440, 33),
    (10, 1): (418, 39),
    (10, 0): (410, 48),
    (9, 2): (396, 26),
    (9, 1): (390, 46),
    (9, 0): (384, 81),
    (8, 0): (367, 48),
}
"""Minimum Linux x86_64 driver for a CUDA release. From CUDA 11 on one minimum serves the whole
major release (minor version compatibility: 13.x >= 580, 12.x >= 525.60.13, 11.x >=
450.80.02; the CUDA compatibility guide, "Minor Version Compatibility", and the toolkit release
notes' driver table); before it each release needs the driver it shipped with (the release
notes' table: 10.2 >= 440.33 ... 8.0 >= 367.48). Windows drivers are numbered differently and
are not judged."""
_FABRIC_OK = {"completed", "success", "n/a", "not supported", "none"}
_FIRST_DRIVER = 100
"""No Linux NVIDIA driver release is numbered below this: a smaller "driver version" is another
platform's CUDA driver (macOS prints ``1.1.0``), not comparable with :data:`MIN_DRIVER`."""
_BUSY_PCT = 10.0
"""Utilisation above which a GPU is busy enough to run its PCIe link at full generation."""


def cuda_major_minor(version: str | None) -> tuple[int, int] | None:
    """``12.4`` → (12, 4); ``cu121``-style and other forms → None."""
    if not version:
        return None
    head = version.strip().split(".")
    if len(head) < 2 or not head[0].isdigit() or not head[1][:2].isdigit():
        return None
    minor = "".join(ch for ch in head[1] if ch.isdigit())
    return int(head[0]), int(minor) if minor else 0


def driver_tuple(version: str | None) -> tuple[int, ...] | None:
    """``535.104.05`` → (535, 104, 5); None when it is not a dotted number."""
    if not version:
        return None
    parts = version.strip().split(".")
    if not all(p.isdigit() for p in parts) or not parts[0]:
        return None
    return tuple(int(p) for p in parts)


def min_driver(cuda: str | None) -> tuple[int, ...] | None:
    """The minimum Linux driver for a CUDA build (``12.1`` → (525, 60, 13)), None when the
    table does not cover it."""
    mm = cuda_major_minor(cuda)
    if mm is None:
        return None
    return MIN_DRIVER.get((mm[0], None)) or MIN_DRIVER.get((mm[0], mm[1]))


def _dotted(t: tuple[int, ...]) -> str:
    return ".".join(f"{n:02d}" if i == 2 else str(n) for i, n in enumerate(t))


def _who(rec: GpuState) -> str:
    name = f"GPU {rec.index}" if rec.index is not None else "GPU"
    if rec.bus_id:
        name += f" ({rec.bus_id})"
    return name


@verdict("gpu_state")
def _gpu_state(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, GpuState):
        return
    yield from _field_errors(rec)
    yield from _ecc(rec)
    yield from _pcie(rec)
    yield from _fabric(rec)


def _field_errors(rec: GpuState) -> Iterator[Verdict]:
    if not rec.errors:
        return
    yield Verdict(
        id="diagnose.gpu-field-error",
        severity="warning",
        cause="host.driver",
        message=f"{_who(rec)}: nvidia-smi reads ERR! for {', '.join(rec.errors[:6])}",
        explanation=(
            "nvidia-smi prints ERR! where NVML asked the GPU for a value and got an error: the "
            "GPU stopped answering (fallen off the bus, Xid 79), a sensor or fan failed, or the "
            "GPU needs a reset after a fault. A GPU in this state fails or hangs the collectives "
            "it takes part in."
        ),
        fix="dmesg | grep -i xid for this GPU's bus id; nvidia-smi -q -i <index> for the "
        "state; drain the node, reset the GPU (nvidia-smi -r) or reboot, and replace it if "
        "it recurs.",
        refs=("S21", _SMI, _XID),
        confidence=0.55,
    )


def _ecc(rec: GpuState) -> Iterator[Verdict]:
    if rec.remapping_failed:
        yield Verdict(
            id="diagnose.gpu-row-remap-failed",
            severity="error",
            cause="host.driver",
            message=f"{_who(rec)}: row remapping failed (no spare rows left)",
            explanation=(
                "Ampere and later GPUs repair uncorrectable memory errors by remapping the row "
                "to a spare at the next reset; 'Remapping Failure Occurred: Yes' means a bank ran "
                "out of spares, and NVIDIA's memory-error guide says such a GPU is to be "
                "replaced (RMA)."
            ),
            fix="Drain the node and replace the GPU; nvidia-smi -q -d ROW_REMAPPER shows the "
            "histogram of remaining spare rows.",
            refs=("S21", _MEM),
            confidence=0.7,
        )
    flags = (("remapped rows", rec.remapped_rows_pending),
             ("retired pages", rec.retired_pages_pending))  # fmt: skip
    pending = [what for what, flag in flags if flag]
    if pending:
        yield Verdict(
            id="diagnose.gpu-memory-repair-pending",
            severity="warning",
            cause="host.driver",
            message=f"{_who(rec)}: {' and '.join(pending)} pending: a repair of faulty GPU "
            "memory waits for a GPU reset",
            explanation=(
                "After an uncorrectable ECC error (or repeated correctable ones on one page) "
                "the driver schedules the bad row (Ampere and "
                "later: row remapping) or page (Volta, Turing: page retirement) to be replaced at "
                "the next GPU reset or driver reload. Meanwhile error containment and dynamic "
                "page offlining keep new work off the bad page, but a process that hit an "
                "uncorrectable error was killed (Xid 63/64/94/95), which is what its peers' "
                "collectives saw; "
                "NVIDIA's guide asks for a reset before the GPU takes a migrated workload."
            ),
            fix="Drain the node's jobs and reset the GPU (nvidia-smi -r -i <index>) or reboot; "
            "check nvidia-smi -q -d ROW_REMAPPER,PAGE_RETIREMENT afterwards.",
            refs=("S21", _MEM),
            confidence=0.55,
        )
    if rec.ecc_volatile_uncorrectable:
        yield Verdict(
            id="diagnose.gpu-ecc-uncorrectable",
            severity="warning",
            cause="host.driver",
            message=f"{_who(rec)}: {rec.ecc_volatile_uncorrectable} uncorrectable ECC error(s) "
            "since the driver loaded",
            explanation=(
                "An uncorrectable ECC error in GPU memory kills the context that hit it (Xid 48 "
                "before Ampere, 94/95 with row remapping after): that rank dies and its peers "
                "fail or hang in their next collective. The volatile counter is reset when the "
                "driver reloads, so these errors are recent."
            ),
            fix="dmesg | grep -i xid; nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT; drain "
            "the node and reset the GPU; replace it if errors recur or remapping failed.",
            refs=("S21", _MEM, _XID),
            confidence=0.5,
        )


def _pcie(rec: GpuState) -> Iterator[Verdict]:
    narrow = (rec.link_width_current is not None and rec.link_width_max is not None
              and 0 < rec.link_width_current < rec.link_width_max)  # fmt: skip
    busy = rec.utilization_pct is not None and rec.utilization_pct >= _BUSY_PCT
    slow = (busy and rec.pcie_gen_current is not None and rec.pcie_gen_max is not None
            and 0 < rec.pcie_gen_current < rec.pcie_gen_max)  # fmt: skip
    if not narrow and not slow:
        return
    parts = []
    if narrow:
        parts.append(f"width x{rec.link_width_current} of x{rec.link_width_max}")
    if slow:
        parts.append(f"generation {rec.pcie_gen_current} of {rec.pcie_gen_max} while "
                     f"{rec.utilization_pct:g}% busy")  # fmt: skip
    yield Verdict(
        id="diagnose.gpu-pcie-degraded",
        severity="warning",
        cause="host.pcie",
        message=f"{_who(rec)}: PCIe link at {' and '.join(parts)}",
        explanation=(
            "A GPU's PCIe link carries its traffic to the NIC (GPUDirect RDMA) and to host "
            "memory; at half the width or a lower generation its bandwidth halves or worse, "
            "and so does every collective that crosses it. GPUs drop the generation when idle "
            "to save power (so only a busy GPU's generation counts), but the width stays: a "
            "narrower width is a slot, riser, cable or retimer problem, or a link that retrained "
            "after errors."
        ),
        fix="lspci -vv -s <bus id> (LnkCap against LnkSta), the slot and riser, AER errors in "
        "dmesg; reseat or move the GPU, check the BIOS PCIe settings.",
        refs=("S9", "S21", _SMI),
        confidence=0.5,
    )


def _fabric(rec: GpuState) -> Iterator[Verdict]:
    state = (rec.fabric_state or "").strip()
    status = (rec.fabric_status or "").strip()
    bad_state = bool(state) and state.lower() not in _FABRIC_OK
    bad_status = bool(status) and status.lower() not in _FABRIC_OK
    if not bad_state and not bad_status:
        return
    shown = ", ".join(x for x in (f"state {state}" if state else "",
                                  f"status {status}" if status else "") if x)  # fmt: skip
    yield Verdict(
        id="diagnose.gpu-fabric-not-ready",
        severity="warning",
        cause="host.driver",
        message=f"{_who(rec)}: NVLink fabric not ready ({shown})",
        explanation=(
            "On NVSwitch systems (HGX H100/H200, GB200 NVL) a GPU can run CUDA work only after "
            "Fabric Manager (NVLink Subnet Manager on NVLink 5) has registered it with the "
            "fabric; until then CUDA returns cudaErrorSystemNotReady (802, 'system not yet "
            "initialized') and NCCL cannot start. A state other than Completed, or a status "
            "other than Success, means the service is not running, is still training the "
            "fabric, or failed."
        ),
        fix="systemctl status nvidia-fabricmanager (its version must equal the driver's), its "
        "log (/var/log/fabricmanager.log), and nvidia-smi -q -d FABRIC once it runs.",
        refs=("S21", _FM),
        confidence=0.6,
    )


@verdict("nvidia_smi_driver")
def _driver(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, SmiDriver):
        return
    yield from _cuda_too_old(rec, ev)
    yield from _drivers_differ(rec, ev)


def _subject(rec: Record, ev: Evidence) -> str | None:
    item = _item(rec, ev)
    return item.subject if item is not None else None


def _cuda_builds(ev: Evidence) -> dict[str, set[str]]:
    """CUDA release each NCCL or PyTorch of the input was built for → the subjects that show
    it; computed once per evidence (a bundle has one nvidia-smi capture per host)."""
    idx = _index(ev)
    key = ("cuda-builds", 0)
    memo = idx.memo.get(key)
    if memo is None:
        builds: dict[str, set[str]] = {}
        for item in ev.items:
            other = item.record
            cuda = (other.cuda if isinstance(other, NcclVersion)
                    else other.cuda_build if isinstance(other, TorchEnv) else None)  # fmt: skip
            if cuda:
                builds.setdefault(cuda, set()).add(item.subject)
        memo = builds
        idx.memo[key] = memo
    assert isinstance(memo, dict)
    return memo


def _cuda_too_old(rec: SmiDriver, ev: Evidence) -> Iterator[Verdict]:
    driver = cuda_major_minor(rec.cuda_version)
    if driver is None:
        return
    builds = _cuda_builds(ev)
    me = _subject(rec, ev)
    newer = [(v, cuda_major_minor(v)) for v in builds]
    major = sorted(v for v, mm in newer if mm is not None and mm[0] > driver[0])
    minor = sorted(v for v, mm in newer if mm is not None and mm[0] == driver[0]
                   and mm[1] > driver[1])  # fmt: skip
    same_host = any(me in builds[v] for v in major or minor)
    if major:
        yield Verdict(
            id="diagnose.cuda-driver-too-old",
            severity="warning",
            cause="config.version-mismatch",
            message=f"NCCL or PyTorch built for CUDA {', '.join(major)} beside a driver that "
            f"supports CUDA up to {rec.cuda_version} (driver {rec.driver_version})",
            explanation=(
                "nvidia-smi's 'CUDA Version' is the newest CUDA the installed driver supports. "
                "A library built for a newer major CUDA release cannot run on it ('CUDA driver "
                "version is insufficient for CUDA runtime version', cudaErrorInsufficientDriver) "
                "unless the CUDA forward-compatibility package is installed (data-centre GPUs "
                "only). "
                + ("" if same_host else "The two lines may come from different hosts or "
                   "containers; compare them on one host.")
            ),
            fix="Upgrade the driver to one that supports this CUDA release (the CUDA release "
            "notes list the minimum), or use builds for the CUDA the driver supports (a "
            "container or wheel for that CUDA major).",
            refs=("S21", _COMPAT),
            confidence=0.6 if same_host else 0.45,
        )
    elif minor:
        yield Verdict(
            id="diagnose.cuda-driver-too-old",
            severity="info",
            cause="config.version-mismatch",
            message=f"NCCL or PyTorch built for CUDA {', '.join(minor)} beside a driver that "
            f"supports CUDA up to {rec.cuda_version}: runs through minor version compatibility",
            explanation=(
                "Within one CUDA major release an application built for a newer minor release "
                "runs on an older driver of the same major (minor version compatibility, CUDA "
                "11.1 and later), except for PTX of the newer release, which the older driver "
                "cannot JIT-compile (cudaErrorUnsupportedPtxVersion), and APIs the driver lacks."
            ),
            fix="Only if a PTX or 'not supported' error appears: upgrade the driver.",
            refs=(_COMPAT,),
            confidence=0.3,
        )


def _drivers_differ(rec: SmiDriver, ev: Evidence) -> Iterator[Verdict]:
    if rec.driver_version is None:
        return
    idx = _index(ev)
    key = ("smi-drivers", 0)
    memo = idx.memo.get(key)
    if memo is None:
        seen: dict[str, list[str]] = {}
        flagged: int | None = None
        for item in ev.items:
            other = item.record
            if isinstance(other, SmiDriver) and other.driver_version:
                hosts = seen.setdefault(other.driver_version, [])
                if item.subject not in hosts:
                    hosts.append(item.subject)
                if flagged is None and len(seen) > 1:
                    flagged = id(other)
        memo = (flagged, seen)
        idx.memo[key] = memo
    assert isinstance(memo, tuple)
    flagged_id, seen_versions = memo
    if flagged_id != id(rec):
        return
    shown = "; ".join(f"{v} on {', '.join(h[:3])}{' ...' if len(h) > 3 else ''}"
                      for v, h in seen_versions.items())  # fmt: skip
    yield Verdict(
        id="diagnose.gpu-driver-versions-differ",
        severity="warning",
        cause="config.version-mismatch",
        message=f"the captures show different GPU driver releases: {shown}",
        explanation=(
            "Nodes of one job should run one driver release: CUDA, NCCL and the NVLink and "
            "GPUDirect stacks (nvidia-peermem, Fabric Manager, whose version must equal the "
            "driver's) are validated per release, and a node left behind by a rolling upgrade "
            "is a classic source of errors on that node only. Two captures of one host before "
            "and after an upgrade read the same."
        ),
        fix="Bring every node to one driver release (and reboot so that the kernel module "
        "matches the user-space libraries); nvidia-smi on each node confirms it.",
        refs=("S21", _SMI, _FM),
        confidence=0.4,
    )


@verdict("torch_env")
def _torch_env(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, TorchEnv):
        return
    yield from _torch_driver(rec)
    yield from _torch_without_cuda(rec)
    yield from _nccl_wheels(rec)


def _torch_driver(rec: TorchEnv) -> Iterator[Verdict]:
    os_name = (rec.os or "").lower()
    if any(w in os_name for w in ("windows", "mac", "darwin")):
        return  # Windows and macOS number their drivers differently: MIN_DRIVER is Linux's
    need = min_driver(rec.cuda_build)
    have = driver_tuple(rec.driver_version)
    if need is None or have is None or have >= need or have[0] < _FIRST_DRIVER:
        return
    unavailable = rec.cuda_available is False
    yield Verdict(
        id="diagnose.torch-driver-too-old",
        severity="warning",
        cause="config.version-mismatch",
        message=f"PyTorch {rec.torch_version or ''} was built for CUDA {rec.cuda_build}, which "
        f"needs a driver >= {_dotted(need)}; this host has {rec.driver_version}"
        + (" (and CUDA is not available)" if unavailable else ""),
        explanation=(
            "A CUDA application runs on a driver at least as new as the minimum of its CUDA "
            "release: from CUDA 11 on one minimum per major release (13.x >= 580, 12.x >= "
            "525.60.13, 11.x >= 450.80.02, minor version compatibility), before CUDA 11 the "
            "driver the toolkit shipped with. Below it CUDA does not initialise: PyTorch "
            "reports CUDA as unavailable ('The NVIDIA driver on your system is too old') and "
            "every GPU job, NCCL included, fails on this host. The CUDA forward-compatibility "
            "package (data-centre GPUs) is the one way around it."
        ),
        fix=f"Upgrade the driver to >= {_dotted(need)} (or a newer branch), or install a "
        f"PyTorch build for the CUDA this driver supports (nvidia-smi's 'CUDA Version').",
        refs=("S21", _MINOR, _NOTES),
        confidence=0.75 if unavailable else 0.6,
    )


def _torch_without_cuda(rec: TorchEnv) -> Iterator[Verdict]:
    if rec.cuda_build or rec.rocm_build or rec.cuda_available is not False:
        return
    if not rec.gpus and not rec.driver_version:
        return
    cpu = "+cpu" in (rec.torch_version or "")
    yield Verdict(
        id="diagnose.torch-without-cuda",
        severity="warning",
        cause="config.version-mismatch",
        message=f"PyTorch {rec.torch_version or ''} has no CUDA build"
        + (f" on a host with {', '.join(rec.gpus[:2])}" if rec.gpus else
           f" on a host with NVIDIA driver {rec.driver_version}")
        + ": CUDA is not available to it",
        explanation=(
            "The report's 'CUDA used to build PyTorch' is empty"
            + (" and the version carries '+cpu'" if cpu else "")
            + ": this is a CPU-only PyTorch wheel, so no GPU, CUDA or NCCL is usable "
            "whatever the driver (pip's default index serves CPU-only wheels on Windows and "
            "macOS; a requirements file or another package can pull one in)."
        ),
        fix="Install a CUDA build of PyTorch for the CUDA the driver supports (the install "
        "selector's --index-url for cuNNN) and check torch.version.cuda afterwards.",
        refs=("S21", "https://pytorch.org/get-started/locally/"),
        confidence=0.6,
    )


def _cuda_major_of(rec: TorchEnv) -> int | None:
    mm = cuda_major_minor(rec.cuda_build)
    if mm is not None:
        return mm[0]
    version = rec.torch_version or ""
    at = version.find("+cu")
    digits = version[at + 3 : at + 6] if at >= 0 else ""
    return int(digits[:2]) if len(digits) == 3 and digits.isdigit() else None


def _nccl_wheels(rec: TorchEnv) -> Iterator[Verdict]:
    majors: dict[int, str] = {}
    for wheel in rec.nccl_wheels:
        at = wheel.find("nccl-cu")
        digits = wheel[at + 7 : at + 9] if at >= 0 else ""
        if digits.isdigit():
            majors.setdefault(int(digits), wheel)
    torch_major = _cuda_major_of(rec)
    odd = {m: w for m, w in majors.items() if torch_major is not None and m != torch_major}
    if not odd and len(majors) < 2:
        return
    shown = "; ".join(majors.values())
    yield Verdict(
        id="diagnose.nccl-wheel-cuda-differs",
        severity="warning",
        cause="config.version-mismatch",
        message=f"NCCL wheels for CUDA {', '.join(str(m) for m in sorted(majors))} ({shown}) "
        f"beside PyTorch built for CUDA {rec.cuda_build or torch_major}",
        explanation=(
            "PyTorch's CUDA wheels load the NCCL of the nvidia-nccl-cuNN package for their own "
            "CUDA major release; a second NCCL wheel for another major (left by an older "
            "install or pulled in by another package) can be the libnccl the process loads, "
            "and an NCCL built for another CUDA major fails in odd ways (invalid arguments, "
            "'Invalid config blocking attribute value', unhandled CUDA errors)."
        ),
        fix="pip uninstall the NCCL wheel that does not match PyTorch's CUDA (pip list | grep "
        "nccl), or reinstall PyTorch; NCCL_DEBUG=INFO's 'NCCL version X+cudaY' line shows "
        "which one is loaded.",
        refs=("S21", "https://github.com/vllm-project/vllm/issues/1726"),
        confidence=0.5,
    )
