"""FRR's BGP summary, ``vtysh -c 'show bgp summary json'`` (also ``show ip bgp summary json``,
``show bgp vrf all summary json``) and the plain-text ``show bgp summary`` table → one
:class:`BgpPeer` per neighbor and address family.

JSON (FRR 8.4, ``bgp_show_summary()`` in ``bgpd/bgp_vty.c`` at tag ``frr-8.4.4``,
https://github.com/FRRouting/frr/blob/frr-8.4.4/bgpd/bgp_vty.c): one object per address family
(``ipv4Unicast``, ``ipv6Unicast``, ``l2VpnEvpn``...; under a VRF name with ``vrf all``) holding
``routerId``, ``as``, ``vrfName`` and ``peers``, keyed by the neighbor's address or, for an
unnumbered session, its interface. Per peer: ``hostname``, ``remoteAs``, ``localAs``,
``msgRcvd``, ``msgSent``, ``inq``, ``outq``, ``peerUptime`` / ``peerUptimeMsec`` (time in the
current state, ``never``), ``pfxRcd``, ``pfxSnt``, ``state`` (the FSM state: ``Established``,
``Active``, ``Connect``, ``OpenSent``, ``OpenConfirm``, ``Idle``, ``Idle (Admin)``, ``Idle
(PfxCt)``), ``peerState`` (``OK``, ``Admin``, ``Policy``, ``PfxCt``, ``Passive``),
``connectionsEstablished``, ``connectionsDropped``, ``desc``, ``idType`` (``ipv4``, ``ipv6``,
``interface``). Older FRR printed one table without the address-family level; it is read the
same way.

Text: ``IPv4 Unicast Summary (VRF default):``, ``BGP router identifier A, local AS number N
vrf-id 0``, then the table ``Neighbor V AS MsgRcvd MsgSent TblVer InQ OutQ Up/Down
State/PfxRcd PfxSnt Desc``. ``State/PfxRcd`` is the number of prefixes received when the
session is Established, else the state name (``Active``, ``Idle (Admin)``); a neighbor name of
16 characters or more is printed on its own line and the row continues on the next. Neighbors
print as ``hostname(address)`` once the peer's hostname is known.

Seed refs: S20 (a session down withdraws an ECMP member: bandwidth drops without an error
anywhere else), S6 (a leaf-spine fabric routes with eBGP per link).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

from aifabric.evidence.base import ParseResult, ParseWarning, Record
from aifabric.evidence.registry import register
from aifabric.inputs import close_truncated_json, loads_json

__all__ = ["BgpPeer", "BgpSummary", "parse_frr_bgp_summary"]


@dataclass(slots=True, kw_only=True)
class BgpPeer(Record):
    """One BGP neighbor in one address family, as ``show bgp summary`` prints it."""

    record_type: ClassVar[str] = "bgp_peer"

    peer: str
    """The neighbor as configured: an address, or an interface for unnumbered BGP."""
    hostname: str | None = None
    address_family: str | None = None
    """``ipv4Unicast``, ``ipv6Unicast``... (text: ``IPv4 Unicast``)."""
    vrf: str | None = None
    router_id: str | None = None
    local_as: int | None = None
    remote_as: int | None = None
    state: str | None = None
    """The BGP FSM state; ``Established`` when the session is up."""
    peer_state: str | None = None
    uptime: str | None = None
    """Time in the current state as printed (``00:00:02``, ``1d02h03m``, ``never``)."""
    uptime_ms: int | None = None
    prefixes_received: int | None = None
    prefixes_sent: int | None = None
    msgs_received: int | None = None
    msgs_sent: int | None = None
    inq: int | None = None
    outq: int | None = None
    connections_established: int | None = None
    connections_dropped: int | None = None
    id_type: str | None = None
    description: str | None = None

    @property
    def established(self) -> bool:
        return self.state == "Established"


@dataclass(slots=True, kw_only=True)
class BgpSummary(Record):
    """One address family's summary header (``BGP router identifier A, local AS number N``, or a
    JSON table's ``routerId``/``as``), with how many neighbors it lists: a router whose table is
    empty (no neighbor configured, or a summary taken on the wrong VRF) says so by this record."""

    record_type: ClassVar[str] = "bgp_summary"

    address_family: str | None = None
    vrf: str | None = None
    router_id: str | None = None
    local_as: int | None = None
    neighbors: int = 0
    """Neighbors listed (or ``Total number of neighbors N`` where printed)."""


_TOTAL_RE = re.compile(r"^Total number of neighbors (\d+)")
_NO_NEIGHBOR_RE = re.compile(
    r"^(?:No (?P<af>IPv[46](?: [A-Za-z]+)?|L2VPN EVPN|[A-Za-z0-9 ]{1,30}?) neighbor is configured"
    r"|% No BGP neighbors found(?: in (?:VRF )?(?P<vrf>\S+))?)\s*$"
)
"""FRR's ``show bgp summary`` of an address family or VRF without neighbors (bgpd/bgp_vty.c
bgp_show_summary: ``No %s neighbor is configured``, ``% No BGP neighbors found in VRF x``)."""


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _peer_from_json(
    name: str, obj: dict[str, Any], table: dict[str, Any], af: str | None, vrf: str | None,
    line: int,
) -> BgpPeer:
    return BgpPeer(
        line=line,
        peer=name,
        hostname=_str(obj.get("hostname")),
        address_family=af,
        vrf=vrf or _str(table.get("vrfName")),
        router_id=_str(table.get("routerId")),
        local_as=_int(obj.get("localAs")) or _int(table.get("as")),
        remote_as=_int(obj.get("remoteAs")),
        state=_str(obj.get("state")),
        peer_state=_str(obj.get("peerState")),
        uptime=_str(obj.get("peerUptime")),
        uptime_ms=_int(obj.get("peerUptimeMsec")),
        prefixes_received=_int(obj.get("pfxRcd")),
        prefixes_sent=_int(obj.get("pfxSnt")),
        msgs_received=_int(obj.get("msgRcvd")),
        msgs_sent=_int(obj.get("msgSent")),
        inq=_int(obj.get("inq")),
        outq=_int(obj.get("outq")),
        connections_established=_int(obj.get("connectionsEstablished")),
        connections_dropped=_int(obj.get("connectionsDropped")),
        id_type=_str(obj.get("idType")),
        description=_str(obj.get("desc")),
    )


def _tables(data: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], dict[str, Any]]]:
    """Every object holding a ``peers`` object, with the keys leading to it (VRF, AF)."""
    if not isinstance(data, dict) or len(path) > 3:
        return []
    if isinstance(data.get("peers"), dict):
        return [(path, data)]
    out = []
    for key, value in data.items():
        out += _tables(value, (*path, str(key)))
    return out


def _parse_json(text: str, result: ParseResult) -> None:
    try:
        data = loads_json(text)
    except ValueError as exc:
        closed = close_truncated_json(text)
        try:
            data = loads_json(closed[0]) if closed is not None else None
        except ValueError:
            data = None
        if data is None or closed is None:
            result.warn(getattr(exc, "lineno", None), f"not valid JSON: {exc}")
            return
        result.warn(closed[1], "JSON cut short: read up to the last complete member")
    lines = text.split("\n")
    line_of: dict[str, list[int]] = {}
    for n, raw in enumerate(lines, 1):
        s = raw.strip()
        if s.startswith('"') and s.endswith(("{", ":{")):
            line_of.setdefault(s.split('"')[1], []).append(n)
    used: dict[str, int] = {}
    tables = _tables(data)
    if not tables and isinstance(data, dict) and data:
        result.warn(1, "JSON without a BGP 'peers' table (not show bgp summary json?)")
    for path, table in tables:
        af = path[-1] if path else None
        vrf = path[-2] if len(path) >= 2 else None
        found_af = line_of.get(af, []) if af else []
        result.records.append(BgpSummary(
            line=found_af[0] if found_af else 1, address_family=af,
            vrf=vrf or _str(table.get("vrfName")), router_id=_str(table.get("routerId")),
            local_as=_int(table.get("as")),
            neighbors=sum(1 for v in table["peers"].values() if isinstance(v, dict)),
        ))  # fmt: skip
        for name, obj in table["peers"].items():
            if not isinstance(obj, dict):
                continue
            k = used.get(name, 0)
            found = line_of.get(name, [])
            used[name] = k + 1
            result.records.append(
                _peer_from_json(str(name), obj, table, af, vrf, found[k] if k < len(found) else 1)
            )


_AF_RE = re.compile(r"^(IPv[46] \w+|L2VPN EVPN|VPNv[46] \w+)\s+Summary(?:\s+\(VRF (\S+)\))?:")
_ID_RE = re.compile(r"^(?:asic\d+: )?(?:BGP router|Router) identifier (\S+), local AS number (\S+)")
"""The summary's head line; SONiC's multi-ASIC wrapper prints one per ASIC (``asic0: BGP ...``)."""
_ROW_SHAPE = re.compile(
    r"^[ \t]*+[\w.:\-()]++[ \t]++4(?:[ \t]++\d++){6}[ \t]++\S++[ \t]++\S", re.MULTILINE
)
"""A neighbor row of the text table (``name 4 AS MsgRcvd MsgSent TblVer InQ OutQ Up/Down
State/PfxRcd``): the version column is always 4. A window of rows pasted without the header
is still the table."""
"""FRR ``BGP router identifier A, local AS number N``; Arista EOS ``Router identifier A, ...``."""
_EOS_HEADER_RE = re.compile(
    r"^(?:Description\s+)?Neighbor\s+V\s+AS\s+MsgRcvd\s+MsgSent\s+InQ\s+OutQ\s+Up/Down\s+"
    r"State\s+PfxRcd\s+PfxAcc\b"
)
"""Arista EOS ``show ip bgp summary``: no TblVer column, the state and the prefix counts in
columns of their own (``Estab`` for Established)."""
_EOS_DETECT_RE = re.compile(
    r"(?m)^[ \t]*+(?:Description[ \t]++)?Neighbor[ \t]++V[ \t]++AS[ \t]++MsgRcvd[ \t]++MsgSent"
    r"[ \t]++InQ[ \t]++OutQ[ \t]++Up/Down[ \t]++State[ \t]++PfxRcd[ \t]++PfxAcc\b"
)
_EOS_STATES = {"Estab": "Established", "OpenSent": "OpenSent", "OpenConfirm": "OpenConfirm"}
_SHOW_CMD_RE = re.compile(r"[$#>] ?show (?:ip |ipv6 )?bgp\b")
_HEADER_RE = re.compile(r"^Neighbh?or\s+V\s+AS\s")
"""The table header; SONiC's ``show ip bgp summary`` wrapper prints it as ``Neighbhor``."""
_PROMPT_RE = re.compile(r"^[\w.\-]+(?:\([\w\-]+\))?[#>] ?(?:show|do show|exit|end|terminal)\b")
"""A router prompt with the command (``leaf01# show bgp summary``)."""
_STATE_WORDS = frozenset(
    {"Idle", "Connect", "Active", "OpenSent", "OpenConfirm", "Established", "Clearing",
     "Deleted", "never"}
)  # fmt: skip
_SKIP = (
    "BGP table version", "RIB entries", "Peers ", "Peer groups", "Total number of neighbors",
    "Displayed neighbors", "Dampening", "Max-med", "% No BGP", "No ", "*", "Read-only mode",
    "Update delay", "% BGP instance", "Unknown command", "BGP", "Estimated",
    "Neighbor Status Codes",
)  # fmt: skip


def _row(tokens: list[str], lineno: int, af: str | None, vrf: str | None,
         rid: str | None, local_as: int | None) -> BgpPeer | None:
    """``name V AS MsgRcvd MsgSent TblVer InQ OutQ Up/Down State/PfxRcd [PfxSnt] [Desc]``."""
    if len(tokens) < 10 or tokens[1] != "4" or not all(t.isdecimal() for t in tokens[3:8]):
        return None
    name = tokens[0]
    hostname = None
    if "(" in name and name.endswith(")"):
        hostname, _, inner = name[:-1].partition("(")
        name = inner
    remote_as = int(tokens[2]) if tokens[2].isdecimal() else None
    rest = tokens[9:]
    state: str | None
    pfx_rcd: int | None = None
    if rest[0].isdecimal():
        state, pfx_rcd = "Established", int(rest[0])
        rest = rest[1:]
    elif rest[0].startswith("(") and rest[0].endswith(")"):  # "(Policy)": up, no policy
        state, rest = "Established", rest[1:]
    else:
        state = rest[0]
        rest = rest[1:]
        if rest and rest[0].startswith("(") and rest[0].endswith(")"):
            state = f"{state} {rest[0]}"
            rest = rest[1:]
    pfx_snt = int(rest[0]) if rest and rest[0].isdecimal() else None
    if pfx_snt is not None:
        rest = rest[1:]
    desc = " ".join(rest) or None
    return BgpPeer(
        line=lineno, peer=name, hostname=hostname or None, address_family=af, vrf=vrf,
        router_id=rid, local_as=local_as, remote_as=remote_as, state=state,
        uptime=tokens[8], prefixes_received=pfx_rcd, prefixes_sent=pfx_snt,
        msgs_received=int(tokens[3]), msgs_sent=int(tokens[4]), inq=int(tokens[6]),
        outq=int(tokens[7]), description=None if desc == "N/A" else desc,
    )  # fmt: skip


def _eos_row(tokens: list[str], lineno: int, vrf: str | None, rid: str | None,
             local_as: int | None) -> BgpPeer | None:
    """EOS ``name V AS MsgRcvd MsgSent InQ OutQ Up/Down State [PfxRcd PfxAcc]``."""
    if len(tokens) < 9 or tokens[1] != "4" or not all(t.isdecimal() for t in tokens[3:7]):
        return None
    raw_state = tokens[8]
    base = raw_state.split("(", 1)[0]
    state = _EOS_STATES.get(base, base)
    pfx = tokens[9] if len(tokens) > 9 and tokens[9].isdecimal() else None
    return BgpPeer(
        line=lineno, peer=tokens[0], hostname=None, address_family=None, vrf=vrf,
        router_id=rid, local_as=local_as,
        remote_as=int(tokens[2]) if tokens[2].isdecimal() else None, state=state,
        uptime=tokens[7], prefixes_received=int(pfx) if pfx is not None else None,
        prefixes_sent=None, msgs_received=int(tokens[3]), msgs_sent=int(tokens[4]),
        inq=int(tokens[5]), outq=int(tokens[6]), description=None,
    )  # fmt: skip


def _parse_text(text: str, result: ParseResult) -> None:
    af = vrf = rid = None
    local_as: int | None = None
    in_table = False
    eos = False
    pending: tuple[int, str] | None = None
    summary: BgpSummary | None = None
    total_seen: set[int] = set()
    for lineno, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip("\r")
        stripped = line.strip()
        if not stripped:
            continue
        if (m := _AF_RE.match(stripped)) is not None:
            af, vrf, in_table = m.group(1), m.group(2), False
            continue
        if (m := _ID_RE.match(stripped)) is not None:
            rid = m.group(1)
            local_as = int(m.group(2)) if m.group(2).isdecimal() else None
            summary = BgpSummary(line=lineno, address_family=af, vrf=vrf, router_id=rid,
                                 local_as=local_as)  # fmt: skip
            result.records.append(summary)
            continue
        if (m := _NO_NEIGHBOR_RE.match(stripped)) is not None:
            # the summary of an address family (or VRF) with no neighbor at all; after the
            # family's own header (FRR's "% No BGP neighbors found") that header says it already
            if summary is not None and summary.neighbors == 0 and summary.address_family == (
                m["af"] or af
            ):
                continue
            summary = None
            result.records.append(BgpSummary(
                line=lineno, address_family=m["af"] or af, vrf=m["vrf"] or vrf, router_id=rid,
                local_as=local_as, neighbors=0,
            ))  # fmt: skip
            continue
        if summary is not None and (m := _TOTAL_RE.match(stripped)) is not None:
            summary.neighbors = int(m.group(1))
            total_seen.add(id(summary))
        if _EOS_HEADER_RE.match(stripped) is not None:
            in_table, eos = True, True
            continue
        if _HEADER_RE.match(stripped) is not None:
            in_table, eos = True, False
            continue
        if (stripped.startswith(_SKIP) or stripped.startswith(("$ ", "# ")) or "vtysh" in line
                or _PROMPT_RE.match(stripped) is not None or _SHOW_CMD_RE.search(stripped)
                or not stripped.strip("- ")):  # a show command; SONiC's dashes under the header
            in_table = in_table and not stripped.startswith("Total number")
            continue
        if not in_table and not eos and _ROW_SHAPE.match(stripped) is not None:
            in_table = True  # rows without the header above them (a window of the table)
        if in_table:
            tokens = stripped.split()
            if len(tokens) == 1 and not line[:1].isspace() and not eos:
                pending = (lineno, tokens[0])  # a long name: the row goes on on the next line
                continue
            if pending is not None and line[:1].isspace():
                tokens = [pending[1], *tokens]
                start = pending[0]
            else:
                if pending is not None:
                    result.warn(pending[0], "unrecognised line in show bgp summary", pending[1])
                start = lineno
            pending = None
            rec = (
                _eos_row(tokens, start, vrf, rid, local_as)
                if eos
                else _row(tokens, start, af, vrf, rid, local_as)
            )
            if rec is not None:
                rec.end_line = lineno if lineno != start else None
                result.records.append(rec)
                if summary is not None and id(summary) not in total_seen:
                    summary.neighbors += 1
                continue
        result.warn(lineno, "unrecognised line in show bgp summary", line)
    if pending is not None:
        result.warn(pending[0], "neighbor name without its row (truncated capture?)", pending[1])


_JSON_START_RE = re.compile(r"^[ \t]*+\{", re.MULTILINE)
_NO_NEIGHBOR_DETECT_RE = re.compile(
    r"^[ \t]*+(?:No IPv[46][\w ]{0,20} neighbor is configured|% No BGP neighbors found)",
    re.MULTILINE,
)


def _detect(text: str) -> float:
    head = text[:65536]
    if '"peers"' in head and ('"pfxRcd"' in head or '"peerState"' in head):
        return 0.95
    if '"peers"' in head and '"remoteAs"' in head and '"state"' in head:
        return 0.9
    if "State/PfxRcd" in head and ("Neighbor" in head or "Neighbhor" in head):
        return 0.95
    if "PfxAcc" in head and _EOS_DETECT_RE.search(head) is not None:
        return 0.95
    if "BGP router identifier" in head and "local AS number" in head:
        return 0.6
    if _NO_NEIGHBOR_DETECT_RE.search(head) is not None:
        return 0.85
    if len(_ROW_SHAPE.findall(head, 0, 8192)) >= 2:
        return 0.6
    return 0.0


@register(
    "frr-bgp-summary",
    summary="vtysh -c 'show bgp summary [json]' (FRR, also SONiC/Cumulus): BGP neighbors",
    detect=_detect,
    refs=("S20", "S6"),
)
def parse_frr_bgp_summary(text: str) -> ParseResult:
    """Parse FRR ``show [ip] bgp [vrf all] summary [json]``; never raises."""
    result = ParseResult(kind="frr-bgp-summary")
    m = _JSON_START_RE.search(text, 0, 65536)
    if m is not None and text.count("\n", 0, m.start()) <= 1:  # at most a prompt line first
        offset = text.count("\n", 0, m.start())
        _parse_json(text[m.start():], result)
        for rec in result.records:
            rec.line += offset
        for i, w in enumerate(result.warnings):
            if w.line is not None:
                result.warnings[i] = ParseWarning(w.line + offset, w.message, w.text)
    else:
        _parse_text(text, result)
    if (not any(isinstance(r, BgpPeer) for r in result.records) and not result.warnings
            and text.strip() not in ("{}", "{\n}")):  # fmt: skip
        result.warn(None, "no BGP neighbor in this summary")
    return result
