"""Huge-input benchmark (issue 16): parse and diagnose multi-hundred-MB captures, report time,
lines per second and the peak RSS of the ``aifabric`` process.

The inputs are built from real captures only: every line comes verbatim from the NCCL debug
logs and ``ethtool -S`` dumps under ``tests/fixtures/evidence/`` (each with its ``source:`` in
``meta.yaml``), repeated in order until the file reaches the size asked for, as a long job's
log repeats the same kinds of lines. Nothing is synthesised.

Run: ``python benchmarks/big_inputs.py --mb 1024`` (writes under ``--dir``, default a temporary
directory, and deletes the files afterwards); copy the table into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "evidence"

KINDS = {
    "nccl-log": "nccl-log",
    "ethtool-stats": "ethtool-stats",
    "ethtool-stats-series": "ethtool-stats",
}
"""Input name → parser kind. ``ethtool-stats`` repeats one headerless mlx5 dump (it reads as
one long dump); ``ethtool-stats-series`` repeats a real i40e dump with its ``NIC statistics:``
header, a ``while sleep 1; do ethtool -S eth0; done`` series of separate snapshots."""


def _real_lines(kind: str) -> list[bytes]:
    """Every line of every real capture of ``kind``, in fixture order."""
    out: list[bytes] = []
    for path in sorted((FIXTURES / kind).glob("*/input.*")):
        out += [ln + b"\n" for ln in path.read_bytes().splitlines() if ln.strip()]
    return out


def write_big(kind: str, path: Path, size: int) -> int:
    """Write ``size`` bytes (rounded up to a whole capture) of ``kind``; returns the line count.

    NCCL logs are repeated line by line. ``ethtool -S`` dumps are repeated whole (one dump
    after another, as a ``while sleep 1; do ethtool -S ...; done`` series)."""
    if kind in ("ethtool-stats", "ethtool-stats-series"):
        # one real dump repeated: the largest headerless mlx5 one, or the headed i40e one
        glob = "mlx5*/input.*" if kind == "ethtool-stats" else "i40e*/input.*"
        dumps = sorted((FIXTURES / "ethtool-stats").glob(glob))
        block = max((p.read_bytes() for p in dumps), key=len)
        if not block.endswith(b"\n"):
            block += b"\n"
        lines = block.splitlines(keepends=True)
    else:
        lines = _real_lines(kind)
    chunk = b"".join(lines)
    count = 0
    written = 0
    with path.open("wb") as fh:
        while written < size:
            fh.write(chunk)
            written += len(chunk)
            count += len(lines)
    return count


_WRAP = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code)\n"
)


def _run(args: list[str]) -> tuple[float, float, int]:
    """(seconds, peak RSS MiB, exit code) of ``aifabric args``, run under a fresh wrapper
    process so that the RSS figure is this command's alone."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _WRAP, sys.executable, "-m", "aifabric", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    dt = time.perf_counter() - t0
    rss_kib, code = proc.stdout.split()
    if int(code) not in (0, 1):
        print(f"  exit {code}: {proc.stderr.strip()[:300]}", file=sys.stderr)
    return dt, int(rss_kib) / 1024, int(code)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=int, default=256, help="size of each input in MiB")
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("-k", default="", help="only kinds containing this")
    args = parser.parse_args()
    cpu = platform.processor() or platform.machine()
    print(f"# machine: {platform.node()} {cpu}, Python {platform.python_version()}")
    print("| input | command | size (MiB) | lines | time (s) | lines/s | peak RSS (MiB) | exit |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        for name, kind in KINDS.items():
            if args.k and args.k not in name:
                continue
            path = Path(tmp) / f"{name}.txt"
            lines = write_big(name, path, args.mb << 20)
            size = path.stat().st_size / (1 << 20)
            for cmd in (
                ["parse", str(path), "--kind", kind, "--format", "json"],
                ["diagnose", str(path), "--format", "json"],
            ):
                dt, rss, code = _run(cmd)
                print(
                    f"| {name} | {cmd[0]} | {size:.0f} | {lines} | {dt:.1f} | "
                    f"{lines / dt:,.0f} | {rss:.0f} | {code} |",
                    flush=True,
                )
            os.unlink(path)


if __name__ == "__main__":
    main()
