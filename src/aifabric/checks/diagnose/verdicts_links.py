"""Record verdicts on link and transceiver state: ``mlxlink`` (link, troubleshooting, module,
BER), SONiC ``show interfaces transceiver status|pm|presence``, ``ibdev2netdev``, ``rdma link``
and ``ibv_devices``.

Thresholds and their sources:

* mlxlink ``State`` is the PHY manager state; only ``Active`` means the link is up (mstflint
  ``mlxlink_maps.cpp``). ``Physical state`` is the auto-negotiation sub-state and reads
  ``ETH_AN_FSM_ENABLE`` on Active Ethernet ports or ``N/A`` on NVLink, so it is not judged alone.
* Troubleshooting ``Status Opcode`` families: the PRM ``monitor_opcode`` description shipped with
  mstflint (:data:`aifabric.evidence.mlxlink.OPCODE_FAMILIES`); 0 is "no issue", 1023 "info not
  available" (both printed green by mlxlink).
* Effective (post-FEC) BER above 1E-12: the default BER threshold of ibdiagnet's BER test
  (https://docs.nvidia.com/networking/display/ibdiagnetusermanualv219/Bit+Error+Rate+(BER)).
  No FEC-specific limit for the raw (pre-FEC) BER is published with mlxlink, so the raw BER is
  not judged.
* mlxlink ``Rx Power Current [dBm] ... [low..high]``: the low value is the module's *alarm*
  threshold (PRM ``rx_power_low_th``, "Alarm low RX Power threshold"); ``[0..0]`` means the module
  has no DOM thresholds (passive copper).
* SONiC ZR PM: sfpshow's own threshold crossing alerts, and the Pre-FEC BER high warning
  threshold the module reports.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from aifabric.checks.diagnose.verdict_support import _capture
from aifabric.checks.diagnose.verdicts import Verdict, verdict
from aifabric.evidence.base import Record
from aifabric.evidence.ethtool_pause import EthtoolPause
from aifabric.evidence.linux_net import IpLink
from aifabric.evidence.mlnx_qos import QosReport
from aifabric.evidence.mlxlink import (
    MlxlinkBer,
    MlxlinkLink,
    MlxlinkModule,
    MlxlinkTroubleshooting,
    speed_value,
)
from aifabric.evidence.rdma_tools import Ibdev2netdev, IbvDevicesList, RdmaLink
from aifabric.evidence.sonic_transceiver import SonicTransceiverPm, SonicTransceiverStatus
from aifabric.evidence.sysfs_rdma import SysfsRdmaDevices

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence

__all__ = ["EFFECTIVE_BER_MAX", "opcode_cause"]

EFFECTIVE_BER_MAX = 1e-12
"""ibdiagnet's default BER threshold (10^-12), applied to mlxlink's effective (post-FEC) BER."""

_MLXLINK_REF = "https://docs.nvidia.com/networking/display/mftv4320/mlxlink+Utility"
_SFPSHOW_REF = "https://github.com/sonic-net/sonic-utilities/blob/master/scripts/sfpshow"

# Troubleshooting opcode family → cause class (families from the PRM table in mlxlink.py).
_FAMILY_CAUSE = {
    "port closed by command": "fabric.link-down",
    "auto-negotiation failure": "fabric.link-down",
    "link training failure": "fabric.link-down",
    "logical mismatch between link partners": "fabric.link-down",
    "remote fault received": "fabric.link-down",
    "management forced the port down": "fabric.link-down",
    "module disabled by command": "fabric.link-down",
    "speed degradation": "fabric.slow-link",
    "internal error": "host.driver",
    "data collection timeout": "host.driver",
    "PHY firmware indication": "host.driver",
    "management firmware indication": "host.driver",
    "core/driver indication": "host.driver",
}


def opcode_cause(family: str) -> str:
    """Cause class of a Troubleshooting opcode family: cable/module families → fabric.optics."""
    return _FAMILY_CAUSE.get(family, "fabric.optics")


def _port(rec: MlxlinkLink | MlxlinkTroubleshooting | MlxlinkModule | MlxlinkBer) -> str:
    if rec.device and rec.port:
        return f"{rec.device} port {rec.port}"
    return rec.device or "the port"


# --------------------------------------------------------------------------------------------
# mlxlink


@verdict("mlxlink_link")
def _mlxlink_link(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, MlxlinkLink):
        return
    if rec.state is not None and rec.state.lower() != "active":
        phys = f", physical state {rec.physical_state}" if rec.physical_state else ""
        yield Verdict(
            id="diagnose.mlxlink-link-down",
            severity="error",
            cause="fabric.link-down",
            message=f"{_port(rec)} is {rec.state}{phys} (mlxlink), not Active",
            explanation=(
                "mlxlink's State is the port's PHY manager state: Active is the only state in "
                "which the link carries traffic. Polling means the port is looking for a "
                "partner (no cable, no light, far end down or a speed/FEC/cable it cannot "
                "agree on); Disable means the port is shut (by command or management)."
            ),
            fix=(
                "Read mlxlink's Troubleshooting Info for the firmware's own reason; check that "
                "the cable/module is seated and supported, that the far-end port is enabled at a "
                "common speed and FEC, and `mlxlink -d DEV -m` for module presence and light."
            ),
            refs=("S20", _MLXLINK_REF),
            confidence=0.8,
        )
        return
    best = _best_speed(rec)
    now = speed_value(rec.speed) if rec.speed else None
    if best is not None and now is not None and now[0] == best[0] and now[1] < best[1]:
        yield Verdict(
            id="diagnose.mlxlink-speed-below-capability",
            severity="warning",
            cause="fabric.slow-link",
            message=(
                f"{_port(rec)} runs at {rec.speed} while both the port and the cable support "
                f"{best[2]}"
            ),
            explanation=(
                "The port came up at a lower speed than the highest speed enabled on it and "
                "supported by its cable (Supported Info): the link partner, a forced speed, "
                "auto-negotiation or a marginal cable made it settle lower, and every transfer "
                "over it is slower."
            ),
            fix=(
                "Compare the far end's enabled speeds, remove forced speeds (`mlxlink --speeds`), "
                "check the Troubleshooting Info and the cable's compliance, then toggle the port."
            ),
            refs=("S20", _MLXLINK_REF),
            confidence=0.6,
        )


def _best_speed(rec: MlxlinkLink) -> tuple[str, float, str] | None:
    """Highest speed both enabled and supported by the cable (enabled only if the cable's is
    not printed): (family, value, name)."""
    enabled = {s: v for s in rec.enabled_speeds if (v := speed_value(s)) is not None}
    if rec.cable_speeds is not None:
        cable = {v for s in rec.cable_speeds if (v := speed_value(s)) is not None}
        enabled = {s: v for s, v in enabled.items() if v in cable}
    if not enabled:
        return None
    name, (family, value) = max(enabled.items(), key=lambda kv: kv[1][1])
    return family, value, name


@verdict("mlxlink_troubleshooting")
def _mlxlink_troubleshooting(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, MlxlinkTroubleshooting) or rec.status_opcode in (None, 0, 1023):
        return
    family = rec.family or "unknown"
    advice = rec.recommendation or "no recommendation printed"
    yield Verdict(
        id="diagnose.mlxlink-troubleshooting",
        severity="info" if rec.status_opcode == 128 else "warning",
        cause=opcode_cause(family),
        message=(
            f"{_port(rec)}: firmware troubleshooting opcode {rec.status_opcode} ({family}): "
            f'"{advice}"'
        ),
        explanation=(
            "mlxlink's Troubleshooting Info is the port firmware's diagnosis (PDDR monitor "
            "opcode): 0 means no issue was observed. Opcodes 0-1023 come from the PHY firmware "
            "(negotiation, training, signal integrity, cable compliance), 1024-2047 from the "
            "management firmware (cable unplugged, unsupported or shorted cable, module power, "
            "temperature, module state machine faults)."
        ),
        fix=f"Follow the recommendation ({advice}); for cable/module families reseat or swap "
        "the cable or module and compare with the far end.",
        refs=("S20", "S16", _MLXLINK_REF),
        confidence=0.7,
    )


@verdict("mlxlink_module")
def _mlxlink_module(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, MlxlinkModule):
        return
    if rec.rx_power_dbm and rec.thresholds_valid and rec.rx_power_low_dbm is not None:
        low = [(i + 1, p) for i, p in enumerate(rec.rx_power_dbm) if p < rec.rx_power_low_dbm]
        if low:
            lanes = ", ".join(f"lane {n} {p:g} dBm" for n, p in low)
            module = f"module {rec.vendor_pn}" if rec.vendor_pn else "the module"
            yield Verdict(
                id="diagnose.mlxlink-rx-power-low",
                severity="error",
                cause="fabric.optics",
                message=(
                    f"{_port(rec)}: {module} receives too little light "
                    f"({lanes}; low alarm {rec.rx_power_low_dbm:g} dBm)"
                ),
                explanation=(
                    "mlxlink -m prints the received power per lane with the module's own alarm "
                    "thresholds [low..high]. Below the low alarm the receiver is at or past its "
                    "sensitivity: bit errors, FEC corrections and flaps follow."
                ),
                fix=(
                    "Clean both connectors, reseat or replace the patch cord, check fibre type "
                    "and length against the module's reach, compare with the far end's Tx power."
                ),
                refs=("S16", "S20", _MLXLINK_REF),
                confidence=0.75,
            )
    faults = []
    if any(rec.tx_fault):
        faults.append(f"Tx fault on lane(s) {[i + 1 for i, f in enumerate(rec.tx_fault) if f]}")
    if rec.module_fw_fault:
        faults.append("module firmware fault")
    if rec.datapath_fw_fault:
        faults.append("data path firmware fault")
    if faults:
        yield Verdict(
            id="diagnose.mlxlink-module-fault",
            severity="warning",
            cause="fabric.optics",
            message=f"{_port(rec)}: module reports {', '.join(faults)}",
            explanation=(
                "The module's own fault flags (CMIS/SFF-8636) are set: a transmitter that "
                "cannot drive its laser or module firmware that faulted."
            ),
            fix="Reseat the module; replace it if the flag comes back.",
            refs=("S16", _MLXLINK_REF),
            confidence=0.6,
        )


@verdict("mlxlink_ber")
def _mlxlink_ber(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, MlxlinkBer):
        return
    eff_ber = rec.effective_ber if rec.effective_ber is not None else 0.0
    errors = rec.effective_errors or 0
    if eff_ber > EFFECTIVE_BER_MAX or errors > 0:
        since = (
            f" in {rec.time_since_clear_min:g} min since the counters were cleared"
            if rec.time_since_clear_min is not None
            else ""
        )
        ber = f"effective BER {eff_ber:.0E}" if rec.effective_ber is not None else "errors"
        yield Verdict(
            id="diagnose.mlxlink-effective-ber",
            severity="warning",
            cause="fabric.optics",
            message=f"{_port(rec)}: {errors} effective (post-FEC) physical errors{since}, {ber}",
            explanation=(
                "Effective physical errors are the bit errors FEC could not correct: frames are "
                "corrupted and dropped, which RDMA sees as retransmissions or timeouts. An "
                "effective BER above 1E-12 fails ibdiagnet's default BER threshold."
            ),
            fix=(
                "Clear the counters (`mlxlink -d DEV --pc`) and read them again under load; if "
                "they grow, clean or replace the cable/module, check Rx power (`mlxlink -m`)."
            ),
            refs=("S20", "S16", _MLXLINK_REF),
            confidence=0.6,
        )
    if rec.link_down_count:
        yield Verdict(
            id="diagnose.mlxlink-link-flaps",
            severity="warning",
            cause="fabric.link-down",
            message=(
                f"{_port(rec)}: link went down {rec.link_down_count} time(s) "
                f"(Link Down Counter), {rec.link_error_recovery_count or 0} error recoveries"
            ),
            explanation=(
                "The Link Down Counter counts the times the link dropped since the counters "
                "were cleared; a link that flaps stalls collectives and breaks RDMA queue pairs."
            ),
            fix=(
                "Correlate with kernel logs (`dmesg | grep -i link`); check the cable/module, "
                "the far-end port and the Troubleshooting Info."
            ),
            refs=("S20", _MLXLINK_REF),
            confidence=0.55,
        )


# --------------------------------------------------------------------------------------------
# SONiC transceivers


def _iface(rec: SonicTransceiverStatus | SonicTransceiverPm) -> str:
    return rec.interface or "the port"


@verdict("sonic_transceiver_status")
def _sonic_status(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, SonicTransceiverStatus) or not rec.applicable:
        return
    faults = []
    if rec.module_state and "fault" in rec.module_state.lower():
        faults.append(f"module state {rec.module_state}")
    cause = rec.module_fault_cause
    if cause and cause.lower() not in ("no fault detected", "n/a"):
        faults.append(f"fault cause '{cause}'")
    if rec.datapath_fw_fault:
        faults.append("data path firmware fault")
    if rec.module_fw_fault:
        faults.append("module firmware fault")
    tx_fault = sorted(n for n, lane in rec.lanes.items() if lane.tx_fault)
    if tx_fault:
        faults.append(f"Tx fault on media lane(s) {tx_fault}")
    if faults:
        yield Verdict(
            id="diagnose.sonic-transceiver-fault",
            severity="error",
            cause="fabric.optics",
            message=f"{_iface(rec)}: transceiver reports {'; '.join(faults)}",
            explanation=(
                "The module itself flags a fault (CMIS module fault state, firmware fault or a "
                "transmitter fault): it cannot carry the link reliably whatever the far end does."
            ),
            fix="Reseat the module; replace it if the fault persists; check its firmware.",
            refs=("S16", "S20", _SFPSHOW_REF),
            confidence=0.75,
        )
    los = sorted(n for n, lane in rec.lanes.items() if lane.rx_los)
    if los:
        dark_tx = rec.disabled_tx_channels not in (None, 0)
        extra = (
            f"; its own transmitters are disabled too (Disabled TX channels "
            f"{rec.disabled_tx_channels}), so the port may be shut or not initialised"
            if dark_tx
            else ""
        )
        yield Verdict(
            id="diagnose.sonic-transceiver-rx-los",
            severity="warning",
            cause="fabric.optics",
            message=f"{_iface(rec)}: Rx loss of signal on media lane(s) {los}{extra}",
            explanation=(
                "Rx LOS means no usable light arrives on those lanes: the far end is dark "
                "(shut, not initialised, wrong module), or the fibre is unplugged, dirty, "
                "crossed or too lossy. On an unused port this is expected."
            ),
            fix=(
                "Check the far-end port and module, clean and reseat the fibre, compare with "
                "`show interfaces transceiver eeprom --dom` Rx power."
            ),
            refs=("S16", "S20", _SFPSHOW_REF),
            confidence=0.6,
        )
    if rec.cmis_state is not None:
        state = rec.cmis_state.upper()
        if state == "FAILED":
            yield Verdict(
                id="diagnose.sonic-cmis-failed",
                severity="error",
                cause="fabric.optics",
                message=f"{_iface(rec)}: xcvrd CMIS state machine FAILED for the module",
                explanation=(
                    "xcvrd could not bring the module's data path up (application selection, "
                    "data path init or Tx enable did not complete): the port stays down."
                ),
                fix=(
                    "Check syslog for CmisManagerTask/xcvrd messages on the port; confirm the "
                    "module supports the configured speed/lanes; reseat or swap the module."
                ),
                refs=("S16", _SFPSHOW_REF),
                confidence=0.7,
            )
        elif state not in ("READY", "REMOVED", "UNKNOWN", "N/A"):
            yield Verdict(
                id="diagnose.sonic-cmis-not-ready",
                severity="info",
                cause="fabric.optics",
                message=f"{_iface(rec)}: CMIS state machine in {rec.cmis_state}, not READY",
                explanation=(
                    "xcvrd is still initialising the module's data path; a state that persists "
                    "means the module did not accept the configuration."
                ),
                fix="Read the status again; if it does not reach READY check xcvrd logs.",
                refs=("S16", _SFPSHOW_REF),
                confidence=0.4,
            )
    set_flags = rec.set_flags()
    if set_flags:
        yield Verdict(
            id="diagnose.sonic-transceiver-alarm-flags",
            severity="warning",
            cause="fabric.optics",
            message=f"{_iface(rec)}: module alarm/warning flags set: {', '.join(set_flags[:8])}",
            explanation=(
                "The module latched alarm or warning flags against its own thresholds (power, "
                "bias, temperature, voltage, pre-FEC BER)."
            ),
            fix="Read the DOM values (`show interfaces transceiver eeprom --dom`) and act on the "
            "quantity flagged (clean/replace fibre for Rx power, replace the module for bias).",
            refs=("S16", "S22", _SFPSHOW_REF),
            confidence=0.55,
        )


@verdict("sonic_transceiver_pm")
def _sonic_pm(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, SonicTransceiverPm) or not rec.applicable:
        return
    ber = rec.prefec_ber
    if ber is not None and ber.max is not None:
        limit = ber.high_warning if ber.high_warning else ber.high_alarm
        if (limit and ber.max > limit) or ber.tca_high:
            above = f", above the module's threshold {limit:.2E}" if limit else ""
            yield Verdict(
                id="diagnose.zr-prefec-ber-high",
                severity="warning",
                cause="fabric.optics",
                message=f"{_iface(rec)}: pre-FEC BER up to {ber.max:.2E}{above}",
                explanation=(
                    "The coherent module's pre-FEC BER is past its own warning threshold: the "
                    "FEC margin is being used up and uncorrectable frames follow."
                ),
                fix="Check OSNR/Rx power in the same table, the line system and the fibre.",
                refs=("S16", "S22", _SFPSHOW_REF),
                confidence=0.6,
                line=ber.line,
            )
    crossed = [
        f"{p.parameter} {side}"
        for p in rec.params.values()
        if p.parameter != "Pre-FEC BER"
        for side, flag in (("high", p.tca_high), ("low", p.tca_low))
        if flag
    ]
    if crossed:
        yield Verdict(
            id="diagnose.zr-pm-threshold-crossing",
            severity="warning",
            cause="fabric.optics",
            message=f"{_iface(rec)}: PM threshold crossing alert(s): {', '.join(crossed)}",
            explanation=(
                "sfpshow flags a parameter whose min/max over the PM interval crossed the "
                "module's alarm threshold (Threshold Crossing Alert-High/-Low)."
            ),
            fix="Check the flagged optical parameters (power, OSNR, CD, DGD) along the path.",
            refs=("S16", "S22", _SFPSHOW_REF),
            confidence=0.5,
        )


@verdict("transceiver_presence")
def _presence(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    present = getattr(rec, "present", None)
    if present is not False:
        return
    name = getattr(rec, "interface", None) or "a port"
    yield Verdict(
        id="diagnose.transceiver-not-present",
        severity="info",
        cause="fabric.optics",
        message=f"{name}: no transceiver present",
        explanation=(
            "The cage is empty (or the module is not detected). That is normal for an unused "
            "port; a port that should carry traffic cannot come up without a module."
        ),
        fix="If the port is in use, insert or reseat the module or cable.",
        refs=("S16",),
        confidence=0.4,
    )


# --------------------------------------------------------------------------------------------
# host RDMA tools

_UNUSED_NOTE = (
    " A port with no cable or not meant to be used is commonly down; this matters only if the "
    "port (or NCCL_IB_HCA) is supposed to carry traffic."
)


@verdict("ibdev2netdev")
def _ibdev2netdev(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, Ibdev2netdev) or rec.netdev_state.lower() != "down":
        return
    ib = f", IB port state {rec.port_state}" if rec.port_state else ""
    yield Verdict(
        id="diagnose.rdma-netdev-down",
        severity="warning",
        cause="fabric.link-down",
        message=f"{rec.device} port {rec.port} ==> {rec.netdev} is Down{ib}",
        explanation=(
            "ibdev2netdev prints the carrier of the net device behind the RDMA port: Down means "
            "no link (no cable or light, far end down, or the interface administratively down)."
            + _UNUSED_NOTE
        ),
        fix=(
            f"`ip link show {rec.netdev}` and `ibstat {rec.device}`; bring the interface up, "
            "check cable and far-end port."
        ),
        refs=("S20",),
        confidence=0.5,
    )


@verdict("rdma_link")
def _rdma_link(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, RdmaLink) or rec.is_up or rec.state is None:
        return
    if rec.physical_state == "LINK_UP" and rec.state in ("INIT", "ARMED"):
        why = (
            "The physical link is up but the InfiniBand port is still "
            f"{rec.state}: no subnet manager has configured it (opensm not running or not "
            "reaching this port)."
        )
    else:
        why = (
            f"The port is {rec.state} with physical state {rec.physical_state}: POLLING looks "
            "for a partner (cable, light or far end), DISABLED is shut or has nothing attached."
            + _UNUSED_NOTE
        )
    netdev = f" ({rec.netdev})" if rec.netdev else ""
    yield Verdict(
        id="diagnose.rdma-link-not-active",
        severity="warning",
        cause="fabric.link-down",
        message=(
            f"rdma link {rec.device}/{rec.port}{netdev}: state {rec.state}, "
            f"physical_state {rec.physical_state}"
        ),
        explanation=why,
        fix=(
            "Check the cable and far-end port (`ibstat`, `mlxlink`); for INIT/ARMED start or "
            "fix the subnet manager."
        ),
        refs=("S20",),
        confidence=0.5,
    )


@verdict("ibv_devices")
def _ibv_devices(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, IbvDevicesList) or rec.devices:
        return
    if not rec.header_seen and rec.error is None:
        return
    why = f" ({rec.error})" if rec.error else ""
    notes = "; ".join(w.split("Warning: ", 1)[-1] for w in rec.verbs_warnings[:3])
    yield _no_rdma_device(
        f"{rec.tool} lists no RDMA device{why}" + (f"; libibverbs: {notes}" if notes else "")
    )


@verdict("sysfs_rdma_devices")
def _sysfs_devices(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if isinstance(rec, SysfsRdmaDevices) and not rec.devices:
        yield _no_rdma_device(
            "/sys/class/infiniband is empty: the kernel registered no RDMA device"
        )


def _no_rdma_device(message: str) -> Verdict:
    return Verdict(
        id="diagnose.no-rdma-device",
        severity="error",
        cause="host.rdma-device",
        message=message,
        explanation=(
            "The verbs library found no device it can open in this environment, so NCCL, UCX "
            "and MPI fall back to TCP sockets or fail. Usual causes: the user-space provider "
            "(libmlx5, rxe) is missing or mismatched, the kernel driver is not loaded, or the "
            "container was started without /dev/infiniband."
        ),
        fix=(
            "Install the rdma-core providers matching the kernel driver (ibverbs-providers / "
            "libibverbs), load the driver (mlx5_ib, rdma_rxe), pass /dev/infiniband into the "
            "container, then run ibv_devices again."
        ),
        refs=("S20", "https://github.com/linux-rdma/rdma-core"),
        confidence=0.75,
    )


# -- ip link: a child interface above its parent's MTU ---------------------------------------------

_IPOIB_DOC = "https://docs.kernel.org/infiniband/ipoib.html"
_IPOIB_LARGER = ", with connected mode or a 4096-byte IB MTU on the fabric for a larger IPoIB MTU"
_VLAN_MTU = "https://github.com/torvalds/linux/blob/v6.8/net/8021q/vlan_dev.c (vlan_dev_change_mtu)"


@verdict("ip_link")
def _child_mtu_above_parent(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    """``CHILD@PARENT`` (a VLAN, an IPoIB P_Key child, a macvlan) whose MTU is above its
    parent's, in the same ``ip link`` capture: its larger packets cannot leave through the
    parent."""
    if not isinstance(rec, IpLink) or rec.parent is None or rec.mtu_bytes is None:
        return
    parent = next(
        (r for r in _capture(rec, ev) or () if isinstance(r, IpLink) and r.name == rec.parent),
        None,
    )
    if parent is None or parent.mtu_bytes is None or rec.mtu_bytes <= parent.mtu_bytes:
        return
    ipoib = rec.link_type == "infiniband"
    why = (
        f"An IPoIB child sends through its parent's queue pair: in datagram mode the MTU is the "
        f"InfiniBand link MTU minus the 4-byte IPoIB header (2044 on a 2048 fabric, 4092 on "
        f"4096; {_IPOIB_DOC}), so {parent.name}'s {parent.mtu_bytes} caps every packet"
        if ipoib
        else "A VLAN or macvlan child transmits through its parent, so the parent's MTU caps "
        f"every frame; the kernel refuses a VLAN MTU above the real device's ({_VLAN_MTU})"
    )
    yield Verdict(
        id="diagnose.child-mtu-above-parent",
        severity="error",
        cause="fabric.mtu",
        message=(
            f"{rec.name} has MTU {rec.mtu_bytes}, above its parent {parent.name}'s "
            f"{parent.mtu_bytes}: packets larger than {parent.mtu_bytes} bytes are lost"
        ),
        explanation=(
            f"{why}. Small packets pass, so ping and connection set-up work while bulk "
            "transfers (TCP with full-size segments, iperf3, NCCL over sockets) stall at 0 "
            "bytes/s or crawl on retransmissions (S11, S21)."
        ),
        fix=(
            f"`ip link set {rec.name} mtu {parent.mtu_bytes}` on every host of the subnet (or "
            f"raise {parent.name}'s MTU first{_IPOIB_LARGER if ipoib else ''}); verify with "
            f"`ping -M do -s {parent.mtu_bytes - 28} PEER`."
        ),
        refs=("S11", "S21"),
        confidence=0.75,
    )


# -- ethtool -a: 802.3x global pause ---------------------------------------------------------------

_ETHTOOL_MAN = "https://man7.org/linux/man-pages/man8/ethtool.8.html"


@verdict("ethtool_pause")
def _global_pause(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    """802.3x pause in effect on a port: an error beside PFC on the same host (two flow-control
    schemes on one link), a warning when its counters show pause frames, else an info note."""
    if not isinstance(rec, EthtoolPause) or not rec.pause_on:
        return
    dirs = "/".join(d for d, on in (("RX", rec.rx), ("TX", rec.tx)) if on) or "negotiated"
    pfc = sorted(
        {p for i in ev.items if isinstance(i.record, QosReport)
         for p in i.record.pfc_enabled_priorities}
    )  # fmt: skip
    frames = sum(v for k, v in rec.statistics.items() if "pause_frames" in k)
    why = (
        "An 802.3x PAUSE frame stops every priority of the link for its quanta, so storage, "
        "management and TCP traffic stall with the RDMA traffic; PFC (802.1Qbb) pauses only "
        "the lossless priority, and S12 asks for PFC on the RoCE priority alone. RX on means the "
        "port obeys PAUSE frames from its peer, TX on that it sends them when its receive "
        f"buffer fills ({_ETHTOOL_MAN}, -a/-A)."
    )
    if pfc:
        yield Verdict(
            id="diagnose.global-pause-with-pfc",
            severity="error",
            cause="config.qos",
            message=(
                f"{rec.interface}: 802.3x global pause is on ({dirs}) while PFC is enabled on "
                f"priority {', '.join(map(str, pfc))} on this host: two flow-control schemes "
                "on one link"
            ),
            explanation=f"{why} With PFC configured, global pause should be off on the port "
            "and on the switch port facing it.",
            fix=f"`ethtool -A {rec.interface} rx off tx off` (and autoneg off), persistent in the "
            "network configuration; keep PFC on the RoCE priority (mlnx_qos --pfc) and check "
            "the switch port has flow control off.",
            refs=("S12", "S20"),
            confidence=0.7,
        )
        return
    yield Verdict(
        id="diagnose.global-pause-on",
        severity="warning" if frames else "info",
        cause="fabric.pfc-congestion" if frames else "config.qos",
        message=(
            f"{rec.interface}: 802.3x global pause is on ({dirs})"
            + (f" and {frames} pause frames were counted" if frames else "")
            + ": every priority of the link stops when a PAUSE frame arrives"
        ),
        explanation=why,
        fix=(
            f"On a RoCE port: `ethtool -A {rec.interface} rx off tx off` and PFC on the RoCE "
            "priority only (S12); on an ordinary Ethernet port global pause may be intended."
        ),
        refs=("S12",),
        confidence=0.5 if frames else 0.3,
    )


@verdict("mlnx_qos")
def _mlnx_qos_unsupported(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, QosReport) or not rec.unsupported or rec.trust or rec.tcs:
        return
    where = rec.interface or "this interface"
    yield Verdict(
        id="diagnose.mlnx-qos-unsupported",
        severity="warning",
        cause="config.qos",
        message=(
            f"mlnx_qos cannot read or set QoS on {where}: "
            f"{', '.join(rec.unsupported)} not supported; lossless settings (trust, PFC, "
            "buffers, ETS) live on the ConnectX physical port, not on a VLAN, bond or other "
            "upper device, and need the mlx5 driver's DCB support"
        ),
        explanation=(
            "mlnx_qos (Mellanox/mlnx-tools, python/mlnx_qos) asks the interface's driver for "
            "each feature through DCB netlink and prints '<feature> is not supported on your "
            "system' when it does not answer: the interface is not an mlx5 port (a VLAN, a bond, "
            "a VF without QoS rights, another vendor's NIC) or the driver was built without "
            "DCB. Nothing was configured, whatever the script that ran it believed (S12)."
        ),
        fix=(
            "Run mlnx_qos -i on the physical port under the VLAN or bond (ip -d link show "
            "IFACE shows it; for a bond, each member), e.g. mlnx_qos -i ens1f0 --trust dscp "
            "--pfc 0,0,0,1,0,0,0,0; on a VF, set QoS on the PF."
        ),
        refs=("S12", "S14"),
        confidence=0.5,
    )
