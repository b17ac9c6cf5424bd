"""Messages whose layout the paste changed: a line wrapped by a mail client or web archive
(:func:`aifabric.checks.diagnose.engine._join_wrapped`) and several messages flattened into one
line (:meth:`aifabric.checks.diagnose.signatures.SignatureIndex.match_all`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from aifabric.checks.diagnose.engine import (
    _ERRORISH,
    _scan_line,
    diagnose,
    errno_spelled,
    load_evidence,
)
from aifabric.checks.diagnose.signatures import signature_index

STORE_TIMEOUT = (
    "[E socket.cpp:922] [c10d] The client socket has timed out after 1800s while trying to "
    "connect to (10.0.1.75, 44737)."
)
"""PyTorch's TCPStore client (torch/csrc/distributed/c10d/socket.cpp), as printed."""

CONNECT_ABORT = (
    "NCCL WARN socketStartConnect: Connect to 10.0.0.2<45763> failed : Software caused "
    "connection abort"
)
SYSTEM_ERROR = (
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
    "ProcessGroupNCCL.cpp:1331, unhandled system error (run with NCCL_DEBUG=INFO for details), "
    "NCCL version 2.18.5 ncclSystemError: System call (e.g. socket, malloc) or external library "
    "call failed or device error. Last error: "
)


def _ids(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "log.txt"
    path.write_text(text)
    ev = load_evidence([path])
    return [getattr(i.record, "id", "") for i in ev.items if i.record.record_type == "signature"]


def _unrecognised(tmp_path: Path, text: str) -> int:
    path = tmp_path / "log.txt"
    path.write_text(text)
    found = diagnose(load_evidence([path])).findings
    return sum(f.check == "diagnose.unrecognised-line" for f in found)


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=45, max_value=len(STORE_TIMEOUT) - 2))
def test_a_message_wrapped_anywhere_is_read(tmp_path_factory: object, cut: int) -> None:
    """Wherever the archive broke the line (inside a word or at a space), the message is the
    same entry, and neither half is left over as an unrecognised line: whenever one half still
    looks like an error (two halves that look like nothing are not searched)."""
    head, tail = STORE_TIMEOUT[:cut], STORE_TIMEOUT[cut:]
    assume(_ERRORISH.search(head) or _ERRORISH.search(tail))
    tmp = tmp_path_factory.mktemp("w")  # type: ignore[attr-defined]
    whole = signature_index().match(STORE_TIMEOUT)
    assert whole is not None
    text = head + "\n" + tail.lstrip() + "\n"
    assert whole.signature.id in _ids(tmp, text)
    assert _unrecognised(tmp, text) == 0


def test_two_lines_that_are_two_messages_stay_two(tmp_path: Path) -> None:
    text = CONNECT_ABORT + "\n" + STORE_TIMEOUT + "\n"
    ids = _ids(tmp_path, text)
    assert ids == ["nccl.connect-failed", "pytorch.store-client-timeout"]


def test_a_short_line_is_not_taken_for_half_a_message(tmp_path: Path) -> None:
    # "Error:" alone is error-looking but far too short to be the head of a wrapped message
    assert _ids(tmp_path, "Error:\nsomething else entirely\n") == []


def test_several_messages_flattened_into_one_line(tmp_path: Path) -> None:
    ids = _ids(tmp_path, SYSTEM_ERROR + "10: " + CONNECT_ABORT + "\n")
    assert "nccl.connect-failed" in ids
    assert "nccl.result-system-error" in ids


def test_a_normal_line_gives_one_entry() -> None:
    hits = signature_index().match_all(CONNECT_ABORT)
    assert [h.signature.id for h in hits] == ["nccl.connect-failed"]


FIX = Path(__file__).resolve().parents[2] / "fixtures"
LOST_DAEMON = FIX / "signatures/prrte/lost-daemon-exit-improperly-prrte-2694/input.txt"
"""A real PRRTE paste (its meta.yaml names the thread): two help messages between rules of 74
dashes, the lines of each wrapped at about 75 columns."""


def test_the_rest_of_a_recognised_help_message_is_not_unrecognised(tmp_path: Path) -> None:
    assert _unrecognised(tmp_path, LOST_DAEMON.read_text()) == 0


def test_an_unknown_help_message_is_one_finding_not_one_per_line(tmp_path: Path) -> None:
    rule = "-" * 74
    block = "\n".join([
        rule,
        "Some component failed to start because an unknown error occurred while",
        "it tried to open the device; the operation failed with an error that",
        "was not expected.  Check the configuration and try again.",
        rule,
    ])  # fmt: skip
    assert _unrecognised(tmp_path, block + "\n") == 1
    # the same lines without the rules: each error-looking line is its own message
    assert _unrecognised(tmp_path, "\n".join(block.splitlines()[1:-1]) + "\n") == 2


def test_rules_of_other_lengths_make_no_help_block(tmp_path: Path) -> None:
    # perftest's 87-dash section rules: a recognised line says nothing about the others
    rule = "-" * 87
    body = " Requested mtu is higher than active mtu\nsomething failed badly here"
    text = f"{rule}\n{body}\n{rule}\n"
    assert _unrecognised(tmp_path, text) >= 1


def test_an_errno_printed_as_a_number_reads_as_its_words(tmp_path: Path) -> None:
    # glibc's strerror() names (errno.h values of the Linux ABI): 12 ENOMEM, 5 EIO, 19 ENODEV
    assert errno_spelled("ibv_reg_mr failed errno=12") == (
        "ibv_reg_mr failed errno=12 (Cannot allocate memory)"
    )
    assert errno_spelled("Failed to configure RSS hash for VSI 8, error -5").endswith(
        "(Input/output error)"
    )
    assert errno_spelled("probe failed: -19").endswith("(No such device)")
    assert errno_spelled("NCCL WARN status 12 at line 5") is None  # no minus: not an errno
    assert errno_spelled("errno 9999") is None
    # a memory registration that failed with errno 12 is the locked-memory entry, as the same
    # line with strerror's words would be
    assert _ids(tmp_path, "mr_alloc: ibv_reg_mr failed errno=12 addr 0x7f00 len 1048576\n") == [
        "errno.enomem-memory-registration"
    ]


def test_an_errno_number_reads_past_a_catch_all_wrapper() -> None:
    # Mercury 2.4's one-line error header is a catch-all (it names no reason); the errno number
    # at the end is one, so the line is read with its strerror words too (na_ofi.c prints the
    # fi_* return code as a negative errno).
    line = (
        "# [1700000000.123456] mercury->na [error] /build/mercury-2.4.1/src/na/na_ofi.c:3000 "
        "na_ofi_mem_register() fi_mr_reg() failed, rc: -28"
    )
    only = signature_index().match(line)
    assert only is not None and only.signature.catch_all
    hits, errorish = _scan_line(line, signature_index())
    assert not errorish
    assert not hits[0].signature.catch_all
    assert hits[-1].signature.id == only.signature.id  # the wrapper's context is kept


@given(st.text(max_size=300))
def test_errno_spelling_only_appends(line: str) -> None:
    got = errno_spelled(line)
    assert got is None or (got.startswith(line) and got.endswith(")"))


# Lines users pasted (benchmarks/lines dev1-dev7) that the error words missed: each is an error
# or a failed state, so a paste holding only it must not be called clean.
@pytest.mark.parametrize(
    "line",
    [
        "Couldn't get device attribute.",  # perftest
        "src/query_smp.c:227; can't open UMAD port ((null):0)",  # infiniband-diags
        "ABORT  : Retval = 255",  # Singularity
        "[NID 00865] 2017-07-11 22:36:25 Apid 1351768: OOM killer terminated this process.",
        "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x1092953]",  # Go runtime
        "NVRM: API mismatch: the client has the version",
        "    MST PCI module is not loaded",  # mst status
        "ORTE_ERROR_LOG: Data unpack had inadequate space",
        "GASNET: gasnet_attach(handlers, hcount, attach_size, 0) = 10003 (GASNET_ERR_BAD_ARG, "
        "Invalid function parameter passed)",
        "peer access from 0x7f76d46da2c0 to 0x7f76b4713830: CUDA_ERROR_TOO_MANY_PEERS: peer "
        "mapping resources exhausted",
        "    health: HEALTH_WARN",  # ceph -s
        "/.singularity.d/actions/exec: line 9: exec: nvidia-smi: not found",
        " 736: Thu Jul 16 12:27:22 2020: [PE_736]:_pmi_init:_pmi_inet_setup (full) returned -1",
        "link         :  Link Down",  # TRex port status
        "IB_WR_LOCAL_INV: WR flushed",
        "[   62.263219] igc 0000:01:00.0 eth0: Reset adapter",
        "mpiexec: unrecognized option '--cpus-per-task=1'",  # Cray PALS
        "bad lid value. Usage: route from-lid to-lid",  # ibsim
        "(rank:0 hostname:chi28 pid:27971):ARMCI DASSERT fail. ../../ga-5-1/armci/src/common/"
        "armci.c:ARMCI_Error():208 cond:0",
        "node23: [node23:139372] Mon Jan 26 08:29:22 2015: ORCM daemon [[0,0],24] shutting down "
        "with status 1 (SYS)",
        "[   87.412596] BUG: Bad rss-counter state mm:(____ptrval____) idx:0 val:-1",
        "panic: At least one device with migEnabled=true was not configured correctly",
        "ospfd[16124]: [EC 134217740] Packet[DD]: Neighbor 10.160.21.1 Negotiation fails.",
        "A100-02:2358430:2358556 [1] NCCL INFO socketProgressOpt: abort called",
        "Jun 04 13:52:36 tuolumne2150 flux[371635]: heartbeat.warning[1150]: heartbeat overdue",
        "Jun 04 14:00:56 tuolumne2150 flux[371635]: overlay.crit[1150]: disconnecting: no "
        "heartbeat for 5.1m",
        "            Degraded data redundancy: 41904/200910 objects degraded (20.857%), 16 pgs "
        "degraded, 16 pgs undersized",  # ceph -s
        "ucp_request.c:524  UCX  DEBUG message truncated: recv_length 8230 offset 0 buffer_size "
        "4480",
        "flux-broker: PMI_Init: PMI not initialized",
        "[0000]        No path to peer",  # Sandia OpenSHMEM
        "May 25 23:44:23.684863 cmp227-5 INFO swss#supervisord: nbrmgrd RTNETLINK answers: File "
        "exists",
        "ray.exceptions.RayTaskError(DistBackendError): ray::_Inner.train() (pid=249, "
        "ip=10.0.0.78)",
        "cudaSetDevice err: 802",
        "May 26 18:09:57 fedora kernel: amdgpu 0000:03:00.0: amdgpu: IP block:gfx_v11_0 is hung!",
        "amdgpu 0000:03:00.0: [drm] device wedged, but recovered through reset",
        "systemd[1]: Cumulus Linux System Monitoring Daemon is not active.",
        "NOTICE pmon#xcvrd: Ethernet504: temperature status change from temperature high warning "
        "to temperature high alarm",
        "systemd-networkd[41000]: NDISC: No RA received before link confirmation timeout",
        'openat(AT_FDCWD, "/dev/kfd", O_RDWR|O_CLOEXEC) = -1 ENOMEM (Cannot allocate memory)',
    ],
)
def test_error_words_beyond_error_and_failed(line: str) -> None:
    assert _ERRORISH.search(line) is not None


@pytest.mark.parametrize(
    "line",
    [
        "UCX_ERROR_SIGNALS=ILL,SEGV,BUS,FPE",  # a variable being set (ucx_info -c)
        "#  Out of bounds values : 0 OK",
        "mlx5_core 0000:3b:00.0: firmware version: 28.39.1002",
        "nvidia_peermem         16384  0",  # lsmod: a module that is loaded
        "    health: HEALTH_OK",
        "MPI startup(): Rank    Pid      Node name  Pin cpu",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong",
        "    exit 1",  # a script pasted with the output
        "flux-job: task(s) exited with exit code 0",
        "kernel.panic_on_oops = 1",
        "cudaSetDevice err: 0",
        "     [hw] rx discarded frames: 0",
        "Tx bias high warning flag on lane 7: False",  # SONiC transceiver status (CMIS)
        "\tLaser rx power low warning threshold      : 0.0933 mW / -10.30 dBm",  # ethtool -m
        "\tAlarm/warning flags implemented           : Yes",
        "\tModule voltage high alarm threshold       : 3.5000 V",  # ethtool -m
        "\tLaser bias current high alarm             : Off",  # ethtool -m flag
        "+priority-flow-control pause watchdog default timeout 0.05",  # a switch's config
        "dist.init_process_group(backend='nccl',timeout=timedelta(seconds=18000))",
        "[    1.685264] nvme nvme0: Shutdown timeout set to 10 seconds",
    ],
)
def test_benign_lines_stay_quiet(line: str) -> None:
    assert _ERRORISH.search(line) is None


def _checks(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "log.txt"
    path.write_text(text)
    return [f.check for f in diagnose(load_evidence([path])).findings]


def test_every_message_of_a_flattened_line_is_a_finding(tmp_path: Path) -> None:
    # a catalogue finding on a line does not hide another entry's finding on the same line
    checks = _checks(tmp_path, SYSTEM_ERROR + "10: " + CONNECT_ABORT + "\n")
    assert "signature.nccl.connect-failed" in checks
    assert "signature.nccl.result-system-error" in checks


SANDBOX_CILIUM = (
    "Warning  FailedCreatePodSandBox  2m  kubelet  Failed to create pod sandbox: rpc error: "
    'code = Unknown desc = failed to setup network for sandbox "4f1b8e2a3c": plugin '
    'type="cilium-cni" failed (add): unable to connect to Cilium agent: failed to create '
    "cilium agent client after 30.000000 seconds timeout: dial unix "
    "/var/run/cilium/cilium.sock: connect: no such file or directory"
)
"""kubelet's event (kuberuntime_manager.go) wrapping containerd's, libcni's and cilium-cni's
messages (plugins/cilium-cni/cmd/cmd.go), flattened into one line as `kubectl describe` prints
it."""


def test_a_catch_all_wrapper_gives_way_to_the_message_it_wraps(tmp_path: Path) -> None:
    checks = _checks(tmp_path, SANDBOX_CILIUM + "\n")
    assert "signature.k8s-cni.cilium-agent-unreachable" in checks
    # the kubelet wrapper (catch_all) names no reason: the entries reading the line replace it
    assert "signature.k8s-rdma.kubelet-sandbox-create-failed" not in checks
    # alone, the wrapper is still reported
    alone = "Warning  FailedCreatePodSandBox  2m  kubelet  Failed to create pod sandbox: rpc error"
    assert "signature.k8s-rdma.kubelet-sandbox-create-failed" in _checks(tmp_path, alone + "\n")
