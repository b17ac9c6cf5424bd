"""Traffic through a running lab: iperf3 patterns between its servers, and what every link
carried while they ran, read from the routers' own interface counters.

Patterns (servers in plan order, which is fabric-file order: by leaf for a ToR design):

=============  ===============================================================================
``pairwise``   server ``i`` -> server ``i + n/2`` for ``i < n/2``: with servers listed leaf by
               leaf (or site by site) every pair crosses the fabric
``incast``     every other server -> the first server (many-to-one: the receiver's link and
               its leaf's downlink are the bottleneck)
``ring``       server ``i`` -> server ``(i + 1) mod n`` (a ring AllReduce's neighbour traffic)
``cross-site`` each server of the first site -> a server of the second (round robin); an
               error when the lab's servers are in one site
``pairs``      an explicit list of ``"src:dst"`` server names
=============  ===============================================================================

How a run goes:

1. one iperf3 server per flow, in the destination's namespace, on the destination's first
   address and its own port (``iperf3 -s -1 -D -B ADDR -p PORT --pidfile``; pid files under
   ``<lab dir>/traffic/``); the run waits until ``ss -Htln`` shows each listening socket;
2. every router namespace's interface counters (``ip -s -j link``: ``stats64``) are read;
3. all clients start at once (``iperf3 -c DST -B SRC --json -t T -P P``): ``-B`` binds the
   source's first address, and the lab's per-address routing rule sends the traffic out of
   that NIC, so a multi-homed server uses the NIC meant; every second the counters are read
   again for a live view (``on_sample``);
4. when the clients are done the counters are read a last time; every link's bytes are the
   difference. iperf3 3.12 exits 0 even when a test fails with ``--json``, so each flow's
   ``error`` key is read, not the exit code. Servers still alive are killed by the pid in
   their pid file, whatever happened (``finally``).

Rates: a flow's ``received_bits_per_second`` is iperf3's ``end.sum_received`` (payload bits
the server received over the measured seconds). A link's ``tx_mbps`` is its ``tx_bytes``
(frames as the kernel counts them: Ethernet header, IP and TCP headers, payload) over the
wall time between the first and the last counter read, which is a little longer than the test
itself. ``util_percent`` is ``tx_mbps`` over the rate the link is shaped to
(``speed_gbps * 1000 / rate_scale`` Mb/s) when the lab was built with ``--rate-scale``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import re
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Group, RenderableType
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from aifabric.errors import EnvironmentProblem, InputError
from aifabric.lab.netns import alive, kill_pids, ns_exec, shaped_mbit
from aifabric.lab.plan import LabIface, LabNode, LabPlan
from aifabric.lab.state import lab_dir, load_state, require_tools, run
from aifabric.model.device import SWITCH_ROLE_TIER

__all__ = [
    "PATTERNS",
    "Flow",
    "TrafficSample",
    "link_stats",
    "plan_flows",
    "read_counters",
    "run_traffic",
    "sample_view",
    "summarise",
    "traffic_table",
]

PATTERNS = ("pairwise", "incast", "ring", "cross-site", "pairs")
"""Pattern names; ``pairs`` is the explicit list (``pairs=["a:b", ...]``)."""

ACTIVE_BYTES = 1_000_000
"""A tier-1 switch whose uplinks sent fewer bytes than this is idle for the ECMP spread (BGP
keepalives alone send a few hundred bytes a second)."""

_LISTEN_TIMEOUT_S = 10.0
_CONNECT_TIMEOUT_MS = 3000
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")

Progress = Callable[[str], None]
Counters = dict[tuple[str, str], tuple[int, int, int]]
"""(node, iface) -> (tx_bytes, rx_bytes, tx_dropped)."""


@dataclass(frozen=True)
class Flow:
    """One iperf3 client -> server: ``src`` sends to ``dst``'s first address on ``port``."""

    src: str
    dst: str
    src_addr: str
    dst_addr: str
    port: int


@dataclass(frozen=True)
class TrafficSample:
    """One second of a run, for a live view: the busiest links over the last interval."""

    elapsed_s: float
    duration_s: float
    delivered_mbps: float
    """Sum of tx Mb/s on router ports facing servers: what reached the hosts."""
    top: list[tuple[str, str, float, float | None]] = field(default_factory=list)
    """(link, peer, tx Mb/s, utilisation % or None), busiest first."""


# ---------------------------------------------------------------------------------------------
# patterns


def _servers(plan: LabPlan) -> list[LabNode]:
    return [n for n in plan.nodes.values() if n.role == "server" and plan.gateways.get(n.name)]


def _addr(plan: LabPlan, server: str) -> str:
    return plan.gateways[server][0][1].split("/")[0]


def _pairs_from_text(plan: LabPlan, pairs: Sequence[str]) -> list[tuple[str, str]]:
    known = {n.name for n in _servers(plan)}
    out: list[tuple[str, str]] = []
    for text in pairs:
        src, sep, dst = text.partition(":")
        if not sep or not src or not dst:
            raise InputError(f"--pair {text!r}: expected SRC:DST, two server names")
        for name in (src, dst):
            if name not in known:
                some = ", ".join(sorted(known)[:8])
                raise InputError(
                    f"--pair {text!r}: lab {plan.name!r} has no server {name!r} "
                    f"(servers: {some}{', ...' if len(known) > 8 else ''})"
                )
        if src == dst:
            raise InputError(f"--pair {text!r}: source and destination are the same server")
        out.append((src, dst))
    return out


def plan_flows(
    plan: LabPlan, pattern: str, *, pairs: Sequence[str] | None = None, port_base: int = 5201,
) -> list[Flow]:
    """The flows of ``pattern`` on ``plan`` (see the module docstring); ports ``port_base``,
    ``port_base + 1``, ... one per flow. Pure: nothing is started."""
    servers = _servers(plan)
    names = [s.name for s in servers]
    n = len(names)
    if pairs:
        pattern = "pairs"
    if pattern not in PATTERNS:
        raise InputError(f"--pattern {pattern!r}: known patterns are {', '.join(PATTERNS)}")
    if pattern == "pairs":
        if not pairs:
            raise InputError("pattern pairs: give at least one --pair SRC:DST")
        chosen = _pairs_from_text(plan, pairs)
    elif n < 2:
        raise InputError(f"lab {plan.name!r} has {n} server(s): a pattern needs at least 2")
    elif pattern == "pairwise":
        half = n // 2
        chosen = [(names[i], names[i + half]) for i in range(half)]
    elif pattern == "incast":
        chosen = [(s, names[0]) for s in names[1:]]
    elif pattern == "ring":
        chosen = [(names[i], names[(i + 1) % n]) for i in range(n if n > 2 else 1)]
    else:  # cross-site
        sites: dict[str, list[str]] = {}
        for s in servers:
            if s.site is not None:
                sites.setdefault(s.site, []).append(s.name)
        if len(sites) < 2:
            found = ", ".join(sites) or "none"
            raise InputError(
                f"pattern cross-site: lab {plan.name!r} has servers in one site only "
                f"({found}); it needs two (sites: in the fabric file)"
            )
        first, second = list(sites.values())[:2]
        chosen = [(s, second[i % len(second)]) for i, s in enumerate(first)]
    if port_base < 1024 or port_base + len(chosen) - 1 > 65535:
        raise InputError(
            f"--port-base {port_base}: {len(chosen)} flows need ports {port_base}.."
            f"{port_base + len(chosen) - 1}, within 1024..65535"
        )
    return [
        Flow(src, dst, _addr(plan, src), _addr(plan, dst), port_base + k)
        for k, (src, dst) in enumerate(chosen)
    ]


# ---------------------------------------------------------------------------------------------
# counters


def _routers(plan: LabPlan) -> list[LabNode]:
    return [n for n in plan.nodes.values() if n.router]


def _node_counters(node: LabNode) -> dict[tuple[str, str], tuple[int, int, int]]:
    proc = run(["ip", "-n", node.ns, "-s", "-j", "link", "show"], check=False, timeout=20)
    try:
        data = json.loads(proc.stdout or "[]")
    except ValueError:
        return {}
    wanted = {i.name for i in node.ifaces}
    out: dict[tuple[str, str], tuple[int, int, int]] = {}
    if not isinstance(data, list):
        return out
    for entry in data:
        if not isinstance(entry, dict) or entry.get("ifname") not in wanted:
            continue
        stats = entry.get("stats64") or entry.get("stats") or {}
        tx, rx = stats.get("tx", {}), stats.get("rx", {})
        if not isinstance(tx, dict) or not isinstance(rx, dict):
            continue
        try:
            out[(node.name, str(entry["ifname"]))] = (
                int(tx.get("bytes", 0)), int(rx.get("bytes", 0)), int(tx.get("dropped", 0)))
        except (TypeError, ValueError):
            continue
    return out


def read_counters(plan: LabPlan) -> Counters:
    """tx/rx bytes and tx drops of every router interface of the plan (``ip -n NS -s -j link``,
    one process per router, up to 8 at a time)."""
    routers = _routers(plan)
    out: Counters = {}
    if not routers:
        return out
    with ThreadPoolExecutor(max_workers=min(8, len(routers))) as pool:
        for part in pool.map(_node_counters, routers):
            out.update(part)
    return out


def _tier1(node: LabNode) -> bool:
    return SWITCH_ROLE_TIER.get(node.role) == 1


def _is_uplink(plan: LabPlan, node: LabNode, iface: LabIface) -> bool:
    """A tier-1 switch's link of kind ``fabric`` toward another router (its spine)."""
    peer = plan.nodes.get(iface.peer)
    return _tier1(node) and iface.kind == "fabric" and peer is not None and peer.router


def link_stats(
    plan: LabPlan, before: Counters, after: Counters, elapsed_s: float,
) -> list[dict[str, Any]]:
    """Per router interface: bytes sent and received between two counter reads, Mb/s sent,
    and utilisation of the shaped rate (None when the lab is not shaped)."""
    rows: list[dict[str, Any]] = []
    for node in _routers(plan):
        for iface in node.ifaces:
            key = (node.name, iface.name)
            if key not in before or key not in after:
                continue
            tx = max(0, after[key][0] - before[key][0])
            rx = max(0, after[key][1] - before[key][1])
            drops = max(0, after[key][2] - before[key][2])
            mbps = tx * 8 / elapsed_s / 1e6 if elapsed_s > 0 else 0.0
            util = (
                round(100 * mbps / shaped_mbit(plan, iface.speed_gbps), 2)
                if plan.rate_scale else None
            )
            rows.append({
                "link": f"{node.name}:{iface.name}",
                "peer": f"{iface.peer}:{iface.peer_iface}",
                "kind": iface.kind,
                "uplink": _is_uplink(plan, node, iface),
                "tx_bytes": tx,
                "rx_bytes": rx,
                "tx_dropped": drops,
                "tx_mbps": round(mbps, 3),
                "util_percent": util,
            })
    return rows


def _sample(
    plan: LabPlan, prev: Counters, cur: Counters, dt: float, elapsed: float, duration: float,
) -> TrafficSample:
    rows = link_stats(plan, prev, cur, dt)
    servers = {n.name for n in plan.nodes.values() if n.role == "server"}
    delivered = sum(r["tx_mbps"] for r in rows if r["peer"].split(":", 1)[0] in servers)
    busy = sorted((r for r in rows if r["tx_mbps"] >= 0.05), key=lambda r: -r["tx_mbps"])
    return TrafficSample(
        round(elapsed, 2), duration, round(delivered, 2),
        [(r["link"], r["peer"], r["tx_mbps"], r["util_percent"]) for r in busy[:8]],
    )


# ---------------------------------------------------------------------------------------------
# iperf3


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _obj(doc: Any, key: str) -> dict[str, Any]:
    value = doc.get(key) if isinstance(doc, dict) else None
    return value if isinstance(value, dict) else {}


def flow_result(flow: Flow, text: str, stderr: str, code: int | None) -> dict[str, Any]:
    """The flow's row from its ``iperf3 --json`` output; a malformed output is an ``error``,
    never an exception."""
    row: dict[str, Any] = {
        "src": flow.src, "dst": flow.dst, "src_addr": flow.src_addr,
        "dst_addr": flow.dst_addr, "port": flow.port,
        "sent_bits_per_second": None, "received_bits_per_second": None,
        "sent_bytes": None, "received_bytes": None, "retransmits": None, "streams": None,
        "error": None,
    }
    try:
        doc = json.loads(text) if text.strip() else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        tail = (stderr.strip().splitlines() or [""])[-1][:200]
        row["error"] = f"iperf3 wrote no JSON (exit {code}){': ' + tail if tail else ''}"
        return row
    if doc.get("error"):
        row["error"] = str(doc["error"])[:300]
    end = _obj(doc, "end")
    sent, recv = _obj(end, "sum_sent"), _obj(end, "sum_received")
    row["sent_bits_per_second"] = _num(sent.get("bits_per_second"))
    row["received_bits_per_second"] = _num(recv.get("bits_per_second"))
    row["sent_bytes"] = _num(sent.get("bytes"))
    row["received_bytes"] = _num(recv.get("bytes"))
    retr = _num(sent.get("retransmits"))
    row["retransmits"] = int(retr) if retr is not None else None
    streams = end.get("streams")
    if isinstance(streams, list) and streams:
        row["streams"] = len(streams)
    else:
        n = _num(_obj(_obj(doc, "start"), "test_start").get("num_streams"))
        row["streams"] = int(n) if n is not None else None
    if row["error"] is None and row["received_bits_per_second"] is None:
        row["error"] = "iperf3 JSON has no end.sum_received (the test did not finish)"
    return row


def _safe(name: str) -> str:
    return _SAFE.sub("_", name)


@contextlib.contextmanager
def _traffic_lock(d: Path, lab: str) -> Iterator[None]:
    d.mkdir(parents=True, exist_ok=True)
    with (d / ".lock").open("w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError(f"lab {lab!r}: another traffic run is in progress") from None
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _start_servers(plan: LabPlan, flows: list[Flow], d: Path) -> dict[Path, Flow]:
    """iperf3 servers, one per flow, started per destination namespace in one shell."""
    pidfiles: dict[Path, Flow] = {}
    by_dst: dict[str, list[Flow]] = {}
    for f in flows:
        by_dst.setdefault(f.dst, []).append(f)
    for dst, group in by_dst.items():
        cmds = []
        for f in group:
            pf = d / f"iperf3-{_safe(dst)}-{f.port}.pid"
            pf.unlink(missing_ok=True)
            pidfiles[pf] = f
            cmds.append(f"iperf3 -s -1 -D -B {f.dst_addr} -p {f.port} --pidfile {pf}")
        ns_exec(plan.nodes[dst].ns, ["sh", "-ec", "\n".join(cmds)], timeout=30)
    return pidfiles


def _wait_listening(plan: LabPlan, flows: list[Flow]) -> None:
    want: dict[str, set[str]] = {}
    for f in flows:
        want.setdefault(f.dst, set()).add(f"{f.dst_addr}:{f.port}")
    deadline = time.monotonic() + _LISTEN_TIMEOUT_S
    while want:
        for dst in list(want):
            out = ns_exec(plan.nodes[dst].ns, ["ss", "-Htln"], check=False)
            local = {line.split()[3] for line in out.splitlines() if len(line.split()) > 3}
            want[dst] -= local
            if not want[dst]:
                del want[dst]
        if not want:
            return
        if time.monotonic() > deadline:
            missing = "; ".join(f"{d} {', '.join(sorted(s))}" for d, s in want.items())
            raise EnvironmentProblem(
                f"iperf3 servers not listening after {_LISTEN_TIMEOUT_S:g} s: {missing}")
        time.sleep(0.02)


def _read_pids(pidfiles: dict[Path, Flow]) -> list[int]:
    pids: list[int] = []
    deadline = time.monotonic() + 2.0
    pending = set(pidfiles)
    while pending and time.monotonic() < deadline:
        for pf in list(pending):
            with contextlib.suppress(OSError, ValueError, IndexError):
                pids.append(int(pf.read_text(encoding="ascii").split()[0]))
                pending.discard(pf)
        if pending:
            time.sleep(0.02)
    return pids


def _is_iperf3(pid: int) -> bool:
    try:
        return b"iperf3" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _stop_servers(pids: list[int], pidfiles: dict[Path, Flow]) -> int:
    """Kill servers still alive (a client that never connected leaves its ``-1`` server
    waiting); pids re-read from pid files too, in case the first read missed one."""
    for pf in pidfiles:
        with contextlib.suppress(OSError, ValueError, IndexError):
            pids.append(int(pf.read_text(encoding="ascii").split()[0]))
    live = [p for p in set(pids) if alive(p) and _is_iperf3(p)]
    killed = kill_pids(live, grace_s=2.0) if live else 0
    for pf in pidfiles:
        pf.unlink(missing_ok=True)
    return killed


def _client_argv(
    flow: Flow, ns: str, duration_s: int, parallel: int, dscp: int | None, omit_s: int,
    cport: int | None,
) -> list[str]:
    argv = [
        "ip", "netns", "exec", ns, "iperf3", "-c", flow.dst_addr, "-p", str(flow.port),
        "-B", flow.src_addr, "--json", "-t", str(duration_s), "-P", str(parallel),
        "--connect-timeout", str(_CONNECT_TIMEOUT_MS),
    ]
    if omit_s:
        argv += ["-O", str(omit_s)]
    if dscp is not None:
        argv += ["--dscp", str(dscp)]
    if cport is not None:
        argv += ["--cport", str(cport)]
    return argv


def _noop(_: str) -> None:
    return None


def run_traffic(
    name: str,
    pattern: str,
    *,
    duration_s: float = 5,
    parallel: int = 1,
    pairs: Sequence[str] | None = None,
    port_base: int = 5201,
    dscp: int | None = None,
    omit_s: int = 0,
    cport: int | None = None,
    save_dir: Path | None = None,
    progress: Progress | None = None,
    on_sample: Callable[[TrafficSample], None] | None = None,
) -> dict[str, Any]:
    """Run ``pattern`` on lab ``name`` for ``duration_s`` (whole seconds, rounded up: iperf3
    ``-t``) and measure it (see the module docstring).

    ``omit_s`` drops the first seconds from iperf3's figures (``-O``: TCP slow start, a
    throttle's initial burst) and starts the link counters after them; ``cport`` pins the
    client ports (flow ``k`` uses ``cport + k * parallel`` .. ``+ parallel - 1``), which makes
    the ECMP paths repeatable for a given hash seed. ``save_dir`` receives each flow's iperf3
    JSON as ``<src>-<dst>.iperf3.json``. Returns ``pattern``, ``flows``, ``links``,
    ``summary``, ``explanation`` (and ``lab``, ``duration_s``, ``parallel``, ``timeline``)."""
    say = progress or _noop
    require_tools(frr=False)
    state = load_state(name)
    plan = state.plan
    if state.phase != "up":
        raise InputError(f"lab {name!r} is {state.phase}, not up")
    if not 0 < duration_s <= 3600:
        raise InputError(f"--duration {duration_s:g}: expected 1 to 3600 seconds")
    seconds = math.ceil(duration_s - 1e-9)  # iperf3 -t takes whole seconds
    if not 1 <= parallel <= 128:
        raise InputError(f"--parallel {parallel}: expected 1 to 128 streams per flow")
    if dscp is not None and not 0 <= dscp <= 63:
        raise InputError(f"--dscp {dscp}: expected 0 to 63")
    if not 0 <= omit_s < 60:
        raise InputError(f"omit {omit_s}: expected 0 to 59 seconds")
    flows = plan_flows(plan, pattern, pairs=pairs, port_base=port_base)
    if cport is not None and not 1024 <= cport <= 65535 - len(flows) * parallel:
        raise InputError(f"cport {cport}: {len(flows) * parallel} client ports must fit")
    used_pattern = "pairs" if pairs else pattern
    tdir = lab_dir(name) / "traffic"
    with _traffic_lock(tdir, name):
        result = _run(plan, flows, tdir, seconds, parallel, dscp, omit_s, cport, say,
                      on_sample)
    if save_dir is not None:
        _save(save_dir, flows, result.pop("_raw"))
    else:
        result.pop("_raw")
    summary = summarise(plan, result["flows"], result["links"])
    return {
        "lab": name,
        "pattern": used_pattern,
        "duration_s": seconds,
        "parallel": parallel,
        "omit_s": omit_s,
        "rate_scale": plan.rate_scale,
        "hash": plan.hash,
        "flows": result["flows"],
        "links": result["links"],
        "summary": {**summary, "elapsed_s": result["elapsed_s"]},
        "timeline": result["timeline"],
        "explanation": explanation(plan, result["elapsed_s"], omit_s),
    }


def _run(
    plan: LabPlan, flows: list[Flow], tdir: Path, duration_s: int, parallel: int,
    dscp: int | None, omit_s: int, cport: int | None, say: Progress,
    on_sample: Callable[[TrafficSample], None] | None,
) -> dict[str, Any]:
    pidfiles: dict[Path, Flow] = {}
    pids: list[int] = []
    procs: list[subprocess.Popen[bytes]] = []
    outs: list[tuple[Path, Path]] = []
    timeline: list[dict[str, Any]] = []
    try:
        pidfiles = _start_servers(plan, flows, tdir)
        _wait_listening(plan, flows)
        pids = _read_pids(pidfiles)
        say(f"{len(flows)} iperf3 servers listening")
        before: Counters | None = None
        t_before = time.monotonic()
        if not omit_s:
            before, t_before = read_counters(plan), time.monotonic()
        prev, prev_t = before or read_counters(plan), time.monotonic()
        for k, f in enumerate(flows):
            out, err = tdir / f"flow{k}.json", tdir / f"flow{k}.err"
            outs.append((out, err))
            argv = _client_argv(f, plan.nodes[f.src].ns, duration_s, parallel, dscp, omit_s,
                                None if cport is None else cport + k * parallel)
            with out.open("wb") as fo, err.open("wb") as fe:
                procs.append(subprocess.Popen(argv, stdout=fo, stderr=fe))
        t_start = time.monotonic()
        say(f"{len(flows)} clients started: {duration_s} s, {parallel} stream(s) each")
        deadline = t_start + omit_s + duration_s + 30
        next_tick = t_start + 1.0
        while any(p.poll() is None for p in procs):
            now = time.monotonic()
            if now > deadline:
                say("clients overran their time: killed")
                break
            if before is None and now - t_start >= omit_s:
                before, t_before = read_counters(plan), time.monotonic()
            if now >= next_tick:
                cur, cur_t = read_counters(plan), time.monotonic()
                s = _sample(plan, prev, cur, cur_t - prev_t, cur_t - t_start,
                            float(duration_s + omit_s))
                timeline.append({"t_s": s.elapsed_s, "delivered_mbps": s.delivered_mbps,
                                 "top": [[t[0], t[2]] for t in s.top[:5]]})
                if on_sample is not None:
                    on_sample(s)
                prev, prev_t = cur, cur_t
                next_tick += 1.0
            time.sleep(0.05)
        after, t_after = read_counters(plan), time.monotonic()
        if before is None:  # the clients ended inside the omitted seconds (all failed)
            before, t_before = after, t_after
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=5)
        killed = _stop_servers(pids, pidfiles)
        if killed:
            say(f"{killed} iperf3 server(s) left over: killed")
    raw: list[str] = []
    rows = []
    for f, p, (out, err) in zip(flows, procs, outs, strict=True):
        text = out.read_text(encoding="utf-8", errors="replace")
        etext = err.read_text(encoding="utf-8", errors="replace")
        raw.append(text)
        rows.append(flow_result(f, text, etext, p.returncode))
        out.unlink(missing_ok=True)
        err.unlink(missing_ok=True)
    elapsed = t_after - t_before
    return {"flows": rows, "links": link_stats(plan, before, after, elapsed),
            "elapsed_s": round(elapsed, 3), "timeline": timeline, "_raw": raw}


def _save(save_dir: Path, flows: list[Flow], raw: list[str]) -> None:
    save_dir.mkdir(parents=True, exist_ok=True)
    seen: dict[str, int] = {}
    for f, text in zip(flows, raw, strict=True):
        stem = f"{_safe(f.src)}-{_safe(f.dst)}"
        seen[stem] = seen.get(stem, 0) + 1
        if seen[stem] > 1:
            stem = f"{stem}.{seen[stem]}"
        if text.strip():
            (save_dir / f"{stem}.iperf3.json").write_text(text, encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# summary


def summarise(
    plan: LabPlan, flows: list[dict[str, Any]], links: list[dict[str, Any]],
) -> dict[str, Any]:
    """Totals over flows, uplink utilisation extremes and the ECMP spread per tier-1 switch
    (see :func:`explanation` for every formula)."""
    ok = [f for f in flows if f["error"] is None and f["received_bits_per_second"] is not None]
    total_bps = sum(f["received_bits_per_second"] for f in ok)
    sent_bps = sum(f["sent_bits_per_second"] or 0.0 for f in ok)
    retrans = [f["retransmits"] for f in ok if f["retransmits"] is not None]
    spread: dict[str, dict[str, Any]] = {}
    by_leaf: dict[str, list[dict[str, Any]]] = {}
    for row in links:
        if row["uplink"]:
            by_leaf.setdefault(row["link"].split(":", 1)[0], []).append(row)
    active_up: list[dict[str, Any]] = []
    for leaf, rows in by_leaf.items():
        total = sum(r["tx_bytes"] for r in rows)
        if total < ACTIVE_BYTES:
            continue
        active_up += rows
        by_peer: dict[str, int] = {}
        for r in rows:
            peer = r["peer"].split(":", 1)[0]
            by_peer[peer] = by_peer.get(peer, 0) + r["tx_bytes"]
        spread[leaf] = {
            "tx_bytes": total,
            "uplinks": {r["link"]: round(r["tx_bytes"] / total, 4) for r in rows},
            "by_peer": {p: round(b / total, 4) for p, b in sorted(by_peer.items())},
            "max_share": round(max(r["tx_bytes"] for r in rows) / total, 4),
            "even_share": round(1 / len(rows), 4),
        }

    def extreme(key: str) -> dict[str, Any] | None:
        vals = [r for r in active_up if r[key] is not None]
        if not vals:
            return None
        hi = max(vals, key=lambda r: r[key])
        lo = min(vals, key=lambda r: r[key])
        return {"max": hi[key], "max_link": hi["link"], "min": lo[key], "min_link": lo["link"]}

    scale = plan.rate_scale
    return {
        "flows": len(flows),
        "flows_failed": len(flows) - len(ok),
        "total_gbps": round(total_bps / 1e9, 6),
        "total_sent_gbps": round(sent_bps / 1e9, 6),
        "mean_flow_gbps": round(total_bps / len(ok) / 1e9, 6) if ok else None,
        "total_gbps_at_fabric_scale": round(total_bps / 1e9 * scale, 3) if scale else None,
        "retransmits": sum(retrans) if retrans else None,
        "uplink_util_percent": extreme("util_percent"),
        "uplink_mbps": extreme("tx_mbps"),
        "ecmp_spread": spread,
    }


def explanation(plan: LabPlan, elapsed_s: float, omit_s: int) -> str:
    """How every number of a traffic result was computed."""
    shaped = (
        f"util_percent = tx_mbps / (speed_gbps * 1000 / {plan.rate_scale:g}), the tbf rate "
        "the lab shapes each link to (both ends)"
        if plan.rate_scale else "util_percent is null: the lab is not shaped (--rate-scale)"
    )
    omitted = (f" after the first {omit_s} s (iperf3 -O; the first counter read waits as "
               "long)" if omit_s else "")
    return (
        "flows: one iperf3 --json client per flow, -P streams each; received_bits_per_second "
        f"= iperf3 end.sum_received (payload bits the server received){omitted}; a flow with "
        "an 'error' key in its JSON is failed (iperf3 3.12 exits 0 then). "
        "total_gbps = sum of received_bits_per_second over flows that did not fail; "
        "mean_flow_gbps = total / those flows; total_gbps_at_fabric_scale = total * rate_scale. "
        "links: tx/rx bytes = difference of each router interface's stats64 counters "
        f"(ip -s -j link) read before and after the clients ran, {elapsed_s:.2f} s apart; "
        f"tx_mbps = tx_bytes * 8 / {elapsed_s:.2f} s / 1e6 (frames with headers, so a little "
        f"above the payload rate); {shaped}. Uplinks: links of kind fabric from a tier-1 "
        "switch (leaf, access) to a router; a tier-1 switch is active when its uplinks sent "
        f"at least {ACTIVE_BYTES:,} bytes. uplink_util_percent / uplink_mbps: the largest and "
        "smallest among active switches' uplinks. ecmp_spread: per active switch, each "
        "uplink's share of the bytes its uplinks sent (uplinks) and the same summed per "
        "next-hop node (by_peer); an even L4 spread gives about even_share = 1/uplinks each, "
        "L3 hashing puts every stream of one host pair on one uplink (max_share near 1)."
    )


# ---------------------------------------------------------------------------------------------
# rendering


def _mbps(bps: float | None) -> str:
    return "-" if bps is None else f"{bps / 1e6:,.1f}"


def traffic_table(result: dict[str, Any], *, top: int = 12) -> RenderableType:
    """A traffic result for a terminal: flows, busiest links, ECMP spread, totals."""
    flows = Table("src", "dst", "Mb/s recv", "Mb/s sent", "retrans", "streams", "error",
                  title=f"{result['pattern']} on lab {result['lab']}: {len(result['flows'])} "
                        f"flows, {result['duration_s']} s, -P {result['parallel']}")
    for f in result["flows"]:
        flows.add_row(f["src"], f["dst"], _mbps(f["received_bits_per_second"]),
                      _mbps(f["sent_bits_per_second"]), str(f["retransmits"] or 0),
                      str(f["streams"] or "-"), f["error"] or "")
    links = Table("link", "peer", "kind", "Mb/s tx", "util %", "drops",
                  title=f"busiest links (top {top})")
    for r in sorted(result["links"], key=lambda r: -r["tx_bytes"])[:top]:
        if r["tx_bytes"] < ACTIVE_BYTES // 10:
            break
        util = "-" if r["util_percent"] is None else f"{r['util_percent']:.0f}"
        links.add_row(r["link"], r["peer"], r["kind"], f"{r['tx_mbps']:,.1f}", util,
                      str(r["tx_dropped"]))
    s = result["summary"]
    lines = [
        f"total {s['total_gbps'] * 1000:,.1f} Mb/s received"
        + (f" (= {s['total_gbps_at_fabric_scale']:,.1f} Gb/s at fabric scale x"
           f"{result['rate_scale']:g})" if s.get("total_gbps_at_fabric_scale") else "")
        + (f", mean {s['mean_flow_gbps'] * 1000:,.1f} Mb/s per flow"
           if s["mean_flow_gbps"] is not None else "")
        + f", {s['flows_failed']} failed, {s['retransmits'] or 0} retransmits",
    ]
    ut = s.get("uplink_util_percent")
    if ut:
        lines.append(f"uplink utilisation: max {ut['max']:.0f}% ({ut['max_link']}), "
                     f"min {ut['min']:.0f}% ({ut['min_link']})")
    for leaf, sp in s["ecmp_spread"].items():
        peers = ", ".join(f"{p} {100 * v:.0f}%" for p, v in sp["by_peer"].items())
        ups = " ".join(f"{100 * v:.0f}" for v in sp["uplinks"].values())
        lines.append(f"ECMP {leaf}: {peers}; per uplink % {ups} "
                     f"(even {100 * sp['even_share']:.0f})")
    return Group(flows, links, Text("\n".join(lines)),
                 Text(result["explanation"], style="dim"))


def sample_view(sample: TrafficSample) -> RenderableType:
    """One live frame: a bar for the run's seconds and the busiest links now."""
    table = Table("link", "peer", "Mb/s", "util %", box=None, pad_edge=False)
    for link, peer, mbps, util in sample.top:
        table.add_row(link, peer, f"{mbps:,.1f}", "-" if util is None else f"{util:.0f}")
    head = Text(f"{sample.elapsed_s:5.1f} / {sample.duration_s:g} s   delivered to hosts "
                f"{sample.delivered_mbps:,.1f} Mb/s")
    bar = ProgressBar(total=sample.duration_s, completed=min(sample.elapsed_s,
                                                             sample.duration_s), width=40)
    return Group(head, bar, table)
