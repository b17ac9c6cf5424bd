"""The aws-ofi-nccl and k8s-rdma catalogues: which entry wins a line, benign lines, and speed.

Lines are the message texts the catalogues quote (from aws/aws-ofi-nccl, ofiwg/libfabric,
the Kubernetes device plugins, Multus and whereabouts at the tags their entries cite).
"""

from __future__ import annotations

import time

import pytest

from aifabric.checks.diagnose.signatures import Signature, all_catalogues, signature_index

PROGRAMS = ("aws-ofi-nccl", "k8s-rdma")
ENTRIES = [e for c in all_catalogues() if c.program in PROGRAMS for e in c.entries]

WINNERS = [
    # the EFA status text names the cause, not the generic completion-error entry
    (
        "NCCL WARN NET/OFI Request 0x7f1c4c0d2e80 completed with error. RC: 107. Error: 9 "
        "(Invalid receiver queue pair number (QPN)). Completed length: 0, Request: "
        "{ dev: 1, size: 0, state: CREATED, type: SEND }",
        "aws-ofi-nccl.efa-bad-qpn",
    ),
    (
        "NCCL WARN NET/OFI Request 0x7f1c4c0d2e80 ({ dev: 0, size: 0, state: PENDING, "
        "type: SEND }) completed with error: err: 113, flags: 2050, prov_errno: 15, "
        "strerror: Unreachable remote - never received a response, len: 0",
        "aws-ofi-nccl.efa-unreachable-remote",
    ),
    (
        "NCCL WARN NET/OFI Request completed with error. RC: 21. Error: unknown error",
        "aws-ofi-nccl.completion-error",
    ),
    # a plugin WARN is the plugin's, not NCCL's catch-all
    (
        "get_req_from_imm_data:1411 NCCL WARN NET/OFI Unexpected status (0) for message 246",
        "aws-ofi-nccl.warn",
    ),
    (
        "register_mr_buffers:544 NCCL WARN NET/OFI Unable to register memory (type = 2) for "
        "device 0. RC: -22, Error: Invalid argument",
        "aws-ofi-nccl.register-cuda-einval",
    ),
    (
        "NCCL INFO NET/OFI Selected provider is tcp, fabric is 172.31.64.0/20 (found 1 nics)",
        "aws-ofi-nccl.selected-provider-tcp",
    ),
    # scheduler: the GPU and RDMA resources beat the generic extended-resource entry
    (
        "0/6 nodes are available: 3 node(s) didn't match node selector, "
        "6 Insufficient nvidia.com/gpu.",
        "k8s-rdma.insufficient-gpu",
    ),
    (
        "0/4 nodes are available: 4 Insufficient rdma/hca_shared_devices_a.",
        "k8s-rdma.insufficient-rdma",
    ),
    (
        "0/3 nodes are available: 3 Insufficient intel.com/mlnx_sriov_rdma.",
        "k8s-rdma.insufficient-extended-resource",
    ),
    # Multus: the delegate's own reason beats the generic "error adding container"
    (
        '[default/p:storage]: error adding container to network "storage": failed to find '
        'plugin "macvlan" in path [/opt/cni/bin /opt/cni/bin]',
        "k8s-rdma.cni-plugin-not-found",
    ),
    (
        'error adding container to network "s": error at storage engine: Could not allocate IP '
        "in range: ip: 10.0.0.1 / - 10.0.0.6 / range: 10.0.0.0/29 / excludeRanges: []",
        "k8s-rdma.whereabouts-pool-exhausted",
    ),
    (
        'error creating new device: "missing RDMA device spec for device 0000:3b:00.0, '
        'RDMA device \\"issm\\" not found"',
        "k8s-rdma.shared-dp-missing-rdma-spec",
    ),
]


@pytest.mark.parametrize(("line", "want"), WINNERS, ids=[w for _, w in WINNERS])
def test_most_specific_entry_wins(line: str, want: str) -> None:
    hit = signature_index().match(line)
    assert hit is not None
    assert hit.signature.id == want


BENIGN = [
    "libfabric:21:1722447956::core:core:cuda_gdrcopy_hmem_init():192<warn> "
    "gdrcopy_dl_hmem_init failed!",
    "libfabric:18058:1733290059::efa:ep_ctrl:efa_rdm_ep_set_shared_memory_permitted():1410<warn> "
    "FI_OPT_SHARED_MEMORY_PERMITTED set to false",
    "8h200-3:6310:6318 [0] NCCL INFO NET/OFI Selected Provider is efa (found 16 nics)",
    'algo-1:18057:18130 [0] NCCL INFO NET/OFI Setting NCCL_PROTO to "simple"',
    "W0506 17:02:11.128001       1 server.go:340] server endpoint not found /var/lib/kubelet/"
    "device-plugins/intel.com_mlnx_sriov_rdma.sock",
]


@pytest.mark.parametrize("line", BENIGN)
def test_benign_lines_are_benign(line: str) -> None:
    hit = signature_index().match(line)
    assert hit is not None
    assert hit.signature.severity == "benign"


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_pattern_fast_on_100k_lines(entry: Signature) -> None:
    rx = entry.regex()
    chars = sorted(set("".join(entry.examples)))
    lines = [c * 100_000 for c in chars]
    for ex in entry.examples:
        lines.append((ex + " ") * (100_000 // (len(ex) + 1)))
    for line in lines:
        # best of three, against a bound far above a linear scan (a few ms) and far below what
        # backtracking costs on 100k characters (seconds): a loaded CI machine does not flake it
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            rx.search(line)
            best = min(best, time.perf_counter() - start)
        assert best < 0.25, f"{entry.id}: slow on {line[:20]!r}..."


def test_catalogue_sizes() -> None:
    sizes = {c.program: len(c.entries) for c in all_catalogues() if c.program in PROGRAMS}
    assert sizes["aws-ofi-nccl"] >= 40
    assert sizes["k8s-rdma"] >= 30
