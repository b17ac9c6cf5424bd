"""Record verdicts of checks/diagnose/verdicts_links.py on records parsed from real fixtures
(mlxlink, SONiC transceiver status/pm/presence, ibdev2netdev, rdma link, ibv_devices).

Where no public capture shows a condition (an mlxlink port that is not Active, Rx power under
the module's alarm, post-FEC errors, a speed below the cable's), the record is built directly
from a real fixture's record with one field changed: no log text is invented."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml

from aifabric.checks.diagnose.engine import Evidence
from aifabric.checks.diagnose.verdicts import Verdict, load_verdicts, verdicts_for
from aifabric.checks.diagnose.verdicts_links import EFFECTIVE_BER_MAX, opcode_cause
from aifabric.evidence.base import Record
from aifabric.evidence.mlxlink import (
    OPCODE_FAMILIES,
    MlxlinkBer,
    MlxlinkLink,
    MlxlinkModule,
    MlxlinkTroubleshooting,
)
from aifabric.evidence.rdma_tools import RdmaLink
from aifabric.evidence.sonic_transceiver import SonicTransceiverPm, SonicTransceiverStatus
from tests.unit.evidence.fixtures import all_cases, load

CAUSES = Path(__file__).resolve().parents[3] / "src" / "aifabric" / "checks" / "causes.yaml"
KINDS = (
    "mlxlink",
    "sonic-transceiver-status",
    "sonic-transceiver-pm",
    "ibdev2netdev",
    "rdma-link",
    "ibv-devices",
)


def _judge(rec: Record) -> list[Verdict]:
    ev = Evidence()
    return [v for fn in verdicts_for(rec.record_type) for v in fn(rec, ev)]


def _verdicts(kind: str, name: str) -> list[Verdict]:
    return [v for rec in load(kind, name).records for v in _judge(rec)]


def _ids(vs: list[Verdict]) -> list[tuple[str, str, str]]:
    return [(v.id, v.severity, v.cause) for v in vs]


def _one(kind: str, name: str, cls: type[Any]) -> Any:
    recs = load(kind, name).of_type(cls)
    return recs[0]


def test_verdicts_registered_for_every_new_record_type() -> None:
    table = load_verdicts()
    for rtype in (
        "mlxlink_link",
        "mlxlink_troubleshooting",
        "mlxlink_module",
        "mlxlink_ber",
        "sonic_transceiver_status",
        "sonic_transceiver_pm",
        "transceiver_presence",
        "ibdev2netdev",
        "rdma_link",
        "ibv_devices",
    ):
        assert table.get(rtype), rtype


def test_every_cause_is_a_cause_class() -> None:
    classes = {c["id"] for c in yaml.safe_load(CAUSES.read_text(encoding="utf-8"))["causes"]}
    families = [name for _, name in OPCODE_FAMILIES] + ["PHY firmware indication"]
    assert {opcode_cause(f) for f in families} <= classes
    for c in all_cases():
        if c.kind in KINDS:
            for rec in c.parse().records:
                for v in _judge(rec):
                    assert v.cause in classes, v
                    assert v.id.startswith("diagnose.")


# ---- healthy captures: no error or warning --------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("mlxlink", "sigcomm26-bluefield3-100g-dac-module-counters"),
        ("mlxlink", "cluster-toolkit-b200-nvlink-xdr-bug-report"),
        ("sonic-transceiver-status", "sonic-utilities-pr3238-cmis-state-ready"),
        ("sonic-transceiver-status", "sonic-utilities-docs-ccmis-zr-ethernet100"),
        ("sonic-transceiver-pm", "sonic-utilities-pr2927-zr-window-rows"),
        ("sonic-transceiver-pm", "sonic-utilities-pr2615-not-applicable"),
        ("ibdev2netdev", "daocloud-docs-cx5-roce-up"),
        ("rdma-link", "daocloud-docs-cx5-active"),
        ("rdma-link", "3fs-263-soft-roce-rxe"),
        ("ibv-devices", "nvshmem-51-four-cx-with-pvrdma-warning"),
    ],
)
def test_healthy_capture_gives_no_error_or_warning(kind: str, name: str) -> None:
    assert not [v for v in _verdicts(kind, name) if v.severity in ("error", "warning")]


# ---- mlxlink --------------------------------------------------------------------------------


def test_mlxlink_opcode_25_cable_speed_not_enabled_is_an_optics_warning() -> None:
    vs = _verdicts("mlxlink", "bluebanquise-cx5-ib-sdr-cable-speed-not-enabled")
    assert _ids(vs) == [("diagnose.mlxlink-troubleshooting", "warning", "fabric.optics")]
    assert "Cable speed not enabled" in vs[0].message
    assert "25" in vs[0].message and "cable compliance code mismatch" in vs[0].message
    assert vs[0].line is None  # quoted at the record's own line (the Troubleshooting title)


def test_mlxlink_link_not_active_is_link_down_error() -> None:
    link = _one("mlxlink", "bluebanquise-cx5-ib-sdr-cable-speed-not-enabled", MlxlinkLink)
    down = dataclasses.replace(link, state="Polling", physical_state="Initializing")
    vs = _judge(down)
    assert _ids(vs) == [("diagnose.mlxlink-link-down", "error", "fabric.link-down")]
    assert "Polling" in vs[0].message and "Initializing" in vs[0].message


def test_mlxlink_ethernet_an_substate_alone_is_not_link_down() -> None:
    # Ethernet ports print the AN state machine (ETH_AN_FSM_ENABLE) while Active
    link = _one("mlxlink", "sigcomm26-bluefield3-100g-dac-module-counters", MlxlinkLink)
    assert not _judge(dataclasses.replace(link, physical_state="ETH_AN_FSM_ENABLE"))


def test_mlxlink_speed_below_port_and_cable_capability_is_slow_link() -> None:
    link = _one("mlxlink", "sigcomm26-bluefield3-100g-dac-module-counters", MlxlinkLink)
    assert not _judge(link)
    slow = dataclasses.replace(link, speed="50G", enabled_speeds=["100G_4X", "50G_2X"])
    vs = _judge(slow)
    assert _ids(vs) == [("diagnose.mlxlink-speed-below-capability", "warning", "fabric.slow-link")]
    assert "100G_4X" in vs[0].message
    # a cable that cannot do the enabled maximum is no finding
    limited = dataclasses.replace(slow, cable_speeds=["50G_2X", "25G"])
    assert not _judge(limited)


def test_mlxlink_unplugged_opcode_family_and_cause() -> None:
    trouble = _one(
        "mlxlink", "bluebanquise-cx5-ib-sdr-cable-speed-not-enabled", MlxlinkTroubleshooting
    )
    unplugged = dataclasses.replace(
        trouble, status_opcode=1024, family="cable is unplugged", group_opcode="MNG FW"
    )
    assert _ids(_judge(unplugged)) == [
        ("diagnose.mlxlink-troubleshooting", "warning", "fabric.optics")
    ]
    an = dataclasses.replace(trouble, status_opcode=3, family="auto-negotiation failure")
    assert _judge(an)[0].cause == "fabric.link-down"
    degraded = dataclasses.replace(trouble, status_opcode=34, family="speed degradation")
    assert _judge(degraded)[0].cause == "fabric.slow-link"
    for ok in (0, 1023):
        assert not _judge(dataclasses.replace(trouble, status_opcode=ok))


def test_mlxlink_rx_power_below_alarm_and_no_thresholds() -> None:
    mod = _one("mlxlink", "sigcomm26-bluefield3-100g-dac-module-counters", MlxlinkModule)
    assert not _judge(mod)
    optical = dataclasses.replace(
        mod, rx_power_dbm=[-0.5, -14.2, -0.7, -0.6], rx_power_low_dbm=-10.4, rx_power_high_dbm=6.0
    )
    vs = _judge(optical)
    assert _ids(vs) == [("diagnose.mlxlink-rx-power-low", "error", "fabric.optics")]
    assert "lane 2 -14.2 dBm" in vs[0].message and "Q28-PC03" in vs[0].message
    # [0..0]: the module has no DOM thresholds (passive copper) -> no judgement
    no_ddm = dataclasses.replace(
        mod, rx_power_dbm=[0.0, 0.0], rx_power_low_dbm=0.0, rx_power_high_dbm=0.0
    )
    assert not _judge(no_ddm)


def test_mlxlink_module_fault_flags() -> None:
    mod = _one("mlxlink", "sigcomm26-bluefield3-100g-dac-module-counters", MlxlinkModule)
    vs = _judge(dataclasses.replace(mod, tx_fault=[0, 1, 0, 0], module_fw_fault=0))
    assert _ids(vs) == [("diagnose.mlxlink-module-fault", "warning", "fabric.optics")]
    assert "[2]" in vs[0].message


def test_mlxlink_effective_errors_and_link_flaps() -> None:
    ber = _one("mlxlink", "sigcomm26-bluefield3-100g-dac-module-counters", MlxlinkBer)
    assert ber.effective_ber is not None and ber.effective_ber < EFFECTIVE_BER_MAX
    bad = dataclasses.replace(ber, effective_errors=12, effective_ber=3e-11, link_down_count=2)
    vs = _judge(bad)
    assert _ids(vs) == [
        ("diagnose.mlxlink-effective-ber", "warning", "fabric.optics"),
        ("diagnose.mlxlink-link-flaps", "warning", "fabric.link-down"),
    ]
    assert "12 effective" in vs[0].message and "25074.8 min" in vs[0].message
    assert "2 time(s)" in vs[1].message


# ---- SONiC ----------------------------------------------------------------------------------


def test_sonic_status_los_on_four_lanes_and_cmis_not_ready() -> None:
    vs = _verdicts("sonic-transceiver-status", "sonic-utilities-4065-qsfpc-dp-pre-init-rx-los")
    assert _ids(vs) == [
        ("diagnose.sonic-transceiver-rx-los", "warning", "fabric.optics"),
        ("diagnose.sonic-cmis-not-ready", "info", "fabric.optics"),
    ]
    assert "[1, 2, 3, 4]" in vs[0].message and "Ethernet128" in vs[0].message


def test_sonic_status_cmis_failed_with_dark_transmitters() -> None:
    vs = _verdicts("sonic-transceiver-status", "sonic-buildimage-29494-lumentum-cmis-failed")
    assert _ids(vs) == [
        ("diagnose.sonic-transceiver-rx-los", "warning", "fabric.optics"),
        ("diagnose.sonic-cmis-failed", "error", "fabric.optics"),
    ]
    assert "Disabled TX channels 255" in vs[0].message


def test_sonic_status_module_and_tx_fault_and_alarm_flags() -> None:
    rec = _one(
        "sonic-transceiver-status",
        "sonic-utilities-docs-ccmis-zr-ethernet100",
        SonicTransceiverStatus,
    )
    rec.lanes[3].tx_fault = True
    rec.module_state = "ModuleFault"
    rec.flags["Rx power low alarm flag on lane 3"] = True
    vs = _judge(rec)
    assert _ids(vs) == [
        ("diagnose.sonic-transceiver-fault", "error", "fabric.optics"),
        ("diagnose.sonic-transceiver-alarm-flags", "warning", "fabric.optics"),
    ]
    assert "Tx fault on media lane(s) [3]" in vs[0].message
    assert "Rx power low alarm flag on lane 3" in vs[1].message


def test_sonic_pm_threshold_crossing_from_the_docs_example() -> None:
    vs = _verdicts("sonic-transceiver-pm", "sonic-utilities-docs-zr-ethernet100")
    assert _ids(vs) == [("diagnose.zr-pm-threshold-crossing", "warning", "fabric.optics")]
    assert "Rx Signal Power high" in vs[0].message and "Rx Signal Power low" in vs[0].message


def test_sonic_pm_prefec_ber_above_warning_threshold() -> None:
    rec = _one("sonic-transceiver-pm", "sonic-utilities-pr2927-zr-window-rows", SonicTransceiverPm)
    rec.params["Pre-FEC BER"].max = 1.2e-2
    vs = _judge(rec)
    assert _ids(vs) == [("diagnose.zr-prefec-ber-high", "warning", "fabric.optics")]
    assert "1.20E-02" in vs[0].message and "1.10E-02" in vs[0].message
    assert vs[0].line == rec.params["Pre-FEC BER"].line


def test_sonic_presence_not_present_is_info() -> None:
    vs = _verdicts("ethtool-module", "sonic-utilities-presence-table")
    assert vs and all(v.severity == "info" for v in vs)
    assert _ids(vs)[0] == ("diagnose.transceiver-not-present", "info", "fabric.optics")


# ---- host RDMA tools ------------------------------------------------------------------------


def test_ibdev2netdev_down_ports_are_link_down_warnings() -> None:
    vs = _verdicts("ibdev2netdev", "ucx-2534-ib-and-roce-mixed-down")
    assert _ids(vs) == [("diagnose.rdma-netdev-down", "warning", "fabric.link-down")] * 2
    assert ["mlx5_0" in vs[0].message, "enp23s0f1" in vs[1].message] == [True, True]
    assert "commonly down" in vs[0].explanation


def test_rdma_link_down_and_disabled_ports() -> None:
    vs = _verdicts("rdma-link", "pmem-shuffle-docs-old-format-i40iw-mlx5")
    assert _ids(vs) == [("diagnose.rdma-link-not-active", "warning", "fabric.link-down")] * 2
    assert "i40iw0/1" in vs[0].message and "mlx5_0/1 (ens803f0)" in vs[1].message
    assert "commonly down" in vs[1].explanation


def test_rdma_link_ib_init_without_subnet_manager() -> None:
    rec = _one("rdma-link", "daocloud-docs-cx5-active", RdmaLink)
    vs = _judge(dataclasses.replace(rec, state="INIT"))
    assert _ids(vs) == [("diagnose.rdma-link-not-active", "warning", "fabric.link-down")]
    assert "subnet manager" in vs[0].explanation


@pytest.mark.parametrize(
    "name", ["rxe-dev-48-no-userspace-driver-empty", "rxe-dev-75-arria10-empty"]
)
def test_ibv_devices_empty_listing_is_rdma_device_error(name: str) -> None:
    vs = _verdicts("ibv-devices", name)
    assert _ids(vs) == [("diagnose.no-rdma-device", "error", "host.rdma-device")]


def test_ibv_devices_empty_quotes_the_libibverbs_reason() -> None:
    (v,) = _verdicts("ibv-devices", "rxe-dev-48-no-userspace-driver-empty")
    assert "couldn't load driver 'rxe'" in v.message
