"""nccl-tests output with a launcher, host or timestamp prefix on every line, and tables pasted
as Markdown or with their leading spaces stripped.

The fixtures are real captures (values below read by hand from them). The prefix styles for which
no real nccl-tests capture was found are exercised by putting the documented prefix in front of
every line of a real capture (``olivia-gh200-slingshot-v2.18.3``): the parse must give the same
records as the capture without prefixes, plus the host/rank the prefix names. Prefix formats:
pdsh(1) "host: " (also clush, dsh); Slurm srun(1) --label "N: " (right-aligned task id); Open MPI
mpirun(1) --tag-output "[jobid,rank]<stdout>:" and --timestamp-output (ctime(3) date in front);
torchrun --tee/--redirects "[{role}{local_rank}]:" (torch.distributed.elastic, e.g.
"[default0]:"); kubectl logs --timestamps (RFC 3339 with nanoseconds) and --prefix
"[pod/NAME/CONTAINER] "; moreutils ts(1) default "%b %d %H:%M:%S "; SkyPilot's
"(head, rank=0, pid=N) " (the skypilot-* fixtures).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.evidence import ParseResult, detect_kind
from aifabric.evidence.nccl_tests import (
    NcclTestsHeader,
    NcclTestsRow,
    NcclTestsSummary,
    detect,
    parse,
)
from tests.unit.evidence.fixtures import case, load

KIND = "nccl-tests"
BASE = "olivia-gh200-slingshot-v2.18.3"


def rows(res: ParseResult, test: int | None = None) -> list[NcclTestsRow]:
    out: list[NcclTestsRow] = res.of_type(NcclTestsRow)
    return [r for r in out if test is None or r.test == test]


def headers(res: ParseResult) -> list[NcclTestsHeader]:
    out: list[NcclTestsHeader] = res.of_type(NcclTestsHeader)
    return out


def summaries(res: ParseResult) -> list[NcclTestsSummary]:
    out: list[NcclTestsSummary] = res.of_type(NcclTestsSummary)
    return out


_PREFIX_FIELDS = {"line", "end_line", "rank", "host", "launcher_rank", "launcher_host"}


def _sans_prefix(res: ParseResult) -> list[dict[str, object]]:
    """Records as JSON without line numbers and prefix-derived fields."""
    out = []
    for r in res.records:
        d = {k: v for k, v in r.to_json().items() if k not in _PREFIX_FIELDS}
        if "devices" in d:
            d["devices"] = [{k: v for k, v in x.items() if k != "line"} for x in d["devices"]]
        out.append(d)
    return out


def _prefixed(text: str, prefix: Callable[[str], str]) -> str:
    return "\n".join(prefix(line) if line.strip() else line for line in text.split("\n"))


# --------------------------------------------------------------------------------------------
# real prefixed captures


def test_skypilot_ray_prefix_stacked_on_tag_output() -> None:
    res = load(KIND, "skypilot-gke-h200-ray-prefix-tag-output")
    assert not res.warnings
    (h,) = headers(res)
    assert h.line == 5  # "(head, rank=0, pid=3808) [1,0]<stdout>:# nThread ..."
    assert (h.n_gpus, h.min_bytes, h.max_bytes, h.iters) == (1, 1024, 8589934592, 100)
    assert (h.ranks, h.nodes, h.hosts) == (16, 2, ["nc-d87e1263-head", "nc-d87e1263-worker1"])
    assert (h.devices[8].rank, h.devices[8].pid, h.devices[8].bus_id) == (8, 4926, "0000:8f:00")
    assert (h.launcher_host, h.launcher_rank) == ("head", 0)
    rs = rows(res)
    assert len(rs) == 24 and all((r.rank, r.host, r.redop) == (0, "head", "none") for r in rs)
    first, last = rs[0], rs[-1]
    assert (first.size_bytes, first.count, first.oop_time_us, first.oop_busbw_GBps) == (
        1024,
        16,
        28.39,
        0.03,
    )
    assert (last.size_bytes, last.oop_busbw_GBps, last.ip_busbw_GBps, last.ip_time_us) == (
        8589934592,
        325.72,
        332.58,
        24214.0,
    )
    (s,) = summaries(res)
    assert (s.avg_busbw_GBps, s.out_of_bounds, s.ok) == (122.073, 0, True)


def test_skypilot_ray_prefix_alone_keeps_the_node_name() -> None:
    res = load(KIND, "skypilot-pr3217-ray-prefix-a100-devices")
    assert not res.warnings and not rows(res)
    (h,) = headers(res)
    assert (h.line, h.n_gpus, h.max_bytes, h.iters) == (4, 8, 134217728, 20)
    assert [(d.rank, d.pid, d.device) for d in h.devices] == [(i, 21431, i) for i in range(4)]
    assert h.hosts == ["nccl-ebd1-head-5vwmjam2-compute"]
    assert h.devices[0].gpu == "NVIDIA A100-SXM4-40GB"
    assert (h.launcher_host, h.launcher_rank) == ("head", None)  # Ray's rank= is the node's


def test_srun_label_two_tests_of_rccl_issue_1490() -> None:
    res = load(KIND, "rccl-issue1490-srun-label-allgather-then-allreduce")
    assert not res.warnings
    h0, h1 = headers(res)
    assert (h0.line, h0.launcher_rank, h0.collective) == (1, 0, None)
    assert (h1.line, h1.collective) == (28, "all_reduce")  # named in the prose between pastes
    gather, reduce_ = rows(res, 0), rows(res, 1)
    assert len(gather) == len(reduce_) == 17
    assert all(r.redop == "none" for r in gather) and all(r.redop == "sum" for r in reduce_)
    dip = next(r for r in gather if r.size_bytes == 2097152)
    assert (dip.oop_time_us, dip.oop_busbw_GBps, dip.ip_time_us) == (70248.0, 0.03, 73593.0)
    assert (reduce_[-1].size_bytes, reduce_[-1].oop_busbw_GBps) == (4294967296, 92.89)
    assert [s.avg_busbw_GBps for s in summaries(res)] == [37.9868, 43.7269]


def test_tag_output_with_a_two_digit_rank_and_nccl_info_of_other_ranks() -> None:
    res = load(KIND, "aws-do-eks-p5-two-node-tag-output-rank10")
    assert not res.warnings
    (h,) = headers(res)
    assert (h.line, h.launcher_rank) == (5, 0)
    (r,) = rows(res)
    assert (r.rank, r.size_bytes, r.oop_busbw_GBps, r.ip_busbw_GBps) == (
        0,
        2147483648,
        438.85,
        439.28,
    )
    (s,) = summaries(res)
    assert (s.avg_busbw_GBps, s.out_of_bounds) == (53.2202, None)


def test_srun_label_without_padding_and_an_elision() -> None:
    res = load(KIND, "awsome-dt-srun-label-unpadded-scatter-elided")
    assert not res.warnings
    rs = rows(res)
    assert [r.size_bytes for r in rs] == [0, 536870912, 1073741824, 2147483648]
    assert all((r.root, r.redop, r.rank) == (0, "none", 0) for r in rs)
    assert (rs[-1].oop_time_us, rs[-1].oop_busbw_GBps, rs[-1].ip_busbw_GBps) == (
        25421.0,
        79.2,
        79.63,
    )


def test_garbled_row_behind_the_prefixes_is_one_warning_and_keeps_the_rest() -> None:
    name = "skypilot-gke-h200-ray-prefix-tag-output"
    lines = case(KIND, name).text().split("\n")
    bad = "(head, rank=0, pid=3808) [1,0]<stdout>:        4096  garbage##  cells"
    res = parse("\n".join([*lines[:30], bad, *lines[30:]]))
    (w,) = res.warnings
    assert w.line == 31 and "garbage" in w.text
    assert _sans_prefix(res) == _sans_prefix(load(KIND, name))


# --------------------------------------------------------------------------------------------
# every documented prefix style, in front of every line of a real capture

PREFIXES: dict[str, tuple[Callable[[str], str], str | None, int | None]] = {
    "pdsh-host": (lambda s: "node001: " + s, "node001", None),
    "pdsh-address": (lambda s: "10.0.0.1: " + s, "10.0.0.1", None),
    "mpi-launcher-pod": (
        lambda s: "nccl-test-launcher-x7k2p: " + s,
        "nccl-test-launcher-x7k2p",
        None,
    ),
    "srun-label": (lambda s: "  3: " + s, None, 3),
    "tag-output": (lambda s: "[1,0]<stdout>:" + s, None, 0),
    "timestamp-output": (lambda s: "Thu Mar 14 15:40:48 2019[1,0]<stdout>:" + s, None, 0),
    "torchrun": (lambda s: "[default0]:" + s, None, 0),
    "kubectl-timestamps": (lambda s: "2024-05-01T10:00:00.123456789Z " + s, None, None),
    "bracketed-timestamp": (lambda s: "[2024-05-01 10:00:00] " + s, None, None),
    "ts-then-tag": (lambda s: "May 01 10:00:00 [1,2]<stdout>:" + s, None, 2),
    "kubectl-prefix": (
        lambda s: "[pod/nccl-test-launcher-x7k2p/mpi-launcher] " + s,
        "nccl-test-launcher-x7k2p",
        None,
    ),
    "ray": (lambda s: "(head, rank=0, pid=3808) " + s, "head", None),
    "host-then-srun": (lambda s: "gpu-07:  0: " + s, "gpu-07", 0),
    "markdown-line": (lambda s: "| " + s + " |", None, None),
    "leading-spaces-stripped": (lambda s: s.lstrip(), None, None),
}


@pytest.mark.parametrize("style", sorted(PREFIXES))
def test_prefix_style_reads_like_the_bare_capture(style: str) -> None:
    prefix, host, rank = PREFIXES[style]
    bare = case(KIND, BASE).text()
    text = _prefixed(bare, prefix)
    assert detect_kind(text) == KIND
    got, want = parse(text), parse(bare)
    assert not got.warnings
    assert _sans_prefix(got) == _sans_prefix(want)
    rs = rows(got)
    assert len(rs) == 28
    assert all((r.host, r.rank) == (host, rank) for r in rs)
    (h,) = headers(got)
    assert (h.launcher_host, h.launcher_rank) == (host, rank)
    assert [r.line for r in rs] == [r.line for r in rows(want)]  # file lines, unchanged


def test_lines_that_only_look_like_a_host_prefix_are_left_alone() -> None:
    text = case(KIND, "eks-efa-t4-tag-output-nccl-info").text()
    assert text.startswith("Warning: Permanently added")  # "Warning: " is not a host
    res = parse(text)
    assert all(r.host is None for r in rows(res)) and not res.warnings


def test_conda_prompt_is_not_a_ray_prefix() -> None:
    res = load(KIND, "issue82-broadcast-root-na-nccl-warn")  # "(base) gandiva@v100-gpu-1:~$ ..."
    (h,) = headers(res)
    assert h.launcher_host is None and h.binary == "broadcast_perf"


# --------------------------------------------------------------------------------------------
# several processes printing whole tests, interleaved line by line


def _interleave(text: str, a: str, b: str) -> str:
    out = []
    for line in text.rstrip("\n").split("\n"):
        out += [a + line, b + line]
    return "\n".join(out)


def test_pdsh_on_two_hosts_gives_one_test_per_host() -> None:
    bare = case(KIND, BASE).text()
    res = parse(_interleave(bare, "gpu-a: ", "gpu-b: "))
    assert not res.warnings
    a, b = headers(res)
    assert (a.launcher_host, b.launcher_host) == ("gpu-a", "gpu-b")
    assert (a.line, b.line) == (1, 2) and a.ranks == b.ranks == 8
    assert a.independent_runs == b.independent_runs == 1
    assert {r.host for r in rows(res, 0)} == {"gpu-a"} and {r.host for r in rows(res, 1)} == {
        "gpu-b"
    }
    assert [r.size_bytes for r in rows(res, 0)] == [r.size_bytes for r in rows(parse(bare))]
    assert [s.test for s in summaries(res)] == [0, 1]


def test_ranks_each_printing_a_test_are_split_and_flagged() -> None:
    bare = case(KIND, BASE).text()
    for a, b in ((" 0: ", " 1: "), ("[1,0]<stdout>:", "[1,1]<stdout>:")):
        res = parse(_interleave(bare, a, b))
        (w,) = res.warnings
        assert w.line == 1 and "2 ranks each printed a whole test" in w.message
        assert "MPI=1" in w.message
        assert [h.launcher_rank for h in headers(res)] == [0, 1]
        assert len(rows(res, 0)) == len(rows(res, 1)) == 28


def test_one_rank_printing_the_table_is_not_split() -> None:
    res = load(KIND, "eks-efa-t4-tag-output-nccl-info")  # [1,1] prints NCCL INFO lines only
    assert len(headers(res)) == 1 and not res.warnings


# --------------------------------------------------------------------------------------------
# Markdown tables


def test_markdown_table_with_rule_line_and_units_in_the_header() -> None:
    rs = rows(load(KIND, BASE))
    body = [
        "| size (B) | count | type | redop | root | time (us) | algbw (GB/s) | busbw (GB/s) "
        "| #wrong | time (us) | algbw (GB/s) | busbw (GB/s) | #wrong |",
        "|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    src = case(KIND, BASE).text().split("\n")
    table = [s for s in src if s.strip()[:1].isdigit()]
    body += ["| " + " | ".join(s.split()) + " |" for s in table]
    text = "\n".join(body)
    assert detect(text) >= 0.85 and detect_kind(text) == KIND
    res = parse(text)
    assert not res.warnings
    (h,) = headers(res)
    assert h.check_column == "#wrong" and "(B)" not in h.columns
    got = rows(res)
    assert [(r.size_bytes, r.oop_busbw_GBps, r.ip_wrong) for r in got] == [
        (r.size_bytes, r.oop_busbw_GBps, r.ip_wrong) for r in rs
    ]


def test_markdown_summary_table_of_other_numbers_is_ignored() -> None:
    text = case(KIND, BASE).text() + "\n| Size | busbw |\n|---|---|\n| 8 B | 0 |\n| 1 MB | 1.33 |\n"
    res = parse(text)
    assert not res.warnings and len(rows(res)) == 28


# --------------------------------------------------------------------------------------------
# linear time: one very long line of every shape the prefix and row code looks at

_N = 100_000
LONG_LINES = {
    "spaces-then-colon": "1" + " " * _N + ":x",
    "row-then-date": "8 2 float sum -1 " + " " * _N + "2024-01-01 x",
    "device-line-long-gpu": "#  Rank  0 Group  0 Pid 1 on h device 0 [0x1] G" + " " * _N + "Y",
    "open-paren": "(" + "a" * _N,
    "open-paren-pid": "(pid=" + "a" * _N,
    "brackets": "[" * _N,
    "host-like": "a" * _N + ": #",
    "digits": "1" * _N,
    "digits-colon": "1" * _N + ":",
    "pipes": "| " * (_N // 2),
    "hash-spaces": "#" + " " * _N + "x",
    "rank-words": "#" + " Rank" * (_N // 5),
    "failures": "Test failure " * (_N // 13),
    "perf-names": "a_perf" * (_N // 6),
    "tags": "[1,0]<stdout>:" * (_N // 14),
    "timestamps": "2024-05-01T10:00:00Z " * (_N // 21),
    "ctimes": "Mon Jan 01 00:00:00 " * (_N // 20),
    "header-words": "# size " + "busbw " * (_N // 6),
    "avg-spaces": "# Avg bus bandwidth" + " " * _N + ":",
    "glued-tags": "8 2 float sum -1[" + "1," * (_N // 2),
}


@pytest.mark.parametrize("name", sorted(LONG_LINES))
def test_a_100k_character_line_parses_quickly(name: str) -> None:
    line = LONG_LINES[name]
    for text in (line, f"{line}\n{line}", "# nThread 1 nGpus 1 minBytes 8\n" + line):
        t0 = time.perf_counter()
        parse(text)
        detect(text)
        assert time.perf_counter() - t0 < 0.5, name


# --------------------------------------------------------------------------------------------
# properties


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    style=st.sampled_from(sorted(PREFIXES)),
    junk=st.text(alphabet=st.characters(blacklist_characters="\n\r"), max_size=60),
    at=st.integers(min_value=0, max_value=53),
)
def test_a_random_line_in_a_prefixed_capture_costs_at_most_one_warning(
    style: str, junk: str, at: int
) -> None:
    prefix = PREFIXES[style][0]
    text = _prefixed(case(KIND, BASE).text(), prefix)
    before = parse(text)
    lines = text.split("\n")
    lines.insert(min(at, len(lines)), junk)
    after = parse("\n".join(lines))
    assert len(after.warnings) <= len(before.warnings) + 1
    sizes = {r.size_bytes for r in rows(after)}
    assert {r.size_bytes for r in rows(before)} <= sizes


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from([
    "[1,0]<stdout>:", "0: ", "node1: ", "(head, rank=0, pid=1) ", "[default0]:", "| ", "|---|",
    "2024-05-01T10:00:00Z ", "[pod/a/b] ", "# nThread 1 nGpus 1",
    "#  Rank  0 Group  0 Pid 1 on h device 0",
    "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong",
    "   8  2  float  sum  -1  1.0  0.0  0.0  0  1.0  0.0  0.0  0", "# Avg bus bandwidth : 1.5",
    "(", "[", ":", "", " ",
]), max_size=40))  # fmt: skip
def test_prefix_soup_never_raises(parts: list[str]) -> None:
    text = "\n".join("".join(parts[i : i + 3]) for i in range(0, len(parts), 3))
    res = parse(text)
    assert res.kind == KIND
    for r in rows(res):
        assert r.size_bytes >= 0
