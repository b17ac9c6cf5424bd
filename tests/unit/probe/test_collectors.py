"""Collectors: argv only, hostile interface names refused, missing tools degrade to values."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from aifabric.evidence import parse_text
from aifabric.probe.collectors import (
    FALLBACKS,
    IFACE_RE,
    MAX_IFACES,
    NOT_AVAILABLE,
    RDMA_LIST,
    Capture,
    collect_host,
    host_commands,
    interface_commands,
    select_interfaces,
)
from aifabric.probe.runner import CmdResult, LocalRunner

IP_JSON = ("ip", "-d", "-j", "link", "show")
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "csh", "tcsh", "fish", "busybox", "env"}

Handler = Callable[[tuple[str, ...]], CmdResult]


def _missing(argv: tuple[str, ...]) -> CmdResult:
    return CmdResult(argv, None, "", "", 0.0, error=f"{argv[0]}: not installed here")


@dataclass
class FakeRunner:
    """Answers from a table (argv → result); anything else is a tool that is not installed."""

    table: dict[tuple[str, ...], Handler] = field(default_factory=dict)
    target: str = "fake"
    calls: list[tuple[str, ...]] = field(default_factory=list)

    async def run(self, argv: Sequence[str], *, timeout: float) -> CmdResult:
        key = tuple(argv)
        self.calls.append(key)
        return self.table.get(key, _missing)(key)


def ok(stdout: str, rc: int = 0, stderr: str = "") -> Handler:
    return lambda argv: CmdResult(argv, rc, stdout, stderr, 0.001)


def links(*entries: tuple[str, str, str | None]) -> str:
    """``ip -d -j link show`` output of (name, link_type, info_kind) entries."""
    out = []
    for i, (name, ltype, kind) in enumerate(entries, 1):
        e: dict[str, object] = {"ifindex": i, "ifname": name, "link_type": ltype, "mtu": 1500}
        if kind is not None:
            e["linkinfo"] = {"info_kind": kind}
        out.append(e)
    return json.dumps(out)


def collect(runner: FakeRunner, interval_s: float = 0.0) -> list[Capture]:
    return asyncio.run(collect_host(runner, timeout_s=5, interval_s=interval_s))


def test_every_collector_degrades_when_nothing_is_installed() -> None:
    runner = FakeRunner()
    caps = collect(runner)
    assert [c.name for c in caps] == [n for n, _ in host_commands()] + [
        "ip-j-link.json",
        "rdma-devices.txt",
    ]
    for cap in caps:
        assert cap.error is not None and cap.error.startswith(NOT_AVAILABLE), cap
        assert cap.rc is None and cap.stdout == ""
    assert all(c[0] != "ethtool" for c in runner.calls)  # no interfaces learned, none probed


def test_runner_exception_is_a_value() -> None:
    class Broken(FakeRunner):
        async def run(self, argv: Sequence[str], *, timeout: float) -> CmdResult:
            raise ConnectionResetError("lost")

    caps = collect(Broken())
    assert len(caps) == len(host_commands()) + 2
    assert all(c.error == "ConnectionResetError: lost" for c in caps)


def test_interfaces_from_ip_json_and_their_collectors() -> None:
    stats = iter(["NIC statistics:\n     rx_bytes: 100\n", "NIC statistics:\n     rx_bytes: 250\n"])
    table: dict[tuple[str, ...], Handler] = {
        IP_JSON: ok(
            links(
                ("lo", "loopback", None),
                ("eth0", "ether", None),
                ("veth1", "ether", "veth"),
                ("br0", "ether", "bridge"),
                ("ib0", "infiniband", None),
            )
        ),
        ("ethtool", "-S", "eth0"): lambda argv: CmdResult(argv, 0, next(stats), "", 0.001),
        ("ethtool", "-m", "eth0"): ok("", 1, "netlink error: Operation not supported\n"),
        ("ethtool", "eth0"): ok("Settings for eth0:\n\tSpeed: 100000Mb/s\n"),
        ("ethtool", "-S", "veth1"): ok("", 95, "weird failure\n"),
        ("sysctl", *host_commands()[3][1][1:]): ok("net.ipv4.tcp_ecn = 2\n"),
        ("lspci", "-vvv"): ok("00:01.0 Ethernet\n\tCapabilities: <access denied>\n"),
        ("cat", "/etc/nccl.conf"): ok("", 1, "cat: /etc/nccl.conf: No such file or directory\n"),
    }
    runner = FakeRunner(table)
    caps = {c.name: c for c in collect(runner, interval_s=0.05)}
    probed = {c[-1] for c in runner.calls if c[0] == "ethtool"}
    assert probed == {"eth0", "veth1"}  # loopback, bridge and InfiniBand links are not probed
    s1, s2 = caps["ethtool-S-eth0.1.txt"], caps["ethtool-S-eth0.2.txt"]
    assert parse_text(s2.stdout).records[0].counters["rx_bytes"] == 250  # type: ignore[attr-defined]
    assert s2.started - s1.started >= 0.05
    assert (
        caps["ethtool-m-eth0.txt"].error == NOT_AVAILABLE + "netlink error: Operation not supported"
    )
    assert caps["ethtool-eth0.txt"].error is None
    # a failure that is not "missing" keeps its exit code and message; both snapshots are taken
    assert caps["ethtool-S-veth1.1.txt"].error == "exit 95: weird failure"
    assert "ethtool-S-veth1.2.txt" in caps
    # ethtool -i is not in the table: not installed → no second snapshot needed elsewhere
    assert caps["ethtool-i-veth1.txt"].error == NOT_AVAILABLE + "ethtool: not installed here"
    assert caps["sysctl.txt"].error is None
    assert caps["lspci.txt"].error == "partial: some fields need root (<access denied>)"
    assert caps["nccl.conf"].error is not None
    assert caps["nccl.conf"].error.startswith(NOT_AVAILABLE)
    assert "interfaces-skipped.txt" not in caps


def test_missing_ethtool_takes_one_snapshot_only() -> None:
    runner = FakeRunner({IP_JSON: ok(links(("eth0", "ether", None)))})
    names = [c.name for c in collect(runner)]
    assert "ethtool-S-eth0.1.txt" in names and "ethtool-S-eth0.2.txt" not in names


def test_hostile_names_skipped_with_reason() -> None:
    hostile = ["-S", "a;reboot", "$(id)", "../x", "x" * 16, "", "eth0", "eth0", "bad name"]
    runner = FakeRunner({IP_JSON: ok(links(*[(n, "ether", None) for n in hostile]))})
    caps = {c.name: c for c in collect(runner)}
    assert {c[-1] for c in runner.calls if c[0] == "ethtool"} == {"eth0"}
    skipped = caps["interfaces-skipped.txt"].stdout.splitlines()
    assert len(skipped) == 8  # 7 unusable names and one duplicate
    assert "'eth0': listed twice" in skipped and "'-S': not a usable interface name" in skipped


def test_interface_cap() -> None:
    names = [f"e{i}" for i in range(MAX_IFACES + 3)]
    names_json = links(*[(n, "ether", None) for n in names])
    got, skipped = select_interfaces(names_json)
    assert got == names[:MAX_IFACES] and len(skipped) == 3


@given(st.text(max_size=300))
def test_select_interfaces_never_raises(text: str) -> None:
    names, _ = select_interfaces(text)
    assert all(IFACE_RE.match(n) for n in names)


_CONST_TOKENS = (
    {tok for _, argv in host_commands() for tok in argv}
    | {tok for _, argv in interface_commands("X") for tok in argv if tok != "X"}
    | {"-S", *IP_JSON, *RDMA_LIST[1]}
    | {tok for argv in FALLBACKS.values() for tok in argv}
)

_NAME = st.one_of(
    st.text(max_size=20),
    st.text(alphabet="abcdeth0123456789_.:@-;$`|&/ \n'\"", min_size=1, max_size=18),
    st.sampled_from(["-S", "--help", "eth0", "ib0", "..", ".", "a b", "x;rm -rf /", "e$(id)"]),
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            _NAME, st.sampled_from(["ether", "loopback"]), st.sampled_from([None, "veth", "bridge"])
        ),
        max_size=8,
    )
)
def test_hostile_names_never_reach_a_shell_or_an_option(
    entries: list[tuple[str, str, str | None]],
) -> None:
    runner = FakeRunner({IP_JSON: ok(links(*entries))})
    for name in {e[0] for e in entries}:
        runner.table[("ethtool", "-S", name)] = ok("NIC statistics:\n     rx_bytes: 1\n")
    collect(runner)
    valid = {
        n
        for n, lt, k in entries
        if lt == "ether" and k in (None, "veth") and IFACE_RE.match(n) and n not in (".", "..")
    }
    for argv in runner.calls:
        assert argv[0].rsplit("/", 1)[-1] not in SHELLS
        for tok in argv:
            # every element is a fixed token of a collector or exactly one validated name
            assert tok in _CONST_TOKENS or tok in valid, (tok, argv)
        if argv[0] == "ethtool":
            assert argv[-1] in valid and not argv[-1].startswith("-")
    assert {a[-1] for a in runner.calls if a[0] == "ethtool"} == valid


def test_real_host_collects_ip_link() -> None:
    caps = asyncio.run(collect_host(LocalRunner(), timeout_s=20, interval_s=0.1))
    by_name = {c.name: c for c in caps}
    assert len(by_name) == len(caps)  # file names are unique
    ip_link = by_name["ip-link.txt"]
    assert ip_link.error is None and ip_link.rc == 0
    result = parse_text(ip_link.stdout)
    assert result.kind == "ip-link"
    assert any(
        getattr(r, "name", None) == "lo" or getattr(r, "ifname", None) == "lo"
        for r in result.records
    )
    assert by_name["uname-r.txt"].stdout.strip()
    for cap in caps:
        assert cap.error is None or isinstance(cap.error, str)
        assert cap.started > 0 and cap.seconds >= 0
    if shutil.which("ethtool") is None:
        return
    names, _ = select_interfaces(by_name["ip-j-link.json"].stdout)
    for name in names:
        first = by_name[f"ethtool-S-{name}.1.txt"]
        if first.error is None:
            assert parse_text(first.stdout).kind == "ethtool-stats"
            assert f"ethtool-S-{name}.2.txt" in by_name
