"""Benchmarks: run ``python benchmarks/run.py`` and copy the table into docs/benchmarks.md.

Each case runs in a fresh Python process so its peak memory (ru_maxrss) is its own. Times are
the best of ``--repeat`` runs of the timed step; imports and catalog loading are not timed.

Targets (issue "Fabric model and design planner"): design and full graph for 32,768 GPUs in
under 5 s and 2 GiB on a 2-core, 24 GiB machine. Issue "Evidence parsers": at least 5,000
``ethtool -S`` dumps and 200,000 NCCL log lines per second (``per_s`` in the detail column);
those cases read the real captures under tests/fixtures/evidence/.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CASES: dict[str, str] = {
    "design+graph 32,768 GPUs (rail, 3 tiers)": """
        spec = DesignSpec(gpus=32768, gpus_per_server=8, nic_speed_gbps=400, switch_ports=64,
                          switch_speed_gbps=400, layout="rail")
        def step():
            r = design_fabric(spec, cat)
            g = fabric_graph(r.fabric)
            return {"links": len(r.fabric.links), "nodes": g.number_of_nodes()}
    """,
    "design+graph 1,024 GPUs (S7, tor)": """
        spec = DesignSpec(gpus=1024, gpus_per_server=8, nic_speed_gbps=200, switch_ports=64,
                          switch_speed_gbps=400, layout="tor")
        def step():
            r = design_fabric(spec, cat)
            g = fabric_graph(r.fabric)
            return {"links": len(r.fabric.links), "nodes": g.number_of_nodes()}
    """,
    "design checks 32,768 GPUs": """
        fabric = design_fabric(DesignSpec(gpus=32768, gpus_per_server=8, nic_speed_gbps=400,
                               switch_ports=64, switch_speed_gbps=400, layout="rail"), cat).fabric
        def step():
            return {"findings": len(run_checks(CheckContext(fabric, cat)))}
    """,
    "verify: all design+verify checks, examples/cluster-32k.yaml": """
        fabric = load_fabric(ROOT_DIR / "examples" / "cluster-32k.yaml", cat)
        # one leaf uplink at MTU 1500, so the MTU check counts the affected leaf pairs
        i = next(i for i, ln in enumerate(fabric.links) if ln.kind == "fabric")
        links = list(fabric.links)
        links[i] = links[i].model_copy(update={"mtu_bytes": 1500})
        fabric = fabric.model_copy(update={"links": tuple(links)})
        fabric._index = None
        def step():
            f = run_checks(CheckContext(fabric, cat))
            mtu = [x for x in f if x.check == "verify.mtu-path"]
            dl = [x for x in f if x.check == "verify.pfc-deadlock"]
            return {"links": len(fabric.links), "findings": len(f),
                    "mtu": mtu[0].message.split("; ")[-1][:40] if mtu else "",
                    "deadlock": dl[0].actual if dl else "none"}
    """,
    "verify: deadlock analysis alone, examples/cluster-32k.yaml": """
        fabric = load_fabric(ROOT_DIR / "examples" / "cluster-32k.yaml", cat)
        def step():
            r = analyze_deadlocks(fabric)
            return {"failures_with_cycle": r.failure_counts.get("stale-bounce", 0)}
    """,
    "diagnose: 1,000-host bundle (6 real captures per host, 10 faulty hosts)": """
        import shutil
        from aifabric.checks.diagnose import diagnose, load_evidence
        D = FIXTURES.parent / "diagnose"
        def one(case):
            return next(p for p in sorted((D / case).iterdir()) if p.name != "case.yaml")
        healthy = [
            one("healthy-roce-nccl-tests-init"),
            one("ctr-healthy-mlx5-cx4-zero-pause"),
            one("ctr-healthy-mlx5-cx4-zero-pause"),  # a second snapshot: no growth
            one("ctr-healthy-rdma-statistic-zero-loss"),
            one("optics-healthy-sfp-sr-thresholds"),
            one("ping-healthy-loopback-series"),
        ]
        faults = [one("retry-exceeded-roce-v4mapped"), one("optics-rx-no-light-sfp-lr")]
        bundle = Path(tmp) / "bundle"
        for h in range(1000):
            d = bundle / f"gpu-{h:04d}"
            d.mkdir(parents=True)
            for i, src in enumerate(healthy):
                shutil.copy(src, d / f"{i}-{src.parent.parent.name}.txt")
            if h % 100 == 7:  # 1% of the hosts carry a real fault capture
                shutil.copy(faults[(h // 100) % 2], d / "fault.txt")
        def step():
            ev = load_evidence([bundle])
            res = diagnose(ev)
            return {"files": len(ev.files), "records": len(ev.items),
                    "findings": len(res.findings), "healthy_hosts": len(res.healthy)}
    """,
    "diagnose: real incidents, first contact (benchmarks/incidents, all sets)": """
        sys.path.insert(0, str(ROOT_DIR / "benchmarks"))
        from score_incidents import score_case
        INC = ROOT_DIR / "benchmarks" / "incidents"
        def step():
            out = {}
            for s in sorted(p.name for p in INC.iterdir() if p.is_dir() and p.name != "_pool"):
                rows = [score_case(c.parent) for c in sorted((INC / s).glob("*/incident.yaml"))]
                faulty = [r for r in rows if not r["healthy"]]
                healthy = [r for r in rows if r["healthy"]]
                out[s] = f"{sum(r['right'] for r in faulty)}/{len(faulty)} right, " \
                    f"{sum(r['right'] for r in healthy)}/{len(healthy)} healthy clean"
            return out
    """,
    "write+read JSON fabric file 32,768 GPUs": """
        fabric = design_fabric(DesignSpec(gpus=32768, gpus_per_server=8, nic_speed_gbps=400,
                               switch_ports=64, switch_speed_gbps=400, layout="rail"), cat).fabric
        path = Path(tmp) / "f.json"
        def step():
            write_fabric(fabric, path)
            read_document(path)
            return {"MB": round(path.stat().st_size / 1e6, 1)}
    """,
    "write+read YAML fabric file 1,024 GPUs": """
        fabric = design_fabric(DesignSpec(gpus=1024, gpus_per_server=8, nic_speed_gbps=400,
                               switch_ports=64, switch_speed_gbps=400, layout="rail"), cat).fabric
        path = Path(tmp) / "f.yaml"
        def step():
            write_fabric(fabric, path)
            read_document(path)
            return {"MB": round(path.stat().st_size / 1e6, 2)}
    """,
    "ethtool -S: a real 112-counter mlx5 dump, 5,000 times": """
        text = (FIXTURES / "ethtool-stats" / MLX5_112 / "input.txt").read_text()
        n = 5000
        def step():
            for _ in range(n):
                parse_text(text, "ethtool-stats")
            return {"counters": len(parse_text(text, "ethtool-stats").records[0].counters)}
        per_second = n
    """,
    "ethtool -S: same dump, kind detected each time": """
        text = (FIXTURES / "ethtool-stats" / MLX5_112 / "input.txt").read_text()
        n = 5000
        def step():
            for _ in range(n):
                parse_text(text)
            return {"counters": len(parse_text(text).records[0].counters)}
        per_second = n
    """,
    "ethtool -S: all real dumps (17-751 counters) x 200, kind detected": """
        texts = [c.read_text(errors="replace") for c in cases("ethtool-stats")]
        n = 200
        counters = sum(len(r.counters) for t in texts for r in parse_text(t).records)
        def step():
            for _ in range(n):
                for t in texts:
                    parse_text(t)
            return {"dumps": len(texts)}
        per_second = n * len(texts)
        rates["counters_per_s"] = n * counters
    """,
    "NCCL log: 200,000+ lines of real logs (repeated)": """
        texts = [c.read_text(errors="replace") for c in cases("nccl-log")]
        one = "\\n".join(texts)
        reps = 200000 // max(1, one.count("\\n")) + 1
        text = "\\n".join([one] * reps)
        n_lines = text.count("\\n") + 1
        def step():
            r = parse_text(text, "nccl-log")
            return {"lines": n_lines, "records": len(r.records)}
        per_second = n_lines
    """,
    "nccl-tests: parse every real fixture 200 times": """
        texts = [c.read_text(errors="replace") for c in cases("nccl-tests")]
        n = 200
        def step():
            for _ in range(n):
                for t in texts:
                    parse_text(t, "nccl-tests")
            return {"files": len(texts)}
        per_second = n * len(texts)
    """,
    "estimate: 10,000 single-size AllReduce estimates, one platform": """
        p = Platform(gpu=cat.gpu("H100"), nodes=16, gpus_per_node=8, nics_per_node=8,
                     nic_speed_gbps=400, transport="roce", nic_pcie=cat.pcie_gen(5),
                     gpu_pcie=cat.pcie_gen(5))
        n = 10000
        def step():
            for i in range(n):
                estimate(p, "allreduce", [1 << (10 + i % 24)])
            return {"sizes": 24}
        per_second = n
    """,
    "estimate: 10,000 single-size estimates, a new platform each time": """
        p = Platform(gpu=cat.gpu("H100"), nodes=16, gpus_per_node=8, nics_per_node=8,
                     nic_speed_gbps=400, transport="roce", nic_pcie=cat.pcie_gen(5),
                     gpu_pcie=cat.pcie_gen(5))
        n = 10000
        colls = ["allreduce", "allgather", "alltoall", "reducescatter"]
        def step():
            for i in range(n):
                q = replace(p, nodes=2 + i % 997, nics_per_node=1 + i % 8)
                estimate(q, colls[i % 4], [1 << (10 + i % 24)])
            return {"platforms": n}
        per_second = n
    """,
}

PRELUDE = """
import json, resource, sys, time
from pathlib import Path
from aifabric.catalog import load_catalog
from aifabric.checks import CheckContext, run_checks
from aifabric.design import design_fabric, load_fabric
from aifabric.topology.deadlock import analyze_deadlocks
ROOT_DIR = Path(sys.argv[3])
from aifabric.model import DesignSpec, read_document, write_fabric
from aifabric.topology.graph import fabric_graph
from aifabric.evidence import parse_text
from aifabric.perf.estimate import Platform, estimate
from dataclasses import replace
cat = load_catalog()
tmp = sys.argv[1]
FIXTURES = Path(sys.argv[3]) / "tests" / "fixtures" / "evidence"
per_second = None
rates = {}
MLX5_112 = "mlx5-kernel-6.5-xdp-bpf-list"


def cases(kind):
    return sorted((FIXTURES / kind).glob("*/input.*"))


def largest(kind, hint):
    paths = [p for p in cases(kind) if hint in p.read_text(errors="replace")] or cases(kind)
    return max((p.read_text(errors="replace") for p in paths), key=len)

repeat = int(sys.argv[2])
"""

EPILOGUE = """
best = None
info = {}
for _ in range(repeat):
    t0 = time.perf_counter()
    info = step()
    dt = time.perf_counter() - t0
    best = dt if best is None else min(best, dt)
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
if per_second is not None:
    info["per_s"] = round(per_second / best)
for key, amount in rates.items():
    info[key] = round(amount / best)
print(json.dumps({"seconds": best, "peak_rss_MiB": rss, "info": info}))
"""


def run_case(body: str, repeat: int) -> dict[str, object]:
    code = PRELUDE + textwrap.dedent(body) + EPILOGUE
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(
            [sys.executable, "-c", code, tmp, str(repeat), str(ROOT)],
            capture_output=True,
            text=True,
            check=True,
        )
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("-k", default="", help="only cases whose name contains this")
    args = parser.parse_args()
    cpu = platform.processor() or platform.machine()
    print(f"# machine: {platform.node()} {cpu}, Python {platform.python_version()}")
    print("| case | best time (s) | peak RSS (MiB) | detail |")
    print("|---|---:|---:|---|")
    for name, body in CASES.items():
        if args.k and args.k not in name:
            continue
        r = run_case(body, args.repeat)
        print(
            f"| {name} | {r['seconds']:.2f} | {r['peak_rss_MiB']:.0f} | {json.dumps(r['info'])} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
