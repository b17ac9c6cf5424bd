"""NX-OS render: golden files for the example fabrics, the values the config carries read back
through the NX-OS parser (DSCP → qos-group, pause pfc-cos on the RoCE class only, MTU per port,
ECN thresholds in exact bytes, CNP strict, watchdog timers), and the change plan against AMD's
real N9364E DCQCN config (examples/lossless-lab/configs/leaf02.cfg).

Regenerate the goldens with ``AIFABRIC_REGEN_GOLDEN=1``."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.catalog import load_catalog
from aifabric.design import load_fabric
from aifabric.dialects.intent import DeviceIntent, build_intents
from aifabric.dialects.nxos import interpret
from aifabric.dialects.nxos.render import (
    DIALECT,
    ecn_threshold,
    nxos_port,
    order_plan,
    per_port,
    watchdog_timers,
)
from aifabric.dialects.observed import ObservedDevice
from aifabric.evidence import parse_text
from aifabric.model import Fabric
from aifabric.model.qos import EcnThresholds, PfcWatchdog
from aifabric.perf.hardware import pfc_headroom

ROOT = Path(__file__).resolve().parents[3]
FABRICS = {
    "lossless-lab": ROOT / "examples" / "lossless-lab" / "fabric.yaml",
    "s18-switch-concept": ROOT / "examples" / "s18-switch-concept.yaml",
}
GOLDEN = ROOT / "tests" / "fixtures" / "render" / "nxos"
EXISTING = ROOT / "examples" / "lossless-lab" / "configs"


@cache
def _fabric(name: str) -> Fabric:
    return load_fabric(FABRICS[name], load_catalog([]))


def _intent(fabric: str = "lossless-lab", device: str = "leaf02") -> DeviceIntent:
    return build_intents(_fabric(fabric), load_catalog([]))[device]


def _render(intent: DeviceIntent) -> str:
    (f,) = DIALECT.render(intent)
    assert (f.path, f.kind, f.device) == (f"{intent.name}.cfg", "nxos-config", intent.name)
    return f.text


def _read(text: str) -> ObservedDevice:
    result = parse_text(text, "nxos-config")
    assert not result.warnings, result.warnings
    return interpret(result, file="r.cfg", name="r")


# ---------------------------------------------------------------------------- goldens


@pytest.mark.parametrize("fabric", sorted(FABRICS))
def test_golden_files(fabric: str) -> None:
    """Every switch's config byte for byte as committed (AIFABRIC_REGEN_GOLDEN=1 rewrites)."""
    folder = GOLDEN / fabric
    intents = build_intents(_fabric(fabric), load_catalog([]))
    files = [f for i in intents.values() if i.role == "switch" for f in DIALECT.render(i)]
    if os.environ.get("AIFABRIC_REGEN_GOLDEN"):
        folder.mkdir(parents=True, exist_ok=True)
        for f in files:
            (folder / f.path).write_text(f.text, encoding="utf-8")
        rel = FABRICS[fabric].relative_to(ROOT).as_posix()
        meta = {
            "source": f"rendered by aifabric render {rel} --dialect nxos",
            "notes": "NX-OS running-config golden files; regenerate with AIFABRIC_REGEN_GOLDEN=1",
            "origin": "rendered",
        }
        (folder / "meta.yaml").write_text(yaml.safe_dump(meta, sort_keys=False), "utf-8")
    assert sorted(p.name for p in folder.glob("*.cfg")) == sorted(f.path for f in files)
    for f in files:
        assert (folder / f.path).read_text(encoding="utf-8") == f.text, f.path
    meta = yaml.safe_load((folder / "meta.yaml").read_text(encoding="utf-8"))
    assert meta["origin"] == "rendered" and "rendered by aifabric render" in meta["source"]


# ---------------------------------------------------------------------------- values


def test_lossless_lab_leaf_reads_back_as_the_intent() -> None:
    text = _render(_intent())
    dev = _read(text)
    assert dev.notes == []
    assert set(dev.ports) == {"Ethernet1/1", "Ethernet1/2", "Ethernet1/3", "Ethernet1/4"}
    for neutral, mtu in (("Ethernet1", 9000), ("Ethernet2", 9000), ("Ethernet3", 9216)):
        v = dev.view(neutral)
        assert v.mtu_bytes is not None and v.mtu_bytes.value == mtu
        assert v.pfc_priorities is not None and v.pfc_priorities.value == (3,)
        assert v.pfc_watchdog is not None and v.pfc_watchdog.value is True
        assert v.tc_of_dscp(26) == 3 and v.tc_of_dscp(48) == 6 and v.tc_of_dscp(0) == 0
        (ecn,) = [m for m in v.ecn if m.enabled]
        assert (ecn.queue, ecn.kmin_bytes, ecn.kmax_bytes) == (3, 153_600, 1_536_000)
        assert (ecn.kmin_raw, ecn.kmax_raw, ecn.probability_pct) == (
            "150 kbytes",
            "1500 kbytes",
            100,
        )
    assert dev.schedulers[6].value == "strict"  # CNP
    assert dev.schedulers[3].value == "dwrr" and dev.schedulers[0].value == "dwrr"
    d = dev.defaults
    assert d.mtu_bytes is not None and d.mtu_bytes.value == 9216  # network-qos class MTU
    assert d.pfc_watchdog is not None and d.pfc_watchdog.value  # global watch-dog-interval on


def test_pause_only_on_the_roce_class_and_queue_weights() -> None:
    text = _render(_intent())
    config = "\n".join(ln for ln in text.splitlines() if not ln.startswith("!"))
    assert config.count("pause pfc-cos") == 1
    nq = text[text.index("policy-map type network-qos") : text.index("policy-map type queuing")]
    assert re.search(r"class type network-qos c-8q-nq3\n    pause pfc-cos 3\n    mtu 9216\n", nq)
    assert "c-8q-nq6\n    mtu 9216\n" in nq and "c-8q-nq-default\n    mtu 9216\n" in nq
    q = text[text.index("policy-map type queuing") : text.index("system qos")]
    assert "c-out-8q-q6\n    priority level 1\n" in q
    assert "c-out-8q-q3\n    bandwidth remaining percent 50\n    random-detect " in q
    assert "c-out-8q-q-default\n    bandwidth remaining percent 50\n" in q
    assert q.count("bandwidth remaining percent 0") == 5  # q7, q5, q4, q2, q1
    assert q.count("random-detect") == 1
    assert "system qos\n  service-policy type network-qos AIFABRIC-NQ\n" in text
    assert "  service-policy type queuing output AIFABRIC-8Q-OUT\n" in text
    assert text.count("service-policy type qos input AIFABRIC-QOS-IN") == 4


def test_s18_thresholds_are_50_and_100_kbytes() -> None:
    intent = _intent("s18-switch-concept", "spine01")
    text = _render(intent)
    assert (
        "random-detect minimum-threshold 50 kbytes maximum-threshold 100 kbytes "
        "drop-probability 100 weight 0 ecn"
    ) in text
    (ecn,) = _read(text).view("Ethernet1").ecn
    assert (ecn.kmin_bytes, ecn.kmax_bytes, ecn.queue) == (51_200, 102_400, 3)
    # s18 states no pfc_watchdog: the QoS model's default (200 ms detection) is rendered
    assert "priority-flow-control watch-dog shutdown-multiplier 2\n" in text


def test_thresholds_not_whole_kilobytes_are_written_in_bytes() -> None:
    assert ecn_threshold(51_200, 102_400) == (50, "kbytes")
    assert ecn_threshold(150_000, 1_500_000) == (150_000, "bytes")
    assert ecn_threshold(51_200, 100_000) == (51_200, "bytes")  # both in one unit
    base = _intent()
    qos = base.qos.model_copy(
        update={"ecn": EcnThresholds(kmin_bytes=150_000, kmax_bytes=1_500_000, pmax_percent=7)}
    )
    text = _render(replace(base, qos=qos))
    assert (
        "minimum-threshold 150000 bytes maximum-threshold 1500000 bytes drop-probability 7"
    ) in text
    (ecn,) = _read(text).view("Ethernet1").ecn
    assert (ecn.kmin_bytes, ecn.kmax_bytes, ecn.probability_pct) == (150_000, 1_500_000, 7)


@settings(max_examples=40, deadline=None)
@given(
    kmin=st.integers(min_value=1, max_value=20_000_000),
    span=st.integers(min_value=1, max_value=20_000_000),
    roce=st.sets(st.integers(0, 63), min_size=1, max_size=12),
)
def test_ecn_bytes_and_dscp_lists_read_back_exactly(kmin: int, span: int, roce: set[int]) -> None:
    base = _intent()
    dscp = {d: 3 for d in roce} | ({48: 6} if 48 not in roce else {})
    qos = base.qos.model_copy(
        update={
            "ecn": EcnThresholds(kmin_bytes=kmin, kmax_bytes=kmin + span),
            "dscp_to_tc": dscp,
        }
    )
    dev = _read(_render(replace(base, qos=qos)))
    v = dev.view("Ethernet3")
    (ecn,) = v.ecn
    assert (ecn.kmin_bytes, ecn.kmax_bytes) == (kmin, kmin + span)
    assert v.dscp_to_tc is not None and v.dscp_to_tc.value == dscp


def test_headroom_comment_carries_the_ieee_bound_of_each_port() -> None:
    text = _render(_intent())
    host = pfc_headroom(400, 2.0, 9000 + 22).value
    fabric = pfc_headroom(400, 50.0, 9216 + 22).value
    blocks = text.split("\n!\n")
    eth1 = next(b for b in blocks if "interface Ethernet1/1\n" in b)
    eth3 = next(b for b in blocks if "interface Ethernet1/3\n" in b)
    assert f"IEEE bound {host} bytes" in eth1 and f"IEEE bound {fabric} bytes" in eth3
    assert "cable_m=50" in eth3.replace("\n! ", " ")
    assert "Kmax must stay below the PFC XOFF point" in text.replace("\n! ", " ")


def test_watchdog_timers() -> None:
    assert watchdog_timers(200, 200) == (100, 2, 2)  # the intent's defaults
    assert watchdog_timers(1500, 3000) == (200, 8, 15)  # > 10 polls of 100 ms
    assert watchdog_timers(50, 0) == (100, 1, 0)  # clamped to NX-OS's ranges
    assert watchdog_timers(20_000, 900_000) == (1000, 10, 100)
    base = _intent()
    qos = base.qos.model_copy(
        update={"pfc_watchdog": PfcWatchdog(detection_time_ms=400, action="forward")}
    )
    text = _render(replace(base, qos=qos))
    assert "priority-flow-control watch-dog shutdown-multiplier 4\n" in text
    assert "NX-OS's watchdog always drops" in text.replace("\n! ", " ")


def test_port_names_and_breakouts() -> None:
    assert nxos_port("Ethernet7") == "Ethernet1/7"
    assert nxos_port("Ethernet7/2") == "Ethernet1/7/2"
    assert nxos_port("mgmt0") == "mgmt0"
    base = _intent()
    ports = (
        tuple(
            replace(p, name=f"Ethernet1/{n}", speed_gbps=100.0)
            for n, p in enumerate(base.ports[:2], start=1)
        )
        + base.ports[2:]
    )
    text = _render(replace(base, ports=ports, breakouts={1: 4}))
    assert "interface breakout module 1 port 1 map 100g-4x\n" in text
    dev = _read(text)
    assert dev.neutral["Ethernet1/2"] == "Ethernet1/1/2"
    v = dev.view("Ethernet1/2")
    assert v.pfc_priorities is not None and v.pfc_priorities.value == (3,)
    assert "breakout module 1 port 1 map 100g-4x" not in dev.ports


def test_lossy_ports_turn_pfc_off() -> None:
    base = _intent()
    ports = (replace(base.ports[0], lossless=False, kind="management"), *base.ports[1:])
    text = _render(replace(base, ports=ports))
    eth1 = text[text.index("interface Ethernet1/1\n") : text.index("interface Ethernet1/2\n")]
    assert "priority-flow-control mode off" in eth1
    assert "watch-dog" not in eth1 and "service-policy" not in eth1
    v = _read(text).view("Ethernet1")
    assert v.pfc_priorities is not None and v.pfc_priorities.value == ()


# ---------------------------------------------------------------------------- change plans


def _leaf02() -> tuple[str, str]:
    (f,) = DIALECT.render(_intent())
    return f.text, (EXISTING / "leaf02.cfg").read_text(encoding="utf-8")


def test_plan_against_amd_n9364e_config() -> None:
    """AMD's config: QOS_CLASSIFICATION on 'Ethernet1/1/1 - 2' (ports the fabric does not
    name: kept, with the policy and class-maps they use), qos_network and QOS_EGRESS_PORT
    attached only under system qos (replaced, then deleted), no hostname, no global watchdog."""
    text, existing = _leaf02()
    (f,) = DIALECT.render(_intent())
    plan = DIALECT.plan(f, existing)
    lines = plan.plan.splitlines()
    assert plan.removed == 4
    sysq = lines.index("system qos")
    assert lines[sysq + 1 : sysq + 5] == [
        "   no service-policy type network-qos qos_network",
        "   no service-policy type queuing output QOS_EGRESS_PORT",
        "   service-policy type network-qos AIFABRIC-NQ",
        "   service-policy type queuing output AIFABRIC-8Q-OUT",
    ]
    assert lines[-2:] == [
        "no policy-map type network-qos qos_network",
        "no policy-map type queuing QOS_EGRESS_PORT",
    ]
    assert lines[0] == "hostname leaf02"
    assert lines[1] == "priority-flow-control watch-dog-interval on"
    # definitions come before the modes that attach them
    assert lines.index("policy-map type network-qos AIFABRIC-NQ") < sysq
    assert lines.index("policy-map type qos AIFABRIC-QOS-IN") < lines.index("interface Ethernet1/1")
    # each mode is entered once, its new lines under it
    assert lines.count("policy-map type queuing AIFABRIC-8Q-OUT") == 1
    q3 = lines.index("   class type queuing c-out-8q-q3")
    assert lines[q3 + 1 : q3 + 3] == [
        "      bandwidth remaining percent 50",
        "      random-detect minimum-threshold 150 kbytes maximum-threshold 1500 kbytes "
        "drop-probability 100 weight 0 ecn",
    ]
    # what the fabric does not name stays
    assert not [ln for ln in lines if "QOS_CLASSIFICATION" in ln or "ROCEv2" in ln]
    assert not [ln for ln in lines if "Ethernet1/1/1" in ln]
    assert "no class-map type qos match-any CNP" not in lines
    # every rendered line is either in the plan or already in the device's config
    have = {ln.strip() for ln in existing.splitlines()}
    planned = {ln.strip() for ln in lines}
    for ln in text.splitlines():
        s = ln.strip()
        if s and not s.startswith("!"):
            assert s in planned or s in have, s
    # of the rendered config only the 'system qos' line exists on the device (AMD's policies
    # have other names, so every line under them differs by its parents)
    config = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("!")]
    assert plan.added == len(config) - 1


def test_plan_replaces_a_changed_threshold_in_place() -> None:
    text, _ = _leaf02()
    old = text.replace("minimum-threshold 150 kbytes", "minimum-threshold 950 kbytes").replace(
        "  priority-flow-control watch-dog-interval on\n  service-policy type qos input "
        "AIFABRIC-QOS-IN\n",
        "  priority-flow-control watch-dog-interval on\n  service-policy type qos input "
        "AIFABRIC-QOS-IN\n  priority-flow-control watch-dog interface-multiplier 3\n",
        1,
    )
    (f,) = DIALECT.render(_intent())
    plan = DIALECT.plan(f, old)
    assert (plan.added, plan.removed) == (1, 2)
    assert plan.plan == (
        "policy-map type queuing AIFABRIC-8Q-OUT\n"
        "   class type queuing c-out-8q-q3\n"
        "      no random-detect minimum-threshold 950 kbytes maximum-threshold 1500 kbytes "
        "drop-probability 100 weight 0 ecn\n"
        "      random-detect minimum-threshold 150 kbytes maximum-threshold 1500 kbytes "
        "drop-probability 100 weight 0 ecn\n"
        "!\n"
        "interface Ethernet1/1\n"
        "   no priority-flow-control watch-dog interface-multiplier 3\n"
        "!\n"
    )


def test_plan_against_nothing_and_against_another_vendor() -> None:
    text, _ = _leaf02()
    (f,) = DIALECT.render(_intent())
    fresh = DIALECT.plan(f, None)
    assert fresh.existing is None and fresh.plan == text and fresh.removed == 0
    sonic = DIALECT.plan(f, (EXISTING / "leaf01.json").read_text(encoding="utf-8"))
    assert sonic.removed == 0 and "no " not in sonic.plan


def test_order_plan_keeps_an_empty_plan_empty() -> None:
    assert order_plan("") == ""
    assert order_plan("hostname a\n") == "hostname a\n"


_OLD_QOS = (
    "class-map type qos match-any OLD-ROCE\n"
    "  match dscp 26\n"
    "policy-map type qos OLD\n"
    "  class OLD-ROCE\n"
    "    set qos-group 3\n"
)


def _with_range(spec: str) -> str:
    """The rendered leaf02 config with Ethernet1/1 and 1/2 written as one range section that
    attaches policy OLD."""
    text, _ = _leaf02()
    head, _, rest = text.partition("interface Ethernet1/1\n")
    rest = rest[rest.index("interface Ethernet1/3\n") :]
    block = (
        f"interface {spec}\n  description hosts\n  mtu 9000\n  priority-flow-control mode on\n"
        "  priority-flow-control watch-dog-interval on\n  service-policy type qos input OLD\n!\n"
    )
    return _OLD_QOS + head + block + rest


def test_plan_compares_interface_ranges_port_by_port() -> None:
    (f,) = DIALECT.render(_intent())
    whole = DIALECT.plan(f, _with_range("Ethernet1/1-2")).plan.splitlines()
    for port in ("Ethernet1/1", "Ethernet1/2"):
        at = whole.index(f"interface {port}")
        section = whole[at + 1 : whole.index("!", at)]
        assert section[0] == "   no service-policy type qos input OLD"  # detached first
        assert section[1:] == [
            f"   description host link to srv0{2 + int(port[-1])}:nic0",
            "   service-policy type qos input AIFABRIC-QOS-IN",
        ]
    assert whole[-2:] == ["no policy-map type qos OLD", "no class-map type qos match-any OLD-ROCE"]
    # Ethernet1/5 is not in the fabric file: it keeps policy OLD, so OLD and its class stay
    part = DIALECT.plan(f, _with_range("Ethernet1/1-2, 1/5"))
    lines = part.plan.splitlines()
    assert part.removed == 2  # OLD off Ethernet1/1 and Ethernet1/2 only
    assert "interface Ethernet1/5" not in lines and "no policy-map type qos OLD" not in lines
    assert per_port("interface Ethernet1/1/1 - 2\n  mtu 9216\n!\nhostname a\n") == (
        "interface Ethernet1/1/1\n  mtu 9216\ninterface Ethernet1/1/2\n  mtu 9216\n!\nhostname a\n"
    )


def test_class_names_that_clean_up_alike_stay_apart() -> None:
    base = _intent()
    classes = tuple(
        tc.model_copy(update={"name": "roce"}) if tc.tc == 6 else tc
        for tc in base.qos.traffic_classes
    )
    qos = base.qos.model_copy(update={"traffic_classes": classes})
    text = _render(replace(base, qos=qos))
    assert "class-map type qos match-all AIFABRIC-ROCE\n  match dscp 26\n" in text
    assert "class-map type qos match-all AIFABRIC-TC6\n  match dscp 48\n" in text
    v = _read(text).view("Ethernet1")
    assert v.tc_of_dscp(26) == 3 and v.tc_of_dscp(48) == 6


_LINES = st.sampled_from(
    [
        "interface Ethernet1/1-2",
        "interface Ethernet1/3",
        "interface Ethernet1/9",
        "  service-policy type qos input OLD",
        "  priority-flow-control mode auto",
        "  mtu 1500",
        "policy-map type qos OLD",
        "  class OLD-ROCE",
        "    set qos-group 3",
        "class-map type qos match-any OLD-ROCE",
        "system qos",
        "  service-policy type network-qos NQ",
        "no shutdown",
        "!",
        "",
        "\t garbage \x00",
    ]
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_LINES, max_size=40))
def test_plan_of_any_existing_text_is_a_consistent_script(lines: list[str]) -> None:
    """Whatever the device has, the plan neither raises nor loses a change: every rendered
    line that the device lacks is in the script, and each removal is one 'no' line."""
    text, _ = _leaf02()
    (f,) = DIALECT.render(_intent())
    plan = DIALECT.plan(f, "\n".join(lines))
    out = plan.plan.splitlines()
    assert sum(1 for ln in out if ln.strip().startswith("no ")) == plan.removed
    planned = {ln.strip() for ln in out}
    for ln in text.splitlines():
        if ln.strip() and not ln.startswith("!"):
            assert ln.strip() in planned or ln.strip() in {x.strip() for x in lines}
