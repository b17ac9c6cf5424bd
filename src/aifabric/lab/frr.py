"""FRR (zebra + bgpd) per router namespace, eBGP numbered or unnumbered, ECMP; and the kernel
route check that says when the lab has converged.

Each router gets ``<lab dir>/frr/<node>/`` owned by the ``frr`` user with ``zebra.conf``,
``bgpd.conf``, logs, pid files and the vty socket (``vtysh --vty_socket DIR``). Daemons run with
``-d -F datacenter -P 0 -z DIR/zserv.api``: daemonised, the datacenter profile (3 s keepalive,
9 s hold, no advertisement delay), no TCP vty, a private zebra socket, nothing written to
``/etc/frr``. zebra.conf carries ``no zebra nexthop kernel enable``: with kernel nexthop
groups a short link flap left one ECMP member in the kernel while FRR still listed two
(FRR 8.4 on Linux 6.x, seen on the machine the lab is tested on).

bgpd: ``no bgp ebgp-requires-policy`` (a lab has no policy), ``bgp bestpath as-path
multipath-relax`` and ``maximum-paths 64`` for ECMP across peers of different ASNs, one
``network`` statement per prefix the node originates (host subnets and host /31s of a leaf).
Unnumbered sessions (``neighbor IFACE interface remote-as external``) use IPv6 link-local
next hops for IPv4 routes (RFC 8950, formerly RFC 5549).

Config syntax: FRR user guide, "BGP" (https://docs.frrouting.org/en/stable-8.4/bgp.html) and
"Zebra" (https://docs.frrouting.org/en/stable-8.4/zebra.html).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from aifabric.errors import EnvironmentProblem
from aifabric.lab.netns import Progress
from aifabric.lab.plan import LabNode, LabPlan
from aifabric.lab.state import FRR_BIN, run

__all__ = [
    "bgp_summary",
    "frr_dir",
    "render_bgpd",
    "render_zebra",
    "route_widths",
    "start_frr",
    "wait_converged",
]


def frr_dir(lab_path: Path, node: str) -> Path:
    return lab_path / "frr" / node


def render_zebra(node: LabNode, d: Path) -> str:
    return (
        f"hostname {node.name}\n"
        f"log file {d}/zebra.log\n"
        "no zebra nexthop kernel enable\n"
    )


def render_bgpd(plan: LabPlan, node: LabNode, d: Path) -> str:
    """bgpd.conf for ``node`` (see the module docstring)."""
    router_id = (node.loopback or "0.0.0.0/32").split("/")[0]
    lines = [
        f"hostname {node.name}",
        f"log file {d}/bgpd.log",
        f"router bgp {node.asn}",
        f" bgp router-id {router_id}",
        " no bgp ebgp-requires-policy",
        " bgp bestpath as-path multipath-relax",
    ]
    for iface in node.ifaces:
        peer = plan.nodes.get(iface.peer)
        if peer is None or not peer.router:
            continue
        if plan.bgp == "unnumbered":
            lines.append(f" neighbor {iface.name} interface remote-as external")
            continue
        peer_if = next((p for p in peer.ifaces if p.name == iface.peer_iface), None)
        if peer_if is None or peer_if.address is None:
            continue
        lines.append(f" neighbor {peer_if.address.split('/')[0]} remote-as {peer.asn}")
    lines.append(" address-family ipv4 unicast")
    lines += [f"  network {prefix}" for prefix in node.originates]
    lines.append("  maximum-paths 64")
    lines.append(" exit-address-family")
    return "\n".join(lines) + "\n"


def _daemon_args(d: Path, daemon: str) -> list[str]:
    return [
        str(FRR_BIN / daemon), "-d", "-F", "datacenter", "-P", "0",
        "-z", f"{d}/zserv.api", "--vty_socket", str(d),
        "-i", f"{d}/{daemon}.pid", "-f", f"{d}/{daemon}.conf",
    ]


def start_frr(plan: LabPlan, lab_path: Path, progress: Progress) -> dict[str, dict[str, int]]:
    """Write configs and start zebra then bgpd in every router namespace; their pids."""
    lab_path.chmod(0o755)  # the daemons run as frr and must reach their directory
    (lab_path / "frr").mkdir(exist_ok=True)
    (lab_path / "frr").chmod(0o755)
    routers = [n for n in plan.nodes.values() if n.router]
    for node in routers:
        d = frr_dir(lab_path, node.name)
        d.mkdir(parents=True, exist_ok=True)
        (d / "zebra.conf").write_text(render_zebra(node, d), encoding="utf-8")
        (d / "bgpd.conf").write_text(render_bgpd(plan, node, d), encoding="utf-8")
        shutil.chown(d, "frr", "frr")
        for f in d.iterdir():
            shutil.chown(f, "frr", "frr")
    for daemon in ("zebra", "bgpd"):
        procs = [
            subprocess.Popen(
                ["ip", "netns", "exec", n.ns, *_daemon_args(frr_dir(lab_path, n.name), daemon)],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            )
            for n in routers
        ]
        for node, proc in zip(routers, procs, strict=True):
            _, err = proc.communicate(timeout=60)
            if proc.returncode != 0:
                raise EnvironmentProblem(
                    f"{daemon} did not start in {node.ns}: {err.strip().splitlines()[-1:]}")
        if daemon == "zebra":
            _wait_files([frr_dir(lab_path, n.name) / "zserv.api" for n in routers], 20)
        progress(f"{daemon} started on {len(routers)} routers")
    pids: dict[str, dict[str, int]] = {}
    _wait_files([frr_dir(lab_path, n.name) / "bgpd.pid" for n in routers], 20)
    for node in routers:
        d = frr_dir(lab_path, node.name)
        pids[node.name] = {
            daemon: int((d / f"{daemon}.pid").read_text().split()[0])
            for daemon in ("zebra", "bgpd")
            if (d / f"{daemon}.pid").exists()
        }
    return pids


def _wait_files(paths: list[Path], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if all(p.exists() for p in paths):
            return
        time.sleep(0.05)
    missing = [str(p) for p in paths if not p.exists()]
    raise EnvironmentProblem(f"FRR did not create {missing[0]} (and {len(missing) - 1} more)")


def route_widths(ns: str) -> dict[str, int]:
    """prefix -> number of next hops in the namespace's main IPv4 table (``ip -j route``)."""
    out = run(["ip", "-n", ns, "-j", "route", "show"], check=False).stdout
    try:
        entries = json.loads(out or "[]")
    except ValueError:
        return {}
    widths: dict[str, int] = {}
    for e in entries:
        if not isinstance(e, dict) or "dst" not in e:
            continue
        hops = e.get("nexthops")
        widths[str(e["dst"])] = len(hops) if isinstance(hops, list) else 1
    return widths


def shortfall(plan: LabPlan) -> dict[str, dict[str, tuple[int, int]]]:
    """Routers whose kernel routes do not yet have the expected ECMP width:
    node -> prefix -> (have, expected)."""
    short: dict[str, dict[str, tuple[int, int]]] = {}
    for name, expected in plan.expected_paths.items():
        have = route_widths(plan.nodes[name].ns)
        miss = {
            prefix: (have.get(prefix, 0), want)
            for prefix, want in expected.items()
            if have.get(prefix, 0) < want
        }
        if miss:
            short[name] = miss
    return short


def wait_converged(
    plan: LabPlan, timeout_s: float, progress: Progress
) -> tuple[bool, dict[str, dict[str, tuple[int, int]]]]:
    """Poll until every router has every prefix at its expected ECMP width."""
    deadline = time.monotonic() + timeout_s
    total = sum(len(v) for v in plan.expected_paths.values())
    while True:
        short = shortfall(plan)
        missing = sum(len(v) for v in short.values())
        progress(f"routes at full ECMP width: {total - missing}/{total}")
        if not short:
            return True, {}
        if time.monotonic() >= deadline:
            return False, short
        time.sleep(0.25)


def vtysh(lab_path: Path, node: LabNode, command: str) -> str:
    """Run one vtysh command on ``node``'s daemons (empty string if they do not answer)."""
    d = frr_dir(lab_path, node.name)
    proc = run(["ip", "netns", "exec", node.ns, "vtysh", "--vty_socket", str(d), "-c", command],
               check=False, timeout=20)
    return proc.stdout


def bgp_summary(lab_path: Path, node: LabNode) -> dict[str, Any]:
    """``show bgp summary json`` of ``node``, {} when bgpd does not answer."""
    try:
        data = json.loads(vtysh(lab_path, node, "show bgp summary json") or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
