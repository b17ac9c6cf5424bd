"""Record verdicts on PCIe links (lspci, the kernel's bandwidth line, AER) and on mlx5
kernel log events (module, link, health): see :mod:`.verdicts_core`."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from aifabric.catalog import builtin_catalog
from aifabric.checks.diagnose.verdict_support import (
    _AER_SRC,
    _LSPCI_SRC,
    _MLX5_EN_MAIN,
    _MLX5_EVENTS,
    _MLX5_HEALTH,
    _PCI_C,
    Severity,
    _capture,
    _fmt,
    _index,
)
from aifabric.checks.diagnose.verdicts import Verdict, verdict
from aifabric.evidence.base import Record
from aifabric.evidence.p2p_bandwidth import SAMPLE_SOURCE, P2PMatrix
from aifabric.evidence.pcie import KernelEvent, PciDevice, PcieBandwidth, pcie_generation

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence


__all__: list[str] = []


# -- PCIe ----------------------------------------------------------------------------------------

_GPU_CLASSES = frozenset({"VGA compatible controller", "3D controller", "Display controller"})
_GPU_DRIVERS = frozenset({"nvidia", "amdgpu", "nouveau"})


def _encoding(gen: int | None, speed_gts: float) -> float:
    """Payload share of the line code: catalog value of the generation, else 8b/10b up to
    5 GT/s and 128b/130b above."""
    if gen is not None:
        spec = builtin_catalog().pcie.get(gen)
        if spec is not None:
            return spec.encoding_efficiency
    return 0.8 if speed_gts <= 5.0 else 128 / 130


def _raw_gbps(speed_gts: float, width: int) -> float:
    """Raw per-direction bandwidth after line encoding, Gb/s: GT/s x lanes x efficiency."""
    return speed_gts * width * _encoding(pcie_generation(speed_gts), speed_gts)


def _nic_line_rate(description: str | None) -> tuple[str, float] | None:
    """``Mellanox ... [ConnectX-7]`` → (``ConnectX-7``, 400.0) from the built-in catalog."""
    if not description:
        return None
    # the final "[...]": the first "[" after the last "]" but one (re.search(r"\[([^\]]+)\]\s*$")
    # found the same, but read to the end of the line from every "[": quadratic on a long line)
    s = description.rstrip()
    close = len(s) - 1
    start = s.find("[", s.rfind("]", 0, close) + 1, close) if s.endswith("]") else -1
    if start < 0 or start + 1 == close:
        return None
    name = s[start + 1 : close].strip().replace(" ", "-").casefold()
    for key, nic in builtin_catalog().nics.items():
        if key.casefold() == name:
            return key, nic.max_speed_gbps
    return None


def _pcie_verdict(
    *,
    device: str,
    cap: tuple[float, int],
    now: tuple[float, int],
    gpu: bool,
    nic: tuple[str, float] | None,
    limiting: str | None = None,
) -> Verdict | None:
    (cs, cw), (ss, sw) = cap, now
    if ss >= cs and sw >= cw:
        return None
    cap_bw, now_bw = _raw_gbps(cs, cw), _raw_gbps(ss, sw)
    lost = cap_bw - now_bw
    pct = round(100 * lost / cap_bw) if cap_bw else 0
    cap_gen, now_gen = pcie_generation(cs), pcie_generation(ss)
    gens_down = (cap_gen - now_gen) if cap_gen is not None and now_gen is not None else 0
    severity: Severity
    if sw < cw:
        severity, why = (
            "warning",
            (
                "fewer lanes than the device and slot have: a lane that failed to train, a riser "
                "or adapter wired narrower, a card in a narrower slot"
            ),
        )
    elif gpu:
        severity, why = (
            "info",
            (
                "GPUs lower the link speed when idle (PCIe power management) and raise it under "
                "load: read LnkSta while a job runs before acting"
            ),
        )
    elif nic is not None and now_bw < nic[1]:
        severity, why = (
            "warning",
            (
                f"at this speed the link cannot carry one {nic[0]} port at its {_fmt(nic[1])} Gb/s "
                "line rate"
            ),
        )
    elif gens_down >= 2:
        severity, why = (
            "warning",
            (
                f"{gens_down} generations below the device's capability: far more than a slot one "
                "generation older explains; a link that trained down (signal integrity: riser, "
                "retimer, OCP adapter, BIOS setting)"
            ),
        )
    else:
        severity, why = (
            "info",
            (
                "one generation below the device's capability at full width: expected when the "
                "slot (root port or switch) is one generation older, a link that trained down "
                "otherwise"
            ),
        )
    at = f" (limited by the link at {limiting})" if limiting else ""
    return Verdict(
        id="diagnose.pcie-link-degraded",
        severity=severity,
        cause="host.pcie",
        message=(
            f"{device}: PCIe link at {_fmt(ss)} GT/s x{sw} ({_fmt(now_bw)} Gb/s) below its "
            f"capability {_fmt(cs)} GT/s x{cw} ({_fmt(cap_bw)} Gb/s){at}: {_fmt(lost)} Gb/s "
            f"({pct}%) lost; {why}"
        ),
        explanation=(
            "Per-direction PCIe bandwidth = transfer rate (GT/s) x lanes x line-code "
            "efficiency: 8b/10b (0.8) for Gen1/Gen2 (2.5/5 GT/s), 128b/130b (0.9846) for "
            "Gen3-Gen5 (8/16/32 GT/s), 236/256 for Gen6 FLIT mode (catalog/data/pcie.yaml); "
            f"Gen4 x16 = 16 x 16 x 128/130 = 252.0 Gb/s. LnkCap is what the device supports, "
            f"LnkSta what the link trained at (pciutils {_LSPCI_SRC}); the kernel prints the "
            f"same comparison for the whole path at probe time ({_PCI_C}, "
            "__pcie_print_link_status). A NIC whose PCIe link carries less than its line rate "
            "caps RDMA and GPUDirect bandwidth at the PCIe figure (S9)."
        ),
        fix=(
            "Compare LnkCap of the upstream bridge/root port (`lspci -vv -s BRIDGE`): if it "
            "supports the device's speed and width, reseat the card, move it to a x16 slot wired "
            "to the CPU, remove risers/adapters, check the BIOS slot setting (Gen/bifurcation) "
            "and retimers; `setpci`/a reboot retrains the link. For GPUs, read LnkSta under load."
        ),
        refs=("S9", "S20", "S23"),
        confidence=0.55 if severity == "warning" else 0.3,
    )


def _fabric_slot_gen(ev: Evidence) -> int | None:
    """The lowest PCIe generation the fabric file declares for NIC slots."""
    fab = ev.fabric
    if fab is None:
        return None
    gens = [nic.pcie_gen for s in fab.servers for nic in s.nics]
    return min(gens) if gens else None


_NET_CLASSES = frozenset({"Ethernet controller", "Infiniband controller", "Network controller"})


@verdict("pci_device")
def _pci_link(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, PciDevice):
        return
    cs, cw, ss, sw = rec.lnkcap_speed_gts, rec.lnkcap_width, rec.lnksta_speed_gts, rec.lnksta_width
    if cs is not None and cw is not None and ss is not None and sw is not None:
        gpu = rec.device_class in _GPU_CLASSES or rec.kernel_driver in _GPU_DRIVERS
        nic = _nic_line_rate(rec.description) if rec.device_class in _NET_CLASSES else None
        v = _pcie_verdict(
            device=f"{rec.address or rec.bdf or 'device'} ({rec.description or rec.device_class})",
            cap=(cs, cw),
            now=(ss, sw),
            gpu=gpu,
            nic=nic,
        )
        if v is not None and not gpu and rec.device_class in _NET_CLASSES:
            v = _with_fabric(v, ss, ev)
        if v is not None:
            yield v
    yield from _aer(rec)


_UE_FAULTS = (
    "DLP", "SDES", "TLP", "FCP", "CmpltTO", "CmpltAbrt", "UnxCmplt", "RxOF", "MalfTLP",
    "ECRC", "ACSViol", "UncorrIntErr",
)  # fmt: skip
"""Uncorrectable AER status bits that mean a fault (UnsupReq is left out: config-space probes
of absent functions set it on healthy systems, and AdvNonFatalErr accompanies it)."""
_CE_FAULTS = ("RxErr", "BadTLP", "BadDLLP", "Rollover", "Timeout", "CorrIntErr", "HeaderOF")


def _aer(rec: PciDevice) -> Iterator[Verdict]:
    ue = [b for b in rec.aer_uncorrectable if b in _UE_FAULTS]
    ce = [b for b in rec.aer_correctable if b in _CE_FAULTS]
    fatal = "FatalErr" in rec.devsta_errors
    if not (ue or ce or fatal):
        return
    severity: Severity = "warning" if ue or fatal else "info"
    bits = []
    if ue:
        bits.append("UESta " + " ".join(f"{b}+" for b in ue))
    if ce:
        bits.append("CESta " + " ".join(f"{b}+" for b in ce))
    if fatal and not ue:
        bits.append("DevSta FatalErr+")
    yield Verdict(
        id="diagnose.pcie-aer-errors",
        severity=severity,
        cause="host.pcie",
        message=(
            f"{rec.address or rec.bdf or 'device'} ({rec.description or rec.device_class}): "
            f"PCIe errors latched: {'; '.join(bits)}"
        ),
        explanation=(
            "Advanced Error Reporting status bits are sticky: set by the first error since they "
            "were last cleared. Uncorrectable errors (data link protocol, surprise down, "
            "poisoned or malformed TLPs, completion timeouts) lose or corrupt transactions and "
            "can hang DMA; correctable ones (receiver errors, bad TLP/DLLP, replay timer "
            "expiry/rollover) were repaired by replay but mean a marginal link that loses "
            "bandwidth. UnsupReq and AdvNonFatalErr are ignored: probing absent functions sets "
            f"them on healthy systems. Bit names: pciutils {_AER_SRC}."
        ),
        fix=(
            "Clear the bits (`setpci -s BDF ECAP_AER+0x04.l=0xffffffff` for UESta, "
            "`ECAP_AER+0x10.l=0xffffffff` for CESta) and read them again under load; check "
            "`dmesg | grep -i aer` for repeats, reseat the card, check risers/retimers and "
            "update the BIOS/firmware if they come back."
        ),
        refs=("S9", "S20"),
        confidence=0.45 if severity == "warning" else 0.25,
    )


@verdict("pcie_bandwidth")
def _pcie_bandwidth(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, PcieBandwidth) or not rec.limited:
        return
    cs, cw, ss, sw = rec.capable_speed_gts, rec.capable_width, rec.speed_gts, rec.width
    if cs is None or cw is None or ss is None or sw is None:
        return
    gpu = rec.driver in _GPU_DRIVERS
    nic = _nic_from_firmware(rec, ev) if rec.driver == "mlx5_core" else None
    v = _pcie_verdict(
        device=f"{rec.device or 'device'} ({nic[0] if nic else rec.driver or 'kernel'})",
        cap=(cs, cw),
        now=(ss, sw),
        gpu=gpu,
        nic=nic,
        limiting=rec.limiting_device,
    )
    if v is not None and rec.driver == "mlx5_core":
        v = _with_fabric(v, ss, ev)
    if v is not None:
        yield v


_MLX5_FW_FAMILY = {20: "ConnectX-6", 22: "ConnectX-6-Dx", 28: "ConnectX-7", 40: "ConnectX-8"}
"""Firmware major version -> adapter family (the first number of an mlx5 firmware version
names the chip's firmware branch: 20.x ConnectX-6, 22.x ConnectX-6 Dx, 28.x ConnectX-7, 40.x
ConnectX-8; only families in the built-in catalog are listed)."""


def _nic_from_firmware(rec: PcieBandwidth, ev: Evidence) -> tuple[str, float] | None:
    """The adapter's catalog line rate, from the ``firmware version:`` line of the same
    device in the capture."""
    for r in _capture(rec, ev) or []:
        major = re.match(r"(\d+)\.", r.fw_version or "") if isinstance(r, KernelEvent) else None
        if isinstance(r, KernelEvent) and r.device == rec.device and major is not None:
            family = _MLX5_FW_FAMILY.get(int(major.group(1)))
            nic = builtin_catalog().nics.get(family) if family else None
            if family is not None and nic is not None:
                return family, nic.max_speed_gbps
    return None


def _with_fabric(v: Verdict, now_speed: float, ev: Evidence) -> Verdict:
    """An ``info`` (one generation down) made a warning when the fabric file declares the
    NIC slots faster than the link trained."""
    slot_gen = _fabric_slot_gen(ev)
    now_gen = pcie_generation(now_speed)
    if v.severity != "info" or slot_gen is None or now_gen is None or now_gen >= slot_gen:
        return v
    return Verdict(
        id=v.id,
        severity="warning",
        cause=v.cause,
        message=f"{v.message}; the fabric file says the NIC slots run at Gen{slot_gen}",
        explanation=v.explanation,
        fix=v.fix,
        refs=v.refs,
        confidence=0.5,
    )


# -- kernel log events ---------------------------------------------------------------------------

_DRIVER_CATEGORIES: dict[str, tuple[Severity, str]] = {
    "health": ("error", "firmware health failure"),
    "probe-failed": ("error", "driver probe failed"),
    "cmd-timeout": ("warning", "firmware command timeout"),
    "tx-timeout": ("warning", "transmit queue timeout"),
    "cmd-error": ("warning", "firmware command failed"),
}


def _card(device: str | None) -> str | None:
    """``0000:0d:00.3`` → ``0000:0d:00``: the functions of one adapter share a verdict."""
    if device and re.fullmatch(
        r"(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]", device
    ):
        return device.rsplit(".", 1)[0]
    return device


@dataclass(slots=True)
class _KernelLog:
    """What the kernel events of one capture say, computed once for all of them."""

    last_link: dict[tuple[str | None, str | None], KernelEvent] = field(default_factory=dict)
    """The last 'Link up'/'Link down' of each (device, netdev)."""
    downs: dict[tuple[str | None, str | None], list[KernelEvent]] = field(default_factory=dict)
    """Every link-down of each (device, netdev), in order."""
    last_module: dict[tuple[str | None, int | None], KernelEvent] = field(default_factory=dict)
    """The last port module event of each (device, module)."""
    by_card: dict[tuple[str | None, str], list[KernelEvent]] = field(default_factory=dict)
    """The events of each (adapter, category), in order."""


def _kernel_log(rec: KernelEvent, ev: Evidence) -> _KernelLog:
    records = _capture(rec, ev)
    if records is None:
        records = [rec]
    key = ("kernel", id(records[0]) if records else 0)
    idx = _index(ev)
    cached = idx.memo.get(key)
    if isinstance(cached, _KernelLog):
        return cached
    log = _KernelLog()
    for r in records:
        if not isinstance(r, KernelEvent):
            continue
        if r.category in ("link-up", "link-down"):
            log.last_link[(r.device, r.netdev)] = r
            if r.category == "link-down":
                log.downs.setdefault((r.device, r.netdev), []).append(r)
        elif r.category == "module-event":
            log.last_module[(r.device, r.module)] = r
        log.by_card.setdefault((_card(r.device), r.category), []).append(r)
    idx.memo[key] = log
    return log


def _first_of(rec: KernelEvent, ev: Evidence) -> list[KernelEvent]:
    """The events of ``rec``'s adapter and category when ``rec`` is the first of them, else
    ``[]`` (one verdict per adapter and kind of event)."""
    same = _kernel_log(rec, ev).by_card.get((_card(rec.device), rec.category), [])
    return same if same and same[0] is rec else []


@verdict("kernel_event")
def _kernel_event(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, KernelEvent):
        return
    dev = rec.device or rec.driver or "device"
    if rec.category == "module-event":
        yield from _module_event(rec, ev, dev)
    elif rec.category == "link-down":
        yield from _link_down_event(rec, ev, dev)
    elif rec.category == "pcie-power" and "insufficient power" in rec.message:
        yield Verdict(
            id="diagnose.pcie-slot-power",
            severity="warning",
            cause="host.pcie",
            message=f"{dev}: {rec.message.split('): ', 1)[-1]}",
            explanation=(
                "mlx5 reads the power the PCIe slot advertises (MPEIN register) and warns when "
                "it is below what the adapter needs: the card may not power its modules or may "
                f"throttle (mlx5_pcie_event in {_MLX5_EVENTS})."
            ),
            fix=(
                "Move the adapter to a slot that advertises enough power (75 W for a standard "
                "x16 slot), or connect the auxiliary power the riser/OCP adapter needs."
            ),
            refs=("S9", "S20"),
            confidence=0.5,
        )
    elif rec.category in _DRIVER_CATEGORIES and (same := _first_of(rec, ev)):
        severity, what = _DRIVER_CATEGORIES[rec.category]
        funcs = sorted({r.device for r in same if r.device})
        also = f" (and {len(funcs) - 1} more function(s) of the adapter)" if len(funcs) > 1 else ""
        yield Verdict(
            id="diagnose.nic-driver-error",
            severity=severity,
            cause="host.driver",
            message=f"{dev}{also}: {what}: {rec.message}",
            explanation=(
                "The NIC driver reports that the adapter or its firmware stopped answering "
                "(health poll misses and syndromes, command timeouts), that the device could "
                "not be initialised, or that a transmit queue stalled: the host's NIC, not the "
                f"fabric (mlx5 health.c {_MLX5_HEALTH}). Only the first such line per device is "
                "reported."
            ),
            fix=(
                "Read the whole kernel log around the line (`dmesg -T`), check the firmware "
                "version against the driver's release notes and update it, collect `mlxfwreset`"
                "/`devlink health` reports; a probe failure needs the driver/firmware pair "
                "fixed before anything else."
            ),
            refs=("S20", "S22"),
            confidence=0.55,
        )
    elif rec.category == "bar-assign" and _first_of(rec, ev):
        vf = re.search(r"\bBAR (?:[7-9]|1[0-2])\b", rec.message) is not None
        yield Verdict(
            id="diagnose.pcie-bar-unassigned",
            severity="warning",
            cause="host.pcie",
            message=(
                f"{dev}: {rec.message}"
                + (" (an SR-IOV VF BAR: the virtual functions cannot be enabled)" if vf else "")
            ),
            explanation=(
                "The PCI core found no room in the bridge's memory window for one of the "
                "device's BARs. BARs 0-5 are the device's own (it will not work); 7-12 are the "
                "SR-IOV VF BARs, so VFs (SR-IOV CNI, RDMA shared-device plugins) cannot be "
                "created. Usual cause: 64-bit MMIO above 4 GB or SR-IOV support disabled in the "
                "BIOS, or a firmware exposing more VFs than the window holds (Linux "
                "drivers/pci/setup-bus.c)."
            ),
            fix=(
                "Enable 'Above 4G Decoding' / 'MMIO high' and 'SR-IOV support' in the BIOS, or "
                "boot with pci=realloc; lower NUM_OF_VFS with mlxconfig if the window stays "
                "too small; check with `lspci -vvv -s BDF` (Region / VF BAR lines)."
            ),
            refs=("S20",),
            confidence=0.5,
        )
    elif rec.category == "aer" and (same := _first_of(rec, ev)):
        corrected = "Corrected" in rec.message and "Uncorrected" not in rec.message
        reports = sum(1 for e in same if "PCIe Bus Error" in e.message) or 1
        repeated = reports > 1
        yield Verdict(
            id="diagnose.pcie-aer-errors",
            severity="info" if corrected and not repeated else "warning",
            cause="host.pcie",
            message=f"{dev}: {rec.message}"
            + (f" ({reports} error reports in the log)" if repeated else ""),
            explanation=(
                "The kernel's AER driver logged a PCIe error on this device; uncorrected "
                "errors lose transactions, corrected ones mean link-level retries on a "
                "marginal link, and corrected errors that repeat are the link degrading "
                f"(one alone can be a single glitch). Bit names: pciutils {_AER_SRC}."
            ),
            fix=(
                "Count how often it repeats (`dmesg | grep -c AER`), reseat the card, check "
                "risers and retimers, and update the BIOS/firmware."
            ),
            refs=("S9", "S20"),
            confidence=0.35,
        )


def _module_event(rec: KernelEvent, ev: Evidence, dev: str) -> Iterator[Verdict]:
    if _kernel_log(rec, ev).last_module.get((rec.device, rec.module)) is not rec:
        return  # judged at the module's last event (a later plug supersedes an unplug)
    status = rec.module_status or ""
    if status.startswith("Cable plugged"):
        return
    error = status.startswith("Cable error")
    yield Verdict(
        id="diagnose.nic-module-event",
        severity="error" if error else "warning",
        cause="fabric.optics",
        message=f"{dev}: port module {rec.module}: {status}",
        explanation=(
            "mlx5 logs every change of a port's pluggable module: 'Cable plugged', 'Cable "
            "unplugged', 'Cable disabled', or 'Cable error' with the reason (power budget "
            "exceeded, high temperature, bad or shorted cable/module, unsupported or "
            f"unreadable EEPROM, bus stuck) ({_MLX5_EVENTS}, port_module). A module in error "
            "keeps its link down; an unplugged module leaves the port without a link (an "
            "unused second port of a dual-port card is often unplugged, hence a warning)."
        ),
        fix=(
            "Reseat or replace the module/cable named; for 'Power budget exceeded' use a "
            "module within the adapter's power class, for 'High Temperature' improve airflow "
            "or use passive DAC; check `ethtool -m` afterwards."
        ),
        refs=("S16", "S20"),
        confidence=0.6 if error else 0.35,
    )


LINK_FLAPS = 2
"""Link-down events of one port in one log that make it a flapping link: one down and up is a
reboot, a cable moved or a switch port restarted; a second is the link going on and off."""


def _link_down_event(rec: KernelEvent, ev: Evidence, dev: str) -> Iterator[Verdict]:
    log = _kernel_log(rec, ev)
    downs = log.downs.get((rec.device, rec.netdev), [])
    name = f"{dev}{' ' + rec.netdev if rec.netdev else ''}"
    if len(downs) >= LINK_FLAPS and downs[0] is rec:
        span = ""
        if downs[-1].time_s is not None and rec.time_s is not None:
            span = f" within {downs[-1].time_s - rec.time_s:.0f} s"
        yield Verdict(
            id="diagnose.nic-link-flap",
            severity="warning",
            cause="fabric.link-down",
            message=f"{name}: the link went down {len(downs)} times{span} (a flapping link)",
            explanation=(
                "The NIC driver logs every carrier change ('NIC Link is Down' / 'Link is Up', "
                "mlx5e's 'Link down' / 'Link up'). One down and up is a reboot, a moved cable or "
                "a restarted switch port; a link that keeps going down drops every RDMA queue "
                "pair and TCP connection across it each time: a marginal cable or module, a "
                "switch port error-disabling, autonegotiation or FEC that does not settle, or "
                "the NIC's driver or firmware."
            ),
            fix=(
                "Read the optics and errors on both ends (`ethtool -m IF`, `ethtool -S IF | grep "
                "-i -e err -e fec`, the switch port's counters and log); swap the cable or "
                "module; if the flaps persist on known-good optics, update the NIC firmware and "
                "driver (or try another kernel)."
            ),
            refs=("S16", "S20"),
            confidence=0.5,
        )
    if log.last_link.get((rec.device, rec.netdev)) is not rec:
        return  # a later 'Link up' (boot-time training, a flap that recovered) or 'Link down'
    yield Verdict(
        id="diagnose.nic-link-down",
        severity="warning",
        cause="fabric.link-down",
        message=f"{name}: 'Link down' with no later 'Link up' in the log",
        explanation=(
            "NIC drivers log the port's carrier changes (mlx5e 'Link down'/'Link up', "
            f"mlx5e_update_carrier in {_MLX5_EN_MAIN}; the Intel drivers' 'NIC Link is "
            "Down'/'Up'; phylib's 'Link is Down'/'Up'); a down with no up after it in the "
            "captured log means the port stayed without a link: cable, module, or the switch "
            "port is down."
        ),
        fix=(
            "Check the port now (`ip link show NETDEV`, `ethtool NETDEV`), the module "
            "(`ethtool -m NETDEV`) and the switch port; if the log was cut, take it again."
        ),
        refs=("S16", "S20"),
        confidence=0.4,
    )


# -- GPU peer-to-peer (p2pBandwidthLatencyTest) ----------------------------------------------------

P2P_SLOW_RATIO = 0.5
"""A GPU pair whose peer-to-peer copies reach less than this share of the same copies staged
through host memory. A direct copy crosses the PCIe path between the two GPUs once; the staged
one crosses each GPU's link to the host and host memory. Peer-to-peer is at least as fast
wherever the path is healthy (the sample's own healthy outputs: NVLink pairs ten times faster,
PCIe pairs under one switch or root complex as fast or faster). Half of it is far outside that
spread: the peer traffic is redirected (ACS) or translated (IOMMU) on its way."""

_NCCL_ACS = (
    "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html"
    "#pci-access-control-services-acs"
)


@verdict("p2p_matrix")
def _p2p_slower_than_staged(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, P2PMatrix) or not rec.p2p or rec.staged is None:
        return
    pairs: list[tuple[float, int, int, float, float]] = []
    total = 0
    for src in rec.rows:
        for dst in rec.columns:
            if src == dst:
                continue
            p2p, staged = rec.value(src, dst), rec.value(src, dst, rec.staged)
            if p2p is None or staged is None or staged <= 0:
                continue
            total += 1
            if p2p < P2P_SLOW_RATIO * staged:
                pairs.append((p2p / staged, src, dst, p2p, staged))
    if not pairs:
        return
    ratio, src, dst, p2p, staged = min(pairs)
    what = {"uni": "one-way", "bi": "two-way"}.get(rec.direction or "", "")
    how = f" ({rec.method})" if rec.method else ""
    yield Verdict(
        id="diagnose.gpu-p2p-slower-than-host-copy",
        severity="error",
        cause="host.pcie",
        message=(
            f"GPU peer-to-peer {what} copies{how} slower than copies through host memory on "
            f"{len(pairs)} of {total} GPU pairs: GPU{src} -> GPU{dst} {_fmt(p2p)} GB/s with P2P "
            f"against {_fmt(staged)} GB/s without ({ratio:.0%}); peer traffic is redirected "
            "through the root complex (PCIe ACS) or translated by the IOMMU, and NCCL's P2P "
            "transport between these GPUs will be slow or hang"
        ),
        explanation=(
            f"p2pBandwidthLatencyTest ({SAMPLE_SOURCE}) times the same copies twice: staged "
            "through host memory (P2P=Disabled) and GPU to GPU (P2P=Enabled, the matrix on "
            f"line {rec.line}, against the P2P=Disabled one of the same direction). A direct copy "
            "crosses the path between the GPUs once; it is slower than the staged copy only "
            "when something on that path intervenes: Access Control Services on a PCIe switch "
            "or root port redirect peer requests up to the root complex, and an IOMMU that is "
            "not in pass-through mode translates (and can fault) every peer access. A pair is "
            f"flagged below {P2P_SLOW_RATIO:.0%} of the staged figure. NCCL's troubleshooting "
            f"guide names both causes for slow or hanging intra-node P2P ({_NCCL_ACS})."
        ),
        fix=(
            "Check ACS on the bridges above the GPUs (`lspci -vvv | grep ACSCtl`: SrcValid+ or "
            "ReqRedir+ means on; disable it in the BIOS or with `setpci -s BDF "
            "ECAP_ACS+0x6.w=0000` after each boot) and the IOMMU (`dmesg | grep -i -e DMAR -e "
            "AMD-Vi`; `iommu=pt` or IOMMU off on bare metal). Until fixed, NCCL_P2P_DISABLE=1 "
            "avoids the hang at the cost of bandwidth. Rerun the test: P2P=Enabled should be at "
            "least the P2P=Disabled figure."
        ),
        refs=("S9", "S20"),
        confidence=0.7,
        line=rec.line,
    )
