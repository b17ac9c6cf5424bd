"""Render a switch intent as a SONiC ``config_db.json`` and plan it against an existing one.

One file per switch, ``<device>.json`` (evidence kind ``sonic-config-db``), holding only the
tables the lossless intent owns (:data:`TABLES`), in the form ``config load`` /
``sonic-cfggen -j`` take and ``show runningconfiguration all`` prints: every value a string,
tables sorted by name, the entries of per-port tables in front-panel order, fields sorted.

What each table carries (field names and value forms as sonic-buildimage
``files/build_templates/qos_config.j2`` / ``buffers_config.j2`` write them, meanings from
sonic-swss ``doc/swss-schema.md`` and the SONiC wiki "Configuration"):

* ``DEVICE_METADATA|localhost``: ``hostname``, ``buffer_model`` (below) and
  ``default_pfcwd_status`` (what ``pfcwd start_default`` reads).
* ``PORT``: one entry per fabric port. SONiC names a port after its first SerDes lane:
  front-panel port ``n`` of a switch whose widest port has ``W`` lanes is ``Ethernet{(n-1)*W}``;
  a port broken out into ``c`` sub-ports splits its lanes, sub-port ``k`` being
  ``Ethernet{(n-1)*W + (k-1)*W/c}`` with ``W/c`` lanes (:func:`sonic_port`). ``W`` comes from
  the front-panel speed (:func:`lanes_for_speed`: 8 lanes at 400G/800G, 4 at 100G/200G/40G, 2 at
  50G, 1 at 25G and below). ``index`` is the front-panel number, ``speed`` in Mb/s, ``mtu`` the
  link's MTU, ``admin_status`` up; a breakout lists all its sub-ports, the unused ones admin
  down. The parse side maps the names back (:func:`aifabric.dialects.ports.sonic_neutral_names`:
  the widest port's lane count is the front-panel width; ``index`` gives it when every port is
  broken out). The real lane numbers and aliases come from the platform's ``port_config.ini``; a
  change plan therefore never rewrites ``lanes``/``alias``/``index`` of a port the switch
  already has.
* ``DSCP_TO_TC_MAP|AZURE``: all 64 DSCP values (as ``qos_config.j2``), the intent's map, every
  other DSCP to TC 0. ``TC_TO_QUEUE_MAP`` and ``MAP_PFC_PRIORITY_TO_QUEUE`` identity over
  0-7; ``TC_TO_PRIORITY_GROUP_MAP``: each lossless TC to the PG of its number, the rest PG 0.
  The maps keep SONiC's default name ``AZURE``, so a plan against a running switch rewrites
  the entries that differ (``DSCP_TO_TC_MAP/AZURE/26``) instead of adding a second map.
* ``PORT_QOS_MAP|<port>``: the four maps, and on lossless ports only ``pfc_enable`` = the PFC
  priorities (and ``pfcwd_sw_enable`` the same when the watchdog is on); no PFC elsewhere.
* ``SCHEDULER``: ``scheduler.<tc>`` per traffic class, ``DWRR`` with the class's
  ``weight_percent`` or ``STRICT`` (CNP); ``QUEUE|<port>|<q>`` binds it to queue ``q``
  (queues = TCs, 1:1), and ``wred_profile: AZURE_LOSSLESS`` on the RoCE queue of every
  lossless port.
* ``WRED_PROFILE|AZURE_LOSSLESS``: ``ecn: ecn_all``, green/yellow/red min/max thresholds =
  the intent's Kmin/Kmax bytes, drop (= marking) probability = pmax % (an integer: SONiC
  takes 0-100).
* Buffers (the SONiC buffer design; sonic-buildimage ``buffers_config.j2`` and the platform
  ``buffers_defaults_t*.j2``): ``BUFFER_POOL`` ``ingress_lossless_pool`` (ingress, dynamic)
  and ``egress_lossless_pool`` (egress, static); ``BUFFER_PROFILE`` ``ingress_lossy_profile``,
  ``egress_lossless_profile``, ``egress_lossy_profile`` and one lossless PG profile per
  (speed, cable length, headroom), named ``pg_lossless_<speed Mb/s>_<cable>m_profile`` as
  SONiC's buffer manager names them, with ``xoff`` = the port's headroom (the IEEE bound of
  :func:`aifabric.perf.hardware.pfc_headroom`), ``xon`` = two MTU-size frames, ``size`` =
  xon + xoff, ``dynamic_th`` 0; ``BUFFER_PG|<port>|0`` lossy and ``BUFFER_PG|<port>|<pg>``
  lossless; ``BUFFER_QUEUE`` lossless for the RoCE queue, lossy for the others;
  ``CABLE_LENGTH|AZURE`` the cable of every port in whole metres (rounded up).

  **Buffer model.** When the switch's buffer size is known (fabric file or catalog) the
  *traditional* model is rendered: every pool with ``size`` = that buffer. When it is not, the
  pools cannot be sized honestly, and the *dynamic* model is rendered instead
  (``buffer_model: dynamic``): SONiC's buffer manager computes the pool sizes itself, so the
  pools carry no ``size`` (SONiC "Dynamically Headroom Calculation" design: pool sizes are
  calculated when not configured), while the lossless PG profiles keep the intent's ``xoff``
  as a static headroom override (a profile with ``xoff`` given is not recalculated). The
  dynamic model needs a platform with a headroom plug-in (NVIDIA Spectrum); on others give
  ``buffer_bytes`` in the fabric file.
* ``PFC_WD|<port>`` on each lossless port: ``action`` and ``detection_time`` /
  ``restoration_time`` (ms) of ``qos.pfc_watchdog``; ``PFC_WD|GLOBAL`` ``POLL_INTERVAL``
  200 ms (sonic-utilities ``pfcwd`` default), lowered to the detection/restoration time
  when that is shorter (``pfcwd`` refuses a poll interval above them).

The JSON is built from Python dictionaries and dumped with ``json.dumps``; the template
``templates/config_db.json.j2`` only frames it and names the documents it follows.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Literal

from aifabric.dialects.intent import DeviceIntent, PortIntent
from aifabric.dialects.render import ChangePlan, RenderedFile, plan_json_patch, template_env

__all__ = [
    "DIALECT",
    "FOLLOWS",
    "TABLES",
    "SonicDialect",
    "SonicPortName",
    "build_config_db",
    "lanes_for_speed",
    "plan_config_db",
    "render_config_db",
    "sonic_port",
]

FOLLOWS: tuple[str, ...] = (
    "https://github.com/sonic-net/SONiC/wiki/Configuration",
    "https://github.com/sonic-net/sonic-buildimage/blob/master/files/build_templates/qos_config.j2",
    "https://github.com/sonic-net/sonic-buildimage/blob/master/files/build_templates/buffers_config.j2",
    "https://github.com/sonic-net/sonic-swss/blob/master/doc/swss-schema.md",
    "https://github.com/sonic-net/SONiC/blob/master/doc/qos/dynamically-headroom-calculation.md",
    "https://github.com/sonic-net/sonic-utilities/blob/master/pfcwd/main.py",
)

MAP_NAME = "AZURE"
"""SONiC's default QoS map name (``qos_config.j2``): kept so a plan edits the running maps."""
WRED_NAME = "AZURE_LOSSLESS"
CABLE_KEY = "AZURE"
INGRESS_POOL = "ingress_lossless_pool"
EGRESS_POOL = "egress_lossless_pool"
EGRESS_LOSSY_POOL = "egress_lossy_pool"
INGRESS_LOSSY = "ingress_lossy_profile"
EGRESS_LOSSLESS = "egress_lossless_profile"
EGRESS_LOSSY = "egress_lossy_profile"
QUEUES = 8
"""Unicast queues per port (0-7) the maps and ``BUFFER_QUEUE`` cover."""
POLL_INTERVAL_MS = 200
"""sonic-utilities ``pfcwd`` default poll interval (``DEFAULT_POLL_INTERVAL``)."""

TABLES: tuple[str, ...] = (
    "BUFFER_PG",
    "BUFFER_POOL",
    "BUFFER_PROFILE",
    "BUFFER_QUEUE",
    "CABLE_LENGTH",
    "DEVICE_METADATA",
    "DSCP_TO_TC_MAP",
    "MAP_PFC_PRIORITY_TO_QUEUE",
    "PFC_WD",
    "PORT",
    "PORT_QOS_MAP",
    "QUEUE",
    "SCHEDULER",
    "TC_TO_PRIORITY_GROUP_MAP",
    "TC_TO_QUEUE_MAP",
    "WRED_PROFILE",
)
"""The config_db tables the render writes and a change plan edits (sorted)."""

PER_PORT_TABLES = frozenset(
    {"BUFFER_PG", "BUFFER_QUEUE", "PFC_WD", "PORT", "PORT_QOS_MAP", "QUEUE"}
)
"""Tables keyed by port (``Ethernet0``, ``Ethernet0|3``): a plan touches only the entries of
the ports it renders, never those of the switch's other ports."""
FIELD_OWNED = frozenset(
    {"BUFFER_PG", "BUFFER_QUEUE", "PFC_WD", "PORT_QOS_MAP", "QUEUE", "SCHEDULER",
     "BUFFER_PROFILE", "WRED_PROFILE"}
)
"""Tables whose every field the intent states: a field the render lacks is removed
(``pfc_enable`` of a port that must not be lossless)."""
HARDWARE_FIELDS = frozenset({"lanes", "alias", "index"})
"""``PORT`` fields the platform's ``port_config.ini`` defines: left as the switch has them."""

_SONIC_PORT = re.compile(r"^Ethernet(\d+)")


def lanes_for_speed(speed_gbps: float) -> int:
    """SerDes lanes of a front-panel port at ``speed_gbps``: 8 at 400G and up (8x50G PAM4,
    8x100G), 4 at 100G/200G/40G (4x25G NRZ, 4x50G PAM4, 4x10G), 2 at 50G, 1 below."""
    if speed_gbps >= 400:
        return 8
    if speed_gbps >= 100 or speed_gbps == 40:
        return 4
    if speed_gbps >= 50:
        return 2
    return 1


def _front(name: str) -> tuple[int, int | None]:
    """Neutral ``Ethernet7`` → (7, None); ``Ethernet7/2`` → (7, 2)."""
    head, _, sub = name.partition("/")
    m = re.fullmatch(r"Ethernet(\d+)", head)
    n = int(m.group(1)) if m else 0
    return n, int(sub) if sub.isdecimal() else None


def _width(intent: DeviceIntent) -> int:
    """Lanes of the switch's widest front-panel port (the naming stride)."""
    width = 1
    for p in intent.ports:
        n, _ = _front(p.name)
        count = intent.breakouts.get(n, 1)
        lanes = lanes_for_speed(p.speed_gbps * count)
        if lanes % count:
            lanes = count * math.ceil(lanes / count)
        width = max(width, lanes)
    return width


@dataclass(frozen=True, slots=True)
class SonicPortName:
    """A neutral port's SONiC name, lanes, alias and front-panel index."""

    name: str
    lanes: tuple[int, ...]
    alias: str
    index: int


def sonic_port(neutral: str, width: int, breakouts: dict[int, int]) -> SonicPortName:
    """The SONiC port of neutral ``neutral`` on a switch whose front-panel ports have ``width``
    lanes: ``Ethernet7`` (width 8) → ``Ethernet48`` lanes 48-55; ``Ethernet7/2`` of a 4-way
    breakout → ``Ethernet50`` lanes 50-51. Aliases follow the NVIDIA Spectrum hwsku form
    (``etp7``, breakout ``etp7b``)."""
    n, sub = _front(neutral)
    first = (max(n, 1) - 1) * width
    count = breakouts.get(n, 1)
    if sub is None or count <= 1:
        lanes = tuple(range(first, first + width))
        return SonicPortName(f"Ethernet{first}", lanes, f"etp{n}", n)
    per = max(width // count, 1)
    start = first + (sub - 1) * per
    letter = chr(ord("a") + (sub - 1) % 26)
    return SonicPortName(f"Ethernet{start}", tuple(range(start, start + per)), f"etp{n}{letter}", n)


def _port_entry(sp: SonicPortName, admin: str, mtu: int, speed_gbps: float) -> dict[str, str]:
    return {
        "admin_status": admin,
        "alias": sp.alias,
        "index": str(sp.index),
        "lanes": _csv(list(sp.lanes)),
        "mtu": str(mtu),
        "speed": str(int(speed_gbps * 1000)),
    }


def _cable(port: PortIntent) -> int:
    return max(1, math.ceil(port.cable_m))


def _xon(port: PortIntent) -> int:
    return 2 * port.mtu_bytes


def _profile_name(port: PortIntent, taken: dict[str, int]) -> str:
    """``pg_lossless_400000_50m_profile``; a second headroom at the same speed and cable (another
    MTU) gets ``_mtu<bytes>`` appended."""
    base = f"pg_lossless_{int(port.speed_gbps * 1000)}_{_cable(port)}m_profile"
    headroom = port.headroom_bytes or 0
    if taken.get(base, headroom) == headroom:
        taken[base] = headroom
        return base
    alt = f"pg_lossless_{int(port.speed_gbps * 1000)}_{_cable(port)}m_mtu{port.mtu_bytes}_profile"
    taken[alt] = headroom
    return alt


def _ranges(ids: list[int]) -> list[str]:
    """[0, 1, 2, 4, 5, 6, 7] → ["0-2", "4-7"] (SONiC's ``BUFFER_QUEUE`` key form)."""
    out: list[str] = []
    for i in sorted(ids):
        if out and "-" in out[-1] and int(out[-1].split("-")[1]) == i - 1:
            out[-1] = f"{out[-1].split('-')[0]}-{i}"
        elif out and "-" not in out[-1] and int(out[-1]) == i - 1:
            out[-1] = f"{out[-1]}-{i}"
        else:
            out.append(str(i))
    return out


def _csv(xs: tuple[int, ...] | list[int]) -> str:
    return ",".join(str(x) for x in sorted(xs))


def build_config_db(intent: DeviceIntent) -> dict[str, Any]:
    """The config_db tables of ``intent`` as a dictionary (tables sorted, port entries in
    front-panel order, fields sorted; every value a string)."""
    qos = intent.qos
    width = _width(intent)
    names = {p.name: sonic_port(p.name, width, intent.breakouts) for p in intent.ports}
    ports = sorted(intent.ports, key=lambda p: names[p.name].lanes[0])
    lossless_tcs = sorted({tc.tc for tc in qos.traffic_classes if tc.lossless}
                          | set(qos.pfc_priorities))
    pfc = _csv(qos.pfc_priorities)
    wd = qos.pfc_watchdog if qos.pfc_watchdog is not None and qos.pfc_watchdog.enabled else None
    dynamic = intent.buffer_bytes is None
    roce_q = intent.roce_queue

    t: dict[str, dict[str, Any]] = {}
    t["DEVICE_METADATA"] = {
        "localhost": {
            "buffer_model": "dynamic" if dynamic else "traditional",
            "default_pfcwd_status": "enable" if wd is not None else "disable",
            "hostname": intent.name,
        }
    }
    rows: list[tuple[int, str, dict[str, str]]] = []
    for p in ports:
        sp = names[p.name]
        rows.append((sp.lanes[0], sp.name, _port_entry(sp, "up", p.mtu_bytes, p.speed_gbps)))
    # a breakout creates all its sub-ports (SONiC dynamic port breakout): the unused ones are
    # listed admin down, so the front-panel port's lanes are all accounted for
    used = {sp.name for sp in names.values()}
    for front, count in sorted(intent.breakouts.items()):
        subs = [p for p in ports if _front(p.name)[0] == front]
        if not subs or count <= 1:
            continue
        for k in range(1, count + 1):
            sp = sonic_port(f"Ethernet{front}/{k}", width, intent.breakouts)
            if sp.name not in used:
                entry = _port_entry(sp, "down", intent.device_mtu or 9100, subs[0].speed_gbps)
                rows.append((sp.lanes[0], sp.name, entry))
    t["PORT"] = {name: entry for _, name, entry in sorted(rows)}

    dscp = {d: qos.dscp_to_tc.get(d, 0) for d in range(64)}
    t["DSCP_TO_TC_MAP"] = {MAP_NAME: {str(d): str(tc) for d, tc in dscp.items()}}
    identity = {str(i): str(i) for i in range(QUEUES)}
    t["TC_TO_QUEUE_MAP"] = {MAP_NAME: dict(identity)}
    t["MAP_PFC_PRIORITY_TO_QUEUE"] = {MAP_NAME: dict(identity)}
    t["TC_TO_PRIORITY_GROUP_MAP"] = {
        MAP_NAME: {str(i): str(i if i in lossless_tcs else 0) for i in range(QUEUES)}
    }

    pqm: dict[str, Any] = {}
    for p in ports:
        entry = {
            "dscp_to_tc_map": MAP_NAME,
            "pfc_to_queue_map": MAP_NAME,
            "tc_to_pg_map": MAP_NAME,
            "tc_to_queue_map": MAP_NAME,
        }
        if p.lossless and qos.pfc_priorities:
            entry["pfc_enable"] = pfc
            if wd is not None:
                entry["pfcwd_sw_enable"] = pfc
        pqm[names[p.name].name] = dict(sorted(entry.items()))
    t["PORT_QOS_MAP"] = pqm

    sched: dict[str, Any] = {}
    for tc in sorted(qos.traffic_classes, key=lambda c: c.tc):
        if tc.scheduler == "strict":
            sched[f"scheduler.{tc.tc}"] = {"type": "STRICT"}
        else:
            sched[f"scheduler.{tc.tc}"] = {"type": "DWRR", "weight": str(tc.weight_percent or 1)}
    t["SCHEDULER"] = sched
    queue: dict[str, Any] = {}
    for p in ports:
        for tc in sorted(qos.traffic_classes, key=lambda c: c.tc):
            fields = {"scheduler": f"scheduler.{tc.tc}"}
            if tc.tc == roce_q and p.lossless and qos.ecn is not None:
                fields["wred_profile"] = WRED_NAME
            queue[f"{names[p.name].name}|{tc.tc}"] = fields
    t["QUEUE"] = queue
    if qos.ecn is not None:
        e = qos.ecn
        prob = str(max(0, min(100, round(e.pmax_percent))))
        wred: dict[str, str] = {"ecn": "ecn_all"}
        for color in ("green", "yellow", "red"):
            wred[f"{color}_drop_probability"] = prob
            wred[f"{color}_max_threshold"] = str(e.kmax_bytes)
            wred[f"{color}_min_threshold"] = str(e.kmin_bytes)
            wred[f"wred_{color}_enable"] = "true"
        t["WRED_PROFILE"] = {WRED_NAME: dict(sorted(wred.items()))}

    _buffers(t, intent, ports, names, lossless_tcs, dynamic)

    if wd is not None:
        pfcwd: dict[str, Any] = {}
        poll = min(POLL_INTERVAL_MS, wd.detection_time_ms, wd.restoration_time_ms)
        pfcwd["GLOBAL"] = {"POLL_INTERVAL": str(poll)}
        for p in ports:
            if p.lossless:
                pfcwd[names[p.name].name] = {
                    "action": wd.action,
                    "detection_time": str(wd.detection_time_ms),
                    "restoration_time": str(wd.restoration_time_ms),
                }
        t["PFC_WD"] = pfcwd
    return {k: t[k] for k in sorted(t) if t[k]}


def _buffers(
    t: dict[str, dict[str, Any]],
    intent: DeviceIntent,
    ports: list[PortIntent],
    names: dict[str, SonicPortName],
    lossless_tcs: list[int],
    dynamic: bool,
) -> None:
    """BUFFER_POOL / BUFFER_PROFILE / BUFFER_PG / BUFFER_QUEUE / CABLE_LENGTH (see the module
    docstring for the model and the numbers)."""
    if dynamic:
        # the dynamic model sizes the ingress and egress-lossy pools itself; the static
        # egress_lossless_pool is the platform's (buffers_defaults), left as the switch has it
        t["BUFFER_POOL"] = {
            EGRESS_LOSSY_POOL: {"mode": "dynamic", "type": "egress"},
            INGRESS_POOL: {"mode": "dynamic", "type": "ingress"},
        }
        lossy_pool = EGRESS_LOSSY_POOL
        egress_lossless: dict[str, str] = {"dynamic_th": "7", "pool": EGRESS_POOL, "size": "0"}
    else:
        size = str(intent.buffer_bytes)
        t["BUFFER_POOL"] = {
            EGRESS_POOL: {"mode": "static", "size": size, "type": "egress"},
            INGRESS_POOL: {"mode": "dynamic", "size": size, "type": "ingress"},
        }
        lossy_pool = EGRESS_POOL
        egress_lossless = {"pool": EGRESS_POOL, "size": "0", "static_th": size}
    profiles: dict[str, Any] = {
        EGRESS_LOSSLESS: egress_lossless,
        EGRESS_LOSSY: {"dynamic_th": "3", "pool": lossy_pool, "size": "1518"},
        INGRESS_LOSSY: {"dynamic_th": "3", "pool": INGRESS_POOL, "size": "0"},
    }
    pg: dict[str, Any] = {}
    bq: dict[str, Any] = {}
    taken: dict[str, int] = {}
    roce_q = intent.roce_queue
    for p in ports:
        sp = names[p.name].name
        pg[f"{sp}|0"] = {"profile": INGRESS_LOSSY}
        if p.lossless and p.headroom_bytes is not None:
            name = _profile_name(p, taken)
            xon = _xon(p)
            profiles[name] = {
                "dynamic_th": "0",
                "pool": INGRESS_POOL,
                "size": str(xon + p.headroom_bytes),
                "xoff": str(p.headroom_bytes),
                "xon": str(xon),
            }
            for key in _ranges([tc for tc in lossless_tcs if tc != 0]):
                pg[f"{sp}|{key}"] = {"profile": name}
        lossless_q = roce_q if p.lossless else None
        lossy = [q for q in range(QUEUES) if q != lossless_q]
        entries = [(k, EGRESS_LOSSY) for k in _ranges(lossy)]
        if lossless_q is not None:
            entries.append((str(lossless_q), EGRESS_LOSSLESS))
        for key, prof in sorted(entries, key=lambda kv: int(kv[0].split("-")[0])):
            bq[f"{sp}|{key}"] = {"profile": prof}
    t["BUFFER_PROFILE"] = dict(sorted(profiles.items()))
    t["BUFFER_PG"] = pg
    t["BUFFER_QUEUE"] = bq
    t["CABLE_LENGTH"] = {CABLE_KEY: {names[p.name].name: f"{_cable(p)}m" for p in ports}}


def render_config_db(intent: DeviceIntent) -> str:
    """``intent`` as config_db JSON text (4-space indent, trailing newline)."""
    body = json.dumps(build_config_db(intent), indent=4)
    text = template_env("aifabric.dialects.sonic").get_template("config_db.json.j2").render(
        config_db=body, device=intent.name
    )
    return text


def _port_of(key: str) -> str | None:
    """``Ethernet0`` / ``Ethernet0|3`` → ``Ethernet0``; other keys (``GLOBAL``) → None."""
    m = _SONIC_PORT.match(key)
    if m is None:
        return None
    return key.split("|", 1)[0]


def plan_config_db(device: str, path: str, rendered: str, existing: str | None) -> ChangePlan:
    """An RFC 6902 JSON Patch from ``existing`` to ``rendered`` over :data:`TABLES`
    (:func:`aifabric.dialects.render.plan_json_patch`), narrowed to what the intent owns:

    * per-port tables: only the entries of the rendered ports are compared, so the switch's
      other ports keep theirs (an existing ``BUFFER_PG|Ethernet0|3-4`` of a rendered port goes,
      ``Ethernet100``'s stays);
    * named objects (maps, schedulers, WRED and buffer profiles, pools,
      ``DEVICE_METADATA|localhost``): added or edited, never removed, since ports the render
      does not cover may still use them;
    * ``PORT``: ``lanes``/``alias``/``index`` of a port the switch has are not rewritten;
    * fields the render does not state in a table it fully owns (:data:`FIELD_OWNED`) are
      removed: ``pfc_enable`` of a port that must not be lossless.
    """
    if existing is None:
        return plan_json_patch(device, path, rendered, None, tables=TABLES)
    want = json.loads(rendered)
    try:
        have_raw = json.loads(existing)
    except ValueError:
        return plan_json_patch(device, path, rendered, existing, tables=TABLES)
    if not isinstance(have_raw, dict):
        return plan_json_patch(device, path, rendered, existing, tables=TABLES)
    rendered_ports = set(want.get("PORT", {}))
    have: dict[str, Any] = {}
    for table in TABLES:
        h = have_raw.get(table)
        if not isinstance(h, dict):
            continue
        w = want.get(table, {})
        if table in PER_PORT_TABLES:
            h = {k: v for k, v in h.items()
                 if _port_of(k) in rendered_ports or (_port_of(k) is None and k in w)}
        else:
            # named objects (maps, profiles, pools, schedulers, DEVICE_METADATA|localhost):
            # the switch's other ports may use the ones the render does not have
            h = {k: v for k, v in h.items() if k in w}
        if table == "PORT":
            h = {k: ({f: x for f, x in v.items() if f not in HARDWARE_FIELDS}
                     if isinstance(v, dict) else v) for k, v in h.items()}
            want["PORT"] = {k: ({f: x for f, x in v.items() if f not in HARDWARE_FIELDS}
                                if k in h else v) for k, v in w.items()}
        have[table] = h
    base = plan_json_patch(
        device, path, json.dumps(want), json.dumps(have), tables=TABLES
    )
    ops: list[dict[str, Any]] = json.loads(base.plan)
    for table in sorted(FIELD_OWNED):
        w, h = want.get(table), have.get(table)
        if not isinstance(w, dict) or not isinstance(h, dict):
            continue
        for key, fields in w.items():
            hv = h.get(key)
            if not isinstance(hv, dict) or not isinstance(fields, dict):
                continue
            for fname in sorted(set(hv) - set(fields)):
                ops.append({"op": "remove", "path": f"/{table}/{_ptr(key)}/{_ptr(fname)}"})
    added = sum(1 for o in ops if o["op"] != "remove")
    removed = sum(1 for o in ops if o["op"] == "remove")
    return ChangePlan(device, path, "existing", added, removed, json.dumps(ops, indent=2) + "\n")


def _ptr(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


class SonicDialect:
    """SONiC ``config_db.json``: renders switches, reads back with ``sonic-config-db``."""

    name = "sonic"
    title = "SONiC config_db.json"
    role: Literal["switch", "host"] = "switch"
    follows: tuple[str, ...] = FOLLOWS

    def render(self, intent: DeviceIntent) -> list[RenderedFile]:
        """One ``<device>.json`` per switch."""
        return [
            RenderedFile(
                device=intent.name,
                path=f"{intent.name}.json",
                text=render_config_db(intent),
                kind="sonic-config-db",
            )
        ]

    def plan(self, rendered: RenderedFile, existing: str | None) -> ChangePlan:
        """The JSON Patch that turns ``existing`` into ``rendered`` (:func:`plan_config_db`)."""
        return plan_config_db(rendered.device, rendered.path, rendered.text, existing)


DIALECT = SonicDialect()
