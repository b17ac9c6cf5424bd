"""Record verdicts of checks/diagnose/verdicts_core.py on real captures, values read by hand.

Captures are the parser fixtures under tests/fixtures/evidence/<kind>/ and the diagnose cases
under tests/fixtures/diagnose/; a few more real captures are quoted below (whole lines, with
their source) where no fixture shows the state a verdict judges. Evidence is built the way the
engine loads it (one parsed file, its records with their file and subject), without the
signature catalogues, so that these tests judge the verdicts alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import yaml

from aifabric.checks.diagnose.engine import Evidence, EvidenceFile, Item
from aifabric.checks.diagnose.signatures import all_causes
from aifabric.checks.diagnose.verdicts import Verdict, load_verdicts, verdicts_for
from aifabric.checks.diagnose.verdicts_core import COLLAPSE_SHARE, busbw_collapse
from aifabric.errors import InputError
from aifabric.evidence import parse_file
from aifabric.evidence.infiniband import IbstatPort
from aifabric.model import Fabric
from tests.unit.diagnose.verdict_helpers import only, problems

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
EVIDENCE = FIXTURES / "evidence"
CASES = FIXTURES / "diagnose"


def _files(path: Path) -> Iterable[tuple[Path, str | None]]:
    if path.is_file():
        yield path, None
        return
    for f in sorted(path.rglob("*")):
        if f.is_file() and f.name not in ("case.yaml", "meta.yaml", "fabric.yaml"):
            rel = f.relative_to(path).parts
            yield f, rel[0] if len(rel) > 1 else None


def _evidence(*paths: Path, fabric: Fabric | None = None) -> Evidence:
    """Each file parsed and its records listed with their file and subject (bundle folder,
    else the record's host, else the file name), as diagnose loads them."""
    ev = Evidence(fabric=fabric)
    for root in paths:
        for path, host in _files(root):
            try:
                result = parse_file(path)
            except InputError:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            ef = EvidenceFile(str(path), result.kind, result, text.splitlines(), host or path.name)
            ev.files.append(ef)
            for rec in result.records:
                who = host or getattr(rec, "host", None) or path.name
                ev.items.append(Item(rec, ef, str(who), result.kind))
    return ev


def _verdicts(ev: Evidence) -> list[Verdict]:
    out: list[Verdict] = []
    for item in ev.items:
        for fn in verdicts_for(item.record.record_type):
            out.extend(fn(item.record, ev))
    return out


def _run(*paths: Path, fabric: Fabric | None = None) -> list[Verdict]:
    return _verdicts(_evidence(*paths, fabric=fabric))


def _capture(tmp_path: Path, text: str, name: str = "capture.txt") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path




def _fabric(port: str, *, mtu: int = 9000, speed: float = 400, pcie_gen: int = 5) -> Fabric:
    """Two servers whose single RoCE port is named ``port`` (the fabric of
    tests/fixtures/fabrics/two-servers.yaml with the port renamed)."""
    data: dict[str, Any] = yaml.safe_load((FIXTURES / "fabrics" / "two-servers.yaml").read_text())
    for server in data["servers"]:
        nic = server["nics"][0]
        nic["pcie_gen"] = pcie_gen
        nic["ports"][0].update(name=port, speed_gbps=speed)
    for link in data["links"]:
        link["a"] = link["a"].replace("nic0", port)
        link["mtu_bytes"] = mtu
        link["speed_gbps"] = speed
    return Fabric.model_validate(data)


def _fixture(kind: str, case: str) -> Path:
    (path,) = sorted((EVIDENCE / kind / case).glob("input.*"))
    return path


# -- registration and the shape of every verdict ----------------------------------------------


def test_core_verdicts_are_registered() -> None:
    table = load_verdicts()
    for rtype in (
        "ibstat_port", "ibv_port", "ib_link", "pci_device", "pcie_bandwidth", "kernel_event",
        "gid", "gdr_status", "header", "perftest_params", "ip_link", "transceiver_module",
        "ping_summary",
    ):  # fmt: skip
        modules = {fn.__module__.rsplit(".", 1)[-1] for fn in table[rtype]}
        assert any(m.startswith("verdicts_") for m in modules), rtype


def _all_fixture_verdicts() -> list[Verdict]:
    out: list[Verdict] = []
    for case in sorted(p for p in EVIDENCE.glob("*/*") if p.is_dir()):
        for path in sorted(case.glob("input.*")):
            out += [v for v in _run(path) if v.id in _CORE_IDS]
    for case in sorted(p.parent for p in CASES.glob("*/case.yaml")):
        out += [v for v in _run(case) if v.id in _CORE_IDS]
    return out


_CORE_IDS = frozenset(
    {
        "diagnose.ib-port-down", "diagnose.ib-port-slow", "diagnose.pcie-link-degraded",
        "diagnose.pcie-aer-errors", "diagnose.pcie-slot-power", "diagnose.nic-module-event",
        "diagnose.nic-link-down", "diagnose.nic-driver-error", "diagnose.roce-gid-missing",
        "diagnose.gdr-disabled", "diagnose.busbw-collapse", "diagnose.nccl-tests-wrong-results",
        "diagnose.perftest-bw-low", "diagnose.iface-no-carrier", "diagnose.iface-mtu-low",
        "diagnose.optics-threshold", "diagnose.optics-tx-fault", "diagnose.optics-module-fault",
        "diagnose.ping-no-reply", "diagnose.nccl-tests-stopped-one-node",
    }
)  # fmt: skip


def test_every_verdict_on_the_fixtures_is_well_formed() -> None:
    verdicts = _all_fixture_verdicts()
    assert len(verdicts) >= 20
    causes = all_causes()
    for v in verdicts:
        assert v.id.startswith("diagnose."), v
        assert v.cause in causes, v
        assert "\n" not in v.message and v.message, v
        assert 0 < v.confidence <= 1, v
        assert re.search(r"https?://", v.explanation), v.id
        assert v.fix and v.refs, v.id
        for ref in v.refs:
            assert re.fullmatch(r"S([1-9]|1\d|2[0-4])", ref), ref


# -- InfiniBand / RDMA ports --------------------------------------------------------------------


def test_single_port_hca_polling_is_an_error() -> None:
    # ConnectX-7 mlx5_10, 1 port: State Down, Physical state Polling, Rate 10 (no partner)
    v = only(_run(_fixture("ibstat", "gpud-482-cx7-polling")), "diagnose.ib-port-down")
    assert (v.severity, v.cause) == ("error", "fabric.link-down")
    assert "mlx5_10 port 1 is Down (physical state Polling" in v.message
    assert "the only port of mlx5_10" in v.message
    assert v.line is None  # quoted at the port block's own line


def test_port_trained_but_not_activated_by_the_sm() -> None:
    # SR-IOV VF mlx5_7: Physical state LinkUp, State Down, Base lid 65535 (no SM assignment)
    v = only(_run(_fixture("ibstat", "network-operator-249-down-linkup")), "diagnose.ib-port-down")
    assert v.severity == "error"
    assert "mlx5_7 port 1 is Down (physical state LinkUp, link layer InfiniBand)" in v.message
    assert "subnet manager" in v.explanation
    assert "sminfo" in v.fix


def test_only_the_down_hca_of_a_roce_host_is_judged() -> None:
    # mlx5_0/mlx5_1 (MT4129) Active at 200; mlx5_10 (MT4125, 1 port) Down/Disabled
    vs = _run(_fixture("ibstat", "mooncake-1999-cx7-roce"))
    v = only(vs, "diagnose.ib-port-down")
    assert v.severity == "error"
    assert v.message.startswith("mlx5_10 port 1 is Down (physical state Disabled)")
    assert len(vs) == 1  # same chip, same rate: no slow-port verdict either


def test_a_disabled_function_beside_active_twins_is_a_warning() -> None:
    # single-port ConnectX-6 functions (MT4123): mlx5_2 Down/Disabled, the others Active; a
    # spare function, so a warning, while a different model down alone (mooncake) stays an error
    vs = _run(_fixture("ibstat", "lustreperfmon-27-cx6-disabled-twin"))
    v = only(vs, "diagnose.ib-port-down")
    assert v.severity == "warning"
    assert "mlx5_2 port 1 is Down (physical state Disabled" in v.message


def test_one_down_port_of_a_dual_port_card_is_a_warning() -> None:
    # ConnectX-3 mlx4_0, 2 ports: port 1 Down/Disabled, port 2 Active at 56
    v = only(_run(_fixture("ibstat", "rdma-core-pr847-mlx4-ibwarn")), "diagnose.ib-port-down")
    assert v.severity == "warning"
    assert "mlx4_0 port 1 is Down" in v.message and "1 of 2 ports of mlx4_0 down" in v.message


def test_a_port_judged_alone_is_a_warning() -> None:
    """Without the capture's other records the verdict cannot tell a spare port from the only
    one: it still names the state, as a warning."""
    result = parse_file(_fixture("ibstat", "gpud-482-cx7-polling"))
    (port,) = [r for r in result.records if isinstance(r, IbstatPort)]
    vs = [v for fn in verdicts_for("ibstat_port") for v in fn(port, Evidence())]
    v = only(vs, "diagnose.ib-port-down")
    assert v.severity == "warning"
    assert "not in the capture" in v.message


@pytest.mark.parametrize(
    "case", ["l2fwd-nv-6-cx6dx", "linpack-19a-edr"], ids=["cx6dx-two-cas", "edr-own-sm"]
)
def test_active_ib_ports_get_no_verdict(case: str) -> None:
    assert _run(_fixture("ibstat", case)) == []


@pytest.mark.parametrize(
    "case",
    ["azhpc-images-pr44-hbv2", "deepep-38-h100-roce-cx7", "deepep-55-ib-ndr",
     "k8s-rdma-shared-164-verbose-truncated", "ompi-pr6137-verbose-tabs"],
)  # fmt: skip
def test_ibv_devinfo_captures_are_healthy(case: str) -> None:
    # every port in these captures is PORT_ACTIVE; the Azure VF's active_mtu 1024 is judged only
    # against a fabric file (next test)
    assert problems(_run(_fixture("ibv-devinfo", case))) == []


def test_roce_active_mtu_below_what_the_fabric_mtu_allows() -> None:
    # Azure HBv2 ConnectX-4 Lx VF rdmaP23800p0s2: link_layer Ethernet, active_mtu 1024 (the
    # netdev runs 1500); with a 9000-byte fabric MTU: 9000 - 96 = 8904 >= 4096 -> 4096 expected
    fab = _fabric("rdmaP23800p0s2", mtu=9000)
    vs = _run(_fixture("ibv-devinfo", "azhpc-images-pr44-hbv2"), fabric=fab)
    v = only(vs, "diagnose.iface-mtu-low")
    assert (v.severity, v.cause) == ("warning", "fabric.mtu")
    assert "rdmaP23800p0s2 port 1: RoCE active_mtu 1024" in v.message
    assert "allows 4096" in v.message
    # a 1500-byte fabric MTU allows 1404 -> 1024: nothing to say
    assert (
        _run(
            _fixture("ibv-devinfo", "azhpc-images-pr44-hbv2"),
            fabric=_fabric("rdmaP23800p0s2", mtu=1500),
        )
        == []
    )


# iblinkinfo -l on ibsim (simulated fabric, real infiniband-diags output): GitHub code-index file
# id 70424127924, an InfiniBand lab guide, "Task 7 - Counters, errors and a failed link" step 4
# (the prompt and both port lines, indented as in the guide). Port 33 trained 4X at 2.5 Gbps
# while both ends support more; port 34 was unlinked.
IBSIM_COULD_BE = """\
    root@hxa-ibsim:~/ibsim# ib iblinkinfo --switches-only -l 2>/dev/null | grep 'hxa-su2-leaf-r2' | grep -E ' 3[34]\\['
    0x0000000000200005 "               hxa-su2-leaf-r2"      9   33[  ] ==( 4X           2.5 Gbps Active/  LinkUp)==>  0x0000000000200000      2    4[  ] "hxa-spine01" (Could be 12X Could be 10.0 Gbps)
    0x0000000000200005 "               hxa-su2-leaf-r2"      9   34[  ] ==(                Down/ Polling)==>             [  ] "" ( )
"""  # noqa: E501


def test_iblinkinfo_could_be_is_a_slow_link(tmp_path: Path) -> None:
    vs = _run(_capture(tmp_path, IBSIM_COULD_BE))
    v = only(vs, "diagnose.ib-port-slow")
    assert (v.severity, v.cause) == ("warning", "fabric.slow-link")
    assert "hxa-su2-leaf-r2 port 33 to hxa-spine01 port 4" in v.message
    assert "4X 2.5 Gbps" in v.message and "could run at 12X / 10.0 Gbps" in v.message
    # port 34 Down/Polling without a peer: an empty switch port, not judged
    assert len(vs) == 1


@pytest.mark.parametrize(
    "case",
    ["ddbms-readme-qdr-dual-port-ca", "linpack-19a-grep-up", "linpack-edr76-sb7700",
     "sharp-blog-hdr-quantum-aggregation-node"],
)  # fmt: skip
def test_iblinkinfo_fixtures_have_only_empty_switch_ports_down(case: str) -> None:
    assert _run(_fixture("iblinkinfo", case)) == []


# -- PCIe ----------------------------------------------------------------------------------------


def test_gen4_nic_one_generation_down_is_info() -> None:
    # ConnectX-5 Ex: LnkCap 16GT/s x16, LnkSta 8GT/s x16 (Cascade Lake Gen3 slot)
    # 16 x 16 x 128/130 = 252.06 Gb/s; 8 x 16 x 128/130 = 126.03 Gb/s; 126.0 lost = 50 %
    v = only(
        _run(_fixture("lspci", "fdio-cx5-ex-rst-literal-block")), "diagnose.pcie-link-degraded"
    )
    assert (v.severity, v.cause) == ("info", "host.pcie")
    assert "0000:5e:00.0 (Mellanox Technologies MT28800 Family [ConnectX-5 Ex])" in v.message
    assert "8 GT/s x16 (126.0 Gb/s) below its capability 16 GT/s x16 (252.1 Gb/s)" in v.message
    assert "126.0 Gb/s (50%) lost" in v.message


def test_fabric_file_slot_generation_makes_it_a_warning() -> None:
    # the fabric file says the NIC slots run Gen5: a Gen3 link is then a fault, not the slot
    fab = _fabric("nic0", pcie_gen=5)
    v = only(
        _run(_fixture("lspci", "fdio-cx5-ex-rst-literal-block"), fabric=fab),
        "diagnose.pcie-link-degraded",
    )
    assert v.severity == "warning"
    assert "the fabric file says the NIC slots run at Gen5" in v.message


def test_width_downgrade_is_a_warning() -> None:
    # HighPoint SSD7540: LnkCap 5GT/s x2, LnkSta 5GT/s x1: 5 x 2 x 0.8 = 8, 5 x 1 x 0.8 = 4 Gb/s
    v = only(
        _run(_fixture("lspci", "puget-wrx90-raid-width-x1-downgraded")),
        "diagnose.pcie-link-degraded",
    )
    assert v.severity == "warning"
    assert "5 GT/s x1 (4 Gb/s) below its capability 5 GT/s x2 (8 Gb/s): 4 Gb/s (50%) lost" in (
        v.message
    )


def test_idle_gpu_at_gen1_is_info() -> None:
    # RTX 6000 Ada: LnkCap 16GT/s x16, LnkSta 2.5GT/s x16: 2.5 x 16 x 0.8 = 32 Gb/s of 252.06
    v = only(
        _run(_fixture("lspci", "puget-wrx90-rtx6000-downgraded-2-5gt")),
        "diagnose.pcie-link-degraded",
    )
    assert v.severity == "info"
    assert "2.5 GT/s x16 (32 Gb/s)" in v.message and "220.1 Gb/s (87%) lost" in v.message
    assert "GPUs lower the link speed when idle" in v.message


def test_cx7_at_gen5_x16_with_benign_aer_bits_is_healthy() -> None:
    # full Gen5 x16; UESta UnsupReq+ and CESta AdvNonFatalErr+ (config-space probing) only
    assert _run(_fixture("lspci", "asus-esc8000a-cx7-gen5-x16")) == []


def test_acs_redirect_is_left_to_the_rule() -> None:
    # three GPP bridges with ReqRedir+ CmpltRedir+: diagnose.pcie-acs-redirect ranks them
    assert _run(_fixture("lspci", "linux-pci-amd-gpp-bridge-acs-redirect")) == []


def test_kernel_pcie_bandwidth_limited_by_a_x8_link() -> None:
    # 63.008 Gb/s available, limited by 8.0 GT/s x8 at 0000:b2:00.0, capable of 16.0 GT/s x16
    # 8 x 8 x 128/130 = 63.02; 252.06 - 63.02 = 189.0 Gb/s = 75 %
    v = only(
        _run(_fixture("dmesg-mlx5", "l2fwd-nv-cx6dx-pcie-x8-limited")),
        "diagnose.pcie-link-degraded",
    )
    assert (v.severity, v.cause) == ("warning", "host.pcie")
    assert "0000:b3:00.1" in v.message and "limited by the link at 0000:b2:00.0" in v.message
    assert "189.0 Gb/s (75%) lost" in v.message


# A ConnectX-6 200G OCP3 card on a PCIe adapter, two boots: `sudo dmesg | grep mlx5_core` in a
# x4 slot and in a x16 slot. GitHub code-index file id 20528609102 (Hugo docs page "Mellanox cx6
# ocp3网卡", 2022-03-10, section "dmesg"; found with find_string "np0: Link down").
CX6_OCP_X4 = """\
sudo dmesg | grep mlx5_core
[    1.437917] mlx5_core 0000:04:00.0: enabling device (0000 -> 0002)
[    1.438118] mlx5_core 0000:04:00.0: firmware version: 20.27.446
[    1.438142] mlx5_core 0000:04:00.0: 8.000 Gb/s available PCIe bandwidth, limited by 2.5 GT/s PCIe x4 link at 0000:00:1b.4 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)
[    1.731931] mlx5_core 0000:04:00.0: Rate limit: 127 rates are supported, range: 0Mbps to 97656Mbps
[    1.732211] mlx5_core 0000:04:00.0: E-Switch: Total vports 10, per vport: max uc(1024) max mc(16384)
[    1.734873] mlx5_core 0000:04:00.0: Port module event: module 0, Cable plugged
[    1.735122] mlx5_core 0000:04:00.0: mlx5_pcie_event:299:(pid 324): Detected insufficient power on the PCIe slot (25W).
[    1.741863] mlx5_core 0000:04:00.0: MLX5E: StrdRq(0) RqSz(1024) StrdSz(2048) RxCqeCmprss(1 basic)
[    1.989891] mlx5_core 0000:04:00.0 eth0: Disabling rxhash, not supported when CQE compress is active
[    1.990170] mlx5_core 0000:04:00.0 enp4s0np0: renamed from eth0
[    5.203057] mlx5_core 0000:04:00.0 enp4s0np0: Link down
"""  # noqa: E501
CX6_OCP_X16 = """\
sudo dmesg | grep mlx5_core
[    1.444801] mlx5_core 0000:01:00.0: enabling device (0000 -> 0002)
[    1.445005] mlx5_core 0000:01:00.0: firmware version: 20.27.446
[    1.445026] mlx5_core 0000:01:00.0: 126.016 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x16 link at 0000:00:01.0 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)
[    1.684398] mlx5_core 0000:01:00.0: Rate limit: 127 rates are supported, range: 0Mbps to 97656Mbps
[    1.684600] mlx5_core 0000:01:00.0: E-Switch: Total vports 10, per vport: max uc(1024) max mc(16384)
[    1.686818] mlx5_core 0000:01:00.0: Port module event: module 0, Cable plugged
[    1.687055] mlx5_core 0000:01:00.0: mlx5_pcie_event:304:(pid 328): PCIe slot advertised sufficient power (75W).
[    1.693066] mlx5_core 0000:01:00.0: MLX5E: StrdRq(1) RqSz(8) StrdSz(2048) RxCqeCmprss(0 basic)
[    1.801740] mlx5_core 0000:01:00.0 enp1s0np0: renamed from eth0
[    5.189354] mlx5_core 0000:01:00.0 enp1s0np0: Link down
[   21.129045] mlx5_core 0000:01:00.0 enp1s0np0: Link up
"""  # noqa: E501


def test_cx6_in_a_x4_slot(tmp_path: Path) -> None:
    vs = _run(_capture(tmp_path, CX6_OCP_X4))
    pcie = only(vs, "diagnose.pcie-link-degraded")
    # 2.5 x 4 x 0.8 = 8 Gb/s of 252.06: 244.1 lost (97 %); firmware 20.x = ConnectX-6
    assert pcie.severity == "warning"
    assert "0000:04:00.0 (ConnectX-6)" in pcie.message
    assert "2.5 GT/s x4 (8 Gb/s)" in pcie.message and "244.1 Gb/s (97%) lost" in pcie.message
    power = only(vs, "diagnose.pcie-slot-power")
    assert (power.severity, power.cause) == ("warning", "host.pcie")
    assert "insufficient power on the PCIe slot (25W)" in power.message
    down = only(vs, "diagnose.nic-link-down")
    assert (down.severity, down.cause) == ("warning", "fabric.link-down")
    assert "0000:04:00.0 enp4s0np0" in down.message
    assert len(vs) == 3  # 'Cable plugged' is not judged


def test_cx6_one_generation_down_cannot_carry_its_200g_port(tmp_path: Path) -> None:
    vs = _run(_capture(tmp_path, CX6_OCP_X16))
    v = only(vs, "diagnose.pcie-link-degraded")
    # 8 x 16 x 128/130 = 126.03 Gb/s < 200 Gb/s (catalog ConnectX-6): a warning, not the info
    # a Gen4 NIC one generation down gets when its line rate is unknown
    assert v.severity == "warning"
    assert "126.0 Gb/s (50%) lost" in v.message
    assert "cannot carry one ConnectX-6 port at its 200 Gb/s line rate" in v.message
    # 'Link down' at 5.2 s then 'Link up' at 21.1 s: the boot-time training, no verdict
    assert len(vs) == 1


# `dmesg | tail` in a linux-kernel mail (Arnaldo Carvalho de Melo, "[REGRESSION] 'perf mem
# record' on a Intel hybrid system broken", 2024-12-04, Message-ID Z1CVTJ5jzIyNiB1R@x1):
# https://lore.kernel.org/all/Z1CVTJ5jzIyNiB1R@x1/ (the prompt lines and the ten kernel lines)
PERF_MAIL_DMESG = """\
root@number:/tmp# dmesg | tail
[18865.729882] ixgbe 0000:05:00.0 enp5s0: NIC Link is Up 10 Gbps, Flow Control: RX/TX
[18865.848172] mlx5_core 0000:01:00.0 enp1s0f0np0: Link down
[18866.057990] mlx5_core 0000:01:00.1 enp1s0f1np1: Link down
[19066.396215] input: JBL RACE TWS (AVRCP) as /devices/virtual/input/input27
[19078.378477] usb 2-3: current rate 16000 is different from the runtime rate 48000
[21158.375680] usb 2-3: current rate 16000 is different from the runtime rate 48000
[31386.186675] input: JBL RACE TWS (AVRCP) as /devices/virtual/input/input28
[31409.098352] usb 2-3: current rate 16000 is different from the runtime rate 48000
[36409.737615] sysrq: Emergency Sync
[36409.742619] Emergency Sync complete
root@number:/tmp#
"""


def test_mlx5_links_that_stay_down(tmp_path: Path) -> None:
    vs = _run(_capture(tmp_path, PERF_MAIL_DMESG))
    assert [v.id for v in vs] == ["diagnose.nic-link-down"] * 2
    assert "0000:01:00.0 enp1s0f0np0" in vs[0].message
    assert "0000:01:00.1 enp1s0f1np1" in vs[1].message
    assert all(v.severity == "warning" and v.cause == "fabric.link-down" for v in vs)


def test_unplugged_module_is_an_optics_warning() -> None:
    # ConnectX-4 Lx: module 0 'Cable plugged' on .0, module 1 'Cable unplugged' on .1
    vs = _run(_fixture("dmesg-mlx5", "netdev-cx4lx-caller-id-module-events"))
    v = only(vs, "diagnose.nic-module-event")
    assert (v.severity, v.cause) == ("warning", "fabric.optics")
    assert v.message == "0000:0b:00.1: port module 1: Cable unplugged"


def test_firmware_health_failure_once_per_adapter() -> None:
    # poll_health 'reached miss count' on 0000:0d:00.0 and four more functions (.1-.4)
    vs = _run(_fixture("dmesg-mlx5", "qemu-devel-cx6dx-health-fw-internal-error"))
    v = only(vs, "diagnose.nic-driver-error")
    assert (v.severity, v.cause) == ("error", "host.driver")
    assert v.message.startswith("0000:0d:00.0 (and 4 more function(s) of the adapter)")
    assert "health compromised" in v.message


def test_probe_failure_and_command_failure() -> None:
    v = only(
        _run(_fixture("dmesg-mlx5", "tinycore-redpill-cx4lx-handle-hca-cap-probe-failed")),
        "diagnose.nic-driver-error",
    )
    assert v.severity == "error" and "mlx5_load_one failed with error code -22" in v.message
    w = only(
        _run(_fixture("dmesg-mlx5", "linux-rdma-journalctl-cx4-cmd-alloc-fail")),
        "diagnose.nic-driver-error",
    )
    assert w.severity == "warning" and "failed to allocate command entry" in w.message


def test_full_bandwidth_nic_boot_log_is_healthy() -> None:
    # ConnectX-5 at 63.008 Gb/s on its full 8 GT/s x8 link, module plugged, enough slot power
    assert _run(_fixture("dmesg-mlx5", "arm-nas-cx5-arm64-pci-domain-0004")) == []


# -- RoCE GIDs -----------------------------------------------------------------------------------


def test_roce_port_with_only_link_local_gids() -> None:
    # mlx5_0 (ens11f0): index 0 fe80 v1, index 1 fe80 v2, no address GID; mlx5_1 is an IB port
    vs = _run(_fixture("show-gids", "hurray0-ib-port-no-netdev"))
    v = only(vs, "diagnose.roce-gid-missing")
    assert (v.severity, v.cause) == ("warning", "host.gid")
    assert v.message.startswith("mlx5_0 port 1 (ens11f0): only link-local (fe80::) RoCE v2")
    assert "(index 1)" in v.message
    assert len(vs) == 1


@pytest.mark.parametrize(
    "case",
    ["c-header-comment-star-prefix", "nccl-1131-indented", "nccl-1538-k8s-pod-gid7",
     "ucx-pr9484-bond-vxlan"],
)  # fmt: skip
def test_ports_with_an_ipv4_roce_v2_gid(case: str) -> None:
    # nccl-1538 ends at mlx5_3 index 6 (the v1 row of its IPv4 address): cut before the v2 row,
    # so that port is not judged
    assert _run(_fixture("show-gids", case)) == []


# -- NCCL: GPUDirect RDMA ------------------------------------------------------------------------


def test_gdr_disabled_on_a_single_node_is_info() -> None:
    # NCCL 2.27, two GPUs on mew0, 'nNodes 1': NET/IB GDR Disabled for mlx5_0, mlx5_1, the vNIC
    vs = _run(_fixture("nccl-log", "roce-2.27-nccl-tests-init"))
    v = only(vs, "diagnose.gdr-disabled")
    assert (v.severity, v.cause) == ("info", "host.gdr")
    assert v.message.startswith("mew0: NCCL reports GPU Direct RDMA Disabled for mlx5_0")
    assert "single node" in v.message


# Two DGX Spark nodes running nccl-tests over RoCE (NCCL 2.28.9): whole lines of the NCCL INFO
# log from the two Init START lines to rank 0's 'nNodes 2' line. GitHub code-index file id
# 61925772940 (found with find_string "NET/IB : GPU Direct RDMA Disabled for HCA").
SPARK_TWO_NODES = """\
spark-4440:24302:24302 [0] NCCL INFO ncclCommInitRankConfig comm 0xc53b8f7f6ab0 rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId f01000 commId 0x3470ca318760efc8 - Init START
spark-fb97:23491:23491 [0] NCCL INFO ncclCommInitRankConfig comm 0xbca552dd2650 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId f01000 commId 0x3470ca318760efc8 - Init START
spark-fb97:23491:23491 [0] NCCL INFO RAS client listening socket at 127.0.0.1<28028>
spark-4440:24302:24302 [0] NCCL INFO RAS client listening socket at 127.0.0.1<28028>
spark-fb97:23491:23491 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'rocep1s0f1'
spark-4440:24302:24302 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'rocep1s0f1'
spark-fb97:23491:23491 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 1 'roceP2p1s0f1'
spark-4440:24302:24302 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 1 'roceP2p1s0f1'
spark-fb97:23491:23491 [0] NCCL INFO ncclTopoGetCpuAffinity: Affinity for GPU 0 is empty, ignoring. (GPU affinity =  ; CPU affinity = 0).
spark-4440:24302:24302 [0] NCCL INFO ncclTopoGetCpuAffinity: Affinity for GPU 0 is empty, ignoring. (GPU affinity =  ; CPU affinity = 0).
spark-fb97:23491:23491 [0] NCCL INFO comm 0xbca552dd2650 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0
"""  # noqa: E501


def test_gdr_disabled_across_nodes_is_a_warning_per_host(tmp_path: Path) -> None:
    vs = _run(_capture(tmp_path, SPARK_TWO_NODES, "nccl.log"))
    assert [v.id for v in vs] == ["diagnose.gdr-disabled"] * 2
    hosts = sorted(v.message.split(":", 1)[0] for v in vs)
    assert hosts == ["spark-4440", "spark-fb97"]
    for v in vs:
        assert (v.severity, v.cause) == ("warning", "host.gdr")
        assert "Disabled for rocep1s0f1, roceP2p1s0f1 (the job spans 2 nodes)" in v.message


def test_gdr_of_the_socket_transport_is_left_to_the_socket_rule() -> None:
    # 'NET/Socket : GPU Direct RDMA Disabled for HCA 0 'eth0'': sockets never do GPUDirect
    vs = _run(_fixture("nccl-log", "socket-hpcx-plugin-interleaved"))
    assert [v for v in vs if v.id == "diagnose.gdr-disabled"] == []


# -- nccl-tests ----------------------------------------------------------------------------------


def test_wrong_results_are_data_corruption() -> None:
    # 16 GH200 ranks over Slingshot: #wrong 18134 (2 MiB) ... 951005 (32 MiB) out of place
    path = _fixture("nccl-tests", "olivia-gh200-corrupted-wrong-counts")
    vs = _run(path)
    v = only(vs, "diagnose.nccl-tests-wrong-results")
    assert (v.severity, v.cause) == ("error", "host.driver")
    assert "all_reduce: 6 message size(s) with wrong results, from 2 MiB" in v.message
    assert "#wrong up to 951005 at 32 MiB" in v.message
    lines = path.read_text().splitlines()
    assert v.line is not None and lines[v.line - 1].split()[0] == "2097152"
    # the 128 MiB row is back at 89.85 GB/s: the largest size did not collapse
    assert [x for x in vs if x.id == "diagnose.busbw-collapse"] == []


def test_out_of_bounds_of_the_old_format() -> None:
    # 2020 all_gather_perf: "Out of bounds values : 2 FAILED" (old error column, no #wrong)
    v = only(
        _run(_fixture("nccl-tests", "issue37-allgather-2020-hash-lost-oob-failed")),
        "diagnose.nccl-tests-wrong-results",
    )
    assert "'Out of bounds values : 2 FAILED'" in v.message


def test_a_run_on_one_node_that_stopped_before_its_table_points_at_peer_to_peer() -> None:
    # nccl-tests issue 115: two RTX A6000 of host SAIS1020, the output ends after NCCL's socket
    # lines with no table header, no row and no failure (the run hung; amd_iommu=off fixed it)
    path = _fixture("nccl-tests", "issue115-amd-iommu-two-ranks-stopped-at-init")
    v = only(_run(path), "diagnose.nccl-tests-stopped-one-node")
    assert (v.severity, v.cause) == ("warning", "host.pcie")
    assert v.message.startswith("all_reduce on 2 GPUs of one node: the output ends after its ")
    assert "device list, while creating the communicators" in v.message
    assert "NCCL_P2P_DISABLE=1" in v.fix and "ACSCtl" in v.fix


NCCL1_STALL = """\
#   Rank  0 uses device  0 [0x05] Tesla M40 24GB
#   Rank  1 uses device  1 [0x08] Tesla M40 24GB
#                                                 out-of-place                    in-place
#      bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      res
"""  # noqa: E501
"""NCCL 1's all_reduce_test header (NVIDIA/nccl v1.3.4-1 test/single/all_reduce_test.cu printf
formats) with the M40 devices of nccl issue 104, stopping at the table header."""


def test_a_run_that_stopped_after_its_table_header_hung_in_the_first_collective(
    tmp_path: Path,
) -> None:
    v = only(_run(_capture(tmp_path, NCCL1_STALL)), "diagnose.nccl-tests-stopped-one-node")
    assert "2 GPUs of one node" in v.message
    assert "after its table header, in the first collective (the warm-up)" in v.message
    # a result row, a failure line or a second host: the run did not stop silently on one node
    row = "            8             2   float     sum    0.012   0.00   0.00    0e+00\n"
    for text in (
        NCCL1_STALL + row,
        NCCL1_STALL + "Test NCCL failure common.cu:393 'unhandled system error'\n",
        "# Using devices\n#  Rank  0 Group  0 Pid 7 on nodeA device  0 [0x05] A100\n"
        "#  Rank  1 Group  0 Pid 9 on nodeB device  0 [0x05] A100\n",
        "# Using devices\n#  Rank  0 Group  0 Pid 7 on nodeA device  0 [0x05] A100\n",
    ):
        vs = _run(_capture(tmp_path, text))
        assert [x for x in vs if x.id == "diagnose.nccl-tests-stopped-one-node"] == [], text


def test_busbw_collapse_on_the_olivia_run_cut_at_64_mib(tmp_path: Path) -> None:
    """The same real table, an excerpt of whole lines that stops after the 64 MiB row: every one
    of the three largest sizes (16, 32, 64 MiB: 6.31, 6.30, 3.69 GB/s) is under half of the peak
    15.08 GB/s at 1 MiB (not a lone spike: it is not 1.5 x above its neighbour 10.63)."""
    src = _fixture("nccl-tests", "olivia-gh200-corrupted-wrong-counts").read_text().splitlines()
    end = next(i for i, ln in enumerate(src) if ln.split()[:1] == ["67108864"])
    vs = _run(_capture(tmp_path, "\n".join(src[: end + 1]) + "\n"))
    v = only(vs, "diagnose.busbw-collapse")
    assert (v.severity, v.cause) == ("warning", "fabric.slow-link")
    # median(6.31, 6.30, 3.69) = 6.30; 6.30 / 15.08 = 41.8 %
    assert "busbw falls from 15.08 GB/s at 1 MiB to 6.30 GB/s (median of 16 MiB..64 MiB)" in (
        v.message
    )
    assert "42% of the peak" in v.message


def test_busbw_collapse_function() -> None:
    # the olivia out-of-place curve from 256 KiB to 64 MiB, as printed
    curve = [
        (262144, 6.42), (524288, 10.63), (1048576, 15.08), (2097152, 0.63), (4194304, 0.83),
        (8388608, 1.62), (16777216, 6.31), (33554432, 6.30), (67108864, 3.69),
    ]  # fmt: skip
    assert busbw_collapse(curve) == (15.08, 1048576, 6.30, 16777216, 67108864)
    # with its 128 MiB row (89.85 GB/s) the tail recovers: no collapse
    assert busbw_collapse([*curve, (134217728, 89.85)]) is None
    assert COLLAPSE_SHARE == 0.5


@pytest.mark.parametrize(
    "case",
    [
        # healthy runs (busbw rises and flattens)
        "aws-batch-p5-tag-output-wide-header", "coreweave-gb200-nvl72-single-rack",
        "coreweave-h100-sharp-mpijob-kubectl", "dgx-spark-gb10-v2.20.0-githash-cut",
        "eks-efa-t4-tag-output-nccl-info", "eks-p5-indented-tag-output-elided",
        "issue290-srun-label-c0-na-wrong-h100", "nccl-issue340-allgather-2019-then-broadcast",
        "olivia-gh200-slingshot-v2.18.3",
        # launch problems and cut-off runs (other rules' cases): no collapse, no wrong values
        "issue107-interleaved-single-rank-runs-v100", "issue182-interleaved-rows-ib",
        "issue214-sendrecv-inplace-wrong-na", "issue289-hypercube-failed-run-then-rerun",
        "issue291-alltoall-collapsed-spaces-cuda-failure",
        "issue78-alltoall-old-format-blank-redop", "issue82-broadcast-root-na-nccl-warn",
        "nccl-issue841-empty-hostname",
    ],
)  # fmt: skip
def test_other_nccl_tests_tables_do_not_collapse(case: str) -> None:
    assert problems(_run(_fixture("nccl-tests", case))) == []


# -- perftest ------------------------------------------------------------------------------------


def test_perftest_far_below_the_fabric_port_speed() -> None:
    # GKE H200 ib_write_bw on mlx5_3, 1 QP: 140.40 Gb/s average at 8 MiB (the last row)
    path = CASES / "healthy2-gke-h200-gdr-perftest-allgather" / "ib_write_bw.txt"
    assert _run(path) == []  # without a fabric file the line rate is unknown
    v = only(_run(path, fabric=_fabric("mlx5_3", speed=400)), "diagnose.perftest-bw-low")
    assert (v.severity, v.cause) == ("warning", "fabric.slow-link")
    # 140.40 / 400 = 35 %
    assert "RDMA_Write BW Test on mlx5_3: 140.40 Gb/s average at 8 MiB, 35% of the 400" in v.message
    # 140.40 / 200 = 70 %: above the 50 % share
    assert _run(path, fabric=_fabric("mlx5_3", speed=200)) == []


# -- ip link -------------------------------------------------------------------------------------

# Cumulus Linux documentation, "Troubleshoot Layer 1" ("Ensure Physical Connections Are Good"):
# `ip link show swp21` as the page prints it (four-space indented code block). GitHub code-index
# file id 3784504147 (CumulusNetworks/docs; found with find_string
# "<NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 9000").
CUMULUS_NO_CARRIER = """\
    cumulus@switch$ ip link show swp21
    23: swp21: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 9000 qdisc pfifo_fast master vlan5 state DOWN mode DEFAULT qlen 500
        link/ether c4:54:44:4f:ab:12 brd ff:ff:ff:ff:ff:ff
"""  # noqa: E501


def test_admin_up_without_carrier(tmp_path: Path) -> None:
    v = only(_run(_capture(tmp_path, CUMULUS_NO_CARRIER)), "diagnose.iface-no-carrier")
    assert (v.severity, v.cause) == ("warning", "fabric.link-down")
    assert v.message.startswith("swp21 (member of vlan5) is administratively UP but has no carrier")
    assert "state DOWN" in v.message


@pytest.mark.parametrize(
    "case",
    ["ha-unraid-49-tunl0-none-ipip-backtick-prompt", "new-format-bond-backticks-ha-unraid-13",
     "old-s-lo-iproute2-22", "old-s-s-eth4-security-onion-437", "ovn-k8s-sriov-pf-vf-mac-vlan"],
)  # fmt: skip
def test_ip_link_captures_without_a_fabric(case: str) -> None:
    # tunl0 is administratively down (<NOARP>, no UP): not judged; loopbacks are not judged
    assert _run(_fixture("ip-link", case)) == []


def test_interface_mtu_below_the_fabric_mtu() -> None:
    # ConnectX-5 PF enp3s0f0: mtu 1500; the fabric file gives its host link 9000 bytes
    path = _fixture("ip-link", "ovn-k8s-sriov-pf-vf-mac-vlan")
    v = only(_run(path, fabric=_fabric("enp3s0f0")), "diagnose.iface-mtu-low")
    assert (v.severity, v.cause) == ("warning", "fabric.mtu")
    assert v.message == (
        "enp3s0f0: MTU 1500 below the 9000 bytes the fabric file gives its link (gpu2:enp3s0f0)"
    )
    assert "ping -M do -s 8972" in v.fix
    assert _run(path, fabric=_fabric("enp3s0f0", mtu=1500)) == []


# -- optics --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "case",
    ["cumulus-docs-sfp-10g-sr-prompt", "jc-sfp-10g-lr-no-rx-light", "jc-sfp-dac-no-dom",
     "netdev-cmis-los-lol-link-down", "netdev-cmis-qsfp-dd-16-lanes",
     "netdev-mlx4-qsfp-plus-40g-sr4", "netdev-sff8636-qsfp28-power-mode-elided",
     "netdev-sfp-1000base-sx-mail-wrapped", "sonic-utilities-qsfp28-aoc-dom"],
)  # fmt: skip
def test_modules_within_their_thresholds(case: str) -> None:
    """No DOM reading of these modules is beyond a threshold other than Rx under the low alarm
    (jc-sfp-10g-lr: Rx -40 dBm, diagnose.optics-rx-low's case); unused lanes (mlx4 SR4 lanes 2-4
    at 0 mA), low-power mode and the CMIS LOS/LOL arrays of an administratively down port are
    not judged."""
    assert problems(_run(_fixture("ethtool-module", case))) == []


# -- ping ----------------------------------------------------------------------------------------


def test_df_probe_refused_by_a_router() -> None:
    # ping -M do -s 1472 (1500 on the wire): 'Frag needed and DF set (mtu = 1440)', 100 % loss
    path = _fixture("ping", "incus-frag-needed-mtu-1440")
    v = only(_run(path), "diagnose.ping-no-reply")
    assert (v.severity, v.cause) == ("error", "fabric.mtu")
    assert "ping 1.1.1.1: 2 probes of 1500 bytes, none answered" in v.message
    assert "(path MTU 1440)" in v.message
    assert v.line == 3  # the router's ICMP line


def test_silent_target() -> None:
    # ping -O -D: five 'no answer yet' lines, 5 transmitted, 0 received, no ICMP error
    v = only(_run(_fixture("ping", "jc-pi-no-answer-yet-D-timestamps")), "diagnose.ping-no-reply")
    assert (v.severity, v.cause) == ("warning", "config.firewall")
    assert v.message == (
        "ping 192.168.120.164: 5 probes, 0 replies (100% loss): no reply and no ICMP error"
    )


def test_destination_host_unreachable() -> None:
    v = only(
        _run(_fixture("ping", "jc-ubuntu2204-dest-unreachable-pipe")), "diagnose.ping-no-reply"
    )
    assert v.cause == "config.firewall"
    assert "3 probes, 0 replies" in v.message
    assert "'Destination Host Unreachable' from 10.0.0.1" in v.message


@pytest.mark.parametrize(
    "case",
    ["eos-df-size-9000-cli-prompt", "incus-df-1412-fits-1440", "jc-alpine-busybox",
     "jc-centos7-broadcast-dup", "jc-centos7-ping-D-timestamps",
     "jc-centos7-ping6-hostname-pattern", "jc-freebsd12-ping6-comma-std-dev",
     "jc-ubuntu2204-ping6-source-ip", "rst-code-block-df-8972"],
)  # fmt: skip
def test_pings_with_replies(case: str) -> None:
    assert _run(_fixture("ping", case)) == []


# -- healthy cases -------------------------------------------------------------------------------

HEALTHY = sorted(
    p.parent
    for p in CASES.glob("*/case.yaml")
    if yaml.safe_load(p.read_text()).get("healthy") is True
)


@pytest.mark.parametrize("case", HEALTHY, ids=[c.name for c in HEALTHY])
def test_healthy_diagnose_cases_get_no_warning_or_error(case: Path) -> None:
    data = yaml.safe_load((case / "case.yaml").read_text())
    vs = _run(*(case / p for p in data["inputs"]))
    assert problems([v for v in vs if v.id in _CORE_IDS]) == []


def test_healthy_cases_are_many() -> None:
    assert len(HEALTHY) >= 30


AER_REPORT = (
    "[{t}.000000] pcieport 0000:00:06.0: AER: Corrected error message received from 0000:00:06.0\n"
    "[{t}.000001] pcieport 0000:00:06.0: PCIe Bus Error: severity=Corrected, type=Physical "
    "Layer, (Receiver ID)\n"
    "[{t}.000002] pcieport 0000:00:06.0:   device [8086:a74d] error status/mask=00000001/00002000\n"
    "[{t}.000003] pcieport 0000:00:06.0:    [ 0] RxErr                  (First)\n"
)
"""The AER driver's report of one corrected error (drivers/pci/pcie/aer.c)."""


def test_one_corrected_aer_report_is_info_and_repeats_are_a_warning(tmp_path: Path) -> None:
    once = [v for v in _run(_capture(tmp_path, AER_REPORT.format(t=10), "once.txt"))
            if v.id == "diagnose.pcie-aer-errors"]  # fmt: skip
    assert [v.severity for v in once] == ["info"]
    text = "".join(AER_REPORT.format(t=t) for t in (10, 20, 30))
    again = [v for v in _run(_capture(tmp_path, text, "thrice.txt"))
             if v.id == "diagnose.pcie-aer-errors"]  # fmt: skip
    assert [v.severity for v in again] == ["warning"]
    assert "3 error reports" in again[0].message


IXGBE_LINK = "[{t:>12.6f}] ixgbe 0000:01:00.0 eth2: NIC Link is {s}\n"
"""ixgbe's carrier lines (drivers/net/ethernet/intel/ixgbe/ixgbe_main.c, netdev_info: the PCI
address, then the interface)."""


def test_a_link_that_keeps_going_down_is_a_flap(tmp_path: Path) -> None:
    states = ["Up 10 Gbps, Flow Control: RX/TX", "Down"] * 3 + ["Up 10 Gbps, Flow Control: RX/TX"]
    text = "".join(IXGBE_LINK.format(t=10.0 * i, s=s) for i, s in enumerate(states, 1))
    found = [v for v in _run(_capture(tmp_path, text)) if v.id.startswith("diagnose.nic-link")]
    assert [(v.id, v.cause) for v in found] == [("diagnose.nic-link-flap", "fabric.link-down")]
    assert "went down 3 times within 40 s" in found[0].message
    assert "0000:01:00.0 eth2" in found[0].message


def test_one_bounce_is_not_a_flap_and_a_last_down_is_reported(tmp_path: Path) -> None:
    once = "".join(IXGBE_LINK.format(t=t, s=s) for t, s in ((1.0, "Down"), (2.0, "Up 10 Gbps")))
    assert [v.id for v in _run(_capture(tmp_path, once, "once.txt"))
            if v.id.startswith("diagnose.nic-link")] == []  # fmt: skip
    stays = IXGBE_LINK.format(t=1.0, s="Up 10 Gbps") + IXGBE_LINK.format(t=2.0, s="Down")
    assert [v.id for v in _run(_capture(tmp_path, stays, "stays.txt"))
            if v.id.startswith("diagnose.nic-link")] == ["diagnose.nic-link-down"]  # fmt: skip
