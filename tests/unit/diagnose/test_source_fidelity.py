"""The source-fidelity benchmark's reading of string literals (benchmarks/source_fidelity.py).

It decides whether a catalogue example is text the cited source can print; a literal read wrong
hides an invented example or flags a real one. Known answers: printf and Python formats with
their fields filled as the C library and Python fill them, joined C literals, a git repository
made here with a tag.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aifabric.checks.diagnose.signatures import Signature

BENCH = Path(__file__).resolve().parents[3] / "benchmarks"


@pytest.fixture(scope="module")
def sf() -> Iterator[ModuleType]:
    sys.path.insert(0, str(BENCH))
    try:
        import source_fidelity  # noqa: PLC0415
    finally:
        sys.path.remove(str(BENCH))
    yield source_fidelity


def traced(sf: ModuleType, source: str, ext: str, line: str) -> bool:
    return any(lit.matches(line) for lit in sf.literals(source, ext))


def test_printf_fields_take_what_the_c_library_prints(sf: ModuleType) -> None:
    src = "WARN(\"Cuda failure %d '%s'\", err, cudaGetErrorString(err));"
    rendered = "Cuda failure %d '%s'" % (217, "peer access is not supported")  # noqa: UP031
    line = f"node1:42:42 [0] transport/p2p.cc:238 NCCL WARN {rendered}"
    assert traced(sf, src, ".cc", line)
    assert not traced(sf, src, ".cc", "node1:42:42 [0] NCCL WARN Cuda error 217 'x'")


def test_a_percent_word_is_text_not_a_directive(sf: ModuleType) -> None:
    # Arista EOS message ids start with "%": only "%L" before a conversion letter is a length
    src = 'log("%LINEPROTO-5-UPDOWN: Line protocol on Interface %s, changed state to %s", i, s);'
    line = "%LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet1, changed state to down"
    assert traced(sf, src, ".c", line)
    assert not traced(sf, src, ".c", line.replace("%LINEPROTO", "%LINKSTATE"))


def test_joined_literals_and_a_format_macro_between(sf: ModuleType) -> None:
    src = 'printf("read %" PRIu64 " bytes "\n       "from %s\\n", n, path);'
    assert traced(sf, src, ".c", "read 4096 bytes from /dev/infiniband/uverbs0")
    assert not traced(sf, src, ".c", "wrote 4096 bytes from /dev/infiniband/uverbs0")


def test_a_literal_of_several_lines_is_read_a_line_at_a_time(sf: ModuleType) -> None:
    src = 'fprintf(stderr, "Failed to connect to the service!\\n" "Please check the port.\\n");'
    assert traced(sf, src, ".c", "Failed to connect to the service!")
    assert traced(sf, src, ".c", "Please check the port.")


def test_a_character_literal_opens_no_string(sf: ModuleType) -> None:
    src = 'if (c == \'"\') skip(); log("bad quote in %s line %d", f, n);'
    assert traced(sf, src, ".c", "bad quote in hosts line 3")


def test_python_formats(sf: ModuleType) -> None:
    src = (
        "logger.error(f'Store {name} timed out after {t:.1f} s')\n"
        'raise ValueError("rank {} out of range {}".format(r, n))\n'
        "log('%(host)s refused the connection', d)\n"
        "msg = 'worker ' + str(rank) + ' exited early'\n"
        "raise RuntimeError(f'needs {{\"GPU\": {n}}} but has {have!r}')\n"
        "log('import of %r failed with %r', name, exc)\n"
    )
    assert traced(sf, src, ".py", "ERROR Store kv0 timed out after 30.0 s")
    assert traced(sf, src, ".py", "ValueError: rank 9 out of range 8")
    assert traced(sf, src, ".py", "node7 refused the connection")
    assert traced(sf, src, ".py", "worker 3 exited early")
    assert traced(sf, src, ".py", 'RuntimeError: needs {"GPU": 16.0} but has 8.0')
    assert traced(sf, src, ".py", "import of 'amdsmi' failed with ModuleNotFoundError('x')")


def test_help_files_are_read_a_line_at_a_time(sf: ModuleType) -> None:
    src = "[no-ports]\nNo OpenFabrics connection schemes reported that they were able\nto be used"
    assert traced(sf, src, ".txt", "No OpenFabrics connection schemes reported that they were able")
    table = "**shm_alloc:unable to allocate shared memory\n"
    assert traced(sf, table, ".txt", "MPIDU_Init_shm_init(180): unable to allocate shared memory")
    # a key that carries its arguments
    table = "**ofi_getinfo %s %d:OFI getinfo failed (%s:%d)\n"
    assert traced(sf, table, ".txt", "fi_getinfo(123): OFI getinfo failed (ofi_init.c:982)")


def test_json_values_and_continued_c_literals(sf: ModuleType) -> None:
    js = '{"EI0004": {"ErrMessage": "The ranktable is invalid. Reason: %s"}}'
    assert traced(sf, js, ".json", "EI0004: The ranktable is invalid. Reason: bad port")
    src = 'fprintf(stderr, "cannot allocate memory \\\n   in static TLS block");'
    assert traced(sf, src, ".c", "libgomp.so.1: cannot allocate memory    in static TLS block")


_word = st.from_regex(r"[a-z]{3,8}", fullmatch=True)
_field = st.sampled_from(["%s", "%d", "%lu", "%#x", "%.2f", "%p", "{}", "{rank}"])


@given(
    st.lists(st.tuples(_word, st.booleans()), min_size=2, max_size=8, unique_by=lambda t: t[0]),
    st.data(),
)
def test_a_rendered_format_is_traced_and_a_reworded_one_is_not(
    sf: ModuleType, parts: list[tuple[str, bool]], data: st.DataObject
) -> None:
    """Any format of two words or more and fields, its fields filled with any token, is
    traced by its literal; changing one of its words makes it untraced."""
    fmt, out = [], []
    for word, field in parts:
        fmt.append(word)
        out.append(word)
        if field:
            fmt.append(data.draw(_field))
            out.append(data.draw(st.from_regex(r"[0-9A-Za-z_./-]{1,12}", fullmatch=True)))
    source = f'log_error("{" ".join(fmt)}", a, b);'
    line = "prefix: " + " ".join(out)
    assert traced(sf, source, ".c", line)
    i = data.draw(st.integers(0, len(parts) - 1))
    reworded = list(out)
    pos = sum(1 + int(f) for _, f in parts[:i])
    reworded[pos] = reworded[pos][0] + "Q" + reworded[pos][1:]
    assert not traced(sf, source, ".c", "prefix: " + " ".join(reworded))


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_an_entry_is_read_at_its_tag(sf: ModuleType, tmp_path: Path) -> None:
    repo = tmp_path / "acme+tool"
    repo.mkdir()

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
            check=True,
            capture_output=True,
        )

    git("init", "-q")
    (repo / "log.c").write_text('err("link %s is down (state %d)", dev, st);\n')
    git("add", ".")
    git("commit", "-q", "-m", "one")
    git("tag", "v1")
    (repo / "log.c").write_text('err("port %s went away", dev);\n')
    git("commit", "-q", "-am", "two")
    git("tag", "v2")
    git("tag", "pkg-v0.9")  # another series' tag in the same repository

    def entry(example: str, ref: str) -> Signature:
        return Signature.model_validate(
            {
                "id": "acme.link", "pattern": r"\blink \S+ is down|went away", "anchor": "link"
                if "link" in example else "away", "examples": [example], "severity": "error",
                "cause": "fabric.link-down", "meaning": "m",
                "source": {"repo": "acme/tool", "ref": ref, "path": "log.c"},
            }
        )  # fmt: skip

    assert sf.mirror_of(tmp_path, "acme/tool") == repo
    old, fallback = sf.read_source(repo, "v1", "log.c")
    assert fallback is False
    lits = sf.literals(old, ".c")
    assert sf.classify(entry("E: link eth2 is down (state 1)", "v1"), lits) == "traced"
    # the wording of the newest commit is not the wording at the tag
    assert sf.classify(entry("E: port eth2 went away", "v1"), lits) == "untraced"
    new, fallback = sf.read_source(repo, "v9", "log.c")
    assert fallback is True
    assert sf.classify(entry("E: port eth2 went away", "v9"), sf.literals(new, ".c")) == "traced"
    assert sf.read_source(repo, "v1", "missing.c") == (None, False)
    # the newest release of the cited series no longer prints the v1 wording
    assert sf.newest_tag(repo, "v1") == "v2"
    assert sf.drift(repo, "v1", "log.c", entry("E: link eth2 is down (state 1)", "v1")) == (
        "reworded",
        "v2",
    )
    assert sf.drift(repo, "v2", "log.c", entry("E: port eth2 went away", "v2")) == ("same", "v2")


def test_an_unpacked_release_stands_for_a_repository_too_large_to_mirror(
    sf: ModuleType, tmp_path: Path
) -> None:
    wheel = tmp_path / "acme+tool@v2" / "acme" / "x.py"
    wheel.parent.mkdir(parents=True)
    wheel.write_text("raise RuntimeError(f'worker {rank} lost its peer')\n")
    sdist = tmp_path / "acme+tool@v3" / "acme-3.0" / "src" / "log.c"
    sdist.parent.mkdir(parents=True)
    sdist.write_text('err("port %s went away", dev);\n')
    assert sf.mirror_of(tmp_path, "acme/tool") is None
    tree = sf.tree_of(tmp_path, "acme/tool", "v2")
    assert tree is not None
    # a wheel holds the repository's python/acme/x.py as acme/x.py
    text, where = sf.read_tree(tree, "python/acme/x.py")
    assert where == "acme/x.py"
    assert any(
        lit.matches("RuntimeError: worker 3 lost its peer") for lit in sf.literals(text, ".py")
    )
    # an sdist has a top directory
    tree3 = sf.tree_of(tmp_path, "acme/tool", "v3")
    assert tree3 is not None
    assert sf.read_tree(tree3, "src/log.c") == (
        'err("port %s went away", dev);\n',
        "acme-3.0/src/log.c",
    )
    assert sf.read_tree(tree3, "src/other.c") is None
    assert sf.tree_of(tmp_path, "acme/tool", "v9") is None
    # a ref without its release is read in the newest one (a ref fallback)
    assert sf.newest_tree(tmp_path, "acme/tool") == tree3
    assert sf.newest_tree(tmp_path, "other/tool") is None
