"""Legacy Cumulus Linux (3.x/4.x) ``/etc/cumulus/datapath/traffic.conf`` (and its 5.x successor
``/etc/cumulus/datapath/qos/qos_features.conf``, same ``key = value`` syntax) → shared QoS records.

Read: ``traffic.packet_priority_source_set = [dscp]`` (trust), ``traffic.cos_N.priority_source.dscp
= [26]`` (DSCP → internal CoS, one ``dscp-map``), ``...priority_source.8021p`` (``tc-map``
``dot1p-to-internal-cos``; the 3.x ``packet_priorities`` spelling too), ``pfc.*``,
``ecn_red.*`` and ``link_pause.*`` port groups (``port_group_list``, ``<group>.cos_list``,
``port_set``, ``xoff_size``, ``min_threshold_bytes``, ``max_threshold_bytes``, ``probability``,
``ecn_enable``/``red_enable``), ``priority_group.<name>.cos_list`` / ``.weight`` and every other
key as a ``traffic-conf-setting``. ``#`` comment lines and the ``...`` elisions of pasted excerpts
are skipped; a shell prompt line (``sudo cat ...``) is skipped.

Caveat, reported on every record it concerns (``internal_cos=True`` on ``pfc``, ``target
internal-cos`` on the ``dscp-map``, ``internal_cos`` on ``ecn`` via ``extra``): the ``cos_N`` and
``cos_list`` numbers in this file are the switch's *internal* CoS (switch priority), not 802.1p
priorities on the wire. The shipped file says "internal cos 3 has been reserved for
CPU-generated traffic" and maps 802.1p 3 to ``cos_4`` (``traffic.cos_4.priority_source.8021p =
[3,4]``), so PFC on ``cos_list = [3]`` is only priority 3 on the wire if the egress remark/PFC
mapping says so (Cumulus Linux 4.x "Quality of Service": "The ``traffic.cos_`` number is the
internal COS value"). A port group named in ``port_group_list`` without keys, or keys of a group
not in the list (switchd ignores those), is flagged with ``listed``.

Sources: Cumulus Linux 4.1/4.4 user guide, "Quality of Service" and "RDMA over Converged
Ethernet - RoCE" (github.com/CumulusNetworks/docs content/cumulus-linux-4x/...);
https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-44/Layer-1-and-Switch-Ports/Quality-of-Service/
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from aifabric.evidence.base import ParseResult, Record, finite_float
from aifabric.evidence.qos import DscpMap, EcnConfig, PfcConfig, QosSetting, TcMap, parse_id_list
from aifabric.evidence.registry import register

__all__ = [
    "PortGroup",
    "TrafficConfSetting",
    "parse_cumulus_traffic_conf",
    "text_bool",
    "text_float",
    "text_int",
]

_KV_RE = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*=\s*((?:.*\S)?)\s*$")  # linear: no lazy .*?
_COS_SRC_RE = re.compile(
    r"^traffic\.cos_(\d)\.(?:priority_source|packet_priorities)\.(dscp|8021p)$"
)
_GROUP_FEATURES = ("pfc", "ecn_red", "link_pause")


@dataclass(slots=True, kw_only=True)
class TrafficConfSetting(Record):
    """Any ``key = value`` line, verbatim."""

    record_type: ClassVar[str] = "traffic-conf-setting"
    key: str
    value: str


@dataclass(slots=True, kw_only=True)
class PortGroup(Record):
    """A ``pfc`` / ``ecn_red`` / ``link_pause`` port group with all its keys."""

    record_type: ClassVar[str] = "port-group"
    feature: str
    name: str
    listed: bool
    """Named in ``<feature>.port_group_list``; switchd ignores groups that are not."""
    cos_list: tuple[int, ...] = ()
    port_set: str | None = None
    settings: dict[str, str] = field(default_factory=dict)


def _detect(text: str) -> float:
    head = text[:200_000]
    if "traffic.cos_" in head or "pfc.port_group_list" in head or "priority_source" in head:
        return 0.95
    if "ecn_red.port_group_list" in head or "traffic.packet_priority_source_set" in head:
        return 0.95
    return 0.0


@register(
    "cumulus-traffic-conf",
    summary="Cumulus Linux /etc/cumulus/datapath/traffic.conf (or qos_features.conf)",
    detect=_detect,
    refs=("S12", "S13", "S14", "S18"),
)
def parse_cumulus_traffic_conf(text: str) -> ParseResult:
    """Parse traffic.conf into QoS records (internal-CoS caveat in the module docstring)."""
    result = ParseResult(kind="cumulus-traffic-conf")
    rec = result.records.append
    kv: dict[str, tuple[str, int]] = {}
    for lineno, raw in enumerate(text.split("\n"), 1):
        s = raw.strip()
        if not s or s.startswith("#") or set(s) <= {"."}:
            continue
        if "$ " in s or s.endswith("$") or s.startswith(("sudo ", "cat ")):
            continue
        m = _KV_RE.match(s)
        if m is None:
            result.warn(lineno, "expected 'key = value'", s)
            continue
        key, value = m.group(1), m.group(2)
        kv[key] = (value, lineno)
        rec(TrafficConfSetting(line=lineno, key=key, value=value))

    def ids(key: str) -> tuple[int, ...]:
        value, ln = kv[key]
        try:
            return parse_id_list(value)
        except ValueError:
            result.warn(ln, f"{key}: expected a list like [3] or [0,1]", value)
            return ()

    dscp: dict[int, int] = {}
    dot1p: dict[int, int] = {}
    dscp_lines: list[int] = []
    for key, (_value, ln) in kv.items():
        m = _COS_SRC_RE.match(key)
        if m is None:
            continue
        cos = int(m.group(1))
        for v in ids(key):
            (dscp if m.group(2) == "dscp" else dot1p)[v] = cos
        if m.group(2) == "dscp":
            dscp_lines.append(ln)
    trust = kv.get("traffic.packet_priority_source_set")
    if trust is not None:
        rec(QosSetting(line=trust[1], scope="global", key="trust", value=trust[0].strip("[] ")))
    if dscp_lines:
        rec(
            DscpMap(
                line=min(dscp_lines),
                end_line=max(dscp_lines),
                name="traffic.conf",
                mapping=dict(sorted(dscp.items())),
                target="internal-cos",
            )
        )
    if dot1p:
        first = min(ln for k, (_v, ln) in kv.items() if k.endswith("8021p"))
        rec(
            TcMap(
                line=first,
                kind="dot1p-to-internal-cos",
                name="traffic.conf",
                mapping=dict(sorted(dot1p.items())),
            )
        )
    for feature in _GROUP_FEATURES:
        _groups(feature, kv, ids, result)
    return result


def _groups(
    feature: str,
    kv: dict[str, tuple[str, int]],
    ids: object,
    result: ParseResult,
) -> None:
    rec = result.records.append
    list_key = f"{feature}.port_group_list"
    listed: tuple[str, ...] = ()
    if list_key in kv:
        listed = tuple(x.strip() for x in kv[list_key][0].strip("[] ").split(",") if x.strip())
    groups: dict[str, dict[str, tuple[str, int]]] = {}
    for key, vl in kv.items():
        parts = key.split(".")
        if len(parts) == 3 and parts[0] == feature and parts[1] != "port_group_list":
            groups.setdefault(parts[1], {})[parts[2]] = vl
    for name in listed:
        groups.setdefault(name, {})
    for name, keys in groups.items():
        line = min((ln for _v, ln in keys.values()), default=kv.get(list_key, ("", 0))[1])
        cos: tuple[int, ...] = ()
        if "cos_list" in keys:
            try:
                cos = parse_id_list(keys["cos_list"][0])
            except ValueError:
                result.warn(keys["cos_list"][1], "cos_list: expected [N,...]", keys["cos_list"][0])
        port_set = keys.get("port_set", (None, 0))[0]
        settings = {k: v for k, (v, _ln) in keys.items()}
        rec(
            PortGroup(
                line=line,
                feature=feature,
                name=name,
                listed=name in listed,
                cos_list=cos,
                port_set=port_set,
                settings=settings,
            )
        )
        scope = f"{feature} {name}" + (f" ({port_set})" if port_set else "")
        if feature == "pfc" and keys:
            rec(
                PfcConfig(
                    line=line,
                    scope=scope,
                    priorities=cos,
                    # no port_group_list in the capture (an excerpt): whether switchd uses it
                    # is unknown, not False
                    enabled=(name in listed) if list_key in kv else None,
                    rx_enabled=text_bool(settings.get("rx_enable")),
                    tx_enabled=text_bool(settings.get("tx_enable")),
                    internal_cos=True,
                )
            )
        elif feature == "ecn_red" and keys:
            prob = keys.get("probability")
            if prob is not None and text_float(prob[0]) is None:
                result.warn(prob[1], "probability: expected a finite number", prob[0])
            for q in cos or (None,):
                rec(
                    EcnConfig(
                        line=line,
                        scope=scope,
                        queue=q,
                        profile=name,
                        min_bytes=text_int(settings.get("min_threshold_bytes")),
                        max_bytes=text_int(settings.get("max_threshold_bytes")),
                        min_raw=settings.get("min_threshold_bytes"),
                        max_raw=settings.get("max_threshold_bytes"),
                        probability_pct=text_float(settings.get("probability")),
                        mode="ecn" if text_bool(settings.get("ecn_enable")) else "red",
                        ecn_enabled=text_bool(settings.get("ecn_enable")),
                        extra={"queue_is": "internal-cos", "listed": str(name in listed).lower()},
                    )
                )


def text_bool(v: str | None) -> bool | None:
    if v is None:
        return None
    return v.strip().lower() in ("true", "1", "yes", "on")


def text_int(v: str | None) -> int | None:
    try:
        return int(v) if v is not None else None
    except ValueError:
        return None


def text_float(v: str | None) -> float | None:
    """A finite number, or ``None`` (absent, unreadable, ``nan``, ``inf``, ``1e999``)."""
    try:
        return finite_float(v) if v is not None else None
    except ValueError:
        return None
