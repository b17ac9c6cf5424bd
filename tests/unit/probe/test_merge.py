"""merge_bundles on real bundles written by ``aifabric probe --local`` on this machine: files
copied verbatim, duplicates keep the newer copy and are rows, expected hosts without a folder
are missing rows, hostile archives and directories are refused before OUT exists, and host
folder names from anywhere never escape OUT."""

from __future__ import annotations

import io
import json
import os
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.errors import InputError
from aifabric.probe.bundle import MANIFEST, host_dirname, read_bundle
from aifabric.probe.merge import merge_bundles, read_expect
from tests.conftest import run_cli


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


@pytest.fixture(scope="module")
def parts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two archives made by the real probe: a1 = {nodeA}, a2 = {nodeA (later), nodeB}."""
    base = tmp_path_factory.mktemp("parts")
    r = run_cli("probe", "--local", "--name", "nodeA", "--tar", "-o", str(base / "a1"))
    assert r.code == 0, r.err
    r = run_cli("probe", "--local", "--name", "nodeA", "-o", str(base / "a2"))
    assert r.code == 0, r.err
    r = run_cli("probe", "--local", "--name", "nodeB", "--tar", "-o", str(base / "a2"))
    assert r.code == 0, r.err
    return {"a1": base / "a1.tar.gz", "a2": base / "a2.tar.gz", "a2dir": base / "a2"}


def _manifest(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((path / MANIFEST).read_text())
    return doc


@pytest.mark.parametrize("order", [("a1", "a2"), ("a2", "a1")])
def test_two_archives_one_duplicate_newer_wins(
    parts: dict[str, Path], tmp_path: Path, order: tuple[str, str]
) -> None:
    out = tmp_path / "merged"
    res = merge_bundles([parts[order[0]], parts[order[1]]], out)
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST, "nodeA", "nodeB"]
    # nodeA comes from a2 (probed later) whatever the order; files verbatim
    ref = read_bundle(parts["a2"], tmp_path / "ref")
    assert _files(out / "nodeA") == _files(ref / "nodeA")
    assert _files(out / "nodeB") == _files(ref / "nodeB")
    assert len(_files(out / "nodeA")) >= 5
    assert [d["host"] for d in res.duplicates] == ["nodeA"]
    dup = res.duplicates[0]
    assert dup["kept"] == str(parts["a2"]) and dup["dropped"] == str(parts["a1"])
    assert dup["kept_written"] > dup["dropped_written"]
    assert any("nodeA" in w and "newer" in w for w in res.warnings)
    man = _manifest(out)
    a2 = _manifest(ref)
    assert man["format"] == a2["format"] == "aifabric-probe-bundle/1"
    assert sorted(man["hosts"]) == ["nodeA", "nodeB"]
    assert man["hosts"]["nodeA"]["source"] == str(parts["a2"])
    assert man["hosts"]["nodeA"]["captures"] == a2["hosts"]["nodeA"]["captures"]
    assert man["hosts"]["nodeA"]["written"] == a2["hosts"]["nodeA"]["written"]
    assert man["duplicates"] == res.duplicates and man["missing"] == []
    assert man["merged_from"] == [str(parts[k]) for k in order]
    assert [(h["host"], h["status"]) for h in res.hosts] == [("nodeA", "ok"), ("nodeB", "ok")]
    assert not list(tmp_path.glob(".merged.merging-*"))  # staging renamed into place


def test_expect_lists_missing_hosts(parts: dict[str, Path], tmp_path: Path) -> None:
    exp = tmp_path / "nodes.txt"
    exp.write_text("# the allocation\nnodeA\nroot@nodeB:22\n\nnodeC\nnodeC\n")
    expected = read_expect(exp)
    res = merge_bundles([parts["a2dir"]], tmp_path / "m", expected)
    assert res.missing == ["nodeC"]  # nodeB found by its bare name, nodeC once
    rows = {h["host"]: h for h in res.hosts}
    assert rows["nodeC"]["status"] == "missing" and rows["nodeC"]["ok"] is False
    assert rows["nodeA"]["status"] == "ok" and rows["nodeA"]["source"] == str(parts["a2dir"])
    man = _manifest(tmp_path / "m")
    assert man["missing"] == [{"host": "nodeC", "status": "missing",
                               "error": "no folder in any input"}]
    assert "nodeC" not in man["hosts"] and not (tmp_path / "m" / "nodeC").exists()


def test_cli_merge_json_and_exit_codes(parts: dict[str, Path], tmp_path: Path) -> None:
    exp = tmp_path / "nodes.txt"
    exp.write_text("nodeA\nnodeB\nnodeC\n")
    out = tmp_path / "merged"
    r = run_cli("probe", "--merge", str(parts["a1"]), str(parts["a2"]), "--expect", str(exp),
                "-o", str(out), "--tar", "-F", "json")
    assert r.code == 1, r.err  # nodeC missing
    doc = r.json()
    assert {"hosts", "bundle", "missing", "duplicates"} <= set(doc)
    assert doc["missing"] == ["nodeC"] and doc["bundle"] == str(out)
    assert [d["host"] for d in doc["duplicates"]] == ["nodeA"]
    assert [(h["host"], h["status"]) for h in doc["hosts"]] == [
        ("nodeA", "ok"), ("nodeB", "ok"), ("nodeC", "missing")]
    assert doc["tarball"] == str(tmp_path / "merged.tar.gz")
    back = read_bundle(tmp_path / "merged.tar.gz", tmp_path / "back")
    assert _files(back) == _files(out)
    # all expected there: exit 0; the merged bundle is itself an input (re-merge)
    exp.write_text("nodeA\nnodeB\n")
    r = run_cli("probe", "--merge", str(out), "--expect", str(exp), "-o", str(tmp_path / "m2"))
    assert r.code == 0, r.err
    assert "merged 2 hosts from 1 inputs, 0 missing" in r.out
    # the readers take it
    d = run_cli("diagnose", str(tmp_path / "m2"), "-F", "json")
    assert d.code in (0, 1), d.err
    subjects = {i["subject"] for i in d.json()["inputs"]}
    assert subjects == {"nodeA", "nodeB"}  # manifest.json is not read as evidence


@pytest.mark.parametrize(
    "args",
    [
        ["--merge"],
        ["--merge", "{junk}"],
        ["--merge", "{nodir}"],
        ["--merge", "{plain}"],
        ["--merge", "{a2}", "-o", "{full}"],
        ["--merge", "{a2}", "--expect", "{badexpect}"],
        ["--merge", "{a2}", "--local"],
        ["--expect", "{badexpect}", "--local"],
        ["--name", "x", "127.0.0.1"],
    ],
    ids=["no-inputs", "not-an-archive", "missing", "dir-without-manifest", "out-not-empty",
         "bad-expect-line", "merge-and-local", "expect-without-merge", "name-without-local"],
)
def test_cli_bad_input_one_line_exit_2(
    parts: dict[str, Path], tmp_path: Path, args: list[str]
) -> None:
    (tmp_path / "junk.tar.gz").write_bytes(b"not a tar")
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "notes.txt").write_text("x\n")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x\n")
    (tmp_path / "bad.txt").write_text("ok\n-rf\n")
    names = {"junk": tmp_path / "junk.tar.gz", "nodir": tmp_path / "nope", "plain":
             tmp_path / "plain", "full": tmp_path / "full", "a2": parts["a2"],
             "badexpect": tmp_path / "bad.txt"}
    argv = [a.format(**names) for a in args]
    if "-o" not in argv:
        argv += ["-o", str(tmp_path / "out")]
    r = run_cli("probe", *argv)
    assert r.code == 2, (r.code, r.err)
    assert r.err.startswith("aifabric: error: ") and r.err.count("\n") == 1, r.err
    assert not (tmp_path / "out").exists()
    assert not list(tmp_path.glob(".*merging*"))


def _tar(path: Path, members: list[tuple[str, bytes, str]]) -> Path:
    """An archive of (name, data, kind) members; kind file, dir, symlink, hardlink."""
    with tarfile.open(path, "w:gz") as tar:
        for name, data, kind in members:
            info = tarfile.TarInfo(name)
            if kind == "dir":
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif kind in ("symlink", "hardlink"):
                info.type = tarfile.SYMTYPE if kind == "symlink" else tarfile.LNKTYPE
                info.linkname = data.decode()
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return path


_MANIFEST = json.dumps({"format": "aifabric-probe-bundle/1", "created": 1.0,
                        "hosts": {"h1": {"dir": "h1", "host": "h1", "written": 2.0}}}).encode()


@pytest.mark.parametrize(
    "bad",
    [("b/../../evil.txt", b"x", "file"), ("/tmp/evil-abs.txt", b"x", "file"),
     ("b/h1/link", b"/etc/passwd", "symlink"), ("b/h1/hard", b"b/manifest.json", "hardlink")],
    ids=["dotdot", "absolute", "symlink", "hardlink"],
)
def test_hostile_archive_refused_nothing_written(
    parts: dict[str, Path], tmp_path: Path, bad: tuple[str, bytes, str]
) -> None:
    tgz = _tar(tmp_path / "evil.tar.gz", [("b/manifest.json", _MANIFEST, "file"),
                                           ("b/h1/ip-link.txt", b"x\n", "file"), bad])
    out = tmp_path / "work" / "out"
    with pytest.raises(InputError) as err:
        merge_bundles([parts["a1"], tgz], out)
    assert "\n" not in str(err.value)
    assert not out.exists() and list((tmp_path / "work").iterdir()) == []
    assert not (tmp_path / "evil.txt").exists() and not Path("/tmp/evil-abs.txt").exists()


def test_directory_input_with_symlink_refused(tmp_path: Path) -> None:
    b = tmp_path / "b"
    (b / "h1").mkdir(parents=True)
    (b / MANIFEST).write_bytes(_MANIFEST)
    (b / "h1" / "ip-link.txt").write_text("x\n")
    os.symlink("/etc/passwd", b / "h1" / "passwd")
    with pytest.raises(InputError, match="not a regular file"):
        merge_bundles([b], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_odd_inputs_are_warnings_not_losses(tmp_path: Path) -> None:
    b = tmp_path / "b"
    (b / ".hidden").mkdir(parents=True)
    (b / ".hidden" / "ip-link.txt").write_text("verbatim\r\n")
    (b / "unlisted").mkdir()
    (b / "unlisted" / "sysctl.txt").write_text("net.ipv4.tcp_ecn = 1\n")
    (b / "README").write_text("top-level file\n")
    (b / MANIFEST).write_text(json.dumps({
        "format": "aifabric-probe-bundle/1", "created": 5.0,
        "hosts": {
            ".hidden": {"dir": ".hidden", "host": ".hidden", "written": 6.0, "captures": [
                {"name": "ip-link.txt", "file": ".hidden/ip-link.txt"}]},
            "gone": {"dir": "gone", "host": "gone", "written": 6.0, "captures": [
                {"name": "lspci.txt", "file": None, "error": "not available here: lspci"}]},
        },
    }))
    calls: list[tuple[int, int, str]] = []
    res = merge_bundles([b], tmp_path / "out", progress=lambda *a: calls.append(a))
    out = tmp_path / "out"
    assert calls == [(1, 1, "b")]
    assert (out / "hidden" / "ip-link.txt").read_bytes() == b"verbatim\r\n"
    assert (out / "unlisted" / "sysctl.txt").read_text() == "net.ipv4.tcp_ecn = 1\n"
    assert not (out / "README").exists()
    man = _manifest(out)
    assert man["hosts"]["hidden"]["captures"][0]["file"] == "hidden/ip-link.txt"
    assert man["hosts"]["hidden"]["host"] == ".hidden"
    assert man["hosts"]["unlisted"] == {"host": "unlisted", "dir": "unlisted",
                                        "source": str(b), "source_created": 5.0}
    assert [e["host"] for e in man["without_folder"]] == ["gone"]
    assert man["without_folder"][0]["captures"][0]["error"] == "not available here: lspci"
    text = "\n".join(res.warnings)
    for bit in ("'README' is not a host folder", "'.hidden' written as 'hidden'",
                "'unlisted' is not in its manifest.json", "lists 'gone' without a folder"):
        assert bit in text


_NAME = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"),
    min_size=1, max_size=40,
).filter(lambda s: s not in (".", "..", MANIFEST))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(_NAME, min_size=1, max_size=5), expect=st.lists(_NAME, max_size=4),
       use_tar=st.booleans())
def test_hostile_host_names_never_escape(names: list[str], expect: list[str],
                                         use_tar: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        b = base / "in" / "b"
        b.mkdir(parents=True)
        hosts: dict[str, Any] = {}
        for name in names:
            try:
                (b / name).mkdir(exist_ok=True)
                (b / name / "ip-link.txt").write_bytes(name.encode("utf-8", "surrogateescape"))
            except (OSError, UnicodeEncodeError):
                continue  # a name this file system refuses cannot come from a directory
            hosts[name] = {"dir": "../../" + name, "host": name, "written": 1.0,
                           "captures": [{"file": f"../{name}/ip-link.txt"}]}
        (b / MANIFEST).write_text(json.dumps({"created": 1.0, "hosts": hosts}))
        src = b
        if use_tar:
            src = base / "in" / "b.tar.gz"
            with tarfile.open(src, "w:gz") as tar:
                tar.add(b, arcname="b")
        out = base / "out" / "merged"
        try:
            res = merge_bundles([src], out, [e for e in expect if e.strip()])
        except InputError:
            # read_bundle refuses some member names outright (a backslash): then nothing
            assert use_tar and any("\\" in n for n in hosts)
            assert not out.exists() and list((base / "out").iterdir()) == []
            return
        root = out.resolve()
        for p in (base / "out").rglob("*"):
            assert root in p.resolve().parents or p.resolve() == root
        folders = [p.name for p in out.iterdir() if p.is_dir()]
        assert all(host_dirname(f) == f for f in folders)
        assert sorted(folders) == sorted({host_dirname(n) for n in hosts})
        man = _manifest(out)
        assert sorted(man["hosts"]) == sorted(folders)
        assert all(e["dir"] == k for k, e in man["hosts"].items())
        assert len(res.missing) <= len(expect)
        assert not (base / "in" / "ip-link.txt").exists()
