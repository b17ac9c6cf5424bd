"""Merge per-host probe bundles (one per node from a Slurm job or a Kubernetes DaemonSet) into
one bundle ``OUT/<host>/<captures>`` + ``OUT/manifest.json`` that ``aifabric diagnose OUT`` and
``aifabric verify --bundle OUT`` read.

Inputs are bundle directories or ``.tar.gz`` archives of them (unpacked with
:func:`aifabric.probe.bundle.read_bundle`, which refuses links, devices, absolute and ``..``
paths). A directory input is walked without following links; a link, device or FIFO in it
refuses the merge too. An input without a readable ``manifest.json`` holding a ``hosts``
object is not a bundle: :class:`~aifabric.errors.InputError`, nothing is written.

Nothing is lost and nothing is dropped silently:

* every host folder of every input is copied verbatim (bytes and mtimes) into ``OUT/<dir>/``;
  a folder name that :func:`~aifabric.probe.bundle.host_dirname` would change (a hostile or
  odd name from an archive) is written under the safe name and the change is a warning;
* the same folder in two inputs: the newer one wins (the host entry's ``written`` time, else
  the input manifest's ``updated`` / ``created``; a tie keeps the earlier input) and the
  dropped copy is a row in ``duplicates`` (manifest and result);
* ``expect`` (hosts file lines, ``[user@]host[:port]``): every expected host without a folder
  is a ``missing`` row; a host is found by its folder name, the ``host`` its entry records,
  or the bare host name of the line;
* files at the top of an input other than ``manifest.json`` are not host evidence and are not
  copied: each is a warning naming it; a manifest entry without a folder is kept (its failed
  captures are evidence) under ``without_folder`` with a warning.

The merged ``manifest.json`` has the format of a sweep's (``format``, ``aifabric_version``,
``created``, ``updated``, ``hosts`` keyed by folder) plus ``source`` and ``source_created``
in each host entry, and top-level ``merged_from``, ``missing``, ``duplicates``,
``warnings`` and ``without_folder``. The merge is built in ``.OUT.merging-PID`` beside
``OUT`` and renamed into place at the end, so ``OUT`` either holds a whole merge or
nothing (``OUT`` must not exist or be an empty directory).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tarfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aifabric import __version__
from aifabric.errors import EnvironmentProblem, InputError
from aifabric.probe.bundle import BUNDLE_FORMAT, MANIFEST, host_dirname, read_bundle, write_tar
from aifabric.probe.fanout import TargetError, read_hosts_file

__all__ = ["MergeResult", "merge_bundles", "read_expect"]

MergeProgress = Callable[[int, int, str], None]
"""``progress(done, total, input_name)``: called once per input when it has been merged."""


@dataclass
class MergeResult:
    """What :func:`merge_bundles` did. ``hosts``: one row per folder written (``status``
    ``ok``) and per expected host not found (``status`` ``missing``), sorted by ``host``;
    ``duplicates``: one row per dropped copy; ``warnings``: one line each."""

    bundle: Path
    hosts: list[dict[str, Any]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    duplicates: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    without_folder: list[dict[str, Any]] = field(default_factory=list)
    tarball: Path | None = None
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "hosts": self.hosts,
            "bundle": str(self.bundle),
            "tarball": str(self.tarball) if self.tarball else None,
            "missing": self.missing,
            "duplicates": self.duplicates,
            "warnings": self.warnings,
            "inputs": self.inputs,
            "seconds": round(self.seconds, 2),
        }


def read_expect(path: Path) -> list[str]:
    """The host specs of a hosts file (``#`` comments, blank lines skipped); a bad line is an
    :class:`InputError` naming it."""
    try:
        return [t.spec for t in read_hosts_file(path)]
    except OSError as exc:
        raise InputError(f"--expect {path}: {exc.strerror or exc}") from None
    except TargetError as exc:
        raise InputError(f"--expect {path}: {exc}") from None


def _manifest(bundle: Path, label: str) -> dict[str, Any]:
    """The input's manifest, or InputError: an input without one is not a bundle."""
    mpath = bundle / MANIFEST
    try:
        st = mpath.lstat()
    except OSError:
        raise InputError(f"{label}: not a probe bundle (no {MANIFEST})") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{label}: not a probe bundle ({MANIFEST} is not a regular file)")
    try:
        doc = json.loads(mpath.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{label}: not a probe bundle ({MANIFEST} unreadable: {exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("hosts"), dict):
        raise InputError(f"{label}: not a probe bundle ({MANIFEST} has no hosts object)")
    return doc


def _check_tree(root: Path, label: str) -> None:
    """Refuse links, devices, FIFOs and sockets anywhere under ``root`` (a directory input;
    an archive was checked by read_bundle)."""
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in [*dirnames, *filenames]:
            mode = os.lstat(os.path.join(dirpath, name)).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                rel = os.path.relpath(os.path.join(dirpath, name), root)
                raise InputError(f"{label}: {rel!r} is not a regular file or directory")


def _unpack(path: Path, dest: Path, label: str) -> Path:
    """read_bundle of an archive input, its refusal as one line."""
    if not path.is_file():
        raise InputError(f"{label}: no such bundle directory or archive")
    try:
        readable = tarfile.is_tarfile(path)
    except OSError as exc:
        raise InputError(f"{label}: cannot read: {exc.strerror or exc}") from None
    if not readable:
        raise InputError(f"{label}: not a bundle directory or .tar.gz archive")
    try:
        return read_bundle(path, dest)
    except InputError as exc:
        raise InputError(" ".join(str(exc).split())) from None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _entry_time(entry: Any, manifest: dict[str, Any]) -> float | None:
    """When this host's capture was written: the entry's ``written``, else the manifest's
    ``updated`` or ``created``; None when none is a number."""
    if isinstance(entry, dict) and (t := _number(entry.get("written"))) is not None:
        return t
    for key in ("updated", "created"):
        if (t := _number(manifest.get(key))) is not None:
            return t
    return None


def _later(t: float | None, old: float | None) -> bool:
    """Whether a copy written at ``t`` replaces one written at ``old`` (unknown is oldest;
    a tie keeps the copy given first)."""
    return (t if t is not None else float("-inf")) > (old if old is not None else float("-inf"))


def _copy_tree(src: Path, dst: Path, move: bool) -> None:
    """Copy (or, for our own unpacked copy, move) one host folder; files verbatim."""
    if move:
        os.replace(src, dst)
        return
    shutil.copytree(src, dst, symlinks=True, copy_function=shutil.copy2)


def _rewrite_entry(entry: Any, old: str, new: str, source: str,
                   created: float | None) -> dict[str, Any]:
    """The host entry for the merged manifest: a copy with ``dir``, ``source`` and
    ``source_created`` set and capture ``file`` paths moved to the new folder name."""
    out: dict[str, Any] = dict(entry) if isinstance(entry, dict) else {"host": old}
    out["dir"] = new
    out["source"] = source
    out["source_created"] = created
    if old != new and isinstance(out.get("captures"), list):
        caps: list[Any] = []
        for cap in out["captures"]:
            moved = cap
            if isinstance(cap, dict) and isinstance(cap.get("file"), str) and (
                cap["file"].startswith(old + "/")
            ):
                moved = {**cap, "file": new + cap["file"][len(old):]}
            caps.append(moved)
        out["captures"] = caps
    return out


def _found(expected: str, folders: dict[str, dict[str, Any]]) -> bool:
    """Whether an expected host spec has a folder: by folder name, recorded host, or the
    bare host of ``[user@]host[:port]``."""
    bare = expected.rpartition("@")[2]
    if bare.startswith("["):
        bare = bare[1:].partition("]")[0]
    elif bare.count(":") == 1:
        bare = bare.partition(":")[0]
    names = {expected, bare, host_dirname(expected), host_dirname(bare)}
    if names & folders.keys():
        return True
    return any(isinstance(e.get("host"), str) and e["host"] in names for e in folders.values())


def merge_bundles(
    inputs: Sequence[Path],
    out: Path,
    expect: Sequence[str] | None = None,
    *,
    tarball: bool = False,
    progress: MergeProgress | None = None,
) -> MergeResult:
    """Merge ``inputs`` (bundle directories or ``.tar.gz``) into ``out`` (see the module
    docstring). Raises :class:`InputError` for an input that is not a safe bundle, an
    ``out`` that is not empty or lies inside an input (or an input inside ``out``), and for
    no inputs; :class:`EnvironmentProblem` when OUT cannot be written; everything else
    (duplicates, missing hosts, odd names) is a row or a warning."""
    t0 = time.monotonic()
    if not inputs:
        raise InputError("--merge: no bundles given")
    out = out.absolute()
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise InputError(f"{out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()):
        raise InputError(f"{out}: not empty; merge into a new directory")
    for path in inputs:
        p = path.absolute()
        if p == out or out in p.parents or p in out.parents:
            raise InputError(f"{path}: input and output overlap")
    stage = out.parent / f".{out.name}.merging-{os.getpid()}"
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        if stage.exists():
            shutil.rmtree(stage)
        stage.mkdir()
    except OSError as exc:
        raise EnvironmentProblem(f"{out}: cannot write: {exc.strerror or exc}") from None
    result = MergeResult(bundle=out, inputs=[str(p) for p in inputs])
    try:
        entries, when = _merge_into(stage, inputs, result, progress)
        folders = {d: entries[d] for d in sorted(entries)}
        for d, entry in folders.items():
            result.hosts.append({
                "host": d, "name": entry.get("host", d), "ok": True, "status": "ok",
                "source": entry.get("source"), "written": when.get(d), "error": None,
            })
        for spec in dict.fromkeys(expect or []):
            if not _found(spec, folders):
                result.missing.append(spec)
                result.hosts.append({
                    "host": spec, "name": spec, "ok": False, "status": "missing",
                    "source": None, "written": None, "error": "no folder in any input",
                })
        result.hosts.sort(key=lambda r: (str(r["host"]), r["status"]))
        now = time.time()
        manifest = {
            "format": BUNDLE_FORMAT,
            "aifabric_version": __version__,
            "created": now,
            "updated": now,
            "hosts": folders,
            "merged_from": result.inputs,
            "missing": [{"host": h, "status": "missing", "error": "no folder in any input"}
                        for h in result.missing],
            "duplicates": result.duplicates,
            "warnings": result.warnings,
            "without_folder": result.without_folder,
        }
        (stage / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n",
                                      encoding="utf-8")
        if out.is_dir():
            out.rmdir()  # empty (checked above)
        os.replace(stage, out)
    except OSError as exc:
        shutil.rmtree(stage, ignore_errors=True)
        raise EnvironmentProblem(f"merging into {out}: {exc.strerror or exc}"
                                 f"{': ' + str(exc.filename) if exc.filename else ''}") from None
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    if tarball:
        try:
            result.tarball = write_tar(out)
        except OSError as exc:
            raise EnvironmentProblem(f"{out}.tar.gz: cannot write: {exc.strerror or exc}"
                                     ) from None
    result.seconds = time.monotonic() - t0
    return result


def _merge_into(
    stage: Path, inputs: Sequence[Path], result: MergeResult,
    progress: MergeProgress | None,
) -> tuple[dict[str, dict[str, Any]], dict[str, float | None]]:
    """Copy every input's host folders into ``stage``; returns the merged host entries and
    the time each kept folder was written."""
    entries: dict[str, dict[str, Any]] = {}
    when: dict[str, float | None] = {}
    scratch = stage / ".unpack"
    for index, path in enumerate(inputs):
        label = str(path)
        unpacked = not path.is_dir()
        if unpacked:
            root = _unpack(path, scratch / str(index), label)
        else:
            root = path
            if path.is_symlink():
                root = path.resolve()
            _check_tree(root, label)
        manifest = _manifest(root, label)
        created = _number(manifest.get("created"))
        listed: dict[str, Any] = manifest["hosts"]
        seen_here: set[str] = set()
        folders_here: set[str] = set()
        for child in sorted(root.iterdir(), key=lambda p: p.name):
            if child.name == MANIFEST:
                continue
            if not child.is_dir():
                result.warnings.append(f"{label}: {child.name!r} is not a host folder; "
                                       "not copied")
                continue
            folders_here.add(child.name)
            safe = host_dirname(child.name)
            entry = listed.get(child.name)
            if entry is None:
                result.warnings.append(f"{label}: folder {child.name!r} is not in its "
                                       f"{MANIFEST}; copied without an entry")
            if safe != child.name:
                result.warnings.append(f"{label}: folder {child.name!r} written as {safe!r}")
            if safe in seen_here:
                result.warnings.append(f"{label}: folder {child.name!r} clashes with another "
                                       f"folder named {safe!r} in the same input; not copied")
                continue
            seen_here.add(safe)
            t = _entry_time(entry, manifest)
            new_entry = _rewrite_entry(entry, child.name, safe, label, created)
            if safe in entries:
                old_t = when[safe]
                newer = _later(t, old_t)
                old_src = str(entries[safe]["source"])
                kept, dropped = (label, old_src) if newer else (old_src, label)
                result.duplicates.append({
                    "host": safe, "kept": kept, "dropped": dropped,
                    "kept_written": t if newer else old_t,
                    "dropped_written": old_t if newer else t,
                })
                why = "given first, same time" if t == old_t else "newer"
                result.warnings.append(f"{safe}: in {old_src} and {label}; kept {kept} ({why})")
                if not newer:
                    continue
                shutil.rmtree(stage / safe)
            _copy_tree(child, stage / safe, move=unpacked)
            entries[safe] = new_entry
            when[safe] = t
        for name, entry in listed.items():
            if name not in folders_here:
                result.warnings.append(f"{label}: {MANIFEST} lists {name!r} without a "
                                       "folder; entry kept under without_folder")
                result.without_folder.append(
                    _rewrite_entry(entry, name, host_dirname(name), label, created))
        if unpacked:
            shutil.rmtree(scratch / str(index), ignore_errors=True)
        if progress is not None:
            progress(index + 1, len(inputs), path.name)
    if scratch.exists():
        shutil.rmtree(scratch)
    return entries, when
