"""Exporter scrape benchmark (issue 21 target: 16 NICs × 300 counters in under 50 ms).

Run ``python benchmarks/monitor_exporter.py`` (root for the kernel case) and copy the lines
into docs/benchmarks.md. Three cases:

1. ``synthetic``: 16 NICs, each with 300 ``ethtool -S`` counters whose names are those of real
   mlx5 dumps (tests/fixtures/evidence/ethtool-stats/mlx5-*: port, PHY, per-priority and
   per-channel names; channels replicated up to 300 names, as a 16-channel ConnectX port has),
   plus 24 link counters and 20 RDMA counters per NIC: the catalogue mapping, series building,
   the exporter's own metrics and the text rendering of one ``/metrics`` answer. No kernel
   calls: this isolates the exporter's own cost.
2. ``kernel``: 16 veth pairs in a network namespace this benchmark creates (and deletes), read
   by :class:`~aifabric.monitor.sources.NetCollector`: the ethtool ioctl, one rtnetlink link dump
   and one qdisc dump, procfs TCP counters. veth has ~10 driver counters, so this measures the
   system-call path, not a 300-counter driver (an mlx5 GSTATS also reads firmware registers; not
   measurable here).
3. ``sonic``: a 64-port COUNTERS_DB dump (the sonic-utilities test tables' ports cloned, queues
   and priority groups included) read by the SONiC plug-in in ``json:`` mode, file read and
   parsed on every scrape (the ``db`` mode's Redis call is not measured here).
4. ``http``: case 1 served over HTTP on 127.0.0.1 and fetched with gzip, end to end.

Figures: median and 99th percentile of ``--repeat`` scrapes, series count, response size, peak
Python allocation of one scrape (tracemalloc) and the process's max RSS.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from aifabric.evidence.ethtool_stats import parse_ethtool_stats  # noqa: E402
from aifabric.monitor.catalogue import load_catalogue  # noqa: E402
from aifabric.monitor.exporter import Exporter, serve  # noqa: E402
from aifabric.monitor.exposition import Scrape  # noqa: E402
from aifabric.monitor.sonic import SonicCollector  # noqa: E402
from aifabric.monitor.sources import NetCollector, Target  # noqa: E402

FIX = ROOT / "tests" / "fixtures" / "evidence" / "ethtool-stats"
RDMA = [
    "rx_write_requests",
    "rx_read_requests",
    "rx_atomic_requests",
    "out_of_buffer",
    "duplicate_request",
    "rnr_nak_retry_err",
    "packet_seq_err",
    "implied_nak_seq_err",
    "local_ack_timeout_err",
    "resp_local_length_error",
    "resp_cqe_error",
    "req_cqe_error",
    "req_remote_invalid_request",
    "req_remote_access_errors",
    "resp_remote_access_errors",
    "resp_cqe_flush_error",
    "req_cqe_flush_error",
    "rp_cnp_ignored",
    "rp_cnp_handled",
    "np_cnp_sent",
]
LINK = [
    "rx_packets",
    "tx_packets",
    "rx_bytes",
    "tx_bytes",
    "rx_errors",
    "tx_errors",
    "rx_dropped",
    "tx_dropped",
    "multicast",
    "collisions",
    "rx_length_errors",
    "rx_over_errors",
    "rx_crc_errors",
    "rx_frame_errors",
    "rx_fifo_errors",
    "rx_missed_errors",
    "tx_aborted_errors",
    "tx_carrier_errors",
    "tx_fifo_errors",
    "tx_heartbeat_errors",
    "tx_window_errors",
    "carrier_changes",
    "mtu",
    "oper_up",
]


def mlx5_names(n: int = 300) -> list[str]:
    """``n`` counter names as a multi-channel mlx5 port prints them, from real dumps."""
    names: dict[str, None] = {}
    for d in sorted(FIX.glob("mlx5-*")):
        for rec in parse_ethtool_stats((d / "input.txt").read_text()).records:
            names.update(dict.fromkeys(rec.counters))  # type: ignore[attr-defined]
    for p in range(8):  # per-priority names every ConnectX port has
        for stem in (
            "rx_prio{}_bytes",
            "rx_prio{}_packets",
            "tx_prio{}_bytes",
            "tx_prio{}_packets",
            "rx_prio{}_pause",
            "rx_prio{}_pause_duration",
            "tx_prio{}_pause",
            "tx_prio{}_pause_duration",
            "rx_prio{}_pause_transition",
            "rx_prio{}_discards",
        ):
            names[stem.format(p)] = None
    per_channel = sorted(
        {re.sub(r"^(rx|tx|ch)0_", r"\1{}_", k) for k in names if re.match(r"^(rx|tx|ch)0_", k)}
    )
    base = [k for k in names if not re.match(r"^(rx|tx|ch)\d+_", k)]
    out = list(base)
    ch = 0
    while len(out) < n and per_channel:
        out += [t.format(ch) for t in per_channel]
        ch += 1
    return out[:n]


class Synthetic:
    """16 NICs of counters that grow between scrapes (no kernel calls)."""

    name = "synthetic"

    def __init__(self, nics: int, names: list[str]) -> None:
        rnd = random.Random(1)
        self.nics = [
            (
                f"eth{i}",
                {k: rnd.randrange(1 << 40) for k in names},
                {k: rnd.randrange(1 << 30) for k in LINK},
                {k: rnd.randrange(1 << 20) for k in RDMA},
            )
            for i in range(nics)
        ]

    def collect(self, scrape: Scrape) -> None:
        for i, (ifname, eth, link, rdma) in enumerate(self.nics):
            ident = (("node", "gpu-node-001"), ("interface", ifname))
            scrape.add_raw("link", ident, link)
            scrape.add_raw("ethtool", ident, eth)
            scrape.add_raw(
                "rdma", (("node", "gpu-node-001"), ("device", f"mlx5_{i}"), ("port", "1")), rdma
            )
            for k in eth:
                eth[k] += 1

    def close(self) -> None:
        return


def timeit(fn: object, repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t0)
    times.sort()
    return statistics.median(times) * 1e3, times[min(len(times) - 1, int(len(times) * 0.99))] * 1e3


def report(case: str, med: float, p99: float, extra: str) -> None:
    print(f"| {case} | {med:.2f} ms | {p99:.2f} ms | {extra} |", flush=True)


def measure(case: str, exporter: Exporter, repeat: int, detail: str = "") -> bytes:
    """Time ``repeat`` scrapes of ``exporter`` after one warm-up and print the row."""
    body = exporter.scrape()
    med, p99 = timeit(exporter.scrape, repeat)
    series = sum(1 for ln in body.splitlines() if ln and not ln.startswith(b"#"))
    report(case, med, p99, f"{series} series" + (f", {detail}" if detail else ""))
    return body


def synthetic(repeat: int) -> Exporter:
    names = mlx5_names()
    exporter = Exporter(load_catalogue(), [Synthetic(16, names)])
    body = exporter.scrape()  # warm the per-name mapping cache, as a running exporter has it
    tracemalloc.start()
    exporter.scrape()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    med, p99 = timeit(exporter.scrape, repeat)
    series = sum(1 for ln in body.splitlines() if ln and not ln.startswith(b"#"))
    report(
        "synthetic: 16 NICs × 300 ethtool + 24 link + 20 RDMA counters",
        med,
        p99,
        f"{series} series, {len(body) / 1024:.0f} KiB text, peak alloc "
        f"{peak / 2**20:.1f} MiB/scrape",
    )
    return exporter


def kernel(repeat: int) -> None:
    if os.geteuid() != 0:
        print("| kernel: skipped (needs root) | | | |")
        return
    ns = f"afbench-{uuid.uuid4().hex[:6]}"
    peer = f"{ns}-p"
    try:
        subprocess.run(["ip", "netns", "add", ns], check=True)
        subprocess.run(["ip", "netns", "add", peer], check=True)
        batch = "".join(
            f"link add v{i} netns {ns} type veth peer name p{i} netns {peer}\n" for i in range(16)
        )
        subprocess.run(["ip", "-batch", "-"], input=batch, text=True, check=True)
        for i in range(16):
            subprocess.run(["ip", "-n", ns, "link", "set", f"v{i}", "up"], check=True)
        exporter = Exporter(load_catalogue(), [NetCollector([Target("n1", ns)])])
        measure("kernel: 16 veth in a netns (ioctl + 2 rtnetlink dumps + procfs)", exporter, repeat)
        exporter.close()
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)
        subprocess.run(["ip", "netns", "del", peer], check=False)


def sonic_dump(ports: int, path: Path) -> None:
    """A COUNTERS_DB dump of ``ports`` ports: the sonic-utilities test tables' three ports
    (tests/fixtures/monitor/sonic/) cloned under new names and oids, queues and PGs included."""
    src = json.loads(
        (
            ROOT
            / "tests"
            / "fixtures"
            / "monitor"
            / "sonic"
            / "utilities-mock-counters-db"
            / "counters_db.json"
        ).read_text()
    )
    base = list(src["COUNTERS_PORT_NAME_MAP"].items())
    out: dict[str, dict[str, str]] = {
        k: {}
        for k in (
            "COUNTERS_PORT_NAME_MAP",
            "COUNTERS_QUEUE_NAME_MAP",
            "COUNTERS_PG_NAME_MAP",
            "COUNTERS_QUEUE_TYPE_MAP",
        )
    }
    for n in range(ports):
        old_name, old_oid = base[n % len(base)]
        name, tag = f"Ethernet{4 * n}", f"_{n}"
        out["COUNTERS_PORT_NAME_MAP"][name] = old_oid + tag
        out[f"COUNTERS:{old_oid}{tag}"] = src.get(f"COUNTERS:{old_oid}", {})
        for table in ("COUNTERS_QUEUE_NAME_MAP", "COUNTERS_PG_NAME_MAP"):
            for key, oid in src.get(table, {}).items():
                port, _, idx = key.partition(":")
                if port == old_name:
                    out[table][f"{name}:{idx}"] = oid + tag
                    out[f"COUNTERS:{oid}{tag}"] = src.get(f"COUNTERS:{oid}", {})
                    qtype = src.get("COUNTERS_QUEUE_TYPE_MAP", {}).get(oid)
                    if qtype:
                        out["COUNTERS_QUEUE_TYPE_MAP"][oid + tag] = qtype
    path.write_text(json.dumps(out))


def sonic(repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        dump = Path(tmp) / "counters_db.json"
        sonic_dump(64, dump)
        exporter = Exporter(load_catalogue(), [SonicCollector.from_spec("leaf01", f"json:{dump}")])
        measure(
            "sonic: 64-port COUNTERS_DB dump (json:, file re-read each scrape)",
            exporter,
            repeat,
            f"{dump.stat().st_size / 1024:.0f} KiB dump",
        )


def http(exporter: Exporter, repeat: int) -> None:
    server = serve(exporter, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/metrics"
    size = [0]

    def get() -> None:
        req = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(req, timeout=5) as r:
            data = r.read()
        size[0] = len(data)
        gzip.decompress(data)

    get()
    med, p99 = timeit(get, repeat)
    server.shutdown()
    server.server_close()
    report(
        "http: synthetic case over 127.0.0.1 with gzip",
        med,
        p99,
        f"{size[0] / 1024:.0f} KiB on the wire",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d')}"
    )
    print("| case | median | p99 | detail |")
    print("|---|---|---|---|")
    exporter = synthetic(args.repeat)
    kernel(args.repeat)
    sonic(args.repeat)
    http(exporter, args.repeat)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"max RSS of the benchmark process: {rss:.0f} MiB")


if __name__ == "__main__":
    main()
