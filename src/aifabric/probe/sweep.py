"""One probe sweep: collect every target's host state and run the active probes, into a bundle
(``DIR/<host>/<captures>``, the layout ``diagnose`` and ``verify --bundle`` read).

Targets are lab nodes (``--lab``: each node's namespace, peers from the lab plan), this machine
(``--local``) or SSH hosts. The active probes of a target are the path MTU with DF set and an
RTT series to each of its peers: for a lab server, every other server; for a lab switch, the
far end of each numbered switch link (S11 asks for every path; per link is how a rollout
checks it, because ECMP hides a bad link from most host-to-host probes).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aifabric.lab.plan import LabPlan
from aifabric.probe.active import MtuResult, path_mtu, rtt_series
from aifabric.probe.bundle import write_host, write_tar
from aifabric.probe.collectors import Capture, collect_host
from aifabric.probe.fanout import HostOutcome, fan_out
from aifabric.probe.runner import CmdResult, NetnsRunner, Runner

__all__ = ["Peer", "SweepResult", "lab_targets", "sweep"]


@dataclass(frozen=True)
class Peer:
    """An address to probe from a target, with the MTU the target's own interface has.

    ``label`` names the peer in results (``leaf1 via eth2`` for a switch link); ``node`` is the
    peer's lab node name and ``iface`` the target's own interface for a switch-to-switch link
    (None between servers), so a caller can pin the probe to it (``ping -I IFACE``)."""

    address: str
    local_mtu: int
    label: str
    node: str | None = None
    iface: str | None = None

    @property
    def tag(self) -> str:
        """The file-name tag of this peer's captures: the interface of a switch link, else
        the peer node (else the label), made file-name safe."""
        return _safe(self.iface or self.node or self.label.split(" ")[0])


@dataclass
class SweepResult:
    bundle: Path
    outcomes: list[HostOutcome[dict[str, Any]]]
    tarball: Path | None = None
    seconds: float = 0.0
    mtu: list[dict[str, Any]] = field(default_factory=list)


def lab_targets(plan: LabPlan) -> dict[str, tuple[str, list[Peer]]]:
    """node -> (namespace, peers) for a lab: the one computation of who probes whom, used by
    the sweep and by ``lab capture`` (:mod:`aifabric.lab.capture`).

    A server's peers are every other server's first gateway-facing address, probed at the
    server's own MTU on its first interface; a router's peers are the far end of each numbered
    link to another router, at the MTU of its own end, both directions (a caller wanting one
    direction per link keeps the peers whose node sorts after the target)."""
    servers = [n for n in plan.nodes.values() if n.role == "server"]
    first = {
        s.name: (plan.gateways[s.name][0][1].split("/")[0],
                 next((i.mtu for i in s.ifaces if i.name == plan.gateways[s.name][0][0]), 1500))
        for s in servers if plan.gateways.get(s.name)
    }
    out: dict[str, tuple[str, list[Peer]]] = {}
    for node in plan.nodes.values():
        peers: list[Peer] = []
        if node.role == "server" and node.name in first:
            mtu = first[node.name][1]
            peers = [Peer(addr, mtu, other, node=other) for other, (addr, _) in first.items()
                     if other != node.name]
        elif node.router:
            for iface in node.ifaces:
                peer = plan.nodes.get(iface.peer)
                if iface.address is None or peer is None or not peer.router:
                    continue
                far = next((p for p in peer.ifaces if p.name == iface.peer_iface), None)
                if far is not None and far.address:
                    peers.append(Peer(far.address.split("/")[0], iface.mtu,
                                      f"{peer.name} via {iface.name}", node=peer.name,
                                      iface=iface.name))
        out[node.name] = (node.ns, peers)
    return out


def _capture(name: str, res: CmdResult) -> Capture:
    return Capture(name=name, argv=res.argv, rc=res.rc, stdout=res.stdout, stderr=res.stderr,
                   seconds=res.seconds, error=res.error, started=time.time() - res.seconds)


def _safe(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in label)[:64]


async def _probe_one(
    runner: Runner, peers: Sequence[Peer], mtu_out: list[dict[str, Any]]
) -> list[Capture]:
    captures = await collect_host(runner)
    for peer in peers:
        res: MtuResult = await path_mtu(runner, peer.address, local_mtu=peer.local_mtu)
        first = res.first
        tag = peer.tag
        if first is not None:
            captures.append(_capture(f"ping-mtu-{tag}.txt", first))
        captures.append(_capture(f"ping-{tag}.txt", await rtt_series(runner, peer.address)))
        mtu_out.append({
            "host": runner.target, "peer": peer.address, "peer_label": peer.label,
            "local_mtu": res.local_mtu, "path_mtu": res.path_mtu,
            "reported_mtu": res.reported_mtu, "probes": [[s, ok] for s, ok, _ in res.probes],
        })
    return captures


async def sweep(
    targets: dict[str, tuple[Runner | None, list[Peer]]],
    out: Path,
    *,
    connect: Callable[[str], Any] | None = None,
    concurrency: int = 16,
    timeout_s: float = 300.0,
    tarball: bool = False,
    progress: Callable[[int, int, str, bool], None] | None = None,
) -> SweepResult:
    """Probe every target into ``out``. A target with a runner uses it (lab, local); one
    without is connected with ``connect(host)`` (SSH). Failures are rows, not exceptions."""
    t0 = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    mtu: list[dict[str, Any]] = []

    @asynccontextmanager
    async def _given(host: str) -> AsyncIterator[Runner]:
        runner = targets[host][0]
        if runner is None:
            if connect is None:
                raise RuntimeError(f"{host}: no way to reach it")
            async with connect(host) as remote:
                yield _Named(host, remote)
            return
        yield _Named(host, runner)

    async def work(runner: Runner) -> dict[str, Any]:
        captures = await _probe_one(runner, targets[runner.target][1], mtu)
        return write_host(out, runner.target, captures)

    outcomes = await fan_out(list(targets), work, connect=_given, concurrency=concurrency,
                             timeout_s=timeout_s, progress=progress)
    result = SweepResult(bundle=out, outcomes=outcomes, seconds=time.monotonic() - t0, mtu=mtu)
    if tarball:
        result.tarball = write_tar(out)
    return result


@dataclass
class _Named:
    """A runner answering to the name the target was given by (an SSH runner names itself
    ``user@host:port``; the bundle folder and the result row use the name as given)."""

    target: str
    inner: Runner

    async def run(self, argv: Sequence[str], *, timeout: float) -> CmdResult:
        return await self.inner.run(argv, timeout=timeout)


def lab_runners(plan: LabPlan) -> dict[str, tuple[Runner | None, list[Peer]]]:
    return {
        node: (NetnsRunner(node, ns), peers) for node, (ns, peers) in lab_targets(plan).items()
    }
