"""Routing tables: Linux ``ip route`` (text and ``ip -j route``) and FRR's ``show ip route``
(text and ``json``) → one :class:`Route` per prefix with its next hops, so that the width of
each ECMP group (how many next hops a prefix is spread over) can be judged (S20: a BGP session or
a link that goes down withdraws one ECMP member, and the fabric loses that path's bandwidth
without an error anywhere else).

Kind ``ip-route`` reads four forms:

* ``ip [-4|-6] route [show]`` (iproute2, ip-route(8)): one line per route, ``[TYPE] PREFIX
  [via GW] [dev IF] [proto P] [scope S] [src A] [metric N] [FLAGS]``, where ``TYPE`` is
  ``unicast`` (not printed), ``local``, ``broadcast``, ``unreachable``, ``blackhole``... and
  ``PREFIX`` is ``default`` or ``A/N``. A multipath route prints its next hops on the lines
  below, each ``nexthop via GW dev IF weight N [dead] [linkdown] [onlink]`` (iproute2
  ``print_rta_multipath()`` in ``ip/iproute.c``). ``dead`` marks a next hop whose device is
  down and ``linkdown`` one whose device has no carrier (``RTNH_F_DEAD``,
  ``RTNH_F_LINKDOWN``): the kernel keeps them in the route but does not forward over a dead
  one, nor over a linkdown one when ``ignore_routes_with_linkdown`` is set.
* ``ip -j route``: a JSON list of objects with ``dst``, ``gateway``, ``dev``, ``protocol``,
  ``metric``, ``flags`` and, for multipath, ``nexthops`` (each ``gateway``, ``dev``,
  ``weight``, ``flags``).
* FRR ``show ip route`` / ``show ipv6 route`` (zebra's ``vty_show_ip_route()`` in
  ``zebra/zebra_vty.c``, https://github.com/FRRouting/frr/blob/frr-8.4.4/zebra/zebra_vty.c):
  the ``Codes:`` legend, then per route ``CODE[>][STATUS] PREFIX [DIST/METRIC] via GW, IF,
  weight N, UPTIME`` (or ``is directly connected, IF``) and one line per further next hop,
  ``  STATUS   via GW, IF, weight N, UPTIME``. ``CODE`` is the protocol letter (K kernel,
  C connected, L local, S static, O OSPF, I IS-IS, B BGP, ...), ``>`` the selected route, and
  the status ``*`` a next hop installed in the FIB, ``q`` queued for the kernel, ``r``
  rejected by it, ``o`` offload failure, ``t`` trapped. FRR 10 adds an ``IPv4 unicast VRF
  default:`` header and the ``L`` code; FRR before 7.2 prints no ``weight``.
* FRR ``show ip route json``: an object keyed by prefix, each a list of route objects with
  ``protocol``, ``selected``, ``installed``, ``distance``, ``metric`` and ``nexthops`` (each
  ``ip``, ``interfaceName``, ``active``, ``fib``, ``weight``, ``recursive``).

A route's **width** is the number of next hops it forwards over: FIB next hops in FRR's forms
(``*`` or ``"fib": true``, a recursive next hop counting through the next hops that resolve
it), next hops not ``dead`` in the kernel's. Sources: ip-route(8)
https://man7.org/linux/man-pages/man8/ip-route.8.html, iproute2 ``ip/iproute.c``
(https://github.com/iproute2/iproute2/blob/v6.1.0/ip/iproute.c), the captures under
``tests/fixtures/evidence/ip-route/`` (FRR 8.4.4 in network namespaces, and pasted outputs).

Seed refs: S20 (a member of an ECMP group withdrawn), S6 (a leaf-spine fabric routes with eBGP
per link, each leaf spreading every remote prefix over all its spines).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from aifabric.evidence.base import ParseResult, Record
from aifabric.evidence.registry import register
from aifabric.inputs import loads_json

__all__ = ["DYNAMIC_PROTOCOLS", "NextHop", "Route", "parse_ip_route"]

DYNAMIC_PROTOCOLS = frozenset(
    ("bgp", "ospf", "ospf6", "isis", "eigrp", "rip", "ripng", "babel", "openfabric", "zebra",
     "bird", "nhrp")
)  # fmt: skip
"""Protocols whose routes are learnt from neighbours: their ECMP width follows the sessions."""

_FRR_CODES = {
    "K": "kernel", "C": "connected", "L": "local", "S": "static", "R": "rip", "O": "ospf",
    "I": "isis", "B": "bgp", "E": "eigrp", "N": "nhrp", "T": "table", "v": "vnc",
    "V": "vnc-direct", "A": "babel", "F": "pbr", "f": "openfabric", "t": "table-direct",
    "D": "sharp",
}  # fmt: skip


@dataclass(slots=True, kw_only=True)
class NextHop:
    """One next hop of a route."""

    via: str | None = None
    dev: str | None = None
    weight: int | None = None
    used: bool = True
    """Forwarded over: in the FIB (FRR) or not ``dead`` (kernel)."""
    flags: list[str] = field(default_factory=list)
    """``dead``, ``linkdown``, ``onlink`` (kernel); ``inactive``, ``recursive`` (FRR)."""


@dataclass(slots=True, kw_only=True)
class Route(Record):
    """One prefix of a routing table with its next hops."""

    record_type: ClassVar[str] = "route"
    prefix: str
    """``A/N`` or ``default``."""
    protocol: str | None = None
    """``bgp``, ``ospf``, ``kernel``, ``connected``, ``static``, ``local``..."""
    route_type: str | None = None
    """Kernel route type when printed (``local``, ``broadcast``, ``unreachable``...)."""
    selected: bool | None = None
    """FRR: the route zebra chose for the prefix (``>``); ``None`` in the kernel's forms."""
    installed: bool | None = None
    """FRR: in the kernel FIB (a ``*`` next hop, ``"installed": true``)."""
    status: str | None = None
    """FRR status letter when not plainly installed: ``q`` queued, ``r`` rejected, ``o``
    offload failure, ``t`` trapped."""
    distance: int | None = None
    metric: int | None = None
    vrf: str | None = None
    next_hops: list[NextHop] = field(default_factory=list)
    form: str = "linux-text"
    """``linux-text``, ``linux-json``, ``frr-text`` or ``frr-json``."""

    @property
    def width(self) -> int:
        """Next hops the route forwards over (module docstring)."""
        return sum(1 for n in self.next_hops if n.used and "recursive" not in n.flags)

    @property
    def dynamic(self) -> bool:
        return self.protocol in DYNAMIC_PROTOCOLS


_PREFIX = r"(?:default|[0-9a-fA-F.:]+(?:/\d{1,3})?)"
_LINUX_TYPES = ("unicast", "local", "broadcast", "multicast", "throw", "unreachable",
                "prohibit", "blackhole", "nat", "anycast")  # fmt: skip
_LINUX_ROUTE_RE = re.compile(
    rf"^(?:(?P<type>{'|'.join(_LINUX_TYPES)})\s+)?(?P<prefix>{_PREFIX})"
    r"(?P<rest>(?:\s+(?:via|dev|proto|scope|src|metric|table|nhid|pref|expires|mtu)\b.*)?)\s*$"
)
_LINUX_NH_RE = re.compile(r"^[ \t]++nexthop[ \t]++(?P<rest>.*)$")
_KV_RE = re.compile(
    r"\b(via|dev|proto|scope|src|metric|table|weight)\s+(?:inet6?\s+)?(\S+)"
)
_NH_FLAGS = ("dead", "linkdown", "onlink", "pervasive", "offload", "trap", "rt_offload")

_FRR_ROUTE_RE = re.compile(
    r"^(?P<code>[A-Za-z])(?:\[\d+\])?(?P<sel>[> ])(?P<st>[*qrotb ])[ \t]*+"
    r"(?P<prefix>[0-9a-fA-F.:]++/\d{1,3})(?:[ \t]+\[(?P<dist>\d+)/(?P<metric>\d+)\])?(?P<rest>.*)$"
)
_FRR_NH_RE = re.compile(
    r"^[ \t]{2}(?P<st>[*qrotb ])[ \t]++(?P<rest>(?:via|is directly connected)\b.*)$"
)
_FRR_VIA_RE = re.compile(
    r"(?:via (?P<via>[0-9a-fA-F.:]+)(?:,\s*(?P<dev>[^,\s]+))?|is directly connected,\s*"
    r"(?P<cdev>[^,\s]+))"
)
_WEIGHT_RE = re.compile(r"\bweight (\d+)")
_VRF_HEAD_RE = re.compile(r"^IPv[46] unicast VRF (\S+):\s*$")
_PROMPT_RE = re.compile(
    r"[#$>][ \t]*+(?:sudo\s+)?"
    r"(?:ip\s+(?:-\S+\s+)*r[a-z]*|vtysh\b|(?:do\s+)?sh[a-z]*\s+ipv?6?\s+ro)"
)
"""The prompt and command line a paste often starts with (``r1# sh ip route``, ``$ ip r``)."""


def _is_prompt(line: str) -> bool:
    return _PROMPT_RE.search(line) is not None


def _int(s: str | None) -> int | None:
    return int(s) if s is not None and s.isdigit() else None


def _linux_nexthop(rest: str) -> NextHop:
    kv = dict(_KV_RE.findall(rest))
    flags = [f for f in _NH_FLAGS if re.search(rf"\b{f}\b", rest)]
    return NextHop(via=kv.get("via"), dev=kv.get("dev"), weight=_int(kv.get("weight")),
                   used="dead" not in flags, flags=flags)


def _parse_linux_text(text: str, result: ParseResult) -> None:
    route: Route | None = None
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip():
            continue
        m = _LINUX_NH_RE.match(line)
        if m is not None and route is not None:
            route.next_hops.append(_linux_nexthop(m.group("rest").rstrip()))
            route.end_line = n
            continue
        m = _LINUX_ROUTE_RE.match(line.strip())
        if m is None:
            if not _is_prompt(line):
                result.warn(n, "not a route line", line)
            continue
        rest = m.group("rest") or ""
        kv = dict(_KV_RE.findall(rest))
        route = Route(line=n, prefix=m.group("prefix"), protocol=kv.get("proto"),
                      route_type=m.group("type"), metric=_int(kv.get("metric")), form="linux-text")
        if "via" in kv or "dev" in kv:
            route.next_hops.append(_linux_nexthop(rest))
        result.records.append(route)


def _key_lines(text: str, key: str, offset: int) -> list[int]:
    """1-based line of each ``"key"`` in ``text``, in order (the JSON forms' record lines)."""
    out: list[int] = []
    line, pos = offset + 1, 0
    while (hit := text.find(f'"{key}"', pos)) >= 0:
        line += text.count("\n", pos, hit)
        out.append(line)
        pos = hit + 1
    return out


def _parse_linux_json(data: list[Any], lines: list[int], result: ParseResult) -> None:
    entries = [e for e in data if isinstance(e, dict) and "dst" in e]
    for i, e in enumerate(entries):
        route = Route(line=lines[i] if i < len(lines) else 1, prefix=str(e["dst"]),
                      protocol=_str(e.get("protocol")), route_type=_str(e.get("type")),
                      metric=_int(str(e.get("metric", ""))), form="linux-json")
        hops = e.get("nexthops")
        for h in hops if isinstance(hops, list) else ([e] if "gateway" in e or "dev" in e else []):
            if isinstance(h, dict):
                flags = [str(f) for f in h.get("flags") or [] if str(f) in _NH_FLAGS]
                route.next_hops.append(NextHop(
                    via=_str(h.get("gateway")), dev=_str(h.get("dev")),
                    weight=_int(str(h.get("weight", ""))), used="dead" not in flags, flags=flags,
                ))
        result.records.append(route)


def _str(v: Any) -> str | None:
    return None if v is None else str(v)


def _frr_nexthop(status: str, rest: str) -> NextHop:
    m = _FRR_VIA_RE.search(rest)
    via = m.group("via") if m else None
    dev = (m.group("dev") or m.group("cdev")) if m else None
    flags = [f for f in ("inactive", "recursive", "onlink") if f in rest]
    w = _WEIGHT_RE.search(rest)
    return NextHop(via=via, dev=dev, weight=int(w.group(1)) if w else None,
                   used=status == "*" and "inactive" not in flags, flags=flags)


def _parse_frr_text(text: str, result: ParseResult) -> None:
    route: Route | None = None
    vrf: str | None = None
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip():
            continue  # SONiC pastes put blank lines between a route's next hops
        if line.startswith("Codes:") or (
            line[:1].isspace() and " - " in line and _FRR_NH_RE.match(line) is None
        ):
            continue  # the legend
        head = _VRF_HEAD_RE.match(line)
        if head is not None:
            vrf = head.group(1)
            continue
        m = _FRR_NH_RE.match(line)
        if m is not None and route is not None:
            route.next_hops.append(_frr_nexthop(m.group("st"), m.group("rest")))
            route.end_line = n
            _settle(route, m.group("st"))
            continue
        m = _FRR_ROUTE_RE.match(line)
        if m is None or m.group("code") not in _FRR_CODES:
            if not _is_prompt(line):
                result.warn(n, "not a route line", line)
            continue
        st = m.group("st")
        route = Route(
            line=n, prefix=m.group("prefix"), protocol=_FRR_CODES[m.group("code")],
            selected=m.group("sel") == ">", installed=st == "*", distance=_int(m.group("dist")),
            metric=_int(m.group("metric")), vrf=vrf, form="frr-text",
        )
        route.next_hops.append(_frr_nexthop(st, m.group("rest")))
        _settle(route, st)
        result.records.append(route)


def _settle(route: Route, status: str) -> None:
    if status == "*":
        route.installed = True
    elif status in ("q", "r", "o", "t") and route.status is None:
        route.status = status


def _parse_frr_json(data: dict[str, Any], lines: list[int], result: ParseResult) -> None:
    k = 0
    for prefix, entries in data.items():
        if not isinstance(entries, list):
            continue
        for e in entries:
            if not isinstance(e, dict):
                continue
            line = lines[k] if k < len(lines) else 1
            k += "prefix" in e
            route = Route(
                line=line, prefix=str(e.get("prefix", prefix)), protocol=_str(e.get("protocol")),
                selected=bool(e.get("selected")), installed=bool(e.get("installed")),
                distance=_int(str(e.get("distance", ""))), metric=_int(str(e.get("metric", ""))),
                vrf=_str(e.get("vrfName")), form="frr-json",
            )
            if e.get("queued"):
                route.status = "q"
            elif e.get("failed"):
                route.status = "r"
            for h in e.get("nexthops") or []:
                if not isinstance(h, dict):
                    continue
                flags = ["recursive"] if h.get("recursive") else []
                if not h.get("active", True):
                    flags.append("inactive")
                route.next_hops.append(NextHop(
                    via=_str(h.get("ip")), dev=_str(h.get("interfaceName")),
                    weight=_int(str(h.get("weight", ""))),
                    used=bool(h.get("fib")) and "inactive" not in flags, flags=flags,
                ))
            result.records.append(route)


_FRR_LEGEND = "Codes: K - kernel route"
_FRR_ROUTE_DETECT_RE = re.compile(
    r"^[KCLSROIBENTvVAFftD][>* ][*qrot ][ \t]*+[0-9a-fA-F.:]++/\d{1,3}[ \t]++"
    r"(?:\[\d+/\d+\] via|is directly)",
    re.MULTILINE,
)
_LINUX_DETECT_RE = re.compile(
    r"^(?:default|[0-9a-fA-F.:]+/\d{1,3})(?: +(?:via|dev|proto|scope|metric|src|table|nhid)"
    r" \S+){2,}"
    r"|^[ \t]++nexthop via [0-9a-fA-F.:]++ dev \S++ weight \d+",
    re.MULTILINE,
)


def _detect(text: str) -> float:
    head = text[:65536]
    if _FRR_LEGEND in head and "> - selected route" in head:
        return 0.95
    stripped = head.lstrip()
    if stripped[:1] == "{" and '"prefixLen"' in head and '"nexthops"' in head:
        return 0.95
    if stripped[:1] == "[" and '"dst"' in head and ('"protocol"' in head or '"gateway"' in head):
        return 0.92
    if " dev " not in head and "] via " not in head and "directly connected" not in head:
        return 0.0  # literal tests first (C speed): most inputs are no routing table
    if _FRR_ROUTE_DETECT_RE.search(head) is not None:
        return 0.9
    if "\tnexthop via " in head:
        return 0.9
    hits = len(_LINUX_DETECT_RE.findall(head, 0, 16384))
    if hits >= 2:
        return 0.9
    return 0.6 if hits == 1 else 0.0


@register(
    "ip-route",
    summary="ip route / ip -j route (iproute2), vtysh -c 'show ip route [json]' (FRR): "
    "routes and their ECMP next hops",
    detect=_detect,
    refs=("S20", "S6"),
)
def parse_ip_route(text: str) -> ParseResult:
    """Parse a routing table in any of the four forms (module docstring); never raises."""
    result = ParseResult(kind="ip-route")
    stripped = text.lstrip()
    if stripped[:1] in ("[", "{"):
        offset = text[: len(text) - len(stripped)].count("\n")
        try:
            data = loads_json(stripped)
        except ValueError as exc:
            result.warn(offset + 1, f"not valid JSON: {exc}")
            return result
        if isinstance(data, list):
            _parse_linux_json(data, _key_lines(stripped, "dst", offset), result)
        elif isinstance(data, dict):
            _parse_frr_json(data, _key_lines(stripped, "prefix", offset), result)
    elif _FRR_LEGEND in text or _FRR_ROUTE_DETECT_RE.search(text) is not None:
        _parse_frr_text(text, result)
    else:
        _parse_linux_text(text, result)
    if not result.records:
        result.warn(None, "no route in this routing table")
    return result
