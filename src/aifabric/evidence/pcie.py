"""PCIe evidence: ``lspci -vv``/``-vvv`` device blocks → :class:`PciDevice`, and kernel log lines
of mlx5 NICs and the PCI core (``dmesg``, ``dmesg -T``, ``journalctl -k``) → :class:`PcieBandwidth`
and :class:`KernelEvent`.

``lspci``: a device line at column 0 (``21:00.0 Ethernet controller: Mellanox ... (rev 01)``,
optionally with a domain ``0000:`` and ``-nn`` ``[0200]``/``[15b3:1021]`` ids) opens a block of
indented fields (tab or space indented, pciutils 3.x). Read: ``NUMA node``, ``IOMMU group``,
``DevCap: MaxPayload 512 bytes``, the ``MaxPayload 256 bytes, MaxReadReq 4096 bytes`` continuation
of ``DevCtl``, ``LnkCap: Port #0, Speed 16GT/s, Width x16``, ``LnkSta: Speed 8GT/s (downgraded),
Width x8 (downgraded)`` (older pciutils: ``(ok)`` markers or flags on the same line; ``Speed
unknown``), ``LnkCap2: Supported Link Speeds: 2.5-32GT/s``, ``LnkCtl2: Target Link Speed``,
``DevSta`` error bits, AER ``UESta``/``CESta`` bits that are set, ``ACSCap``/``ACSCtl`` bits,
``Kernel driver in use`` and ``Kernel modules``. Field lines without a device line (``lspci -vv |
grep LnkSta``, ``| grep ACSCtl``) give anonymous devices (a repeated field starts the next one).
Email quoting (``> ``) is removed. A known field whose value cannot be read (a cut-off
``LnkSta:`` line) and an unindented stray line inside a block are warned about.

PCIe generation from the transfer rate: 2.5 GT/s = Gen1, 5 = Gen2, 8 = Gen3, 16 = Gen4, 32 = Gen5,
64 = Gen6. ACS ``ReqRedir+``/``CmpltRedir+`` on a switch or root port above a GPU/NIC pair forces
peer-to-peer traffic up to the root complex, which breaks or slows GPUDirect RDMA (NCCL's
``IBV_WC_LOC_PROT_ERR`` hint).

``dmesg-mlx5``: any kernel log line of an ``mlx5_core``/``mlx5_ib`` device, of the PCI core's
bandwidth report (``pcie_print_link_status()``: ``63.008 Gb/s available PCIe bandwidth, limited
by 8.0 GT/s PCIe x8 link at 0000:17:00.0 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16
link)``, printed for any driver, older kernels without ``PCIe`` before the width), AER reports
(``PCIe Bus Error``, ``AER:``) and ``NETDEV WATCHDOG`` lines. Prefixes understood: ``[  12.345678]``
(monotonic seconds), ``[  12.3][ T13]`` (CONFIG_PRINTK_CALLER), ``[Sun Dec  1 14:54:40 2024]``
(``dmesg -T``), ``Nov 17 01:25:23 host kernel:`` (syslog/journalctl), ISO 8601 ``2024-05-01T12:00:00
.123+00:00 host kernel:`` (``journalctl -o short-iso``), OpenWrt ``logread``, ``dmesg -x``
(``kern  :info  : [...]``) and ``dmesg -H`` (``[Nov16 10:23]`` then ``[  +0.000252]`` deltas,
which carry no absolute time). The driver-core line ``mlx5_core: probe of 0000:03:00.0 failed``
gets its device from the message. Events are
classified (``firmware-version``, ``module-event``, ``link-up``, ``link-down``, ``cmd-timeout``,
``cmd-error``, ``health``, ``pcie-power``, ``aer``, ``probe-failed``, ``tx-timeout``, ``other``).
Unrelated log lines are skipped; a bandwidth or module-event line that cannot be read (truncated)
is warned about.

``setpci-acs``: the ACS Control register read with ``setpci -s BDF ECAP_ACS+0x6.w`` (the NCCL
troubleshooting guide's check,
https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html) or ``f2a.w``
on PLX switches, usually in a loop over bridges: each printed value becomes a
:class:`PciDevice` with ``acs_ctl`` decoded (``0x001d`` = SrcValid, ReqRedir, CmpltRedir,
UpstreamFwd: peer-to-peer redirected to the root complex).

Sources: https://man7.org/linux/man-pages/man8/lspci.8.html ;
https://man7.org/linux/man-pages/man8/setpci.8.html ; pciutils ``ls-caps.c``
(https://github.com/pciutils/pciutils) for the field layout; Linux ``drivers/pci/pci.c``
``__pcie_print_link_status()`` and ``drivers/net/ethernet/mellanox/mlx5/core/{events,health,
cmd}.c`` for the messages; captures listed in ``tests/fixtures/evidence/{lspci,dmesg-mlx5}/``.

Seed refs: S20 (a NIC or GPU trained at a lower PCIe speed/width caps RDMA bandwidth; ACS/P2P),
S22 (kernel log monitoring), S23 (baseline: Gen5 x16 for 400G NICs).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.registry import register

__all__ = [
    "KernelEvent",
    "PciDevice",
    "PcieBandwidth",
    "parse_dmesg_mlx5",
    "parse_lspci",
    "parse_setpci_acs",
    "pcie_generation",
]

_GEN = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}


def pcie_generation(speed_gts: float | None) -> int | None:
    """PCIe generation of a per-lane transfer rate in GT/s (2.5 → 1 … 64 → 6)."""
    if speed_gts is None:
        return None
    return _GEN.get(float(speed_gts))


# --------------------------------------------------------------------------------------------
# lspci


@dataclass(slots=True, kw_only=True)
class PciDevice(Record):
    """One ``lspci -vv`` device block."""

    record_type: ClassVar[str] = "pci_device"

    bdf: str | None
    """As printed (``21:00.0`` or ``0000:21:00.0``); ``None`` for grep excerpts."""
    address: str | None = None
    """With the domain: ``0000:21:00.0``."""
    device_class: str | None = None
    """``Ethernet controller``, ``3D controller``, ``PCI bridge``..."""
    description: str | None = None
    vendor_device_id: str | None = None
    """``15b3:1021`` when printed (``lspci -nn``)."""
    revision: str | None = None
    subsystem: str | None = None
    numa_node: int | None = None
    iommu_group: int | None = None
    kernel_driver: str | None = None
    kernel_modules: list[str] = field(default_factory=list)
    lnkcap_speed_gts: float | None = None
    lnkcap_width: int | None = None
    lnkcap_gen: int | None = None
    lnksta_speed_gts: float | None = None
    lnksta_width: int | None = None
    lnksta_gen: int | None = None
    speed_downgraded: bool | None = None
    """``(downgraded)`` printed, or the status speed below the capability."""
    width_downgraded: bool | None = None
    lnkcap2_max_speed_gts: float | None = None
    """Highest rate of ``LnkCap2: Supported Link Speeds: 2.5-32GT/s``."""
    target_link_speed_gts: float | None = None
    """``LnkCtl2: Target Link Speed``."""
    max_payload_cap_bytes: int | None = None
    max_payload_bytes: int | None = None
    max_read_request_bytes: int | None = None
    acs_cap: dict[str, bool] = field(default_factory=dict)
    acs_ctl: dict[str, bool] = field(default_factory=dict)
    """``{"SrcValid": True, "ReqRedir": True, "CmpltRedir": True, ...}``."""
    devsta_errors: list[str] = field(default_factory=list)
    """``DevSta`` bits that are set (``CorrErr``, ``UnsupReq``...)."""
    aer_uncorrectable: list[str] = field(default_factory=list)
    """``UESta`` bits that are set."""
    aer_correctable: list[str] = field(default_factory=list)
    """``CESta`` bits that are set."""

    @property
    def acs_redirect(self) -> bool:
        """ACS request or completion redirect enabled (peer-to-peer forced to the root)."""
        return bool(self.acs_ctl.get("ReqRedir") or self.acs_ctl.get("CmpltRedir"))


_QUOTE_RE = re.compile(r"^(?:>[ \t]?)+")
_DEV_RE = re.compile(
    r"^(?P<bdf>(?:(?P<dom>[0-9a-fA-F]{4,8}):)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+"
    r"(?P<rest>\S.*)$"
)
_LINK_RE = re.compile(
    r"Speed\s+(?P<speed>[\d.]+|unknown)\s*+(?:GT/s)?(?:\s*\((?P<sm>[a-z]+)\))?,\s*"
    r"Width\s+x(?P<w>\d+)(?:\s*\((?P<wm>[a-z]+)\))?",
    re.IGNORECASE,
)
_LNKCAP2_RE = re.compile(r"Supported Link Speeds:\s*(?:[\d.]+-)?(?P<max>[\d.]+)GT/s")
_TARGET_RE = re.compile(r"Target Link Speed:\s*(?P<s>[\d.]+)GT/s")
_MPS_RE = re.compile(r"MaxPayload\s+(?P<mps>\d+)\s+bytes(?:,\s*MaxReadReq\s+(?P<mrr>\d+)\s+bytes)?")
# Linear on any line: a search starts only at the beginning of a ``[\w.]`` run and skips to its
# first letter (the name the unanchored form found), instead of rescanning the run from each of
# its characters.
_FLAG_RE = re.compile(
    r"(?<![\w.])(?:(?![A-Za-z])[\w.])*+(?P<name>[A-Za-z][\w.]*+)(?P<v>[+-])(?=\s|,|$)"
)
_LINK_KEYS = frozenset({
    "LnkCap", "LnkSta", "LnkCap2", "LnkSta2", "LnkCtl2", "ACSCap", "ACSCtl", "DevCap", "DevCtl",
})  # fmt: skip
"""Fields a ``| grep`` excerpt keeps: read even when the paste lost their indentation (or a
documentation block's common indentation was removed). ``DevCtl`` carries MaxPayload and
MaxReadReq on its continuation line, which NIC tuning guides ask to check."""
_FIELD_RE = re.compile(r"^\s+(?P<key>[A-Za-z][\w ]*?\d?):\s*(?P<val>.*)$")
# the blanks before "[code]" are read from the start of their run only (or right after the first
# character), so the lazy class name does not rescan a long run of blanks at every character
_CLASS_RE = re.compile(
    r"^(?P<cls>[^:]+?)(?:(?:(?:(?<!\s)|(?<=^.))\s*+)?\[(?P<code>[0-9a-fA-F]{4})\])?:\s*"
    r"(?P<rest>.*)$"
)
_IDS_RE = re.compile(r"\[(?P<ids>[0-9a-fA-F]{4}:[0-9a-fA-F]{4})\]")
_REV_RE = re.compile(r"\(rev (?P<rev>[0-9a-fA-F]{2})\)")
_PROMPT_RE = re.compile(
    r"^\s*(?:[#$%]\s|[^\s@~]*[@~]\S*\s*[#$%]\s?|\S+ ~\s*[#$]\s|\^C|```|\[sudo\])"
)


def _set_flags(target: dict[str, bool], text: str) -> None:
    for m in _FLAG_RE.finditer(text):
        target[m.group("name")] = m.group("v") == "+"


def _set_bits(target: list[str], text: str) -> None:
    for m in _FLAG_RE.finditer(text):
        if m.group("v") == "+" and m.group("name") not in target:
            target.append(m.group("name"))


def _speed(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _apply_link(dev: PciDevice, which: str, val: str) -> bool:
    m = _LINK_RE.search(val)
    if m is None:
        return False
    speed, width = _speed(m.group("speed")), int(m.group("w"))
    if which == "cap":
        dev.lnkcap_speed_gts, dev.lnkcap_width = speed, width
        dev.lnkcap_gen = pcie_generation(speed)
    else:
        dev.lnksta_speed_gts, dev.lnksta_width = speed, width
        dev.lnksta_gen = pcie_generation(speed)
        dev.speed_downgraded = m.group("sm") == "downgraded" if m.group("sm") else None
        dev.width_downgraded = m.group("wm") == "downgraded" if m.group("wm") else None
    _compare_link(dev)
    return True


def _compare_link(dev: PciDevice) -> None:
    """Fill the downgrade flags from capability vs status when lspci printed no marker."""
    cs, ss = dev.lnkcap_speed_gts, dev.lnksta_speed_gts
    if dev.speed_downgraded is None and cs is not None and ss is not None:
        dev.speed_downgraded = ss < cs
    cw, sw = dev.lnkcap_width, dev.lnksta_width
    if dev.width_downgraded is None and cw is not None and sw is not None:
        dev.width_downgraded = sw < cw


_INDENTED_DEV_MAX = 8
"""Most leading columns (spaces; a tab counts 8) before a device line taken as indented."""


def _indented_device(line: str) -> re.Match[str] | None:
    """The device-line match of an indented ``BDF Class: description`` line, else ``None``.

    lspci prints the device line flush left and its fields one tab deeper; a capture pasted
    into a reStructuredText literal block or a Markdown list keeps that shape shifted right
    (``    5e:00.0 Ethernet controller: ...`` then ``\t    Subsystem: ...``). Only a shallow
    indent (at most :data:`_INDENTED_DEV_MAX` columns) followed by a BDF and a device class
    ending in ``:`` is taken, so a field value that happens to start with a bus address is not.
    """
    body = line.lstrip(" \t")
    indent = line[: len(line) - len(body)].expandtabs(8)
    if not indent or len(indent) > _INDENTED_DEV_MAX:
        return None
    m = _DEV_RE.match(body)
    if m is None:
        return None
    cm = _CLASS_RE.match(m.group("rest"))
    if cm is None or not cm.group("cls").strip() or not cm.group("rest"):
        return None
    return m


def _new_device(no: int, m: re.Match[str]) -> PciDevice:
    bdf = m.group("bdf")
    dev = PciDevice(line=no, bdf=bdf, address=bdf if m.group("dom") else f"0000:{bdf}")
    rest = m.group("rest")
    cm = _CLASS_RE.match(rest)
    if cm is not None:
        dev.device_class = cm.group("cls").strip()
        rest = cm.group("rest")
    ids = _IDS_RE.search(rest)
    if ids is not None:
        dev.vendor_device_id = ids.group("ids").lower()
    rev = _REV_RE.search(rest)
    if rev is not None:
        dev.revision = rev.group("rev")
    # blanks are taken from the start of their run only, and the note ends at its first ")" (what
    # the former "[^)]*(?:\[[^\]]*\])?\)" matched too, after trying every "[" on a failure)
    desc = re.sub(r"(?:(?<!\s)\s*+)?\((?:rev|prog-if) [^)]*+\)", "", rest).strip()
    dev.description = desc or None
    return dev


_INLINE_SPLIT_RE = re.compile(r"(?<![ \t])[ \t]++(?=Lnk(?:Cap|Sta)2?:)")


def _inline_link_fields(dev: PciDevice, line: str, state: dict[str, str]) -> None:
    """A device line that holds its link fields after the address, as a summary script prints
    them (``0002:01:00.0  LnkCap: Speed 32GT/s, Width x4    LnkSta: Speed 32GT/s, Width x2``,
    ``echo $bdf $(lspci -s $bdf -vv | grep -E 'LnkCap|LnkSta')``): the fields are read as if
    they were the device's indented lines, and the device has no class."""
    start = line.find(str(dev.device_class) + ":")
    for part in _INLINE_SPLIT_RE.split(line[start:]):
        key, _, val = part.partition(":")
        _apply_field(dev, key, val, state)
    dev.device_class = dev.description = None


def _apply_field(dev: PciDevice, key: str, val: str, state: dict[str, str]) -> bool:
    """Fold one field; False when a known field's value cannot be read."""
    k = key.strip()
    if k == "LnkCap":
        return _apply_link(dev, "cap", val)
    if k == "LnkSta":
        return _apply_link(dev, "sta", val)
    if k == "LnkCap2":
        m = _LNKCAP2_RE.search(val)
        if m:
            dev.lnkcap2_max_speed_gts = _speed(m.group("max"))
        return True
    if k == "LnkCtl2":
        m = _TARGET_RE.search(val)
        if m:
            dev.target_link_speed_gts = _speed(m.group("s"))
        return True
    if k == "DevCap":
        m = _MPS_RE.search(val)
        if m is None:
            return False
        dev.max_payload_cap_bytes = int(m.group("mps"))
        return True
    if k == "DevCtl":
        state["ctx"] = "DevCtl"
        return True
    if k == "DevSta":
        _set_bits(dev.devsta_errors, val)
        return True
    if k == "ACSCap":
        _set_flags(dev.acs_cap, val)
        state["ctx"] = "ACSCap"
        return True
    if k == "ACSCtl":
        _set_flags(dev.acs_ctl, val)
        state["ctx"] = "ACSCtl"
        return True
    if k == "UESta":
        _set_bits(dev.aer_uncorrectable, val)
        return True
    if k == "CESta":
        _set_bits(dev.aer_correctable, val)
        return True
    if k == "NUMA node":
        try:
            dev.numa_node = int(val.split(maxsplit=1)[0])
        except (ValueError, IndexError):
            return False
        return True
    if k == "IOMMU group":
        try:
            dev.iommu_group = int(val.split(maxsplit=1)[0])
        except (ValueError, IndexError):
            return False
        return True
    if k == "Kernel driver in use":
        dev.kernel_driver = val.strip() or None
        return True
    if k == "Kernel modules":
        dev.kernel_modules = [x.strip() for x in val.split(",") if x.strip()]
        return True
    if k == "Subsystem":
        dev.subsystem = val.strip() or None
        return True
    return True


_KNOWN = frozenset(
    {
        "LnkCap",
        "LnkSta",
        "LnkCap2",
        "LnkCtl2",
        "DevCap",
        "DevCtl",
        "DevSta",
        "ACSCap",
        "ACSCtl",
        "UESta",
        "CESta",
        "NUMA node",
        "IOMMU group",
        "Kernel driver in use",
        "Kernel modules",
        "Subsystem",
    }
)


_EXPRESS_KEYS = ("LnkCap2:", "LnkSta2:", "LnkCtl2:", "DevCap2:", "DevCtl2:", "DevSta:")
"""Fields of the PCI Express capability that ``lspci -vv`` prints after ``LnkSta``."""


def _detect_lspci(text: str) -> float:
    if "LnkCap:" in text or "LnkSta:" in text:
        return 0.95
    # the device line opens the capture, maybe after a prompt / command line or two
    head = [ln for ln in text.lstrip("\n").split("\n", 6)[:6] if ln.strip()][:3]
    if any(_DEV_RE.match(ln) is not None or _indented_device(ln) is not None for ln in head) and (
        "Capabilities: [" in text or "Kernel driver" in text or "Control: I/O" in text
    ):
        return 0.85
    if "DevCtl:" in text and "MaxReadReq" in text:
        return 0.9  # lspci -vvv | grep -A/-C DevCtl: only lspci prints these together
    if sum(1 for key in _EXPRESS_KEYS if key in text) >= 2:
        return 0.85  # a window of one device's PCI Express capability, its link lines cut
    if "Kernel driver in use:" in text or "ACSCtl:" in text:
        return 0.5
    titles = [m for ln in text.split("\n", 40)[:40] if (m := _DEV_RE.match(ln.strip()))]
    if len(titles) >= 3 and all(_title_class(m.group("rest")) for m in titles):
        return 0.8  # device title lines only (lspci, or lspci -vvv | grep VENDOR)
    return 0.0



_CLASS_ENDS = ("controller", "bridge", "Bridge", "device", "accelerator", "accelerators",
               "adapter", "peripheral", "processor", "Co-processor")
"""How the class names of ``lspci`` title lines end (pciutils' ``pci.ids`` classes: ``Ethernet
controller``, ``Infiniband controller``, ``3D controller``, ``PCI bridge``, ``Processing
accelerators``...), or ``Class XXXX`` / ``Unassigned class [XXXX]`` for unnamed ones."""


def _title_class(rest: str) -> bool:
    """``rest`` of a device line opens with a PCI class name and ``: ``."""
    cls, sep, _ = rest.partition(": ")
    if not sep or not cls[:1].isupper() or len(cls) > 60:
        return False
    return cls.endswith(_CLASS_ENDS) or cls.startswith(("Class ", "Unassigned class"))


_ACS_BITS = ("SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl",
             "DirectTrans")
"""ACS Control register bits 0..6 (PCIe Base Specification, ACS Extended Capability), named as
``lspci -vvv`` prints them on its ``ACSCtl:`` line (pciutils ``ls-ecaps.c``)."""

_SETPCI_ACS_RE = re.compile(
    r"\bsetpci\b[^\n]{0,300}?(?:ECAP_ACS\+(?:0x)?0*6|ECAP0*d\+(?:0x)?0*6|\bf2a)\.w\b(?!\s*=)",
    re.IGNORECASE,
)
"""A ``setpci`` that *reads* the ACS Control register: by capability name (``ECAP_ACS+0x6.w``,
the NCCL troubleshooting guide's form) or at 0xf2a, where PLX/Broadcom PEX switches keep it
(their ACS capability at 0xf24); ``...=0000`` writes are not reads."""
_SETPCI_VALUE_RE = re.compile(
    r"^(?:(?P<bdf>(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\b[^=\n]{0,80}=\s*)?"
    r"(?:0x)?(?P<val>[0-9a-fA-F]{4})\s*$"
)


def _detect_setpci_acs(text: str) -> float:
    head = text[:65536]
    if "setpci" not in head and "SETPCI" not in head:
        return 0.0
    return 0.9 if _SETPCI_ACS_RE.search(head) else 0.0


@register(
    "setpci-acs",
    summary="setpci -s BDF ECAP_ACS+0x6.w (or f2a.w on PLX switches): ACS Control values",
    detect=_detect_setpci_acs,
    refs=("S20",),
)
def parse_setpci_acs(text: str) -> ParseResult:
    """The ACS Control values a ``setpci`` read printed (a loop over bridges prints one 4-digit
    hex value per device; ``-v`` prefixes the device) → one :class:`PciDevice` per value with
    ``acs_ctl`` decoded, so the ACS redirect checks read them as they read ``lspci -vvv``.
    Values only count after a ``setpci`` read command; other lines end the run."""
    result = ParseResult("setpci-acs")
    reading = False
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip().lstrip("> ").strip()
        if not line:
            continue
        if _SETPCI_ACS_RE.search(line):
            reading = True
            continue
        m = _SETPCI_VALUE_RE.match(line)
        if reading and m is not None:
            value = int(m["val"], 16)
            dev = PciDevice(line=no, bdf=m["bdf"])
            dev.acs_ctl = {name: bool(value >> bit & 1) for bit, name in enumerate(_ACS_BITS)}
            result.records.append(dev)
            continue
        if reading and ("password" in line.lower() or line.startswith("[sudo]")):
            continue  # sudo's prompt between the command and its output
        reading = False
    return result


@register(
    "lspci",
    summary="lspci -vv / lspci -vvv -s BDF",
    detect=_detect_lspci,
    refs=("S20", "S23"),
)
def parse_lspci(text: str) -> ParseResult:
    """Parse ``lspci -vv`` output into :class:`PciDevice` records."""
    result = ParseResult("lspci")
    dev: PciDevice | None = None
    last = 0
    state: dict[str, str] = {}

    def close() -> None:
        nonlocal dev
        if dev is not None:
            _compare_link(dev)
            dev.end_line = max(dev.line, last)
            result.records.append(dev)
            dev = None

    for no, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip()
        if line.startswith(">"):
            line = _QUOTE_RE.sub("", line)
        if not line.strip():
            close()
            continue
        if not line[0].isspace():
            m = _DEV_RE.match(line)
            if m is not None:
                close()
                dev = _new_device(no, m)
                state = {}
                last = no
                if dev.device_class in ("LnkCap", "LnkSta"):
                    _inline_link_fields(dev, line, state)
                continue
            lone = _FIELD_RE.match(" " + line)
            lone_key = lone.group("key").strip() if lone is not None else ""
            if lone_key in _LINK_KEYS or (
                lone_key in _KNOWN and (dev is None or dev.bdf is None)
            ):  # fmt: skip
                # a grep excerpt whose indentation the paste lost ("LnkSta:\tSpeed 8GT/s..."):
                # read as the indented field it is
                line = " " + line
            else:
                if dev is not None and not _PROMPT_RE.match(line):
                    result.warn(no, "expected an indented field line or a device line", line)
                continue
        im = _indented_device(line)
        if im is not None:
            # the whole capture indented (a documentation literal block, a list item): the
            # device line keeps its class ("Ethernet controller:"), which no field line has
            close()
            dev = _new_device(no, im)
            state = {}
            last = no
            continue
        fm = _FIELD_RE.match(line)
        if fm is None:
            # continuation of the previous field (DevCtl's MaxPayload/MaxReadReq, wrapped flags)
            if dev is not None:
                if state.get("ctx") == "DevCtl" and "MaxReadReq" in line:
                    mm = _MPS_RE.search(line)
                    if mm is not None and mm.group("mrr"):
                        dev.max_payload_bytes = int(mm.group("mps"))
                        dev.max_read_request_bytes = int(mm.group("mrr"))
                    else:
                        result.warn(no, "could not read DevCtl MaxPayload/MaxReadReq", line)
                elif state.get("ctx") == "ACSCtl":
                    _set_flags(dev.acs_ctl, line)
                last = no
            continue
        key, val = fm.group("key").strip(), fm.group("val")
        if key not in _KNOWN:
            state["ctx"] = key
            if dev is not None:
                last = no
            continue
        if dev is None:
            dev = PciDevice(line=no, bdf=None)
            state = {}
        elif key in {"LnkCap", "LnkSta"} and dev.bdf is None:
            have = dev.lnkcap_speed_gts if key == "LnkCap" else dev.lnksta_speed_gts
            have_w = dev.lnkcap_width if key == "LnkCap" else dev.lnksta_width
            if have is not None or have_w is not None:  # next device of a grep excerpt
                close()
                dev = PciDevice(line=no, bdf=None)
                state = {}
        elif (
            key in {"ACSCap", "ACSCtl"}
            and dev.bdf is None
            and (dev.acs_ctl or (key == "ACSCap" and dev.acs_cap))
        ):  # next device of `lspci -vvv | grep ACSCtl`
            close()
            dev = PciDevice(line=no, bdf=None)
            state = {}
        last = no
        state["ctx"] = key
        if not _apply_field(dev, key, val, state):
            result.warn(no, f"could not read the {key} field", line)
    close()
    return result


# --------------------------------------------------------------------------------------------
# dmesg-mlx5


@dataclass(slots=True, kw_only=True)
class _KernelLine(Record):
    """Common prefix fields of a kernel log record."""

    time_s: float | None = None
    """Seconds since boot (``[  12.345678]``)."""
    wallclock: str | None = None
    """Wall-clock stamp as printed (``Nov 17 01:25:23``, ``2024-05-01T12:00:00+00:00``...)."""
    host: str | None = None
    driver: str | None = None
    """``mlx5_core``, ``pci``, ``pcieport``..."""
    device: str | None = None
    """PCI address ``0000:b3:00.1`` (or another device name such as ``mlx5_0``)."""
    netdev: str | None = None


@dataclass(slots=True, kw_only=True)
class PcieBandwidth(_KernelLine):
    """``pcie_print_link_status()``: the PCIe bandwidth a device got, and what limits it."""

    record_type: ClassVar[str] = "pcie_bandwidth"

    available_gbps: float
    speed_gts: float | None = None
    """Per-lane rate of the limiting (or own) link; ``None`` for ``Unknown``."""
    width: int | None = None
    gen: int | None = None
    limited: bool = False
    """True for the ``limited by ... at BDF`` form: an upstream link is narrower/slower."""
    limiting_device: str | None = None
    capable_gbps: float | None = None
    capable_speed_gts: float | None = None
    capable_width: int | None = None
    capable_gen: int | None = None


@dataclass(slots=True, kw_only=True)
class KernelEvent(_KernelLine):
    """One classified mlx5/AER kernel message."""

    record_type: ClassVar[str] = "kernel_event"

    category: str
    message: str
    module: int | None = None
    """Port module number of a ``Port module event``."""
    module_status: str | None = None
    """``Cable plugged``, ``Cable unplugged``, ``Power budget exceeded``..."""
    fw_version: str | None = None
    syndrome: str | None = None
    """``0x1`` of ``synd 0x1: firmware internal error`` / ``syndrome (0x5fa1c)``."""


_TS_MONO_RE = re.compile(r"^\[\s*(?P<t>\d+\.\d+)\](?:\s*\[\s*[TC]\d+\])?\s*")
_TS_REL_RE = re.compile(
    r"^\[(?:(?P<w>[A-Z][a-z]{2}\s*\d+ \d\d:\d\d)|\s*\+\d+\.\d+)\](?:\s*\[\s*[TC]\d+\])?\s*"
)
"""``dmesg -H`` / ``--reltime``: ``[Nov16 10:23]`` on the first line of a minute, then
``[  +0.000004]`` deltas (no absolute time on those lines)."""
_FACILITY_RE = re.compile(r"^(?:kern|user|daemon|syslog|local\d)\s*:\s*[a-z]+\s*:\s")
"""``dmesg -x`` prefix: ``kern  :info  : [  9.71] ...``."""
_PROBE_DEV_RE = re.compile(
    r"probe of (?P<dev>(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])"
)
_TS_HUMAN_RE = re.compile(
    r"^\[(?P<w>(?:[A-Z][a-z]{2} )?[A-Z][a-z]{2} [A-Z][a-z]{2}\s+\d+ \d\d:\d\d:\d\d(?: \d{4})?)\]\s*"
)
_SYSLOG_RE = re.compile(
    r"^(?P<w>(?:[A-Z][a-z]{2} )?[A-Z][a-z]{2}\s+\d+ \d\d:\d\d:\d\d(?: \d{4})?"
    r"|\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)"
    r"\s+(?:(?!kern\.)(?P<host>\S+)\s+)?(?:kern\.\w+\s+)?kernel:\s*"
)
_MSG_RE = re.compile(
    r"^(?P<drv>[\w.-]+) (?P<dev>(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"
    r"|mlx5_\d+)(?: (?P<nd>[\w.@-]+))?: (?P<msg>.*)$"
)
_BW_RE = re.compile(
    r"(?<!\d)(?P<avail>\d++(?:\.\d++)?) Gb/s available PCIe bandwidth"  # from a run's first digit
    r"(?:, limited by (?P<ls>[\d.]+ GT/s|Unknown(?: speed)?) (?:PCIe )?x(?P<lw>\d+) link at "
    r"(?P<at>[0-9a-fA-F:.]+) \(capable of (?P<cap>\d+(?:\.\d+)?) Gb/s with "
    r"(?P<cs>[\d.]+ GT/s|Unknown(?: speed)?) (?:PCIe )?x(?P<cw>\d+) link\)"
    r"| \((?P<os>[\d.]+ GT/s|Unknown(?: speed)?) (?:PCIe )?x(?P<ow>\d+) link\))"
)
_I40E_LINK_RE = re.compile(r"PCI-Express: Speed (?P<s>[\d.]+ ?GT/s|Unknown) Width x(?P<w>\d+)")
"""The Intel i40e/ice probe line ``PCI-Express: Speed 8.0GT/s Width x8`` (i40e_main.c)."""


def pcie_lane_gbps(speed_gts: float) -> float:
    """Usable Gb/s of one lane at ``speed_gts``: 8b/10b encoding up to 5 GT/s (80%), 128b/130b
    from 8 GT/s, in whole Mb/s as the kernel's ``PCIE_SPEED2MBS_ENC`` computes it
    (drivers/pci/pci.h: 8000*128/130 = 7876 Mb/s at 8 GT/s), so the figure matches what
    ``pcie_print_link_status()`` prints for the same link (63.008 Gb/s for 8 GT/s x8). The
    verdicts' exact figure (checks/diagnose/verdicts_pcie.py ``_raw_gbps``, the catalog's
    encoding efficiency) differs from this in the last digits on purpose: a record read from a
    driver line should carry the figure the kernel itself would have printed."""
    mbps = int(speed_gts * 1000)
    return (mbps * 8 // 10 if speed_gts < 8 else mbps * 128 // 130) / 1000


_MODULE_RE = re.compile(r"Port module event(?:\[error\])?: module (?P<m>\d+), (?P<s>.*\S|\s)\s*$")
_FW_RE = re.compile(r"firmware version: (?P<v>\d+\.\d+\.\d+)")
_BAR_FAIL_RE = re.compile(r"\bBAR \d+(?: \[[^\]]*\])?: (?:failed to assign|no space for)")
"""The PCI core could not place a BAR (setup-bus.c ``pdev_assign_resources_sorted`` /
``__assign_resources_sorted``: ``BAR 7: no space for [mem size 0x01000000 64bit pref]``,
``BAR 7: failed to assign ...``): the device, or its SR-IOV VFs (BAR 7-12), cannot be used."""
_LINK_STATE_RE = re.compile(
    r"^(?:NIC )?Link is (?:(?P<up>Up)|Down)\b|^Link (?:(?P<up2>up)|down)\b"
)
"""A NIC driver's carrier report at the start of its message: the Intel drivers' ``NIC Link is
Up 10 Gbps`` / ``NIC Link is Down`` (ixgbe, i40e, ice, igb, e1000e), phylib's and bnxt's
``Link is Up - 1Gbps/Full`` / ``Link is Down``, mlx5e's ``Link up`` / ``Link down``."""
_SYND_RE = re.compile(r"\bsynd(?:rome)?\s*\(?(?P<s>0x[0-9a-fA-F]+)")
_CATEGORIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("module-event", ("Port module event",)),
    ("firmware-version", ("firmware version:",)),
    ("link-up", ("Link up",)),
    ("link-down", ("Link down",)),
    ("tx-timeout", ("NETDEV WATCHDOG", "TX timeout", "tx timeout")),
    ("cmd-timeout", ("timeout", "No done completion", "recovered after timeout")),
    ("health", ("health", "poll_health", "unrecoverable", "fw_ver", "assert_", "synd ")),
    ("pcie-power", ("mlx5_pcie_event", "PCIe slot")),
    ("aer", ("AER:", "PCIe Bus Error", "pcieport")),
    ("probe-failed", ("probe of", "load_one failed", "init_one")),
    ("cmd-error", ("cmd_work_handler", "mlx5_cmd_out_err", "mlx5_cmd_check", "failed, status")),
)


def _speed_of(text: str | None) -> float | None:
    if not text or text.startswith("Unknown"):
        return None
    return _speed(text.split()[0])


def _stamp(rec: _KernelLine, stamp: dict[str, Any]) -> None:
    rec.time_s, rec.wallclock, rec.host = stamp["time_s"], stamp["wallclock"], stamp["host"]


def _category(msg: str) -> str:
    for name, needles in _CATEGORIES:
        if any(n in msg for n in needles):
            return name
    return "other"


def _detect_dmesg(text: str) -> float:
    if "available PCIe bandwidth" in text:
        return 0.9
    if "mlx5_core 0000:" in text or "mlx5_core 000" in text:
        return 0.9
    if "PCIe Bus Error: severity=" in text or "AER: Corrected error received" in text:
        return 0.8  # the PCIe AER driver's report (drivers/pci/pcie/aer.c), with or without stamps
    if "mlx5_core" in text and ("kernel:" in text or "] mlx5" in text):
        return 0.6
    if ("[" in text or "kernel:" in text) and _BDF_LITERAL_RE.search(text) and (
        (_PCI_KERNEL_LINE_RE if "kernel:" in text else _PCI_DMESG_LINE_RE).search(text)
    ):
        return 0.6  # kernel log lines of a PCI device (the PCI core, any NIC driver)
    return 0.0


_BDF_LITERAL_RE = re.compile(
    r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7](?:: | [\w.\-@]{1,16}+: )"
)
"""A PCI address as the kernel's dev_*() prefix prints it (``0000:01:00.0: ``), or the
netdev_*() prefix with the interface after it (``0000:01:00.0 eth2: ``)."""
_PCI_DMESG_LINE_RE = re.compile(
    r"(?m)^[ \t]*+\[\s*\d+\.\d+\] ?[\w.-]+ [0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]"
    r"(?:: | [\w.\-@]{1,16}+: )"
)
""":data:`_PCI_KERNEL_LINE_RE` without its journal branch, for text with no ``kernel:``."""
_PCI_KERNEL_LINE_RE = re.compile(
    r"(?m)^[ \t]*+(?:\[\s*\d+\.\d+\]|.{0,60}\bkernel:(?: \[\s*\d+\.\d+\])?) ?[\w.-]+ "
    r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7](?:: | [\w.\-@]{1,16}+: )"
)


_STAMPED_RE = re.compile(
    r"^[ \t]*+(?:> ?)?(?:\[|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d |\d{4}-\d\d-\d\d[T ]\d)"
)
"""A kernel log line's start: dmesg's ``[  12.345678]``, a syslog or journal date."""


def _unwrapped(lines: list[str]) -> list[tuple[int, str]]:
    """(file line, text) of each kernel message, a line a mail client wrapped joined back to
    the line it continues: when most lines start with a timestamp, a non-blank line without one
    continues the message above it (``... 31.504 Gb/s available PCIe`` / ``bandwidth (8 GT/s x4
    link)``). Text where few lines carry a timestamp is left as it is."""
    nonblank = [x for x in lines if x.strip()]
    stamped = sum(1 for x in nonblank if _STAMPED_RE.match(x))
    if stamped < 2 or stamped < 0.6 * len(nonblank) or stamped == len(nonblank):
        return list(enumerate(lines, 1))
    out: list[tuple[int, str]] = []
    for no, raw in enumerate(lines, 1):
        if out and raw.strip() and not _STAMPED_RE.match(raw) and out[-1][1].strip():
            out[-1] = (out[-1][0], out[-1][1].rstrip() + " " + raw.strip())
        else:
            out.append((no, raw))
    return out


@register(
    "dmesg-mlx5",
    summary="dmesg / journalctl -k lines of mlx5_core and the PCI core (bandwidth, module events)",
    detect=_detect_dmesg,
    refs=("S20", "S22"),
)
def parse_dmesg_mlx5(text: str) -> ParseResult:
    """Parse kernel log lines into :class:`PcieBandwidth` and :class:`KernelEvent` records."""
    result = ParseResult("dmesg-mlx5")
    for no, raw in _unwrapped(text.split("\n")):
        line = raw.strip()
        if not line:
            continue
        if line.startswith(">"):
            line = _QUOTE_RE.sub("", line).strip()
        if ("mlx5" not in line and "PCIe" not in line and "AER" not in line
                and "BAR " not in line and "PCI-Express" not in line
                and "Link " not in line):  # fmt: skip
            continue  # cheap prefilter: unrelated kernel lines
        if _PROMPT_RE.match(line):
            continue
        fm = _FACILITY_RE.match(line)
        if fm is not None:
            line = line[fm.end() :]
        time_s: float | None = None
        wall: str | None = None
        host: str | None = None
        m = _SYSLOG_RE.match(line)
        if m is not None:
            wall, host = m.group("w"), m.group("host")
            line = line[m.end() :]
        m = _TS_HUMAN_RE.match(line)
        if m is not None:
            wall = m.group("w")
            line = line[m.end() :]
            if line.startswith("[") and "]" in line[:40]:
                line = line[line.index("]") + 1 :].lstrip()
                if not line:
                    continue
        m = _TS_MONO_RE.match(line)
        if m is not None:
            time_s = float(m.group("t"))
            line = line[m.end() :]
        else:
            m = _TS_REL_RE.match(line)
            if m is not None:
                wall = m.group("w") or wall
                line = line[m.end() :]
        mm = _MSG_RE.match(line)
        if mm is not None:
            drv, dev, nd, msg = mm.group("drv"), mm.group("dev"), mm.group("nd"), mm.group("msg")
        else:
            head = line.split(":", 1)[0].split() if ":" in line else []
            drv = head[0].rstrip(",") if head else None
            pm = _PROBE_DEV_RE.search(line)
            dev, nd, msg = (pm.group("dev") if pm else None), None, line
        stamp = {"time_s": time_s, "wallclock": wall, "host": host}
        if "available PCIe bandwidth" in msg:
            bw = _BW_RE.search(msg)
            if bw is None:
                result.warn(no, "could not read the PCIe bandwidth report", raw)
                continue
            if bw.group("avail") and bw.group("ls"):
                spd, wid = _speed_of(bw.group("ls")), int(bw.group("lw"))
                cap_s, cap_w = _speed_of(bw.group("cs")), int(bw.group("cw"))
                rec = PcieBandwidth(
                    line=no,
                    driver=drv,
                    device=dev,
                    netdev=nd,
                    available_gbps=float(bw.group("avail")),
                    speed_gts=spd,
                    width=wid,
                    gen=pcie_generation(spd),
                    limited=True,
                    limiting_device=bw.group("at"),
                    capable_gbps=float(bw.group("cap")),
                    capable_speed_gts=cap_s,
                    capable_width=cap_w,
                    capable_gen=pcie_generation(cap_s),
                )
            else:
                spd, wid = _speed_of(bw.group("os")), int(bw.group("ow"))
                avail = float(bw.group("avail"))
                rec = PcieBandwidth(
                    line=no,
                    driver=drv,
                    device=dev,
                    netdev=nd,
                    available_gbps=avail,
                    speed_gts=spd,
                    width=wid,
                    gen=pcie_generation(spd),
                    capable_gbps=avail,
                    capable_speed_gts=spd,
                    capable_width=wid,
                    capable_gen=pcie_generation(spd),
                )
            _stamp(rec, stamp)
            result.records.append(rec)
            continue
        im = _I40E_LINK_RE.search(msg) if "PCI-Express: Speed" in msg else None
        if im is not None:
            # i40e/ice's own link report: the link as trained, its capability not said
            spd, wid = _speed_of(im.group("s").replace("GT/s", " GT/s")), int(im.group("w"))
            rec = PcieBandwidth(
                line=no, driver=drv, device=dev, netdev=nd,
                available_gbps=round(pcie_lane_gbps(spd) * wid, 3) if spd else 0.0,
                speed_gts=spd, width=wid, gen=pcie_generation(spd),
            )  # fmt: skip
            _stamp(rec, stamp)
            result.records.append(rec)
            continue
        stamped = time_s is not None or wall is not None
        is_mlx5 = (
            "mlx5_core" in line
            or "mlx5_ib" in line
            or (mm is not None and ("mlx5" in (drv or "") or (dev or "").startswith("mlx5")))
            or (stamped and "mlx5" in line)
        )
        is_aer = "AER:" in msg or "PCIe Bus Error" in msg
        is_bar = _BAR_FAIL_RE.search(msg) is not None
        link = _LINK_STATE_RE.search(msg) if dev and "ink" in msg else None
        if not (is_mlx5 or is_aer or is_bar or link):
            continue
        category = "aer" if is_aer else "bar-assign" if is_bar else _category(msg)
        if link is not None and not is_mlx5:
            category = "link-up" if (link["up"] or link["up2"]) else "link-down"
        ev = KernelEvent(
            line=no,
            driver=drv,
            device=dev,
            netdev=nd,
            category=category,
            message=msg,
        )
        if ev.category == "module-event":
            me = _MODULE_RE.search(msg)
            if me is None:
                result.warn(no, "could not read the port module event", raw)
                continue
            ev.module, ev.module_status = int(me.group("m")), me.group("s")
        elif ev.category == "firmware-version":
            fv = _FW_RE.search(msg)
            ev.fw_version = fv.group("v") if fv else None
        elif "fw_ver " in msg and "raw" not in msg:
            ev.fw_version = msg.rsplit("fw_ver", 1)[1].strip() or None
        sy = _SYND_RE.search(msg)
        if sy is not None:
            ev.syndrome = sy.group("s")
        _stamp(ev, stamp)
        result.records.append(ev)
    return result
