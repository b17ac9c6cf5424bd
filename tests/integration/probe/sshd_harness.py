"""A real OpenSSH sshd on 127.0.0.1 with keys made on the spot, for the probe's SSH tests and
its fan-out benchmark: host-key checking stays on (a known_hosts file is written), the daemon
is stopped by PID. Pitfalls handled (OpenSSH 9.2): sshd needs its absolute path and /run/sshd;
a host key must be 0600; StrictModes would refuse keys under /tmp."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import asyncssh

from aifabric.probe.runner import Runner
from aifabric.probe.ssh import ssh_connector

SSHD = "/usr/sbin/sshd"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class LocalSshd:
    """sshd on 127.0.0.1: ``start()``, then ``spec``/``known_hosts``/``client_key``; ``stop()``."""

    def __init__(self, *, max_startups: int = 256) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="afprobe-sshd-"))
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.max_startups = max_startups

    @property
    def known_hosts(self) -> Path:
        return self.dir / "known_hosts"

    @property
    def client_key(self) -> Path:
        return self.dir / "client_key"

    @property
    def spec(self) -> str:
        return f"root@127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def start(self) -> LocalSshd:
        d = self.dir
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        hk = asyncssh.generate_private_key("ssh-ed25519")
        hk.write_private_key(str(d / "host_key"))
        os.chmod(d / "host_key", 0o600)
        ck = asyncssh.generate_private_key("ssh-ed25519")
        ck.write_private_key(str(d / "client_key"))
        ck.write_public_key(str(d / "authorized_keys"))
        self.known_hosts.write_text(f"[127.0.0.1]:{self.port} {hk.export_public_key().decode()}")
        (d / "sshd_config").write_text(
            f"Port {self.port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\n"
            f"PidFile {d}/sshd.pid\nAuthorizedKeysFile {d}/authorized_keys\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
            "StrictModes no\nPermitRootLogin prohibit-password\nUseDNS no\n"
            f"MaxStartups {self.max_startups}\nMaxSessions 50\n")
        with open(d / "log", "wb") as log:
            self.proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(d / "sshd_config")],
                                         stdout=log, stderr=subprocess.STDOUT)
        for _ in range(250):
            if "Server listening" in (d / "log").read_text():
                return self
            if self.proc.poll() is not None:
                raise RuntimeError((d / "log").read_text())
            time.sleep(0.02)
        self.stop()
        raise TimeoutError("sshd did not start")

    def connect(self) -> Callable[[str], AbstractAsyncContextManager[Runner]]:
        return ssh_connector(known_hosts=self.known_hosts, client_keys=[self.client_key],
                             connect_timeout=30)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        shutil.rmtree(self.dir, ignore_errors=True)
