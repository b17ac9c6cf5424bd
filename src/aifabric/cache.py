"""A per-user cache of data aifabric derives from its own packaged files.

Loading the signature catalogues (``checks/signatures/*.yaml``: some 4,000 entries) means
parsing YAML, validating every entry (its pattern compiled and tried on its examples, its anchor
word checked) and analysing every pattern for the index (required words and literals). That
is about 2.5 s of a 3 s ``aifabric diagnose`` of one small file, and the answer only changes
when the package does. :func:`cached` keeps the result in a file named by a SHA-256 of
everything it depends on (the files' bytes, the modules defining its types, the versions of
aifabric, Python and pydantic), so a changed catalogue or upgraded package is a new key, never a
stale answer.

Where: ``$AIFABRIC_CACHE_DIR``, else ``$XDG_CACHE_HOME/aifabric``, else ``~/.cache/aifabric``.
``AIFABRIC_CACHE_DIR=off`` (or empty) turns the cache off. The files are pickles, so they are
only read from a directory owned by the current user and writable by nobody else, and only
when the file itself is the user's; anything else (a read-only home, a foreign or shared
directory, a corrupt or truncated file, a concurrent writer) means computing the value again,
never an error. Writes go to a temporary file renamed into place, so readers see a whole file
or none; older files of the same name are removed.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

import pydantic

from aifabric import __version__

__all__ = ["CACHE_ENV", "cache_dir", "cached"]

CACHE_ENV = "AIFABRIC_CACHE_DIR"
"""Environment variable naming the cache directory (``off`` or empty: no cache)."""

T = TypeVar("T")


def cache_dir() -> Path | None:
    """The cache directory, or ``None`` when the cache is off."""
    value = os.environ.get(CACHE_ENV)
    if value is not None:
        return None if value.strip().lower() in ("", "off", "0", "no", "false") else Path(value)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "aifabric"


def _private(path: Path, *, directory: bool) -> bool:
    """Whether ``path`` exists, is of the expected type, is owned by the current user and is
    writable by nobody else (so a pickle in it was written by this user)."""
    try:
        st = path.lstat()
    except OSError:
        return False
    kind_ok = stat.S_ISDIR(st.st_mode) if directory else stat.S_ISREG(st.st_mode)
    owner_ok = not hasattr(os, "getuid") or st.st_uid == os.getuid()
    return kind_ok and owner_ok and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def digest(parts: Iterable[bytes]) -> str:
    """SHA-256 over the versions aifabric's pickles depend on and ``parts`` (length-prefixed,
    so no two different sequences of parts collide by concatenation)."""
    h = hashlib.sha256()
    head = f"aifabric {__version__}; python {sys.version}; pydantic {pydantic.VERSION}"
    for part in (head.encode(), *parts):
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    return h.hexdigest()


def cached(name: str, parts: Iterable[bytes], build: Callable[[], T]) -> T:
    """``build()``, or the value a previous call with the same ``name`` and ``parts`` stored.

    ``name`` is a plain word naming what is stored (the file is ``<name>-<digest>.pickle``);
    ``parts`` is every input the value depends on, as bytes. A value that cannot be stored is
    still returned.
    """
    folder = cache_dir()
    if folder is None:
        return build()
    key = digest(parts)[:40]
    path = folder / f"{name}-{key}.pickle"
    if _private(folder, directory=True) and _private(path, directory=False):
        try:
            with path.open("rb") as fh:
                value: T = pickle.load(fh)  # our own file, in a private directory
            return value
        except Exception:  # a truncated or foreign file: build again
            pass
    value = build()
    _store(folder, name, path, value)
    return value


def _store(folder: Path, name: str, path: Path, value: object) -> None:
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _private(folder, directory=True):
            return
        fd, tmp = tempfile.mkstemp(prefix=f".{name}-", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        for old in folder.glob(f"{name}-*.pickle"):
            if old != path:
                old.unlink(missing_ok=True)
    except Exception:  # a read-only or full disk, an unpicklable value: no cache, same answer
        return
