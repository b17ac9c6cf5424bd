"""InfiniBand / RDMA host and fabric inventory: ``ibv_devinfo``, ``ibstat``, ``show_gids``,
``iblinkinfo``.

Kinds and the commands that print them:

* ``ibv-devinfo``: ``ibv_devinfo`` and ``ibv_devinfo -v`` (rdma-core libibverbs). Per HCA an
  ``hca_id:`` line, indented ``key: value`` device attributes, per port a ``port: N`` line and
  indented port attributes; ``-v`` adds capability lists (flag names on their own, deeply
  indented lines), ``active_width``/``active_speed``/``phys_state`` and the GID table
  (``GID[  3]: ::ffff:10.0.0.1, RoCE v2``; older builds print the full 8-group form and no type).
  Tab- or space-separated (pastes often turn tabs into spaces). Records: :class:`IbvDevice`,
  :class:`IbvPort`, :class:`IbvGid`.
* ``ibstat``: ``ibstat`` / ``ibstat mlx5_0`` (infiniband-diags). ``CA 'name'`` blocks with
  ``Port N:`` sub-blocks. Debug lines (``ibwarn: ...``) and shell traces are ignored.
  Records: :class:`IbstatCA`, :class:`IbstatPort` (``Rate`` is the port's aggregate rate in Gb/s).
* ``ibstatus``: the infiniband-diags ``ibstatus`` script (``Infiniband device 'mlx5_0' port 1
  status:`` blocks of sysfs values: ``state: 4: ACTIVE``, ``phys state: 5: LinkUp``, ``rate: 100
  Gb/sec (4X EDR)``). Records: :class:`IbstatPort`, names mapped to ibstat's.
* ``show-gids``: the MLNX_OFED / mlnx-tools ``show_gids`` script: a ``DEV PORT INDEX GID IPv4 VER
  DEV`` table and ``n_gids_found=N``. Tab-separated as printed, or space-aligned after a paste,
  possibly indented or pasted into a source comment (`` * `` / ``//`` prefix, stripped); the DEV
  column is empty for InfiniBand ports. Records: :class:`GidEntry` (one per GID), :class:`GidCount`.
* ``iblinkinfo``: ``iblinkinfo`` (infiniband-diags) in its sectioned form (``Switch: 0x... name:``
  / ``CA: name:`` headers followed by link lines), the ``-l`` one-line form (node GUID and quoted
  name on every line) and filtered pastes (``iblinkinfo | grep Up``: link lines without headers).
  Records: :class:`IbLink`.

Seed refs: S11 (the RDMA ``active_mtu`` <= 4096 must fit the Ethernet MTU), S15
(``NCCL_IB_GID_INDEX`` must name the RoCE v2 GID that carries the IPv4 address), S16/S20 (link
state, width and rate of every port: a link "up" at reduced width or speed is a finding).

Sources for the formats: rdma-core ``libibverbs/examples/devinfo.c`` and ``ibv_devinfo(1)``
(https://github.com/linux-rdma/rdma-core), infiniband-diags ``ibstat(8)`` and ``iblinkinfo(8)``
(https://github.com/linux-rdma/rdma-core/tree/master/infiniband-diags/man), mlnx-tools
``show_gids`` (https://github.com/Mellanox/mlnx-tools/blob/master/sbin/show_gids) and the real
captures under ``tests/fixtures/evidence/{ibv-devinfo,ibstat,show-gids,iblinkinfo}/``.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import ClassVar

from aifabric.evidence.base import UNNAMED, ParseResult, Record, finite_float
from aifabric.evidence.registry import register

__all__ = [
    "GidCount",
    "GidEntry",
    "IbLink",
    "IbstatCA",
    "IbstatPort",
    "IbvDevice",
    "IbvGid",
    "IbvPort",
    "gid_ipv4",
    "parse_iblinkinfo",
    "parse_ibstat",
    "parse_ibstatus",
    "parse_ibv_devinfo",
    "parse_show_gids",
]

# A shell prompt line: "[user@host dir]$ cmd", "root@host:~# cmd", "$ cmd", "# cmd", "+ cmd"
# (set -x trace), "~$ cmd". Prompts end the block being parsed and are never warned about.
_PROMPT_RE = re.compile(r"^\s*(?:\[[^\]]*\][$#]|[\w.@:/~-]*[$#]|\+)(?:\s|$)")


def _is_prompt(line: str) -> bool:
    return _PROMPT_RE.match(line) is not None


def _int(text: str) -> int | None:
    """``"1690"`` / ``"0x00"`` / ``"4096 (5)"`` → int; anything else → None."""
    tok = text.strip().split(" ", 1)[0]
    try:
        return int(tok, 16) if tok[:2].lower() == "0x" else int(tok)
    except ValueError:
        return None


def _float(text: str) -> float | None:
    m = _NUM_RE.match(text.strip())
    return float(m.group(0)) if m else None


_NUM_RE = re.compile(r"[-+]?\d+(?:\.\d+)?")


def gid_ipv4(gid: str) -> str | None:
    """The IPv4 address inside an IPv4-mapped GID (``::ffff:a.b.c.d`` in any spelling), else None.

    >>> gid_ipv4("0000:0000:0000:0000:0000:ffff:0a1f:0402")
    '10.31.4.2'
    >>> gid_ipv4("fe80:0000:0000:0000:0ac0:ebff:fe79:391a") is None
    True
    """
    try:
        addr = ipaddress.IPv6Address(gid.strip())
    except ValueError:
        return None
    mapped = addr.ipv4_mapped
    return str(mapped) if mapped is not None else None


# ============================================================================================
# ibv_devinfo


@dataclass(slots=True, kw_only=True)
class IbvDevice(Record):
    """One ``hca_id:`` block of ``ibv_devinfo``."""

    record_type: ClassVar[str] = "ibv_device"

    hca_id: str
    transport: str | None = None
    fw_ver: str | None = None
    node_guid: str | None = None
    sys_image_guid: str | None = None
    vendor_id: int | None = None
    """PCI vendor id (0x02c9 / 0x15b3 Mellanox/NVIDIA)."""
    vendor_part_id: int | None = None
    """PCI device id in decimal, as printed (4123 ConnectX-6, 4125 ConnectX-6 Dx, 4129 CX-7)."""
    hw_ver: str | None = None
    board_id: str | None = None
    """PSID, e.g. ``MT_0000000838``."""
    phys_port_cnt: int | None = None
    attrs: dict[str, str] = field(default_factory=dict)
    """Every other device attribute as printed (``-v``: max_qp, atomic_cap, ...)."""
    flags: dict[str, list[str]] = field(default_factory=dict)
    """``-v`` capability lists: attribute name → the flag names printed under it."""


@dataclass(slots=True, kw_only=True)
class IbvPort(Record):
    """One ``port: N`` block of ``ibv_devinfo``."""

    record_type: ClassVar[str] = "ibv_port"

    hca_id: str
    port: int
    state: str | None = None
    """``PORT_ACTIVE``, ``PORT_DOWN``, ``PORT_INIT``, ``PORT_ARMED`` (the code in parentheses
    dropped)."""
    active: bool = False
    max_mtu_bytes: int | None = None
    active_mtu_bytes: int | None = None
    """The RDMA path MTU (256..4096 bytes); for RoCE it must fit in the Ethernet MTU (S11)."""
    sm_lid: int | None = None
    port_lid: int | None = None
    port_lmc: int | None = None
    link_layer: str | None = None
    """``InfiniBand`` or ``Ethernet`` (RoCE)."""
    active_width: str | None = None
    """``-v`` only: ``4X``."""
    active_speed: str | None = None
    """``-v`` only, as printed: ``25.0 Gbps``."""
    phys_state: str | None = None
    """``-v`` only: ``LINK_UP``, ``POLLING``, ``DISABLED``."""
    rate_gbps: float | None = None
    """Width x per-lane speed when ``-v`` gives both (4X x 25.0 = 100.0)."""
    gid_tbl_len: int | None = None
    attrs: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class IbvGid(Record):
    """One ``GID[ i]:`` line of ``ibv_devinfo -v``."""

    record_type: ClassVar[str] = "ibv_gid"

    hca_id: str
    port: int
    index: int
    gid: str
    """As printed (full or compressed IPv6 form)."""
    gid_type: str | None = None
    """``RoCE v1`` / ``RoCE v2`` / ``IB`` when the build prints it, else None."""
    roce_version: int | None = None
    ipv4: str | None = None
    """The IPv4 address of an IPv4-mapped GID."""


# Linear on any line: keys and values end at their last non-blank, found by a greedy scan and
# one backtrack (a lazy key or value followed by ``\s*`` rescans a run of blanks at every
# character: quadratic).
_KV_RE = re.compile(r"^(\s*)([A-Za-z_](?:[\w .()\[\]*/-]*[\w.()\[\]*/-])?)\s*:\s*+((?:.*\S)?)\s*$")
_VALUE_CODE_RE = re.compile(r"^(\S(?:.*\S)?)\s*\((\d+)\)$")
_GID_KEY_RE = re.compile(r"^GID\[\s*(\d+)\]$")
_WIDTH_RE = re.compile(r"^(\d+)X")

_PORT_KEYS = frozenset(
    {"state", "max_mtu", "active_mtu", "sm_lid", "port_lid", "port_lmc", "link_layer"}
)
_DEVICE_KEYS = frozenset(
    {"transport", "fw_ver", "node_guid", "sys_image_guid", "vendor_id", "vendor_part_id"}
)


_VERBOSE_DEVICE_KEYS = frozenset({
    "hw_ver", "board_id", "phys_port_cnt", "max_mr_size", "page_size_cap", "max_qp", "max_qp_wr",
    "device_cap_flags", "max_sge", "max_sge_rd", "max_cq", "max_cqe", "max_mr", "max_pd",
    "max_qp_rd_atom", "max_ee_rd_atom", "max_res_rd_atom", "max_qp_init_rd_atom", "atomic_cap",
    "max_mw", "max_mcast_grp", "max_ah", "max_srq", "max_srq_wr", "max_pkeys",
    "local_ca_ack_delay",
})  # fmt: skip
_VERBOSE_PORT_KEYS = frozenset({
    "max_msg_sz", "port_cap_flags", "port_cap_flags2", "max_vl_num", "bad_pkey_cntr",
    "qkey_viol_cntr", "sm_sl", "pkey_tbl_len", "gid_tbl_len", "subnet_timeout",
    "init_type_reply", "active_width", "active_speed", "phys_state",
})  # fmt: skip
"""Keys of ``ibv_devinfo -v`` (rdma-core ``libibverbs/examples/devinfo.c``): an excerpt that
starts inside a device or port block is recognised by them."""
_EXCERPT_KEY_RE = re.compile(
    r"^[ \t]*(state:[ \t]+PORT_[A-Z]+|active_mtu:[ \t]+\d+ \(\d\)|max_mtu:[ \t]+\d+ \(\d\)"
    r"|link_layer:[ \t]+(?:Ethernet|InfiniBand)|fw_ver:|node_guid:[ \t]+[0-9a-f]{4}:"
    r"|sys_image_guid:|vendor_part_id:|phys_port_cnt:|port_lmc:[ \t]+0x|sm_lid:|port_lid:"
    r"|max_qp_wr:|max_cqe:|atomic_cap:|max_qp_rd_atom:|max_res_rd_atom:|max_mcast_grp:"
    r"|max_pkeys:|local_ca_ack_delay:|max_srq_wr:|max_mr_size:|page_size_cap:"
    r"|device_cap_flags:|max_msg_sz:|port_cap_flags:|max_vl_num:|phys_state:[ \t]+[A-Z_]+ \(\d+\)"
    r"|active_width:[ \t]+\d+X|gid_tbl_len:|transport:[ \t]+(?:InfiniBand|iWARP))",
    re.MULTILINE,
)


_EXCERPT_LITERALS = ("PORT_", "_mtu:", "fw_ver:", "max_q", "phys_", "_guid:", "link_layer:")
"""One of these is in any excerpt :data:`_EXCERPT_KEY_RE` could count three keys in."""


def _strip_code(value: str) -> str:
    m = _VALUE_CODE_RE.match(value)
    return m.group(1) if m else value


def _indent(line: str) -> int:
    return len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip())


def _detect_ibv_devinfo(text: str) -> float:
    if "hca_id:" in text:
        return 0.95
    if "No IB devices found" in text and "ibv_devinfo" in text:
        return 0.9
    # an excerpt (a window, ``| grep -E 'state|mtu'``): three different keys printed the way
    # only ibv_devinfo prints them
    if any(t in text for t in _EXCERPT_LITERALS):
        keys = {m.group(1).split(":", 1)[0] for m in _EXCERPT_KEY_RE.finditer(text)}
        if len(keys) >= 3:
            return 0.85
    if "phys_port_cnt:" in text or "link_layer:" in text:
        return 0.6
    return 0.0


def _set_device(dev: IbvDevice, key: str, value: str) -> None:
    if key == "transport":
        dev.transport = _strip_code(value)
    elif key == "fw_ver":
        dev.fw_ver = value
    elif key == "node_guid":
        dev.node_guid = value
    elif key == "sys_image_guid":
        dev.sys_image_guid = value
    elif key == "vendor_id":
        dev.vendor_id = _int(value)
    elif key == "vendor_part_id":
        dev.vendor_part_id = _int(value)
    elif key == "hw_ver":
        dev.hw_ver = value
    elif key == "board_id":
        dev.board_id = value
    elif key == "phys_port_cnt":
        dev.phys_port_cnt = _int(value)
    else:
        dev.attrs[key] = value


def _set_port(port: IbvPort, key: str, value: str) -> None:
    if key == "state":
        port.state = _strip_code(value)
        port.active = port.state == "PORT_ACTIVE"
    elif key == "max_mtu":
        port.max_mtu_bytes = _int(value)
    elif key == "active_mtu":
        port.active_mtu_bytes = _int(value)
    elif key == "sm_lid":
        port.sm_lid = _int(value)
    elif key == "port_lid":
        port.port_lid = _int(value)
    elif key == "port_lmc":
        port.port_lmc = _int(value)
    elif key == "link_layer":
        port.link_layer = value
    elif key == "active_width":
        port.active_width = _strip_code(value)
    elif key == "active_speed":
        port.active_speed = _strip_code(value)
    elif key == "phys_state":
        port.phys_state = _strip_code(value)
    elif key == "gid_tbl_len":
        port.gid_tbl_len = _int(value)
    else:
        port.attrs[key] = value
    if key in {"active_width", "active_speed"} and port.active_width and port.active_speed:
        w = _WIDTH_RE.match(port.active_width)
        speed = _float(port.active_speed)
        if w and speed is not None:
            port.rate_gbps = int(w.group(1)) * speed


def _gid_record(dev: IbvDevice, port: IbvPort, lineno: int, index: int, value: str) -> IbvGid:
    gid, _, gtype = value.partition(",")
    gid = gid.strip()
    gtype = gtype.strip()
    version = None
    if gtype.lower().startswith("roce v"):
        version = _int(gtype[6:])
    return IbvGid(
        line=lineno,
        hca_id=dev.hca_id,
        port=port.port,
        index=index,
        gid=gid,
        gid_type=gtype or None,
        roce_version=version,
        ipv4=gid_ipv4(gid),
    )


@register(
    "ibv-devinfo",
    summary="ibv_devinfo [-v]",
    detect=_detect_ibv_devinfo,
    refs=("S11", "S15", "S16"),
)
def parse_ibv_devinfo(text: str) -> ParseResult:
    """``ibv_devinfo`` / ``ibv_devinfo -v`` → :class:`IbvDevice`, :class:`IbvPort`,
    :class:`IbvGid` records."""
    res = ParseResult("ibv-devinfo")
    dev: IbvDevice | None = None
    port: IbvPort | None = None
    ports_seen = 0
    flag_key: str | None = None
    orphan_warned = False
    shift = 0
    """Indentation lost by an excerpt (:func:`~aifabric.evidence.registry.dedent_block` removed
    what its lines shared): device attributes sit at 8 columns, port attributes at 24."""
    lines = text.splitlines()
    for lineno, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        ind = _indent(raw) + shift
        stripped = raw.strip()
        if stripped == "No IB devices found" and dev is None:
            # devinfo.c with no device the verbs library can open: a finding, not a blank
            from aifabric.evidence.rdma_tools import IbvDevicesList  # noqa: PLC0415 - cycle

            res.records.append(
                IbvDevicesList(line=lineno, tool="ibv_devinfo", error="No IB devices found")
            )
            continue
        if stripped.startswith("hca_id:"):
            dev = IbvDevice(line=lineno, hca_id=stripped[7:].strip())
            res.records.append(dev)
            port, ports_seen, flag_key = None, 0, None
            continue
        if dev is None:
            m = _KV_RE.match(raw)
            orphan_keys = _PORT_KEYS | _DEVICE_KEYS | _VERBOSE_DEVICE_KEYS | _VERBOSE_PORT_KEYS
            if m and m.group(2) in orphan_keys and not orphan_warned:
                # the capture starts inside a device block (a window, a grep): read it as a
                # device whose name is not in the paste
                res.warn(
                    lineno,
                    "device attribute before any 'hca_id:' line (capture starts "
                    "inside a device block?); device name unknown",
                    raw,
                )
                orphan_warned = True
                dev = IbvDevice(line=lineno, hca_id=UNNAMED)
                res.records.append(dev)
                if m.group(2) in _PORT_KEYS | _VERBOSE_PORT_KEYS:
                    port = IbvPort(line=lineno, hca_id=UNNAMED, port=0)
                    res.records.append(port)
                    shift = max(0, 24 - ind)
                else:
                    shift = max(0, 8 - ind)
                ind += shift
            else:
                continue
        if flag_key is not None and ind >= 32:
            dev.flags.setdefault(flag_key, []).append(stripped)
            continue
        if _is_prompt(raw):
            dev, port = None, None
            continue
        m = _KV_RE.match(raw)
        if m is None:
            if ind == 0:
                res.warn(lineno, "expected 'key: value' in an ibv_devinfo device block", raw)
            elif ind < 32:
                # MLNX_OFED -v prints a few attributes without a colon:
                # "log atomic arg sizes (mask)\t\t0x8"
                parts = re.split(r"\t+|\s{2,}", stripped, maxsplit=1)
                target = port.attrs if (port is not None and ind >= 20) else dev.attrs
                target[parts[0]] = parts[1] if len(parts) > 1 else ""
            continue
        key, value = m.group(2), m.group(3)
        flag_key = None
        if ind == 0:
            continue  # ibv_devinfo prints only hca_id at column 0: an unrelated line
        if key == "port":
            num = _int(value)
            if num is None:
                res.warn(lineno, "expected a port number after 'port:'", raw)
                continue
            port = IbvPort(line=lineno, hca_id=dev.hca_id, port=num)
            res.records.append(port)
            ports_seen += 1
            continue
        gm = _GID_KEY_RE.match(key)
        if gm is not None:
            if port is not None:
                res.records.append(_gid_record(dev, port, lineno, int(gm.group(1)), value))
            continue
        if port is not None and ind >= 20:
            _set_port(port, key, value)
            port.end_line = lineno
        else:
            port = None
            _set_device(dev, key, value)
            if key.endswith(("_flags", "_caps", "_cap_flags")) or "caps" in key:
                flag_key = key
        dev.end_line = lineno
    last = next((r for r in reversed(res.records) if isinstance(r, IbvDevice)), None)
    if last is not None and dev is last:
        expected = last.phys_port_cnt
        if expected is None or ports_seen < expected:
            res.warn(
                last.end_line or last.line,
                f"capture ends inside hca_id {last.hca_id}: {ports_seen} of "
                f"{expected if expected is not None else '?'} port block(s) seen (truncated?)",
            )
    return res


# ============================================================================================
# ibstat


@dataclass(slots=True, kw_only=True)
class IbstatCA(Record):
    """One ``CA 'name'`` block of ``ibstat``."""

    record_type: ClassVar[str] = "ibstat_ca"

    ca: str
    ca_type: str | None = None
    """Chip id, e.g. ``MT4129`` (ConnectX-7)."""
    num_ports: int | None = None
    firmware_version: str | None = None
    hardware_version: str | None = None
    node_guid: str | None = None
    system_image_guid: str | None = None


@dataclass(slots=True, kw_only=True)
class IbstatPort(Record):
    """One ``Port N:`` block of ``ibstat``."""

    record_type: ClassVar[str] = "ibstat_port"

    ca: str
    port: int
    state: str | None = None
    """``Active``, ``Down``, ``Initializing``, ``Armed``."""
    physical_state: str | None = None
    """``LinkUp``, ``Polling``, ``Disabled``, ``LinkErrorRecovery`` ..."""
    active: bool = False
    """State Active and physical state LinkUp."""
    rate_gbps: float | None = None
    """Aggregate port rate as ibstat prints it (40 QDR, 56 FDR, 100 EDR, 200 HDR, 400 NDR; the
    Ethernet speed in RoCE mode)."""
    base_lid: int | None = None
    lmc: int | None = None
    sm_lid: int | None = None
    capability_mask: str | None = None
    port_guid: str | None = None
    link_layer: str | None = None
    default_gid: str | None = None
    """GID index 0 (``ibstatus`` only)."""


_CA_RE = re.compile(r"^\s*(?:CA|(?:CA|Switch|Router|RNIC):) '([^']*)'\s*$")
"""``CA 'mlx5_0'`` (a whole CA), or ``CA: 'mlx5_0'`` (``ibstat CA PORT``: the node type, a colon,
then one port's fields without indentation; ``port_dump(..., alone)`` in infiniband-diags
``ibstat.c``)."""
_IBSTAT_PORT_RE = re.compile(r"^\s*Port (\d+):\s*$")
_IBSTAT_PORT_LINE_RE = re.compile(r"(?m)^[ \t]*Port \d+:[ \t]*$")
_IBSTAT_KV_RE = re.compile(r"^\s*([A-Za-z](?:[A-Za-z ]*[A-Za-z])?)\s*:\s*+((?:.*\S)?)\s*$")


_IBSTAT_PORT_KEYS = frozenset({
    "State", "Physical state", "Rate", "Base lid", "LMC", "SM lid", "Capability mask",
    "Port GUID", "Link layer",
})  # fmt: skip
"""The keys of an ``ibstat`` port block (infiniband-diags ``ibstat.c``)."""
_IBSTAT_EXCERPT_RE = re.compile(
    r"^[ \t]*(State: (?:Active|Down|Initializing|Armed)|Physical state: (?:LinkUp|Polling|Disabled"
    r"|Sleep|PortConfigurationTraining|LinkErrorRecovery)|Rate: \d|Base lid: \d|SM lid: \d"
    r"|Capability mask: 0x|Port GUID: 0x|Link layer: (?:InfiniBand|Ethernet))",
    re.MULTILINE,
)


def _detect_ibstat(text: str) -> float:
    if "CA '" in text and ("Port 1:" in text or "CA type:" in text):
        return 0.95
    if "CA: '" in text and "Physical state:" in text:
        return 0.9  # ibstat CA PORT
    if "Physical state: " in text:
        keys = len({m.group(1).split(":", 1)[0] for m in _IBSTAT_EXCERPT_RE.finditer(text)})
        if keys >= 3 or (keys >= 2 and _IBSTAT_PORT_LINE_RE.search(text) is not None):
            return 0.8  # a port block without its CA line (an excerpt)
    if "Physical state:" in text and "Link layer:" in text:
        return 0.6
    return 0.0


def _set_ca(ca: IbstatCA, key: str, value: str) -> bool:
    if key == "CA type":
        ca.ca_type = value
    elif key == "Number of ports":
        ca.num_ports = _int(value)
    elif key == "Firmware version":
        ca.firmware_version = value
    elif key == "Hardware version":
        ca.hardware_version = value
    elif key == "Node GUID":
        ca.node_guid = value
    elif key == "System image GUID":
        ca.system_image_guid = value
    else:
        return False
    return True


def _set_ibstat_port(port: IbstatPort, key: str, value: str) -> bool:
    if key == "State":
        port.state = value
    elif key == "Physical state":
        port.physical_state = value
    elif key == "Rate":
        port.rate_gbps = _float(value)
    elif key == "Base lid":
        port.base_lid = _int(value)
    elif key == "LMC":
        port.lmc = _int(value)
    elif key == "SM lid":
        port.sm_lid = _int(value)
    elif key == "Capability mask":
        port.capability_mask = value
    elif key == "Port GUID":
        port.port_guid = value
    elif key == "Link layer":
        port.link_layer = value
    else:
        return False
    port.active = port.state == "Active" and port.physical_state == "LinkUp"
    return True


@register("ibstat", summary="ibstat [CA]", detect=_detect_ibstat, refs=("S16", "S20"))
def parse_ibstat(text: str) -> ParseResult:
    """``ibstat`` → :class:`IbstatCA` and :class:`IbstatPort` records."""
    res = ParseResult("ibstat")
    ca: IbstatCA | None = None
    port: IbstatPort | None = None
    ports_seen = 0
    for lineno, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        m = _CA_RE.match(raw)
        if m is not None:
            ca = IbstatCA(line=lineno, ca=m.group(1))
            res.records.append(ca)
            port, ports_seen = None, 0
            continue
        pm = _IBSTAT_PORT_RE.match(raw)
        if ca is None:
            kv = _IBSTAT_KV_RE.match(raw) if pm is None else None
            if pm is not None or (kv is not None and kv.group(1) in _IBSTAT_PORT_KEYS):
                # a port block whose CA line was not pasted (an excerpt: a window, the lines
                # after a scroll, ``| grep``): the port, CA unknown; port 0 when its
                # "Port N:" line is missing too
                port = IbstatPort(line=lineno, ca="", port=int(pm.group(1)) if pm else 0)
                res.records.append(port)
                ca = IbstatCA(line=lineno, ca="")  # holds the port's keys; not a record
                if kv is not None:
                    _set_ibstat_port(port, kv.group(1), kv.group(2))
            continue
        if pm is not None:
            port = IbstatPort(line=lineno, ca=ca.ca, port=int(pm.group(1)))
            res.records.append(port)
            ports_seen += 1
            continue
        if _is_prompt(raw):
            ca, port = None, None
            continue
        kv = _IBSTAT_KV_RE.match(raw)
        if kv is None:
            res.warn(lineno, "expected 'Key: value' in an ibstat CA block", raw)
            continue
        key, value = kv.group(1), kv.group(2)
        if port is not None and _set_ibstat_port(port, key, value):
            port.end_line = lineno
            ca.end_line = lineno
        elif _set_ca(ca, key, value):
            ca.end_line = lineno
        # anything else ("ibwarn: ...", unknown keys): ignored
    if ca is not None and ca.ca:
        last_port = port
        if (ca.num_ports is not None and ports_seen < ca.num_ports) or (
            last_port is not None and last_port.port_guid is None
        ):
            res.warn(
                ca.end_line or ca.line,
                f"capture ends inside CA '{ca.ca}': {ports_seen} of "
                f"{ca.num_ports if ca.num_ports is not None else '?'} port(s), last port "
                "incomplete (truncated?)",
            )
    return res


# ============================================================================================
# ibstatus

# sysfs port state / phys_state names (the kernel's ib_port_state_str / phys_state_to_str, as
# /sys/class/infiniband/DEV/ports/N/{state,phys_state} print them) → the names ibstat prints
_IBSTATUS_STATE = {
    "DOWN": "Down", "INIT": "Initializing", "ARMED": "Armed", "ACTIVE": "Active",
    "ACTIVE_DEFER": "Active",
}  # fmt: skip
_IBSTATUS_PHYS = {
    "Phy Test": "PhyTest", "PortConfigurationTraining": "PortConfigurationTraining",
}  # fmt: skip
_IBSTATUS_HEAD_RE = re.compile(r"^\s*Infiniband device '([^']+)' port (\d+) status:\s*$")
_IBSTATUS_KV_RE = re.compile(r"^\s*(default gid|base lid|sm lid|state|phys state|rate|link_layer)"
                             r"\s*:\s*+((?:.*\S)?)\s*$")  # fmt: skip
_CODED_RE = re.compile(r"^\d+:\s*(.+)$")
_IBSTATUS_ANY_RE = re.compile(r"^\s*Infiniband device '[^']+' port \d+ status:", re.MULTILINE)


_IBSTATUS_ONLY_KEYS = ("default gid", "base lid", "sm lid", "phys state")
"""Labels only ``ibstatus`` prints (``ibstat`` says ``Base lid``/``SM lid``/``Physical state``,
``ibv_devinfo`` ``port_lid``/``sm_lid``/``phys_state``)."""


def _headerless_ibstatus(text: str) -> bool:
    """A port block whose ``Infiniband device`` line was not pasted (a window, the tail of a
    listing): two marks only ibstatus prints, in lines of its ``label:<TAB>value`` form: its
    labels, and a state printed the way sysfs holds it (``4: ACTIVE``, ``5: LinkUp``; ibstat
    prints ``Active``, ibv_devinfo ``PORT_ACTIVE (4)``)."""
    marks: set[str] = set()
    for kv in map(_IBSTATUS_KV_RE.match, text[:65536].splitlines()[:400]):
        if kv is None:
            continue
        if kv.group(1) in _IBSTATUS_ONLY_KEYS:
            marks.add(kv.group(1))
        if kv.group(1) in ("state", "phys state") and _CODED_RE.match(kv.group(2)):
            marks.add("coded state")
    return len(marks) >= 2


def _detect_ibstatus(text: str) -> float:
    if "Infiniband device '" in text and _IBSTATUS_ANY_RE.search(text):
        return 0.95
    if ("lid:" in text or "phys state:" in text) and _headerless_ibstatus(text):
        return 0.9  # the tail of a port block: above ibv_devinfo's 0.6 for a lone link_layer
    return 0.0


def _set_ibstatus(port: IbstatPort, key: str, value: str) -> None:
    coded = _CODED_RE.match(value)
    name = coded.group(1).strip() if coded else value
    if key == "default gid":
        port.default_gid = value or None
    elif key == "base lid":
        port.base_lid = _int(value)
    elif key == "sm lid":
        port.sm_lid = _int(value)
    elif key == "state":
        port.state = _IBSTATUS_STATE.get(name.upper(), name)
    elif key == "phys state":
        port.physical_state = _IBSTATUS_PHYS.get(name, name)
    elif key == "rate":
        port.rate_gbps = _float(value)
    elif key == "link_layer":
        port.link_layer = value
    port.active = port.state == "Active" and port.physical_state == "LinkUp"


@register(
    "ibstatus",
    summary="ibstatus [DEV[:PORT]] (infiniband-diags script over /sys/class/infiniband)",
    detect=_detect_ibstatus,
    refs=("S16", "S20"),
)
def parse_ibstatus(text: str) -> ParseResult:
    """``ibstatus`` → :class:`IbstatPort` records (one per ``Infiniband device 'D' port N
    status:`` block), with the sysfs names mapped to ibstat's (``4: ACTIVE`` → ``Active``,
    ``5: LinkUp`` → ``LinkUp``) so every port check reads both tools the same way.

    The script (rdma-core ``infiniband-diags/scripts/ibstatus``) cats
    ``/sys/class/infiniband/D/ports/N/{gids/0,lid,sm_lid,state,phys_state,rate,link_layer}``
    under fixed labels and prints ``unknown`` for a file it cannot read (kept as None)."""
    res = ParseResult("ibstatus")
    port: IbstatPort | None = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        m = _IBSTATUS_HEAD_RE.match(raw)
        if m is not None:
            port = IbstatPort(line=lineno, ca=m.group(1), port=int(m.group(2)))
            res.records.append(port)
            continue
        kv = _IBSTATUS_KV_RE.match(raw)
        if port is None:
            if kv is None or res.records:
                continue
            # the first port's block with its "Infiniband device" line cut off: device unknown
            port = IbstatPort(line=lineno, ca="", port=0)
            res.records.append(port)
        if kv is None:
            if _is_prompt(raw) or not raw[:1].isspace():
                port = None  # the block ended: a prompt or the next tool's output
            else:
                res.warn(lineno, "expected 'label: value' in an ibstatus port block", raw)
            continue
        value = kv.group(2)
        if value != "unknown":
            _set_ibstatus(port, kv.group(1), value)
        port.end_line = lineno
    return res


# ============================================================================================
# show_gids


@dataclass(slots=True, kw_only=True)
class GidEntry(Record):
    """One row of ``show_gids``."""

    record_type: ClassVar[str] = "gid"

    device: str
    port: int
    index: int
    gid: str
    ipv4: str | None = None
    """The IPv4 column (empty for link-local / IPv6 GIDs)."""
    roce_version: int | None = None
    """1 (RoCE v1, L2 only) or 2 (RoCE v2, UDP/IP, routable): NCCL_IB_GID_INDEX wants a v2 GID
    with the node's fabric IPv4 address (S15)."""
    version: str | None = None
    """The VER cell as printed (``v1``/``v2``)."""
    netdev: str | None = None
    link_local: bool = False
    """The GID is fe80::/64 (derived from the MAC, not routable)."""


@dataclass(slots=True, kw_only=True)
class GidCount(Record):
    """The ``n_gids_found=N`` trailer."""

    record_type: ClassVar[str] = "gid_count"

    count: int
    rows_seen: int


_GIDS_HEADER_RE = re.compile(r"^\s*DEV\s+PORT\s+INDEX\s+GID\b")
_GIDS_ROW_RE = re.compile(
    r"^\s*(?P<dev>\S+)\s+(?P<port>\d+)\s+(?P<index>\d+)\s+(?P<gid>[0-9A-Fa-f:]{2,39})"
    r"(?:\s+(?P<ipv4>\d{1,3}(?:\.\d{1,3}){3}))?\s+(?P<ver>v\d|[Vv][Ee][Rr]\s*\d|\S*RoCE\S*)"
    r"(?:\s+(?P<netdev>\S+))?\s*$"
)
_NGIDS_RE = re.compile(r"^\s*n_gids_found=(\d+)\s*$")
# A block-comment / C++-comment prefix when the table was pasted into source code (" * mlx5_0 ...").
_COMMENT_PREFIX_RE = re.compile(r"^\s*(?:\*|//)(?=\s|$)")


_GIDS_STRICT_ROW_RE = re.compile(
    r"^[ \t]*\w+[ \t]+\d[ \t]+\d+[ \t]+[0-9a-fA-F]{4}(?::[0-9a-fA-F]{4}){7}[ \t]"
    r"[^\n]*\bv[12]\b",
    re.MULTILINE,
)
"""A ``show_gids`` row with its eight-group GID and RoCE version: rows without the header (an
excerpt, ``show_gids | grep v2``) are still this table."""


def _detect_show_gids(text: str) -> float:
    if "GID" not in text and "n_gids_found" not in text:
        if "ffff:" not in text and "fe80:" not in text:
            return 0.0
        rows = _GIDS_STRICT_ROW_RE.finditer(text, 0, 20000)
        return 0.9 if next(rows, None) is not None and next(rows, None) is not None else 0.0
    if "n_gids_found" in text or _GIDS_HEADER_RE.search(text[:20000]) is not None:
        return 0.95
    if re.search(r"\bDEV\b.*\bGID\b.*\bVER\b", text[:20000]) is not None:
        return 0.9
    return 0.0


@register(
    "show-gids",
    summary="show_gids [DEV]",
    detect=_detect_show_gids,
    refs=("S15",),
)
def parse_show_gids(text: str) -> ParseResult:
    """``show_gids`` → one :class:`GidEntry` per GID, :class:`GidCount` for the trailer."""
    res = ParseResult("show-gids")
    in_table = False
    rows = 0
    for lineno, line in enumerate(text.splitlines(), 1):
        raw = _COMMENT_PREFIX_RE.sub("", line, count=1)
        stripped = raw.strip()
        if not stripped:
            continue
        if _GIDS_HEADER_RE.match(raw):
            in_table = True
            continue
        if stripped.startswith("---"):
            continue
        nm = _NGIDS_RE.match(raw)
        if nm is not None:
            count = int(nm.group(1))
            res.records.append(GidCount(line=lineno, count=count, rows_seen=rows))
            if count != rows:
                res.warn(lineno, f"n_gids_found={count} but {rows} GID row(s) parsed", raw)
            in_table, rows = False, 0
            continue
        m = _GIDS_ROW_RE.match(raw)
        if m is not None:
            gid = m.group("gid")
            ver = m.group("ver")
            digits = re.sub(r"\D", "", ver)
            entry = GidEntry(
                line=lineno,
                device=m.group("dev"),
                port=int(m.group("port")),
                index=int(m.group("index")),
                gid=gid,
                ipv4=m.group("ipv4"),
                roce_version=int(digits) if digits else None,
                version=ver,
                netdev=m.group("netdev"),
                link_local=gid.lower().startswith("fe80"),
            )
            if entry.ipv4 is None:
                entry.ipv4 = gid_ipv4(gid)
            res.records.append(entry)
            rows += 1
            in_table = True
            continue
        if _is_prompt(raw):
            in_table = False
            continue
        if in_table:
            res.warn(lineno, "expected a show_gids row: DEV PORT INDEX GID [IPv4] VER [DEV]", raw)
    return res


# ============================================================================================
# iblinkinfo


@dataclass(slots=True, kw_only=True)
class IbLink(Record):
    """One port line of ``iblinkinfo`` (the local end and, when up, its peer)."""

    record_type: ClassVar[str] = "ib_link"

    node_type: str | None = None
    """``switch``, ``ca`` or ``router`` from the section header; None for filtered pastes."""
    node_guid: str | None = None
    """Node GUID from a ``Switch: 0x...`` header or the ``-l`` line prefix."""
    node_name: str | None = None
    port_guid: str | None = None
    """The GUID that prefixes CA port lines (a port GUID)."""
    lid: int | None = None
    port: int
    width: str | None = None
    """``4X``; None when the port is down."""
    lanes: int | None = None
    lane_speed_gbps: float | None = None
    """Per-lane signalling rate as printed (25.78125 EDR, 53.125 HDR, 106.25 NDR)."""
    rate_gbps: float | None = None
    """Nominal link rate, as ibstat reports it: lanes x nominal lane rate (4X EDR = 100.0)."""
    speed_label: str | None = None
    """A label printed in parentheses after the speed, e.g. ``FDR10``."""
    state: str
    """Logical state: ``Active``, ``Down``, ``Initialize``, ``Armed``."""
    physical_state: str
    """``LinkUp``, ``Polling``, ``Disabled`` ..."""
    active: bool = False
    peer_guid: str | None = None
    peer_lid: int | None = None
    peer_port: int | None = None
    peer_name: str | None = None
    annotation: str | None = None
    """Text in the trailing parentheses, e.g. ``Could be 12X Could be 10.0 Gbps``."""


# nominal per-lane data rate for the signalling rates iblinkinfo prints
_NOMINAL_LANE = {
    2.5: 2.5,
    5.0: 5.0,
    10.0: 10.0,
    10.3125: 10.0,
    14.0625: 14.0,
    25.78125: 25.0,
    53.125: 50.0,
    106.25: 100.0,
    212.5: 200.0,
}

# ``mid`` is the link between "==(" and ")==>", which may hold one "(...)" (an FDR10 label): up to
# the first ")" when ")==>" follows it, else up to the second ")" when a "(" comes before the
# first. Each case is one possessive scan; ``[^)]*(?:\([^)]*\)[^)]*)?`` tried every "(" as the
# start of the nested group and rescanned the rest from each (quadratic on a line of "(").
_LINK_RE = re.compile(
    r"^\s*(?:(?P<guid>0x[0-9A-Fa-f]+)\s+)?(?:\"(?P<name>[^\"]*)\"\s+)?"
    r"(?:(?P<lid>\d+)\s+)?(?P<port>\d+)\[[^\]]*\]\s*==\("
    r"(?P<mid>[^)]*+(?=\)==>)|[^()]*+\([^)]*+\)[^)]*+(?=\)==>))\)==>"
    r"\s*(?:(?P<pguid>0x[0-9A-Fa-f]+)\s+)?(?:(?P<plid>\d+)\s+)?(?:(?P<pport>\d+))?\[[^\]]*\]"
    r"\s*\"(?P<pname>[^\"]*)\"\s*+(?:\((?P<note>.*)\))?\s*$"
)
_MID_RE = re.compile(
    r"^\s*(?:(?P<lanes>\d+)X\s*(?P<speed>[\d.]+)\s*Gbps\s*(?:\((?P<label>[^)]*)\)\s*)?)?"
    r"(?P<state>[A-Za-z]+)\s*/\s*(?P<phys>[A-Za-z]+)\s*$"
)
# the name is the rest up to its last non-blank, less one final ":" (the lazy ``(.*?):?\s*$`` it
# replaces rescanned a run of blanks at every character)
_SECTION_RE = re.compile(
    r"^\s*(Switch|CA|Router):\s+(?:(0x[0-9A-Fa-f]+)\s+)?(.*(?=:\s*$)|(?:.*\S)?):?\s*$"
)


def _detect_iblinkinfo(text: str) -> float:
    if "==(" in text and ")==>" in text:
        return 0.95
    return 0.0


@register(
    "iblinkinfo",
    summary="iblinkinfo [-l]",
    detect=_detect_iblinkinfo,
    refs=("S16", "S20"),
)
def parse_iblinkinfo(text: str) -> ParseResult:
    """``iblinkinfo`` → one :class:`IbLink` per port line."""
    res = ParseResult("iblinkinfo")
    node_type: str | None = None
    node_guid: str | None = None
    node_name: str | None = None
    started = False
    for lineno, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        if "==(" in raw:
            m = _LINK_RE.match(raw)
            mid = _MID_RE.match(m.group("mid")) if m is not None else None
            if m is None or mid is None:
                res.warn(
                    lineno,
                    "expected an iblinkinfo port line: [LID] PORT[ ] ==( WIDTH "
                    "SPEED STATE/ PHYS)==> PEER",
                    raw,
                )
                continue
            started = True
            lanes = int(mid.group("lanes")) if mid.group("lanes") else None
            try:
                speed = finite_float(mid.group("speed")) if mid.group("speed") else None
            except ValueError:  # "[\d.]+" also reads "1.2.3"
                res.warn(lineno, "expected a lane speed such as 25.78125 Gbps", raw)
                continue
            rate = None
            if lanes is not None and speed is not None:
                rate = lanes * _NOMINAL_LANE.get(speed, speed)
            line_guid, line_name = m.group("guid"), m.group("name")
            is_ca_line = line_guid is not None and line_name is None
            link = IbLink(
                line=lineno,
                node_type=node_type,
                node_guid=node_guid if (line_name is None) else line_guid,
                node_name=line_name.strip() if line_name is not None else node_name,
                port_guid=line_guid if is_ca_line else None,
                lid=int(m.group("lid")) if m.group("lid") else None,
                port=int(m.group("port")),
                width=f"{lanes}X" if lanes is not None else None,
                lanes=lanes,
                lane_speed_gbps=speed,
                rate_gbps=rate,
                speed_label=mid.group("label"),
                state=mid.group("state"),
                physical_state=mid.group("phys"),
                active=mid.group("state") == "Active" and mid.group("phys") == "LinkUp",
                peer_guid=m.group("pguid"),
                peer_lid=int(m.group("plid")) if m.group("plid") else None,
                peer_port=int(m.group("pport")) if m.group("pport") else None,
                peer_name=m.group("pname") or None,
                annotation=(m.group("note") or "").strip() or None,
            )
            if link.node_type is None and is_ca_line:
                link.node_type = "ca"
            res.records.append(link)
            continue
        sm = _SECTION_RE.match(raw)
        if sm is not None:
            started = True
            node_type = sm.group(1).lower()
            node_guid = sm.group(2)
            node_name = sm.group(3).strip() or None
            continue
        if _is_prompt(raw):
            started = False
            node_type = node_guid = node_name = None
            continue
        if started:
            res.warn(lineno, "expected an iblinkinfo port line or a Switch:/CA: header", raw)
    return res
