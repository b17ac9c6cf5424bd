"""ping: iputils, BusyBox and macOS output, including the DF/path-MTU probe of S11.

Expected values were read by hand from the captures under ``tests/fixtures/evidence/ping/``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind, parse_text
from aifabric.evidence.ping import (
    ICMP_IPV4_OVERHEAD_BYTES,
    PingError,
    PingHeader,
    PingReply,
    PingSummary,
)
from tests.unit.evidence.fixtures import case, load

KIND = "ping"
CASES = [
    "incus-frag-needed-mtu-1440",
    "incus-df-1412-fits-1440",
    "jc-centos7-ping-D-timestamps",
    "jc-macos-request-timeout-unreachable",
    "jc-alpine-busybox",
    "jc-centos7-broadcast-dup",
    "jc-centos7-ping6-hostname-pattern",
    "jc-freebsd12-ping6-comma-std-dev",
    "jc-pi-no-answer-yet-D-timestamps",
    "jc-ubuntu2204-dest-unreachable-pipe",
    "jc-ubuntu2204-ping6-source-ip",
    "eos-df-size-9000-cli-prompt",
    "rst-code-block-df-8972",
]


@pytest.mark.parametrize("name", CASES)
def test_detected_without_kind(name: str) -> None:
    assert detect_kind(case(KIND, name).text()) == KIND


def test_jumbo_probe_size_is_payload_plus_28() -> None:
    assert 8972 + ICMP_IPV4_OVERHEAD_BYTES == 9000  # S11: ping -M do -s 8972 fills MTU 9000


def test_frag_needed_reports_path_mtu() -> None:
    result = load(KIND, "incus-frag-needed-mtu-1440")
    assert not result.warnings
    [hdr] = result.of_type(PingHeader)
    assert (hdr.line, hdr.target, hdr.payload_bytes, hdr.packet_bytes) == (2, "1.1.1.1", 1472, 1500)
    assert hdr.packet_bytes_printed is True
    frag, local = result.of_type(PingError)
    assert (frag.kind, frag.seq, frag.mtu_bytes, frag.source) == (
        "frag-needed",
        1,
        1440,
        "45.45.148.251",
    )
    assert (local.kind, local.mtu_bytes, local.line) == ("message-too-long", None, 4)
    [s] = result.of_type(PingSummary)
    assert (s.line, s.end_line, s.target) == (6, 7, "1.1.1.1")
    assert (s.transmitted, s.received, s.errors, s.loss_pct, s.time_ms) == (2, 0, 2, 100.0, 1001)
    assert (s.packet_bytes, s.path_mtu_bytes) == (1500, 1440)
    assert s.rtt_avg_us is None
    assert result.of_type(PingReply) == []


def test_probe_that_fits_the_path_mtu() -> None:
    result = load(KIND, "incus-df-1412-fits-1440")
    assert not result.warnings
    [hdr] = result.of_type(PingHeader)
    assert (hdr.payload_bytes, hdr.packet_bytes) == (1412, 1440)
    replies = result.of_type(PingReply)
    assert [(r.seq, r.bytes, r.ttl, r.time_us) for r in replies] == [
        (1, 1420, 59, 15500.0),
        (2, 1420, 59, 17100.0),
        (3, 1420, 59, 14600.0),
    ]
    [s] = result.of_type(PingSummary)
    assert (s.transmitted, s.received, s.loss_pct, s.time_ms) == (3, 3, 0.0, 2003)
    assert (s.rtt_min_us, s.rtt_avg_us, s.rtt_max_us, s.rtt_mdev_us) == (
        14611.0,
        15736.0,
        17116.0,
        1038.0,
    )
    assert s.path_mtu_bytes is None and s.end_line == 9


def test_ping_D_timestamps() -> None:
    result = load(KIND, "jc-centos7-ping-D-timestamps")
    replies = result.of_type(PingReply)
    assert len(replies) == 20
    first = replies[0]
    assert (first.timestamp_s, first.seq, first.ttl, first.time_us) == (
        1595037214.261953,
        1,
        64,
        41.0,
    )
    assert replies[9].time_us == 81.0  # icmp_seq=10 time=0.081 ms
    [s] = result.of_type(PingSummary)
    assert (s.transmitted, s.received, s.time_ms) == (20, 20, 19081)
    assert (s.rtt_min_us, s.rtt_max_us, s.rtt_mdev_us) == (41.0, 81.0, 9.0)
    [hdr] = result.of_type(PingHeader)
    assert (hdr.payload_bytes, hdr.packet_bytes) == (56, 84)


def test_macos_timeouts_and_unreachable() -> None:
    result = load(KIND, "jc-macos-request-timeout-unreachable")
    assert not result.warnings  # the ICMP header dumps are skipped, not warned about
    errors = result.of_type(PingError)
    timeouts = [e.seq for e in errors if e.kind == "timeout"]
    assert timeouts == [0, 1, 2, 3, 4, 5, 6]
    unreach = [e for e in errors if e.kind == "unreachable"]
    assert len(unreach) == 6 and unreach[0].source == "192.168.1.220" and unreach[0].line == 4
    [s] = result.of_type(PingSummary)
    assert (s.transmitted, s.received, s.loss_pct, s.rtt_avg_us) == (8, 0, 100.0, None)
    [hdr] = result.of_type(PingHeader)
    assert hdr.packet_bytes == 84 and hdr.packet_bytes_printed is False  # 56 + 28 computed


def test_busybox() -> None:
    result = load(KIND, "jc-alpine-busybox")
    [r] = result.of_type(PingReply)
    assert (r.seq, r.ttl, r.time_us, r.bytes) == (0, 42, 1637.0, 64)
    [s] = result.of_type(PingSummary)
    assert (s.transmitted, s.received, s.loss_pct) == (1, 1, 0.0)
    assert (s.rtt_min_us, s.rtt_avg_us, s.rtt_max_us, s.rtt_mdev_us) == (
        1637.0,
        1637.0,
        1637.0,
        None,
    )


def test_broadcast_duplicates_and_pipe() -> None:
    result = load(KIND, "jc-centos7-broadcast-dup")
    assert not result.warnings  # "WARNING: pinging broadcast address" is skipped
    replies = result.of_type(PingReply)
    assert len(replies) == 21 and sum(r.duplicate for r in replies) == 19
    assert replies[1].source == "192.168.1.88" and replies[1].time_us == 382000.0
    [s] = result.of_type(PingSummary)
    assert (s.transmitted, s.received, s.duplicates, s.pipe) == (2, 2, 19, 2)
    assert s.rtt_max_us == 1276448.0


def test_garbage_line_warns_once() -> None:
    lines = case(KIND, "jc-centos7-ping-D-timestamps").text().split("\n")
    clean = parse_text("\n".join(lines), KIND)
    lines.insert(10, "garbage ### line")
    result = parse_text("\n".join(lines), KIND)
    assert [w.line for w in result.warnings] == [11]
    assert len(result.records) == len(clean.records)
    assert [r.seq for r in result.of_type(PingReply)] == [r.seq for r in clean.of_type(PingReply)]


def test_truncated_capture_warns() -> None:
    text = case(KIND, "jc-centos7-ping-D-timestamps").text()
    cut = text[: text.index("--- 127.0.0.1 ping statistics")]
    result = parse_text(cut, KIND)
    [w] = result.warnings
    assert w.line is None and "truncated" in w.message
    assert len(result.of_type(PingReply)) == 20 and result.of_type(PingSummary) == []


_REPLY = st.tuples(
    st.integers(0, 65535), st.integers(1, 255), st.integers(0, 10**6), st.integers(8, 9000)
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_REPLY, min_size=1, max_size=20))
def test_reply_lines_round_trip(replies: list[tuple[int, int, int, int]]) -> None:
    lines = ["PING 10.0.0.2 (10.0.0.2) 8972(9000) bytes of data."]
    for seq, ttl, t_us, size in replies:
        lines.append(f"{size} bytes from 10.0.0.2: icmp_seq={seq} ttl={ttl} time={t_us / 1000} ms")
    lines += ["", "--- 10.0.0.2 ping statistics ---"]
    lines.append(f"{len(replies)} packets transmitted, {len(replies)} received, 0% packet loss")
    result = parse_text("\n".join(lines), KIND)
    assert not result.warnings
    got = [(r.seq, r.ttl, r.time_us, r.bytes) for r in result.of_type(PingReply)]
    assert got == [(s, t, pytest.approx(us), b) for s, t, us, b in replies]
    [hdr] = result.of_type(PingHeader)
    assert hdr.packet_bytes == 9000


def _recs(name: str, cls: type) -> list:  # type: ignore[type-arg]
    res = load(KIND, name)
    assert res.warnings == []
    return [r for r in res.records if isinstance(r, cls)]


def test_ping6_by_name_nested_parentheses_and_pattern_line() -> None:
    (hdr,) = _recs("jc-centos7-ping6-hostname-pattern", PingHeader)
    assert (hdr.line, hdr.target, hdr.address, hdr.ipv6) == (
        2,
        "www.cnn.com",
        "2a04:4e42:2d::323",
        True,
    )
    assert hdr.payload_bytes == 56 and hdr.packet_bytes is None
    replies = _recs("jc-centos7-ping6-hostname-pattern", PingReply)
    assert len(replies) == 20 and replies[0].time_us == 30900.0 and replies[0].ttl == 59


def test_freebsd_ping6_comma_replies_and_std_dev() -> None:
    replies = _recs("jc-freebsd12-ping6-comma-std-dev", PingReply)
    assert [(r.seq, r.bytes, r.source, r.ttl) for r in replies] == [
        (0, 16, "::1", 64),
        (1, 16, "::1", 64),
        (2, 16, "::1", 64),
    ]
    (summ,) = _recs("jc-freebsd12-ping6-comma-std-dev", PingSummary)
    assert (summ.target, summ.transmitted, summ.received, summ.loss_pct) == ("::1", 3, 3, 0.0)
    assert summ.rtt_max_us == 53.0 and summ.rtt_mdev_us == 8.0
    assert (summ.line, summ.end_line) == (6, 8)


def test_no_answer_yet_with_D_timestamps_is_a_timeout() -> None:
    errs = _recs("jc-pi-no-answer-yet-D-timestamps", PingError)
    assert [(e.kind, e.seq, e.line) for e in errs] == [("timeout", i, i + 1) for i in range(1, 5)]
    (summ,) = _recs("jc-pi-no-answer-yet-D-timestamps", PingSummary)
    assert (summ.transmitted, summ.received, summ.loss_pct, summ.time_ms) == (5, 0, 100.0, 4154)


def test_pipe_alone_after_unreachable_errors() -> None:
    errs = _recs("jc-ubuntu2204-dest-unreachable-pipe", PingError)
    assert [(e.kind, e.seq, e.source) for e in errs] == [
        ("unreachable", 1, "10.0.0.1"),
        ("unreachable", 2, "10.0.0.1"),
        ("unreachable", 3, "10.0.0.1"),
    ]
    (summ,) = _recs("jc-ubuntu2204-dest-unreachable-pipe", PingSummary)
    assert (summ.errors, summ.loss_pct, summ.pipe, summ.end_line) == (3, 100.0, 3, 8)
    assert summ.rtt_avg_us is None


def test_ping6_source_address_with_colons() -> None:
    (hdr,) = _recs("jc-ubuntu2204-ping6-source-ip", PingHeader)
    assert (hdr.target, hdr.address, hdr.source) == ("2001:0db8::1", "2001:0db8::1", "2001:0db8::2")
    assert hdr.payload_bytes == 56 and hdr.ipv6
    (summ,) = _recs("jc-ubuntu2204-ping6-source-ip", PingSummary)
    assert (summ.transmitted, summ.received, summ.rtt_avg_us) == (2, 2, 12204.0)


def test_windows_df_probe_and_statistics() -> None:
    # layout of Windows ping -f -l (markondej/cpp-icmplib issue 7, overte issue 204)
    text = (
        "ping -f -l 1500 -n 1 1.1.1.1\n"
        "\n"
        "Pinging 1.1.1.1 with 1500 bytes of data:\n"
        "Packet needs to be fragmented but DF set.\n"
        "\n"
        "Ping statistics for 1.1.1.1:\n"
        "    Packets: Sent = 1, Received = 0, Lost = 1 (100% loss),\n"
    )
    assert detect_kind(text) == KIND
    res = parse_text(text, KIND)
    assert res.warnings == []
    hdr, err, summ = res.records
    assert isinstance(hdr, PingHeader) and hdr.payload_bytes == 1500 and hdr.packet_bytes == 1528
    assert isinstance(err, PingError) and err.kind == "frag-needed" and err.line == 4
    assert isinstance(summ, PingSummary)
    assert (summ.target, summ.transmitted, summ.received, summ.loss_pct) == ("1.1.1.1", 1, 0, 100.0)


def test_network_os_prompt_and_df_size_9000_fit() -> None:
    # Arista EOS `LEAF1#ping ... size 9000 df-bit`: iputils output under a switch prompt
    result = load(KIND, "eos-df-size-9000-cli-prompt")
    assert result.warnings == []
    [hdr] = result.of_type(PingHeader)
    assert (hdr.line, hdr.target, hdr.payload_bytes, hdr.packet_bytes) == (
        2,
        "10.0.0.5",
        8972,
        9000,
    )
    replies = result.of_type(PingReply)
    assert [r.seq for r in replies] == [1, 2, 3, 4, 5] and {r.bytes for r in replies} == {8980}
    [s] = result.of_type(PingSummary)
    assert (s.transmitted, s.received, s.loss_pct, s.pipe) == (5, 5, 0.0, 2)
    assert (s.rtt_min_us, s.rtt_max_us) == (10311.0, 17477.0)
    assert result.of_type(PingError) == []


def test_rst_code_block_directive_is_not_a_garbled_line() -> None:
    result = load(KIND, "rst-code-block-df-8972")
    assert result.warnings == []
    [hdr] = result.of_type(PingHeader)
    assert (hdr.line, hdr.packet_bytes) == (4, 9000)
    [s] = result.of_type(PingSummary)
    assert (s.transmitted, s.received, s.loss_pct) == (3, 3, 0.0)


@pytest.mark.parametrize(
    "prompt",
    ["leaf1#ping 10.0.0.2 size 9000 df-bit", "switch# ping 10.0.0.2", "rtr-1>ping 10.0.0.2"],
)
def test_switch_prompt_before_ping_is_skipped(prompt: str) -> None:
    text = (
        f"{prompt}\nPING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.\n"
        "64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=0.1 ms\n\n"
        "--- 10.0.0.2 ping statistics ---\n"
        "1 packets transmitted, 1 received, 0% packet loss, time 0ms\n"
    )
    assert parse_text(text, KIND).warnings == []


def test_eos_and_rst_detected_without_kind() -> None:
    for name in ("eos-df-size-9000-cli-prompt", "rst-code-block-df-8972"):
        assert detect_kind(case(KIND, name).text()) == KIND


def test_lines_glued_together_by_a_page_are_cut_apart() -> None:
    """A notes page that lost its line breaks (ping between two X410 100GbE ports): the
    prompt, header, replies and statistics of one run are one line; they read as the run."""
    glued = (
        "~$ ping 192.168.10.2PING 192.168.10.2 (192.168.10.2) 56(84) bytes of data.64 bytes "
        "from 192.168.10.2: icmp_seq=1 ttl=64 time=0.998 ms64 bytes from 192.168.10.2: "
        "icmp_seq=2 ttl=64 time=0.888 ms^C--- 192.168.10.2 ping statistics ---2 packets "
        "transmitted, 2 received, 0% packet loss, time 1001msrtt min/avg/max/mdev = "
        "0.888/0.943/0.998/0.055 ms\n"
    )
    result = parse_text(glued, "ping")
    assert not result.warnings
    kinds = [type(r).__name__ for r in result.records]
    assert kinds == ["PingHeader", "PingReply", "PingReply", "PingSummary"]
    summary = result.records[-1]
    assert (summary.transmitted, summary.received, summary.line) == (2, 2, 1)
    assert [(r.seq, r.time_us) for r in result.records[1:3]] == [(1, 998.0), (2, 888.0)]
