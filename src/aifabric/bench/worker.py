"""One rank of the built-in collective benchmark: ``python -m aifabric.bench.worker``.

Start one process per rank, each with the same ``--world``, ``--master`` (rank 0's address and
port) and sweep options, in any order within ``--timeout`` seconds::

    python -m aifabric.bench.worker --rank 0 --world 4 --master 10.0.0.2:29500 \\
        --listen 10.0.0.2 --name srv01 --collective all_reduce --sizes 1M:256M
    python -m aifabric.bench.worker --rank 1 --world 4 --master 10.0.0.2:29500 \\
        --listen 10.0.0.3 --name srv02 ...

Rank 0 prints the result in the nccl-tests text format on stdout (``aifabric bench import`` and
``aifabric parse`` read it) and, with ``--json FILE``, writes the exact values too (the lab
driver reads that); the other ranks print nothing. ``--listen ADDR[:PORT]`` binds the rank's
listener and its outgoing connections to ADDR (a multi-homed host uses the NIC meant; in a lab
namespace, the server's address); ranks other than 0 default to port 0 (any free port).

Exit codes: 0 done and every value correct; 1 done but ``#wrong`` > 0 (rank 0); 2 bad
arguments; 3 the ring could not be built or broke (a rank missing or dead, a timeout).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from aifabric.bench.collective import COLLECTIVES, format_nccl_tests, run_benchmark, size_sweep
from aifabric.bench.ring import RingError, connect_ring
from aifabric.errors import UnitError
from aifabric.units import parse_bytes

__all__ = ["main", "parse_sizes"]

DEFAULT_SIZES = "1M:256M"
"""The default sweep: 1 MiB to 256 MiB, doubling."""


def parse_sizes(text: str, factor: int = 2) -> list[int]:
    """``1M:256M`` (min:max, multiplied by ``factor``), ``64M`` (one size) or ``1M,8M,64M``
    (a list); K/M/G are powers of two as in nccl-tests. Raises ValueError with the reason."""
    try:
        if "," in text:
            sizes = [parse_bytes(t.strip(), what="--sizes") for t in text.split(",") if t.strip()]
            if not sizes or min(sizes) <= 0:
                raise ValueError(f"--sizes {text!r}: expected positive sizes such as 1M,8M")
            return sizes
        lo, sep, hi = text.partition(":")
        first = parse_bytes(lo.strip(), what="--sizes")
        last = parse_bytes(hi.strip(), what="--sizes") if sep else first
    except UnitError as exc:
        raise ValueError(str(exc)) from None
    return size_sweep(first, last, factor)


def _addr(text: str, *, default_port: int | None) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep:
        if default_port is None:
            raise ValueError(f"{text!r}: expected HOST:PORT")
        return text, default_port
    if not port.isdecimal() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{text!r}: the port must be a number 0..65535")
    return host, int(port)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m aifabric.bench.worker",
        description="One rank of aifabric's built-in collective benchmark (TCP ring).",
    )
    p.add_argument("--rank", type=int, required=True, help="this process's rank, 0..world-1")
    p.add_argument("--world", type=int, required=True, help="number of ranks (>= 2)")
    p.add_argument("--master", required=True, help="rank 0's HOST:PORT (rank 0 listens there)")
    p.add_argument(
        "--listen", default=None, help="ADDR[:PORT] this rank listens on and sends from (ranks > 0)"
    )
    p.add_argument("--name", default=None, help="name printed for this rank (default hostname)")
    p.add_argument("--collective", choices=COLLECTIVES, default="all_reduce")
    p.add_argument(
        "--sizes",
        default=DEFAULT_SIZES,
        help="MIN:MAX (times --factor), one SIZE or a comma list; default 1M:256M",
    )
    p.add_argument("--factor", type=int, default=2, help="size multiplier (nccl-tests -f)")
    p.add_argument("--warmup", type=int, default=1, help="untimed iterations per size")
    p.add_argument("--iters", type=int, default=5, help="timed iterations per size")
    p.add_argument(
        "--no-in-place",
        action="store_true",
        help="measure out-of-place only (in-place cells print N/A)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="seconds to wire the ring and for any single socket operation",
    )
    p.add_argument(
        "--json",
        type=Path,
        default=None,
        help="rank 0: also write the exact results as JSON to this file",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run one rank; the exit code (see the module docstring)."""
    p = _parser()
    try:
        args = p.parse_args(argv)
    except SystemExit as exc:
        return 2 if exc.code else 0
    try:
        sizes = parse_sizes(args.sizes, args.factor)
        master = _addr(args.master, default_port=None)
        listen = _addr(args.listen, default_port=0) if args.listen else None
        if args.rank == 0 and listen is not None and listen[0] != master[0]:
            raise ValueError(
                f"--listen {args.listen} differs from --master {args.master}: "
                "rank 0 listens on --master"
            )
        if args.iters < 1 or args.warmup < 0:
            raise ValueError("--iters must be >= 1 and --warmup >= 0")
    except ValueError as exc:
        print(f"aifabric.bench.worker: {exc}", file=sys.stderr)
        return 2
    try:
        ring = connect_ring(
            args.rank, args.world, master, listen=listen, name=args.name, timeout_s=args.timeout
        )
    except RingError as exc:
        print(f"aifabric.bench.worker: {exc}", file=sys.stderr)
        return 2 if "need at least 2 ranks" in str(exc) else 3
    try:
        result = run_benchmark(
            ring,
            args.collective,
            sizes,
            warmup=args.warmup,
            iters=args.iters,
            in_place=not args.no_in_place,
            factor=args.factor,
        )
    except (RingError, OSError) as exc:
        print(f"aifabric.bench.worker: rank {args.rank}: {exc}", file=sys.stderr)
        return 3
    finally:
        ring.close()
    if args.rank != 0:
        return 0
    sys.stdout.write(format_nccl_tests(result))
    sys.stdout.flush()
    if args.json is not None:
        args.json.write_text(json.dumps(result.to_dict(), indent=1), encoding="utf-8")
    return 1 if result.wrong else 0


if __name__ == "__main__":  # pragma: no cover - exercised through subprocesses
    sys.exit(main())
