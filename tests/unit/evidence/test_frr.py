"""FRR ``show bgp summary`` (JSON and text). Expected values were read by hand from the captures
under ``tests/fixtures/evidence/frr-bgp-summary/`` (FRR 8.4.4 in network namespaces on Debian
12; FRR pull request 7594 and issue 16238)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind, parse_text
from aifabric.evidence.frr import BgpPeer
from tests.unit.evidence.fixtures import all_cases, case, draw_garbage_insertion, load

KIND = "frr-bgp-summary"
CASES = sorted(c.name for c in all_cases() if c.kind == KIND)


def _peers(name: str) -> list[BgpPeer]:
    result = load(KIND, name)
    assert not result.warnings, [str(w) for w in result.warnings]
    peers: list[BgpPeer] = result.of_type(BgpPeer)
    return peers


@pytest.mark.parametrize("name", CASES)
def test_detected_without_kind(name: str) -> None:
    assert detect_kind(case(KIND, name).text()) == KIND


def test_numbered_established_json() -> None:
    [p] = _peers("lab-numbered-established-json")
    assert (p.peer, p.hostname, p.address_family, p.vrf) == ("10.201.9.1", "f2", "ipv4Unicast",
                                                             "default")
    assert (p.router_id, p.local_as, p.remote_as) == ("10.201.255.1", 65201, 65202)
    assert (p.state, p.peer_state, p.established) == ("Established", "OK", True)
    assert (p.prefixes_received, p.prefixes_sent, p.msgs_received, p.msgs_sent) == (1, 2, 5, 5)
    assert (p.uptime, p.uptime_ms, p.id_type, p.line) == ("00:00:02", 2000, "ipv4", 13)
    assert (p.connections_established, p.connections_dropped) == (1, 0)


def test_the_text_table_says_the_same() -> None:
    [p] = _peers("lab-numbered-established-text")
    assert (p.peer, p.hostname, p.remote_as, p.state) == ("10.201.9.1", "f2", 65202,
                                                          "Established")
    assert (p.prefixes_received, p.prefixes_sent, p.msgs_received, p.inq, p.outq) == (1, 2, 5, 0,
                                                                                      0)
    assert (p.address_family, p.vrf, p.router_id, p.local_as) == ("IPv4 Unicast", "default",
                                                                  "10.201.255.1", 65201)
    assert p.description is None and p.line == 9


def test_unnumbered_peer_is_its_interface() -> None:
    [p] = _peers("lab-unnumbered-established-json")
    assert (p.peer, p.hostname, p.id_type, p.remote_as) == ("u0", "u2", "interface", 65212)
    [t] = _peers("lab-unnumbered-established-text")
    assert (t.peer, t.hostname, t.prefixes_received) == ("u0", "u2", 1)


def test_hold_timer_expired() -> None:
    [p] = _peers("lab-hold-expired-json")
    assert (p.state, p.established, p.connections_established, p.connections_dropped) == (
        "Connect", False, 1, 1)  # fmt: skip
    [t] = _peers("lab-hold-expired-text")
    assert (t.state, t.prefixes_received, t.prefixes_sent, t.uptime) == ("Connect", None, 0,
                                                                         "00:00:02")
    [other] = _peers("lab-hold-expired-peer-side-json")
    assert other.established  # one second later the far side had not noticed yet


def test_zero_prefixes_received() -> None:
    [p] = _peers("lab-established-zero-prefixes-json")
    assert (p.state, p.prefixes_received, p.prefixes_sent) == ("Established", 0, 1)
    [t] = _peers("lab-established-zero-prefixes-text")
    assert (t.state, t.prefixes_received) == ("Established", 0)


def test_idle_admin_after_a_prompt() -> None:
    [p] = _peers("frr-pr-7594-idle-admin-json")
    assert (p.state, p.hostname, p.local_as, p.line) == ("Idle (Admin)", "exit1-debian-9", 200,
                                                         14)
    assert p.peer_state is None  # not printed by that FRR version


def test_frr10_table_with_named_as_numbers() -> None:
    peers = _peers("frr-issue-16238-connect-text")
    assert [p.peer for p in peers] == ["1.1.1.1", "3.3.3.3", "4.4.4.4", "5.5.5.5", "6.6.6.6"]
    first = peers[0]
    assert (first.state, first.uptime, first.remote_as, first.prefixes_sent) == (
        "Connect", "never", None, 0)  # fmt: skip
    assert [p.prefixes_received for p in peers[1:]] == [9410] * 4
    assert peers[1].description == "FRRouting/9.1" and peers[1].router_id == "172.16.0.1"
    assert peers[1].local_as is None


def test_long_neighbor_name_wraps_and_two_word_states() -> None:
    text = "\n".join([
        "IPv4 Unicast Summary (VRF default):",
        "BGP router identifier 10.0.0.1, local AS number 65001 vrf-id 0",
        "Neighbor        V         AS   MsgRcvd   MsgSent   TblVer  InQ OutQ  Up/Down "
        "State/PfxRcd   PfxSnt Desc",
        "spine-long-hostname(swp51)",
        "                4      65100         0         0        0    0    0    never "
        "Idle (Admin)        0 N/A",
        "leaf02(swp52)   4      65100        12        11        0    0    0 00:01:00 "
        "     (Policy) (Policy) N/A",
    ])  # fmt: skip
    result = parse_text(text, KIND)
    assert not result.warnings
    a, b = result.of_type(BgpPeer)
    assert (a.peer, a.hostname, a.state, a.line, a.end_line) == (
        "swp51", "spine-long-hostname", "Idle (Admin)", 4, 5)  # fmt: skip
    assert (b.peer, b.state, b.prefixes_received) == ("swp52", "Established", None)


def test_vrf_all_and_old_json_without_address_family() -> None:
    peer = {"remoteAs": 65100, "state": "Active", "pfxRcd": 0}
    vrf_all = {"default": {"ipv4Unicast": {"routerId": "1.1.1.1", "peers": {"10.0.0.1": peer}}},
               "red": {"ipv6Unicast": {"peers": {"fe80::1": dict(peer, state="Established")}}}}
    a, b = parse_text(json.dumps(vrf_all, indent=2), KIND).of_type(BgpPeer)
    assert (a.vrf, a.address_family, a.peer, a.state) == ("default", "ipv4Unicast", "10.0.0.1",
                                                          "Active")
    assert (b.vrf, b.address_family, b.peer) == ("red", "ipv6Unicast", "fe80::1")
    old = {"routerId": "1.1.1.1", "as": 65001, "peers": {"10.0.0.1": peer}}
    [c] = parse_text(json.dumps(old, indent=2), KIND).of_type(BgpPeer)
    assert (c.address_family, c.local_as, c.line) == (None, 65001, 5)


def test_no_neighbors() -> None:
    assert parse_text("{\n}\n", KIND).records == []
    # FRR's line alone (bgpd/bgp_vty.c): the VRF's summary, with no neighbor
    result = parse_text("% No BGP neighbors found in VRF default\n", KIND)
    [summary] = result.records
    assert (summary.record_type, summary.vrf, getattr(summary, "neighbors", None)) == (
        "bgp_summary", "default", 0,
    )  # fmt: skip
    assert [w.message for w in result.warnings] == ["no BGP neighbor in this summary"]


TEXT_CASES = [
    c for c in all_cases()
    if c.kind == KIND and c.path.suffix == ".txt" and "{" not in c.text()[:200]
]  # JSON documents (even pasted as .txt, even cut short) are not line-oriented: a garbage line
# inside one makes it invalid JSON, which is one warning and no records by design


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_garbage_line_in_the_table_is_one_warning(data: st.DataObject) -> None:
    draw_garbage_insertion(data, TEXT_CASES, lambda kind: lambda t: parse_text(t, kind))


_PEER = st.fixed_dictionaries({}, optional={
    "remoteAs": st.integers(-5, 2**40) | st.text(max_size=5), "state": st.text(max_size=12),
    "pfxRcd": st.integers(-5, 2**70) | st.none(), "hostname": st.text(max_size=8) | st.integers(),
})  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=10), _PEER, max_size=5))
def test_any_peer_table_is_read_without_raising(peers: dict[str, dict[str, object]]) -> None:
    text = json.dumps({"ipv4Unicast": {"peers": peers}}, indent=2)
    result = parse_text(text, KIND)
    json.dumps(result.to_json(), allow_nan=False)
    assert len(result.records) + len(result.warnings) >= min(len(peers), 1) or not peers


@pytest.mark.parametrize("name", CASES)
def test_every_summary_header_is_a_record_counting_its_neighbors(name: str) -> None:
    """Each address family's header (router id, local AS) is a BgpSummary whose neighbor count
    is the number of peers listed under it: an empty table is a fact, not a missing record."""
    from aifabric.evidence.frr import BgpSummary  # noqa: PLC0415

    result = load(KIND, name)
    summaries = result.of_type(BgpSummary)
    peers = result.of_type(BgpPeer)
    if not peers:
        return
    assert summaries
    assert sum(s.neighbors for s in summaries) == len(peers)
    for s in summaries:
        mine = [p for p in peers if p.address_family == s.address_family and p.vrf == s.vrf]
        assert s.neighbors == len(mine), (s, len(mine))


def test_an_empty_neighbor_table_is_a_summary_with_no_neighbors() -> None:
    from aifabric.evidence.frr import BgpSummary  # noqa: PLC0415

    text = (
        "IPv4 Unicast Summary (VRF default):\n"
        "BGP router identifier 10.0.0.1, local AS number 65001 vrf-id 0\n"
        "BGP table version 0\n"
        "RIB entries 0, using 0 bytes of memory\n"
        "Peers 0, using 0 KiB of memory\n"
        "\n"
        "% No BGP neighbors found in VRF default\n"
    )
    result = parse_text(text, KIND)
    [s] = result.of_type(BgpSummary)
    assert (s.router_id, s.local_as, s.neighbors, s.line) == ("10.0.0.1", 65001, 0, 2)
    assert not result.of_type(BgpPeer)
    assert [w.message for w in result.warnings] == ["no BGP neighbor in this summary"]


def test_arista_eos_summary_columns() -> None:
    # EOS: no TblVer column, "Estab" for Established, PfxRcd/PfxAcc columns of their own
    peers = _peers("eos-sonic-mgmt-5592-veos-active")
    got = [(p.peer, p.remote_as, p.state, p.prefixes_received, p.uptime, p.line) for p in peers]
    assert got == [
        ("10.0.0.0", 64601, "Established", 2, "00:00:25", 6),
        ("10.10.246.254", 64802, "Active", None, "00:02:36", 7),
    ]  # fmt: skip
    assert (peers[0].msgs_received, peers[0].msgs_sent, peers[0].inq, peers[0].outq) == (
        40, 172, 0, 0,
    )  # fmt: skip
    assert peers[0].router_id == "100.1.0.1" and peers[0].local_as == 64802


def test_families_without_neighbors_are_summaries_with_none() -> None:
    """SONiC's show ip/ipv6 bgp summary on a switch without BGP peers prints only FRR's
    bgp_show_summary line "No %s neighbor is configured" (sonic-net/sonic-utilities PR 2886's
    'Previous command output', with its prompts)."""
    from aifabric.evidence.frr import BgpSummary  # noqa: PLC0415

    text = (
        "~$ show ip bgp summary\nNo IPv4 neighbor is configured\n\n"
        "~$ show ipv6 bgp summary\nNo IPv6 neighbor is configured\n"
    )
    assert detect_kind(text) == KIND
    result = parse_text(text, KIND)
    summaries = result.of_type(BgpSummary)
    assert [(s.address_family, s.neighbors, s.line) for s in summaries] == [
        ("IPv4", 0, 2),
        ("IPv6", 0, 5),
    ]
    assert not result.of_type(BgpPeer)
