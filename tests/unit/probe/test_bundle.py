"""Bundles: files verbatim, parsed sidecars, manifest, safe names, tar round trip, safe unpack."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aifabric import __version__
from aifabric.checks.diagnose.engine import load_evidence
from aifabric.dialects.load import load_observed
from aifabric.errors import InputError
from aifabric.probe.bundle import MANIFEST, host_dirname, read_bundle, write_host, write_tar
from aifabric.probe.collectors import NOT_AVAILABLE, Capture

IP_LINK = (
    "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT "
    "group default qlen 1000\n"
    "    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00\n"
    "2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9000 qdisc mq state UP mode DEFAULT "
    "group default qlen 1000\n"
    "    link/ether 02:fc:00:00:00:01 brd ff:ff:ff:ff:ff:ff\n"
)
SYSCTL = "net.ipv4.tcp_ecn = 1\nnet.ipv4.fib_multipath_hash_policy = 0\r\n"
ETHTOOL_I = "driver: mlx5_core\nversion: 24.10\nfirmware-version: 28.39.1002 (MT_0000000970)\n"


def cap(
    name: str,
    argv: tuple[str, ...],
    stdout: str = "",
    *,
    rc: int | None = 0,
    stderr: str = "",
    error: str | None = None,
) -> Capture:
    return Capture(name, argv, rc, stdout, stderr, 0.0123456, error, 1_800_000_000.5)


CAPS = [
    cap("ip-link.txt", ("ip", "-s", "-d", "link", "show"), IP_LINK),
    cap("sysctl.txt", ("sysctl", "net.ipv4.tcp_ecn"), SYSCTL),
    cap("uname-r.txt", ("uname", "-r"), "6.1.0-28-amd64\n"),
    cap("ethtool-i-eth0.txt", ("ethtool", "-i", "eth0"), ETHTOOL_I),
    cap("lspci.txt", ("lspci", "-vvv"), rc=None, error=NOT_AVAILABLE + "lspci: not installed here"),
    cap(
        "nccl.conf",
        ("cat", "/etc/nccl.conf"),
        rc=1,
        stderr="cat: /etc/nccl.conf: No such file or directory\n",
        error=NOT_AVAILABLE + "cat: /etc/nccl.conf: No such file or directory",
    ),
]


def test_write_host_files_sidecars_and_manifest(tmp_path: Path) -> None:
    b = tmp_path / "bundle"
    entry = write_host(b, "gpu1", CAPS)
    assert (b / "gpu1" / "sysctl.txt").read_bytes() == SYSCTL.encode()  # verbatim, \r\n kept
    assert not (b / "gpu1" / "lspci.txt").exists()  # nothing printed, nothing written
    side = json.loads((b / "gpu1" / "ip-link.txt.json").read_text())
    assert side["kind"] == "ip-link"
    assert [r["name"] for r in side["records"]] == ["lo", "eth0"]
    assert not (b / "gpu1" / "uname-r.txt.json").exists()  # no parser for uname -r
    man = json.loads((b / MANIFEST).read_text())
    assert man["aifabric_version"] == __version__
    assert man["format"] == "aifabric-probe-bundle/1"
    host = man["hosts"]["gpu1"]
    assert host == json.loads(json.dumps(entry))
    by = {c["name"]: c for c in host["captures"]}
    assert by["ip-link.txt"]["argv"] == ["ip", "-s", "-d", "link", "show"]
    assert (
        by["ip-link.txt"]["kind"] == "ip-link" and by["ip-link.txt"]["file"] == "gpu1/ip-link.txt"
    )
    assert by["sysctl.txt"]["kind"] == "sysctl"
    assert by["nccl.conf"]["rc"] == 1 and by["nccl.conf"]["file"] is None
    assert by["nccl.conf"]["stderr"] == "cat: /etc/nccl.conf: No such file or directory\n"
    assert by["lspci.txt"]["error"] == NOT_AVAILABLE + "lspci: not installed here"
    assert by["sysctl.txt"]["seconds"] == 0.0123 and by["sysctl.txt"]["started"] == 1_800_000_000.5
    assert host["versions"] == {
        "kernel": "6.1.0-28-amd64",
        "nics": {
            "eth0": {
                "driver": "mlx5_core",
                "version": "24.10",
                "firmware-version": "28.39.1002 (MT_0000000970)",
            }
        },
    }
    # a second host joins, a rewritten host replaces its entry
    write_host(b, "gpu2", CAPS[:1])
    write_host(b, "gpu1", CAPS[:2])
    man = json.loads((b / MANIFEST).read_text())
    assert sorted(man["hosts"]) == ["gpu1", "gpu2"]
    assert len(man["hosts"]["gpu1"]["captures"]) == 2


def test_readers_see_captures_not_sidecars(tmp_path: Path) -> None:
    b = tmp_path / "bundle"
    write_host(b, "gpu1", CAPS)
    ev = load_evidence([b])
    files = {Path(f.path).name: f for f in ev.files}
    assert (b / "gpu1" / "ip-link.txt.json").is_file()
    assert not any(n.endswith(".txt.json") for n in files)  # parsed companions are not re-read
    assert files["sysctl.txt"].kind == "sysctl" and files["sysctl.txt"].subject == "gpu1"
    assert files["ip-link.txt"].kind == "ip-link"
    obs = load_observed(bundle=b, devices=["gpu1"])
    assert obs.devices["gpu1"].role == "host"
    assert not any(MANIFEST in s or ".txt.json" in s for s in obs.skipped)


@given(st.text(max_size=60))
def test_host_dirname_stays_inside(host: str) -> None:
    name = host_dirname(host)
    assert name and "/" not in name and "\x00" not in name
    assert not name.startswith(".") and name not in (".", "..")
    base = Path("/b")
    assert (base / name).parent == base and len(Path(name).parts) == 1


@pytest.mark.parametrize("host", ["../../etc", "/etc/passwd", "..", ".hidden", "a/../../b", "-rf"])
def test_hostile_host_and_capture_names_stay_in_bundle(tmp_path: Path, host: str) -> None:
    b = tmp_path / "bundle"
    entry = write_host(b, host, [cap("../../escape.txt", ("uname",), "x\n")])
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert all(b.resolve() in p.resolve().parents for p in written)
    assert (b / entry["dir"]).is_dir() and not entry["dir"].startswith((".", "-"))
    assert json.loads((b / MANIFEST).read_text())["hosts"][entry["dir"]]["host"] == host


def test_tar_round_trip(tmp_path: Path) -> None:
    b = tmp_path / "run1"
    write_host(b, "gpu1", CAPS)
    write_host(b, "gpu2", CAPS[:2])
    tgz = write_tar(b)
    assert tgz == tmp_path / "run1.tar.gz"
    out = read_bundle(tgz, tmp_path / "x")
    assert out == (tmp_path / "x" / "run1").resolve()
    before = {p.relative_to(b): p.read_bytes() for p in b.rglob("*") if p.is_file()}
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert before == after and len(before) >= 9
    assert read_bundle(b) == b
    tmp_default = read_bundle(tgz)  # a new temporary directory: removed here, not left in /tmp
    try:
        assert tmp_default.parent.name.startswith("aifabric-bundle-")
        assert (tmp_default / MANIFEST).is_file()
    finally:
        shutil.rmtree(tmp_default.parent)


def _tar(path: Path, members: list[tarfile.TarInfo]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info in members:
            data = b"evil\n" if info.isfile() else None
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def _member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    return info


@pytest.mark.parametrize(
    "bad",
    [
        _member("../evil.txt"),
        _member("b/../../evil.txt"),
        _member("/tmp/evil.txt"),
        _member("b/link", tarfile.SYMTYPE, "/etc/passwd"),
        _member("b/hard", tarfile.LNKTYPE, "b/ok.txt"),
        _member("b/dev", tarfile.CHRTYPE),
        _member("b/fifo", tarfile.FIFOTYPE),
    ],
    ids=["dotdot", "nested-dotdot", "absolute", "symlink", "hardlink", "device", "fifo"],
)
def test_unsafe_archive_refused_before_writing(tmp_path: Path, bad: tarfile.TarInfo) -> None:
    tgz = _tar(tmp_path / "b.tar.gz", [_member("b/ok.txt"), bad])
    dest = tmp_path / "dest"
    with pytest.raises(InputError):
        read_bundle(tgz, dest)
    assert list(dest.rglob("*")) == []  # checked first: nothing was written
    assert not (tmp_path / "evil.txt").exists()


def test_not_a_bundle(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        read_bundle(tmp_path / "missing.tar.gz")
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"not a tar at all")
    with pytest.raises(InputError):
        read_bundle(junk, tmp_path / "d")
