"""A throwaway PostgreSQL 15 cluster for the bench store tests: ``initdb`` into a temporary
directory (as user ``postgres`` when run as root), ``postgres`` on 127.0.0.1 at a free port with
its unix socket in the same directory, stopped by the postmaster's PID (SIGINT: fast shutdown)
and the directory removed. :func:`why_not` says why it cannot run here (not root, no binaries).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import IO, Any

READY_TIMEOUT_S = 90
"""How long the server may take to accept connections (a loaded 2-CPU machine is slow)."""
PGBIN = Path(os.environ.get("AIFABRIC_PGBIN", "/usr/lib/postgresql/15/bin"))


def why_not() -> str | None:
    """``None`` when a cluster can be started here, else the reason (for ``pytest.skip``)."""
    missing = [n for n in ("initdb", "postgres", "pg_isready") if not (PGBIN / n).is_file()]
    if missing:
        return f"PostgreSQL server binaries not found in {PGBIN} ({', '.join(missing)})"
    if os.geteuid() != 0:
        return "starting PostgreSQL needs root here (initdb runs as user postgres via runuser)"
    try:
        import pwd  # noqa: PLC0415

        pwd.getpwnam("postgres")
    except KeyError:
        return "no 'postgres' user to run the server as"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class PgCluster:
    """One server; :meth:`start`, then :meth:`url` / :meth:`new_database`, then :meth:`stop`."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="aifabric-pg-"))
        self.port = _free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: IO[str] | None = None

    def _as_postgres(self) -> dict[str, Any]:
        return {"user": "postgres", "group": "postgres", "extra_groups": []}

    def start(self) -> PgCluster:
        shutil.chown(self.dir, "postgres", "postgres")
        data = self.dir / "data"
        subprocess.run(
            [
                *(str(PGBIN / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust"),
                *("-E", "UTF8", "--locale=C", "--no-sync"),
            ],
            check=True,
            capture_output=True,
            cwd=self.dir,
            **self._as_postgres(),
        )
        for attempt in range(3):  # another process may take the free port before we bind it
            if self._launch(data):
                return self
            self.port = _free_port()
            if attempt == 2:
                break
        raise RuntimeError("postgres did not start: " + (self.dir / "log").read_text()[-2000:])

    def _launch(self, data: Path) -> bool:
        """Start the postmaster; True once it accepts connections, False when it exited
        because its port was taken; RuntimeError/TimeoutError otherwise."""
        if self._log is not None:
            self._log.close()
        self._log = (self.dir / "log").open("w")
        self.proc = subprocess.Popen(  # proc.pid is the postmaster itself
            [
                *(str(PGBIN / "postgres"), "-D", str(data), "-p", str(self.port)),
                *("-k", str(self.dir), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"),
                *("-c", "synchronous_commit=off", "-c", "full_page_writes=off"),
                *("-c", "max_connections=100"),
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=self.dir,
            **self._as_postgres(),
        )
        ready = [str(PGBIN / "pg_isready"), "-q", "-h", str(self.dir), "-p", str(self.port)]
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if subprocess.run(ready, check=False, timeout=30).returncode == 0:
                return True
            if self.proc.poll() is not None:
                log = (self.dir / "log").read_text()
                if "could not bind" in log or "already in use" in log:
                    return False
                raise RuntimeError("postgres exited: " + log[-2000:])
            time.sleep(0.05)
        raise TimeoutError(f"postgres did not become ready in {READY_TIMEOUT_S} s")

    def url(self, database: str = "postgres", *, unix: bool = False) -> str:
        """``postgresql://`` URL (the store picks psycopg 3) over TCP or the unix socket."""
        if unix:
            return f"postgresql://postgres@/{database}?host={self.dir}&port={self.port}"
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """Create an empty database; returns its URL."""
        import psycopg  # noqa: PLC0415

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(
            host="127.0.0.1", port=self.port, user="postgres", dbname="postgres", autocommit=True
        ) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        """Fast shutdown by the postmaster's PID; the directory is removed."""
        try:
            if self.proc is not None and self.proc.poll() is None:
                self.proc.send_signal(signal.SIGINT)
                try:
                    self.proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=10)
        finally:
            if self._log is not None:
                self._log.close()
            shutil.rmtree(self.dir, ignore_errors=True)
