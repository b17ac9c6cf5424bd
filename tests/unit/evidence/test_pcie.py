"""lspci and dmesg-mlx5: PCIe link state, ACS, and mlx5/PCI-core kernel log lines.

Expected values were read by hand from the captures under
``tests/fixtures/evidence/{lspci,dmesg-mlx5}/``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind, parse_text
from aifabric.evidence.pcie import KernelEvent, PciDevice, PcieBandwidth, pcie_generation
from tests.unit.evidence.fixtures import case, load

LSPCI = [
    "asus-esc8000a-cx7-gen5-x16",
    "puget-wrx90-rtx6000-downgraded-2-5gt",
    "puget-wrx90-raid-width-x1-downgraded",
    "linux-pci-amd-gpp-bridge-acs-redirect",
    "riffa-xilinx-prompt-domain-no-express",
    "fdio-cx5-ex-rst-literal-block",
]
DMESG = [
    "l2fwd-nv-cx6dx-pcie-x8-limited",
    "linux-rdma-journalctl-cx4-cmd-alloc-fail",
    "netdev-cx4lx-caller-id-module-events",
    "qemu-devel-cx6dx-health-fw-internal-error",
    "arm-nas-cx5-arm64-pci-domain-0004",
    "tinycore-redpill-cx4lx-handle-hca-cap-probe-failed",
]


@pytest.mark.parametrize(
    ("kind", "name"), [("lspci", n) for n in LSPCI] + [("dmesg-mlx5", n) for n in DMESG]
)
def test_detected_without_kind(kind: str, name: str) -> None:
    assert detect_kind(case(kind, name).text()) == kind


@pytest.mark.parametrize(
    ("speed", "gen"), [(2.5, 1), (5.0, 2), (8.0, 3), (16.0, 4), (32.0, 5), (64.0, 6), (None, None)]
)
def test_pcie_generation(speed: float | None, gen: int | None) -> None:
    assert pcie_generation(speed) == gen


def _device(name: str) -> PciDevice:
    result = load("lspci", name)
    assert not result.warnings
    devs: list[PciDevice] = result.of_type(PciDevice)
    assert len(devs) == 1
    return devs[0]


# --------------------------------------------------------------------------------------------
# lspci


def test_connectx7_gen5_x16_full_speed() -> None:
    d = _device("asus-esc8000a-cx7-gen5-x16")
    assert (d.bdf, d.address, d.line, d.end_line) == ("21:00.0", "0000:21:00.0", 2, 90)
    assert d.device_class == "Ethernet controller"
    assert d.description == "Mellanox Technologies MT2910 Family [ConnectX-7]"
    assert d.numa_node == 0
    assert d.kernel_driver == "mlx5_core" and d.kernel_modules == ["mlx5_core"]
    assert (d.lnkcap_speed_gts, d.lnkcap_width, d.lnkcap_gen) == (32.0, 16, 5)
    assert (d.lnksta_speed_gts, d.lnksta_width, d.lnksta_gen) == (32.0, 16, 5)
    assert (d.speed_downgraded, d.width_downgraded) == (False, False)
    assert d.lnkcap2_max_speed_gts == 32.0 and d.target_link_speed_gts == 32.0
    assert (d.max_payload_cap_bytes, d.max_payload_bytes, d.max_read_request_bytes) == (
        512,
        512,
        512,
    )
    assert d.acs_ctl["ReqRedir"] is False and len(d.acs_ctl) == 7
    assert d.acs_redirect is False
    assert d.devsta_errors == ["CorrErr", "UnsupReq"]
    assert d.aer_uncorrectable == ["UnsupReq"] and d.aer_correctable == ["AdvNonFatalErr"]


def test_gpu_link_trained_at_gen1() -> None:
    d = _device("puget-wrx90-rtx6000-downgraded-2-5gt")
    assert d.line == 3  # after the prompt and "[sudo] password" lines
    assert d.bdf == "c1:00.0" and d.revision == "a1"
    assert d.device_class == "VGA compatible controller"
    assert d.description == "NVIDIA Corporation AD102GL [RTX 6000 Ada Generation]"
    assert (d.lnkcap_speed_gts, d.lnkcap_width, d.lnkcap_gen) == (16.0, 16, 4)
    assert (d.lnksta_speed_gts, d.lnksta_width, d.lnksta_gen) == (2.5, 16, 1)
    assert d.speed_downgraded is True  # "(downgraded)" printed
    assert d.width_downgraded is False  # no marker: x16 == x16
    assert (d.max_payload_cap_bytes, d.max_payload_bytes, d.max_read_request_bytes) == (
        256,
        256,
        512,
    )
    assert d.kernel_driver == "nvidia"
    assert d.kernel_modules == ["nvidiafb", "nouveau", "nvidia_drm", "nvidia"]
    assert d.numa_node is None


def test_width_downgraded_x1_of_x2() -> None:
    d = _device("puget-wrx90-raid-width-x1-downgraded")
    assert d.device_class == "RAID bus controller" and d.revision == "01"
    assert (d.lnkcap_speed_gts, d.lnkcap_width) == (5.0, 2)
    assert (d.lnksta_speed_gts, d.lnksta_width) == (5.0, 1)
    assert (d.speed_downgraded, d.width_downgraded) == (False, True)
    assert d.lnkcap2_max_speed_gts is None and d.target_link_speed_gts == 5.0
    assert d.max_payload_bytes == 256 and d.kernel_driver is None


def test_acs_redirect_on_bridges() -> None:
    result = load("lspci", "linux-pci-amd-gpp-bridge-acs-redirect")
    devs = result.of_type(PciDevice)
    assert [d.bdf for d in devs] == ["40:01.1", "40:01.2", "40:01.3"]
    assert [d.line for d in devs] == [1, 5, 9]
    assert all(d.acs_redirect for d in devs)
    assert [d.acs_ctl["SrcValid"] for d in devs] == [False, False, True]
    assert devs[0].acs_cap["DirectTrans"] is True and devs[0].acs_ctl["DirectTrans"] is False
    assert devs[0].lnksta_speed_gts is None


def _fields(dev: PciDevice) -> dict[str, object]:
    d = dev.to_json()
    d.pop("line")
    d.pop("end_line")
    return d


def test_lspci_garbage_line_in_a_block_warns_once() -> None:
    lines = case("lspci", "asus-esc8000a-cx7-gen5-x16").text().split("\n")
    clean = parse_text("\n".join(lines), "lspci").of_type(PciDevice)[0]
    lines.insert(19, "garbage###")
    result = parse_text("\n".join(lines), "lspci")
    assert [w.line for w in result.warnings] == [20]
    [dev] = result.of_type(PciDevice)
    assert _fields(dev) == _fields(clean)


def test_lspci_truncated_link_status_warns() -> None:
    text = case("lspci", "asus-esc8000a-cx7-gen5-x16").text()
    cut = text[: text.index("LnkSta: Speed 32GT/s") + len("LnkSta: Speed 32G")]
    result = parse_text(cut, "lspci")
    [w] = result.warnings
    assert w.line == 22 and "LnkSta" in w.message
    [dev] = result.of_type(PciDevice)
    assert dev.lnkcap_speed_gts == 32.0 and dev.lnksta_speed_gts is None


def test_lspci_grep_excerpt_gives_anonymous_devices() -> None:
    text = "\n".join(
        ln
        for ln in case("lspci", "puget-wrx90-rtx6000-downgraded-2-5gt").text().split("\n")
        if "LnkCap:" in ln or "LnkSta:" in ln
    )
    [dev] = parse_text(text, "lspci").of_type(PciDevice)
    assert dev.bdf is None and dev.speed_downgraded is True


# --------------------------------------------------------------------------------------------
# dmesg-mlx5


def test_bandwidth_limited_by_upstream_x8_link() -> None:
    result = load("dmesg-mlx5", "l2fwd-nv-cx6dx-pcie-x8-limited")
    [bw] = result.of_type(PcieBandwidth)
    assert (bw.time_s, bw.driver, bw.device) == (10380.315885, "mlx5_core", "0000:b3:00.1")
    assert (bw.available_gbps, bw.speed_gts, bw.width, bw.gen) == (63.008, 8.0, 8, 3)
    assert bw.limited is True and bw.limiting_device == "0000:b2:00.0"
    assert (bw.capable_gbps, bw.capable_speed_gts, bw.capable_width, bw.capable_gen) == (
        252.048,
        16.0,
        16,
        4,
    )


def test_journalctl_lines_with_quote_markers() -> None:
    result = load("dmesg-mlx5", "linux-rdma-journalctl-cx4-cmd-alloc-fail")
    assert len(result.records) == 9  # the "# journalctl ... | grep mlx5" prompt is skipped
    fw = result.records[0]
    assert isinstance(fw, KernelEvent)
    assert (fw.line, fw.category, fw.fw_version) == (2, "firmware-version", "12.28.1002")
    assert (fw.wallclock, fw.host, fw.device) == ("Nov 17 01:12:58", "store01", "0000:01:00.0")
    [bw] = result.of_type(PcieBandwidth)
    assert (bw.available_gbps, bw.speed_gts, bw.width, bw.limited) == (126.016, 8.0, 16, False)
    assert bw.capable_gbps == 126.016
    events = result.of_type(KernelEvent)
    mod = [e for e in events if e.category == "module-event"]
    assert [(e.module, e.module_status) for e in mod] == [(0, "Cable plugged")]
    assert [e.line for e in events if e.category == "cmd-error"] == [6, 8]
    assert any(e.driver == "infiniband" and e.device == "mlx5_0" for e in events)


def test_caller_id_stamps_and_module_unplugged() -> None:
    result = load("dmesg-mlx5", "netdev-cx4lx-caller-id-module-events")
    bws = result.of_type(PcieBandwidth)
    assert [(b.device, b.available_gbps, b.width) for b in bws] == [
        ("0000:0b:00.0", 63.008, 8),
        ("0000:0b:00.1", 63.008, 8),
    ]
    events = result.of_type(KernelEvent)
    unplugged = [e for e in events if e.module_status == "Cable unplugged"]
    assert [(e.line, e.time_s, e.device, e.module) for e in unplugged] == [
        (7, 230.026346, "0000:0b:00.1", 1)
    ]
    renamed = [e for e in events if e.netdev]
    assert [(e.netdev, e.message) for e in renamed] == [
        ("enp11s0f1np1", "renamed from eth1"),
        ("enp11s0f0np0", "renamed from eth0"),
    ]


def test_firmware_health_failure() -> None:
    result = load("dmesg-mlx5", "qemu-devel-cx6dx-health-fw-internal-error")
    events = result.of_type(KernelEvent)
    assert len(events) == 23 and {e.category for e in events} == {"health"}
    miss = [e.device for e in events if "reached miss count" in e.message]
    assert miss == ["0000:0d:00.0", "0000:0d:00.2", "0000:0d:00.3", "0000:0d:00.4", "0000:0d:00.1"]
    synd = [e for e in events if e.syndrome]
    assert [(e.line, e.syndrome) for e in synd] == [(17, "0x1")]
    assert [e.fw_version for e in events if e.fw_version] == ["22.44.1036"]


def test_unrelated_lines_are_skipped_silently() -> None:
    lines = case("dmesg-mlx5", "netdev-cx4lx-caller-id-module-events").text().split("\n")
    clean = parse_text("\n".join(lines), "dmesg-mlx5")
    lines.insert(5, "[  226.9] usb 1-1: new high-speed USB device number 2 using xhci_hcd")
    result = parse_text("\n".join(lines), "dmesg-mlx5")
    assert not result.warnings and len(result.records) == len(clean.records)


def test_garbled_bandwidth_line_warns_once() -> None:
    lines = case("dmesg-mlx5", "netdev-cx4lx-caller-id-module-events").text().split("\n")
    clean = parse_text("\n".join(lines), "dmesg-mlx5")
    lines.insert(3, "[  226.5] mlx5_core 0000:0b:00.0: ?? Gb/s available PCIe bandwidth (garbled")
    result = parse_text("\n".join(lines), "dmesg-mlx5")
    assert [w.line for w in result.warnings] == [4]
    assert [r.to_json()["type"] for r in result.records] == [
        r.to_json()["type"] for r in clean.records
    ]


def test_truncated_last_line_warns() -> None:
    text = case("dmesg-mlx5", "l2fwd-nv-cx6dx-pcie-x8-limited").text()
    result = parse_text(text[: text.index("(capable of")], "dmesg-mlx5")
    assert [w.line for w in result.warnings] == [1] and result.records == []


def test_prompt_line_before_domain_qualified_device() -> None:
    res = load("lspci", "riffa-xilinx-prompt-domain-no-express")
    assert res.warnings == []
    (dev,) = res.records
    assert isinstance(dev, PciDevice)
    assert (dev.line, dev.end_line) == (2, 14)
    assert dev.address == "0000:02:00.0" and dev.device_class == "Memory controller"
    assert dev.numa_node == 0 and dev.lnksta_speed_gts is None


def test_arm64_domain_0004_full_x8_and_slot_power() -> None:
    res = load("dmesg-mlx5", "arm-nas-cx5-arm64-pci-domain-0004")
    assert res.warnings == []
    bws = [r for r in res.records if isinstance(r, PcieBandwidth)]
    assert [(b.device, b.available_gbps, b.speed_gts, b.width, b.limited) for b in bws] == [
        ("0004:01:00.0", 63.008, 8.0, 8, False),
        ("0004:01:00.1", 63.008, 8.0, 8, False),
    ]
    events = [r for r in res.records if isinstance(r, KernelEvent)]
    assert len(events) == 12
    fw = [e for e in events if e.category == "firmware-version"]
    assert [(e.line, e.fw_version) for e in fw] == [(4, "16.27.2048"), (12, "16.27.2048")]
    (mod,) = [e for e in events if e.category == "module-event"]
    assert (mod.line, mod.module, mod.module_status) == (8, 0, "Cable plugged")
    (power,) = [e for e in events if e.category == "pcie-power"]
    assert power.line == 9 and power.time_s == 11.097626 and "75W" in power.message


def test_probe_failure_device_read_from_the_message() -> None:
    res = load("dmesg-mlx5", "tinycore-redpill-cx4lx-handle-hca-cap-probe-failed")
    assert res.warnings == []
    events = [r for r in res.records if isinstance(r, KernelEvent)]
    assert len(events) == 6
    assert {e.device for e in events} == {"0000:03:00.0"}
    assert events[1].fw_version == "14.32.1010"
    failed = [(e.line, e.driver) for e in events if e.category == "probe-failed"]
    assert failed == [(6, "mlx5_core"), (7, "mlx5_core")]
    assert events[-1].time_s == 14.059582


def test_dmesg_x_facility_and_reltime_prefixes() -> None:
    # ``dmesg -x`` (facility:level) and ``dmesg -H`` (relative) prefixes around lines of the
    # arm-nas capture.
    text = (
        "kern  :info  : [   10.643316] mlx5_core 0004:01:00.0: firmware version: 16.27.2048\n"
        "[Oct31 10:12] mlx5_core 0004:01:00.0: Port module event: module 0, Cable plugged\n"
        "[  +0.000252] mlx5_core 0004:01:00.1: Port module event: module 1, Cable unplugged\n"
    )
    res = parse_text(text, kind="dmesg-mlx5")
    assert res.warnings == []
    fw, plugged, unplugged = res.records
    assert isinstance(fw, KernelEvent) and fw.time_s == 10.643316
    assert (fw.driver, fw.device, fw.fw_version) == ("mlx5_core", "0004:01:00.0", "16.27.2048")
    assert isinstance(plugged, KernelEvent) and plugged.wallclock == "Oct31 10:12"
    assert isinstance(unplugged, KernelEvent)
    assert (unplugged.device, unplugged.module, unplugged.module_status) == (
        "0004:01:00.1",
        1,
        "Cable unplugged",
    )


def test_lspci_indented_literal_block_keeps_the_device_line() -> None:
    # the whole `lspci -vvvs 5e:00.0` pasted into an RST literal block: device line indented 4
    # spaces, fields a tab + 4 spaces (FD.io CSIT docs). The device is still 5e:00.0, a
    # ConnectX-5 Ex, and its Gen4 x16 card trained at 8 GT/s (Gen3) in the Cascade Lake slot.
    result = load("lspci", "fdio-cx5-ex-rst-literal-block")
    assert result.warnings == []
    [dev] = result.of_type(PciDevice)
    assert (dev.line, dev.bdf, dev.address, dev.device_class) == (
        2,
        "5e:00.0",
        "0000:5e:00.0",
        "Ethernet controller",
    )
    assert dev.description == "Mellanox Technologies MT28800 Family [ConnectX-5 Ex]"
    assert (dev.lnkcap_speed_gts, dev.lnkcap_width, dev.lnksta_speed_gts, dev.lnksta_width) == (
        16.0,
        16,
        8.0,
        16,
    )
    assert dev.speed_downgraded and not dev.width_downgraded
    assert dev.acs_ctl and not any(dev.acs_ctl.values()) and not dev.acs_redirect
    assert dev.kernel_driver == "mlx5_core" and dev.end_line == 67


def test_lspci_indented_detected_without_kind() -> None:
    assert detect_kind(case("lspci", "fdio-cx5-ex-rst-literal-block").text()) == "lspci"


@pytest.mark.parametrize("indent", ["  ", "   ", "    ", "\t"])
def test_lspci_shallow_indent_of_a_whole_capture_is_one_device(indent: str) -> None:
    text = "\n".join(
        indent + line if line else ""
        for line in (
            "af:00.0 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]",
            "\tLnkCap:\tPort #0, Speed 32GT/s, Width x16",
            "\tLnkSta:\tSpeed 32GT/s (ok), Width x16 (ok)",
        )
    )
    result = parse_text(text, "lspci")
    assert result.warnings == []
    [dev] = result.of_type(PciDevice)
    assert dev.bdf == "af:00.0" and dev.device_class == "Ethernet controller"
    assert (dev.lnksta_speed_gts, dev.lnksta_width, dev.speed_downgraded) == (32.0, 16, False)


def test_lspci_deeply_indented_address_is_not_a_device_line() -> None:
    # a field value that starts with a bus address (two tabs deep) stays inside the device
    text = (
        "00:01.1 PCI bridge: Advanced Micro Devices, Inc. [AMD] Starship/Matisse GPP Bridge\n"
        "\t\t00:02.0 Host bridge: not a device of its own\n"
        "\tLnkSta:\tSpeed 16GT/s (ok), Width x16 (ok)\n"
    )
    devs = parse_text(text, "lspci").of_type(PciDevice)
    assert [d.bdf for d in devs] == ["00:01.1"]


@settings(max_examples=40, deadline=None)
@given(
    st.integers(min_value=0, max_value=8), st.sampled_from(["Ethernet controller", "PCI bridge"])
)
def test_lspci_indent_shifts_nothing(spaces: int, cls: str) -> None:
    # shifting a whole capture right by up to 8 spaces gives the same device and link fields
    lines = [
        f"c1:00.0 {cls}: Mellanox Technologies MT2910 Family [ConnectX-7]",
        "\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported",
        "\tLnkSta:\tSpeed 16GT/s (downgraded), Width x8 (downgraded)",
        "\t\tACSCtl:\tSrcValid- TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd- EgressCtrl-",
    ]
    plain = parse_text("\n".join(lines), "lspci").of_type(PciDevice)
    shifted = parse_text("\n".join(" " * spaces + ln for ln in lines), "lspci").of_type(PciDevice)
    assert len(plain) == len(shifted) == 1
    a, b = plain[0], shifted[0]
    assert (a.bdf, a.device_class, a.lnksta_width, a.speed_downgraded, a.acs_redirect) == (
        b.bdf,
        b.device_class,
        b.lnksta_width,
        b.speed_downgraded,
        b.acs_redirect,
    )


def test_devctl_grep_excerpt_in_an_indented_block() -> None:
    """``lspci -vvv | grep DevCtl: -C 2`` kept in an indented documentation block: the DevCap and
    DevCtl fields (and DevCtl's MaxPayload/MaxReadReq continuation) are read without a device
    line; values read by hand from the capture."""
    from aifabric.evidence.pcie import PciDevice  # noqa: PLC0415

    name = "rocm-docs-devctl-maxreadreq"
    assert detect_kind(case("lspci", name).text()) == "lspci"
    [dev] = load("lspci", name).of_type(PciDevice)
    assert (dev.max_payload_cap_bytes, dev.max_payload_bytes, dev.max_read_request_bytes) == (
        512, 512, 4096,
    )  # fmt: skip


# -- FreeBSD pciconf ---------------------------------------------------------------------------


def test_pciconf_link_below_its_capability() -> None:
    # a ConnectX-3 trained at x2 of x8, 8.0 GT/s of 8.0; pciconf prints the bus in decimal (66)
    [dev] = parse_text(case("pciconf", "aceqbaceq-cx3-x2-of-x8").text()).records
    assert (dev.address, dev.vendor_device_id) == ("0000:42:00.0", "15b3:1003")
    assert dev.description == "MT27500 Family [ConnectX-3]"
    assert (dev.lnksta_width, dev.lnkcap_width) == (2, 8)
    assert (dev.lnksta_speed_gts, dev.lnkcap_speed_gts) == (8.0, 8.0)
    assert dev.width_downgraded is True and dev.speed_downgraded is False


def test_pciconf_device_without_express_link_in_a_grep_window() -> None:
    [dev] = parse_text(case("pciconf", "aceqbaceq-grep-mell-excerpt").text()).records
    assert dev.vendor_device_id == "15b3:1003" and dev.lnksta_width is None


def test_aer_report_without_timestamps_is_a_kernel_log() -> None:
    # the AER driver's report (drivers/pci/pcie/aer.c aer_print_error), pasted from `dmesg`
    # without its timestamps (a notes page's colour copy, the escapes already stripped)
    text = (
        "mpt3sas 0000:04:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, "
        "(Receiver ID)\n"
        "mpt3sas 0000:04:00.0:   device [1000:0087] error status/mask=00000001/00002000\n"
        "mpt3sas 0000:04:00.0:    [ 0] RxErr                  (First)\n"
    )
    assert detect_kind(text) == "dmesg-mlx5"
    events = parse_text(text, "dmesg-mlx5").of_type(KernelEvent)
    assert [(e.line, e.driver, e.device, e.category) for e in events][:1] == [
        (1, "mpt3sas", "0000:04:00.0", "aer")]  # fmt: skip
