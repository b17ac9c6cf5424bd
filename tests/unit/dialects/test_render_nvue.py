"""NVUE render: the values the commands carry against the intent, the RoCE-defaults shortcut,
the YAML form read back as the same commands (and merged consistently by the config loader),
change plans against the real ``nv show qos roce`` of spine01 and against a command list taken
from NVIDIA's user guide, the parser's YAML reading, goldens (regenerate with
AIFABRIC_REGEN_GOLDEN=1)."""

from __future__ import annotations

import math
import os
import shutil
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.catalog import load_catalog
from aifabric.design import load_fabric
from aifabric.dialects.intent import DeviceIntent, build_intents, intent_from_observed
from aifabric.dialects.load import load_observed
from aifabric.dialects.nvue import interpret
from aifabric.dialects.nvue.render import (
    DIALECT,
    DOCS,
    Command,
    build_commands,
    nvue_port,
    roce_defaults_match,
    yaml_tree,
)
from aifabric.dialects.observed import ObservedDevice
from aifabric.dialects.ports import cumulus_neutral
from aifabric.dialects.render import RenderedFile, render_fabric
from aifabric.evidence import parse_text
from aifabric.evidence.nvue import NvueSet
from aifabric.model.qos import EcnThresholds
from aifabric.perf.hardware import pfc_headroom

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = {
    "lossless-lab": ROOT / "examples" / "lossless-lab" / "fabric.yaml",
    "s18-switch-concept": ROOT / "examples" / "s18-switch-concept.yaml",
}
GOLDEN = ROOT / "tests" / "fixtures" / "render" / "nvue"
SPINE01_SHOW = ROOT / "examples" / "lossless-lab" / "configs" / "spine01.txt"
LEAF01_SONIC = ROOT / "examples" / "lossless-lab" / "configs" / "leaf01.json"
ROCE_DOC = GOLDEN / "existing-roce-doc" / "spine01.nv"
TEMPLATES = ROOT / "src" / "aifabric" / "dialects" / "nvue" / "templates"


@cache
def _intents(fabric: str) -> dict[str, DeviceIntent]:
    return build_intents(load_fabric(EXAMPLES[fabric], load_catalog([])))


def _files(intent: DeviceIntent) -> tuple[RenderedFile, RenderedFile]:
    nv, startup = DIALECT.render(intent)
    return nv, startup


def _lines(intent: DeviceIntent) -> list[str]:
    return [ln for ln in _files(intent)[0].text.splitlines() if ln.startswith("nv set ")]


def _read(text: str, name: str = "sw") -> ObservedDevice:
    return interpret(parse_text(text, "nvue"), file=f"{name}.nv", name=name)


# ---- values --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("neutral", "swp"),
    [("Ethernet7", "swp7"), ("Ethernet7/2", "swp7s1"), ("Ethernet1/1", "swp1s0"), ("eth0", "eth0")],
)
def test_port_names(neutral: str, swp: str) -> None:
    assert nvue_port(neutral) == swp


@given(st.integers(1, 128), st.one_of(st.none(), st.integers(1, 8)))
def test_port_names_round_trip_through_the_parser_side(port: int, sub: int | None) -> None:
    neutral = f"Ethernet{port}" if sub is None else f"Ethernet{port}/{sub}"
    assert cumulus_neutral(nvue_port(neutral)) == neutral


def test_s18_is_explicit_pfc_3_only_ecn_50_100_kb_on_queue_3_only() -> None:
    intent = _intents("s18-switch-concept")["spine01"]
    assert not roce_defaults_match(intent)
    lines = _lines(intent)
    assert not [ln for ln in lines if " qos roce" in ln]
    assert [ln for ln in lines if "qos pfc default-global switch-priority" in ln] == [
        "nv set qos pfc default-global switch-priority 3"
    ]
    cc = "nv set qos congestion-control default-global traffic-class"
    assert f"{cc} 3 ecn enable" in lines
    assert f"{cc} 3 min-threshold 51200" in lines  # 50 KB
    assert f"{cc} 3 max-threshold 102400" in lines  # 100 KB
    assert f"{cc} 3 probability 100" in lines
    assert f"{cc} 0 ecn disable" in lines  # the default profile's ECN on TC 0 goes
    assert [ln for ln in lines if ln.startswith(cc)] == [
        f"{cc} 0 ecn disable",
        f"{cc} 3 ecn enable",
        f"{cc} 3 min-threshold 51200",
        f"{cc} 3 max-threshold 102400",
        f"{cc} 3 probability 100",
    ]
    es = "nv set qos egress-scheduler default-global traffic-class"
    assert f"{es} 6 mode strict" in lines  # CNP strict (S18)
    assert f"{es} 3 mode dwrr" in lines and f"{es} 3 bw-percent 50" in lines
    assert f"{es} 0 mode dwrr" in lines and f"{es} 0 bw-percent 50" in lines
    assert "nv set qos mapping default-global trust l3" in lines
    assert "nv set qos mapping default-global dscp 26 switch-priority 3" in lines
    assert "nv set qos mapping default-global dscp 48 switch-priority 6" in lines
    assert "nv set qos mapping default-global dscp 0-25,27-47,49-63 switch-priority 0" in lines


def test_s18_reads_back_exactly() -> None:
    intent = _intents("s18-switch-concept")["leaf01"]
    dev = _read(_files(intent)[0].text)
    assert not dev.notes
    for port in intent.ports:
        v = dev.view(port.name)
        assert v.pfc_priorities is not None and v.pfc_priorities.value == (3,)
        assert v.tc_of_dscp(26) == 3 and v.tc_of_dscp(48) == 6 and v.tc_of_dscp(24) == 0
        on = [(m.queues, m.kmin_bytes, m.kmax_bytes) for m in v.ecn if m.enabled]
        assert on == [((3,), 51200, 102400)]
        assert v.mtu_bytes is not None and v.mtu_bytes.value == port.mtu_bytes
        assert v.pfc_watchdog is not None and v.pfc_watchdog.value is True
    assert {q: s.value for q, s in dev.schedulers.items()} == {0: "dwrr", 3: "dwrr", 6: "strict"}


def test_lossless_lab_ports_mtu_watchdog_cable_and_headroom_comments() -> None:
    intent = _intents("lossless-lab")["leaf01"]
    nv = _files(intent)[0].text
    lines = _lines(intent)
    by_port = {p.name: p for p in intent.ports}
    assert by_port["Ethernet1"].mtu_bytes == 9000 and by_port["Ethernet3"].mtu_bytes == 9216
    for name, p in by_port.items():
        swp = nvue_port(name)
        assert f"nv set interface {swp} link mtu {p.mtu_bytes}" in lines
        assert (f"nv set interface {swp} qos pfc-watchdog state enable" in lines) == p.lossless
        # the IEEE headroom bound of that very port, in the comments
        want = pfc_headroom(p.speed_gbps, p.cable_m, p.mtu_bytes + 22)
        assert p.headroom_bytes == want.value
        assert f"leaf01 {name} PFC headroom = {want.value} bytes" in nv
    # 2 m host DACs and 50 m fabric fibre: the longest lossless cable, whole metres
    assert max(math.ceil(p.cable_m) for p in intent.lossless_ports) == 50
    assert "nv set qos pfc default-global cable-length 50" in lines
    # watchdog: detection 200 ms = polling 100 ms x robustness 2
    assert "nv set qos pfc-watchdog polling-interval 100" in lines
    assert "nv set qos pfc-watchdog robustness 2" in lines
    # ECN reasoning recorded as a comment; thresholds 150 KiB / 1500 KiB of the fabric file
    assert "# leaf01 ECN thresholds on the RoCE queue = 153600 / 1536000 bytes" in nv
    assert "traffic-class 3 min-threshold 153600" in nv
    assert nv.endswith("nv config apply\n")


def test_breakout_sub_ports_are_declared_and_named_from_zero() -> None:
    intent = _intents("s18-switch-concept")["leaf01"]
    ports = (
        replace(intent.ports[0], name="Ethernet7/1"),
        replace(intent.ports[1], name="Ethernet7/2"),
    )
    broken = replace(intent, ports=ports, breakouts={7: 4})
    lines = _lines(broken)
    assert lines.index("nv set interface swp7 link breakout 4x") < lines.index(
        "nv set interface swp7s0 link mtu 9000"
    )
    assert "nv set interface swp7s1 link mtu 9000" in lines
    dev = _read(_files(broken)[0].text)
    assert not dev.notes  # the breakout line is read, not left over
    assert dev.has_port("Ethernet7/2") and dev.neutral["Ethernet7/2"] == "swp7s1"


def _roce_intent() -> DeviceIntent:
    intent = _intents("lossless-lab")["spine01"]
    ecn = EcnThresholds(kmin_bytes=150_000, kmax_bytes=1_500_000, pmax_percent=100.0)
    return replace(intent, qos=intent.qos.model_copy(update={"ecn": ecn}))


def test_roce_defaults_only_where_they_equal_the_intent() -> None:
    intent = _roce_intent()
    assert roce_defaults_match(intent)
    lines = _lines(intent)
    assert lines[:2] == ["nv set qos roce enable on", "nv set qos roce mode lossless"]
    assert not [ln for ln in lines if "qos mapping" in ln or "congestion-control" in ln]
    dev = _read(_files(intent)[0].text)
    v = dev.view("Ethernet1")
    assert v.pfc_priorities is not None and v.pfc_priorities.value == (3,)
    assert v.tc_of_dscp(26) == 3 and v.queue_of_tc(6) == 6
    marks = [m for m in v.ecn if m.covers(3) and m.enabled]
    assert [(m.kmin_bytes, m.kmax_bytes) for m in marks] == [(150_000, 1_500_000)]
    assert dev.schedulers[6].value == "strict"
    # stable: what the parser read renders to the same text
    again = DIALECT.render(intent_from_observed(intent, dev))
    assert [f.text for f in again] == [f.text for f in DIALECT.render(intent)]


@pytest.mark.parametrize(
    "update",
    [
        {"ecn": EcnThresholds(kmin_bytes=153_600, kmax_bytes=1_536_000)},  # the lab's 150 KiB
        {"pfc_priorities": (3, 4)},
        {"dscp_to_tc": {26: 3, 46: 6}},  # the default map puts DSCP 46 in SP 5
        {"trust": "pcp"},
        {"ecn": None},
    ],
)
def test_roce_defaults_not_used_when_anything_differs(update: dict[str, object]) -> None:
    base = _roce_intent()
    intent = replace(base, qos=base.qos.model_copy(update=update))
    assert not roce_defaults_match(intent)
    assert not [ln for ln in _lines(intent) if " qos roce" in ln]


# ---- the YAML form -------------------------------------------------------------------------


def _words(text: str) -> list[tuple[str, ...]]:
    return [r.words for r in parse_text(text, "nvue").records if isinstance(r, NvueSet)]


@pytest.mark.parametrize("fabric", sorted(EXAMPLES))
def test_yaml_states_the_same_commands(fabric: str) -> None:
    for intent in _intents(fabric).values():
        if intent.role != "switch":
            continue
        nv, startup = _files(intent)
        assert startup.kind is None and nv.kind == "nvue"
        assert startup.path == f"{intent.name}.startup.yaml"
        assert sorted(_words(startup.text)) == sorted(_words(nv.text))
        assert parse_text(startup.text).kind == "nvue"  # detected despite the comment header
        assert not parse_text(startup.text, "nvue").warnings


def _summary(dev: ObservedDevice, ports: list[str]) -> list[object]:
    out: list[object] = [{q: s.value for q, s in sorted(dev.schedulers.items())}]
    for p in ports:
        v = dev.view(p)
        out.append((
            v.pfc_priorities.value if v.pfc_priorities else None,
            v.trust.value if v.trust else None,
            sorted(v.dscp_to_tc.value.items()) if v.dscp_to_tc else None,
            sorted(v.tc_to_queue.value.items()) if v.tc_to_queue else None,
            [(m.queues, m.kmin_bytes, m.kmax_bytes, m.probability_pct, m.enabled) for m in v.ecn],
            v.mtu_bytes.value if v.mtu_bytes else None,
            v.pfc_watchdog.value if v.pfc_watchdog else None,
        ))  # fmt: skip
    return out


def test_loader_reads_both_files_and_the_merge_changes_nothing(tmp_path: Path) -> None:
    fabric = load_fabric(EXAMPLES["lossless-lab"], load_catalog([]))
    res = render_fabric(fabric, "nvue")
    both, only_nv = tmp_path / "both", tmp_path / "nv"
    for f in res.files:
        for d in (both, only_nv):
            d.mkdir(exist_ok=True)
        (both / f.path).write_text(f.text, encoding="utf-8")
        if f.kind is not None:
            (only_nv / f.path).write_text(f.text, encoding="utf-8")
    names = [s.name for s in fabric.switches]
    a = load_observed(configs=both, devices=names, switches=names)
    b = load_observed(configs=only_nv, devices=names, switches=names)
    assert not a.skipped and not b.skipped
    for name in names:
        ports = [p.name for p in res.intents[name].ports]
        assert a.devices[name].files == [f"both/{name}.nv", f"both/{name}.startup.yaml"]
        assert _summary(a.devices[name], ports) == _summary(b.devices[name], ports)
        assert not a.devices[name].notes


_COMMANDS = st.lists(
    st.one_of(
        st.builds(
            lambda tc, v: Command(("qos", "congestion-control", "default-global", "traffic-class",
                                   str(tc), "min-threshold", str(v))),
            st.integers(0, 7), st.integers(0, 10**7),
        ),
        st.builds(
            lambda sp: Command(("qos", "pfc", "default-global", "switch-priority", str(sp))),
            st.integers(0, 7),
        ),
        st.builds(
            lambda n, m: Command(("interface", f"swp{n}", "link", "mtu", str(m))),
            st.integers(1, 64), st.integers(1500, 9216),
        ),
        st.builds(
            lambda d, sp: Command(("qos", "mapping", "default-global", "dscp", d,
                                   "switch-priority", str(sp))),
            st.sampled_from(["26", "0-25,27-47", "48"]), st.integers(0, 7),
        ),
        st.sampled_from([Command(("qos", "roce", "enable", "on")),
                         Command(("qos", "mapping", "default-global", "trust", "l3"))]),
    ),
    max_size=12,
)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(_COMMANDS)
def test_yaml_tree_reads_back_as_its_commands(commands: list[Command]) -> None:
    # later commands of the same path replace earlier ones, as in NVUE
    last: dict[tuple[str, ...], Command] = {}
    for c in commands:
        key = c.words if c.words[:2] == ("qos", "pfc") else c.words[:-1]
        last[key] = c
    if not last:
        return
    text = "\n".join(yaml_tree(last.values())) + "\n"
    assert sorted(_words(text)) == sorted(c.words for c in last.values())


# ---- parser and interpreter additions ------------------------------------------------------


def test_parser_reads_a_commented_startup_yaml_as_set_commands() -> None:
    text = (
        "# a comment header\n#\n"
        "- header:\n    model: SN5600\n"
        "- set:\n    qos:\n      roce:\n        enable: on\n"
        "      pfc:\n        default-global:\n          switch-priority:\n            '3': {}\n"
        "    interface:\n      swp1-2:\n        link:\n          mtu: 9000\n"
        "- unset:\n    interface:\n      swp9:\n        qos:\n          pfc-watchdog: {}\n"
    )
    res = parse_text(text)
    assert res.kind == "nvue" and not res.warnings
    sets = [(r.line, r.words, r.unset) for r in res.records if isinstance(r, NvueSet)]
    assert sets == [
        (8, ("qos", "roce", "enable", "on"), False),  # 'on' as written, not YAML 1.1 true
        (12, ("qos", "pfc", "default-global", "switch-priority", "3"), False),
        (16, ("interface", "swp1-2", "link", "mtu", "9000"), False),
        (21, ("interface", "swp9", "qos", "pfc-watchdog"), True),
    ]
    dev = interpret(res, file="f", name="s")
    assert dev.view("Ethernet2").mtu_bytes is not None
    assert dev.view("Ethernet2").mtu_bytes.value == 9000  # type: ignore[union-attr]
    wd = dev.ports["swp9"].pfc_watchdog
    assert wd is not None and wd.value is False


def test_parser_survives_a_yaml_alias_bomb() -> None:
    lines = ["- set:", "    a: &a0 {x: 1, y: 2}"]
    for i in range(1, 24):
        lines.append(f"    b{i}: &a{i} {{p: *a{i - 1}, q: *a{i - 1}}}")
    res = parse_text("\n".join(lines) + "\n", "nvue")
    assert any("too many nodes" in w.message for w in res.warnings)


def test_interpreter_reads_scheduler_watchdog_forms_and_breakout() -> None:
    text = (
        "nv set qos egress-scheduler default-global traffic-class 0-2 mode dwrr\n"
        "nv set qos egress-scheduler default-global traffic-class 0-2 bw-percent 30\n"
        "nv set qos egress-scheduler default-global traffic-class 6 mode strict\n"
        "nv set qos pfc-watchdog polling-interval 200\n"
        "nv set interface swp1 qos pfc-watchdog\n"
        "nv set interface swp2 qos pfc-watchdog state disable\n"
        "nv set interface swp3 link breakout 4x\n"
    )
    dev = _read(text)
    assert not dev.notes
    assert {q: s.value for q, s in dev.schedulers.items()} == {
        0: "dwrr", 1: "dwrr", 2: "dwrr", 6: "strict"
    }  # fmt: skip
    assert dev.schedulers[6].src.line == 3
    wd1, wd2 = dev.ports["swp1"].pfc_watchdog, dev.ports["swp2"].pfc_watchdog
    assert wd1 is not None and wd1.value is True and wd1.src.line == 5
    assert wd2 is not None and wd2.value is False


# ---- change plans --------------------------------------------------------------------------


def test_plan_against_the_real_spine01_show_output_says_it_cannot_diff() -> None:
    nv = _files(_intents("lossless-lab")["spine01"])[0]
    plan = DIALECT.plan(nv, SPINE01_SHOW.read_text(encoding="utf-8"))
    n = len([ln for ln in nv.text.splitlines() if ln.startswith("nv set ")])
    assert (plan.added, plan.removed) == (n, 0) and n == 27
    assert plan.existing == "existing"
    text = plan.plan
    assert text.startswith("# The existing file has no 'nv set' commands")
    assert "no 'nv unset' can be" in text and "nv unset" not in text.replace("'nv unset'", "")
    diffs = [ln[4:] for ln in text.splitlines() if ln.startswith("#   ")]
    # nv show prints 146.48 KB / 1.43 MB (binary): 149996 / 1499464 bytes on TC 0 and 3
    assert (
        "ECN on TC 3: existing 149996/1499464 B, p 100, rendered 153600/1536000 B, p 100" in diffs
    )
    assert "ECN on TC 0: existing 149996/1499464 B, p 100, rendered off" in diffs
    # the default map sends DSCP 24-31 to SP 3; the intent only DSCP 26
    assert "DSCP 24-25,27-31: existing class 3, rendered 0" in diffs
    assert "MTU: not stated in the existing file, rendered 9216" in diffs
    # PFC on 3, trust, SP->TC and the ETS schedulers already agree: not listed
    assert not [d for d in diffs if d.startswith(("PFC", "trust", "switch priority", "TC "))]
    assert text.rstrip().endswith("nv config apply")


def test_plan_against_the_guides_roce_commands_names_the_changes() -> None:
    nv = _files(_intents("lossless-lab")["spine01"])[0]
    plan = DIALECT.plan(nv, ROCE_DOC.read_text(encoding="utf-8"))
    lines = plan.plan.splitlines()
    unsets = [ln for ln in lines if ln.startswith("nv unset")]
    # RoCE mode goes (explicit settings replace it); SP 2 leaves the PFC collection
    assert unsets == ["nv unset qos roce", "nv unset qos pfc default-global switch-priority 2"]
    # trust both -> l3, DSCP 26 back from SP 2 to 3, SP 2 -> TC 0 and SP 3 -> TC 3 again
    for want in (
        "nv set qos mapping default-global trust l3",
        "nv set qos mapping default-global dscp 26 switch-priority 3",
        "nv set qos egress-queue-mapping default-global switch-priority 0-2,4-5,7 traffic-class 0",
        "nv set qos egress-queue-mapping default-global switch-priority 3 traffic-class 3",
        "nv set qos pfc default-global switch-priority 3",
        "nv set interface swp2 qos pfc-watchdog state enable",
    ):
        assert want in lines, want
    # swp1's watchdog is already on ('qos pfc-watchdog' = 'state enable'); swp3 is not a
    # fabric port of spine01, so its watchdog is left alone; traffic pools are not owned
    assert "nv set interface swp1 qos pfc-watchdog state enable" not in lines
    assert not [ln for ln in lines if "swp3" in ln or "traffic-pool" in ln]
    assert (plan.added, plan.removed) == (26, 2)
    assert lines[-1] == "nv config apply"


def test_plan_follows_unsets_ranges_and_leaves_other_ports_alone() -> None:
    nv = _files(_intents("lossless-lab")["spine01"])[0]
    existing = (
        "nv set interface swp1-4 link mtu 1500\n"
        "nv set qos pfc default-global switch-priority 2,3\n"
        "nv unset qos pfc default-global switch-priority 2\n"
        "nv set qos mapping default-global dscp 0-63 switch-priority 0\n"
    )
    lines = DIALECT.plan(nv, existing).plan.splitlines()
    assert "nv set interface swp1 link mtu 9216" in lines
    assert "nv set interface swp2 link mtu 9216" in lines
    # SP 3 is already lossless (SP 2 was unset after); swp3/4 are not spine01's fabric ports;
    # DSCP 26/48 are re-set over the 0-63 line, which is then not unset
    assert "nv set qos pfc default-global switch-priority 3" not in lines
    assert not [ln for ln in lines if ln.startswith("nv unset")]
    assert "nv set qos mapping default-global dscp 26 switch-priority 3" in lines
    assert "nv set qos mapping default-global dscp 0-25,27-47,49-63 switch-priority 0" not in lines


def test_plan_against_itself_in_either_form_is_empty() -> None:
    for fabric in EXAMPLES:
        for intent in _intents(fabric).values():
            if intent.role != "switch":
                continue
            nv, startup = _files(intent)
            for existing in (nv.text, startup.text):
                plan = DIALECT.plan(nv, existing)
                assert (plan.added, plan.removed, plan.plan) == (0, 0, "")


def test_plan_against_a_foreign_or_missing_file() -> None:
    nv = _files(_intents("lossless-lab")["leaf01"])[0]
    n = len([ln for ln in nv.text.splitlines() if ln.startswith("nv set ")])
    foreign = DIALECT.plan(nv, LEAF01_SONIC.read_text(encoding="utf-8"))
    assert foreign.plan.startswith("# The existing file is a sonic-config-db file, not NVUE")
    assert (foreign.added, foreign.removed) == (n, 0)
    none = DIALECT.plan(nv, None)
    assert none.existing is None and none.plan == nv.text and none.added == n


# ---- templates and goldens -----------------------------------------------------------------


def test_templates_name_every_document_the_dialect_follows() -> None:
    assert set(DIALECT.follows) == set(DOCS.values())
    for t in TEMPLATES.glob("*.j2"):
        text = t.read_text(encoding="utf-8")
        head = "\n".join(text.splitlines()[:9])
        assert all(u in text for u in DOCS.values()), t.name
        assert "https://" in head


def _golden_files(fabric: str) -> list[RenderedFile]:
    return render_fabric(load_fabric(EXAMPLES[fabric], load_catalog([])), "nvue").files


@pytest.mark.parametrize("fabric", sorted(EXAMPLES))
def test_goldens(fabric: str) -> None:
    folder = GOLDEN / fabric
    files = _golden_files(fabric)
    if os.environ.get("AIFABRIC_REGEN_GOLDEN") == "1":
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for f in files:
            (folder / f.path).write_text(f.text, encoding="utf-8")
        rel = EXAMPLES[fabric].relative_to(ROOT)
        (folder / "meta.yaml").write_text(
            f'source: "rendered by aifabric render from {rel} --dialect nvue"\n'
            "notes: >-\n"
            "  NVUE nv set command list (<switch>.nv) and the same settings as startup YAML\n"
            "  (<switch>.startup.yaml) per switch, compared byte for byte by\n"
            "  tests/unit/dialects/test_render_nvue.py (regenerate with AIFABRIC_REGEN_GOLDEN=1).\n"
            "origin: rendered\n",
            encoding="utf-8",
        )
    names = sorted(p.name for p in folder.iterdir() if p.name != "meta.yaml")
    assert names == sorted(f.path for f in files)
    for f in files:
        assert (folder / f.path).read_text(encoding="utf-8") == f.text, f.path
    assert "source:" in (folder / "meta.yaml").read_text(encoding="utf-8")


def test_build_commands_sections_are_in_apply_order() -> None:
    roce, sections = build_commands(_intents("s18-switch-concept")["spine01"])
    assert not roce
    titles = [s.title.split(" ")[0] for s in sections]
    assert titles == ["Classification", "Egress", "PFC", "ECN", "Egress", "PFC", "PFC", "Ports"]
