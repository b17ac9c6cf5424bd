"""iperf3: --json (client and server side, TCP and UDP, -P, --dscp, --omit, the error key, a ^C
before the document) and the plain-text report. Expected values were read by hand from the
captures under ``tests/fixtures/evidence/iperf3/`` (network namespaces on Debian 12 with iperf3
3.12; public iperf3 3.6/3.9 results of the CloudPilot project)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.evidence import detect_kind, parse_text
from aifabric.evidence.iperf3 import Iperf3Interval, Iperf3Run
from tests.unit.evidence.fixtures import all_cases, case, draw_garbage_insertion, load

KIND = "iperf3"
CASES = sorted(c.name for c in all_cases() if c.kind == KIND)


def _run(name: str) -> Iperf3Run:
    result = load(KIND, name)
    assert not result.warnings, [str(w) for w in result.warnings]
    [run] = result.of_type(Iperf3Run)
    return run


def _sums(name: str) -> list[Iperf3Interval]:
    return [iv for iv in load(KIND, name).of_type(Iperf3Interval) if iv.stream is None]


@pytest.mark.parametrize("name", CASES)
def test_detected_without_kind(name: str) -> None:
    assert detect_kind(case(KIND, name).text()) == KIND


def test_tcp_client_four_streams() -> None:
    run = _run("lab-tcp-p4-healthy-client")
    assert (run.role, run.protocol, run.version, run.streams) == ("client", "TCP", "iperf 3.12", 4)
    assert (run.local_host, run.remote_host, run.remote_port) == ("10.201.1.2", "10.201.2.2", 5201)
    assert (run.duration_s, run.tcp_mss_bytes, run.tos, run.dscp) == (3.0, 8948, 0, 0)
    assert (run.sent_bytes, run.retransmits, run.received_bytes) == (4188274688, 9, 4129292288)
    assert run.sent_gbps == pytest.approx(11.168155479966869)
    assert run.line == 385  # the "sum_sent" line
    assert run.congestion == "bbr" and run.error is None and run.sender_side
    assert len(run.stream_sent_gbps) == 4
    sums = _sums("lab-tcp-p4-healthy-client")
    assert [round((iv.gbps or 0) * 1000, 1) for iv in sums] == [11253.8, 11667.7, 10583.0]
    streams = [iv for iv in load(KIND, "lab-tcp-p4-healthy-client").of_type(Iperf3Interval)
               if iv.stream is not None]
    assert len(streams) == 12 and {iv.stream for iv in streams} == {5, 7, 9, 11}
    assert all(iv.sender is True and iv.rtt_us for iv in streams)


def test_tcp_server_side_has_no_sender_totals() -> None:
    """The server prints zeros for what it did not measure (esnet/iperf issue 1410)."""
    run = _run("lab-tcp-p4-healthy-server")
    assert (run.role, run.remote_host, run.streams) == ("server", "10.201.1.2", 4)
    assert run.sent_bytes is None and run.sent_gbps is None and run.retransmits is None
    assert run.received_bytes == 4129292288 and run.tcp_mss_bytes is None
    assert run.stream_sent_gbps == [] and len(run.stream_received_gbps) == 4
    assert not run.sender_side
    assert all(iv.sender is False for iv in load(KIND, "lab-tcp-p4-healthy-server")
               .of_type(Iperf3Interval))


def test_dscp_is_the_tos_byte_shifted() -> None:
    run = _run("lab-tcp-p2-dscp26-client")
    assert (run.tos, run.dscp, run.streams, run.retransmits) == (104, 26, 2, 0)


def test_udp_client_loss_from_the_receiver() -> None:
    run = _run("lab-udp-50m-loss-5pct-client")
    assert (run.protocol, run.packets, run.lost_packets) == ("UDP", 2095, 89)
    assert run.lost_pct == pytest.approx(4.248210023866348)
    assert run.target_gbps == pytest.approx(0.05)
    assert (run.sent_bytes, run.received_bytes) == (18746060, 17949688)
    assert run.retransmits is None


def test_udp_server_side() -> None:
    run = _run("lab-udp-50m-healthy-server")
    assert (run.role, run.protocol, run.packets, run.lost_packets) == ("server", "UDP", 2095, 0)
    assert run.sent_bytes is None and run.received_bytes == 18746060


def test_connection_refused_error_key() -> None:
    run = _run("lab-connection-refused")
    assert run.error == "unable to connect to server: Connection refused"
    assert (run.line, run.role, run.protocol, run.sent_bytes) == (10, None, None, None)
    assert load(KIND, "lab-connection-refused").of_type(Iperf3Interval) == []


def test_interrupted_client_after_ctrl_c() -> None:
    """``^C{`` on the first line: the terminal's echo of Ctrl-C before the document."""
    result = load(KIND, "cloudpilot-interrupt-ctrl-c")
    assert not result.warnings
    [run] = result.of_type(Iperf3Run)
    assert run.error == "interrupt - the client has terminated" and run.line == 351
    assert (run.version, run.sent_bytes, run.received_bytes) == ("iperf 3.6", 210922112, None)
    assert len(result.of_type(Iperf3Interval)) == 22  # 11 intervals, stream and sum


def test_control_socket_closed() -> None:
    run = _run("cloudpilot-control-socket-closed")
    assert run.error == "error - control socket has closed unexpectedly"
    assert (run.role, run.tcp_mss_bytes, run.protocol) == ("client", 1408, None)


def test_omitted_intervals_are_marked() -> None:
    """--omit 3: three warm-up intervals first, then the clock restarts at 5.9e-05."""
    run = _run("cloudpilot-wan-omit3-retransmits")
    assert (run.omit_s, run.retransmits, run.sent_bytes, run.tcp_mss_bytes) == (
        3.0, 1286, 53739520, 1408)  # fmt: skip
    sums = _sums("cloudpilot-wan-omit3-retransmits")
    assert [iv.omitted for iv in sums] == [True] * 3 + [False] * 10
    assert sums[3].start_s == pytest.approx(5.9e-05) and sums[3].retransmits == 476


def test_text_client_tcp() -> None:
    result = load(KIND, "lab-tcp-p4-text-client")
    assert not result.warnings
    [run] = result.of_type(Iperf3Run)
    assert (run.format, run.role, run.protocol, run.streams) == ("text", "client", "TCP", 4)
    assert run.retransmits == 2  # the [SUM] sender row
    assert run.sent_bytes == int(3.46 * 2**30) and run.sent_gbps == pytest.approx(9.92)
    assert run.received_gbps == pytest.approx(9.85)
    assert run.stream_sent_gbps == pytest.approx([2.49, 2.47, 2.47, 2.48])
    sums = [iv for iv in result.of_type(Iperf3Interval) if iv.stream is None]
    assert [iv.gbps for iv in sums] == pytest.approx([8.51, 10.3, 10.9])
    first = next(iv for iv in result.of_type(Iperf3Interval) if iv.stream == 5)
    assert (first.bytes, first.retransmits, first.cwnd_bytes) == (258 * 2**20, 1, 629 * 2**10)


def test_text_udp_client_and_server() -> None:
    client = _run("lab-udp-text-client")
    assert (client.protocol, client.packets, client.lost_packets, client.jitter_ms) == (
        "UDP", 559, 0, 0.007)  # fmt: skip
    server = _run("lab-udp-text-server")
    assert (server.role, server.remote_host, server.received_gbps) == (
        "server", "10.201.1.2", pytest.approx(0.02))  # fmt: skip
    ivs = load(KIND, "lab-udp-text-server").of_type(Iperf3Interval)
    assert [iv.packets for iv in ivs if iv.stream is None] == [280, 279]
    assert [iv.jitter_ms for iv in ivs if iv.stream == 5] == [0.007, 0.007]


def test_text_error_line() -> None:
    text = "Connecting to host 10.0.0.2, port 5201\niperf3: error - unable to connect to " \
        "server: Connection refused\n"
    [run] = parse_text(text, KIND).of_type(Iperf3Run)
    assert (run.error, run.line, run.remote_host) == (
        "unable to connect to server: Connection refused", 2, "10.0.0.2")  # fmt: skip


def test_two_documents_in_one_file_and_text_around_them() -> None:
    one = case(KIND, "lab-connection-refused").text()
    two = case(KIND, "lab-tcp-p2-dscp26-client").text()
    result = parse_text(f"{one}\nsome note\n{two}", KIND)
    runs = result.of_type(Iperf3Run)
    assert [r.run for r in runs] == [0, 1]
    assert runs[0].error is not None and runs[1].dscp == 26
    [w] = result.warnings
    assert w.text == "some note" and w.line == one.count("\n") + 2
    assert {iv.run for iv in result.of_type(Iperf3Interval)} == {1}


def test_truncated_document_keeps_earlier_runs() -> None:
    one = case(KIND, "lab-connection-refused").text()
    two = case(KIND, "lab-tcp-p2-dscp26-client").text()
    result = parse_text(one + two[: len(two) // 2], KIND)
    assert len(result.of_type(Iperf3Run)) == 1
    [w] = result.warnings
    assert "not complete" in w.message


def test_prompt_line_before_json_is_not_a_warning() -> None:
    text = "$ iperf3 -c 10.0.0.2 --json\n" + case(KIND, "lab-connection-refused").text()
    result = parse_text(text, KIND)
    assert not result.warnings and result.of_type(Iperf3Run)[0].line == 11


TEXT_CASES = [c for c in all_cases() if c.kind == KIND and c.path.suffix == ".txt"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_garbage_line_in_text_output_is_one_warning(data: st.DataObject) -> None:
    draw_garbage_insertion(data, TEXT_CASES, lambda kind: lambda t: parse_text(t, kind))


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=20,
)
_KEYS = st.sampled_from(["start", "intervals", "end", "error", "test_start", "sum", "sum_sent",
                         "streams", "connecting_to", "bytes", "bits_per_second", "tos"])


@settings(max_examples=80, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, max_size=6))
def test_any_json_shape_is_read_without_raising(doc: dict[str, object]) -> None:
    text = json.dumps(doc, allow_nan=True)
    result = parse_text(text, KIND)  # through the registry: out-of-range numbers are dropped
    json.dumps(result.to_json(), allow_nan=False)


@settings(max_examples=40, deadline=None)
# byte counts past 2**62: the registry's range guard drops such a record (tested apart)
@given(st.integers(0, 2**62), st.integers(1, 64), st.integers(0, 255))
def test_run_numbers_round_trip(nbytes: int, streams: int, tos: int) -> None:
    doc = {
        "start": {"connecting_to": {"host": "h", "port": 5201}, "tcp_mss_default": 1448,
                  "test_start": {"protocol": "TCP", "num_streams": streams, "tos": tos}},
        "intervals": [],
        "end": {"sum_sent": {"bytes": nbytes, "bits_per_second": 8.0 * nbytes, "retransmits": 3,
                             "seconds": 1.0}},
    }
    [run] = parse_text(json.dumps(doc, indent=1), KIND).of_type(Iperf3Run)
    assert (run.streams, run.tos, run.dscp) == (streams, tos, tos >> 2)
    assert run.sent_bytes == (nbytes or None)
    assert run.retransmits == (3 if nbytes else None)


def test_rows_without_the_header_are_detected() -> None:
    # a window of a real text run (its interval rows without the "[ ID]" header), and only its
    # [SUM] lines, as users grep them
    text = case("iperf3", "lab-tcp-p4-text-client").text()
    rows = [x for x in text.splitlines() if x.startswith("[") and "sec" in x and "ID]" not in x]
    window = "\n".join(rows[:3]) + "\n"
    assert detect_kind(window) == "iperf3"
    assert parse_text(window, "iperf3").of_type(Iperf3Interval)
    sums = "\n".join(x for x in rows if x.startswith("[SUM]") and x.rstrip().endswith(("er",)))
    assert sums.count("[SUM]") == 2  # the sender and receiver totals
    assert detect_kind(sums + "\n") == "iperf3"
    (run,) = parse_text(sums + "\n", "iperf3").of_type(Iperf3Run)
    assert (run.format, run.sent_gbps, run.received_gbps) == ("text", 9.92, 9.85)


def test_a_window_of_a_debug_run_with_one_plain_row_and_one_in_bold() -> None:
    # iperf3 --debug prints interval_len/bytes_transferred lines (src/iperf_api.c) between the
    # rows; the user set one row in Markdown bold to point at it (esnet/iperf issue 1308)
    text = (
        "tcpi_snd_cwnd 46 tcpi_snd_mss 1460 tcpi_rtt 851\n"
        "interval_len 0.416079 bytes_transferred 578160\n"
        "[  5]   1.08-1.50   sec   565 KBytes  11.1 Mbits/sec    0   65.6 KBytes       \n"
        "interval_len 0.520614 bytes_transferred 0\n"
        "**[  5]   1.50-2.02   sec  0.00 Bytes  0.00 bits/sec    0   65.6 KBytes**\n"
    )
    assert detect_kind(text) == "iperf3"
    assert len(parse_text(text, "iperf3").of_type(Iperf3Interval)) == 2


def test_totals_marked_by_the_user_after_sender_and_receiver() -> None:
    """A netdev report (10GbE sender to a 1GbE receiver, 2025) points at its totals with
    'sender <<<'; the mark is the user's, the totals are iperf3's."""
    text = (
        "[ ID] Interval           Transfer     Bitrate         Retr\n"
        "[  5]   0.00-10.00  sec  68.3 MBytes  57.3 Mbits/sec  12874             sender <<<\n"
        "[  5]   0.00-10.04  sec  64.9 MBytes  54.3 Mbits/sec                  receiver <<<\n"
    )
    result = parse_text(text, KIND)
    assert not result.warnings
    [run] = result.of_type(Iperf3Run)
    assert run.retransmits == 12874 and run.sent_bytes == int(68.3 * 2**20)
    assert run.received_gbps == pytest.approx(0.0543)
