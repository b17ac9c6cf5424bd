"""The per-user cache of derived package data (aifabric.cache) and the signature catalogues
loaded through it."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from aifabric import cache
from aifabric.checks.diagnose import nearest, signatures


class Counter:
    def __init__(self, value: object) -> None:
        self.calls = 0
        self.value = value

    def __call__(self) -> object:
        self.calls += 1
        return self.value


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv(cache.CACHE_ENV, str(d))
    return d


def test_second_call_reads_the_stored_value(folder: Path) -> None:
    build = Counter({"a": (1, 2)})
    assert cache.cached("thing", [b"x"], build) == {"a": (1, 2)}
    assert cache.cached("thing", [b"x"], build) == {"a": (1, 2)}
    assert build.calls == 1
    (stored,) = folder.glob("thing-*.pickle")
    assert stored.stat().st_mode & 0o077 == 0 or os.name != "posix"
    assert folder.stat().st_mode & 0o777 == 0o700


def test_new_parts_are_a_new_key_and_replace_the_old_file(folder: Path) -> None:
    assert cache.cached("thing", [b"x"], Counter(1)) == 1
    build = Counter(2)
    assert cache.cached("thing", [b"y"], build) == 2
    assert build.calls == 1
    assert len(list(folder.glob("thing-*.pickle"))) == 1


def test_parts_do_not_collide_by_concatenation() -> None:
    assert cache.digest([b"ab", b"c"]) != cache.digest([b"a", b"bc"])


@pytest.mark.parametrize("value", ["off", "", "0"])
def test_off_builds_every_time_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(cache.CACHE_ENV, value)
    monkeypatch.chdir(tmp_path)
    build = Counter(3)
    cache.cached("thing", [b"x"], build)
    cache.cached("thing", [b"x"], build)
    assert build.calls == 2
    assert cache.cache_dir() is None
    assert list(tmp_path.iterdir()) == []


def test_default_location_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(cache.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache.cache_dir() == tmp_path / "aifabric"


def test_corrupt_file_is_rebuilt(folder: Path) -> None:
    cache.cached("thing", [b"x"], Counter(1))
    (stored,) = folder.glob("thing-*.pickle")
    stored.write_bytes(b"\x80\x05 truncated")
    build = Counter(1)
    assert cache.cached("thing", [b"x"], build) == 1
    assert build.calls == 1


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_directory_others_can_write_is_neither_read_nor_written(folder: Path) -> None:
    cache.cached("thing", [b"x"], Counter(1))
    (stored,) = folder.glob("thing-*.pickle")
    # someone else's value planted where a shared directory would let them
    stored.write_bytes(pickle.dumps("planted"))
    folder.chmod(0o777)
    build = Counter(1)
    assert cache.cached("thing", [b"x"], build) == 1
    assert build.calls == 1
    assert stored.read_bytes() == pickle.dumps("planted")  # not rewritten either


def test_an_unwritable_location_still_returns_the_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv(cache.CACHE_ENV, str(blocker / "cache"))
    build = Counter(5)
    assert cache.cached("thing", [b"x"], build) == 5
    assert cache.cached("thing", [b"x"], build) == 5
    assert build.calls == 2


def test_catalogues_from_the_cache_equal_a_fresh_load(folder: Path) -> None:
    """A cold load (validated, analysed) and a warm one (unpickled) give the same entries and
    the same index facts, and the facts equal what each entry computes itself."""
    parts = signatures.catalogue_sources()
    cold_cats, cold_facts = cache.cached("signatures", parts, signatures._build)
    warm_cats, warm_facts = cache.cached("signatures", parts, _fail)
    assert warm_cats == cold_cats
    assert warm_facts == cold_facts
    sigs = [s for c in warm_cats for s in c.entries]
    assert len(warm_facts) == len(sigs) >= 3000
    for sig in sigs[::97]:
        assert warm_facts[sig.id] == signatures._index_facts(sig)
    index = signatures.SignatureIndex(warm_cats, warm_facts)
    example = next(s for s in sigs if s.id == "nccl.ib-no-device" or s.examples)
    hit = index.match(example.examples[0])
    assert hit is not None


def test_a_changed_catalogue_is_a_new_key() -> None:
    parts = signatures.catalogue_sources()
    changed = [parts[0], parts[1] + b"\n# edited", *parts[2:]]
    assert cache.digest(parts) != cache.digest(changed)


def _fail() -> tuple[object, object]:
    raise AssertionError("the second load should come from the cache")


def test_nearest_index_from_the_cache_suggests_as_a_fresh_one(folder: Path) -> None:
    nearest.nearest_index.cache_clear()
    try:
        warm = nearest.nearest_index()  # built and stored in the test's folder
        assert list(folder.glob("nearest-*.pickle"))
        nearest.nearest_index.cache_clear()
        warm = nearest.nearest_index()  # read back
        fresh = nearest.NearestIndex(signatures.all_catalogues())
        for line in (
            "NCCL WARN NET/IB : ibv_reg_mr failed Cannot allocate memory",
            "mlx5_core 0000:3b:00.0: port module event: module 0, Cable unplugged",
            "Connection refused while connecting to the rendezvous store",
        ):
            assert warm.suggest(line) == fresh.suggest(line)
            assert warm.nearest(line) == fresh.nearest(line)
    finally:
        nearest.nearest_index.cache_clear()
