"""The host dialect: per-server roce-host.sh, netplan-roce.yaml, sysctl-roce.conf, nccl.env.

Goldens for both example fabrics (byte for byte; regenerate with AIFABRIC_REGEN_GOLDEN=1), the
values the files carry, what the parsers read back from them, and the change plan."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from aifabric.catalog import load_catalog
from aifabric.cli.verify_cmd import run_verify
from aifabric.design import load_fabric
from aifabric.dialects import host as host_dialect
from aifabric.dialects.host.render import DIALECT, GID_INDEX, IB_RETRY_CNT, IB_TIMEOUT
from aifabric.dialects.intent import DeviceIntent, HostNicIntent, PortIntent, build_intents
from aifabric.dialects.render import render_fabric, write_files
from aifabric.evidence import detect_kind, parse_text
from aifabric.evidence.nccl_env import effective_env
from aifabric.model import Fabric, QosPolicy

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = ROOT / "tests" / "fixtures" / "render" / "host"
FABRICS = {
    "lossless-lab": ROOT / "examples" / "lossless-lab" / "fabric.yaml",
    "s18-switch-concept": ROOT / "examples" / "s18-switch-concept.yaml",
}
FILES = ("roce-host.sh", "netplan-roce.yaml", "sysctl-roce.conf", "nccl.env")


def _fabric(name: str) -> Fabric:
    return load_fabric(FABRICS[name], load_catalog([]))


def _rendered(name: str) -> dict[str, str]:
    res = render_fabric(_fabric(name), "host", catalog=load_catalog([]))
    return {f.path: f.text for f in res.files}


def _intent(name: str = "lossless-lab", server: str = "srv01") -> DeviceIntent:
    return build_intents(_fabric(name), load_catalog([]))[server]


@pytest.mark.parametrize("fabric", sorted(FABRICS))
def test_golden_files(fabric: str) -> None:
    files = _rendered(fabric)
    folder = GOLDEN / fabric
    if os.environ.get("AIFABRIC_REGEN_GOLDEN"):
        for path, text in files.items():
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_text(text, encoding="utf-8")
        meta = {
            "source": f"rendered by aifabric render from "
            f"{FABRICS[fabric].relative_to(ROOT)} --dialect host",
            "notes": "roce-host.sh, netplan-roce.yaml, sysctl-roce.conf and nccl.env per server, "
            "compared byte for byte by tests/unit/dialects/test_render_host.py (regenerate with "
            "AIFABRIC_REGEN_GOLDEN=1).",
            "origin": "rendered",
        }
        (folder / "meta.yaml").write_text(yaml.safe_dump(meta, sort_keys=False), "utf-8")
    on_disk = {
        str(p.relative_to(folder)): p.read_text(encoding="utf-8")
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "meta.yaml"
    }
    assert on_disk == files
    meta = yaml.safe_load((folder / "meta.yaml").read_text(encoding="utf-8"))
    assert meta["origin"] == "rendered" and "--dialect host" in meta["source"]


def test_every_server_gets_four_files_with_their_kinds() -> None:
    res = render_fabric(_fabric("lossless-lab"), "host", catalog=load_catalog([]))
    assert sorted(res.intents) == ["srv01", "srv02", "srv03", "srv04"]
    kinds = {f.path.split("/", 1)[1]: f.kind for f in res.files if f.device == "srv02"}
    assert kinds == {
        "roce-host.sh": "host-roce-script",
        "netplan-roce.yaml": None,
        "sysctl-roce.conf": None,
        "nccl.env": "nccl-env",
    }


def test_script_values() -> None:
    text = _rendered("lossless-lab")["srv01/roce-host.sh"]
    assert text.startswith("#!/usr/bin/env bash\n")
    assert "\nset -euo pipefail\n" in text
    lines = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    # NIC name nic0 is the RDMA device, its port nic0 the netdev; ToS = 26 << 2 = 104
    assert lines[1:] == [
        "mlnx_qos -i nic0 --trust dscp",
        "mlnx_qos -i nic0 --dscp2prio set,26,3 --dscp2prio set,48,6",
        "mlnx_qos -i nic0 --pfc 0,0,0,1,0,0,0,0",
        "cma_roce_tos -d nic0 -t 104",
        "echo 104 > /sys/class/infiniband/nic0/tc/1/traffic_class",
        "ip link set dev nic0 mtu 9000",
        "sysctl -w net.ipv4.tcp_ecn=1",
    ]


def test_nccl_env_values_and_verify_says_nothing_worse_than_info(tmp_path: Path) -> None:
    text = _rendered("lossless-lab")["srv01/nccl.env"]
    env = {k: v.value for k, v in effective_env(parse_text(text, "nccl-env").records).items()}
    assert env == {
        "NCCL_IB_TC": "104",
        "NCCL_IB_GID_INDEX": str(GID_INDEX),
        "NCCL_IB_HCA": "=nic0",
        "NCCL_SOCKET_IFNAME": "=nic0",
        "NCCL_IB_TIMEOUT": str(IB_TIMEOUT),
        "NCCL_IB_RETRY_CNT": str(IB_RETRY_CNT),
    }
    assert (GID_INDEX, IB_TIMEOUT, IB_RETRY_CNT) == (3, 22, 7)
    assert "fleet-gid-index" in text and "aifabric probe" in text
    # 4.096 us x 2^22 = 17.18 s per attempt, x 7 retries = 120 s
    assert "= 17.2 s per attempt" in text and "about 120 s" in text
    fab = _fabric("lossless-lab")
    cat = load_catalog([])
    out = tmp_path / "out"
    write_files(render_fabric(fab, "host", catalog=cat).files, out)
    run = run_verify(fab, cat, configs=out)
    env_findings = [f for f in run.findings if f.check == "verify.nccl-env"]
    assert [f for f in env_findings if f.severity in ("error", "warning")] == []
    assert {f.target for f in run.findings if f.check == "verify.dscp-chain"} == set()


def test_sysctl_conf_explains_each_setting() -> None:
    text = _rendered("lossless-lab")["srv01/sysctl-roce.conf"]
    settings = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    assert settings == ["net.ipv4.tcp_ecn = 1"]
    block = text.split("\n\n")[-1]
    assert "# Source: https://docs.kernel.org/networking/ip-sysctl.html (tcp_ecn)" in block
    assert parse_text(text, "sysctl").records[0].key == "net.ipv4.tcp_ecn"


def test_netplan_carries_the_mtu_of_each_roce_port() -> None:
    text = _rendered("lossless-lab")["srv03/netplan-roce.yaml"]
    doc = yaml.safe_load(text)
    assert doc == {"network": {"version": 2, "ethernets": {"nic0": {"mtu": 9000}}}}


def test_script_reads_back_with_sources() -> None:
    text = _rendered("lossless-lab")["srv01/roce-host.sh"]
    assert detect_kind(text) == "host-roce-script"
    res = parse_text(text, "host-roce-script")
    assert not res.warnings, [str(w) for w in res.warnings]
    dev = host_dialect.interpret([("srv01/roce-host.sh", res)], name="srv01")
    v = dev.view("nic0")
    lines = text.splitlines()
    assert v.trust is not None and v.trust.value == "dscp"
    assert lines[v.trust.src.line - 1 if v.trust.src.line else 0].endswith("--trust dscp")
    assert v.pfc_priorities is not None and v.pfc_priorities.value == (3,)
    assert "--pfc 0,0,0,1,0,0,0,0" in lines[(v.pfc_priorities.src.line or 1) - 1]
    assert v.dscp_to_tc is not None and v.dscp_to_tc.value == {26: 3, 48: 6}
    assert v.mtu_bytes is not None and v.mtu_bytes.value == 9000
    assert lines[(v.mtu_bytes.src.line or 1) - 1] == "ip link set dev nic0 mtu 9000"
    assert dev.host_interfaces["nic0"].value == 9000
    assert [m.value for m in dev.host_dscp] == [26, 26]  # cma_roce_tos and traffic_class


def _two_nic_intent(**qos: object) -> DeviceIntent:
    base = _intent()
    policy = QosPolicy.model_validate({**base.qos.model_dump(), **qos})
    ports = (
        PortIntent("ens1f0np0", "leaf01:Ethernet1", 9000, 400.0, 2.0, False, True, None, "host"),
        PortIntent("ens2f0np0", "leaf02:Ethernet1", 9000, 400.0, 2.0, False, True, None, "host"),
        PortIntent("eno1", "fe01:Ethernet9", 1500, 25.0, 2.0, False, False, None, "host"),
        PortIntent("eno2", "mgmt:Ethernet1", 1500, 1.0, 2.0, False, False, None, "management"),
    )
    nics = (
        HostNicIntent("mlx5_0", "ens1f0np0", 400.0, 9000),
        HostNicIntent("mlx5_1", "ens2f0np0", 400.0, 9000),
    )
    return replace(base, name="gpu7", qos=policy, ports=ports, nics=nics)


def test_two_rails_and_a_frontend_port() -> None:
    files = {f.path: f.text for f in DIALECT.render(_two_nic_intent(roce_dscp=24))}
    env = {
        k: v.value
        for k, v in effective_env(parse_text(files["gpu7/nccl.env"], "nccl-env").records).items()
    }
    assert env["NCCL_IB_HCA"] == "=mlx5_0,mlx5_1"
    assert env["NCCL_SOCKET_IFNAME"] == "=eno1"  # the frontend port, not management
    assert env["NCCL_IB_TC"] == "96"  # 24 << 2
    script = files["gpu7/roce-host.sh"]
    assert script.count("--pfc 0,0,0,1,0,0,0,0") == 2
    assert "cma_roce_tos -d mlx5_1 -t 96" in script
    assert "echo 96 > /sys/class/infiniband/mlx5_0/tc/1/traffic_class" in script
    assert "eno1" not in script
    conf = files["gpu7/sysctl-roce.conf"]
    settings = [ln for ln in conf.splitlines() if ln and not ln.startswith("#")]
    assert settings == [
        "net.ipv4.tcp_ecn = 1",
        "net.ipv4.conf.ens1f0np0.arp_ignore = 1",
        "net.ipv4.conf.ens1f0np0.arp_announce = 2",
        "net.ipv4.conf.ens2f0np0.arp_ignore = 1",
        "net.ipv4.conf.ens2f0np0.arp_announce = 2",
    ]
    res = parse_text(script, "host-roce-script")
    assert not res.warnings
    dev = host_dialect.interpret([("gpu7/roce-host.sh", res)], name="gpu7")
    assert sorted(dev.ports) == ["ens1f0np0", "ens2f0np0"]
    assert [m.value for m in dev.host_dscp] == [24] * 4


def test_pfc_bits_follow_the_intent_and_pcp_trust_has_no_dscp_map() -> None:
    files = {
        f.path: f.text for f in DIALECT.render(_two_nic_intent(trust="pcp", pfc_priorities=(3, 4)))
    }
    script = files["gpu7/roce-host.sh"]
    assert "mlnx_qos -i ens1f0np0 --trust pcp" in script
    assert "--dscp2prio" not in script
    assert "mlnx_qos -i ens2f0np0 --pfc 0,0,0,1,1,0,0,0" in script
    dev = host_dialect.interpret([("s", parse_text(script, "host-roce-script"))], name="gpu7")
    v = dev.view("ens2f0np0")
    assert v.pfc_priorities is not None and v.pfc_priorities.value == (3, 4)
    assert v.trust is not None and v.trust.value == "pcp" and v.dscp_to_tc is None


def test_plan_is_a_unified_diff_naming_the_changed_line() -> None:
    text = _rendered("lossless-lab")["srv01/roce-host.sh"]
    f = next(
        x
        for x in render_fabric(_fabric("lossless-lab"), "host", catalog=load_catalog([])).files
        if x.path == "srv01/roce-host.sh"
    )
    old = text.replace("--pfc 0,0,0,1,0,0,0,0", "--pfc 0,0,0,1,1,0,0,0")
    plan = DIALECT.plan(f, old)
    assert (plan.added, plan.removed) == (1, 1)
    assert "-mlnx_qos -i nic0 --pfc 0,0,0,1,1,0,0,0" in plan.plan
    assert "+mlnx_qos -i nic0 --pfc 0,0,0,1,0,0,0,0" in plan.plan
    new = DIALECT.plan(f, None)
    assert new.existing is None and new.added == len(text.splitlines())


def test_templates_name_their_documents_in_the_first_lines() -> None:
    folder = ROOT / "src" / "aifabric" / "dialects" / "host" / "templates"
    names = sorted(p.name for p in folder.glob("*.j2"))
    assert names == [f"{n}.j2" for n in sorted(FILES)]
    for name in names:
        head = "\n".join((folder / name).read_text(encoding="utf-8").splitlines()[:8])
        assert re.search(r"https://\S+", head), name
    assert DIALECT.role == "host" and all(u.startswith("https://") for u in DIALECT.follows)
