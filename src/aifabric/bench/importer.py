"""nccl-tests output → :class:`~aifabric.bench.model.BenchRun` records (``bench import``, issue 20).

Reads anything the evidence parser :mod:`aifabric.evidence.nccl_tests` reads (every text layout
since 2017 with launcher prefixes, Markdown pastes, the ``-J`` JSON file) and makes one run per
test in the file (a file with an ``all_gather_perf`` and then an ``all_reduce_perf`` gives two).

Per test:

* ``rows``: each table line gives up to two :class:`~aifabric.bench.model.BenchRow`, the
  out-of-place half (``in_place=False``) then the in-place half (``in_place=True``), in file
  order; a half printed ``N/A`` (or missing time/algbw/busbw) is left out. ``wrong`` is the
  ``#wrong`` count, or the maximum error of the pre-2021 ``error`` column. The store keeps both
  halves; a consumer wanting one number per size should take the **out-of-place** busbw (the
  in-place one when that is all there is), as the parser's ``busbw_by_size`` and S23's
  baseline do: out-of-place is what applications run (separate send and receive buffers), and
  nccl-tests' ``Avg bus bandwidth`` line, kept as ``avg_busbw_gbps``, averages both halves;
* ``collective``: from the binary name (``all_reduce_perf`` → ``all_reduce``) or the
  ``Collective test starting:`` line; when the output does not name it, the caller's
  ``collective`` (``--collective``); else inferred only where the numbers leave one answer
  within nccl-tests' set: ``busbw/algbw`` > 1.1 is ``all_reduce`` (the only collective whose
  bus factor, ``2(n-1)/n``, exceeds 1), a reduction with a root is ``reduce``, a reduction
  whose size is ``count·typesize·n`` with ``n`` > 1 is ``reduce_scatter``; else ``"unknown"``
  with a warning (a two-rank all_reduce and a sendrecv print the same columns);
* ``hosts``: the distinct host names of the ``# Rank N ... on HOST device`` lines (of ``-J``'s
  ``devices``), else those named by launcher prefixes; ``ranks`` the number of device lines or
  the highest rank + 1 when an excerpt shows fewer lines than ranks;
* ``nccl_version``: the header's (``nccl-tests version ... nccl-library=22902`` or
  ``NCCL version 2.29.2+cuda12.9``); ``driver_version``: ``"cuda 12.8"`` from NCCL's
  ``cudaDriverVersion 12080`` INFO line (the CUDA driver API level; the kernel driver release
  is not printed by nccl-tests, give ``driver_version=`` to record it);
* ``env``: ``NCCL_*`` settings from NCCL INFO lines (``NCCL_IB_HCA set by environment to
  mlx5_0``, read with the ``nccl-log`` parser), one set per file (one process environment);
  from a ``-J`` file also its ``env`` list (the whole process environment, of which only
  ``NCCL_*``, ``FI_*`` and ``UCX_*`` are kept: the rest may hold secrets);
* ``avg_busbw_gbps``: the ``# Avg bus bandwidth`` line (``average_bus_bandwidth`` in JSON);
* ``started``: the caller's, else a ``-J`` file's ``start_time`` (the writer's local time,
  no zone: taken as UTC), else the file's modification time, else now (the text output has
  no date); ``tool`` ``"nccl-tests"``, or ``"builtin"`` for the output of
  ``aifabric bench run`` (its header names the built-in benchmark); ``label``, ``cluster``,
  ``fabric_hash`` as given.

A test without result rows (a run that aborted) gives no run and one warning. Interleaved
single-rank runs (built without ``MPI=1``; the parser warns) stay one run whose sizes repeat.
Input in which the parser finds no nccl-tests header and no row at all is :class:`InputError`
(exit 2).

perftest output (``ib_write_bw`` & co.) is read by :func:`read_perftest` (fields in the comment
block above it); :func:`read_results`, what ``bench import`` and ``bench compare`` call, picks
the reader by the evidence registry's detection.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from aifabric.bench.model import BenchRow, BenchRun, utc
from aifabric.errors import InputError
from aifabric.evidence.base import ParseResult, decode_capture
from aifabric.evidence.nccl_log import NcclEnv
from aifabric.evidence.nccl_tests import NcclTestsHeader, NcclTestsRow, NcclTestsSummary
from aifabric.evidence.perftest import (
    PerftestBwRow,
    PerftestLatRow,
    PerftestNotice,
    PerftestParams,
)
from aifabric.evidence.registry import detect_scores, parse_text
from aifabric.inputs import loads_json, read_input

BUILTIN_MARK = "# aifabric built-in collective benchmark"
"""The first header line of :mod:`aifabric.bench.collective` output (its ``TOOL_NAME``)."""

__all__ = [
    "ImportResult",
    "import_nccl_tests",
    "pair_from_name",
    "read_nccl_tests",
    "read_perftest",
    "read_results",
]

_ENV_PREFIXES = ("NCCL_", "FI_", "UCX_")
_DRIVER_RE = re.compile(r"cudaDriverVersion (\d{4,6})\b")
_REDUCTIONS = frozenset({"sum", "prod", "max", "min", "avg", "mulsum", "premulsum"})
_TYPE_BYTES = {
    "int8": 1,
    "char": 1,
    "uint8": 1,
    "int32": 4,
    "int": 4,
    "uint32": 4,
    "int64": 8,
    "uint64": 8,
    "half": 2,
    "float16": 2,
    "float": 4,
    "float32": 4,
    "double": 8,
    "float64": 8,
    "bfloat16": 2,
    "f8e4m3": 1,
    "f8e5m2": 1,
    "fp8_e4m3": 1,
    "fp8_e5m2": 1,
}


@dataclass(slots=True)
class ImportResult:
    """The runs read from one input and the warnings about it (parser's and importer's)."""

    runs: list[BenchRun] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _halves(r: NcclTestsRow) -> list[BenchRow]:
    out: list[BenchRow] = []
    dtype = r.data_type or None
    redop = r.redop or None
    for in_place, t, alg, bus, wrong, err in (
        (False, r.oop_time_us, r.oop_algbw_GBps, r.oop_busbw_GBps, r.oop_wrong, r.oop_error),
        (True, r.ip_time_us, r.ip_algbw_GBps, r.ip_busbw_GBps, r.ip_wrong, r.ip_error),
    ):
        if t is None or alg is None or bus is None:
            continue
        bad = wrong if wrong is not None else err
        out.append(
            BenchRow(
                size_bytes=r.size_bytes,
                count=r.count,
                dtype=dtype,
                redop=redop,
                time_us=float(t),
                algbw_gbps=float(alg),
                busbw_gbps=float(bus),
                in_place=in_place,
                wrong=None if bad is None else float(bad),
            )
        )
    return out


def _infer_collective(rows: list[NcclTestsRow]) -> str | None:
    """The collective the numbers allow, or ``None`` when more than one fits (module doc)."""
    measured = [r for r in rows if (r.oop_algbw_GBps or 0.0) >= 1.0 and r.oop_busbw_GBps]
    if measured:
        top = max(measured, key=lambda r: r.size_bytes)
        if (top.oop_busbw_GBps or 0.0) / (top.oop_algbw_GBps or 1.0) > 1.1:
            return "all_reduce"
    sample = max(rows, key=lambda r: r.size_bytes)
    redop = (sample.redop or "").lower()
    if redop not in _REDUCTIONS:
        return None
    if sample.root is not None and sample.root >= 0:
        return "reduce"
    width = _TYPE_BYTES.get(sample.data_type.lower())
    if width and sample.count > 0 and sample.size_bytes > 0:
        per_rank = sample.count * width
        if sample.size_bytes % per_rank == 0 and sample.size_bytes // per_rank > 1:
            return "reduce_scatter"
    return None


def _hosts(h: NcclTestsHeader, rows: list[NcclTestsRow]) -> tuple[str, ...]:
    names = [d.host for d in h.devices if d.host] or list(h.hosts)
    if not names:
        names = [r.host for r in rows if r.host]
    if not names and h.launcher_host:
        names = [h.launcher_host]
    return tuple(sorted({n for n in names if n}))


def _ranks(h: NcclTestsHeader) -> int | None:
    known = [h.ranks] if h.ranks > 0 else []
    if h.highest_rank is not None:
        known.append(h.highest_rank + 1)
    return max(known) if known else None


def _driver(text: str) -> str | None:
    m = _DRIVER_RE.search(text)
    if m is None:
        return None
    code = int(m.group(1))  # CUDA_VERSION style: 1000 * major + 10 * minor
    return f"cuda {code // 1000}.{code % 1000 // 10}"


def _json_meta(text: str) -> tuple[datetime | None, dict[str, str]]:
    """``start_time`` and the kept part of ``env`` of a ``-J`` document (module doc)."""
    try:
        doc = loads_json(text)
    except ValueError:
        return None, {}
    if not isinstance(doc, dict):
        return None, {}
    when: datetime | None = None
    start = doc.get("start_time")
    if isinstance(start, str):
        try:
            when = utc(datetime.fromisoformat(start.strip()))
        except ValueError:
            when = None
    env: dict[str, str] = {}
    items = doc.get("env")
    for item in items if isinstance(items, list) else []:
        if isinstance(item, str) and "=" in item:
            key, value = item.split("=", 1)
            if key.startswith(_ENV_PREFIXES):
                env[key] = value
    return when, env


def _env(text: str) -> dict[str, str]:
    if "NCCL INFO" not in text:
        return {}
    env: dict[str, str] = {}
    for rec in parse_text(text, "nccl-log").records:
        if isinstance(rec, NcclEnv) and rec.name.startswith("NCCL_"):
            env[rec.name] = rec.value
    return env


def _says_something(h: NcclTestsHeader) -> bool:
    """Whether a header holds any nccl-tests fact (a ``{}`` JSON document gives an empty one)."""
    return bool(
        h.collective or h.binary or h.nccl_tests_version or h.nccl_version or h.devices
    ) or any(v is not None for v in (h.n_gpus, h.min_bytes, h.failure, h.n_threads))


def _runs(
    parsed: ParseResult,
    text: str,
    *,
    source: str | None,
    started: datetime,
    label: str | None,
    cluster: str | None,
    fabric_hash: str | None,
    collective: str | None,
    driver_version: str | None,
    warnings: list[str],
    extra_env: dict[str, str],
) -> list[BenchRun]:
    headers = parsed.of_type(NcclTestsHeader)
    rows = parsed.of_type(NcclTestsRow)
    summaries = {s.test: s for s in parsed.of_type(NcclTestsSummary)}
    if not rows and not any(_says_something(h) for h in headers):
        name = source or "<input>"
        raise InputError(
            f"{name}: no nccl-tests output found (no '# nThread' header, no result table); "
            "expected what all_reduce_perf & co. print, or their -J JSON file"
        )
    by_test: dict[int, list[NcclTestsRow]] = {}
    for r in rows:
        by_test.setdefault(r.test, []).append(r)
    tests = sorted({h.test for h in headers} | set(by_test))
    header_of = {h.test: h for h in headers}
    env = {**extra_env, **_env(text)}
    driver = driver_version or _driver(text)
    out: list[BenchRun] = []
    # the built-in benchmark prints nccl-tests' format under its own first header line
    tool = "builtin" if BUILTIN_MARK in text[:2000] else "nccl-tests"
    for test in tests:
        h = header_of.get(test) or NcclTestsHeader(line=0, test=test)
        test_rows = by_test.get(test, [])
        bench_rows = tuple(b for r in test_rows for b in _halves(r))
        if not bench_rows:
            why = f" ({h.failure})" if h.failure else ""
            warnings.append(f"test {test}: no result rows{why}; nothing imported for it")
            continue
        coll = h.collective or collective or _infer_collective(test_rows)
        if coll is None:
            coll = "unknown"
            warnings.append(
                f"test {test}: the output does not name the collective and its columns fit "
                "several; stored as 'unknown' (give --collective)"
            )
        summary = summaries.get(test)
        out.append(
            BenchRun(
                collective=coll,
                tool=tool,
                rows=bench_rows,
                started=started,
                hosts=_hosts(h, test_rows),
                ranks=_ranks(h),
                cluster=cluster,
                fabric_hash=fabric_hash,
                nccl_version=h.nccl_version,
                driver_version=driver,
                env=dict(env),
                label=label,
                source=source,
                avg_busbw_gbps=summary.avg_busbw_GBps if summary else None,
            )
        )
    return out


def read_nccl_tests(
    data: Path | str | bytes,
    *,
    label: str | None = None,
    cluster: str | None = None,
    fabric_hash: str | None = None,
    started: datetime | None = None,
    collective: str | None = None,
    driver_version: str | None = None,
    name: str | None = None,
    file_time: datetime | None = None,
) -> ImportResult:
    """Read nccl-tests output: a :class:`~pathlib.Path` (``-`` for stdin) is read under the
    input policy (:func:`aifabric.inputs.read_input`), ``bytes`` are decoded, a ``str`` is the
    text itself. ``name`` is recorded as ``source`` for text (the path for files);
    ``file_time`` is the start of last resort for text already read from a file (its mtime).

    Returns the runs (one per test with rows) and the warnings; :class:`InputError` when the
    file cannot be read or holds no nccl-tests output at all. See the module doc for fields.
    """
    text, source, when = _load(data, name, started)
    when = when or file_time
    parsed = parse_text(text, "nccl-tests", source or "<input>")
    result = ImportResult(warnings=[str(w) for w in parsed.warnings])
    json_env: dict[str, str] = {}
    if text.lstrip()[:1] == "{":
        json_start, json_env = _json_meta(text)
        if started is None and json_start is not None:
            when = json_start
    result.runs = _runs(
        parsed,
        text,
        source=source,
        started=when or datetime.now(UTC),
        label=label,
        cluster=cluster,
        fabric_hash=fabric_hash,
        collective=collective,
        driver_version=driver_version,
        warnings=result.warnings,
        extra_env=json_env,
    )
    return result


def import_nccl_tests(
    data: Path | str | bytes,
    *,
    label: str | None = None,
    cluster: str | None = None,
    fabric_hash: str | None = None,
    started: datetime | None = None,
    collective: str | None = None,
    driver_version: str | None = None,
    name: str | None = None,
) -> list[BenchRun]:
    """The runs of :func:`read_nccl_tests` (warnings dropped; use that to show them)."""
    return read_nccl_tests(
        data,
        label=label,
        cluster=cluster,
        fabric_hash=fabric_hash,
        started=started,
        collective=collective,
        driver_version=driver_version,
        name=name,
    ).runs


# -- perftest ---------------------------------------------------------------------------------
#
# perftest (https://github.com/linux-rdma/perftest) output → one run per bandwidth run in the
# capture, read with the evidence parser :mod:`aifabric.evidence.perftest`:
#
# * ``rows``: one per table line, ``size_bytes`` = ``#bytes``, ``algbw_gbps`` = ``busbw_gbps``
#   = ``BW average`` in GB/s (10^9 B/s). ``[Gb/sec]`` (``--report_gbits``) is 10^9 bit/s, so
#   ÷ 8; ``[MB/sec]`` is MiB/s: ``print_report_bw()`` in ``src/perftest_parameters.c`` at tag
#   26.04.17 divides by ``format_factor = (user_param->report_fmt == MBS) ? 0x100000 :
#   125000000``, so MB/sec × 2^20 / 10^9 (the parser's ``bw_avg_GBps``). A point-to-point
#   test has no bus factor: busbw = algbw. ``time_us`` = ``#bytes`` / BW average (perftest
#   prints no time; with several QPs it is the aggregate time per message). A row whose
#   average is 0 or missing is left out with a warning. ``count``/``dtype``/``redop``/``wrong``
#   are ``None``, ``in_place`` False;
# * ``collective``: the binary, from the title (``RDMA_Write BW Test`` → ``ib_write_bw``,
#   ``Send`` → ``ib_send_bw``, ``Atomic`` → ``ib_atomic_bw``, raw Ethernet →
#   ``raw_ethernet_bw``), with ``_bidir`` appended for ``-b`` runs: perftest's
#   ``print_full_bw_report()`` adds the peer's figures, so a bidirectional average is the sum
#   of both directions and must not share a history with one-way runs. Without a title, the
#   first ``ib_*_bw`` named in the capture (its command line), else ``perftest_bw``;
# * ``pair``: the caller's (``--pair A,B``), else the file name's (:func:`pair_from_name`);
#   ``hosts`` the pair (sorted), ``ranks`` 2;
# * ``started``: the caller's, else the ``Connected: Thu Apr 23 01:20:55 2026`` line newer
#   perftest prints (local time of the host, no zone: taken as UTC), else the file's
#   modification time, else now;
# * latency runs (``ib_*_lat``) have no bandwidth and are not imported (one warning each);
#   a run without result rows (failed, truncated) gives no run and one warning.
#
# Input in which the parser finds no perftest record at all is :class:`InputError` (exit 2).

_PERFTEST_VERBS = {
    "write": "ib_write_bw",
    "read": "ib_read_bw",
    "send": "ib_send_bw",
    "atomic": "ib_atomic_bw",
    "raw_ethernet": "raw_ethernet_bw",
}
_PERFTEST_BINARY_RE = re.compile(r"\b(ib_(?:write|read|send|atomic)_bw|raw_ethernet_bw)\b")
_CONNECTED_RE = re.compile(
    r"(?m)^\s*Connected:\s+[A-Z][a-z]{2} ([A-Z][a-z]{2} {1,2}\d{1,2} \d\d:\d\d:\d\d \d{4})\s*$"
)
_NAME_SUFFIXES = (".txt", ".log", ".out")
_NAME_PREFIX_RE = re.compile(r"^(?:ib_(?:write|read|send|atomic)_(?:bw|lat)|raw_ethernet_bw)[-_.]")
_HOST_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,252}")


def pair_from_name(name: str) -> tuple[str, str] | None:
    """The host pair a perftest result file is named after, or ``None``.

    The file name without its directory and without a ``.txt``/``.log``/``.out`` suffix, and
    without a leading perftest binary name and separator (``ib_write_bw-``, ``ib_read_bw_``),
    is ``A--B`` (two hyphens: host names may hold one) or, when it holds exactly one hyphen,
    ``A-B``: ``ib_write_bw-h1-h3.txt`` → (h1, h3), ``ib_write_bw-node-01--node-02.log`` →
    (node-01, node-02), ``gpu7--gpu9`` → (gpu7, gpu9). Anything else (``node-01-node-02``,
    one name, two equal names) is ``None``: give ``--pair``.
    """
    stem = Path(name).name
    for suffix in _NAME_SUFFIXES:
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    m = _NAME_PREFIX_RE.match(stem)
    if m is not None:
        stem = stem[m.end() :]
    if stem.count("--") == 1:
        a, b = stem.split("--")
    elif stem.count("-") == 1:
        a, b = stem.split("-")
    else:
        return None
    if a == b or not _HOST_RE.fullmatch(a) or not _HOST_RE.fullmatch(b):
        return None
    return a, b


def _perftest_collective(params: PerftestParams | None, text: str) -> str | None:
    if params is not None and params.verb in _PERFTEST_VERBS:
        name = _PERFTEST_VERBS[params.verb]
        return f"{name}_bidir" if params.bidirectional else name
    m = _PERFTEST_BINARY_RE.search(text)
    return m.group(1) if m is not None else None


def _connected_at(text: str) -> datetime | None:
    m = _CONNECTED_RE.search(text)
    if m is None:
        return None
    try:
        return datetime.strptime(" ".join(m.group(1).split()), "%b %d %H:%M:%S %Y").replace(
            tzinfo=UTC
        )
    except ValueError:
        return None


def _perftest_rows(rows: list[PerftestBwRow], run: int, warnings: list[str]) -> list[BenchRow]:
    out: list[BenchRow] = []
    for r in rows:
        gbps = r.bw_avg_GBps
        if gbps is None or not gbps > 0.0 or r.size_bytes <= 0:
            warnings.append(
                f"run {run}: line {r.line}: {r.size_bytes} B has no positive BW average; "
                "row left out"
            )
            continue
        out.append(
            BenchRow(
                size_bytes=r.size_bytes,
                count=None,
                dtype=None,
                redop=None,
                time_us=r.size_bytes / (gbps * 1e3),  # bytes / (GB/s) = ns; / 1e3 → µs
                algbw_gbps=gbps,
                busbw_gbps=gbps,
                in_place=False,
                wrong=None,
            )
        )
    return out


def _load(
    data: Path | str | bytes, name: str | None, started: datetime | None
) -> tuple[str, str | None, datetime | None]:
    """(text, source, started) of an input: a path read under the input policy (its mtime is
    the fallback start), bytes decoded, a string taken as the text."""
    when = utc(started) if started is not None else None
    if isinstance(data, Path):
        source = name or str(data)
        text = decode_capture(read_input(data, "capture"), source)
        if when is None and str(data) != "-":
            when = datetime.fromtimestamp(os.stat(data).st_mtime, UTC)
        return text, source, when
    if isinstance(data, bytes):
        return decode_capture(data, name or "<input>"), name, when
    return data, name, when


def read_perftest(
    data: Path | str | bytes,
    *,
    pair: tuple[str, str] | None = None,
    label: str | None = None,
    cluster: str | None = None,
    fabric_hash: str | None = None,
    started: datetime | None = None,
    name: str | None = None,
    file_time: datetime | None = None,
) -> ImportResult:
    """Read perftest output (``ib_write_bw`` & co., either side) into runs: see the comment
    block above for the fields. ``data`` as for :func:`read_nccl_tests`; ``pair`` the two hosts,
    else taken from the file name (``name`` or the path) by :func:`pair_from_name`.

    Returns one run per bandwidth run with rows and the warnings; :class:`InputError` when the
    input holds no perftest output at all.
    """
    text, source, when = _load(data, name, started)
    when = when or file_time
    parsed = parse_text(text, "perftest", source or "<input>")
    result = ImportResult(warnings=[str(w) for w in parsed.warnings])
    params = {p.run: p for p in parsed.of_type(PerftestParams)}
    bw_rows = parsed.of_type(PerftestBwRow)
    lat_runs = {r.run for r in parsed.of_type(PerftestLatRow)}
    if not parsed.records:
        raise InputError(
            f"{source or '<input>'}: no perftest output found (no title, parameter block, "
            "results table or perftest error line)"
        )
    if pair is None and source is not None:
        pair = pair_from_name(source)
    if pair is None:
        result.warnings.append(
            "no host pair (give --pair A,B or name the file TOOL-A-B.txt / A--B.txt): "
            "the runs cannot take part in a pairwise sweep"
        )
    if started is None:
        when = _connected_at(text) or when
    by_run: dict[int, list[PerftestBwRow]] = {}
    for r in bw_rows:
        by_run.setdefault(r.run, []).append(r)
    for run in sorted(set(params) | set(by_run) | lat_runs):
        p = params.get(run)
        if run in lat_runs and run not in by_run:
            title = p.test if p is not None else "latency test"
            result.warnings.append(f"run {run}: {title} is a latency test; not imported")
            continue
        rows = _perftest_rows(by_run.get(run, []), run, result.warnings)
        if not rows:
            title = p.test if p is not None else "perftest run"
            result.warnings.append(f"run {run}: {title} has no result rows; nothing imported")
            continue
        coll = _perftest_collective(p, text)
        if coll is None:
            coll = "perftest_bw"
            result.warnings.append(
                f"run {run}: the capture names no perftest test; stored as 'perftest_bw'"
            )
        result.runs.append(
            BenchRun(
                collective=coll,
                tool="perftest",
                rows=tuple(rows),
                started=when or datetime.now(UTC),
                hosts=tuple(sorted(pair)) if pair is not None else (),
                ranks=2,
                cluster=cluster,
                fabric_hash=fabric_hash,
                label=label,
                source=source,
                pair=pair,
            )
        )
    if not result.runs:
        errors = [n.text for n in parsed.of_type(PerftestNotice) if n.code == "error"]
        if errors:
            result.warnings.append(f"perftest failed: {errors[0]}; nothing imported")
    return result


def _is_perftest(text: str) -> bool:
    """Whether the evidence registry's best guess for ``text`` is perftest."""
    scores = detect_scores(text)
    return bool(scores) and scores[0][1] == "perftest"


def read_results(
    data: Path | str | bytes,
    *,
    pair: tuple[str, str] | None = None,
    label: str | None = None,
    cluster: str | None = None,
    fabric_hash: str | None = None,
    started: datetime | None = None,
    name: str | None = None,
    collective: str | None = None,
) -> ImportResult:
    """``bench import``'s reader: perftest output when the evidence registry detects the
    ``perftest`` kind first (:func:`read_perftest`), else nccl-tests or built-in benchmark
    output (:func:`read_nccl_tests`, unchanged; ``collective`` is its fallback when the output
    does not name one). ``pair`` marks every nccl-tests run as that
    pair too; a file name gives a pair to perftest runs only (nccl-tests file names such as
    ``all_reduce-2-nodes.txt`` would read as one)."""
    text, source, when = _load(data, name, started)
    # read once; the file's mtime goes along as the start of last resort, so each reader keeps
    # its own rule for a start the output states (-J start_time, perftest's Connected: line)
    file_time = when if started is None else None
    if _is_perftest(text):
        return read_perftest(
            text,
            file_time=file_time,
            pair=pair,
            label=label,
            cluster=cluster,
            fabric_hash=fabric_hash,
            started=started,
            name=source,
        )
    got = read_nccl_tests(
        text,
        file_time=file_time,
        label=label,
        cluster=cluster,
        fabric_hash=fabric_hash,
        started=started,
        name=source,
        collective=collective,
    )
    if pair is not None:
        got.runs = [replace(r, pair=pair) for r in got.runs]
    return got
