"""Interface addresses and state: ``ip addr`` (iproute2) and ``ifconfig`` (net-tools, BSD/macOS)
→ :class:`~aifabric.evidence.linux_net.IpLink` records, so the interface checks (no carrier, MTU
below the fabric's) read them exactly as they read ``ip link``.

Kind ``ip-addr`` reads:

* ``ip [-4|-6] addr show [dev IFACE]`` / ``ip a``: the ``ip link`` interface lines plus
  ``inet ADDR/PREFIX ... scope ...`` / ``inet6 ...`` and ``valid_lft`` lines, and ``ip -j addr``
  JSON (``addr_info``). Parsed by :func:`~aifabric.evidence.linux_net.parse_ip_lines`.
* ``ifconfig`` as net-tools >= 2.10 prints it (``eth0: flags=4163<UP,BROADCAST,RUNNING,MULTICAST>
  mtu 1500``; ``inet A  netmask M  broadcast B``; ``inet6 A  prefixlen N  scopeid ...``; ``ether
  MAC  txqueuelen N  (Ethernet)`` or ``infiniband HW ... (InfiniBand)``; ``RX packets N  bytes
  N (...)``; ``RX errors N  dropped N  overruns N  frame N``; ``TX errors N  dropped N overruns N
  carrier N  collisions N``), the older net-tools form (``eth0  Link encap:Ethernet  HWaddr
  MAC``; ``inet addr:A  Bcast:B  Mask:M``; ``UP BROADCAST RUNNING MULTICAST  MTU:1500
  Metric:1``; ``RX packets:N errors:N dropped:N overruns:N frame:N``; ``collisions:N
  txqueuelen:N``) and the BSD/macOS form (``en0: flags=8863<...> mtu 1500``, netmask in hex,
  ``status: active``).

Counters take the kernel's ``/sys/class/net/X/statistics`` names, following net-tools'
``ife_print_long`` (lib/interface.c): RX ``overruns`` is ``rx_fifo_errors``, ``frame``
``rx_frame_errors``; TX ``overruns`` is ``tx_fifo_errors``, ``carrier`` ``tx_carrier_errors``.
ifconfig has no operational state: ``RUNNING`` (IFF_RUNNING, which Linux sets while the
operational state is up, netdevice(7)) stands for the carrier, so the state is ``UP`` with it and
``DOWN`` without. Sources: net-tools ``ifconfig.c`` and ``lib/interface.c``
(https://sourceforge.net/p/net-tools/code/ci/master/tree/lib/interface.c); ip-address(8)
https://man7.org/linux/man-pages/man8/ip-address.8.html; netdevice(7)
https://man7.org/linux/man-pages/man7/netdevice.7.html; the captures under
``tests/fixtures/evidence/ip-addr/``.

Seed refs: S11/S21 (MTU per interface), S16/S20 (link state), S20/S22 (error and drop counters).
"""

from __future__ import annotations

import ipaddress
import re

from aifabric.evidence.base import ParseResult
from aifabric.evidence.linux_net import IpLink, brief_lines, parse_ip_lines
from aifabric.evidence.registry import register

__all__ = ["parse_ip_addr"]

_NEW_HEAD_RE = re.compile(
    r"^(?P<name>[^\s:]+(?::\d+)?):\s+flags=(?P<code>\d+)<(?P<flags>[^>]*)>(?P<rest>.*)$"
)
"""``eth0: flags=4163<UP,BROADCAST,RUNNING,MULTICAST>  mtu 1500`` (also BSD ``mtu 1500``)."""
_OLD_HEAD_RE = re.compile(r"^(?P<name>\S+)\s+Link encap:(?P<encap>.*)$")
"""``eth0      Link encap:Ethernet  HWaddr 00:0c:29:aa:bb:cc``."""
_OLD_MTU_RE = re.compile(r"(?<!\S)MTU:(\d+)")
_PAIR_RE = re.compile(r"(?<![A-Za-z])(?P<key>[A-Za-z]++):?\s*+(?P<val>\d++)(?=\s|\(|$)")
_IP_ADDR_LINE_RE = re.compile(r"^[ \t]+inet6? [0-9a-fA-F.:]+/\d+", re.MULTILINE)
_IP_IF_RE = re.compile(r"^\s*(?:\d+:\s+)?[^\s:@]+(?:@[^\s:]+)?:\s+<[A-Z_,-]*>", re.MULTILINE)
_IFCONFIG_RE = re.compile(r"^[^\s:]+(?::\d+)?:\s+flags=\d+<|^\S+\s+Link encap:", re.MULTILINE)

_ENCAP = {
    "ethernet": "ether", "local loopback": "loopback", "infiniband": "infiniband",
    "unspec": "none", "point-to-point protocol": "ppp",
}  # fmt: skip
_HW_WORDS = {"ether": "ether", "infiniband": "infiniband", "loop": "loopback", "unspec": "none"}
_RX_KEYS = {
    "packets": "rx_packets", "bytes": "rx_bytes", "errors": "rx_errors", "dropped": "rx_dropped",
    "overruns": "rx_fifo_errors", "frame": "rx_frame_errors",
}  # fmt: skip
_TX_KEYS = {
    "packets": "tx_packets", "bytes": "tx_bytes", "errors": "tx_errors", "dropped": "tx_dropped",
    "overruns": "tx_fifo_errors", "carrier": "tx_carrier_errors", "collisions": "collisions",
}  # fmt: skip


def _detect_ip_addr(text: str) -> float:
    # literal tests first (C speed): most inputs hold neither marker
    if ("flags=" in text or "Link encap:" in text) and _IFCONFIG_RE.search(text):
        return 0.95
    if text.lstrip()[:1] in ("[", "{") and '"ifname"' in text and '"addr_info"' in text:
        return 0.92
    if "inet" in text and _IP_ADDR_LINE_RE.search(text) and _IP_IF_RE.search(text):
        return 0.92  # above ip-link's 0.9: the same interface lines, plus addresses
    if "/" in text and ("UP" in text or "DOWN" in text or "UNKNOWN" in text):
        n, data = brief_lines(text)
        if n >= 2 and data >= 1 and "<BROADCAST" not in text and "<LOOPBACK" not in text:
            return 0.85  # ip -br addr
    return 0.0


def _prefix(mask: str) -> str:
    """``255.255.255.0`` or BSD ``0xffffff00`` → ``24``; anything else → ``""``."""
    try:
        value = int(mask, 16) if mask.lower().startswith("0x") else int(
            ipaddress.IPv4Address(mask)
        )
    except ValueError:
        return ""
    bits = bin(value & 0xFFFFFFFF)[2:].zfill(32)
    return str(bits.count("1")) if "01" not in bits else ""


def _counters(rec: IpLink, keys: dict[str, str], text: str) -> None:
    for m in _PAIR_RE.finditer(text):
        name = keys.get(m.group("key").lower())
        if name is not None:
            rec.counters[name] = int(m.group("val"))


def _body_line(rec: IpLink, stripped: str) -> None:
    """One indented line under an ``ifconfig`` interface header (either generation)."""
    words = stripped.split()
    head = words[0]
    if head in ("inet", "inet6"):
        if len(words) > 1 and words[1] == "addr:" and len(words) > 2:
            rec.addresses.append(words[2])  # old inet6: "inet6 addr: fe80::1/64 Scope:Link"
        elif len(words) > 1 and words[1].startswith("addr:"):
            addr = words[1][5:]  # old inet: "inet addr:10.0.0.2  Bcast:...  Mask:255.255.255.0"
            mask = next((w[5:] for w in words if w.startswith("Mask:")), "")
            rec.addresses.append(f"{addr}/{_prefix(mask)}".rstrip("/"))
        elif len(words) > 1:
            addr = words[1]
            if "netmask" in words[:-1]:
                addr = f"{addr}/{_prefix(words[words.index('netmask') + 1])}".rstrip("/")
            elif "prefixlen" in words[:-1]:
                addr = f"{addr}/{words[words.index('prefixlen') + 1]}"
            rec.addresses.append(addr)
    elif head in _HW_WORDS:
        rec.link_type = _HW_WORDS[head]
        if len(words) > 1 and ":" in words[1]:
            rec.mac = words[1]
        if "txqueuelen" in words[:-1] and words[words.index("txqueuelen") + 1].isdecimal():
            rec.qlen = int(words[words.index("txqueuelen") + 1])
    elif head in ("RX", "TX") or head.startswith(("RX:", "TX:")) or words[:2] == ["RX", "bytes:"]:
        # old form puts both directions on one line: "RX bytes:183152 (..)  TX bytes:194696 (..)"
        for part in re.split(r"(?=\bTX\s)", stripped):
            keys = _TX_KEYS if part.startswith("TX") else _RX_KEYS
            _counters(rec, keys, part[2:])
    elif head.startswith("collisions:"):
        _counters(rec, _TX_KEYS, stripped)
        qlen = stripped.split("txqueuelen:", 1)[1].split()[:1] if "txqueuelen:" in stripped else []
        if qlen and qlen[0].isdecimal():
            rec.qlen = int(qlen[0])
    elif head == "status:" and len(words) > 1:
        rec.state = "UP" if words[1] == "active" else "DOWN"  # BSD/macOS media status
    else:
        m = _OLD_MTU_RE.search(stripped)
        if m is not None:  # "UP BROADCAST RUNNING MULTICAST  MTU:1500  Metric:1"
            rec.flags = [w for w in stripped[: m.start()].split() if w.isupper()]
            rec.mtu_bytes = int(m.group(1))
            rec.state = "UP" if "RUNNING" in rec.flags else "DOWN"
        else:
            rec.details.append(stripped)


def _parse_ifconfig(text: str) -> ParseResult:
    result = ParseResult(kind="ip-addr")
    cur: IpLink | None = None
    for lineno, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip("\r")
        stripped = line.strip()
        if not stripped:
            continue
        new = _NEW_HEAD_RE.match(line)
        old = None if new is not None else _OLD_HEAD_RE.match(line)
        if new is not None or old is not None:
            cur = IpLink(line=lineno, index=0, name="")
            if new is not None:
                cur.name = new.group("name")
                cur.flags = [f for f in new.group("flags").split(",") if f]
                rest = new.group("rest").split()
                if "mtu" in rest[:-1] and rest[rest.index("mtu") + 1].isdecimal():
                    cur.mtu_bytes = int(rest[rest.index("mtu") + 1])
                cur.state = "UP" if "RUNNING" in cur.flags else "DOWN"
            elif old is not None:
                cur.name = old.group("name")
                encap, _, hw = old.group("encap").partition("HWaddr")
                encap = encap.strip().lower()
                cur.link_type = _ENCAP.get(encap, (encap.split() or ["none"])[0])
                cur.mac = hw.split()[0] if hw.split() else None
                if encap == "unspec" and cur.mac is not None and cur.mac.count("-") >= 15:
                    cur.link_type = "infiniband"  # IPoIB: a 20-byte address old ifconfig can't name
            result.records.append(cur)
            continue
        if cur is None:
            continue
        if not line[:1].isspace():
            cur = None  # a prompt or another tool's output ends the interface
            continue
        _body_line(cur, stripped)
        cur.end_line = lineno
    return result


@register(
    "ip-addr",
    summary="ip [-4|-6] addr show [dev IFACE] / ifconfig [IFACE] (interfaces, MTU, addresses)",
    detect=_detect_ip_addr,
    refs=("S11", "S21", "S16", "S20"),
)
def parse_ip_addr(text: str) -> ParseResult:
    """``ip addr`` or ``ifconfig`` → :class:`IpLink` records; never raises."""
    if ("flags=" in text or "Link encap:" in text) and _IFCONFIG_RE.search(text):
        return _parse_ifconfig(text)
    return parse_ip_lines(text, "ip-addr")
