"""Multi-tool pastes: segments at prompts and fences, prefix groups, file line numbers kept."""

from __future__ import annotations

import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.evidence.base import decode_capture
from aifabric.evidence.paste import parse_paste, split_segments

FIX = Path(__file__).resolve().parents[2] / "fixtures"


def _parts(rel: str) -> list[tuple[str | None, str | None]]:
    text = decode_capture((FIX / rel).read_bytes())
    return [(p.kind, p.command) for p in parse_paste(text)]


def test_one_tool_with_commands_around_it_is_read_whole() -> None:
    # ip link set ... down, then ethtool -m: one tool's output, read as before
    parts = _parts("evidence/ethtool-module/netdev-cmis-los-lol-link-down/input.txt")
    assert [k for k, _ in parts] == ["ethtool-module"]


def test_two_tools_in_one_paste_are_two_parts_with_file_lines() -> None:
    # a real terminal session: `ethtool -i eth0` (ethtool-info) then `ethtool -S eth0`
    rel = "evidence/ethtool-stats/be2net-with-ethtool-i-ethq-7/input.txt"
    text = decode_capture((FIX / rel).read_bytes())
    parts = parse_paste(text)
    assert [p.kind for p in parts] == ["ethtool-info", "ethtool-stats"]
    [drv] = parts[0].result.records
    assert (drv.line, drv.to_json()["firmware"]) == (2, "4.9.311.20")


def test_prompted_paste_of_three_tools() -> None:
    lines = [
        "root@node1:~# ibstat mlx5_0",
        "CA 'mlx5_0'",
        "\tCA type: MT4123",
        "\tNumber of ports: 1",
        "\tPort 1:",
        "\t\tState: Down",
        "\t\tPhysical state: Polling",
        "\t\tRate: 10",
        "\t\tLink layer: InfiniBand",
        "root@node1:~# ping -M do -s 8972 -c 2 10.0.0.2",
        "PING 10.0.0.2 (10.0.0.2) 8972(9000) bytes of data.",
        "ping: local error: message too long, mtu=1500",
        "",
        "--- 10.0.0.2 ping statistics ---",
        "2 packets transmitted, 0 received, +2 errors, 100% packet loss, time 1001ms",
    ]
    parts = parse_paste("\n".join(lines) + "\n")
    assert [p.kind for p in parts] == ["ibstat", "ping"]
    assert parts[1].command == "ping -M do -s 8972 -c 2 10.0.0.2"
    ping = parts[1].result
    assert ping is not None
    err = next(r for r in ping.records if r.record_type == "ping_error")
    assert lines[err.line - 1].startswith("ping: local error")  # file line, not segment line


def test_fenced_blocks_and_the_command_named_before_them() -> None:
    # byteps#179: "`ethtool -S enp178s0f0 |grep prio`" then a fence, twice ("After:")
    rel = "evidence/ethtool-stats/mlx5-grep-prio-before-after-byteps/input.txt"
    parts = parse_paste(decode_capture((FIX / rel).read_bytes()))
    kinds = [p.kind for p in parts]
    assert kinds.count("ethtool-stats") == 1
    stats = next(p for p in parts if p.kind == "ethtool-stats").result
    assert stats is not None
    # both dumps in one capture (the deriver lets the nameless second inherit the interface)
    assert next(getattr(r, "interface", None) for r in stats.records) == "enp178s0f0"
    assert len(stats.records) == 2


def test_rank_prefixed_lines_are_grouped_and_stripped() -> None:
    rows = [
        "[1,0]<stdout>:#       size         count      type   redop    root     time   algbw   "
        "busbw #wrong     time   algbw   busbw #wrong",
        "[1,0]<stdout>:#        (B)    (elements)                               (us)  (GB/s)  "
        "(GB/s)            (us)  (GB/s)  (GB/s)",
        "[1,0]<stdout>:     1048576        262144     float     sum      -1    55.82   18.78   "
        "35.22      0    55.16   19.01   35.64      0",
        "[1,0]<stdout>:     2097152        524288     float     sum      -1    81.92   25.60   "
        "48.00      0    80.90   25.92   48.60      0",
    ]
    segs = split_segments("\n".join(rows) + "\n")
    assert len(segs) == 1
    parts = parse_paste("\n".join(rows) + "\n")
    assert parts[0].kind == "nccl-tests"


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from([
    "$ ibstat", "# ethtool -S eth0", "```", "root@h:~# ping -c1 10.0.0.1", "[1,0]<stdout>:x",
    "0: y", "node1: z", "     rx_packets: 5", "CA 'mlx5_0'", "\tState: Active", "", "text",
    "➜  ~ nvidia-smi topo -m", "leaf01# show run",
]), max_size=40))  # fmt: skip
def test_any_mix_of_lines_parses_without_raising(lines: list[str]) -> None:
    text = "\n".join(lines) + "\n"
    total = len(text.split("\n"))
    for part in parse_paste(text):
        assert all(1 <= n <= total for n in part.numbers)
        if part.result is not None:
            for rec in part.result.records:
                assert 0 <= rec.line <= total


def test_huge_single_lines_split_and_parse_fast() -> None:
    for ch in "a@:#$ [>~`-0":
        text = ch * 100_000 + "\n" + "root@h:~# ibstat\n" + (ch + " ") * 50_000 + "\n"
        start = time.perf_counter()
        parse_paste(text)
        assert time.perf_counter() - start < 2.0, repr(ch)


def test_two_tools_without_a_prompt_between_them_are_cut_at_the_second_header() -> None:
    """``ibstat`` (after its prompt) and then ``ibv_devinfo`` pasted with no prompt between them:
    the ``hca_id:`` header starts the second tool's part, with the file's line numbers; in
    either order, and without any prompt at all."""
    ibstat = (FIX / "evidence/ibstat/linpack-19a-edr/input.txt").read_text(encoding="utf-8")
    devinfo = (FIX / "evidence/ibv-devinfo/deepep-55-ib-ndr/input.txt").read_text(encoding="utf-8")
    n_ibstat = len(ibstat.splitlines())
    for text, kinds in (
        (ibstat + devinfo, ["ibstat", "ibv-devinfo"]),
        (devinfo + ibstat, ["ibv-devinfo", "ibstat"]),
        ("\n".join(ibstat.splitlines()[1:]) + "\n" + devinfo, ["ibstat", "ibv-devinfo"]),
    ):
        parts = parse_paste(text)
        assert [p.kind for p in parts] == kinds
        assert all(p.result is not None and p.result.records for p in parts)
    first = parse_paste(ibstat + devinfo)[1]
    assert first.numbers[0] == n_ibstat + 1
    assert first.result is not None and first.result.records[0].line >= n_ibstat + 1


def test_one_tool_with_its_own_repeated_headers_stays_whole() -> None:
    devinfo = (FIX / "evidence/ibv-devinfo/deepep-55-ib-ndr/input.txt").read_text(encoding="utf-8")
    assert [p.kind for p in parse_paste(devinfo + devinfo)] == ["ibv-devinfo"]


def test_bare_query_commands_start_their_output_only_when_it_follows() -> None:
    # notes: `ip route`, `tc -s qdisc ls`, `sudo sysctl NAME` typed bare above their outputs
    rel = "pastes/sysctl-bare-commands-tc-ip-route/input.txt"
    text = decode_capture((FIX / rel).read_bytes())
    parts = parse_paste(text)
    commands = [p.command for p in parts]
    assert "ip route" in commands and "tc -s qdisc ls" in commands
    sysctl = [p for p in parts if p.kind == "sysctl" and p.result]
    values = {r.key: r.value for p in sysctl for r in p.result.records}
    assert values["net.ipv4.tcp_wmem"].split() == ["4096", "16384", "4194304"]
    assert values["net.ipv4.tcp_moderate_rcvbuf"] == "1"
    [tc] = [p for p in parts if p.kind == "tc"]
    assert tc.result is not None and tc.result.records[0].kind == "pfifo_fast"


def test_script_lines_with_query_words_stay_one_block() -> None:
    # a provisioning script: `sysctl -w` lines follow one another, no NAME = VALUE output after
    # them, so they are not cut into parts (host-roce-script reads them together)
    text = "\n".join(
        ["mlnx_qos -i eth2 --trust dscp", "sysctl -w net.ipv4.tcp_ecn=1",
         "sysctl -w net.ipv4.conf.all.arp_ignore=1", "ip link set eth2 mtu 9000"]
    ) + "\n"  # fmt: skip
    assert len(parse_paste(text)) == 1


def test_a_prompt_that_shows_only_the_working_directory() -> None:
    """zsh/bash prompts reduced to the directory (``~#``, ``~/nccl-tests/build$``), indented as
    a documentation page's code block: the command names the tool, and ``ip a`` beats the
    detector's ``ip link`` for a paste whose lines lost their indentation."""
    body = (FIX / "evidence/ip-addr/ompi-users-19198-ip-addr-two-nodes-eth1-no-carrier/input.txt")
    flat = "\n".join(f"        {ln.strip()}" for ln in body.read_text().splitlines()[:11])
    parts = parse_paste(f"        ~# ip a show\n{flat}\n")
    assert [p.kind for p in parts] == ["ip-addr"]
    assert [len(p.result.records) for p in parts if p.result] == [2]  # lo and eth0
    (seg,) = split_segments("~/nccl-tests/build$ ethtool eth0\n\tSpeed: 100000Mb/s\n")
    assert seg.command == "ethtool eth0"
