"""The NCCL catalogues (checks/signatures/nccl.yaml, nccl-net.yaml): specificity and speed.

The shared catalogue test checks every example and real paste; this one checks what matters for
NCCL logs in particular: the most specific entry wins over the generic ones (completion status,
CUDA error text, verbs errno), benign INFO lines stay benign, any WARN line is explained by at
least the catch-all, and every pattern stays fast on long lines.
"""

from __future__ import annotations

import re
import time

import pytest

from aifabric.checks.diagnose.signatures import Signature, all_catalogues, signature_index

PROGRAMS = ("nccl", "nccl-net")
ENTRIES = [e for c in all_catalogues() if c.program in PROGRAMS for e in c.entries]
CATCH_ALL = "nccl.warn"


def _hit(line: str) -> tuple[str, str, str]:
    hit = signature_index().match(line)
    assert hit is not None, f"not recognised: {line!r}"
    return hit.signature.id, hit.signature.severity, hit.signature.cause


def test_both_catalogues_are_shipped() -> None:
    programs = {c.program for c in all_catalogues()}
    assert set(PROGRAMS) <= programs
    assert len(ENTRIES) >= 80


@pytest.mark.parametrize(
    ("line", "entry", "cause"),
    [
        (
            "h:1:2 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer "
            "10.0.0.2<45678> with error 12, opcode 0, len 0, vendor err 129 (Recv)",
            "nccl-net.wc-retry-exceeded",
            "fabric.packet-loss",
        ),
        (
            "h:1:2 [0] transport/net_ib/p2p.cc:688 NCCL WARN NET/IB: Got completion from peer "
            "10.0.0.2<45678> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) "
            "vendor_err=129  localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2 hca mlx5_0",
            "nccl-net.wc-retry-exceeded",
            "fabric.packet-loss",
        ),
        (
            "h:1:2 [0] transport/net_ib.cc:2121 NCCL WARN NET/IB: Got completion from peer "
            "10.0.0.2<45678> with status=120 opcode=0 len=0 vendor err 0 (Send)",
            "nccl-net.wc-error",
            "host.driver",
        ),
        (
            "h:1:2 [0] transport/net_ib.cc:2121 NCCL WARN NET/IB: Got completion from peer "
            "10.0.0.2<45678> with status=4 opcode=0 len=0 vendor err 81 (Send)",
            "nccl-net.wc-local-protection",
            "host.pcie",
        ),
        (
            "h:1:2 [0] transport/net_ib.cc:2121 NCCL WARN NET/IB: Got completion from peer "
            "10.0.0.2<45678> with status=10 opcode=1 len=0 vendor err 136 (Send)",
            "nccl-net.wc-access-error",
            "host.gdr",
        ),
        (
            "h:1:2 [0] misc/ibvwrap.cc:134 NCCL WARN Call to ibv_reg_mr failed with error "
            "Cannot allocate memory",
            "nccl-net.ibv-reg-mr-enomem",
            "host.memlock",
        ),
        (
            "h:1:2 [0] misc/ibvwrap.cc:134 NCCL WARN Call to ibv_reg_mr failed with error "
            "Bad address",
            "nccl-net.ibv-reg-mr-failed",
            "host.gdr",
        ),
        (
            "h:1:2 [0] misc/ibvwrap.cc:206 NCCL WARN Call to ibv_modify_qp failed with error "
            "Connection timed out errno 110",
            "nccl-net.ibv-modify-qp-etimedout",
            "host.gid",
        ),
        (
            "h:1:2 [0] misc/ibvwrap.cc:62 NCCL WARN Call to ibv_dealloc_pd failed",
            "nccl-net.ibv-call-failed",
            "host.driver",
        ),
        (
            "h:1:2 [1] transport/nvls.cc:254 NCCL WARN Cuda failure 2 'out of memory'",
            "nccl.cuda-oom",
            "application.oom",
        ),
        (
            "h:1:2 [1] transport/nvls.cc:254 NCCL WARN Cuda failure 401 'the operation cannot "
            "be performed in the present state'",
            "nccl.nvls-cuda-failure",
            "host.driver",
        ),
        (
            "h:1:2 [1] enqueue.cc:54 NCCL WARN Cuda failure 'invalid resource handle'",
            "nccl.cuda-failure",
            "host.driver",
        ),
        (
            "h:1:2 [0] misc/socket.cc:578 NCCL WARN socketPollConnect: connect to "
            "10.0.0.2<45763> returned Connection refused, exceeded error retry count after 35 "
            "attempts",
            "nccl.connect-refused",
            "config.firewall",
        ),
        (
            "h:1:2 [0] NCCL INFO socketPollConnect: connect to 10.0.0.2<45763> returned "
            "Connection refused, retrying (1/34) after sleep for 100 msec",
            "nccl.connect-retrying",
            "config.firewall",
        ),
        (
            "h:1:2 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : mlx5_0:1 Got async event : "
            "port error",
            "nccl-net.ib-async-port-error",
            "fabric.link-down",
        ),
        (
            "h:1:2 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : mlx5_0:1 Got async event : "
            "SRQ catastrophic error",
            "nccl-net.ib-async-event",
            "host.driver",
        ),
        (
            "h:1:2 [0] misc/shmutils.cc:93 NCCL WARN Call to open failed: No such file or "
            "directory",
            "nccl.shm-open-failed",
            "host.shm",
        ),
        (
            "h:1:2 [0] some/new/file.cc:12 NCCL WARN Something NCCL has not said before",
            CATCH_ALL,
            "config.nccl-env",
        ),
    ],
)
def test_most_specific_entry_wins(line: str, entry: str, cause: str) -> None:
    got, _, got_cause = _hit(line)
    assert (got, got_cause) == (entry, cause)


@pytest.mark.parametrize(
    "line",
    [
        "h:1:2 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal "
        "network plugin.",
        "h:1:2 [0] NCCL INFO TUNER/Plugin: Could not find: libnccl-tuner.so. Using internal "
        "tuner plugin.",
        "h:1:2 [0] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin_v10 symbol.",
        "h:1:2 [0] NCCL INFO cudaDriverVersion 12080",
        "h:1:2 [0] NCCL INFO Could not enable P2P between dev 0(=1b000) and dev 1(=1c000)",
        "h:1:2 [0] NCCL INFO NVLS multicast support is not available on dev 3",
        "h:1:2 [0] NCCL INFO [Service thread] Connection closed by localRank 2",
    ],
)
def test_benign_lines_are_benign(line: str) -> None:
    _, severity, _ = _hit(line)
    assert severity == "benign"


def test_plugin_present_but_broken_is_not_benign() -> None:
    got, severity, cause = _hit(
        "h:1:2 [0] NCCL INFO NET/Plugin: libnccl-net.so: undefined symbol: ncclNetPlugin_v9"
    )
    want = ("nccl.plugin-load-error", "warning", "config.version-mismatch")
    assert (got, severity, cause) == want


def test_flush_errors_are_secondary() -> None:
    got, severity, _ = _hit(
        "h:1:2 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer "
        "10.0.0.2<45678> with error 5, opcode 0, len 0, vendor err 249 (Recv)"
    )
    assert (got, severity) == ("nccl-net.wc-flush", "warning")


def test_every_warn_example_is_explained_by_an_nccl_entry() -> None:
    nccl_ids = {e.id for e in ENTRIES}
    for e in ENTRIES:
        for ex in e.examples:
            if " NCCL WARN " in ex:
                got, _, _ = _hit(ex)
                assert got in nccl_ids, f"{ex!r} taken by {got}"


def test_specific_patterns_outrank_the_catch_all() -> None:
    catch_all = next(e for e in ENTRIES if e.id == CATCH_ALL)
    for e in ENTRIES:
        if e.id != CATCH_ALL:
            assert len(e.pattern) > len(catch_all.pattern), e.id


def _classes(entry: Signature) -> list[str]:
    """One representative character per class the pattern works on, from its examples."""
    chars = set("".join(entry.examples)) | {" ", "a", "0", ":", "'", "(", "<"}
    return sorted(chars)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_pattern_is_fast_on_100k_lines(entry: Signature) -> None:
    rx = entry.regex()

    def timed(line: str) -> float:
        # the best of three: a busy machine (a parallel test worker) must not fail a linear
        # pattern, a quadratic one is slow every time
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            rx.search(line)
            best = min(best, time.perf_counter() - start)
        return best

    lines = [ch * 100_000 for ch in _classes(entry)]
    for ex in entry.examples[:2]:
        half = ex[: len(ex) // 2]
        lines += [half + "a" * 100_000, half + " x" * 50_000]
    for line in lines:
        slow = timed(line)
        if slow < 0.05:
            continue
        # slow, but maybe only because the machine is busy: a linear pattern takes about ten
        # times as long on a line ten times longer, a quadratic one about a hundred times
        short = max(timed(line[:10_000]), 0.005)
        assert slow < 0.25 and slow < 30 * short, (
            f"{entry.id}: {slow * 1000:.1f} ms on a 100k-character line, "
            f"{short * 1000:.1f} ms on 10k: not linear"
        )


def test_patterns_have_no_nested_quantifiers() -> None:
    nested = re.compile(r"\((?:[^()]|\\\(|\\\))*[+*]\)[+*{]")
    for e in ENTRIES:
        assert not nested.search(e.pattern), e.id


def test_no_ib_device_is_info_in_a_single_node_job(tmp_path: object) -> None:
    # a real single-node NCCL 2.27 log (nNodes 1) with NCCL's "NET/IB : No device found" line
    # (net_ib.cc) added: the job's traffic never leaves the host, so no warning; with the
    # communicator spanning two nodes the same line stays a warning
    from pathlib import Path  # noqa: PLC0415

    from aifabric.checks.diagnose.engine import diagnose, load_evidence  # noqa: PLC0415

    root = Path(__file__).resolve().parents[2] / "fixtures" / "evidence" / "nccl-log"
    log = (root / "roce-2.27-nccl-tests-init" / "input.txt").read_text(encoding="utf-8")
    line = "mew0:64904:64920 [0] NCCL INFO NET/IB : No device found.\n"
    out = Path(str(tmp_path))

    def severity(text: str) -> str:
        path = out / "nccl.log"
        path.write_text(text, encoding="utf-8")
        found = diagnose(load_evidence([path])).findings
        return next(f.severity for f in found if f.check == "signature.nccl-net.ib-no-device")

    assert severity(line + log) == "info"
    assert severity(line + log.replace("nNodes 1", "nNodes 2")) == "warning"
