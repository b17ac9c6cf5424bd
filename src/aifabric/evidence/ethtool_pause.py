"""``ethtool -a IFACE`` / ``ethtool --show-pause IFACE`` (and ``--json``) → :class:`EthtoolPause`.

IEEE 802.3x link-level pause ("global pause", flow control) of one Ethernet port: a PAUSE frame
stops *every* priority of the link, which is what PFC (802.1Qbb) refines to one priority. A RoCE
fabric runs PFC on the RoCE priority only (seed S12); global pause left on beside it pauses the
storage, management and TCP traffic of the port as well, and on NICs that apply it with PFC
enabled it is ignored or rejected. The text layout (ethtool ``ethtool.c`` ``dump_pause`` and
``netlink/pause.c``)::

    Pause parameters for eth2:
    Autonegotiate:  on
    RX:             off
    TX:             off
    RX negotiated: off          (netlink ethtool, when autonegotiated)
    TX negotiated: off
    Statistics:                 (ethtool -I / --include-statistics)
      tx_pause_frames: 0
      rx_pause_frames: 0

``Cannot get device pause settings: Operation not supported`` (no pause support) is kept as the
record's ``error``. ``--json -a`` gives ``[{"ifname", "autonegotiate", "rx", "tx",
"negotiated": {"rx", "tx"}, "statistics": {...}}]``. Source: https://git.kernel.org/pub/scm/
network/ethtool/ethtool.git (``netlink/pause.c``), man page ethtool(8).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from aifabric.evidence.base import UNNAMED, ParseResult, Record, json_array
from aifabric.evidence.registry import register

__all__ = ["EthtoolPause", "parse_ethtool_pause"]


@dataclass(slots=True, kw_only=True)
class EthtoolPause(Record):
    """The 802.3x pause settings of one interface."""

    record_type: ClassVar[str] = "ethtool_pause"

    interface: str
    autoneg: bool | None = None
    rx: bool | None = None
    """The port obeys received PAUSE frames (stops sending)."""
    tx: bool | None = None
    """The port sends PAUSE frames when its receive buffer fills."""
    rx_negotiated: bool | None = None
    tx_negotiated: bool | None = None
    statistics: dict[str, int] = field(default_factory=dict)
    """``tx_pause_frames``, ``rx_pause_frames`` (``ethtool -I -a``)."""
    error: str | None = None
    """``Operation not supported`` and the like: the driver has no pause settings."""

    @property
    def pause_on(self) -> bool:
        """Global pause in effect in either direction (negotiated values win when printed)."""
        rx = self.rx_negotiated if self.rx_negotiated is not None else self.rx
        tx = self.tx_negotiated if self.tx_negotiated is not None else self.tx
        return bool(rx) or bool(tx)


_HEADER_RE = re.compile(r"^\s*Pause parameters for (?P<ifname>[^\s:]+):\s*$")
_KV_RE = re.compile(
    r"^\s*(?P<key>Autonegotiate|RX|TX|RX negotiated|TX negotiated)\s*:\s*(?P<val>on|off)\s*$"
)
_STAT_RE = re.compile(r"^\s+(?P<key>[a-z_]+pause[a-z_]*):\s*(?P<val>\d+)\s*$")
_ERROR_RE = re.compile(r"^\s*Cannot get device pause settings: (?P<err>[^\n]+)")
_COMMAND_RE = re.compile(r"\bethtool\s+(?:-a|--show-pause)\s+(?P<ifname>[\w.:@-]+)")
_HEADER_ANY_RE = re.compile(r"^[ \t]*Pause parameters for [^\s:]+:[ \t]*$", re.MULTILINE)
_RX_RE = re.compile(r"^[ \t]*RX:[ \t]+o(?:n|ff)[ \t]*$", re.MULTILINE)
_TX_RE = re.compile(r"^[ \t]*TX:[ \t]+o(?:n|ff)[ \t]*$", re.MULTILINE)
_KEYS = {"Autonegotiate": "autoneg", "RX": "rx", "TX": "tx",
         "RX negotiated": "rx_negotiated", "TX negotiated": "tx_negotiated"}  # fmt: skip


def _detect(text: str) -> float:
    """0.95 for ``Pause parameters for IFACE:`` (only ethtool -a prints it) or the JSON form;
    0.8 for its ``Autonegotiate:``/``RX:``/``TX:`` lines without the header (an excerpt)."""
    if "Pause parameters for " in text and _HEADER_ANY_RE.search(text) is not None:
        return 0.95
    if text.lstrip()[:1] == "[" and '"autonegotiate"' in text and '"ifname"' in text:
        return 0.95
    if "Autonegotiate:" in text and _RX_RE.search(text) and _TX_RE.search(text):
        return 0.8
    return 0.0


def _parse_json(text: str, res: ParseResult) -> bool:
    data = json_array(text)
    if data is None:
        return False
    for obj in data:
        if not isinstance(obj, dict) or "ifname" not in obj:
            continue
        rec = EthtoolPause(line=1, interface=str(obj["ifname"]))
        rec.autoneg = _bool(obj.get("autonegotiate"))
        rec.rx, rec.tx = _bool(obj.get("rx")), _bool(obj.get("tx"))
        neg = obj.get("negotiated")
        if isinstance(neg, dict):
            rec.rx_negotiated, rec.tx_negotiated = _bool(neg.get("rx")), _bool(neg.get("tx"))
        stats = obj.get("statistics")
        if isinstance(stats, dict):
            rec.statistics = {k: int(v) for k, v in stats.items() if isinstance(v, int)}
        res.records.append(rec)
    return bool(res.records)


def _bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


@register(
    "ethtool-pause",
    summary="ethtool -a IFACE / --show-pause [--json] (802.3x global pause: autoneg, RX, TX)",
    detect=_detect,
    refs=("S12", "S20"),
)
def parse_ethtool_pause(text: str) -> ParseResult:
    """``ethtool -a`` output (one or several interfaces) → one :class:`EthtoolPause` each."""
    res = ParseResult("ethtool-pause")
    if text.lstrip()[:1] in ("[", "{") and _parse_json(text, res):
        return res
    rec: EthtoolPause | None = None
    command_iface: str | None = None
    in_stats = False
    pending_error: str | None = None
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        cmd = _COMMAND_RE.search(line)
        if cmd is not None:
            command_iface, rec, in_stats = cmd.group("ifname"), None, False
            continue
        m = _HEADER_RE.match(line)
        if m is not None:
            rec = EthtoolPause(line=lineno, interface=m.group("ifname"))
            res.records.append(rec)
            in_stats = False
            if pending_error is not None:
                # stderr captured before stdout (a sosreport file): the error is this port's
                rec.error, pending_error = pending_error, None
            continue
        err = _ERROR_RE.match(line)
        if err is not None:
            if rec is None:
                pending_error = err.group("err").strip()
            else:
                rec.error, rec.end_line = err.group("err").strip(), lineno
            continue
        kv = _KV_RE.match(line)
        if kv is not None:
            if rec is None:
                # the settings without their "Pause parameters for" line (an excerpt)
                rec = EthtoolPause(line=lineno, interface=command_iface or UNNAMED)
                res.records.append(rec)
                res.warn(lineno, "pause settings without their 'Pause parameters for' line", line)
            setattr(rec, _KEYS[kv.group("key")], kv.group("val") == "on")
            rec.end_line = lineno
            continue
        if line.strip() == "Statistics:" and rec is not None:
            in_stats = True
            continue
        st = _STAT_RE.match(line)
        if st is not None and rec is not None and in_stats:
            rec.statistics[st.group("key")] = int(st.group("val"))
            rec.end_line = lineno
            continue
    if pending_error is not None:
        res.records.append(
            EthtoolPause(line=1, interface=command_iface or UNNAMED, error=pending_error)
        )
    if not res.records and text.strip():
        res.warn(None, "no 'Pause parameters for IFACE:' block found")
    return res
