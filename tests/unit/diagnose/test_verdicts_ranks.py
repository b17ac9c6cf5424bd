"""Processes announcing the same global rank while others never join
(``diagnose.duplicate-global-rank``), read from Lightning's process-group banners."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from aifabric.checks.diagnose.engine import diagnose, load_evidence
from aifabric.checks.diagnose.verdicts_ranks import duplicate_ranks
from aifabric.evidence.nccl_log import RankBanner
from aifabric.evidence.nccl_log import parse as parse_nccl_log

NODE0 = """\
Initializing distributed: GLOBAL_RANK: 5, MEMBER: 6/16
Initializing distributed: GLOBAL_RANK: 2, MEMBER: 3/16
Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/16
Initializing distributed: GLOBAL_RANK: 7, MEMBER: 8/16
Initializing distributed: GLOBAL_RANK: 4, MEMBER: 5/16
Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/16
Initializing distributed: GLOBAL_RANK: 6, MEMBER: 7/16
----------------------------------------------------------------------------------------------------
distributed_backend=nccl
All distributed processes registered. Starting with 16 processes
----------------------------------------------------------------------------------------------------

Initializing distributed: GLOBAL_RANK: 3, MEMBER: 4/16
[rank: 5] Global seed set to 3407
"""
"""The first node's log of a real 2 x 8 GPU Lightning job (NVIDIA/nccl#1000): ranks 0-7."""
NODE1 = "\n".join(
    f"Initializing distributed: GLOBAL_RANK: {r}, MEMBER: {r + 1}/16" for r in range(8, 16)
)


def _found(tmp_path: Path, *texts: str) -> list[tuple[str, str, str]]:
    paths = []
    for i, text in enumerate(texts):
        path = tmp_path / f"node{i}.log"
        path.write_text(text)
        paths.append(path)
    return [(f.severity, f.cause or "", f.message) for f in diagnose(load_evidence(paths)).findings
            if f.check == "diagnose.duplicate-global-rank"]  # fmt: skip


def test_banners_are_read_with_rank_and_world_size() -> None:
    recs = [r for r in parse_nccl_log(NODE0).records if isinstance(r, RankBanner)]
    assert sorted(r.global_rank for r in recs) == list(range(8))
    assert {r.world_size for r in recs} == {16}
    old = parse_nccl_log("initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/8").records
    assert [(r.global_rank, r.world_size) for r in old if isinstance(r, RankBanner)] == [(1, 8)]
    ds = parse_nccl_log("initializing deepspeed distributed: GLOBAL_RANK: 12, MEMBER: 13/16")
    assert [(r.global_rank, r.world_size) for r in ds.records if isinstance(r, RankBanner)] == [
        (12, 16)]  # fmt: skip


def test_both_nodes_claiming_ranks_0_to_7_is_a_launch_error(tmp_path: Path) -> None:
    (hit,) = _found(tmp_path, NODE0, NODE0)
    assert hit[:2] == ("error", "application.usage")
    assert "rank(s) 0, 1, 2, 3, 4, 5, 6, 7 are claimed more than once" in hit[2]
    assert "rank(s) 8, 9, 10, 11, 12, 13, 14, 15 never join" in hit[2]


def test_one_node_of_a_correct_launch_is_not_a_problem(tmp_path: Path) -> None:
    assert _found(tmp_path, NODE0) == []
    assert _found(tmp_path, NODE0, NODE1) == []


def test_a_restarted_job_announcing_every_rank_twice_is_not_a_problem(tmp_path: Path) -> None:
    assert _found(tmp_path, NODE0 + NODE1 + "\n" + NODE0 + NODE1) == []


@given(st.integers(1, 64), st.data())
def test_doubled_and_missing_ranks_are_exact(world: int, data: st.DataObject) -> None:
    ranks = data.draw(st.lists(st.integers(0, world - 1), min_size=1, max_size=2 * world))
    banners = [RankBanner(line=i + 1, host=None, pid=None, tid=None, cuda_dev=None,
                          launcher_rank=None, global_rank=r, world_size=world)
               for i, r in enumerate(ranks)]  # fmt: skip
    found = duplicate_ranks(banners)
    doubled = sorted({r for r in ranks if ranks.count(r) > 1})
    missing = sorted(set(range(world)) - set(ranks))
    if doubled and missing:
        assert found == (world, doubled, missing)
    else:
        assert found is None
