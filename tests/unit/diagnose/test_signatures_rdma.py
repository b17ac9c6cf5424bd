"""rdma-core, mlx5 kernel, port-state and UCX catalogues: severities, specificity, healthy lines."""

from __future__ import annotations

import pytest

from aifabric.checks.diagnose.signatures import signature_index


def _hit_id(line: str) -> str | None:
    hit = signature_index().match(line)
    return hit.signature.id if hit else None


@pytest.mark.parametrize(
    "line",
    [
        "\t\tState: Active",
        "\t\tPhysical state: LinkUp",
        "\t\t\tstate:\t\t\tPORT_ACTIVE (4)",
        "\t\t\tphys_state:\t\tLINK_UP (5)",
        "\tLink detected: yes",
        "\tRx loss of signal                         : None",
        "\tTx fault                                  : None",
        "\tModule State                              : 0x03 (ModuleReady)",
        "2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP qlen 1000",
        "LinkState:.......................Active",
        "PhysLinkState:...................LinkUp",
    ],
)
def test_healthy_port_states_give_no_entry(line: str) -> None:
    assert _hit_id(line) is None


@pytest.mark.parametrize(
    ("line", "entry"),
    [
        (
            "mlx5_core 0000:05:00.0: mlx5_cmd_out_err:835:(pid 18360): ACCESS_REG(0x805)"
            " op_mod(0x1) failed, status bad operation(0x2), syndrome (0x9a6171), err(-22)",
            "mlx5-kernel.cmd-access-reg-restricted",
        ),
        ("mlx5_core 0000:3b:00.0 ens1f0np0: Link up", "mlx5-kernel.link-up"),
        (
            "mlx5_core 0004:01:00.0: 63.008 Gb/s available PCIe bandwidth (8.0 GT/s PCIe x8 link)",
            "mlx5-kernel.pcie-bandwidth-ok",
        ),
        (
            "nvidia_peermem: module verification failed: signature and/or required key missing"
            " - tainting kernel",
            "mlx5-kernel.module-verification-failed",
        ),
    ],
)
def test_benign_lines_are_benign(line: str, entry: str) -> None:
    hit = signature_index().match(line)
    assert hit is not None and hit.signature.id == entry
    assert hit.signature.severity == "benign"


@pytest.mark.parametrize(
    ("line", "entry"),
    [
        # perftest's numeric status beats the bare ibv_wc_status_str() text
        (
            " Failed status-transport retry counter exceeded (12): wr_id 0 syndrom 0x81",
            "rdma-core.perftest-status-12",
        ),
        (
            "Failed status transport retry counter exceeded (12) for wr_id 2",
            "rdma-core.wc-retry-exceeded",
        ),
        # a named module error beats the general module-error entry
        (
            "mlx5_core 0000:3b:00.0: Port module event[error]: module 0, Cable error,"
            " High Temperature",
            "mlx5-kernel.module-high-temperature",
        ),
        (
            "mlx5_core 0000:3b:00.0: Port module event[error]: module 0, Cable error,"
            " Unknown error",
            "mlx5-kernel.module-error",
        ),
        # the Mellanox provider is an error, other missing providers are not
        (
            "libibverbs: Warning: couldn't load driver 'libmlx5-rdmav34.so': libmlx5-rdmav34.so:"
            " cannot open shared object file: No such file or directory",
            "rdma-core.couldnt-load-mlx5-driver",
        ),
        # ENOMEM registration is the memlock limit, GPU memory registration is GPUDirect
        (
            "ibv_reg_mr(address=0x7f3a40000000, length=67108864, access=0xf) failed:"
            " Cannot allocate memory",
            "ucx.reg-mr-enomem",
        ),
        (
            "ibv_reg_mr(address=0x7f3a40000000, length=67108864, access=0xf) failed: Bad address",
            "ucx.reg-mr-failed",
        ),
        (
            "UCX  ERROR failed to register address 0x7f3a40000000 (cuda) length 4096 on"
            " md[4]=mlx5_0: Input/output error (md supports: host)",
            "ucx.register-address-failed-cuda",
        ),
        # a UCX "no transport" line explains more than the bare status string in it
        (
            "select.c:649  UCX  ERROR   no active messages transport to <no debug data>:"
            " rc_mlx5/mlx5_bond_1:1 - Destination is unreachable",
            "ucx.no-transport-to-peer",
        ),
        (
            "NVRM: Xid (PCI:0000:05:00): 79, pid=1234, GPU has fallen off the bus.",
            "mlx5-kernel.xid-79",
        ),
        ("NVRM: Xid (PCI:0000:05:00): 57, pid=1234", "mlx5-kernel.xid-any"),
        # a paste with the GPU's address masked by the user (NVIDIA/nccl issue 2241): still
        # the Xid's own entry
        (
            "kernel: NVRM: Xid (PCI:...): 137, RLW_RXPIPE interrupt hit on link 11 on GPU0: PRIV"
            " Error",
            "nvidia-kernel.xid-137",
        ),
        (
            "kernel: NVRM: Xid (PCI:...): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 11 (...)",
            "nvidia-kernel.xid-nvlink5-nonfatal",
        ),
    ],
)
def test_most_specific_entry_wins(line: str, entry: str) -> None:
    assert _hit_id(line) == entry


def test_named_groups_reach_the_finding() -> None:
    hit = signature_index().match(
        "mlx5_core 0000:3b:00.0: 63.008 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x8"
        " link at 0000:3a:00.0 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)"
    )
    assert hit is not None
    assert hit.groups["width"] == "8" and hit.groups["capwidth"] == "16"
    assert hit.groups["at"] == "0000:3a:00.0"
    assert hit.signature.cause == "host.pcie"


def test_severity_and_cause_choices() -> None:
    index = signature_index()
    flushed = index.match("Failed status Work Request Flushed Error (5) for wr_id 2")
    assert flushed is not None and flushed.signature.severity == "info"
    retry = index.match(
        "[node1:1:0:1] ib_mlx5_log.c:177  Transport retry count exceeded on mlx5_0:1/RoCE"
        " (synd 0x15 vend 0x81 hw_synd 0/0)"
    )
    assert retry is not None and retry.signature.cause == "fabric.packet-loss"
    memlock = index.match("libibverbs: Warning: RLIMIT_MEMLOCK is 32768 bytes.")
    assert memlock is not None and memlock.signature.cause == "host.memlock"
    down = index.match("\t\tState: Down")
    assert down is not None and down.signature.severity == "warning"
