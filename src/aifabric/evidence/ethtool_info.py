"""Driver and link settings of an Ethernet interface: ``ethtool -i IFACE`` →
:class:`EthtoolDriver` and plain ``ethtool IFACE`` → :class:`EthtoolLink`.

``ethtool -i`` (``--driver``) prints one ``key: value`` line per field at column 0, in this
order: ``driver``, ``version``, ``firmware-version``, ``expansion-rom-version``, ``bus-info``,
then ``supports-statistics|test|eeprom-access|register-dump|priv-flags: yes|no``. Values may be
empty (``firmware-version: `` on virtual NICs) and may hold spaces (i40e: ``6.00 0x800036cb
1.1747.0``; old mlx5: ``3.0-1 (January 2015)``): the whole rest of the line is the value. The
output does not name the interface; it is taken from a ``ethtool -i IFACE`` command line just
before (a shell prompt or a bare command), else left ``None`` (a probe bundle names the file
``ethtool-i-IFACE.txt``; the fleet verdicts read the name from there).

``ethtool IFACE`` prints ``Settings for IFACE:`` then indented ``Key: value`` lines: ``Speed:
400000Mb/s`` (``Unknown!`` when the link is down or the driver does not report it), ``Duplex:
Full`` (``Unknown! (255)``), ``Port: Direct Attach Copper``, ``Auto-negotiation: on``, ``Link
detected: yes``, and the link-mode lists ``Supported link modes:`` / ``Advertised link modes:``
whose further modes follow on continuation lines indented past the key (several modes per line,
or ``Not reported``). Other keys (pause, FEC, wake-on, message level and its continuation line)
are kept verbatim in ``raw``. Lines ethtool writes to stderr when unprivileged (``Cannot get
wake-on-lan settings: Operation not permitted``) are skipped; any other unreadable line is one
warning and skipped.

Sources: https://man7.org/linux/man-pages/man8/ethtool.8.html ; ethtool ``ethtool.c``
(``dump_drvinfo``, ``dump_link_caps``) and ``netlink/settings.c`` for the labels
(https://git.kernel.org/pub/scm/network/ethtool/ethtool.git); captures in
``tests/fixtures/evidence/ethtool-info/*/meta.yaml``.

Seed refs: S9 (the NIC's port speed, weighed against its PCIe link), S20 (a link up at less
than its rate; the same driver and firmware on every host, compared across a fleet by
:mod:`aifabric.checks.diagnose.verdicts_fleet`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from aifabric.evidence.base import UNNAMED, ParseResult, Record
from aifabric.evidence.registry import register

__all__ = ["EthtoolDriver", "EthtoolLink", "parse_ethtool_info"]


@dataclass(slots=True, kw_only=True)
class EthtoolDriver(Record):
    """``ethtool -i IFACE``: the driver bound to an interface and the NIC's firmware."""

    record_type: ClassVar[str] = "ethtool_driver"

    interface: str | None = None
    """From the ``ethtool -i IFACE`` command line before the block, else ``None``."""
    driver: str | None = None
    version: str | None = None
    """Driver version as printed (``None`` when empty)."""
    firmware: str | None = None
    """``firmware-version`` as printed (``None`` when empty: virtual NICs)."""
    expansion_rom: str | None = None
    bus_info: str | None = None
    """PCI address ``0000:af:00.0`` (or another bus id)."""
    supports: dict[str, bool] = field(default_factory=dict)
    """``supports-*`` flags without the prefix: ``{"statistics": True, "test": False}``."""


@dataclass(slots=True, kw_only=True)
class EthtoolLink(Record):
    """``ethtool IFACE``: the link settings of one interface."""

    record_type: ClassVar[str] = "ethtool_link"

    interface: str
    speed_mbps: int | None = None
    """``Speed: 100000Mb/s`` → 100000; ``None`` for ``Unknown!``."""
    duplex: str | None = None
    """``Full`` or ``Half``; ``None`` for ``Unknown! (255)``."""
    link_detected: bool | None = None
    port: str | None = None
    """As printed: ``FIBRE``, ``Direct Attach Copper``, ``Twisted Pair``, ``Other``..."""
    autoneg: bool | None = None
    supported_modes: list[str] = field(default_factory=list)
    advertised_modes: list[str] = field(default_factory=list)
    raw: dict[str, str] = field(default_factory=dict)
    """Every other ``Key: value`` line verbatim (continuation lines joined with a space)."""


# "Settings for eth0:" — interface names have no spaces
_SETTINGS_RE = re.compile(r"^Settings for (\S+):$")
# a command line: "root@h:~# ethtool -i p3p1", "$ sudo ethtool eth2", "ethtool -i ens3f0"
_COMMAND_RE = re.compile(r"(?:^|[\s$#>])ethtool( -i| --driver)? ([\w.:@-]+)(?:[ \t]*\|[^|]*)*$")
"""A command line naming the interface (``sudo ethtool eth0``, ``ethtool eth0 | grep Speed``)."""
_KV_RE = re.compile(r"^([A-Za-z][\w -]*?):(?: (.*))?$")
_SPEED_RE = re.compile(r"^(\d{1,9})Mb/s$")
_STDERR_RE = re.compile(r"^(?:Cannot |netlink error)")
_DRIVER_KEYS = frozenset({"driver", "version", "firmware-version", "expansion-rom-version",
                          "bus-info"})  # fmt: skip
_MODE_KEYS = {"Supported link modes": "supported", "Advertised link modes": "advertised"}

_DETECT_DRIVER_RE = re.compile(r"^driver: \S", re.MULTILINE)
_DETECT_BUS_RE = re.compile(r"^bus-info: ", re.MULTILINE)
_DETECT_SUPPORTS_RE = re.compile(r"^supports-statistics: (?:yes|no)", re.MULTILINE)
_DETECT_FW_RE = re.compile(r"^firmware-version:", re.MULTILINE)
_DETECT_SETTINGS_RE = re.compile(r"^Settings for \S+:[ \t]*$", re.MULTILINE)
_DETECT_LINK_RE = re.compile(r"^[ \t]+(?:Link detected: (?:yes|no)|Speed: )", re.MULTILINE)
_LINK_KEYS = frozenset({
    "Supported ports", "Supported link modes", "Supported pause frame use",
    "Supports auto-negotiation", "Supported FEC modes", "Advertised link modes",
    "Advertised pause frame use", "Advertised auto-negotiation", "Advertised FEC modes",
    "Link partner advertised link modes", "Speed", "Duplex", "Port", "PHYAD", "Transceiver",
    "Auto-negotiation", "MDI-X", "Supports Wake-on", "Wake-on", "Current message level",
    "Link detected", "Lanes",
})  # fmt: skip
"""Keys of ``ethtool IFACE``'s link block (ethtool ``ethtool.c``/``netlink/settings.c``): an
excerpt without its ``Settings for`` line is still a link block when its keys are these."""
_EXCERPT_KEY_RE = re.compile(
    r"^[ \t]*(Supported (?:ports|link modes|pause frame use|FEC modes)|Supports auto-negotiation"
    r"|Advertised (?:link modes|pause frame use|auto-negotiation|FEC modes)|Speed: \d+Mb/s"
    r"|Duplex: (?:Full|Half)|PHYAD|Transceiver|Auto-negotiation: o|MDI-X|Link detected: )",
    re.MULTILINE,
)

def _detect(text: str) -> float:
    """0.95 for ``Settings for IFACE:`` with an indented ``Speed:``/``Link detected:`` line or
    for ``driver:`` + ``bus-info:`` + ``supports-statistics:`` at column 0 (nothing else prints
    these); 0.6 for a partial ``ethtool -i`` (driver and bus-info or firmware-version); excerpts as
    :func:`_detect_excerpt`."""
    if "Settings for " in text and _DETECT_SETTINGS_RE.search(text) and _DETECT_LINK_RE.search(
        text
    ):
        return 0.95
    if "driver: " not in text or not _DETECT_DRIVER_RE.search(text):
        return _detect_excerpt(text)
    bus = _DETECT_BUS_RE.search(text) is not None
    if bus and _DETECT_SUPPORTS_RE.search(text):
        return 0.95
    if bus or _DETECT_FW_RE.search(text):
        return 0.6
    return 0.0


def _detect_excerpt(text: str) -> float:
    """0.8 for an excerpt of the link block (three different link keys, no ``Settings for``
    line: a window, ``| grep -E 'Speed|Duplex|Link'``); 0.75 for ``ethtool -i`` from its second
    line (``bus-info`` with ``firmware-version`` or ``supports-*``); 0.7 for ethtool's speed and
    duplex lines alone."""
    if ("Duplex: " in text or "Link detected: " in text or "link modes:" in text) and len(
        {m.group(1)[:12] for m in _EXCERPT_KEY_RE.finditer(text)}
    ) >= 3:
        return 0.8
    if _DETECT_BUS_RE.search(text) and (
        _DETECT_FW_RE.search(text) or _DETECT_SUPPORTS_RE.search(text)
    ):
        return 0.75
    if "Mb/s" in text and _EXCERPT_SPEED_RE.search(text) and _EXCERPT_DUPLEX_RE.search(text):
        return 0.7
    return 0.0


_EXCERPT_SPEED_RE = re.compile(r"(?m)^[ \t]*+Speed: \d++Mb/s[ \t]*$")
_EXCERPT_DUPLEX_RE = re.compile(r"(?m)^[ \t]*+Duplex: (?:Full|Half|Unknown!)[ \t]*$")
"""ethtool's own forms of the two lines (``Speed: 25000Mb/s``, ``Duplex: Full``, netlink/ioctl
ethtool's dump_link_usettings): an excerpt that keeps only them is still ethtool's."""


def _yes_no(value: str) -> bool | None:
    v = value.strip().lower()
    return True if v in ("yes", "on") else False if v in ("no", "off") else None


def _set_link(rec: EthtoolLink, key: str, value: str) -> None:
    if key == "Speed":
        m = _SPEED_RE.match(value)
        rec.speed_mbps = int(m.group(1)) if m else None
    elif key == "Duplex":
        rec.duplex = value if value in ("Full", "Half") else None
    elif key == "Port":
        rec.port = value or None
    elif key == "Auto-negotiation":
        rec.autoneg = _yes_no(value)
    elif key == "Link detected":
        rec.link_detected = _yes_no(value)
    elif key in _MODE_KEYS:
        _add_modes(rec, _MODE_KEYS[key], value)
    else:
        rec.raw[key] = value


def _add_modes(rec: EthtoolLink, which: str, value: str) -> None:
    modes = [m for m in value.split() if m not in ("Not", "reported")]
    (rec.supported_modes if which == "supported" else rec.advertised_modes).extend(modes)


def _set_driver(rec: EthtoolDriver, key: str, value: str) -> None:
    v = value or None
    if key == "driver":
        rec.driver = v
    elif key == "version":
        rec.version = v
    elif key == "firmware-version":
        rec.firmware = v
    elif key == "expansion-rom-version":
        rec.expansion_rom = v
    elif key == "bus-info":
        rec.bus_info = v
    else:  # supports-*
        flag = _yes_no(value)
        if flag is not None:
            rec.supports[key.removeprefix("supports-")] = flag


@register(
    "ethtool-info",
    summary="ethtool IFACE (link settings: speed, duplex, link detected) and ethtool -i IFACE "
    "(driver, version, firmware-version, bus-info)",
    detect=_detect,
    refs=("S9", "S20"),
)
def parse_ethtool_info(text: str) -> ParseResult:
    """``ethtool IFACE`` / ``ethtool -i IFACE`` output (one or several blocks) →
    :class:`EthtoolLink` / :class:`EthtoolDriver` records; unreadable lines warn."""
    res = ParseResult("ethtool-info")
    link: EthtoolLink | None = None
    drv: EthtoolDriver | None = None
    last_key: str | None = None  # key of the link block a continuation line extends
    command_iface: str | None = None
    excerpt = False  # a link block without its header: its lines need not be indented
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped:
            continue
        m = _SETTINGS_RE.match(stripped)
        if m:
            link = EthtoolLink(line=lineno, interface=m.group(1))
            res.records.append(link)
            drv, last_key, command_iface, excerpt = None, None, None, False
            continue
        cmd = _COMMAND_RE.search(stripped)
        if cmd and ":" not in stripped.split("ethtool", 1)[1]:
            command_iface = cmd.group(2)
            link, drv, last_key = None, None, None
            continue
        if _STDERR_RE.match(stripped):
            continue
        kv = _KV_RE.match(stripped)
        indented = line[:1] in (" ", "\t")
        if link is None and drv is None and kv and kv.group(1) in _LINK_KEYS:
            # the link block without its "Settings for IFACE:" line (an excerpt): read as far
            # as it goes, the interface named by a command line above or unknown
            link = EthtoolLink(line=lineno, interface=command_iface or UNNAMED)
            res.records.append(link)
            unknown = "; interface unknown" if command_iface is None else ""
            res.warn(lineno, f"link settings without their 'Settings for' line{unknown}", line)
            excerpt = True
        in_link = indented or (excerpt and (kv is None or kv.group(1) != "driver"))
        if link is not None and in_link:
            if kv:
                last_key = kv.group(1)
                _set_link(link, last_key, (kv.group(2) or "").strip())
                link.end_line = lineno
            elif last_key is not None:  # continuation: more link modes, message-level names
                if last_key in _MODE_KEYS:
                    _add_modes(link, _MODE_KEYS[last_key], stripped)
                else:
                    link.raw[last_key] = f"{link.raw.get(last_key, '')} {stripped}".strip()
                link.end_line = lineno
            else:
                res.warn(lineno, "unreadable line in an ethtool link block", line)
            continue
        if kv and not indented:
            key, value = kv.group(1), (kv.group(2) or "").strip()
            if key == "driver":
                drv = EthtoolDriver(line=lineno, interface=command_iface, driver=value or None)
                res.records.append(drv)
                link, last_key, command_iface = None, None, None
                continue
            if drv is None and link is None and key in ("firmware-version", "bus-info"):
                # ``ethtool -i`` without its "driver:" line (an excerpt): read the rest
                drv = EthtoolDriver(line=lineno, interface=command_iface)
                res.records.append(drv)
            if drv is not None and (key in _DRIVER_KEYS or key.startswith("supports-")):
                _set_driver(drv, key, value)
                drv.end_line = lineno
                continue
        res.warn(lineno, "not an ethtool / ethtool -i line", line)
    return res
