"""What the input says about a differential's candidates: settings, GID tables, link layers.

The predicates of :mod:`aifabric.checks.diagnose.differential` read the same input as the
finding they re-rank. Two kinds, each returning a sentence that quotes the record (or ``None``):

* **ruling out** (``ruled_out_by``): the state the cause needs is absent (every locked-memory
  limit unlimited, every RDMA port active, only InfiniBand ports so no RoCE GID to get wrong);
* **supporting** (``supported_by``): the input shows the state the cause needs, though no
  finding names it on its own (a RoCE GID index set to a link-local slot, two hosts whose GID
  tables disagree, a transport or provider chosen by hand beside a provider that failed).

A setting counts wherever the input shows it: an environment file or ``export`` line, NCCL's
``set by environment to`` line, a ``NAME=value`` / ``-x NAME=value`` / ``--mca name value``
word on a pasted command (users paste the ``mpirun`` line above the error), or a ``NAME=value``
a log line echoes, unless the words before it give advice (``please, set FI_PROVIDER=tcp``).

Facts used (each cited where the predicate states it):

* a RoCE port's GID slots 0 and 1 hold the port's default GID, the link-local ``fe80::`` address
  derived from the MAC, as RoCE v1 and RoCE v2; the routable IPv4-mapped GIDs come after them
  (Linux ``drivers/infiniband/core/roce_gid_mgmt.c``, ``default GID``; the ``show_gids`` tables
  of MLNX_OFED print the same layout). A link-local GID is not routed, so a connection to a peer
  on another subnet, or a peer whose table puts a different kind of GID at the same index, sends
  its packets nowhere: the requester's retry counter runs out (``IBV_WC_RETRY_EXC_ERR``);
* a GID index only matters on RoCE: an InfiniBand port addresses peers by LID inside a subnet,
  and NCCL's ``NCCL_IB_GID_INDEX`` documentation says so
  (https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-ib-gid-index).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aifabric.checks.diagnose.verdict_support import several_nodes
from aifabric.checks.diagnose.verdicts_host_state import PEER_MEMORY_MODULES
from aifabric.evidence.host_limits import ResourceLimit
from aifabric.evidence.infiniband import GidEntry, IbstatPort, IbvGid, IbvPort
from aifabric.evidence.kernel_modules import KernelModule
from aifabric.evidence.nccl_env import EnvVar
from aifabric.evidence.nccl_log import GdrStatus, NcclEnv, NetDevices
from aifabric.evidence.rdma_tools import IbvDevicesList, RdmaLink
from aifabric.evidence.sysfs_rdma import SysfsGid, SysfsRdmaDevices, SysfsRdmaPort

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence, Item

__all__ = ["PREDICATES", "SUPPORTS", "InputView", "Predicate", "Setting", "settings"]

Predicate = Callable[["InputView"], str | None]
"""Reads the input; returns why (quoting the record), or None."""


class InputView:
    """The input as the predicates read it, each reading done once per diagnosis: where a
    record sits, the settings, the GID tables, the link layers (a 1,000-host bundle has hundreds
    of thousands of records and lines)."""

    def __init__(self, ev: Evidence) -> None:
        self.ev = ev
        self._at: dict[int, Item] | None = None
        self._settings: list[Setting] | None = None
        self._tables: list[list[tuple[int, str, str]]] | None = None
        self._layers: set[str] | None = None

    def where(self, record: object) -> str:
        """`` (file line N)`` of ``record``, or ``""``."""
        if self._at is None:
            self._at = {}
            for item in self.ev.items:
                if item.file is not None:
                    self._at.setdefault(id(item.record), item)
        found = self._at.get(id(record))
        if found is None or found.file is None:
            return ""
        line = getattr(record, "line", None)
        return f" ({found.file.path}{f' line {line}' if line else ''})"

    def records(self, kind: type[object] | tuple[type[object], ...]) -> list[object]:
        return [item.record for item in self.ev.items if isinstance(item.record, kind)]

    @property
    def settings(self) -> list[Setting]:
        if self._settings is None:
            self._settings = _settings(self)
        return self._settings

    @property
    def gid_tables(self) -> list[list[tuple[int, str, str]]]:
        if self._tables is None:
            self._tables = _gid_tables(self)
        return self._tables

    @property
    def link_layers(self) -> set[str]:
        if self._layers is None:
            self._layers = _link_layers(self)
        return self._layers


# -- settings -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting the input shows: ``name`` as written (MCA names without their prefix)."""

    name: str
    value: str
    where: str
    """`` (file line N)`` for quoting."""


_PREFIXES = ("NCCL_", "UCX_", "FI_", "I_MPI_", "CCL_", "OMPI_MCA_", "NVSHMEM_", "MPIR_CVAR_")
_ASSIGN_RE = re.compile(
    r"(?<![\w$])((?:NCCL|UCX|FI|I_MPI|CCL|OMPI_MCA|NVSHMEM|MPIR_CVAR)_[A-Za-z0-9_]+)"
    r"=([\"']?)([^\s\"';]*)\2"
)
_MCA_RE = re.compile(r"(?:^|\s)--?mca\s+([A-Za-z0-9_]+)\s+([\"']?)([^\s\"']+)\2")
_COMMAND_RE = re.compile(
    r"^\s*(?:\[[^\]]{1,60}\][$#]\s*|[^$#%>\s]{1,60}(?:\s[^$#%>\s]{1,40})?[$#%>]\s+|[$#%>]\s*)?"
    r"(?:sudo\s+)?(?:(?:export|env|mpirun|"
    r"mpiexec(?:\.hydra)?|srun|torchrun|python\d*(?:\.\d+)?|deepspeed|horovodrun|docker|podman|"
    r"singularity|apptainer|oshrun|prterun|ucx_perftest)(?:\s|$)|[A-Z][A-Z0-9_]*=)"
    r"|\s-(?:x|genv|e)\s+[A-Z]|\s--?mca\s"
)
"""A line that sets something: a shell or launcher command (after an optional prompt), not a
program's hint such as libfabric's ``To use tcp, please, set FI_PROVIDER=tcp``."""


_ADVICE_RE = re.compile(
    r"\b(?:set|use|try|please|consider|specify|specifying|recommend\w*|should|e\.g\.|for example|"
    r"instead|unset)\b[^=]{0,40}$",
    re.IGNORECASE,
)
"""Words before an assignment that make it advice, not the job's setting (libfabric's ``To use
tcp, please, set FI_PROVIDER=tcp``, NCCL's ``set NCCL_P2P_LEVEL=...``)."""


def _scan_lines(v: InputView) -> Iterator[Setting]:
    """Assignments on command lines, and on log lines that echo the job's settings (``init:
    ... UCX_TLS=tcp``) unless the words before them give advice."""
    for f in v.ev.files:
        for n, line in f.own_lines():
            if "=" not in line and "mca" not in line:
                continue
            command = _COMMAND_RE.search(line) is not None
            for m in _ASSIGN_RE.finditer(line):
                # the advice words stand just before the assignment: a bounded window keeps a
                # long line with many assignments linear
                if command or not _ADVICE_RE.search(line, max(0, m.start() - 80), m.start()):
                    yield Setting(m[1], m[3], f" ({f.path} line {n})")
            if command:
                for m in _MCA_RE.finditer(line):
                    yield Setting(m[1], m[3], f" ({f.path} line {n})")


def settings(ev: Evidence) -> list[Setting]:
    """Every setting the input shows, in input order (records first, then command lines)."""
    return InputView(ev).settings


def _settings(v: InputView) -> list[Setting]:
    out: list[Setting] = []
    for item in v.ev.items:
        rec = item.record
        if isinstance(rec, EnvVar) and not rec.dynamic and rec.name.startswith(_PREFIXES):
            out.append(Setting(rec.name, rec.value, v.where(rec)))
        elif isinstance(rec, NcclEnv):
            value = rec.value.split()[0] if rec.value else ""
            out.append(Setting(rec.name, value, v.where(rec)))
    out.extend(_scan_lines(v))
    return out


# -- link layer and GIDs ------------------------------------------------------------------------


def _link_layers(v: InputView) -> set[str]:
    """``ib`` / ``roce`` for every port whose link layer the input shows."""
    out: set[str] = set()
    for rec in v.records((IbvPort, IbstatPort, SysfsRdmaPort, NetDevices)):
        if isinstance(rec, NetDevices):
            layers = [d.link_layer or "" for d in rec.devices]
        else:
            layers = [str(getattr(rec, "link_layer", None) or "")]
        for layer in layers:
            low = layer.lower()
            if low in ("infiniband", "ib"):
                out.add("ib")
            elif low in ("ethernet", "roce"):
                out.add("roce")
    if v.records(GidEntry):  # show_gids is a RoCE tool
        out.add("roce")
    return out


_GID_LINE_RE = re.compile(r"GID\[\s*(\d+)\]:\s+([0-9a-fA-F:]{15,39})\b")


def _gid_kind(gid: str) -> str:
    """``link-local``, ``ipv4`` (IPv4-mapped), ``ipv6`` or ``zero``."""
    try:
        addr = ipaddress.IPv6Address(gid)
    except ValueError:
        try:
            addr = ipaddress.IPv6Address(":".join(gid.split(":")[:8]))
        except ValueError:
            return "unknown"
    if addr.is_link_local:
        return "link-local"
    if addr.ipv4_mapped is not None:
        return "ipv4"
    return "zero" if int(addr) == 0 else "ipv6"


def _gid_tables(v: InputView) -> list[list[tuple[int, str, str]]]:
    """GID tables in input order, as (index, gid, where) lists: a new table starts where the
    index does not grow (a second host's ``ibv_devinfo -v`` or ``show_gids``)."""
    rows: list[tuple[int, str, str]] = []
    for item in v.ev.items:
        rec = item.record
        if isinstance(rec, (IbvGid, GidEntry, SysfsGid)):
            rows.append((rec.index, rec.gid, v.where(rec)))
    if not rows:  # GID lines pasted without the rest of ibv_devinfo -v
        for f in v.ev.files:
            for n, line in f.own_lines():
                if "GID[" in line and (m := _GID_LINE_RE.search(line)):
                    rows.append((int(m[1]), m[2], f" ({f.path} line {n})"))
    tables: list[list[tuple[int, str, str]]] = []
    for row in rows:
        if not tables or row[0] <= tables[-1][-1][0]:
            tables.append([])
        tables[-1].append(row)
    return tables


_GID_INDEX_NAMES = frozenset({
    "NCCL_IB_GID_INDEX", "UCX_IB_GID_INDEX", "NVSHMEM_IB_GID_INDEX", "btl_openib_gid_index",
    "OMPI_MCA_btl_openib_gid_index", "MC_GID_INDEX",
})  # fmt: skip


def _gid_index_link_local(v: InputView) -> str | None:
    """A GID index setting selects a link-local GID on RoCE (module doc)."""
    chosen = [(s, int(s.value)) for s in v.settings
              if s.name in _GID_INDEX_NAMES and s.value.isdigit()]  # fmt: skip
    if not chosen:
        return None
    s, index = chosen[-1]
    for table in v.gid_tables:
        for i, gid, where in table:
            if i == index and _gid_kind(gid) == "link-local":
                return (f"{s.name}={index}{s.where} selects {gid}{where}, a link-local GID "
                        "that is not routed")  # fmt: skip
    if index <= 1 and "ib" not in v.link_layers:
        return (f"{s.name}={index}{s.where}: slots 0 and 1 of a RoCE port hold its default "
                "link-local GID (fe80::, from the MAC), not the routable address")
    return None


def _gid_tables_differ(v: InputView) -> str | None:
    """Two GID tables of the input hold different kinds of GID at the same index."""
    tables = v.gid_tables
    if len(tables) < 2:
        return None
    first = {i: (gid, where) for i, gid, where in tables[0]}
    for other in tables[1:]:
        for i, gid, where in other:
            if i in first and _gid_kind(first[i][0]) != _gid_kind(gid):
                g0, w0 = first[i]
                return (f"GID index {i} is {g0}{w0} on one port and {gid}{where} on another: "
                        "one index cannot name the same kind of address on both ends")
    return None


def _infiniband_only(v: InputView) -> str | None:
    """Every port whose link layer the input shows is InfiniBand: no RoCE GID to choose."""
    layers = v.link_layers
    if layers != {"ib"}:
        return None
    return "the input shows only InfiniBand ports; a GID index only matters on RoCE"


# -- transport and provider choices ---------------------------------------------------------------

_TRANSPORT_NAMES = frozenset({
    "FI_PROVIDER", "FI_PROVIDER_PATH", "I_MPI_OFI_PROVIDER", "I_MPI_FABRICS", "I_MPI_OFI_LIBRARY",
    "CCL_ATL_TRANSPORT", "UCX_TLS", "UCX_NET_DEVICES", "NCCL_NET", "NCCL_IB_DISABLE",
    "NCCL_NET_PLUGIN", "OMPI_MCA_pml", "OMPI_MCA_btl", "OMPI_MCA_mtl", "pml", "btl", "mtl",
    "mtl_ofi_provider_include", "OMPI_MCA_mtl_ofi_provider_include", "MPIR_CVAR_OFI_USE_PROVIDER",
})  # fmt: skip


def _transport_chosen(v: InputView) -> str | None:
    """The input chooses the transport or provider by hand (FI_PROVIDER, UCX_TLS, --mca pml ...)."""
    chosen = [s for s in v.settings if s.name in _TRANSPORT_NAMES and s.value
              and (s.name != "NCCL_IB_DISABLE" or s.value == "1")]  # fmt: skip
    if not chosen:
        return None
    s = chosen[-1]
    return f"{s.name} {s.value}{s.where} chooses the transport by hand"


def _ucx_tls_without_cuda(v: InputView) -> str | None:
    """UCX_TLS names its transports and none of them carries CUDA memory (``cuda_copy``,
    ``cuda_ipc``, ``gdr_copy``, or a ``cuda`` alias); an exclusion list (``^...``) or ``all``
    keeps them."""
    tls = [s for s in v.settings if s.name == "UCX_TLS" and s.value]
    if not tls:
        return None
    s = tls[-1]
    value = s.value.lower()
    if value.startswith("^") or "all" in value.split(",") or "cuda" in value or "gdr" in value:
        return None
    return f"UCX_TLS={s.value}{s.where} names no CUDA transport (cuda_copy)"


_SIGBUS_RE = re.compile(r"\bSIGBUS\b|\b[Ss]ignal 7\b|\bBus error\b|exit ?code[=: ]+-7\b")


def _died_of_sigbus(v: InputView) -> str | None:
    """A process of the input died of SIGBUS (signal 7, ``exitcode=-7``, "Bus error"): a
    memory-mapped page without backing, in GPU jobs almost always a full /dev/shm
    (https://man7.org/linux/man-pages/man7/signal.7.html)."""
    for f in v.ev.files:
        for n, line in f.own_lines():
            if ("7" in line or "Bus" in line or "SIGBUS" in line) and _SIGBUS_RE.search(line):
                return f"a process died of SIGBUS ({f.path} line {n})"
    return None


# A connect failure that names the peer it tried: c10d's socket.cpp ("failed to connect to any
# network address of (HOST, PORT)", "failed to connect to HOST:PORT"), TCPStore's "failed to
# connect/validate to host HOST:PORT", and the "store/server/endpoint at HOST:PORT" of launchers.
_PEER_NAMED_RE = re.compile(
    r"(?:connect(?:/validate)? to (?:host |any network address of \()?"
    r"|(?:store|server|endpoint|master) at )"
    r"\[?(?P<host>[A-Za-z0-9][\w.\-]{0,252}+)\]?(?::\d{1,5}\b|, \d{1,5}\))"
)
_CONNECT_FAILED_RE = re.compile(
    r"fail|refused|timed out|[Tt]imeout|No route|not known|unreachable|resolution"
)


def _is_address(host: str) -> bool:
    """``host`` is an IP address literal (or localhost, which needs no name service)."""
    if host == "localhost":
        return True
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _peer_named_by_host_name(v: InputView) -> str | None:
    """A failed connection names its peer by host name, not address: the name is resolved on the
    connecting host, by /etc/hosts first then DNS (nsswitch.conf's usual order), and a name
    that resolves to 127.0.1.1 (the Debian /etc/hosts entry for the machine's own name), to an
    address on a management or admin network the other nodes cannot reach, or not at all (a pod
    without a DNS record) fails the same way a wrong interface does
    (https://man7.org/linux/man-pages/man5/hosts.5.html,
    https://www.debian.org/doc/manuals/debian-reference/ch05.en.html#_the_hostname_resolution)."""
    for f in v.ev.files:
        for n, line in f.own_lines():
            if "connect" not in line and " at " not in line:
                continue
            if not _CONNECT_FAILED_RE.search(line):
                continue
            for m in _PEER_NAMED_RE.finditer(line):
                host = m["host"].rstrip(".")
                if not _is_address(host) and not host.isdigit():
                    return (
                        f"the failed connection names its peer by host name {host!r} "
                        f"({f.path} line {n}): what that name resolves to on this host "
                        "(getent ahosts) decides the address tried"
                    )
    return None


_REGISTRATION_RE = re.compile(
    r"\bibv_reg_(?:dmabuf_)?mr\b|\bibv_create_(?:qp|cq|srq)\b|\breg(?:ister)?_mr\b"
    r"|\bregister_from_pd\b|[Rr]egister(?:ing)? (?:the )?memory|[Mm]emory [Rr]egistration"
)
_ENOMEM_RE = re.compile(r"Cannot allocate memory|\bENOMEM\b|\bcode: 12\b|\berrno[ =:]+12\b")


def _enomem_on_registration(v: InputView) -> str | None:
    """ENOMEM from an RDMA registration or queue creation (``ibv_reg_mr``, ``ibv_create_qp``, a
    library's "register memory"), on its line or the next: the pages to pin count against
    RLIMIT_MEMLOCK, and past the limit the kernel's ib_umem_get fails with ENOMEM
    (https://man7.org/linux/man-pages/man3/ibv_reg_mr.3.html "Not enough resources",
    Linux drivers/infiniband/core/umem.c, ``RLIMIT_MEMLOCK``)."""
    for f in v.ev.files:
        prev = ""
        for n, line in f.own_lines():
            cheap = "memory" in line or "ENOMEM" in line or "12" in line
            if cheap and _ENOMEM_RE.search(line) and (
                _REGISTRATION_RE.search(line) or _REGISTRATION_RE.search(prev)
            ):
                return f"ENOMEM from an RDMA memory registration ({f.path} line {n})"
            prev = line
    return None


_FIRST_WORK_RE = re.compile(r"\bSeqNum=1[,)]")
_TIMEOUT_WORDS = ("imeout", "timed out", "atchdog")


def _first_collective_on_one_node(v: InputView) -> str | None:
    """The watchdog timed out the process group's first operation (``SeqNum=1``) and nothing
    in the input shows a second node: the first collective is the first traffic between the
    GPUs, so it never completing says the path never worked (a desync needs collectives that
    ran); inside one node that path is GPU peer-to-peer over PCIe, which PCI ACS or an IOMMU in
    translated mode blocks, and the job hangs exactly there (NCCL troubleshooting, "PCI Access
    Control Services (ACS)": https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/
    troubleshooting.html#pci-access-control-services-acs)."""
    for f in v.ev.files:
        prev = ""
        for n, line in f.own_lines():
            if "SeqNum=1" in line and _FIRST_WORK_RE.search(line) and any(
                w in line or w in prev for w in _TIMEOUT_WORDS
            ):
                if several_nodes(v.ev):
                    return None
                return (
                    f"the first collective (SeqNum=1, {f.path} line {n}) timed out and nothing in "
                    "the input shows a second node: GPU peer-to-peer inside the node never worked"
                )
            prev = line
    return None


_TOPO_FILE_RE = re.compile(r"Loading topology file (?P<path>\S+)")
_TOPO_DEFAULT = "/var/run/nvidia-topologyd/virtualTopology.xml"


def _topology_from_a_file(v: InputView) -> str | None:
    """NCCL read the machine's topology or its rings and trees from a file the environment
    named (``NCCL_TOPO_FILE`` / ``NCCL_GRAPH_FILE set by environment``, or ``Loading topology
    file`` of a path other than the hypervisor's default ``/var/run/nvidia-topologyd/
    virtualTopology.xml``) instead of detecting them: a file written for another machine, or
    for all the GPUs of a VM when the job uses fewer, leaves NCCL with paths that do not exist
    (NCCL ``src/graph/topo.cc`` ncclTopoGetSystem, ``src/graph/search.cc``; the env page:
    https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-topo-file)."""
    for rec in v.records(NcclEnv):
        if isinstance(rec, NcclEnv) and rec.name in ("NCCL_TOPO_FILE", "NCCL_GRAPH_FILE"):
            return f"{rec.name} is set to {rec.value}{v.where(rec)}"
    for f in v.ev.files:
        for n, line in f.own_lines():
            if "Loading topology file" in line:
                m = _TOPO_FILE_RE.search(line)
                if m and m["path"] != _TOPO_DEFAULT:
                    return f"NCCL loaded its topology from {m['path']} ({f.path} line {n})"
    return None


# -- ruling out ----------------------------------------------------------------------------------


def _memlock_unlimited(v: InputView) -> str | None:
    """Every ``ulimit`` locked-memory line of the input reads unlimited."""
    limits = [r for r in v.records(ResourceLimit) if isinstance(r, ResourceLimit)]
    memlock = [r for r in limits if r.option == "l"]
    if not memlock or not all(r.unlimited for r in memlock):
        return None
    return f"ulimit shows max locked memory unlimited{v.where(memlock[0])}"


def _port_state(rec: object) -> tuple[str, bool] | None:
    """(port name, active) of a port-state record."""
    if isinstance(rec, IbvPort):
        return f"{rec.hca_id} port {rec.port}", rec.active
    if isinstance(rec, IbstatPort):
        return f"{rec.ca} port {rec.port}", rec.active  # State Active and LinkUp
    if isinstance(rec, RdmaLink):
        state = (rec.state or "").upper()
        return f"{rec.device}/{rec.port}", state == "ACTIVE"
    return None


def _ports_active(v: InputView) -> str | None:
    """The input shows RDMA port states and every one is active."""
    states = [s for r in v.records((IbvPort, IbstatPort, RdmaLink)) if (s := _port_state(r))]
    if not states or not all(active for _, active in states):
        return None
    names = ", ".join(name for name, _ in states[:3]) + (" ..." if len(states) > 3 else "")
    return f"every RDMA port in the input is active ({names}); the remote side is not shown"


def _rdma_device_visible(v: InputView) -> str | None:
    """The input lists RDMA devices (``ibv_devinfo``, ``ibv_devices``, ``ibstat``, ``rdma
    link``, ``ls /sys/class/infiniband``)."""
    for rec in v.records((IbvPort, IbstatPort, RdmaLink, IbvDevicesList, SysfsRdmaDevices)):
        if isinstance(rec, SysfsRdmaDevices):
            if rec.devices:
                return f"/sys/class/infiniband lists {rec.devices[0]}{v.where(rec)}"
            continue
        if isinstance(rec, IbvDevicesList):
            if rec.devices:
                return f"ibv_devices lists {rec.devices[0].name}{v.where(rec)}"
            continue
        state = _port_state(rec)
        if state is not None:
            return f"the input shows RDMA device {state[0]}{v.where(rec)}"
    return None


def _gdr_enabled(v: InputView) -> str | None:
    """NCCL reports GPUDirect RDMA (or DMA-BUF) enabled, or a peer-memory module is loaded."""
    for rec in v.records(GdrStatus):
        if isinstance(rec, GdrStatus) and rec.enabled:
            what = "DMA-BUF" if rec.feature == "dmabuf" else "GPU Direct RDMA"
            return f"NCCL reports {what} enabled{v.where(rec)}"
    for rec in v.records(KernelModule):
        if isinstance(rec, KernelModule) and rec.name in PEER_MEMORY_MODULES:
            return f"{rec.name} is loaded{v.where(rec)}"
    return None


def _peer_memory_module_absent(v: InputView) -> str | None:
    """A module listing shows the GPU driver (``nvidia``) and neither peer-memory module: the RDMA
    stack cannot register CUDA memory through peer memory (NVIDIA's GPUDirect RDMA guide, the
    nvidia-peermem section). A listing filtered by ``grep`` that keeps the ``nvidia`` row keeps
    ``nvidia_peermem`` too, so its absence there is read as not loaded."""
    mods = [r for r in v.records(KernelModule) if isinstance(r, KernelModule)]
    if any(r.name in PEER_MEMORY_MODULES for r in mods):
        return None
    gpu = next((r for r in mods if r.name == "nvidia"), None)
    if gpu is None:
        return None
    return (
        f"the module listing shows nvidia but neither nvidia_peermem nor nv_peer_mem{v.where(gpu)}"
    )


def _roce_v2_gid_selected(v: InputView) -> str | None:
    """NCCL_IB_GID_INDEX selects a GID that the input shows is RoCE v2 with a routable address."""
    index = None
    for rec in v.records(NcclEnv):
        if isinstance(rec, NcclEnv) and rec.name == "NCCL_IB_GID_INDEX":
            try:
                index = int(rec.value.split()[0].rstrip("."))
            except (ValueError, IndexError):
                return None
    if index is None:
        return None
    gids = [r for r in v.records((GidEntry, IbvGid)) if getattr(r, "index", None) == index]
    if not gids:
        return None
    for g in gids:
        v2 = getattr(g, "roce_version", None) == 2
        gid = str(getattr(g, "gid", "")).lower()
        if not v2 or gid.startswith("fe80") or getattr(g, "link_local", False):
            return None
    return (
        f"NCCL_IB_GID_INDEX={index} and the input's GID table shows index {index} is RoCE v2 "
        f"with a routable address{v.where(gids[0])}"
    )


PREDICATES: dict[str, Predicate] = {
    "memlock-unlimited": _memlock_unlimited,
    "ports-active": _ports_active,
    "rdma-device-visible": _rdma_device_visible,
    "gdr-enabled": _gdr_enabled,
    "roce-v2-gid-selected": _roce_v2_gid_selected,
    "infiniband-only": _infiniband_only,
}
"""``ruled_out_by`` names: each reads the input and says why a cause is ruled out."""

SUPPORTS: dict[str, Predicate] = {
    "gid-index-link-local": _gid_index_link_local,
    "gid-tables-differ": _gid_tables_differ,
    "transport-chosen": _transport_chosen,
    "ucx-tls-without-cuda": _ucx_tls_without_cuda,
    "died-of-sigbus": _died_of_sigbus,
    "peer-named-by-host-name": _peer_named_by_host_name,
    "enomem-on-registration": _enomem_on_registration,
    "first-collective-on-one-node": _first_collective_on_one_node,
    "topology-from-a-file": _topology_from_a_file,
    "peer-memory-module-absent": _peer_memory_module_absent,
}
"""``supported_by`` names: each reads the input and says why a cause is supported."""
