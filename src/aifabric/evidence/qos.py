"""The normalised switch-QoS records every switch dialect produces, and the helpers they share.

One shape whatever the vendor: the SONiC ``config_db.json`` (:mod:`sonic_config`), Arista EOS
(:mod:`eos_config`) and Cisco NX-OS (:mod:`nxos_config`) running-configs, NVIDIA NVUE
(:mod:`nvue`) and Cumulus ``traffic.conf`` (:mod:`cumulus_traffic`) parsers, and the PFC
watchdog of the switch counters (:mod:`switch_counters`), all emit these records, so
``verify`` compares the fabric intent (DSCP 26 → TC 3, PFC on priority 3 only, ECN min/max,
MTU 9100/9216, PFC watchdog: S11–S14, S18) with any dialect the same way. Every record has
``scope`` (where it applies: a port, a profile, a policy class, ``global``) and ``port`` (the
interface when the scope is one, else ``None``); maps that are named carry ``name``.

Record types (the ``type`` of the JSON form): ``dscp-map``, ``tc-map``, ``pfc``, ``ecn``,
``mtu``, ``queue-schedule``, ``buffer-profile``, ``pfc-watchdog``, ``port-qos``,
``qos-setting``. Records only one vendor has (SONiC ``QUEUE``, ``BUFFER_POOL`` ...) stay in
that vendor's module.

Helpers: :func:`size_to_bytes` (``146.48 KB`` → bytes, binary units as switch buffer docs use
them) and :func:`parse_id_list` (``3,4`` / ``0-2,5-7`` → integers).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from aifabric.evidence.base import Record

__all__ = [
    "BufferProfile",
    "DscpMap",
    "EcnConfig",
    "Mtu",
    "PfcConfig",
    "PfcWatchdog",
    "PortQos",
    "QosSetting",
    "QueueSchedule",
    "TcMap",
    "parse_id_list",
    "size_to_bytes",
]


@dataclass(slots=True, kw_only=True)
class DscpMap(Record):
    """DSCP → traffic class (SONiC TC, EOS traffic-class, NX-OS qos-group, Cumulus internal
    CoS / switch priority). ``mapping`` holds only the DSCP values the config names."""

    record_type: ClassVar[str] = "dscp-map"
    name: str
    scope: str = "global"
    mapping: dict[int, int] = field(default_factory=dict)
    target: str = "tc"
    """What the values are: ``tc``, ``qos-group``, ``internal-cos``, ``switch-priority``."""


@dataclass(slots=True, kw_only=True)
class TcMap(Record):
    """Any other small integer map: ``kind`` is ``tc-to-queue``, ``tc-to-pg``,
    ``pfc-priority-to-queue``, ``pfc-priority-to-pg``, ``dot1p-to-tc``, ``tc-to-dscp``,
    ``cos-to-tc``, ``tc-to-cos``, ``switch-priority-to-tc``, ``cos-to-qos-group``..."""

    record_type: ClassVar[str] = "tc-map"
    kind: str
    name: str
    scope: str = "global"
    mapping: dict[int, int] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class PfcConfig(Record):
    """PFC on a port, profile or no-drop class. ``priorities`` are the lossless priorities
    (802.1p / PFC priority; on Cumulus traffic.conf the switch's internal CoS, see
    ``internal_cos``). ``enabled`` is the port's PFC switch (EOS ``priority-flow-control on``,
    NX-OS ``mode on|auto|off``), ``None`` when the config does not say."""

    record_type: ClassVar[str] = "pfc"
    scope: str
    port: str | None = None
    priorities: tuple[int, ...] = ()
    drop_priorities: tuple[int, ...] = ()
    enabled: bool | None = None
    mode: str | None = None
    rx_enabled: bool | None = None
    tx_enabled: bool | None = None
    internal_cos: bool = False


@dataclass(slots=True, kw_only=True)
class EcnConfig(Record):
    """WRED/ECN marking on a queue or profile. Thresholds normalised to bytes where the unit
    allows (KB/kbytes = 1024 B, MB = 1024² B, as switch buffer docs use); ``*_raw`` keeps the
    configured text (segments and milliseconds cannot be turned into bytes)."""

    record_type: ClassVar[str] = "ecn"
    scope: str
    port: str | None = None
    queue: int | None = None
    profile: str | None = None
    min_bytes: int | None = None
    max_bytes: int | None = None
    min_raw: str | None = None
    max_raw: str | None = None
    probability_pct: float | None = None
    weight: int | None = None
    mode: str | None = None
    """As configured: SONiC ``ecn_all``/``ecn_green``..., ``ecn`` (EOS/NX-OS), ``ECN``."""
    ecn_enabled: bool | None = None
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class Mtu(Record):
    """MTU of an interface (or of a NX-OS network-qos class when ``port`` is ``None``)."""

    record_type: ClassVar[str] = "mtu"
    scope: str
    port: str | None = None
    mtu_bytes: int
    speed_gbps: float | None = None


@dataclass(slots=True, kw_only=True)
class QueueSchedule(Record):
    """Egress scheduling of one queue: DWRR weight/bandwidth share or strict priority."""

    record_type: ClassVar[str] = "queue-schedule"
    scope: str
    port: str | None = None
    queue: int | None = None
    bandwidth_pct: float | None = None
    bandwidth_remaining: bool = False
    weight: int | None = None
    strict_priority: bool | None = None
    priority_level: int | None = None
    scheduler: str | None = None


@dataclass(slots=True, kw_only=True)
class BufferProfile(Record):
    """A buffer profile; lossless when it has ``xoff`` headroom (SONiC ``pg_lossless_*``)."""

    record_type: ClassVar[str] = "buffer-profile"
    name: str
    pool: str | None = None
    size_bytes: int | None = None
    xon_bytes: int | None = None
    xoff_bytes: int | None = None
    xon_offset_bytes: int | None = None
    dynamic_th: int | None = None
    static_th_bytes: int | None = None
    lossless: bool = False


@dataclass(slots=True, kw_only=True)
class PfcWatchdog(Record):
    """PFC watchdog (storm detection) on a port/profile or globally (``port`` ``None``)."""

    record_type: ClassVar[str] = "pfc-watchdog"
    scope: str
    port: str | None = None
    enabled: bool | None = None
    action: str | None = None
    detection_ms: float | None = None
    restoration_ms: float | None = None
    poll_interval_ms: float | None = None
    history: bool | None = None


@dataclass(slots=True, kw_only=True)
class PortQos(Record):
    """What a port (or profile, or ``system qos``) binds: maps and policies by name, trust,
    PFC enable list."""

    record_type: ClassVar[str] = "port-qos"
    scope: str
    port: str | None = None
    maps: dict[str, str] = field(default_factory=dict)
    """Field → referenced map/policy/profile name (``dscp_to_tc_map``, ``service-profile``,
    ``service-policy qos input``...), old ``[TABLE|name]`` references reduced to the name."""
    pfc_enable: tuple[int, ...] | None = None
    pfcwd_sw_enable: tuple[int, ...] | None = None
    trust: str | None = None


@dataclass(slots=True, kw_only=True)
class QosSetting(Record):
    """A QoS setting with no richer record (``qos rewrite dscp``, ``trust-mode``, NVUE keys)."""

    record_type: ClassVar[str] = "qos-setting"
    scope: str
    key: str
    value: str
    applied: str | None = None
    """NVUE ``applied`` column when it differs from ``value`` (the operational one)."""


# --------------------------------------------------------------------------------------------
# helpers

_SIZE_RE = re.compile(r"(?P<n>\d+(?:\.\d+)?)\s*(?P<u>[a-zA-Z]*)")  # fullmatch, on stripped text
_UNIT_BYTES = {
    "": 1,
    "b": 1,
    "byte": 1,
    "bytes": 1,
    "k": 1024,
    "kb": 1024,
    "kbyte": 1024,
    "kbytes": 1024,
    "kib": 1024,
    "m": 1024**2,
    "mb": 1024**2,
    "mbytes": 1024**2,
    "mib": 1024**2,
    "g": 1024**3,
    "gb": 1024**3,
    "gbytes": 1024**3,
    "gib": 1024**3,
}


def size_to_bytes(value: str, unit: str = "") -> int | None:
    """``"150"``, ``"150 kbytes"``, ``"146.48 KB"``, ``"1.43 MB"`` → bytes (binary K/M/G);
    ``None`` for segments, milliseconds, ``inf`` or anything unreadable."""
    m = _SIZE_RE.fullmatch((f"{value} {unit}" if unit else value).strip())
    if m is None:
        return None
    mult = _UNIT_BYTES.get(m.group("u").lower())
    if mult is None:
        return None
    return round(float(m.group("n")) * mult)


def parse_id_list(text: str) -> tuple[int, ...]:
    """``"3,4"``, ``"3-4"``, ``"0-2,5-7"``, ``"3 4"``, ``"[3]"`` → sorted unique ints.

    Raises ``ValueError`` for anything else (the caller warns about the line).
    """
    out: set[int] = set()
    t = text.strip().strip("[]")
    if not t:
        return ()
    for part in re.split(r"[,\s]+", t):
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-", 1)
            lo, hi = int(a), int(b)
            if hi < lo or hi - lo > 4096:
                raise ValueError(f"bad range {part!r}")
            out.update(range(lo, hi + 1))
        else:
            out.add(int(part))
    return tuple(sorted(out))
