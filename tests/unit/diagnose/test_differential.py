"""Differential diagnosis (checks/differentials.yaml, checks/diagnose/differential.py).

Inputs are real captures from the fixtures (each with its ``source:`` in its ``meta.yaml``),
combined the way a user pastes several tools' output into one diagnose run.
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from aifabric.checks.diagnose.differential import (
    PREDICATES,
    SUPPORTS,
    all_differentials,
    differential_by_check,
)
from aifabric.checks.diagnose.differential_evidence import _gid_kind, settings
from aifabric.checks.diagnose.engine import diagnose, load_evidence
from aifabric.checks.diagnose.rules import all_rules
from aifabric.checks.diagnose.signatures import all_causes, signature_by_id
from aifabric.findings import Finding

FIX = Path(__file__).resolve().parents[2] / "fixtures"
RETRY_12 = FIX / "signatures/nccl/ib-retry-exceeded-status-format/input.txt"
LOCAL_PROT = FIX / "signatures/nccl/ib-local-protection-status-4/input.txt"
SYSTEM_ERROR = FIX / "signatures/nccl/unhandled-system-error-2.10/input.txt"
ULIMIT_UNLIMITED = FIX / "evidence/ulimit/tensorflow-11392-unlimited/input.txt"
ULIMIT_64 = FIX / "evidence/ulimit/ucx-issue-8229-bash4-memlock-64/input.txt"
LSMOD_PEERMEM = FIX / "evidence/proc-modules/gpud-pr39-lsmod-grep-peermem/input.txt"
PING_MTU = FIX / "evidence/ping/lab-df-8972-router-port-mtu-1500/input.txt"

VERDICTS = Path(__file__).resolve().parents[3] / "src" / "aifabric" / "checks" / "diagnose"


def _copy(tmp_path: Path, *files: Path) -> list[Path]:
    out = []
    for i, f in enumerate(files):
        dst = tmp_path / f"{i}-{f.parent.name}.txt"
        shutil.copy(f, dst)
        out.append(dst)
    return out


def _covered(findings: list[Finding], family: str) -> Finding:
    hits = [f for f in findings if (d := differential_by_check().get(f.check)) and d.id == family]
    assert hits, [f"{f.severity} {f.check} {f.cause}" for f in findings]
    return hits[0]


# -- the data ---------------------------------------------------------------------------------


def test_every_family_covers_checks_that_exist_and_lists_their_own_cause() -> None:
    sigs = signature_by_id()
    rules = {r.id: r.cause_class for r in all_rules()}
    assert len(all_differentials()) >= 10
    for fam in all_differentials():
        causes = [c.cause for c in fam.candidates]
        assert all(c in all_causes() for c in causes)
        for check in fam.applies_to:
            if check.startswith("signature."):
                assert check[len("signature.") :] in sigs, check
                own = sigs[check[len("signature.") :]][0].cause
            elif check in rules:
                own = rules[check]
            else:  # a record verdict: its id and cause as written in a verdicts_*.py module
                own = _verdict_cause(check)
            assert own in causes, f"{fam.id}: {check} names {own}, not a candidate"


def _verdict_cause(check: str) -> str:
    """The cause a ``Verdict(id=check, ..., cause=...)`` of a verdicts module names."""
    found = []
    for path in sorted(VERDICTS.glob("verdicts_*.py")):
        text = path.read_text(encoding="utf-8")
        pattern = rf'id="{re.escape(check)}",\s*severity="\w+",\s*cause="([\w.-]+)"'
        found += [m.group(1) for m in re.finditer(pattern, text)]
    assert len(set(found)) == 1, f"{check}: no verdict (or several causes) in {VERDICTS}"
    return found[0]


def test_every_predicate_is_used() -> None:
    used = {p for fam in all_differentials() for c in fam.candidates for p in c.ruled_out_by}
    assert used == set(PREDICATES)
    shown = {p for fam in all_differentials() for c in fam.candidates for p in c.supported_by}
    assert shown == set(SUPPORTS)


def test_a_family_that_leads_with_its_own_order_says_why() -> None:
    for fam in all_differentials():
        if fam.lead == "family":
            assert fam.basis and "incidents" in fam.basis, fam.id


# -- ranking ------------------------------------------------------------------------------------


def test_alone_the_message_names_the_most_common_cause_and_lists_the_others(
    tmp_path: Path,
) -> None:
    """rdma-no-ack leads with its own order (a wrong GID is the most common cause of status 12
    in real incidents); the catalogue entry's own cause, loss, comes next."""
    f = _covered(diagnose(load_evidence(_copy(tmp_path, RETRY_12))).findings, "rdma-no-ack")
    assert f.cause == "host.gid"
    assert "most common cause" in f.message
    alts = [(a.cause, a.status) for a in f.alternatives]
    assert alts == [
        ("fabric.packet-loss", "possible"),
        ("fabric.mtu", "possible"),
        ("fabric.link-down", "possible"),
        ("application.peer-exit", "possible"),
    ]
    assert all(a.check for a in f.alternatives)
    assert "rdma-no-ack" in f.explanation and "Order:" in f.explanation


IBSTAT_EDR = FIX / "evidence/ibstat/linpack-19a-edr/input.txt"


def test_infiniband_ports_rule_the_gid_out_and_loss_leads(tmp_path: Path) -> None:
    """ibstat shows InfiniBand ports only: a GID index does not apply, so the retry-exceeded
    completion falls back to the entry's own cause."""
    ev = load_evidence(_copy(tmp_path, RETRY_12, IBSTAT_EDR))
    f = _covered(diagnose(ev).findings, "rdma-no-ack")
    assert f.cause == "fabric.packet-loss"
    gid = [a for a in f.alternatives if a.cause == "host.gid"]
    assert gid[0].status == "ruled out" and "InfiniBand" in (gid[0].because or "")


def test_a_gid_index_of_zero_on_the_mpirun_line_supports_the_gid(tmp_path: Path) -> None:
    case = FIX / "diagnose/diff-gid-index-zero-ucx-2789"
    f = _covered(diagnose(load_evidence([case / "mpirun.txt", case / "ucx.log"])).findings,
                 "rdma-no-ack")  # fmt: skip
    assert f.cause == "host.gid"
    assert "UCX_IB_GID_INDEX=0" in f.message and "mpirun.txt line 1" in f.message
    # the log alone: the same cause by the family's order, not supported
    alone = _covered(diagnose(load_evidence([case / "ucx.log"])).findings, "rdma-no-ack")
    assert alone.cause == "host.gid" and "most common cause" in alone.message


def test_gid_tables_that_differ_between_hosts_support_the_gid() -> None:
    case = FIX / "diagnose/diff-gid-tables-differ-ucx-7785"
    files = [case / "ucx_perftest.txt", case / "gids-mu01.txt", case / "gids-cu01.txt"]
    f = _covered(diagnose(load_evidence(files)).findings, "rdma-no-ack")
    assert f.cause == "host.gid"
    # index 1: fe80:... (the RoCE v2 default GID) on mu01, ::ffff:12.12.12.1 on cu01
    assert "GID index 1 is fe80:" in f.message and "ffff:0c0c:0c01" in f.message


CRAY_OFI = FIX / "signatures/mpich/ofi-ep-enable-cray-e4s-50/input.txt"
UCX_TLS_MPIRUN = FIX / "signatures/ucx/transport-not-available-ucx-pr-4793/input.txt"


def test_a_provider_failure_keeps_the_device_unless_a_transport_was_chosen(
    tmp_path: Path,
) -> None:
    """Cray MPICH could not enable its OFI endpoint: alone that is the device; with an mpirun
    line that chooses the transport by hand (-mca pml ucx -x UCX_TLS=..., a real capture from
    another job, assembled) the setting is supported."""
    alone = _covered(diagnose(load_evidence(_copy(tmp_path, CRAY_OFI))).findings,
                     "provider-init")  # fmt: skip
    assert alone.cause == "host.rdma-device"
    assert {a.cause for a in alone.alternatives} == {"config.nccl-env", "config.version-mismatch"}
    mpirun = tmp_path / "mpirun.txt"  # the command line of the capture, without its output
    mpirun.write_text(UCX_TLS_MPIRUN.read_text(encoding="utf-8").splitlines()[0] + "\n")
    beside = _covered(
        diagnose(load_evidence([*_copy(tmp_path, CRAY_OFI), mpirun])).findings, "provider-init"
    )
    assert beside.cause == "config.nccl-env"
    assert "chooses the transport by hand" in beside.message


def test_settings_come_from_commands_not_from_program_hints(tmp_path: Path) -> None:
    """``mpirun -x``/``--mca`` words and prompt lines are settings; libfabric's hint ``To use
    tcp, please, set FI_PROVIDER=tcp`` (real line, firemodels/fds issue 7868) is not."""
    path = tmp_path / "run.txt"
    path.write_text(
        "libfabric:core:core:fi_getinfo_():980<info> Since psm2 can be used, tcp has been "
        "skipped. To use tcp, please, set FI_PROVIDER=tcp\n"
        "kl-18448:tests szampini$ MPIR_CVAR_OFI_USE_PROVIDER=sockets ./ex1\n"
        "$mpirun -n 2 -mca pml ucx  -x UCX_TLS=sm,ib,rc  ./osu_latency\n",
        encoding="utf-8",
    )
    got = [(s.name, s.value) for s in settings(load_evidence([path]))]
    assert ("FI_PROVIDER", "tcp") not in got
    assert ("MPIR_CVAR_OFI_USE_PROVIDER", "sockets") in got
    assert ("UCX_TLS", "sm,ib,rc") in got and ("pml", "ucx") in got


def test_alone_a_system_error_names_the_shared_memory_first(tmp_path: Path) -> None:
    f = _covered(diagnose(load_evidence(_copy(tmp_path, SYSTEM_ERROR))).findings,
                 "nccl-system-error")  # fmt: skip
    assert f.cause == "host.shm" and "most common cause" in f.message
    assert [a.cause for a in f.alternatives][-1] == "host.resources"


def test_an_mtu_black_hole_in_the_same_input_makes_mtu_the_cause(tmp_path: Path) -> None:
    """ping -M do at 8972 bytes fails through a 1500-byte hop (a real lab capture): the
    retry-exceeded completion beside it is then most likely the MTU, not loss."""
    ev = load_evidence(_copy(tmp_path, RETRY_12, PING_MTU))
    findings = diagnose(ev).findings
    assert any(f.cause == "fabric.mtu" and f.check == "diagnose.path-mtu-blackhole"
               for f in findings)  # fmt: skip
    f = _covered(findings, "rdma-no-ack")
    assert f.cause == "fabric.mtu"
    assert "most likely" in f.message and "path-mtu-blackhole" in f.message
    assert [(a.cause, a.status) for a in f.alternatives[:2]] == [
        ("host.gid", "possible"), ("fabric.packet-loss", "possible")]  # fmt: skip


def test_unlimited_memlock_rules_memlock_out_of_a_system_error(tmp_path: Path) -> None:
    ev = load_evidence(_copy(tmp_path, SYSTEM_ERROR, ULIMIT_UNLIMITED))
    f = _covered(diagnose(ev).findings, "nccl-system-error")
    by_cause = {a.cause: a for a in f.alternatives}
    assert by_cause["host.memlock"].status == "ruled out"
    assert "unlimited" in (by_cause["host.memlock"].because or "")
    assert f.alternatives[-1].cause == "host.memlock"  # ruled out ranks last


def test_a_64_kb_memlock_limit_supports_memlock(tmp_path: Path) -> None:
    """The memlock verdict names host.memlock from ``ulimit -a`` showing 64 KB; the system
    error beside it then names memlock too, not a generic resource problem."""
    ev = load_evidence(_copy(tmp_path, SYSTEM_ERROR, ULIMIT_64))
    findings = diagnose(ev).findings
    assert any(f.cause == "host.memlock" and f.check not in differential_by_check()
               for f in findings)  # fmt: skip
    f = _covered(findings, "nccl-system-error")
    assert f.cause == "host.memlock"


def test_peermem_loaded_points_a_local_protection_error_at_pcie(tmp_path: Path) -> None:
    """nvidia_peermem is loaded (lsmod), so GPU memory registration is available: the local
    protection error is then the PCIe path (ACS/IOMMU), the family's other candidate."""
    ev = load_evidence(_copy(tmp_path, LOCAL_PROT, LSMOD_PEERMEM))
    f = _covered(diagnose(ev).findings, "rdma-local-protection")
    assert f.cause == "host.pcie"
    gdr = [a for a in f.alternatives if a.cause == "host.gdr"]
    assert gdr and gdr[0].status == "ruled out"
    assert "nvidia_peermem" in (gdr[0].because or "")


def test_findings_outside_any_family_have_no_alternatives(tmp_path: Path) -> None:
    ev = load_evidence(_copy(tmp_path, PING_MTU))
    findings = diagnose(ev).findings
    assert findings
    assert all(not f.alternatives for f in findings if f.check not in differential_by_check())


def test_nccl_log_lines_in_an_nccl_tests_run_are_scanned_once(tmp_path: Path) -> None:
    """The NCCL log lines of an nccl-tests run are also read as a companion nccl-log part; a WARN
    among them is still one catalogue hit on one line, not two."""
    text = (
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 "
        "agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n"
        "#  Rank  0 Group  0 Pid  1 on node1 device  0 [0x1b] NVIDIA H100\n"
        "node1:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
        "node1:1:1 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal "
        "implementation\n"
        "node1:1:1 [0] NCCL INFO NET/IB : No device found.\n"
        "node1:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
    )
    path = tmp_path / "run.txt"
    path.write_text(text, encoding="utf-8")
    ev = load_evidence([path])
    assert sorted(f.kind for f in ev.files) == ["nccl-log", "nccl-tests"]
    hits = [i for i in ev.items if type(i.record).__name__ == "SignatureRecord"]
    assert hits and len({i.record.line for i in hits}) == len(hits)
    findings = diagnose(ev).findings
    assert all("(2 lines)" not in f.message for f in findings)


def test_refused_at_loopback_beside_a_gloo_fallback_names_the_socket_interface() -> None:
    # vLLM/Gloo across pods: the hostname did not resolve, Gloo fell back to 127.0.0.1 and the
    # remote rank was refused; the refusal alone reads as a firewall, the warning beside it
    # supports the socket-interface candidate of the socket-connect family
    case = FIX / "diagnose/gloo-loopback-fallback-refused/vllm.log"
    findings = diagnose(load_evidence([case])).findings
    refused = _covered(findings, "socket-connect")
    assert refused.check == "signature.errno.econnrefused"
    assert refused.cause == "config.socket-interface"


def _alone_and_beside(
    tmp_path: Path, line: str, family: str, capture: Path
) -> tuple[Finding, Finding]:
    """The family's finding for ``line`` alone, then with a real ``capture`` in the input."""
    alone = tmp_path / "dmesg.txt"
    alone.write_text(line)
    first = _covered(diagnose(load_evidence([alone])).findings, family)
    paths = [alone, *_copy(tmp_path, capture)]
    return first, _covered(diagnose(load_evidence(paths)).findings, family)


NVMET_BIND = "nvmet_rdma: binding CM ID to 10.10.1.5:4420 failed (-19)\n"
"""The Linux NVMe-oF target's message (drivers/nvme/target/rdma.c) as printed."""
RDMA_LINK_ACTIVE = FIX / "evidence/rdma-link/daocloud-docs-cx5-active/input.txt"


def test_an_rdma_cm_bind_failure_is_the_address_or_no_device(tmp_path: Path) -> None:
    alone, beside = _alone_and_beside(tmp_path, NVMET_BIND, "rdma-cm-address", RDMA_LINK_ACTIVE)
    assert alone.cause == "host.gid"
    assert [(a.cause, a.status) for a in alone.alternatives] == [("host.rdma-device", "possible")]
    # with `rdma link` showing an RDMA device, "no device at all" is ruled out
    assert [(a.cause, a.status) for a in beside.alternatives] == [("host.rdma-device", "ruled out")]


RM_INIT = "[   21.091872] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:894)\n"
"""The NVIDIA driver's message (kernel-open/nvidia/nv.c) as printed."""
BAR_UNASSIGNED = FIX / "evidence/dmesg-mlx5/mstflint-448-cx4lx-vf-bar-unassigned/input.txt"


def test_a_gpu_that_failed_to_initialise_beside_an_unassigned_bar_is_pcie(tmp_path: Path) -> None:
    alone, beside = _alone_and_beside(tmp_path, RM_INIT, "gpu-init-failed", BAR_UNASSIGNED)
    assert alone.cause == "host.driver"
    assert {a.cause for a in alone.alternatives} == {"host.pcie", "config.version-mismatch"}
    # a BAR the PCI core could not assign, in the same input, supports host.pcie
    assert beside.cause == "host.pcie"


# -- GID kinds (property) ---------------------------------------------------------------------

def _groups(value: int) -> str:
    """A 128-bit value in the full 8-group form ``ibv_devinfo -v`` and ``show_gids`` print."""
    return ":".join(f"{(value >> (112 - 16 * i)) & 0xFFFF:04x}" for i in range(8))


@given(st.integers(0, 2**32 - 1))
def test_an_ipv4_mapped_gid_is_ipv4(v4: int) -> None:
    assert _gid_kind(_groups((0xFFFF << 32) | v4)) == "ipv4"


@given(st.integers(0, 2**64 - 1))
def test_an_fe80_gid_is_link_local(iid: int) -> None:
    assert _gid_kind(_groups((0xFE80 << 112) | iid)) == "link-local"


def test_reading_settings_is_linear_on_a_long_line(tmp_path: Path) -> None:
    """A 100 KB log line echoing 12,000 assignments: each is judged on the words just before
    it, not on the whole line before it (which was quadratic: 40 s)."""
    path = tmp_path / "init.log"
    path.write_text("init: " + "NCCL_X=1 " * 12_000 + "\n", encoding="utf-8")
    ev = load_evidence([path])
    start = time.perf_counter()
    found = settings(ev)
    assert time.perf_counter() - start < 2.0
    assert len(found) == 12_000 and found[0].name == "NCCL_X"


def _connect_failure(tmp_path: Path, peer: str) -> Finding:
    """c10d's connect failure as socket.cpp formats it (pytorch/pytorch
    torch/csrc/distributed/c10d/socket.cpp, "failed to connect to {}:{} (errno: {} - {})")."""
    path = tmp_path / "rank1.log"
    path.write_text(
        "RuntimeError: The client socket has failed to connect to any network address of "
        f"({peer}, 29500). The client socket has failed to connect to {peer}:29500 "
        "(errno: 110 - Connection timed out).\n",
        encoding="utf-8",
    )
    return _covered(diagnose(load_evidence([path])).findings, "socket-connect")


def test_a_connect_failure_to_a_host_name_supports_the_socket_interface(tmp_path: Path) -> None:
    """A name resolves on the connecting host (127.0.1.1 in /etc/hosts, an admin network): the
    address tried may be the wrong one, so the interface/address candidate leads."""
    f = _connect_failure(tmp_path, "hcp-bb-03")
    assert f.cause == "config.socket-interface" and "host name 'hcp-bb-03'" in f.message
    assert "config.firewall" in [a.cause for a in f.alternatives]


def test_a_connect_failure_to_an_address_keeps_the_firewall_first(tmp_path: Path) -> None:
    for peer in ("10.1.2.3", "localhost"):
        f = _connect_failure(tmp_path, peer)
        assert f.cause != "config.socket-interface" or "host name" not in f.message, peer
        assert all("host name" not in (a.because or "") for a in f.alternatives), peer


def test_a_name_that_does_not_resolve_is_the_socket_interface(tmp_path: Path) -> None:
    """getaddrinfo's EAI_NONAME string (glibc gai_strerror) after any program's own words."""
    path = tmp_path / "rank1.log"
    path.write_text("Error: Rank -1 received an Exception. Detailed message: host not found: "
                    "Name or service not known\n", encoding="utf-8")  # fmt: skip
    found = diagnose(load_evidence([path])).findings
    assert any(f.check == "signature.errno.gai-noname" and f.cause == "config.socket-interface"
               and f.severity == "error" for f in found)  # fmt: skip


def test_an_efa_handshake_that_never_completed_is_the_security_group_first(
    tmp_path: Path,
) -> None:
    """Status 4126 (libfabric prov/efa/src/efa_errno.h: unestablished, reachable by the device)
    leads with the self-referencing security-group rule; the message's opening words follow the
    new cause's layer (configuration), not the catalogue's (application)."""
    path = tmp_path / "rank0.log"
    path.write_text(
        "NCCL WARN NET/OFI Request 0x7f1c4c0d2e80 completed with error. RC: 103. Flags: 2050. "
        "Error: 4126 (Unresponsive receiver (reachable by EFA device but handshake failed)). "
        "Completed length: 0\n", encoding="utf-8")  # fmt: skip
    f = _covered(diagnose(load_evidence([path])).findings, "efa-handshake")
    assert f.cause == "config.firewall" and f.message.startswith("Configuration: ")
    assert [a.cause for a in f.alternatives] == ["application.peer-exit", "host.rdma-device"]


def test_enomem_from_a_memory_registration_supports_the_memlock_limit(tmp_path: Path) -> None:
    """A library's own ENOMEM report of ibv_reg_mr (errno 12 on the next line, as Rust's
    io::Error prints it): pinning pages past RLIMIT_MEMLOCK is what fails, not host memory."""
    path = tmp_path / "app.log"
    path.write_text(
        "ERROR rdma::memory_region: ibv_reg_mr err, arguments:\n"
        ', err info:Os { code: 12, kind: OutOfMemory, message: "Cannot allocate memory" }\n',
        encoding="utf-8",
    )
    f = _covered(diagnose(load_evidence([path])).findings, "rdma-enomem")
    assert f.cause == "host.memlock"
    assert "host.resources" in [a.cause for a in f.alternatives]


def test_enomem_without_a_registration_stays_a_host_resource(tmp_path: Path) -> None:
    path = tmp_path / "app.log"
    path.write_text("fork: Cannot allocate memory\n", encoding="utf-8")
    f = _covered(diagnose(load_evidence([path])).findings, "rdma-enomem")
    assert f.cause == "host.resources"


WATCHDOG_SEQ1 = (
    "[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=1, OpType=ALLGATHER, NumelIn=1, NumelOut=3, Timeout(ms)=1800000) ran for "
    "1800005 milliseconds before timing out.\n"
)
"""PyTorch's watchdog line (ProcessGroupNCCL.cpp) for a process group's first operation."""


def test_a_first_collective_that_never_completed_on_one_node_is_pcie(tmp_path: Path) -> None:
    path = tmp_path / "rank1.log"
    path.write_text(WATCHDOG_SEQ1, encoding="utf-8")
    f = _covered(diagnose(load_evidence([path])).findings, "collective-timeout")
    assert f.cause == "host.pcie" and "SeqNum=1" in f.message
    assert f.alternatives[0].cause == "application.desync"


def test_a_first_collective_timeout_across_nodes_keeps_the_desync_first(tmp_path: Path) -> None:
    path = tmp_path / "rank1.log"
    path.write_text(
        "node1:11:11 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0\n"
        + WATCHDOG_SEQ1, encoding="utf-8")  # fmt: skip
    f = _covered(diagnose(load_evidence([path])).findings, "collective-timeout")
    assert f.cause == "application.desync"
    path.write_text(WATCHDOG_SEQ1.replace("SeqNum=1,", "SeqNum=18,"), encoding="utf-8")
    f = _covered(diagnose(load_evidence([path])).findings, "collective-timeout")
    assert f.cause == "application.desync"


def test_the_watchdog_message_cut_after_its_first_words_is_still_the_watchdog(
    tmp_path: Path,
) -> None:
    path = tmp_path / "rank1.log"
    path.write_text("Watchdog caught collective operation timeout:\n"
                    "WorkNCCL(SeqNum=1, OpType=ALLREDUCE)\n", encoding="utf-8")  # fmt: skip
    f = _covered(diagnose(load_evidence([path])).findings, "collective-timeout")
    assert f.check == "signature.pytorch.nccl-watchdog-timeout-cut"
    assert f.cause == "host.pcie"


LSMOD_GREP_NV = (
    "$ lsmod | grep nv\n"
    "nvidia_uvm           1376256  0\n"
    "nvidia_drm             69632  0\n"
    "nvidia_modeset       1245184  1 nvidia_drm\n"
    "nvidia              56467456  106 nvidia_uvm,nvidia_modeset\n"
)


def test_nvidia_without_a_peer_memory_module_supports_gdr(tmp_path: Path) -> None:
    """`lsmod | grep nv` keeps nvidia and would keep nvidia_peermem: its absence beside a local
    protection error supports GPUDirect RDMA being unavailable, ahead of the PCIe path."""
    lsmod = tmp_path / "lsmod.txt"
    lsmod.write_text(LSMOD_GREP_NV, encoding="utf-8")
    ev = load_evidence([*_copy(tmp_path, LOCAL_PROT), lsmod])
    f = _covered(diagnose(ev).findings, "rdma-local-protection")
    assert f.cause == "host.gdr"
    assert "backs this cause: supported by the module listing shows nvidia but neither" in (
        f.explanation or ""
    )


def test_a_listing_with_the_peer_memory_module_does_not_support_gdr(tmp_path: Path) -> None:
    lsmod = tmp_path / "lsmod.txt"
    lsmod.write_text(
        LSMOD_GREP_NV + "nvidia_peermem         16384  0\n", encoding="utf-8"
    )
    ev = load_evidence([*_copy(tmp_path, LOCAL_PROT), lsmod])
    f = _covered(diagnose(ev).findings, "rdma-local-protection")
    assert f.cause == "host.pcie"
