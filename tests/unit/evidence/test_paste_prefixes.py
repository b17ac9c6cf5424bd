"""Pastes wrapped in something other than a shell prompt: a mail quote, docker compose service
prefixes, a review diff's added lines, a harness log prefix, a common indentation; and records
of fragments that say something by being empty (``lsmod | grep`` with no row). Real pastes under
``tests/fixtures/pastes/`` (each ``meta.yaml`` names its source and the kind it holds)."""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import given
from hypothesis import strategies as st

from aifabric.evidence.base import decode_capture
from aifabric.evidence.infiniband import IbstatPort
from aifabric.evidence.kernel_modules import ModuleQuery
from aifabric.evidence.paste import Part, parse_paste
from aifabric.evidence.registry import dedent_block, parse_text

PASTES = Path(__file__).resolve().parents[2] / "fixtures" / "pastes"


def _parts(name: str) -> tuple[list[Part], str]:
    meta = yaml.safe_load((PASTES / name / "meta.yaml").read_text(encoding="utf-8"))
    text = decode_capture((PASTES / name / "input.txt").read_bytes())
    return parse_paste(text), str(meta["kind"])


def _records_of(parts: list[Part], kind: str) -> int:
    return sum(len(p.result.records) for p in parts if p.kind == kind and p.result is not None)


def test_every_paste_fixture_is_read_as_its_kind() -> None:
    names = sorted(p.name for p in PASTES.iterdir() if p.is_dir())
    assert len(names) >= 5
    for name in names:
        parts, kind = _parts(name)
        assert _records_of(parts, kind) > 0, (name, [(p.kind, p.numbers[:1]) for p in parts])


def test_mail_quoted_ibstatus_keeps_file_lines() -> None:
    parts, _ = _parts("ibstatus-mail-quoted-with-prose")
    [port] = [r for p in parts if p.result for r in p.result.records if isinstance(r, IbstatPort)]
    assert (port.ca, port.state, port.physical_state, port.rate_gbps) == (
        "mlx4_0", "Active", "LinkUp", 40.0,
    )  # fmt: skip
    assert port.line == 2  # the "> Infiniband device 'mlx4_0' port 1 status:" line of the file


def test_docker_compose_prefix_is_stripped_and_kept_as_subject() -> None:
    parts, kind = _parts("iptables-docker-compose-prefixed")
    [part] = [p for p in parts if p.kind == kind]
    assert part.subject == "raspap"


def test_empty_lsmod_grep_is_a_record() -> None:
    parts, _ = _parts("lsmod-grep-empty-then-modinfo")
    [query] = [r for p in parts if p.result for r in p.result.records if isinstance(r, ModuleQuery)]
    assert (query.pattern, query.found, query.line) == ("nv_peer", False, 1)


def test_lsmod_grep_with_a_row_gives_no_query_record() -> None:
    text = "$ lsmod | grep nvidia_peermem\nnvidia_peermem         16384  0\n"
    res = parse_text(text, "proc-modules")
    assert [r.record_type for r in res.records] == ["kernel_module"]


_LINES = st.lists(
    st.text(alphabet=st.characters(blacklist_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"),
             max_size=20),
    min_size=1, max_size=12,
)  # fmt: skip


@given(_LINES, st.sampled_from(["  ", "\t", "    ", " \t"]))
def test_dedent_removes_exactly_a_shared_indent(lines: list[str], indent: str) -> None:
    body = [ln.lstrip(" \t") for ln in lines]
    if not any(b.strip(" \t") for b in body):
        return
    text = "\n".join(indent + b if b.strip(" \t") else b for b in body)
    out = dedent_block(text)
    assert out.count("\n") == text.count("\n")  # line numbers never move
    assert out == "\n".join(body)


def test_dedent_leaves_text_starting_at_column_zero() -> None:
    text = "NIC statistics:\n     rx_packets: 1\n"
    assert dedent_block(text) is text


def test_empty_grep_for_the_peer_memory_module_is_a_gdr_finding() -> None:
    from aifabric.checks.diagnose.engine import diagnose, load_evidence  # noqa: PLC0415

    findings = diagnose(load_evidence([PASTES / "lsmod-grep-empty-then-modinfo" / "input.txt"]))
    [f] = [f for f in findings.findings if f.check == "diagnose.gdr-module-not-loaded"]
    assert (f.severity, f.cause) == ("warning", "host.gdr")


def test_nccl_info_lines_of_an_nccl_tests_run_are_also_read_as_a_log() -> None:
    """nccl-tests run with NCCL_DEBUG=INFO: the table is the benchmark's, the interleaved log
    lines (bootstrap interface, net plug-in) become a companion nccl-log part whose records keep
    the file's line numbers; the companion is not scanned twice by diagnose."""
    from aifabric.evidence.nccl_log import NetDevices  # noqa: PLC0415

    parts, _ = _parts("nccl-tests-with-nccl-info-h20")
    assert [p.kind for p in parts] == ["nccl-tests", "nccl-log"]
    log = parts[1]
    assert log.companion and not parts[0].companion
    [boot] = [r for r in log.result.records if isinstance(r, NetDevices)] if log.result else []
    assert (boot.line, boot.host, boot.role) == (8, "H20-GPU-05", "bootstrap")
    assert log.numbers[0] == 8  # "H20-GPU-05:1789224:1789224 [0] NCCL INFO Bootstrap : Using ..."


def test_companion_needs_a_few_log_lines() -> None:
    text = (
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 "
        "agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n"
        "#  Rank  0 Group  0 Pid  1 on node1 device  0 [0x1b] NVIDIA H100\n"
        "node1:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
    )
    assert [p.kind for p in parse_paste(text)] == ["nccl-tests"]


def test_output_kept_in_a_script_as_comments_is_read() -> None:
    """A script that keeps a tool's output as comments ("#<TAB>Identifier : 0x03 (SFP)"): the
    comment prefix is stripped like a mail quote, and nccl-tests' own '#' lines are not."""
    from aifabric.evidence.ethtool_module import TransceiverModule  # noqa: PLC0415

    fix = Path(__file__).resolve().parents[2] / "fixtures" / "evidence" / "ethtool-module"
    raw = next(iter(sorted(fix.glob("*/input.txt"))))
    text = decode_capture(raw.read_bytes())
    commented = "ethtool -m eth0\n" + "".join(f"#\t{line}\n" for line in text.splitlines())
    parts = parse_paste(commented)
    assert any(p.kind == "ethtool-module" and p.result is not None
               and p.result.of_type(TransceiverModule) for p in parts)  # fmt: skip
    header = (
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 "
        "agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n"
        "#  Rank  0 Group  0 Pid  1 on node1 device  0 [0x1b] NVIDIA H100\n"
    )
    assert [p.kind for p in parse_paste(header)] == ["nccl-tests"]


def test_bare_command_lines_split_a_script_transcript() -> None:
    # "rdma link show" / output / "rdma dev" / output / "ibstat" / output, no prompts
    parts, _ = _parts("rdma-link-bare-commands-bnxt")
    kinds = {p.kind for p in parts if p.result is not None and p.result.records}
    assert {"rdma-link", "ibstat"} <= kinds
    links = [
        r
        for p in parts
        if p.kind == "rdma-link" and p.result
        for r in p.result.records
        if r.record_type == "rdma_link"
    ]
    assert [(r.device, r.state, r.line) for r in links] == [
        ("bnxt_re0", "ACTIVE", 5), ("bnxt_re1", "DOWN", 6),
    ]  # fmt: skip


def test_a_provisioning_script_stays_one_block() -> None:
    # commands one after another (no output between them) are no boundaries
    script = (
        "mlnx_qos -i eth2 --trust dscp\n"
        "mlnx_qos -i eth2 --pfc 0,0,0,1,0,0,0,0\n"
        "ethtool -A eth2 rx off tx off\n"
        "ulimit -l unlimited\n"
    )
    parts = parse_paste(script)
    assert len(parts) == 1


def test_rdma_dev_lines_of_the_transcript_are_devices() -> None:
    # iproute2 rdma/dev.c: "IDX: NAME: node_type ca protocol roce fw X node_guid G sys_image_guid G"
    from aifabric.evidence.rdma_tools import RdmaDev  # noqa: PLC0415

    parts, _ = _parts("rdma-link-bare-commands-bnxt")
    devs = [r for p in parts if p.result for r in p.result.records if isinstance(r, RdmaDev)]
    assert [(d.index, d.device, d.protocol, d.firmware, d.line) for d in devs] == [
        (0, "bnxt_re0", "roce", "231.0.154.0", 8), (1, "bnxt_re1", "roce", "231.0.154.0", 9),
    ]  # fmt: skip
    assert devs[0].node_guid == "8e84:74ff:fe1f:2550" and devs[0].node_type == "ca"


def test_a_quote_of_any_depth_is_stripped() -> None:
    # the mail-quoted ibstatus fixture quoted again three times over, in both styles mail
    # clients use ("> > > >" and ">>>>")
    parts, kind = _parts("ibstatus-mail-quoted-with-prose")
    text = decode_capture((PASTES / "ibstatus-mail-quoted-with-prose" / "input.txt").read_bytes())
    for deeper in ("> > > ", ">>>"):
        again = "".join(deeper + line for line in text.splitlines(keepends=True))
        assert _records_of(parse_paste(again), kind) == _records_of(parts, kind) > 0


EVIDENCE = PASTES.parent / "evidence"


def _fixture(kind: str, case: str) -> str:
    return (EVIDENCE / kind / case / "input.txt").read_text(encoding="utf-8")


@given(st.sampled_from(["> ", "> \t", ">", "> > "]))
def test_a_quoted_session_is_cut_at_its_quoted_prompts(quote: str) -> None:
    # a mail reply quoting a whole root session: the prompts are behind the quote mark, so the
    # first split (a quoted "> # cmd" is a quote, not a prompt) cannot take them; the quote
    # group is cut again at them, each tool's output is read as its own kind, and each record
    # keeps the file line it came from
    link = _fixture("ip-link", "lab-veth-healthy").splitlines()[:8]
    addr = _fixture("ip-addr", "ompi-users-19198-ip-addr-two-nodes-eth1-no-carrier").splitlines()
    session = ["# ip netns exec test ip link", *link, "# ip addr", *addr[:11]]
    text = "".join(quote + line + "\n" for line in session)
    parts = parse_paste(text)
    kinds = [p.kind for p in parts if p.result is not None and p.result.records]
    assert kinds == ["ip-link", "ip-addr"]
    addr_part = next(p for p in parts if p.kind == "ip-addr")
    assert addr_part.numbers[0] == len(link) + 2  # the quoted "# ip addr" prompt line
    assert addr_part.command == "ip addr"


def test_a_prompt_without_a_blank_names_a_known_tool() -> None:
    # "$tc class show ..." (no blank after the dollar, as pasted in a commit message) with its
    # two output lines quoted by ">" and no blank: the tc parser reads the class
    head = _fixture("tc", "lab-htb-200mbit-class-drops").splitlines()[:2]
    text = "Display class details\n$tc class show dev eth0 classid 1:10\n" + "".join(
        ">" + line.strip() + "\n" for line in head
    )
    parts = parse_paste(text)
    assert _records_of(parts, "tc") >= 1
    assert parse_paste("echo $PATH\n$HOME/bin/run\n")[0].kind is None  # "$HOME" is no prompt


@given(
    st.sampled_from(
        [
            "sudo ip netns exec ns1 ",
            "ip netns exec lab-a ",
            "docker exec -it trainer-0 ",
            "kubectl exec -n ml pod-0 -c main -- ",
            "sudo time ",
        ]
    )
)
def test_a_tool_run_in_another_place_is_still_that_tool(runner: str) -> None:
    # the part under the prompt is too short for any detector (ethtool -i's first two lines):
    # the command names the tool, also when a runner (netns, container, pod, sudo) wraps it
    text = f"$ {runner}ethtool -i ens1f0\ndriver: mlx5_core\nversion: 24.10-1.1.4\n"
    parts = parse_paste(text)
    assert [p.kind for p in parts if p.result is not None and p.result.records] == [
        "ethtool-info"
    ]


def test_a_host_prefix_over_a_mail_quote_is_stripped_twice() -> None:
    # pdsh's "node07: " over the mail-quoted ibstatus: both prefixes go, the host stays
    text = (PASTES / "ibstatus-mail-quoted-with-prose" / "input.txt").read_text(encoding="utf-8")
    doubled = "\n".join(f"node07: {line}" for line in text.split("\n"))
    ports = [(p.subject, r) for p in parse_paste(doubled) if p.result
             for r in p.result.records if isinstance(r, IbstatPort)]  # fmt: skip
    assert [(s, r.ca, r.state, r.line) for s, r in ports] == [("node07", "mlx4_0", "Active", 2)]


def test_vagrant_machine_prefix_is_a_host_prefix() -> None:
    # vagrant indents each machine's provisioner output by four spaces ("    node2: "); the lines
    # are from a real provisioning log (benchmarks/captures/frozen23/p-sysctl-vagrant-node2-...)
    text = (
        "    node2: enable iptable kernel parameter\n"
        "    node2: net.ipv4.ip_forward = 1\n"
        "    node2: sysctl: cannot stat /proc/sys/net/bridge/bridge-nf-call-iptables: No such "
        "file or directory\n"
        "    node2: set host name resolution\n"
    )
    parts = [p for p in parse_paste(text) if p.kind == "sysctl"]
    assert [p.subject for p in parts] == ["node2"] and parts[0].result is not None
    assert len(parts[0].result.records) == 2
