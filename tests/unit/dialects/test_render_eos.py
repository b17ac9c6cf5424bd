"""Arista EOS render: the values the rendered config carries (only the PFC priorities no-drop,
ECN bytes on the RoCE queue, CNP strict, every DSCP mapped, headroom comments equal to the IEEE
bound), the port names ``dialects.ports`` maps back, the golden files of both example fabrics,
and the change plan against the REAL examples/lossless-lab/configs/spine02.cfg (AMD's Arista
DCQCN profile). Regenerate the goldens with ``AIFABRIC_REGEN_GOLDEN=1``."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.catalog import load_catalog
from aifabric.design import load_fabric
from aifabric.dialects.eos import interpret
from aifabric.dialects.eos.render import DIALECT, FOLLOWS, eos_port_name
from aifabric.dialects.intent import DeviceIntent, PortIntent, build_intents
from aifabric.dialects.observed import ObservedDevice
from aifabric.dialects.ports import eos_neutral
from aifabric.dialects.render import RenderedFile, render_fabric
from aifabric.evidence import parse_text
from aifabric.model.qos import EcnThresholds, PfcWatchdog, TrafficClass
from aifabric.perf.hardware import pfc_headroom

ROOT = Path(__file__).resolve().parents[3]
FABRICS = {
    "lossless-lab": ROOT / "examples" / "lossless-lab" / "fabric.yaml",
    "s18-switch-concept": ROOT / "examples" / "s18-switch-concept.yaml",
}
GOLDEN = ROOT / "tests" / "fixtures" / "render" / "eos"
SPINE02 = ROOT / "examples" / "lossless-lab" / "configs" / "spine02.cfg"


@cache
def _intents(fabric: str) -> dict[str, DeviceIntent]:
    return build_intents(load_fabric(FABRICS[fabric], load_catalog([])), load_catalog([]))


def _render(intent: DeviceIntent) -> str:
    (f,) = DIALECT.render(intent)
    assert (f.path, f.kind, f.device) == (f"{intent.name}.cfg", "eos-config", intent.name)
    return f.text


def _read(text: str) -> ObservedDevice:
    return interpret(parse_text(text, "eos-config"), file="r.cfg", name="r")


def _block(text: str, head: str) -> list[str]:
    """The lines of the block opened by the column-0 line ``head`` (up to the next one)."""
    lines = text.splitlines()
    start = lines.index(head)
    out: list[str] = []
    for ln in lines[start + 1 :]:
        if ln and not ln.startswith(" "):
            break
        out.append(ln.strip())
    return out


# ---------------------------------------------------------------------------- golden files


@pytest.mark.parametrize("fabric", sorted(FABRICS))
def test_golden_files(fabric: str) -> None:
    cat = load_catalog([])
    res = render_fabric(load_fabric(FABRICS[fabric], cat), "eos", catalog=cat)
    folder = GOLDEN / fabric
    if os.environ.get("AIFABRIC_REGEN_GOLDEN"):
        folder.mkdir(parents=True, exist_ok=True)
        for f in res.files:
            (folder / f.path).write_text(f.text, encoding="utf-8")
        rel = FABRICS[fabric].relative_to(ROOT)
        (folder / "meta.yaml").write_text(
            f'source: "rendered by aifabric render from {rel} --dialect eos"\n'
            "notes: >-\n"
            "  Golden EOS running-configs, one per switch; compared byte for byte by\n"
            "  tests/unit/dialects/test_render_eos.py (regenerate with AIFABRIC_REGEN_GOLDEN=1).\n"
            "origin: rendered\n",
            encoding="utf-8",
        )
    assert sorted(p.name for p in folder.glob("*.cfg")) == sorted(f.path for f in res.files)
    for f in res.files:
        assert (folder / f.path).read_text(encoding="utf-8") == f.text, f.path
    assert "origin: rendered" in (folder / "meta.yaml").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------- rendered values


def test_s18_leaf_carries_exactly_the_intent() -> None:
    intent = _intents("s18-switch-concept")["leaf01"]
    text = _render(intent)
    assert text.splitlines()[0].startswith("! aifabric render")
    assert all(u in text for u in FOLLOWS)
    assert "\nhostname leaf01\n" in text
    block = _block(text, "interface Ethernet1/1")
    assert "description srv01:nic0" in block and "mtu 9000" in block
    assert "qos trust dscp" in block and "priority-flow-control on" in block
    # only priority 3 is no-drop, once
    assert [ln for ln in block if ln.startswith("priority-flow-control priority")] == [
        "priority-flow-control priority 3 no-drop"
    ]
    # ECN on queue 3 only: 50 KiB / 100 KiB written exactly in bytes
    ecn = [ln for ln in text.splitlines() if ln.startswith("      random-detect ecn")]
    assert len(ecn) == 4  # one per port, all on tx-queue 3
    assert ecn[0].strip() == (
        "random-detect ecn minimum-threshold 51200 bytes maximum-threshold 102400 bytes "
        "max-mark-probability 100"
    )
    lines = text.splitlines()
    queue_of_ecn = {lines[i - 3].strip() for i, ln in enumerate(lines) if ln in ecn}
    assert queue_of_ecn == {"tx-queue 3"}
    # CNP strict, the others weighted round robin with the intent's weights
    assert re.search(r"tx-queue 6\n      priority strict\n", text)
    assert re.search(r"tx-queue 0\n      no priority\n      bandwidth percent 50\n", text)
    assert re.search(r"tx-queue 3\n      no priority\n      bandwidth percent 50\n", text)
    # the global watchdog: 200 ms = 0.2 s
    assert "\npriority-flow-control pause watchdog default timeout 0.2\n" in text
    assert "\npriority-flow-control pause watchdog default recovery-time 0.2\n" in text
    assert "\npriority-flow-control pause watchdog action drop\n" in text


def test_s18_reads_back_exactly() -> None:
    intent = _intents("s18-switch-concept")["spine01"]
    dev = _read(_render(intent))
    for p in intent.ports:
        v = dev.view(p.name)
        assert v.pfc_priorities is not None and v.pfc_priorities.value == (3,)
        assert v.trust is not None and v.trust.value == "dscp"
        assert v.mtu_bytes is not None and v.mtu_bytes.value == 9216
        assert v.pfc_watchdog is not None and v.pfc_watchdog.value is True
        assert [(m.queue, m.kmin_bytes, m.kmax_bytes, m.probability_pct) for m in v.ecn] == [
            (3, 51200, 102400, 100.0)
        ]
    assert {q: s.value for q, s in dev.schedulers.items()} == {0: "dwrr", 3: "dwrr", 6: "strict"}
    whole = dev.whole()
    assert whole.dscp_to_tc is not None
    m = whole.dscp_to_tc.value
    assert (m[26], m[48]) == (3, 6)
    # every other DSCP is best effort (EOS's default map would spread them over 8 classes)
    assert {tc for d, tc in m.items() if d not in (26, 48)} == {0}
    assert len(m) == 64


def test_headroom_and_ecn_reasoning_are_comments() -> None:
    intent = _intents("lossless-lab")["leaf01"]
    text = _render(intent)
    host = pfc_headroom(400, 2.0, 9000 + 22).value
    fabric = pfc_headroom(400, 50.0, 9216 + 22).value
    assert f"! leaf01 Ethernet1 PFC headroom = {host} bytes" in text
    assert f"! leaf01 Ethernet3 PFC headroom = {fabric} bytes" in text
    assert f"must reserve at least {fabric} bytes for" in text
    assert "! leaf01 ECN thresholds on the RoCE queue = 153600 / 1536000 bytes" in text
    assert "Kmax must stay below" in text  # the S13 reasoning
    # lossless-lab: 150 KiB / 1500 KiB
    assert "minimum-threshold 153600 bytes maximum-threshold 1536000 bytes" in text
    for ln in text.splitlines():
        assert not ln.startswith("!") or len(ln) <= 100 or "https://" in ln or "http://" in ln


def test_lossy_port_gets_no_pfc_and_no_ecn() -> None:
    intent = _intents("lossless-lab")["leaf01"]
    ports = tuple(replace(p, lossless=False) if p.name == "Ethernet2" else p for p in intent.ports)
    text = _render(replace(intent, ports=ports))
    lossy = _block(text, "interface Ethernet2/1")
    assert not [ln for ln in lossy if "priority-flow-control" in ln or "random-detect" in ln]
    assert "qos trust dscp" in lossy and "priority strict" in lossy
    lossless = _block(text, "interface Ethernet1/1")
    assert "priority-flow-control priority 3 no-drop" in lossless


def test_strict_class_below_round_robin_one_is_flagged() -> None:
    intent = _intents("lossless-lab")["leaf01"]
    classes = (
        TrafficClass(tc=0, name="be", weight_percent=50),
        TrafficClass(tc=3, name="roce", lossless=True, weight_percent=50),
        TrafficClass(tc=1, name="cnp", scheduler="strict"),
    )
    qos = intent.qos.model_copy(update={"traffic_classes": classes})
    text = _render(replace(intent, qos=qos))
    assert "! WARNING: strict queue 1 is below round-robin queue 3" in text


def test_watchdog_off_and_odd_probability() -> None:
    intent = _intents("lossless-lab")["leaf01"]
    qos = intent.qos.model_copy(
        update={
            "pfc_watchdog": PfcWatchdog(enabled=False),
            "ecn": EcnThresholds(kmin_bytes=100_000, kmax_bytes=300_001, pmax_percent=20.4),
        }
    )
    text = _render(replace(intent, qos=qos))
    assert "watchdog" not in text.split("\nhostname ", 1)[1]
    assert (
        "minimum-threshold 100000 bytes maximum-threshold 300001 bytes max-mark-probability 20"
        in text
    )


@settings(max_examples=40, deadline=None)
@given(
    kmin=st.integers(min_value=1, max_value=20_000_000),
    span=st.integers(min_value=1, max_value=20_000_000),
    pmax=st.integers(min_value=1, max_value=100),
)
def test_ecn_thresholds_read_back_exactly(kmin: int, span: int, pmax: int) -> None:
    intent = _intents("s18-switch-concept")["leaf02"]
    ecn = EcnThresholds(kmin_bytes=kmin, kmax_bytes=kmin + span, pmax_percent=float(pmax))
    dev = _read(_render(replace(intent, qos=intent.qos.model_copy(update={"ecn": ecn}))))
    marks = dev.view("Ethernet1").ecn
    assert [(m.queue, m.kmin_bytes, m.kmax_bytes, m.probability_pct) for m in marks] == [
        (3, kmin, kmin + span, float(pmax))
    ]


# ---------------------------------------------------------------------------- port names


def _port(name: str, speed: float) -> PortIntent:
    return PortIntent(name, "x:y", 9000, speed, 2.0, False, True, None, "host")


def test_port_names() -> None:
    assert eos_port_name(_port("Ethernet7", 400)) == "Ethernet7/1"
    assert eos_port_name(_port("Ethernet7", 25)) == "Ethernet7"
    assert eos_port_name(_port("Ethernet7/3", 100)) == "Ethernet7/3"
    assert eos_port_name(_port("Management1", 1)) == "Management1"


@settings(deadline=None)
@given(
    port=st.integers(min_value=1, max_value=128),
    sub=st.one_of(st.none(), st.integers(min_value=2, max_value=8)),
    speed=st.sampled_from([10.0, 25.0, 50.0, 100.0, 200.0, 400.0, 800.0]),
)
def test_port_names_map_back(port: int, sub: int | None, speed: float) -> None:
    neutral = f"Ethernet{port}" if sub is None else f"Ethernet{port}/{sub}"
    assert eos_neutral(eos_port_name(_port(neutral, speed))) == neutral


# ---------------------------------------------------------------------------- change plans


def _spine02_rendered() -> RenderedFile:
    (f,) = DIALECT.render(_intents("lossless-lab")["spine02"])
    return f


def test_plan_against_the_real_spine02() -> None:
    existing = SPINE02.read_text(encoding="utf-8")
    plan = DIALECT.plan(_spine02_rendered(), existing)
    lines = plan.plan.splitlines()
    assert lines[2] == "configure session aifabric-spine02"
    assert lines[-1] == "show session-config diffs"
    # the fabric's spine02 ports (Ethernet1, Ethernet2 -> Ethernet1/1, Ethernet2/1) are not in
    # the file (it configures chassis ports Ethernet2/5/1 and 2/5/5 through a qos profile):
    # their whole QoS is added, the DSCP map and watchdog too, and nothing is removed (the
    # QOS_ROCE_DCQCN profile and its ports are not the intent's)
    assert plan.removed == 0
    assert not [ln for ln in lines if ln.strip().startswith("no ") and "priority" not in ln]
    assert "qos map dscp 26 to traffic-class 3" in lines
    assert "priority-flow-control pause watchdog default timeout 0.2" in lines
    for iface, peer in (("Ethernet1/1", "leaf01:Ethernet4"), ("Ethernet2/1", "leaf02:Ethernet4")):
        i = lines.index(f"interface {iface}", lines.index(f"interface {iface}") + 1)
        body = lines[i + 1 : i + 8]
        assert f"   description {peer}" in body
        assert "   priority-flow-control priority 3 no-drop" in body
    ecn = [ln.strip() for ln in lines if "random-detect ecn minimum" in ln]
    want = (
        "random-detect ecn minimum-threshold 153600 bytes maximum-threshold 1536000 bytes "
        "max-mark-probability 100"
    )
    assert ecn == [want, want]
    assert "QOS_ROCE_DCQCN" not in plan.plan
    # every line rendered (comments aside) is in the plan: the file has none of them
    assert plan.added == sum(
        1
        for ln in _spine02_rendered().text.splitlines()
        if ln.strip() and not ln.strip().startswith("!") and ln.strip() != "end"
    )


def test_plan_when_the_real_profile_is_bound_to_a_fabric_port() -> None:
    # the real spine02 config, its DCQCN profile also bound to fabric port Ethernet1/1, which
    # additionally has a second no-drop priority, ECN on another queue and a smaller MTU
    existing = SPINE02.read_text(encoding="utf-8") + (
        "interface Ethernet1/1\n"
        "   mtu 9214\n"
        "   service-profile QOS_ROCE_DCQCN\n"
        "   priority-flow-control on\n"
        "   priority-flow-control priority 3 no-drop\n"
        "   priority-flow-control priority 4 no-drop\n"
        "   !\n"
        "   uc-tx-queue 4\n"
        "      random-detect ecn minimum-threshold 2000 segments maximum-threshold 10000 "
        "segments\n"
        "   !\n"
        "   tx-queue 3\n"
        "      random-detect ecn minimum-threshold 100 kbytes maximum-threshold 200 kbytes\n"
        "      random-detect ecn count\n"
        "!\n"
    )
    plan = DIALECT.plan(_spine02_rendered(), existing)
    text = plan.plan
    negated = sorted(
        ln.strip()
        for ln in text.splitlines()
        if ln.strip().startswith("no ") and ln.strip() != "no priority"  # rendered: round robin
    )
    assert negated == [
        "no priority-flow-control priority 4 no-drop",
        "no service-profile QOS_ROCE_DCQCN",
        "no uc-tx-queue 4",
    ]
    assert plan.removed == 3
    # replaced by the rendered line (a 'no' after it would undo it): not negated
    assert "   mtu 9216" in text and "no mtu" not in text
    assert "153600 bytes" in text and "no random-detect" not in text
    # priority 3 is already there on Ethernet1/1: not added again there
    e1 = text.split("interface Ethernet1/1\n   description", 1)[1].split("\nexit", 1)[0]
    assert "   mtu 9216" in e1 and "   no priority-flow-control priority 4 no-drop" in e1
    assert "priority 3 no-drop" not in e1 and "priority-flow-control on" not in e1
    # Ethernet2/1 still gets it
    assert text.count("priority-flow-control priority 3 no-drop") == 1


def test_plan_watchdog_off_negates_globals_at_the_top_level() -> None:
    intent = _intents("lossless-lab")["spine02"]
    qos = intent.qos.model_copy(update={"pfc_watchdog": None})
    (f,) = DIALECT.render(replace(intent, qos=qos))
    (on,) = DIALECT.render(intent)
    plan = DIALECT.plan(f, on.text)
    lines = plan.plan.splitlines()
    wd = [i for i, ln in enumerate(lines) if ln.startswith("no priority-flow-control pause")]
    assert [lines[i] for i in wd] == [
        "no priority-flow-control pause watchdog action drop",
        "no priority-flow-control pause watchdog default timeout 0.2",
        "no priority-flow-control pause watchdog default recovery-time 0.2",
    ]
    assert "   no priority-flow-control pause watchdog" in lines  # per port
    # session levels: a global 'no' is typed at the top (every mode opened was exited)
    level = 0
    for i, ln in enumerate(lines):
        depth = (len(ln) - len(ln.lstrip())) // 3
        if ln.strip() == "exit":
            level -= 1
            continue
        assert depth <= level or depth == 0, (i, ln)
        if i in wd:
            assert level == 0, (i, ln)
        level = depth + (1 if ln.startswith(("interface ", "   tx-queue")) else 0)
    assert plan.added == 0 and plan.removed == 5


def test_plan_of_a_new_device_is_the_whole_config() -> None:
    f = _spine02_rendered()
    plan = DIALECT.plan(f, None)
    assert plan.existing is None and plan.plan == f.text and plan.removed == 0
    assert DIALECT.plan(f, f.text).plan == ""
