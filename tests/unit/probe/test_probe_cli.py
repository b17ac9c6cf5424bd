"""``aifabric probe`` as a scheduler calls it on each node: ``--local --name N --tar -o DIR``
writes DIR/N/ and one archive DIR.tar.gz; the default name is the short hostname; the SSH
form still answers with rows."""

from __future__ import annotations

import json
import socket
import tarfile
from pathlib import Path

from aifabric.probe.bundle import MANIFEST, host_dirname
from tests.conftest import run_cli


def test_local_name_and_single_archive(tmp_path: Path) -> None:
    out = tmp_path / "node-17"
    r = run_cli("probe", "--local", "--name", "node-17", "--tar", "-o", str(out), "-F", "json")
    assert r.code == 0, r.err
    doc = r.json()
    assert [h["host"] for h in doc["hosts"]] == ["node-17"]
    assert doc["tarball"] == str(tmp_path / "node-17.tar.gz")
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST, "node-17"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["node-17", "node-17.tar.gz"]
    with tarfile.open(tmp_path / "node-17.tar.gz") as tar:
        names = tar.getnames()
    assert {n.split("/")[0] for n in names} == {"node-17"}
    assert "node-17/node-17/ip-link.txt" in names and "node-17/manifest.json" in names


def test_local_default_name_is_short_hostname(tmp_path: Path) -> None:
    r = run_cli("probe", "--local", "-o", str(tmp_path / "b"))
    assert r.code == 0, r.err
    short = socket.gethostname().split(".")[0] or "localhost"
    man = json.loads((tmp_path / "b" / MANIFEST).read_text())
    assert list(man["hosts"]) == [host_dirname(short)]


def test_hostile_name_stays_inside(tmp_path: Path) -> None:
    r = run_cli("probe", "--local", "--name", "../../evil", "-o", str(tmp_path / "b"))
    assert r.code == 0, r.err
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == ["_.._evil", MANIFEST]
    assert not (tmp_path / "evil").exists()


def test_ssh_hosts_form_still_gives_rows(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on: refused at once
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = run_cli("probe", f"127.0.0.1:{port}", "-o", str(tmp_path / "b"), "--timeout", "20",
                "-F", "json")
    assert r.code == 1, r.err
    (row,) = r.json()["hosts"]
    assert row["host"] == f"127.0.0.1:{port}" and row["ok"] is False and row["error"]
