"""SSH probe against a real OpenSSH sshd on 127.0.0.1 (keys generated here, host-key checking
on): fan-out rows for live and dead targets, "host key not trusted" for a wrong known_hosts
entry, and argv quoting checked end to end with hostile arguments. Needs root and
/usr/sbin/sshd (``apt-get install -y openssh-server``); elsewhere it skips with the reason.
sshd is always stopped by PID."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import asyncssh
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.probe.fanout import fan_out
from aifabric.probe.runner import CmdResult, Runner
from aifabric.probe.ssh import ssh_connect, ssh_connector
from tests.integration.probe.sshd_harness import SSHD, LocalSshd, free_port


def _missing() -> str | None:
    if os.geteuid() != 0:
        return "needs root (sshd with its own host key); CI runs it as root"
    if not Path(SSHD).exists():
        return "needs /usr/sbin/sshd: apt-get install -y openssh-server"
    return None


MISSING = _missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


_free_port = free_port
Sshd = LocalSshd


@pytest.fixture(scope="module")
def sshd() -> Iterator[LocalSshd]:
    server = LocalSshd(max_startups=200)
    try:
        yield server.start()
    finally:
        server.stop()


async def _uname(runner: Runner) -> CmdResult:
    return await runner.run(["uname", "-r"], timeout=10)


def test_fan_out_live_and_refused(sshd: Sshd) -> None:
    closed = _free_port()  # bound then released: nothing listens there
    targets = [sshd.spec, f"root@127.0.0.1:{closed}", sshd.spec]
    connect = ssh_connector(known_hosts=sshd.known_hosts, client_keys=[sshd.client_key],
                            connect_timeout=5)
    seen: list[tuple[int, int, str, bool]] = []
    rows = asyncio.run(fan_out(targets, _uname, connect=connect, concurrency=2, timeout_s=20,
                               retries=1, retry_delay_s=0.05,
                               progress=lambda *a: seen.append(a)))
    assert [r.host for r in rows] == targets
    kernel = os.uname().release
    for r in (rows[0], rows[2]):
        assert r.ok and r.error is None and r.attempts == 1
        assert r.value is not None and r.value.ok
        assert r.value.stdout.strip() == kernel
    dead = rows[1]
    assert not dead.ok and dead.value is None
    assert dead.error == "connection refused"
    assert dead.attempts == 2  # refused is retried once
    assert sorted(s[0] for s in seen) == [1, 2, 3] and all(s[1] == 3 for s in seen)


def test_wrong_host_key_not_trusted(sshd: Sshd) -> None:
    other = asyncssh.generate_private_key("ssh-ed25519")
    wrong = sshd.dir / "known_hosts_wrong"
    wrong.write_text(f"[127.0.0.1]:{sshd.port} {other.export_public_key().decode()}")
    connect = ssh_connector(known_hosts=wrong, client_keys=[sshd.client_key], connect_timeout=5)
    rows = asyncio.run(fan_out([sshd.spec], _uname, connect=connect, timeout_s=20,
                               retry_delay_s=0.05))
    assert not rows[0].ok
    assert rows[0].error == "host key not trusted"
    assert rows[0].attempts == 1  # not retried: it will not change


def test_exit_code_and_timeout(sshd: Sshd) -> None:
    async def go() -> tuple[CmdResult, CmdResult, CmdResult]:
        async with ssh_connect("127.0.0.1", port=sshd.port, user="root",
                               known_hosts=sshd.known_hosts,
                               client_keys=[sshd.client_key]) as r:
            fail = await r.run(["sh", "-c", "echo oops >&2; exit 3"], timeout=10)
            slow = await r.run(["sleep", "5"], timeout=0.5)
            missing = await r.run(["no-such-tool-afprobe"], timeout=10)
            return fail, slow, missing

    fail, slow, missing = asyncio.run(go())
    assert fail.rc == 3 and fail.stderr == "oops\n" and fail.error is None
    assert slow.rc is None and slow.error == "timed out after 0.5 s" and slow.seconds < 3
    assert missing.rc == 127 and missing.error == "no-such-tool-afprobe: not installed here"


HOSTILE = ["a b", ";", "$(id)", "`id`", "'", '"', "x\ny", "$HOME", "*", "\\", "-n", "", "~",
           "a'b\"c", "!$", "&& echo pwned", "|", ">/tmp/x", "\t", "é ünï"]


def test_hostile_argv_verbatim_printf(sshd: Sshd) -> None:
    async def go() -> CmdResult:
        async with ssh_connect("127.0.0.1", port=sshd.port, user="root",
                               known_hosts=sshd.known_hosts,
                               client_keys=[sshd.client_key]) as r:
            return await r.run(["printf", "%s\\0", *HOSTILE], timeout=10)

    res = asyncio.run(go())
    assert res.ok, res
    assert res.stdout.split("\0")[:-1] == HOSTILE


def test_nul_refused(sshd: Sshd) -> None:
    async def go() -> CmdResult:
        async with ssh_connect("127.0.0.1", port=sshd.port, user="root",
                               known_hosts=sshd.known_hosts,
                               client_keys=[sshd.client_key]) as r:
            return await r.run(["echo", "a\x00b"], timeout=10)

    res = asyncio.run(go())
    assert res.rc is None and res.error is not None and "NUL" in res.error


_arg = st.text(st.characters(codec="utf-8", exclude_characters="\x00"),
               max_size=12)


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=st.lists(st.one_of(_arg, st.sampled_from(HOSTILE)), min_size=1, max_size=6))
def test_property_argv_round_trip(sshd: Sshd, args: list[str]) -> None:
    """Any argv without NUL reaches the remote program unchanged (python3 prints sys.argv)."""
    prog = "import sys, json; sys.stdout.write(json.dumps(sys.argv[1:]))"

    async def go() -> CmdResult:
        async with ssh_connect("127.0.0.1", port=sshd.port, user="root",
                               known_hosts=sshd.known_hosts,
                               client_keys=[sshd.client_key]) as r:
            return await r.run(["python3", "-c", prog, *args], timeout=10)

    res = asyncio.run(go())
    assert res.ok, res
    assert json.loads(res.stdout) == args


def test_insecure_opt_out_skips_host_key_check(sshd: Sshd) -> None:
    """Only the explicit opt-out connects despite a wrong known_hosts entry."""
    connect = ssh_connector(client_keys=[sshd.client_key], connect_timeout=5,
                            insecure_no_host_key_check=True)
    rows = asyncio.run(fan_out([sshd.spec], _uname, connect=connect, timeout_s=20))
    assert rows[0].ok and rows[0].value is not None
    assert rows[0].value.stdout.strip() == os.uname().release


def test_probe_command_over_ssh_with_a_dead_host(sshd: Sshd, tmp_path: Path) -> None:
    """`aifabric probe` end to end: the live sshd is probed into the bundle (its ip-link
    capture parses), the closed port is a failed row, the sweep finishes, exit 1."""
    closed = _free_port()
    out = tmp_path / "bundle"
    res = subprocess.run(
        [sys.executable, "-m", "aifabric", "probe", sshd.spec, f"root@127.0.0.1:{closed}",
         "-o", str(out), "--known-hosts", str(sshd.known_hosts), "-i", str(sshd.client_key),
         "--timeout", "60", "-F", "json"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert res.returncode == 1, res.stderr
    doc = json.loads(res.stdout)
    rows = {h["host"]: h for h in doc["hosts"]}
    assert rows[sshd.spec]["ok"] and rows[sshd.spec]["error"] is None
    dead = rows[f"root@127.0.0.1:{closed}"]
    assert not dead["ok"] and dead["error"] == "connection refused"
    host_dirs = [p for p in out.iterdir() if p.is_dir()]
    assert len(host_dirs) == 1
    parsed = json.loads((host_dirs[0] / "ip-link.txt.json").read_text())
    assert parsed["kind"] == "ip-link"


def _pids_with(marker: str) -> list[int]:
    """PIDs whose command line holds ``marker`` (read from /proc: only the processes this test
    started carry it)."""
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker.encode() in argv:
            out.append(int(proc.name))
    return out


def test_timed_out_command_does_not_survive_on_the_host(sshd: Sshd) -> None:
    """``sleep 30`` with a 1 s timeout: the result is a timeout, and no process carrying the
    test's marker argument is left in the process table (the remote ``timeout -k`` killed it;
    closing the channel alone would leave ``sleep`` running for 30 s)."""
    marker = f"afprobe-marker-{os.getpid()}-{free_port()}"
    # sh -c 'sleep 30' MARKER: the marker is $0 of the shell and stays in its cmdline; the
    # shell's child sleep is in the same process group, which timeout kills as a whole
    argv = ["sh", "-c", "sleep 30; :", marker]

    async def go() -> CmdResult:
        async with ssh_connect("127.0.0.1", port=sshd.port, user="root",
                               known_hosts=sshd.known_hosts,
                               client_keys=[sshd.client_key]) as r:
            return await r.run(argv, timeout=1)

    try:
        res = asyncio.run(go())
        assert res.rc is None and res.error == "timed out after 1 s", res
        assert 0.9 <= res.seconds < 6
        deadline = time.monotonic() + 5
        while _pids_with(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _pids_with(marker) == []
    finally:
        for pid in _pids_with(marker):  # only ours: they carry the marker
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_remote_argv_is_wrapped_in_timeout(sshd: Sshd) -> None:
    """The remote side sees ``timeout -k 2 T argv``: the parent of the command is
    coreutils ``timeout`` (its cmdline read through /proc on the same machine)."""
    prog = ("import os; p = os.getppid(); "
            "print(open(f'/proc/{p}/cmdline').read().replace(chr(0), ' ').strip())")

    async def go() -> CmdResult:
        async with ssh_connect("127.0.0.1", port=sshd.port, user="root",
                               known_hosts=sshd.known_hosts,
                               client_keys=[sshd.client_key]) as r:
            return await r.run(["python3", "-c", prog], timeout=7.5)

    res = asyncio.run(go())
    assert res.ok, res
    assert res.stdout.strip() == f"timeout -k 2 7.5 python3 -c {prog}"
