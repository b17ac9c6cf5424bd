"""Which RDMA devices a host has and whether their ports are up: ``ibdev2netdev``, ``rdma link``
and ``ibv_devices``.

Kinds:

* ``ibdev2netdev`` (MLNX_OFED ``ofed-scripts``): one line per RDMA port with a net device,
  ``mlx5_0 port 1 ==> ens1f0np0 (Up)``; with ``-v`` the PCI address, the device id and part
  number, the VPD description, the firmware and the IB port state come first: ``0000:02:00.0
  mlx5_0 (MT4115 - MT1523X04353) CX456A - ConnectX-4 QSFP fw 12.23.1020 port 1 (ACTIVE) ==>
  enp2s0f0 (Up)``. The last parenthesis is the net device's carrier (``/sys/class/net/IF/carrier``:
  ``Up``, ``Down``, ``NA``). Record: :class:`Ibdev2netdev`.
* ``rdma-link`` (iproute2 ``rdma link [show]``): ``link mlx5_0/1 state ACTIVE physical_state
  LINK_UP netdev ens1f0np0`` (InfiniBand ports add ``subnet_prefix``, ``lid``, ``sm_lid``,
  ``lmc``); iproute2 before 5.x printed ``0/1: mlx5_0/1: state ... `` (an index prefix and a
  colon after the port); ``rdma -j link`` prints a JSON list with the same keys (``ifname``,
  ``port``, ``state``, ``physical_state``, ``netdev``, ``netdev_index``). Port states are the IB
  names (``DOWN``, ``INIT``, ``ARMED``, ``ACTIVE``, ``ACTIVE_DEFER``), physical states ``SLEEP``,
  ``POLLING``, ``DISABLED``, ``LINK_UP``, ``LINK_ERROR_RECOVER``... (``NOP`` where the driver
  reports none, e.g. iWARP). Record: :class:`RdmaLink`.
* ``ibv-devices`` (rdma-core ``ibv_devices``): a ``device node GUID`` header, a dashed line and
  one ``name guid`` row per device the verbs library can open. A header with no row means the
  process sees no usable RDMA device; ``libibverbs: Warning: ...`` lines printed before it say
  why (no user-space provider for a kernel device, a provider that fails to load). Record:
  :class:`IbvDevicesList` (one per listing).

Shell prompts and command lines are skipped; any other line is a warning.

Sources: ofed-scripts ``ibdev2netdev`` (the ``echo`` lines of the script), iproute2
``rdma/link.c`` (https://github.com/iproute2/iproute2), rdma-core
``libibverbs/examples/device_list.c`` (https://github.com/linux-rdma/rdma-core) and the captures
under ``tests/fixtures/evidence/{ibdev2netdev,rdma-link,ibv-devices}/``. Seed refs: S15, S20.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from aifabric.evidence.base import ParseResult, Record, json_array
from aifabric.evidence.registry import register

__all__ = [
    "Ibdev2netdev",
    "IbvDevice",
    "IbvDevicesList",
    "RdmaDev",
    "RdmaLink",
    "parse_ibdev2netdev",
    "parse_ibv_devices",
    "parse_rdma_link",
]

_PROMPT_RE = re.compile(r"^(?:\[[^\]]*\][$#]|[\w.@:/~-]*[$#]|\+)(?:\s|$)")


def _is_noise(stripped: str) -> bool:
    """Prompts, code fences and separator lines."""
    return (
        _PROMPT_RE.match(stripped) is not None
        or stripped.startswith("```")
        or set(stripped) <= {"-", "=", " "}
    )


# --------------------------------------------------------------------------------------------
# ibdev2netdev


@dataclass(slots=True, kw_only=True)
class Ibdev2netdev(Record):
    """One ``ibdev2netdev`` line: an RDMA port and its net device."""

    record_type: ClassVar[str] = "ibdev2netdev"

    device: str
    port: int
    netdev: str
    netdev_state: str
    """The net device's carrier as printed: ``Up``, ``Down`` or ``NA``."""
    pci: str | None = None
    """``-v`` only, from here on."""
    device_id: str | None = None
    """``MT4115``."""
    part_number: str | None = None
    description: str | None = None
    """VPD description, e.g. ``CX456A - ConnectX-4 QSFP``."""
    firmware: str | None = None
    port_state: str | None = None
    """IB port state (``ACTIVE``, ``DOWN``, ``INIT``)."""


_IBDEV_RE = re.compile(
    r"^(?P<dev>\S+) port (?P<port>\d+) ==> (?P<netdev>\S+) \((?P<state>[^)]*)\)(?:\s.*)?$"
)
# Linear on any line (the lazy form was exponential on a long run of blanks): ``devid`` is read
# word by word up to the first " - " (the rest of the line reads the same after any later one, so
# the first is the only one that can match), ``part`` up to its last non-blank before ")",
# ``desc`` word by word up to the "fw" that the rest matches, and the port states hold no
# parentheses (ACTIVE, DOWN, Up...), so a failed "fw ... port N (" does not scan to a far ")".
_IBDEV_V_RE = re.compile(
    r"^(?:(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+)?(?P<dev>\S+)\s+"
    r"\((?P<devid>(?:[^)\s]++|\s++(?!-\s))*+)\s+-\s++(?P<part>(?:[^)]*[^)\s])?)\s*\)"
    r"\s*+(?P<desc>(?:\s*+\S)*?)\s*fw\s+(?P<fw>\S+)\s+"
    r"port\s+(?P<port>\d+)\s+\((?P<pstate>[^()]*)\)\s+==>\s+(?P<netdev>\S+)\s+"
    r"\((?P<state>[^()]*)\)(?:\s.*)?$"
)


_LOG_PREFIX_RE = re.compile(r"^\[[^\]\n]{8,160}\][ \t]+(?:ibdev2netdev:[ \t]+)?")
"""A program's log prefix before an echoed ``ibdev2netdev`` line (``[2025-03-17T07:56:59...
monitor_collect:571295 IBDevice.cc:169 INFO] hns_0 port 1 ==> bond0 (Up)``, 3FS)."""


def _ibdev_line(raw: str) -> str:
    s = raw.strip()
    return _LOG_PREFIX_RE.sub("", s) if s[:1] == "[" else s


def _detect_ibdev2netdev(text: str) -> float:
    head = text[:200_000]
    if " ==> " not in head:
        return 0.0
    for line in head.splitlines()[:400]:
        s = _ibdev_line(line)
        if _IBDEV_RE.match(s) is not None or _IBDEV_V_RE.match(s) is not None:
            return 0.95
    return 0.0


@register(
    "ibdev2netdev",
    summary="ibdev2netdev [-v] (MLNX_OFED: RDMA port → net device and its carrier)",
    detect=_detect_ibdev2netdev,
    refs=("S15", "S20"),
)
def parse_ibdev2netdev(text: str) -> ParseResult:
    """``ibdev2netdev [-v]`` → one :class:`Ibdev2netdev` per line."""
    res = ParseResult("ibdev2netdev")
    for lineno, raw in enumerate(text.splitlines(), 1):
        s = _ibdev_line(raw)
        if not s:
            continue
        m = _IBDEV_RE.match(s)
        v = _IBDEV_V_RE.match(s) if m is None else None
        hit = m or v
        if hit is not None:
            rec = Ibdev2netdev(
                line=lineno,
                device=hit.group("dev"),
                port=int(hit.group("port")),
                netdev=hit.group("netdev"),
                netdev_state=hit.group("state").strip(),
            )
            if v is not None:  # the -v form: PCI address, board and port state too
                rec.pci = v.group("pci")
                rec.device_id = v.group("devid").strip() or None
                rec.part_number = v.group("part").strip() or None
                rec.description = v.group("desc").strip() or None
                rec.firmware = v.group("fw")
                rec.port_state = v.group("pstate").strip() or None
            res.records.append(rec)
            continue
        if _is_noise(s):
            continue
        res.warn(lineno, "expected 'DEV port N ==> NETDEV (Up|Down)'", raw)
    return res


# --------------------------------------------------------------------------------------------
# rdma link


@dataclass(slots=True, kw_only=True)
class RdmaLink(Record):
    """One port of ``rdma link``."""

    record_type: ClassVar[str] = "rdma_link"

    device: str
    port: int
    state: str | None = None
    physical_state: str | None = None
    netdev: str | None = None
    netdev_index: int | None = None
    subnet_prefix: str | None = None
    lid: int | None = None
    sm_lid: int | None = None
    lmc: int | None = None
    caps: list[str] = field(default_factory=list)

    @property
    def is_up(self) -> bool:
        return self.state == "ACTIVE" and self.physical_state in ("LINK_UP", "NOP", None)


@dataclass(slots=True, kw_only=True)
class RdmaDev(Record):
    """One device of ``rdma dev [show]`` (iproute2 ``rdma/dev.c``, ``dev_parse_cb``):
    ``IDX: NAME: node_type ca [protocol roce] fw X node_guid G sys_image_guid G [type T]
    [parent P]``, then with ``-d`` ``adaptive-moderation on`` and ``caps: <...>``."""

    record_type: ClassVar[str] = "rdma_dev"

    index: int
    device: str
    node_type: str | None = None
    protocol: str | None = None
    """``ib``, ``roce``, ``iw`` (iproute2 5.18+)."""
    firmware: str | None = None
    node_guid: str | None = None
    sys_image_guid: str | None = None
    dev_type: str | None = None
    """``smi`` for a sub-device, with ``parent``."""
    parent: str | None = None


_DEV_LINE_RE = re.compile(r"^(?P<idx>\d+):\s+(?P<dev>[^\s:]+):\s+(?P<rest>node_type\s.*)$")
_DEV_KEYS = {
    "node_type": "node_type", "protocol": "protocol", "fw": "firmware",
    "node_guid": "node_guid", "sys_image_guid": "sys_image_guid", "type": "dev_type",
    "parent": "parent",
}  # fmt: skip


def _dev_record(lineno: int, m: re.Match[str]) -> RdmaDev:
    rec = RdmaDev(line=lineno, index=int(m.group("idx")), device=m.group("dev"))
    tokens = m.group("rest").split()
    for key, value in zip(tokens[::2], tokens[1::2], strict=False):
        attr = _DEV_KEYS.get(key)
        if attr is not None:
            setattr(rec, attr, value)
    return rec


_LINK_RE = re.compile(
    r"^(?:\d+/\d+:\s+)?(?:link\s+)?(?P<dev>[^\s/]+)/(?P<port>\d+):?(?:\s+(?P<rest>.*))?$"
)
_LINK_KEYS = frozenset(
    {"subnet_prefix", "lid", "sm_lid", "lmc", "state", "physical_state", "netdev", "netdev_index"}
)


def _set_link(rec: RdmaLink, key: str, value: Any) -> None:
    if value is None:
        return
    if key in ("lid", "sm_lid", "lmc", "netdev_index"):
        try:
            setattr(rec, key, int(value))
        except (TypeError, ValueError):
            return
    elif key in ("state", "physical_state", "netdev", "subnet_prefix"):
        setattr(rec, key, str(value))


def _link_json(text: str, res: ParseResult) -> bool:
    data = json_array(text)
    if data is None:
        return False
    for i, obj in enumerate(data):
        if not isinstance(obj, dict) or "ifname" not in obj or "port" not in obj:
            res.warn(None, f"JSON entry {i} is not an rdma link object", str(obj))
            continue
        try:
            port = int(obj["port"])
        except (TypeError, ValueError):
            res.warn(None, f"JSON entry {i}: port is not a number", str(obj))
            continue
        rec = RdmaLink(line=0, device=str(obj["ifname"]), port=port)
        for key in _LINK_KEYS:
            _set_link(rec, key, obj.get(key))
        caps = obj.get("caps")
        if isinstance(caps, list):
            rec.caps = [str(c) for c in caps]
        res.records.append(rec)
    return True


_DEV_DETECT_RE = re.compile(r"(?m)^[ \t]*+\d++:[ \t]++[^\s:]++:[ \t]++node_type[ \t]++\w")


def _detect_rdma_link(text: str) -> float:
    head = text[:200_000]
    if "physical_state" in head and (
        " state " in head or '"state"' in head or "\tstate " in head
    ):
        return 0.95
    if "node_type" in head and _DEV_DETECT_RE.search(head) is not None:
        return 0.9  # rdma dev
    return 0.0


def _link_tokens(rec: RdmaLink, tokens: list[str]) -> None:
    """``key value`` pairs of a link line (``caps: <...>`` to its end) into ``rec``."""
    i = 0
    while i < len(tokens):
        tok = tokens[i].rstrip(":")
        if tok in _LINK_KEYS and i + 1 < len(tokens):
            _set_link(rec, tok, tokens[i + 1])
            i += 2
            continue
        if tok == "caps" and i + 1 < len(tokens):
            rec.caps = [c for c in re.split(r"[<>,\s]+", " ".join(tokens[i + 1 :])) if c]
            break
        i += 1


@register(
    "rdma-link",
    summary="rdma [-j] link [show] (iproute2: RDMA port state and physical state), rdma dev",
    detect=_detect_rdma_link,
    refs=("S15", "S20"),
)
def parse_rdma_link(text: str) -> ParseResult:
    """``rdma link`` (text, old ``N/M:`` form, or ``-j`` JSON) → one :class:`RdmaLink` per port."""
    res = ParseResult("rdma-link")
    if text.lstrip()[:1] in ("[", "{") and _link_json(text.strip(), res):
        return res
    for lineno, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        if not s:
            continue
        m = _LINK_RE.match(s)
        if m is not None and (s.startswith("link ") or re.match(r"^\d+/\d+:", s)):
            rec = RdmaLink(line=lineno, device=m.group("dev"), port=int(m.group("port")))
            _link_tokens(rec, (m.group("rest") or "").split())
            res.records.append(rec)
            continue
        last = res.records[-1] if res.records else None
        if isinstance(last, RdmaLink) and raw[:1] in (" ", "\t") and s.split()[0] in _LINK_KEYS:
            _link_tokens(last, s.split())  # a line a mail client or the patch wrapped at a tab
            continue
        d = _DEV_LINE_RE.match(s)
        if d is not None:
            res.records.append(_dev_record(lineno, d))
            continue
        if s.startswith(("caps: <", "adaptive-moderation ")):
            continue  # rdma dev -d: the device's details on its second line
        if _is_noise(s) or s.startswith("rdma "):
            continue
        res.warn(lineno, "expected 'link DEV/PORT state ... physical_state ...'", raw)
    return res


# --------------------------------------------------------------------------------------------
# ibv_devices


@dataclass(slots=True)
class IbvDevice:
    name: str
    node_guid: str
    line: int


@dataclass(slots=True, kw_only=True)
class IbvDevicesList(Record):
    """One ``ibv_devices`` listing."""

    record_type: ClassVar[str] = "ibv_devices"

    devices: list[IbvDevice] = field(default_factory=list)
    tool: str = "ibv_devices"
    """The command that printed it (``ibv_devinfo`` prints "No IB devices found")."""
    verbs_warnings: list[str] = field(default_factory=list)
    """``libibverbs: Warning: ...`` lines printed with the listing."""
    error: str | None = None
    """``Failed to get IB devices list: <reason>`` when the library itself failed."""
    header_seen: bool = False


_IBV_HEADER_RE = re.compile(r"^device\s+node GUID$")
_IBV_DASH_RE = re.compile(r"^-{6}\s+-{16}$")
_IBV_ROW_RE = re.compile(
    r"^(?P<name>\S+)\s+(?P<guid>[0-9a-fA-F]{16}|(?:[0-9a-fA-F]{4}:){3}[0-9a-fA-F]{4})$"
)
_VERBS_WARN_RE = re.compile(r"^(?:libibverbs|librdmacm):\s")
_IBV_FAIL_RE = re.compile(r"^Failed to get IB devices list(?::\s*(?P<why>.*))?$")


def _detect_ibv_devices(text: str) -> float:
    head = text[:200_000]
    for line in head.splitlines()[:2000]:
        if _IBV_HEADER_RE.match(line.strip()) is not None:
            return 0.95
    if "Failed to get IB devices list" in head:
        return 0.95
    return 0.0


@register(
    "ibv-devices",
    summary="ibv_devices (rdma-core: the RDMA devices the verbs library can open)",
    detect=_detect_ibv_devices,
    refs=("S20",),
)
def parse_ibv_devices(text: str) -> ParseResult:
    """``ibv_devices`` → one :class:`IbvDevicesList` per listing (header + rows)."""
    res = ParseResult("ibv-devices")
    cur: IbvDevicesList | None = None
    pending: list[str] = []
    pending_line: int | None = None

    def start(lineno: int) -> IbvDevicesList:
        nonlocal pending, pending_line
        rec = IbvDevicesList(line=pending_line or lineno, verbs_warnings=pending)
        pending, pending_line = [], None
        res.records.append(rec)
        return rec

    for lineno, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        if not s:
            continue
        if _VERBS_WARN_RE.match(s) is not None:
            if cur is not None and not cur.header_seen:
                cur.verbs_warnings.append(s)
            else:
                pending.append(s)
                pending_line = pending_line or lineno
            continue
        if _IBV_HEADER_RE.match(s) is not None:
            cur = start(lineno)
            cur.header_seen = True
            cur.end_line = lineno
            continue
        fail = _IBV_FAIL_RE.match(s)
        if fail is not None:
            cur = start(lineno)
            cur.error = (fail.group("why") or "").strip() or s
            cur.end_line = lineno
            cur = None
            continue
        if _IBV_DASH_RE.match(s) is not None and cur is not None:
            cur.end_line = lineno
            continue
        row = _IBV_ROW_RE.match(s)
        if row is not None and cur is not None and cur.header_seen:
            cur.devices.append(IbvDevice(row.group("name"), row.group("guid").lower(), lineno))
            cur.end_line = lineno
            continue
        if _PROMPT_RE.match(s) is not None or s.startswith("```"):
            cur = None
            continue
        res.warn(lineno, "expected the ibv_devices header, a 'device GUID' row or a verbs warning",
                 raw)  # fmt: skip
    if pending:
        rec = start(pending_line or 1)
        rec.end_line = None
        res.warn(rec.line, "libibverbs warnings without an ibv_devices listing (truncated?)")
    return res
