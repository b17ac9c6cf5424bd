"""FreeBSD ``pciconf -lvc`` (and ``-lc``, ``-lvvc``) → :class:`~aifabric.evidence.pcie.PciDevice`.

FreeBSD has no lspci; its admins paste ``pciconf``. The device line is
``NAME@pciD:B:S:F:<TAB>class=0x020000 [card=0x... chip=0x...|rev=0x00 hdr=0x00 vendor=0x15b3
device=0x1003 subvendor=... subdevice=...]``, ``-v`` adds ``vendor = '...'``, ``device =
'...'``, ``class = ...`` lines, and ``-c`` lists the capabilities, among them the PCI Express one:

    cap 10[60] = PCI-Express 2 endpoint max data 256(512)
                 max read 4096
                 link x2(x8) speed 8.0(8.0) ASPM disabled(L0s)

``link xW(xM)`` is the negotiated width and, in parentheses, the maximum the device supports;
``speed S(M)`` the same for the rate in GT/s (``0.0`` when the link is down). Older releases
print ``link x8(x8)`` alone on the capability line and no speed. Source: FreeBSD
``usr.sbin/pciconf/cap.c`` (``cap_express``: ``printf(" link x%d(x%d)", ...)``, ``printf(" speed
%s(%s)", ...)``) and ``pciconf.c`` (the device line), https://github.com/freebsd/freebsd-src.

The records are the ones ``lspci`` gives, so every PCIe verdict (a link below its capability)
reads both.
"""

from __future__ import annotations

import re

from aifabric.evidence.base import ParseResult
from aifabric.evidence.pcie import PciDevice, _compare_link
from aifabric.evidence.registry import register

__all__ = ["parse_pciconf"]

_DEV_RE = re.compile(
    r"^\s*(?P<name>[\w.\-]+@pci(?P<dom>\d+):(?P<bus>\d+):(?P<slot>\d+):(?P<func>\d+)):\s+"
    r"(?P<rest>class=0x[0-9a-fA-F]+.*)$"
)
_IDS_RE = re.compile(r"\bvendor=0x(?P<v>[0-9a-fA-F]{4})\s+device=0x(?P<d>[0-9a-fA-F]{4})")
_CHIP_RE = re.compile(r"\bchip=0x(?P<d>[0-9a-fA-F]{4})(?P<v>[0-9a-fA-F]{4})")
_REV_RE = re.compile(r"\brev=0x(?P<rev>[0-9a-fA-F]{2})")
_DESC_RE = re.compile(r"^\s+(?P<key>vendor|device|class|subclass)\s+=\s+'?(?P<val>[^']*)'?\s*$")
_LINK_RE = re.compile(r"\blink x(?P<w>\d+)\(x(?P<mw>\d+)\)")
_SPEED_RE = re.compile(r"\bspeed (?P<s>\d+(?:\.\d+)?)\((?P<ms>\d+(?:\.\d+)?)\)")
_DETECT_RE = re.compile(r"@pci\d+:\d+:\d+:\d+:\s+class=0x", re.MULTILINE)


def _detect(text: str) -> float:
    """0.95 for a ``NAME@pciD:B:S:F: class=0x...`` device line (only pciconf prints it)."""
    if "@pci" not in text or "class=0x" not in text:
        return 0.0
    return 0.95 if _DETECT_RE.search(text) else 0.0


@register(
    "pciconf",
    summary="pciconf -lvc (FreeBSD): PCI devices and their PCI Express link width and speed",
    detect=_detect,
    refs=("S20", "S23"),
)
def parse_pciconf(text: str) -> ParseResult:
    """``pciconf -l[v][v]c`` → one :class:`PciDevice` per device line, with the PCI Express
    link (width and speed, negotiated and maximum) when its capability is listed."""
    result = ParseResult("pciconf")
    dev: PciDevice | None = None

    def close() -> None:
        if dev is not None:
            _compare_link(dev)

    for no, line in enumerate(text.splitlines(), 1):
        m = _DEV_RE.match(line)
        if m is not None:
            close()
            bdf = f"{int(m.group('bus')):02x}:{int(m.group('slot')):02x}.{m.group('func')}"
            dev = PciDevice(
                line=no, bdf=bdf, address=f"{int(m.group('dom')):04x}:{bdf}",
                description=m.group("name"),
            )  # fmt: skip
            rest = m.group("rest")
            ids = _IDS_RE.search(rest)
            chip = _CHIP_RE.search(rest) if ids is None else None
            found = ids or chip
            if found is not None:
                dev.vendor_device_id = f"{found.group('v')}:{found.group('d')}".lower()
            rev = _REV_RE.search(rest)
            if rev is not None:
                dev.revision = rev.group("rev")
            result.records.append(dev)
            continue
        if dev is None:
            continue
        d = _DESC_RE.match(line)
        if d is not None:
            key, val = d.group("key"), d.group("val").strip()
            if key == "device":
                dev.description = val or dev.description
            elif key == "class" and dev.device_class is None:
                dev.device_class = val or None
            dev.end_line = no
            continue
        link = _LINK_RE.search(line)
        if link is not None:
            dev.lnksta_width, dev.lnkcap_width = int(link.group("w")), int(link.group("mw"))
            dev.end_line = no
        speed = _SPEED_RE.search(line)
        if speed is not None:
            dev.lnksta_speed_gts = float(speed.group("s"))
            dev.lnkcap_speed_gts = float(speed.group("ms"))
            dev.end_line = no
    close()
    if not result.records and text.strip():
        result.warn(None, "no pciconf device line (NAME@pciD:B:S:F: class=0x...)")
    return result
