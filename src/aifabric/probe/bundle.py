"""A probe bundle on disk: ``DIR/<host>/<capture>`` files that ``aifabric diagnose DIR`` and
``aifabric verify --bundle DIR`` read, plus ``DIR/manifest.json``.

Layout written by :func:`write_host`:

* ``DIR/<host>/<name>``: a capture's stdout, verbatim (written when it printed anything);
* ``DIR/<host>/<name>.json``: the parsed records (``kind``, ``records``, ``warnings``, the
  JSON form of ``aifabric parse``) when an evidence parser recognises the output. The readers
  skip such a companion of a raw file (:func:`aifabric.inputs.is_parsed_companion`) and
  re-parse the raw output, so nothing is read twice;
* ``DIR/<host>/.<name>``: a capture the probe ran for itself (:data:`PROBE_ONLY`: ``ip -d -j
  link show``, whose interfaces ``ip-link.txt`` already gives the readers, and the RDMA device
  listing). Both readers skip dot files, so ``diagnose`` and ``verify --bundle`` see one
  ``ip_link`` record per interface, not two; the manifest names the file;
* ``DIR/manifest.json``: per host, every command (argv, rc, seconds, error, started, stderr,
  the file written and its detected kind), tool versions found in the captures (kernel, NIC
  driver and firmware, HCA firmware), the aifabric version and the times. Nothing collected is
  dropped: a capture that failed keeps its stderr here.

Host directory names come from inventories and may be hostile: :func:`host_dirname` keeps
``[A-Za-z0-9_.:@-]``, replaces the rest with ``_`` and strips leading dots, so no name
escapes the bundle or hides from the readers. :func:`write_tar` packs a bundle as
``DIR.tar.gz``; :func:`read_bundle` accepts a directory or such an archive and extracts only
regular files and directories that stay inside the target (links, devices, absolute or ``..``
paths refuse the whole archive with an :class:`~aifabric.errors.InputError`).
"""

from __future__ import annotations

import json
import os
import re
import tarfile
import tempfile
import time
from pathlib import Path, PurePosixPath
from typing import Any

from aifabric import __version__
from aifabric.errors import InputError
from aifabric.evidence import parse_text
from aifabric.probe.collectors import Capture

__all__ = [
    "BUNDLE_FORMAT",
    "MANIFEST",
    "MAX_TAR_BYTES",
    "MAX_TAR_MEMBERS",
    "PROBE_ONLY",
    "host_dirname",
    "read_bundle",
    "stored_name",
    "write_host",
    "write_tar",
]

BUNDLE_FORMAT = "aifabric-probe-bundle/1"
MANIFEST = "manifest.json"
MAX_TAR_MEMBERS = 100_000
"""Members an archive may hold at most."""
MAX_TAR_BYTES = 4 << 30
"""Total bytes of regular files an archive may unpack to at most."""

PROBE_ONLY = frozenset({"ip-j-link.json", "rdma-devices.txt"})
"""Captures the probe runs to decide what else to run; stored as dot files the readers skip
(``ip-j-link.json`` holds the same interfaces as ``ip-link.txt``: read both and every
interface would be counted twice)."""

_UNSAFE_RE = re.compile(r"[^A-Za-z0-9_.:@-]")
_NAMED_KINDS = {"nccl.conf": "nccl-env"}
"""Files the readers recognise by name rather than by content."""
_VERSION_KEYS = {
    "ethtool-i-": ("driver", "version", "firmware-version"),
}
_IBV_FW_RE = re.compile(r"^\s*(hca_id|fw_ver):\s*(\S+)", re.MULTILINE)


def host_dirname(host: str) -> str:
    """A safe single path component for ``host``: unsafe characters become ``_``, leading dots
    and dashes go, at most 100 characters; ``_`` when nothing is left."""
    name = _UNSAFE_RE.sub("_", host).lstrip(".-")[:100]
    return name or "_"


def _safe_file(name: str) -> str:
    # a capture name is one component too; collectors make safe names but callers may not
    return host_dirname(name)


def stored_name(capture: str) -> str:
    """The file name a capture is written under in its host directory: the safe form of its
    name, with a leading dot for :data:`PROBE_ONLY` captures (kept, but not read)."""
    safe = _safe_file(capture)
    return f".{safe}" if capture in PROBE_ONLY else safe


def _parse(name: str, text: str) -> dict[str, Any] | None:
    """The parsed JSON form of a capture, or None when no parser recognises it."""
    if not text.strip():
        return None
    try:
        result = parse_text(text, _NAMED_KINDS.get(name), name)
    except (InputError, RecursionError):
        return None
    return result.to_json()


def _versions(captures: list[Capture]) -> dict[str, Any]:
    """Tool and firmware versions the captures state."""
    out: dict[str, Any] = {}
    for cap in captures:
        if cap.error is not None and not cap.stdout:
            continue
        if cap.name == "uname-r.txt" and cap.stdout.strip():
            out["kernel"] = cap.stdout.strip().splitlines()[0][:100]
        elif cap.name.startswith("ethtool-i-"):
            iface = cap.name[len("ethtool-i-") :].removesuffix(".txt")
            fields: dict[str, str] = {}
            for line in cap.stdout.splitlines():
                key, sep, value = line.partition(":")
                if sep and key.strip() in _VERSION_KEYS["ethtool-i-"] and value.strip():
                    fields[key.strip()] = value.strip()[:100]
            if fields:
                out.setdefault("nics", {})[iface] = fields
        elif cap.name == "ibv_devinfo.txt":
            hca: str | None = None
            for key, value in _IBV_FW_RE.findall(cap.stdout):
                if key == "hca_id":
                    hca = value[:100]
                elif hca is not None:
                    out.setdefault("hcas", {})[hca] = {"fw_ver": value[:100]}
    return out


def _write_json(path: Path, data: Any) -> None:
    """Write atomically: a reader never sees half a manifest."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _load_manifest(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        doc = None
    if not isinstance(doc, dict) or not isinstance(doc.get("hosts"), dict):
        return {"format": BUNDLE_FORMAT, "created": time.time(), "hosts": {}}
    return doc


def write_host(bundle_dir: Path, host: str, captures: list[Capture]) -> dict[str, Any]:
    """Write ``captures`` of ``host`` under ``bundle_dir`` and update ``manifest.json``;
    returns this host's manifest entry (``dir``, ``host``, ``captures``, ``versions``,
    ``written``). A host written twice replaces its earlier entry and files of the same name."""
    bundle_dir.mkdir(parents=True, exist_ok=True)
    dirname = host_dirname(host)
    hdir = bundle_dir / dirname
    hdir.mkdir(exist_ok=True)
    entries: list[dict[str, Any]] = []
    for cap in captures:
        fname = _safe_file(cap.name)
        entry: dict[str, Any] = {
            "name": cap.name,
            "argv": list(cap.argv),
            "rc": cap.rc,
            "seconds": round(cap.seconds, 4),
            "error": cap.error,
            "started": cap.started,
            "stderr": cap.stderr,
            "file": None,
            "kind": None,
            "warnings": 0,
        }
        if cap.stdout:
            stored = stored_name(cap.name)
            (hdir / stored).write_text(cap.stdout, encoding="utf-8", newline="")
            entry["file"] = f"{dirname}/{stored}"
            parsed = None if cap.name in PROBE_ONLY else _parse(fname, cap.stdout)
            if parsed is not None:
                _write_json(hdir / f"{fname}.json", parsed)
                entry["kind"] = parsed["kind"]
                entry["warnings"] = len(parsed["warnings"])
        entries.append(entry)
    starts = [c.started for c in captures]
    host_entry: dict[str, Any] = {
        "dir": dirname,
        "host": host,
        "captures": entries,
        "versions": _versions(captures),
        "started": min(starts) if starts else None,
        "written": time.time(),
    }
    mpath = bundle_dir / MANIFEST
    manifest = _load_manifest(mpath)
    manifest["format"] = BUNDLE_FORMAT
    manifest["aifabric_version"] = __version__
    manifest["updated"] = host_entry["written"]
    manifest["hosts"][dirname] = host_entry
    _write_json(mpath, manifest)
    return host_entry


def write_tar(bundle_dir: Path) -> Path:
    """Pack ``bundle_dir`` as ``<bundle_dir>.tar.gz`` (members under the directory's name;
    regular files and directories only) and return the archive's path."""
    bundle_dir = bundle_dir.resolve()
    out = bundle_dir.with_name(bundle_dir.name + ".tar.gz")

    def only_plain(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        if not (info.isfile() or info.isdir()):
            return None
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        return info

    with tarfile.open(out, "w:gz") as tar:
        tar.add(bundle_dir, arcname=bundle_dir.name, filter=only_plain)
    return out


def _check_member(info: tarfile.TarInfo, dest: Path) -> None:
    if not (info.isfile() or info.isdir()):
        raise InputError(f"bundle member {info.name!r}: not a regular file or directory")
    p = PurePosixPath(info.name)
    if p.is_absolute() or ".." in p.parts or "\\" in info.name or "\x00" in info.name:
        raise InputError(f"bundle member {info.name!r}: path escapes the bundle")
    target = (dest / p).resolve()
    if target != dest and dest not in target.parents:
        raise InputError(f"bundle member {info.name!r}: path escapes the bundle")


def read_bundle(path: Path, dest: Path | None = None) -> Path:
    """The bundle directory of ``path``: a directory as is, or a ``.tar.gz`` unpacked into
    ``dest`` (a new temporary directory when None). Every member is checked before anything
    is written; an unsafe one refuses the archive (:class:`InputError`). Returns the directory
    holding ``manifest.json`` (the archive's single top directory when it has one)."""
    if path.is_dir():
        return path
    if not path.is_file():
        raise InputError(f"{path}: no such bundle")
    dest = Path(tempfile.mkdtemp(prefix="aifabric-bundle-")) if dest is None else dest
    dest.mkdir(parents=True, exist_ok=True)
    dest = dest.resolve()
    try:
        with tarfile.open(path, "r:*") as tar:
            members = tar.getmembers()
            if len(members) > MAX_TAR_MEMBERS:
                raise InputError(f"{path}: more than {MAX_TAR_MEMBERS} members")
            total = 0
            for info in members:
                _check_member(info, dest)
                total += info.size if info.isfile() else 0
            if total > MAX_TAR_BYTES:
                raise InputError(f"{path}: unpacks to more than {MAX_TAR_BYTES} bytes")
            for info in members:
                target = dest / info.name
                if info.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                src = tar.extractfile(info)
                if src is None:
                    raise InputError(f"bundle member {info.name!r}: cannot be read")
                with src, target.open("wb") as fh:
                    while chunk := src.read(1 << 20):
                        fh.write(chunk)
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise InputError(f"{path}: not a readable bundle archive: {exc}") from exc
    tops = [p for p in dest.iterdir() if p.is_dir()]
    if not (dest / MANIFEST).exists() and len(tops) == 1 and (tops[0] / MANIFEST).exists():
        return tops[0]
    return dest
