"""The nccl-log parser split by who printed the line: NCCL's INFO lines (``nccl_log``), its
connection graph (``nccl_graph``), its WARN lines (``nccl_warn``), PyTorch c10d records
(``pytorch_log``) and launchers' reports of ranks that died (``launcher_log``).

Each part reads its lines on its own (lines quoted from the real captures under
tests/fixtures/), the parts never import the entry point, and every record type stays
importable from ``aifabric.evidence.nccl_log``.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from aifabric.evidence import launcher_log, nccl_graph, nccl_log, nccl_warn, pytorch_log
from aifabric.evidence.nccl_log_base import LineFields, NcclProblem

PARTS = ("nccl_log_base", "nccl_graph", "nccl_warn", "pytorch_log", "launcher_log")
SRC = Path(nccl_log.__file__).parent


def _fields(line: int) -> LineFields:
    return LineFields(line=line, host=None, pid=None, tid=None, cuda_dev=None, launcher_rank=None)


@pytest.mark.parametrize("part", PARTS)
def test_parts_do_not_import_the_entry_point(part: str) -> None:
    tree = ast.parse((SRC / f"{part}.py").read_text(encoding="utf-8"))
    imported = {
        n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module is not None
    }
    ours = {m.removeprefix("aifabric.evidence.") for m in imported if m.startswith("aifabric.")}
    assert ours <= {"base", *PARTS}, ours  # never nccl_log, the registry, or another family


def test_every_record_type_is_importable_from_nccl_log() -> None:
    for part in PARTS[1:]:
        mod = importlib.import_module(f"aifabric.evidence.{part}")
        for name in mod.__all__:
            if name[0].isupper() and name != "TORCH_RANK_RE":
                assert getattr(nccl_log, name) is getattr(mod, name), f"{part}.{name}"
                assert name in nccl_log.__all__


def test_pytorch_watchdog_line() -> None:
    # tests/fixtures/evidence/nccl-log/pytorch-watchdog-old-format (OFA-Sys/OFA issue 271)
    line = (
        "[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 "
        "milliseconds before timing out."
    )
    rec = pytorch_log.parse_torch_line(line, 7)
    assert isinstance(rec, pytorch_log.WatchdogTimeout)
    assert (rec.line, rec.rank, rec.seq_num, rec.op_type) == (7, 1, 469508, "ALLREDUCE")
    assert (rec.timeout_ms, rec.ran_for_ms, rec.numel_in) == (1800000, 1802212, None)
    assert rec.category == "watchdog_timeout"


def test_warn_line_classified() -> None:
    # tests/fixtures/evidence/nccl-log/ib-completion-error4-h100-ipv6-oob: after "NCCL WARN"
    msg = (
        "NET/IB : Got completion from peer fe80::966d:ae03:8b:df78%ib0<53249> with error 4, "
        "opcode 32564, len 32564, vendor err 81 (Send)"
    )
    rec = nccl_warn.classify_problem(msg, _fields(3), "transport/net_ib.cc:1295")
    assert isinstance(rec, nccl_warn.IbCompletionError)
    assert (rec.status, rec.status_name) == (4, "IBV_WC_LOC_PROT_ERR")  # rdma-core verbs.h
    assert (rec.peer_address, rec.peer_port, rec.direction) == (
        "fe80::966d:ae03:8b:df78%ib0",
        53249,
        "Send",
    )
    assert rec.source == "transport/net_ib.cc:1295"


def test_launcher_report_of_a_killed_rank() -> None:
    # tests/fixtures/signatures/launchers/ompi-rank-killed-ompi-2661 (open-mpi/ompi issue 2661)
    report = "mpirun noticed that process rank 0 with PID 21183 on node host01 exited on signal 9"
    lines = [f"{report} (Killed)."]
    assert launcher_log.may_be_exit(lines[0])
    assert launcher_log.reports_a_death(lines[0])
    rec = launcher_log.process_exit(lines, 0)
    assert isinstance(rec, launcher_log.ProcessExit) and isinstance(rec, NcclProblem)
    assert (rec.line, rec.rank, rec.pid, rec.host) == (1, 0, 21183, "host01")
    assert (rec.signal, rec.signal_name, rec.reason) == (9, "SIGKILL", "killed")


def test_graph_lines() -> None:
    hop = nccl_graph.channel_or_ring(
        "Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA", _fields(2)
    )
    assert isinstance(hop, nccl_graph.ChannelHop)
    assert (hop.src_rank, hop.dst_rank, hop.net, hop.net_dev, hop.gdr) == (0, 1, "IB", 0, True)
    tree = nccl_graph.tree_links("Tree 0 : -1 -> 0 -> 1/-1/-1", _fields(4))
    assert isinstance(tree, nccl_graph.TreeLinks)
    assert tree.trees == (nccl_graph.TreeEdge(0, 0, -1, (1,)),)
    assert nccl_graph.connected("Connected all rings", _fields(5)) == nccl_graph.Connected(
        line=5, graph="rings"
    )
