"""Derivers of checks/diagnose/derive_perf.py on hand-computed values."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from aifabric.catalog import builtin_catalog
from aifabric.checks.diagnose import load_evidence
from aifabric.checks.diagnose.derive_perf import (
    RttJitter,
    _judge,
    infer_collective,
    lane_state,
    rtt_stats,
    size_label,
)
from aifabric.design import load_fabric
from aifabric.perf.estimate import estimate
from aifabric.perf.fabric import platform_from_fabric

CASES = Path(__file__).resolve().parents[2] / "fixtures" / "diagnose"


def _derived(paths: list[Path], rtype: str, **kw: Any) -> list[Any]:
    ev = load_evidence(paths, **kw)
    return [i.record for i in ev.items if i.record.record_type == rtype]


# -- ping --------------------------------------------------------------------------------------


def test_rtt_stats_by_hand() -> None:
    s = rtt_stats([1.0, 2.0, 3.0, 4.0])
    # avg 2.5; mean of squares (1+4+9+16)/4 = 7.5; mdev = sqrt(7.5 - 6.25) = sqrt(1.25)
    assert s["avg"] == 2.5
    assert s["median"] == 2.5
    assert s["mdev"] == pytest.approx(math.sqrt(1.25))
    assert (s["min"], s["max"]) == (1.0, 4.0)


def test_jitter_of_the_n2n_series() -> None:
    (j,) = _derived([CASES / "ping-jitter-n2n-spikes" / "ping.txt"], "rtt_jitter")
    # 22 replies, the first (0.581 ms) left out: 21 samples; sorted, the 11th is 0.623 ms
    assert j.samples == 21
    assert j.median_ms == 0.623
    assert j.max_ms == 14.738
    assert j.min_ms == 0.315
    # sum of the 21 RTTs = 36.36 ms -> avg 1.7314
    assert j.avg_ms == pytest.approx(36.36 / 21, abs=1e-3)
    assert j.spike_ratio == pytest.approx(14.738 / 0.623, abs=1e-3)  # 23.66
    assert j.jittery
    assert j.target == "10.30.10.2"


def _ping_series(tmp_path: Path, times_ms: list[float]) -> Path:
    lines = ["PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data."]
    lines += [f"64 bytes from 10.0.0.2: icmp_seq={i} ttl=64 time={t:.3f} ms"
              for i, t in enumerate(times_ms, 1)]
    path = tmp_path / "ping.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_one_late_reply_is_a_spike_not_jitter(tmp_path: Path) -> None:
    """29 replies at 0.05 ms and one at 1.8 ms (a veth on a busy 2-core machine): iputils' mdev
    is 0.31 ms, 290 % of the 0.108 ms average, but without the slowest reply it is 0; and the
    one late reply is 1.75 ms above the median, under the spike test's 5 ms."""
    times = [0.05] * 30 + [1.8]  # the first reply is left out (ARP), 30 remain
    (j,) = _derived([_ping_series(tmp_path, times)], "rtt_jitter")
    assert j.samples == 30
    mean = (29 * 0.05 + 1.8) / 30
    mdev = math.sqrt((29 * 0.05**2 + 1.8**2) / 30 - mean**2)
    assert j.mdev_ms == pytest.approx(mdev, abs=1e-3)
    assert j.jitter_ratio is not None and j.jitter_ratio > 2.5
    assert j.trimmed_mdev_ms == 0.0
    assert not j.jittery


def test_lasting_variance_is_jitter(tmp_path: Path) -> None:
    """Replies alternating 0.1 and 1.1 ms: avg 0.6, mdev 0.5 ms (83 %); without the slowest
    tenth (3 of 30) 12 at 1.1 and 15 at 0.1 remain: avg 0.544, mdev 0.497 ms (91 %)."""
    times = [0.1] + [0.1, 1.1] * 15
    (j,) = _derived([_ping_series(tmp_path, times)], "rtt_jitter")
    assert j.mdev_ms == pytest.approx(0.5, abs=1e-3)
    kept = [1.1] * 12 + [0.1] * 15
    m = sum(kept) / 27
    assert j.trimmed_mdev_ms == pytest.approx(math.sqrt(sum(t * t for t in kept) / 27 - m * m),
                                              abs=1e-3)
    assert j.jittery and j.reason.startswith("mdev 0.500 ms is 83% of the average")


def test_wan_series_is_not_jittery() -> None:
    (j,) = _derived([CASES / "ping-healthy-wan-ipv6" / "ping6.txt"], "rtt_jitter")
    assert j.samples == 19
    assert j.max_ms == 42.6 and j.median_ms == 38.8
    assert j.jitter_ratio is not None and j.jitter_ratio < 0.1
    assert not j.jittery


def test_broadcast_ping_is_not_judged() -> None:
    (j,) = _derived([CASES / "ping-broadcast-duplicates" / "ping.txt"], "rtt_jitter")
    assert j.duplicates == 19
    assert not j.jittery


def test_mtu_blackhole_with_the_probe_that_passed() -> None:
    (hole,) = _derived([CASES / "ping-mtu-frag-needed-1440" / "bundle"], "mtu_blackhole")
    # -s 1472 + 28 bytes of IPv4/ICMP headers = 1500; -s 1412 + 28 = 1440 passed
    assert hole.failed_bytes == 1500
    assert hole.mtu_bytes == 1440
    assert hole.passed_bytes == 1440
    assert hole.kind == "frag-needed"
    assert hole.reported_by == "45.45.148.251"


def test_no_blackhole_when_everything_passes() -> None:
    assert not _derived([CASES / "ping-healthy-df-1412-fits" / "ping.txt"], "mtu_blackhole")


# -- optics ------------------------------------------------------------------------------------


def _lane(**kw: Any) -> Any:
    base = {
        "lane": 1,
        "tx_bias_ma": 6.0,
        "tx_power_mw": 0.7,
        "rx_power_mw": 0.7,
        "rx_power_dbm": -1.5,
        "rx_los": None,
    }
    base.update(kw)
    return SimpleNamespace(**base)


@pytest.mark.parametrize(
    ("lane", "state"),
    [
        (_lane(), "ok"),
        (_lane(rx_power_mw=0.0001, rx_power_dbm=-40.0), "alarm"),  # below -16.31
        (_lane(rx_power_mw=0.04, rx_power_dbm=-14.0), "warning"),  # -16.31 < -14 < -13.3
        (_lane(tx_bias_ma=0.0, tx_power_mw=0.0, rx_power_mw=0.0, rx_power_dbm=None), "unused"),
        (_lane(rx_power_mw=None, rx_power_dbm=None, rx_los=True), "alarm"),  # LOS, laser on
        (
            _lane(
                tx_bias_ma=None, tx_power_mw=None, rx_power_mw=None, rx_power_dbm=None, rx_los=True
            ),
            "unknown",
        ),
    ],
)
def test_lane_state(lane: Any, state: str) -> None:
    assert lane_state(lane, -16.31, -13.3) == state


def test_dark_sfp_is_a_fault() -> None:
    (f,) = _derived([CASES / "optics-rx-no-light-sfp-lr" / "ethtool-m.txt"], "optics_fault")
    assert f.faults == 1 and f.faulty_lanes == [1]
    assert f.worst_rx_dbm == -40.0 and f.rx_low_alarm_dbm == -16.31


def test_unused_sr4_lanes_are_not_faults() -> None:
    path = CASES / "optics-healthy-qsfp-sr4-unused-lanes" / "ethtool-m.txt"
    (f,) = _derived([path], "optics_fault")
    assert f.unused_lanes == [2, 3, 4]
    assert f.faults == 0 and f.warnings == 0


def test_low_power_mode_dump_is_not_a_fault() -> None:
    path = CASES / "optics-healthy-qsfp28-low-power-mode" / "ethtool-m.txt"
    faults = _derived([path], "optics_fault")
    assert [f.faults for f in faults] == [0, 0, 0]
    assert faults[1].unused_lanes == [1, 2, 3, 4]


# -- nccl-tests --------------------------------------------------------------------------------


def _row(size: int, count: int, dtype: str = "float", redop: str | None = "sum", root: int = -1):
    return SimpleNamespace(size_bytes=size, count=count, data_type=dtype, redop=redop, root=root)


def test_infer_collective() -> None:
    # all-reduce: size = count x 4 (float)
    assert infer_collective([_row(8388608, 2097152)]) == "all_reduce"
    assert infer_collective([_row(1024, 512, "bfloat16")]) == "all_reduce"
    # reduce_scatter over 8 ranks: size = count x 4 x 8
    assert infer_collective([_row(8388608, 262144)]) is None
    assert infer_collective([_row(8388608, 2097152, redop="none")]) is None  # all_gather style
    assert infer_collective([_row(8388608, 2097152, root=0)]) is None  # reduce
    assert infer_collective([]) is None


def test_size_label() -> None:
    assert size_label(8589934592) == "8 GiB"
    assert size_label(536870912) == "512 MiB"
    assert size_label(1000) == "1000 B"


def test_single_rank_and_interleaved_runs() -> None:
    (run,) = _derived(
        [CASES / "perf-single-rank-alltoall-5090" / "alltoall_perf.txt"], "nccl_tests_run"
    )
    assert run.single_rank and run.ranks == 1 and run.busbw_at_max_GBps == 0.0
    (run,) = _derived(
        [CASES / "perf-no-mpi-interleaved-v100" / "all_reduce_perf.txt"], "nccl_tests_run"
    )
    assert run.independent_runs == 2 and not run.single_rank


def test_busbw_gap_uses_the_estimator() -> None:
    case = CASES / "perf-busbw-low-h100-ndr"
    cat = builtin_catalog()
    fabric = load_fabric(case / "fabric.yaml", cat)
    (gap,) = _derived([case / "all_reduce_perf.txt"], "busbw_gap", fabric=fabric, catalog=cat)
    expected = estimate(platform_from_fabric(fabric, cat, nodes=2), "allreduce", [8 << 30])
    assert gap.collective == "allreduce"  # inferred: count 2147483648 x 4 B = 8 GiB
    assert gap.size_bytes == 8 << 30 and gap.measured_GBps == 155.57
    assert gap.expected_GBps == pytest.approx(expected.rows[0].busbw_GBps, abs=0.01)
    assert gap.ratio == pytest.approx(155.57 / expected.rows[0].busbw_GBps, abs=1e-3)
    assert gap.below_acceptance  # well under S23's 70 %
    assert gap.nodes == 2 and gap.ranks == 16


def test_no_busbw_gap_without_a_fabric_file() -> None:
    path = CASES / "perf-busbw-low-h100-ndr" / "all_reduce_perf.txt"
    assert not _derived([path], "busbw_gap")


def test_loss_alone_is_not_jitter() -> None:
    """Lost probes on a steady path are the ping-loss verdict's (fabric.packet-loss), not
    jitter; beside a real variance they are named in the jitter's reason (S20.4)."""

    def judged(lost: int) -> RttJitter:
        j = RttJitter(line=1, samples=20 - lost, avg_ms=33.7, mdev_ms=2.8, jitter_ratio=0.083)
        j.loss_pct, j.lost = 100.0 * lost / 20, lost
        _judge(j)
        return j

    assert not judged(1).jittery
    assert not judged(3).jittery
    noisy = RttJitter(line=1, samples=17, avg_ms=33.7, mdev_ms=20.0, jitter_ratio=0.59)
    noisy.loss_pct, noisy.lost = 15.0, 3
    _judge(noisy)
    assert noisy.jittery and noisy.reason == "mdev 20.000 ms is 59% of the average; 15% loss"
