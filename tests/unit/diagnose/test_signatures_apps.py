"""The application-side catalogues: PyTorch distributed, job launchers and CUDA errors.

These checks use an index built from the three catalogues alone, so they do not depend on the
other programs' catalogues: the most specific entry wins inside them, benign lines stay benign,
every pattern stays linear on long lines, and the real pastes under
``tests/fixtures/signatures/{pytorch,launchers,cuda}/`` are recognised.
"""

from __future__ import annotations

import re
import string
import time
from functools import cache
from importlib import resources
from pathlib import Path

import pytest
import yaml

from aifabric.checks.diagnose.signatures import (
    Catalogue,
    Signature,
    SignatureIndex,
    all_catalogues,
)
from aifabric.yamlfile import read_yaml_text, validate_data

PROGRAMS = ("pytorch", "launchers", "cuda")
FIX = Path(__file__).resolve().parents[2] / "fixtures" / "signatures"


@cache
def catalogues() -> tuple[Catalogue, ...]:
    out = []
    folder = resources.files("aifabric.checks").joinpath("signatures")
    for program in PROGRAMS:
        name = f"checks/signatures/{program}.yaml"
        text = folder.joinpath(f"{program}.yaml").read_text(encoding="utf-8")
        out.append(validate_data(Catalogue, read_yaml_text(text, file=name), file=name, text=text))
    return tuple(out)


@cache
def index() -> SignatureIndex:
    return SignatureIndex(catalogues())


ENTRIES = [e for c in catalogues() for e in c.entries]
PASTES = sorted(p.parent for prog in PROGRAMS for p in (FIX / prog).glob("*/meta.yaml"))


def winner(line: str) -> str | None:
    hit = index().match(line)
    return None if hit is None else hit.signature.id


def test_sizes_and_programs() -> None:
    sizes = {c.program: len(c.entries) for c in catalogues()}
    assert sizes["pytorch"] >= 60 and sizes["launchers"] >= 50 and sizes["cuda"] >= 25
    for c in catalogues():
        assert all(e.id.startswith(c.program + ".") for e in c.entries)
        assert any(e.severity == "benign" for e in c.entries), c.program


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_each_entry_wins_one_of_its_examples(entry: Signature) -> None:
    assert entry.id in [winner(ex) for ex in entry.examples]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # torchrun: a signal-specific entry beats the general worker failure
        (
            "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) "
            "local_rank: 3 (pid: 812917) of binary: /usr/bin/python",
            "pytorch.elastic-worker-sigkill",
        ),
        (
            "E0323 21:57:08.583000 23 torch/distributed/elastic/multiprocessing/api.py:869] "
            "failed (exitcode: 1) local_rank: 0 (pid: 88) of binary: /opt/venv/bin/python3",
            "pytorch.elastic-worker-failed",
        ),
        # the watchdog timeout text wrapped by the watchdog-thread exception is still a timeout
        (
            "[PG ID 0 PG GUID 0(default_pg) Rank 2] Process group watchdog thread terminated with "
            "exception: [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, "
            "OpType=BROADCAST, NumelIn=112, NumelOut=112, Timeout(ms)=1800000) ran for 1800010 "
            "milliseconds before timing out.",
            "pytorch.nccl-watchdog-timeout",
        ),
        # the store's one-line RuntimeError names the port clash, not only the listen failure
        (
            "RuntimeError: The server socket has failed to listen on any local network address. "
            "The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in "
            "use). The server socket has failed to bind to 0.0.0.0:29500 (errno: 98 - Address "
            "already in use).",
            "pytorch.store-server-addr-in-use",
        ),
        (
            "[W socket.cpp:663] [c10d] The client socket has failed to connect to [node01]:29500 "
            "(errno: 111 - Connection refused).",
            "pytorch.store-client-refused",
        ),
        (
            "unable to open shared memory object </torch_1_2_3> in read-write mode: "
            "Too many open files (24)",
            "pytorch.shm-too-many-files",
        ),
        ("srun: error: node7: tasks 0-3: Out Of Memory", "launchers.srun-task-oom"),
        ("srun: error: node7: task 2: Killed", "launchers.srun-task-killed"),
        (
            "mpirun noticed that process rank 5 with PID 4242 on node gpu12 exited on signal 9 "
            "(Killed).",
            "launchers.ompi-rank-killed",
        ),
        ("=   EXIT CODE: 9", "launchers.hydra-exit-code-9"),
        ("=   EXIT CODE: 134", "launchers.hydra-exit-code"),
        (
            "[2023-07-10 04:26:35,999] [ERROR] [launch.py:324:sigkill_handler] ['python3', '-u', "
            "'train.py', '--local_rank=1'] exits with return code = -9",
            "launchers.deepspeed-exit-sigkill",
        ),
        (
            "slurmstepd: error: *** JOB 9 ON n1 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME "
            "LIMIT ***",
            "launchers.slurm-time-limit",
        ),
        (
            "[n1][[1,1],0][btl_tcp_endpoint.c:801:mca_btl_tcp_endpoint_complete_connect] "
            "connect() to 172.17.0.1 failed: No route to host (113)",
            "launchers.ompi-btl-tcp-no-route",
        ),
        ("RuntimeError: CUDA error: out of memory", "cuda.oom"),
        ("RuntimeError: CUDA error: invalid resource handle", "cuda.generic-error"),
        ("RuntimeError: CUDA error: uncorrectable ECC error encountered", "cuda.ecc-uncorrectable"),
    ],
)
def test_most_specific_entry_wins(line: str, expected: str) -> None:
    assert winner(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to "
        "avoid your system being overloaded, please further tune the variable for optimal "
        "performance in your application as needed. ",
        "[I323 21:57:08.468421315 TCPStoreLibUvBackend.cpp:120] [c10d - debug] Read callback "
        "failed. code:-4095 name:EOF desc:end of file",
        "[W socket.cpp:558] [c10d] The client socket has failed to connect to [localhost]:29500 "
        "(errno: 99 - Cannot assign requested address).",
        "WARNING: destroy_process_group() was not called before program exit, which can leak "
        "resources. For more info, please see https://pytorch.org/docs/stable/distributed.html"
        "#shutdown",
        "/usr/lib/python3/dist-packages/torch/utils/checkpoint.py:460: UserWarning: "
        "torch.utils.checkpoint: please pass in use_reentrant=True or use_reentrant=False "
        "explicitly.",
        "[warn] Epoll ADD(4) on fd 0 failed.  Old events were 0; read change was 1 (add); write "
        "change was 0 (none): Operation not permitted",
        "[lxbk1039:106838] 11 more processes have sent help message help-mpi-btl-openib.txt / ib "
        "port not selected",
        "By default, for Open MPI 4.0 and later, infiniband ports on a device",
        "CUDA kernel errors might be asynchronously reported at some other API call, so the "
        "stacktrace below might be incorrect.",
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
    ],
)
def test_benign_lines_are_benign(line: str) -> None:
    hit = index().match(line)
    assert hit is not None, line
    assert hit.signature.severity == "benign", hit.signature.id


def test_watchdog_timeout_is_a_desync_warning_not_a_fabric_fault() -> None:
    hit = index().match(
        "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, "
        "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600013 "
        "milliseconds before timing out."
    )
    assert hit is not None
    assert hit.signature.severity == "warning"
    assert hit.signature.cause == "application.desync"
    assert hit.groups == {"seq": "5", "op": "ALLREDUCE", "timeout_ms": "600000", "ms": "600013"}
    assert "SeqNum" in hit.signature.next


def test_unrelated_lines_are_not_claimed() -> None:
    for line in (
        "Out of memory: Killed process 1234 (python) total-vm:1000kB",
        "unknown error",
        "operation not supported",
        "Training epoch 3 finished in 600013 milliseconds",
    ):
        assert winner(line) is None, line


@cache
def full_index() -> SignatureIndex:
    return SignatureIndex(all_catalogues())


def test_a_hosts_file_names_only_a_host_on_loopback() -> None:
    """/etc/hosts as Debian writes it: localhost and the ip6 names are not findings, the
    machine's own name on 127.0.1.1 is (the ompi-users 'getent hosts' reply of 2013)."""
    for line in ("127.0.0.1\tlocalhost", "127.0.0.1   localhost.localdomain localhost",
                 "::1     ip6-localhost ip6-loopback", "10.1.255.237 nh64-1-17"):
        assert full_index().match(line) is None, line
    hit = full_index().match("    127.0.1.1    nh64-1-17.local nh64-1-17")
    assert hit is not None and hit.signature.id == "tools.hostname-on-loopback"
    assert (hit.groups["name"], hit.groups["addr"]) == ("nh64-1-17.local", "127.0.1.1")
    assert hit.signature.cause == "config.socket-interface" and hit.signature.multi_node
    ping = full_index().match("PING localhost (127.0.0.1) 56(84) bytes of data.")
    assert ping is None or ping.signature.id != "tools.ping-hostname-on-loopback"


def test_an_undefined_symbol_at_run_time_is_two_versions_mixed() -> None:
    # openucx/ucx issue 7232: ucx_info of a UCX built in /usr loading MLNX_OFED's libucs
    line = (
        "ucx_info: symbol lookup error: ucx_info: undefined symbol: "
        "ucs_topo_sys_device_bdf_name"
    )
    hit = full_index().match(line)
    assert hit is not None and hit.signature.id == "tools.ld-undefined-symbol"
    assert hit.groups["sym"] == "ucs_topo_sys_device_bdf_name"
    assert hit.signature.cause == "config.version-mismatch"


def _class_chars(pattern: str) -> set[str]:
    """One representative character for each class the pattern uses, plus its literals."""
    chars = set(re.sub(r"\\.", "", pattern))
    for token, rep in ((r"\d", "7"), (r"\w", "a"), (r"\s", " "), (r"\S", "x")):
        if token in pattern:
            chars.add(rep)
    return {c for c in chars if c.isprintable()}


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_patterns_are_linear_on_100k_lines(entry: Signature) -> None:
    rx = entry.regex()
    chars = _class_chars(entry.pattern) | set("".join(entry.examples)) | set(string.digits[:2])
    lines = [c * 100_000 for c in sorted(chars)]
    for ex in entry.examples[:2]:
        half = ex[: max(1, len(ex) // 2)]
        lines.append(half * (100_000 // len(half)))
    for line in lines:
        best = min(_timed(rx, line) for _ in range(3))
        if best < 0.05:
            continue
        # slow, but maybe only because the machine is busy: a linear pattern takes about ten
        # times as long on a line ten times longer, a quadratic one about a hundred times
        short = max(min(_timed(rx, line[:10_000]) for _ in range(3)), 0.005)
        assert best < 0.25 and best < 30 * short, (
            f"{entry.id}: {best:.3f} s on {line[:20]!r}... (not linear)"
        )


def _timed(rx: re.Pattern[str], line: str) -> float:
    start = time.perf_counter()
    rx.search(line)
    return time.perf_counter() - start


@pytest.mark.parametrize("case", PASTES, ids=[f"{p.parent.name}/{p.name}" for p in PASTES])
def test_real_pastes(case: Path) -> None:
    meta = yaml.safe_load((case / "meta.yaml").read_text(encoding="utf-8"))
    assert str(meta["source"]).startswith("https://github.com/")
    lines = (case / "input.txt").read_text(encoding="utf-8").splitlines()
    found = {hit.signature.id for _, hit in index().scan(lines)}
    assert meta["expect"], case
    for want in meta["expect"]:
        assert want in found, f"{case.name}: {want} not recognised; found {sorted(found)}"
