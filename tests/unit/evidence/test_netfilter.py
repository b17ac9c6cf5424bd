"""iptables-save / -S / -L: DSCP and TOS marking, deliberate drops, counters. Expected values were
read by hand from the captures under ``tests/fixtures/evidence/iptables/`` (iptables 1.8.9
nf_tables in network namespaces on Debian 12)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind, parse_text
from aifabric.evidence.netfilter import DSCP_CLASSES, NetfilterChain, NetfilterRule
from aifabric.evidence.paste import parse_paste
from tests.unit.evidence.fixtures import all_cases, case, draw_garbage_insertion, load

KIND = "iptables"
CASES = sorted(c.name for c in all_cases() if c.kind == KIND)


def _rules(name: str) -> list[NetfilterRule]:
    result = load(KIND, name)
    assert not result.warnings, [str(w) for w in result.warnings]
    rules: list[NetfilterRule] = result.of_type(NetfilterRule)
    return rules


@pytest.mark.parametrize("name", CASES)
def test_detected_without_kind(name: str) -> None:
    assert detect_kind(case(KIND, name).text()) == KIND


def test_dscp_classes_follow_the_iana_registry() -> None:
    assert (DSCP_CLASSES["af31"], DSCP_CLASSES["ef"], DSCP_CLASSES["cs6"]) == (26, 46, 48)
    assert (DSCP_CLASSES["af11"], DSCP_CLASSES["af43"], DSCP_CLASSES["be"]) == (10, 38, 0)


def test_save_with_counters_sets_dscp_26() -> None:
    [r] = _rules("lab-host-dscp-26-save-c")
    assert (r.table, r.chain, r.target, r.protocol) == ("mangle", "OUTPUT", "DSCP", "tcp")
    assert (r.set_dscp, r.marked_dscp, r.packets, r.bytes, r.line) == (26, 26, 0, 0, 8)
    assert (r.spec, r.format) == ("-p tcp", "save")
    chains = load(KIND, "lab-host-dscp-26-save-c").of_type(NetfilterChain)
    assert [c.chain for c in chains] == ["PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"]
    assert all(c.policy == "ACCEPT" and c.packets == 0 and c.table == "mangle" for c in chains)


def test_save_without_counters_sets_dscp_10() -> None:
    [r] = _rules("lab-host-dscp-10-save-mangle")
    assert (r.set_dscp, r.packets, r.counters_exact) == (10, None, True)


def test_dscp_class_tos_and_dscp_match() -> None:
    match, af31, tcp, tos = _rules("lab-host-mangle-classes-save-c")
    assert (match.chain, match.target, match.match_dscp, match.marked_dscp) == (
        "FORWARD", None, 26, None)  # fmt: skip
    assert (af31.dport, af31.protocol, af31.set_dscp, af31.matches) == ("4791", "udp", 26, ["udp"])
    assert (tcp.dport, tcp.packets, tcp.bytes) == ("5201", 22635, 1370724788)
    assert (tos.chain, tos.target, tos.set_tos, tos.tos_mask, tos.marked_dscp) == (
        "POSTROUTING", "TOS", 0x10, 0xFF, 4)  # fmt: skip


def test_rules_form_has_no_table_but_the_target_says_mangle() -> None:
    rules = _rules("lab-host-mangle-S")
    assert [(r.table, r.chain, r.format) for r in rules] == [
        (None, "FORWARD", "rules"), ("mangle", "OUTPUT", "rules"),
        ("mangle", "OUTPUT", "rules"), ("mangle", "POSTROUTING", "rules"),
    ]  # fmt: skip
    text = "$ iptables -t mangle -S\n" + case(KIND, "lab-host-mangle-S").text()
    assert {r.table for r in parse_text(text, KIND).of_type(NetfilterRule)} == {"mangle"}
    text = "$ iptables -S\n" + case(KIND, "lab-host-mangle-S").text()
    assert parse_text(text, KIND).of_type(NetfilterRule)[0].table == "filter"  # the default


def test_list_form_with_rounded_counters() -> None:
    rules = _rules("lab-host-mangle-vnL")
    match, udp, tcp, tos = rules
    assert (match.target, match.match_dscp, match.protocol) == (None, 26, None)
    assert (udp.protocol, udp.dport, udp.set_dscp, udp.packets) == ("udp", "4791", 26, 0)
    assert (tcp.packets, tcp.bytes, tcp.counters_exact) == (22635, 1371 * 10**6, False)
    assert (tos.sport, tos.set_tos, tos.tos_mask) == ("22", 0x10, 0xFF)
    assert all(r.format == "list" for r in rules)


def test_random_drop_save_and_list() -> None:
    [r] = _rules("lab-router-statistic-drop-save-c")
    assert (r.table, r.chain, r.target, r.drops) == ("filter", "FORWARD", "DROP", True)
    assert (r.statistic_mode, r.probability, r.packets, r.bytes) == (
        "random", 0.04999999981, 7617, 55883304)  # fmt: skip
    [listed] = _rules("lab-router-statistic-drop-vnL")
    assert (listed.statistic_mode, listed.probability, listed.packets) == (
        "random", 0.04999999981, 7617)  # fmt: skip
    assert listed.bytes == 56 * 10**6 and not listed.counters_exact


def test_hashlimit_rates_are_binary_bytes_per_second() -> None:
    [r] = _rules("lab-router-hashlimit-drop-save-c")
    assert (r.rate_above, r.rate_bytes_per_s, r.per_flow) == (True, 10 * 2**20, True)
    assert r.rate_mode == "srcip,srcport,dstip,dstport" and r.matches == ["hashlimit"]
    [listed] = _rules("lab-router-connbytes-hashlimit-vnL")
    assert (listed.rate_bytes_per_s, listed.connbytes_min, listed.per_flow) == (
        4883 * 1024, 1000000, True)  # fmt: skip
    assert listed.rate_bytes_per_s * 8 / 1e6 == pytest.approx(40.0, abs=0.01)  # 40 Mbit/s


def test_packet_rate_limits_and_comments() -> None:
    text = "\n".join([
        "*filter",
        ":INPUT DROP [10:600]",
        '-A INPUT -p tcp --syn -m hashlimit --hashlimit-upto 50/sec --hashlimit-mode srcip '
        '--hashlimit-name syn -m comment --comment "syn flood" -j ACCEPT',
        "-A INPUT -m limit --limit 3/min -j LOG",
        "-A INPUT -p tcp -m multiport --dports 22,443 -j ACCEPT",
        "COMMIT",
    ])  # fmt: skip
    result = parse_text(text, KIND)
    assert not result.warnings
    syn, log, multi = result.of_type(NetfilterRule)
    assert (syn.rate_above, syn.rate_packets_per_s, syn.comment, syn.target) == (
        False, 50.0, "syn flood", "ACCEPT")  # fmt: skip
    assert log.rate_packets_per_s == pytest.approx(3 / 60) and log.target == "LOG"
    assert multi.dport == "22,443"
    [chain] = result.of_type(NetfilterChain)
    assert (chain.policy, chain.packets, chain.bytes) == ("DROP", 10, 600)


def test_a_rule_missing_its_value_is_a_warning() -> None:
    result = parse_text("*filter\n-A INPUT -p\n-A INPUT -j DROP\nCOMMIT\n", KIND)
    assert [w.line for w in result.warnings] == [2]
    assert [r.target for r in result.of_type(NetfilterRule)] == ["DROP"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_garbage_line_is_one_warning(data: st.DataObject) -> None:
    cases = [c for c in all_cases() if c.kind == KIND]
    draw_garbage_insertion(data, cases, lambda kind: lambda t: parse_text(t, kind))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 63), st.integers(0, 2**63), st.integers(0, 2**63))
def test_set_dscp_round_trip(dscp: int, packets: int, nbytes: int) -> None:
    text = f"*mangle\n[{packets}:{nbytes}] -A OUTPUT -j DSCP --set-dscp {dscp:#04x}\nCOMMIT\n"
    [r] = parse_text(text, KIND).of_type(NetfilterRule)
    assert (r.set_dscp, r.packets, r.bytes) == (dscp, packets, nbytes)


def test_an_indented_listing_followed_by_prose_is_read() -> None:
    # a mail that indents the session with a tab and goes on in prose at column 0: the listing
    # is not dedented (the prose is not indented), yet it is iptables -L output
    listing = case("iptables", "lab-host-mangle-vnL").text()
    text = "It works like this:\n\n" + "".join(f"\t{ln}\n" for ln in listing.splitlines())
    text += "\nHowever, it does not work later.\n"
    parts = [p for p in parse_paste(text) if p.result and p.result.records]
    assert [p.kind for p in parts] == ["iptables"]
