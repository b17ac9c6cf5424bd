"""The fix, in the device's own syntax: a finding about a SONiC switch says what to type on
SONiC, one about an NX-OS switch what to put in its policy maps (the finding's ``fix``).

Syntax sources: sonic-utilities (``pfc config priority``, ``pfcwd start``, ``config interface
mtu``, ``ecnconfig``) and the SONiC Configuration wiki; Arista EOS QoS and PFC configuration
guides (``qos map dscp``, ``priority-flow-control priority N no-drop``, ``tx-queue`` ``random-
detect ecn``); Cisco Nexus 9000 QoS guide (``set qos-group``, ``pause pfc-cos``, ``random-
detect ... ecn``, ``priority-flow-control watch-dog-interval``); NVIDIA Cumulus Linux NVUE
(``nv set qos pfc``, ``nv set qos mapping``, ``nv set interface ... link mtu``, as in the
Cumulus 5.10 RoCE page); Cumulus 3.x/4.x ``traffic.conf``; ``mlnx_qos`` for hosts.
"""

from __future__ import annotations

__all__ = ["DIALECT_NAMES", "fix_dscp_map", "fix_ecn", "fix_mtu", "fix_pfc", "fix_watchdog"]

DIALECT_NAMES = {
    "sonic": "SONiC",
    "eos": "Arista EOS",
    "nxos": "Cisco NX-OS",
    "nvue": "NVIDIA Cumulus NVUE",
    "cumulus": "Cumulus traffic.conf",
    "host": "host NIC",
}


def _port(port: str | None, fallback: str) -> str:
    return port if port else fallback


def fix_dscp_map(dialect: str, dscp: int, tc: int) -> str:
    """Map ``dscp`` to traffic class / switch priority ``tc``."""
    return {
        "sonic": (
            f'set "{dscp}": "{tc}" in the DSCP_TO_TC_MAP bound in PORT_QOS_MAP (config load a '
            f'fragment {{"DSCP_TO_TC_MAP": {{"<map>": {{"{dscp}": "{tc}"}}}}}}, then config '
            "qos reload)"
        ),
        "eos": f"qos map dscp {dscp} to traffic-class {tc}",
        "nxos": (
            f"in the type qos policy-map applied by system qos / the interfaces: a class with "
            f"`match dscp {dscp}` and `set qos-group {tc}`"
        ),
        "nvue": f"nv set qos mapping default-global dscp {dscp} switch-priority {tc}",
        "cumulus": f"traffic.cos_{tc}.priority_source.dscp = [{dscp}] (and drop it elsewhere)",
        "host": f"mlnx_qos -i <interface> --dscp2prio set,{dscp},{tc}",
    }.get(dialect, f"map DSCP {dscp} to traffic class {tc}")


def fix_pfc(dialect: str, priority: int, port: str | None = None) -> str:
    """PFC on ``priority`` only."""
    p = priority
    vector = ",".join("1" if i == p else "0" for i in range(8))
    return {
        "sonic": (
            f'pfc_enable "{p}" in PORT_QOS_MAP|{_port(port, "<port>")} (pfc config priority '
            f"on {_port(port, '<port>')} {p}; pfc config priority off for the others)"
        ),
        "eos": (
            f"interface {_port(port, '<interface>')}: priority-flow-control on, "
            f"priority-flow-control priority {p} no-drop, and no other no-drop priority"
        ),
        "nxos": (
            f"network-qos policy under system qos: `pause pfc-cos {p}` in the RoCE class only; "
            f"interface {_port(port, '<interface>')}: priority-flow-control mode on"
        ),
        "nvue": f"nv set qos pfc default-global switch-priority {p} (and unset the others)",
        "cumulus": f"pfc.<port_group>.cos_list = [{p}] for the RoCE ports",
        "host": f"mlnx_qos -i <interface> --pfc {vector}",
    }.get(dialect, f"enable PFC on priority {p} only")


def fix_watchdog(dialect: str, port: str | None = None) -> str:
    """A PFC watchdog that drops."""
    return {
        "sonic": "pfcwd start --action drop ports all detection-time 200 --restoration-time 200",
        "eos": f"interface {_port(port, '<interface>')}: priority-flow-control pause watchdog",
        "nxos": (
            f"interface {_port(port, '<interface>')}: priority-flow-control watch-dog-interval on"
        ),
        "nvue": f"nv set interface {_port(port, '<swp>')} qos pfc-watchdog",
    }.get(dialect, "enable the PFC watchdog (drop) on every PFC port")


def fix_mtu(dialect: str, mtu: int, port: str | None = None) -> str:
    """Port MTU ``mtu``."""
    p = port
    return {
        "sonic": f"config interface mtu {_port(p, '<port>')} {mtu}",
        "eos": f"interface {_port(p, '<interface>')}: mtu {mtu}",
        "nxos": f"interface {_port(p, '<interface>')}: mtu {mtu}",
        "nvue": f"nv set interface {_port(p, '<swp>')} link mtu {mtu}",
        "cumulus": f"/etc/network/interfaces, iface {_port(p, '<swp>')}: mtu {mtu}",
        "host": f"ip link set dev {_port(p, '<interface>')} mtu {mtu} (and persist it)",
        "linux": f"ip link set dev {_port(p, '<interface>')} mtu {mtu} (and persist it)",
    }.get(dialect, f"set MTU {mtu}")


def fix_ecn(dialect: str, queue: int, kmin: int = 150_000, kmax: int = 1_500_000) -> str:
    """ECN marking on ``queue`` between ``kmin`` and ``kmax`` bytes."""
    lo_kb, hi_kb = kmin // 1000, kmax // 1000
    return {
        "sonic": (
            f"a WRED_PROFILE with ecn: ecn_all, green_min_threshold {kmin}, "
            f"green_max_threshold {kmax}, bound to QUEUE|<port>|{queue} (ecnconfig -p "
            f"<profile> -gmin {kmin} -gmax {kmax})"
        ),
        "eos": (
            f"tx-queue {queue}: random-detect ecn minimum-threshold {lo_kb} kbytes "
            f"maximum-threshold {hi_kb} kbytes"
        ),
        "nxos": (
            f"queuing policy class c-out-8q-q{queue}: random-detect minimum-threshold {lo_kb} "
            f"kbytes maximum-threshold {hi_kb} kbytes drop-probability 100 weight 0 ecn"
        ),
        "nvue": (
            f"nv set qos congestion-control default-global traffic-class {queue} "
            f"min-threshold {kmin} max-threshold {kmax}"
        ),
        "cumulus": (
            f"ecn_red.<port_group>.cos_list = [{queue}], min_threshold_bytes = {kmin}, "
            f"max_threshold_bytes = {kmax}"
        ),
    }.get(dialect, f"ECN on queue {queue}, Kmin {kmin} B, Kmax {kmax} B")
