"""Whether each catalogue entry's examples are text its cited source can print.

Usage::

    python benchmarks/source_fidelity.py MIRRORS [MIRRORS...]    # figures by program
    python benchmarks/source_fidelity.py MIRRORS --list untraced # the entries to review
    python benchmarks/source_fidelity.py MIRRORS --json          # one JSON document
    python benchmarks/source_fidelity.py MIRRORS --list drift    # not printed by the newest release

``MIRRORS`` is a directory of git clones (bare or not) named ``owner+name`` or
``owner+name/repo`` or ``owner/name``, with the tags the catalogues cite; a repository too large
to clone may instead be an unpacked release at the cited ref, ``owner+name@ref`` (a source
distribution or a wheel: the cited path is looked up as the path that ends with it). Nothing is
downloaded and nothing of the sources is kept: each cited file is read at its ``ref`` (``git
cat-file``), its string literals are extracted and compared with the entry's examples in memory.

A catalogue entry says where its message comes from (``source: {repo, ref, path}``) and gives
the message as the program prints it (``examples``). An example invented or paraphrased instead
of quoted gives a pattern that no real line matches, and the test that the pattern matches its
example cannot see it. This benchmark checks the examples against the cited file:

- **literals**: every string literal of the file (C/C++/Go/Rust/Java double quotes, adjacent
  literals joined, a ``PRIu64``-style macro between two of them read as a field; Python, shell,
  YAML, Ruby, Perl and JavaScript single quotes and triple-quoted blocks too, a ``+ name +`` or
  ``<< name <<`` between two literals read as a field); each format directive (printf's
  ``%s``/``%lu``/``%pI4``/``%m``, Python's ``{...}`` and ``%(name)s``, shell's ``$VAR``) is a
  field that may hold any text;
- **traced**: some example contains, in order, the fixed parts of one literal of at least two
  words that holds the entry's anchor word (the word the index finds the entry by);
- **weak**: a literal of at least two words matches an example, but none that holds the anchor
  (the anchor is printed from a variable, or the literal is a shared prefix);
- **untraced**: the file was read and no literal of two words matches any example: the text is
  assembled at run time from pieces (a status table, ``strerror``), printed by another file than
  the one cited, or not the program's text; these are the entries to review by hand;
- **elsewhere**: not traced in the cited file, but in another file of the repository at that
  ref (the longest runs of three plain words of the examples looked up with ``git grep``): the
  text is real, the cited path is not where it is printed;
- **no file**: the path is not in the mirror at that ref nor at its newest commit; **no
  mirror**: the repository is not in ``MIRRORS``; entries citing a URL are not counted.

A ref the mirror lacks is read at the mirror's newest commit (for unpacked releases, the newest
release there) and counted as ``ref fallback``. A C++ file of a wheel, which holds it only
compiled, is read in the printable strings of its libraries when the unpacked wheel has them
(``_binary_strings.txt``, ``strings -n 10`` of its ``.so`` files).
With ``--drift`` (or ``--list drift``), an entry traced at its cited tag is read again at the
newest release tag of the same series in the mirror (same shape: ``v2.18.6-1`` -> the highest
``v<n>.<n>.<n>-<n>``): **same**, **moved** (another file prints it), **reworded** (the file no
longer prints it) or **gone** (neither the file nor the text is left). A reworded message is a
line of the current release the catalogue may miss; a removed one only needs its ``versions``.

This is a benchmark of the catalogues' quality, not a test: the sources are not part of the
project and CI has no mirrors. docs/benchmarks.md records the figures with the commit.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import subprocess
import sys
import tarfile
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from aifabric.checks.diagnose.signatures import Signature, all_catalogues

SINGLE_QUOTE_EXT = {".py", ".sh", ".bash", ".yaml", ".yml", ".rb", ".pl", ".js", ".ts", ".lua"}
BACKTICK_EXT = {".go", ".js", ".ts"}
CODE_EXT = {
    *(".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".cu", ".cuh", ".inl", ".go", ".rs"),
    *(".java", ".py", ".pyx", ".sh", ".bash", ".rb", ".pl", ".js", ".ts", ".lua", ".m4"),
    *(".am", ".in", ".ac", ".json", ".tcl", ".y", ".l", ""),
}
"""Files read for their string literals as well (a file without an extension is read as a
shell script); every file is also read a line at a time, each line a literal (help texts,
manuals, message tables, documentation)."""

_FIELD = re.compile(
    r"%%"
    r"|%\(\w+\)[-+ #0]*\d*(?:\.\d+)?[a-zA-Z]"
    r"|%(?:\d+\$)?[-+ #0']*(?:\d+|\*)?(?:\.(?:\d+|\*))?"
    r"(?:hh|h|ll|l|L|q|j|z|Z|t|I64|I32)?(?:p[A-Za-z0-9]*|[diouxeEfFgGaAcsnmvwqr]|[A-Z](?![A-Za-z]))"
    r"|\{[^{}]*\}"
    r"|\$\{[^{}]*\}|\$[\w?@#*!-]\w*"
    r'|"\s*(?:PRI\w+|SCN\w+|[A-Z_][A-Z0-9_]*)\s*"'
)
"""A field of a format: printf directives (with the kernel's %p extensions, Go's %v/%w/%q/%T),
Python's {...} (``{{`` is a brace), %(name)s and %r, shell variables and parameters, BIRD's
%I-style upper-case directives, and an upper-case macro between two joined C literals. ``%%``
is a percent sign."""

_WORDS = re.compile(r"[A-Za-z]{2,}")
_UNESCAPE = {"n": "\n", "t": "\t", "r": " ", '"': '"', "'": "'", "\\": "\\", "0": ""}


@dataclass(frozen=True)
class Literal:
    """A string of the source split at its fields: the fixed parts, in order."""

    parts: tuple[str, ...]
    words: frozenset[str]

    @property
    def longest(self) -> str:
        return max(self.parts, key=len)

    def matches(self, text: str) -> bool:
        if self.longest not in text:
            return False
        return _rx(self.parts).search(text) is not None


@cache
def _rx(parts: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(".*?".join(re.escape(p) for p in parts), re.S)


def _unescape(body: str) -> str:
    body = re.sub(r"\\(?:x[0-9a-fA-F]{1,2}|0[0-7]{1,3}|[1-3][0-7]{2})", "", body)  # \x1b, \033
    return re.sub(r"\\(.)", lambda m: _UNESCAPE.get(m.group(1), m.group(1)), body)


def _joined(text: str, ext: str) -> list[str]:
    """The file's string literals, adjacent ones (a macro or ``+ name +`` between) joined."""
    out: list[str] = [line.strip() for line in text.splitlines() if line.strip()]
    # a message table's "key:text" and "key = text" lines (MPICH's errnames.txt, whose keys
    # may carry their arguments, "**key %s %d:text"; .ini help)
    out += [
        m.group(1)
        for line in out
        if (m := re.match(r"^(?:\*\*[^:]{1,80}:|[^\s:=]{2,80}\s*[:=])\s*(.+)$", line))
    ]
    if ext not in CODE_EXT:
        return out
    text = text.replace("\\\n", "")  # a literal continued on the next line by a backslash
    single = ext in SINGLE_QUOTE_EXT or not ext
    if single:
        for m in re.finditer(r'"""(.*?)"""|\'\'\'(.*?)\'\'\'', text, re.S):
            out.extend((m.group(1) or m.group(2) or "").splitlines())
        text = re.sub(
            r'"""(.*?)"""|\'\'\'(.*?)\'\'\'', lambda m: " " * len(m.group(0)), text, flags=re.S
        )
    quotes = ['"(?:\\\\.|[^"\\\\\\n])*"']
    if single:
        quotes.append("'(?:\\\\.|[^'\\\\\\n])*'")
    if ext in BACKTICK_EXT:
        quotes.append("`[^`]*`")
    else:  # a C character literal, skipped whole so that its quote opens no string
        quotes.append("'(?:\\\\.|[^'\\\\\\n]){1,4}'")
    rx = re.compile("|".join(quotes))
    prev_end = -1
    current: str | None = None
    for m in rx.finditer(text):
        if m.group(0)[0] == "'" and not single:
            continue
        body = _unescape(m.group(0)[1:-1])
        gap = text[prev_end : m.start()] if prev_end >= 0 else None
        if current is not None and gap is not None:
            if re.fullmatch(r"\s*(?:\+\s*)?", gap):
                current += body
                prev_end = m.end()
                continue
            if re.fullmatch(
                r"\s*(?:[A-Z_][A-Za-z0-9_]*|\+\s*[\w.\[\]()>-]+\s*\+|<<\s*[\w.\[\]()>:-]+\s*<<)\s*",
                gap,
            ):
                # "%" PRIu64: the directive's start belongs to the field the macro ends
                current = re.sub(r"%[-+ #0-9.]*$", "", current) + "\x00" + body
                prev_end = m.end()
                continue
            out.append(current)
        current = body
        prev_end = m.end()
    if current is not None:
        out.append(current)
    return out


def literals(text: str, ext: str) -> list[Literal]:
    """Every line of a literal of two words or more, split at its format fields."""
    out: list[Literal] = []
    seen: set[tuple[str, ...]] = set()
    for line in (line for lit in _joined(text, ext) for line in lit.split("\n")):
        raw = re.sub(r"%[-+ #0-9.]*$", "", line)  # "...%" PRIx64 at the end: the field's start
        raw = raw.replace("{{", "\x01").replace("}}", "\x02")  # a brace, not a field
        parts = tuple(
            p.replace("\x01", "{").replace("\x02", "}")
            for p in re.split(r"\x00|" + _FIELD.pattern, raw.replace("%%", "%"))
            if p and p.strip()
        )
        words = frozenset(w for p in parts for w in _WORDS.findall(p))
        if len(words) < 2 or parts in seen:
            continue
        seen.add(parts)
        out.append(Literal(parts, frozenset(w.lower() for w in words)))
    return out


def mirror_of(root: Path, repo: str) -> Path | None:
    owner, name = repo.split("/", 1)
    for cand in (root / f"{owner}+{name}" / "repo", root / f"{owner}+{name}", root / owner / name):
        if cand.is_dir() and _git(cand, "rev-parse", "--git-dir") is not None:
            return cand
    return None


BINARY_STRINGS = "_binary_strings.txt"
"""In an unpacked wheel, the printable strings of its shared libraries (``strings -n 10``): the
text of a C++ file the wheel holds only compiled is read there."""


def tree_of(root: Path, repo: str, ref: str) -> Path | None:
    """An unpacked release of the repository at ``ref`` (a source distribution or a wheel,
    for a repository too large to mirror): ``MIRRORS/owner+name@ref``."""
    owner, name = repo.split("/", 1)
    cand = root / f"{owner}+{name}@{ref}"
    return cand if cand.is_dir() else None


def newest_tree(root: Path, repo: str) -> Path | None:
    """The unpacked release of the repository with the highest version, read when the cited
    ref has none (counted as a ref fallback, like a mirror's newest commit)."""
    owner, name = repo.split("/", 1)

    def version(p: Path) -> tuple[int, ...]:
        return tuple(int(n) for n in re.findall(r"\d+", p.name.split("@", 1)[1]))

    cands = [p for p in root.glob(f"{owner}+{name}@*") if p.is_dir()]
    return max(cands, key=version) if cands else None


@cache
def _tree_texts(tree: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for f in sorted(tree.rglob("*")):
        if f.is_file() and (f.stat().st_size < 4_000_000 or f.name == BINARY_STRINGS):
            try:
                out[f.relative_to(tree).as_posix()] = f.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
    return out


def read_tree(tree: Path, path: str) -> tuple[str, str] | None:
    """The cited file in an unpacked release and its path there: the same relative path, one
    that ends with it (an sdist's top directory), or with it less its leading directories (a
    wheel holds ``python/ray/x.py`` as ``ray/x.py``)."""
    texts = _tree_texts(tree)
    parts = Path(path).parts
    for k in range(max(1, len(parts) - 1)):
        suffix = "/".join(parts[k:])
        hits = [f for f in texts if f == suffix or f.endswith("/" + suffix)]
        if hits:
            best = min(hits, key=len)
            return texts[best], best
    return None


def _git(repo: Path, *args: str) -> str | None:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        errors="replace",
        check=False,
    )
    return proc.stdout if proc.returncode == 0 else None


def _archive_text(repo: Path, obj: str) -> str | None:
    """The code files of a release tarball committed to the repository, together."""
    cmd = ["git", "-C", str(repo), "cat-file", "-p", obj]
    proc = subprocess.run(cmd, capture_output=True, check=False)
    if proc.returncode != 0:
        return None
    texts = []
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        for member in tar:
            if member.isfile() and Path(member.name).suffix in (".c", ".h", ".cc", ".cpp"):
                f = tar.extractfile(member)
                if f is not None:
                    texts.append(f.read().decode("utf-8", "replace"))
    return "\n".join(texts)


def read_source(repo: Path, ref: str, path: str) -> tuple[str | None, bool]:
    """The file's text at ``ref`` (or the newest commit; second item True then); a directory
    gives its files' texts together, a release tarball (``.tar.gz``) its C/C++ files'."""
    for at, fallback in ((ref, False), ("HEAD", True)):
        commit = _git(repo, "rev-parse", "--verify", "--quiet", f"{at}^{{commit}}")
        if commit is None:
            continue
        kind = _git(repo, "cat-file", "-t", f"{commit.strip()}:{path}")
        if kind is None:
            continue
        if kind.strip() == "tree":
            names = _git(repo, "ls-tree", "-r", "--name-only", f"{commit.strip()}:{path}") or ""
            texts = [
                _git(repo, "cat-file", "-p", f"{commit.strip()}:{path.rstrip('/')}/{n}") or ""
                for n in names.split()[:400]
            ]
            return "\n".join(texts), fallback
        if path.endswith((".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")):
            return _archive_text(repo, f"{commit.strip()}:{path}"), fallback
        return _git(repo, "cat-file", "-p", f"{commit.strip()}:{path}"), fallback
    return None, False


def source_ext(path: str) -> str:
    """The extension that says how a cited file is read (a tarball is read as C)."""
    if path.endswith((".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")):
        return ".c"
    return Path(path).suffix.lower()


_RUN = re.compile(r"[A-Za-z][A-Za-z'-]*(?: [A-Za-z][A-Za-z'-]*){2,}")


@cache
def _git_index(repo: Path, ref: str, path: str) -> LiteralIndex | None:
    """The literals of a file at ``ref`` (no ref fallback), read once however many entries
    cite it: :func:`elsewhere` and :func:`drift` ask for the same files entry after entry."""
    text, fallback = read_source(repo, ref, path)
    if text is None or fallback:
        return None
    return LiteralIndex(literals(text, source_ext(path)))


def elsewhere(repo: Path, ref: str, sig: Signature, cited: str) -> str | None:
    """Another file of the repository at ``ref`` whose literals trace the entry: the longest
    run of three or more plain words of an example is looked up with ``git grep``."""
    commit = _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}") or _git(
        repo, "rev-parse", "HEAD"
    )
    if commit is None:
        return None
    runs = sorted({r for ex in sig.examples for r in _RUN.findall(ex)}, key=len, reverse=True)
    for run in runs[:2]:
        hits = _git(repo, "grep", "-F", "-l", "-I", "-e", run, commit.strip(), "--") or ""
        for hit in hits.splitlines()[:8]:
            path = hit.split(":", 1)[1]
            if path == cited:
                continue
            index = _git_index(repo, commit.strip(), path)
            if index is not None and classify(sig, index) == "traced":
                return path
    return None


@cache
def _tree_index(tree: Path, path: str) -> LiteralIndex:
    return LiteralIndex(literals(_tree_texts(tree)[path], Path(path).suffix.lower()))


def elsewhere_in_tree(tree: Path, sig: Signature, cited: str | None) -> str | None:
    """:func:`elsewhere` for an unpacked release."""
    runs = sorted({r for ex in sig.examples for r in _RUN.findall(ex)}, key=len, reverse=True)
    for run in runs[:2]:
        for path, text in _tree_texts(tree).items():
            if path == cited or run not in text:
                continue
            if classify(sig, _tree_index(tree, path)) == "traced":
                return path
    return None


class LiteralIndex:
    """A file's literals by the first four characters of their longest fixed part: a literal
    can match a line only where that part occurs, so a line is compared with the literals keyed
    by its own 4-grams (a wheel's compiled strings are a million literals)."""

    def __init__(self, lits: Sequence[Literal]) -> None:
        self.by_gram: dict[str, list[Literal]] = defaultdict(list)
        self.short: list[Literal] = []
        for lit in lits:
            if len(lit.longest) >= 4:
                self.by_gram[lit.longest[:4]].append(lit)
            else:
                self.short.append(lit)

    def candidates(self, line: str) -> Iterator[Literal]:
        seen: set[int] = set()
        for i in range(len(line) - 3):
            for lit in self.by_gram.get(line[i : i + 4], ()):
                if id(lit) not in seen:
                    seen.add(id(lit))
                    yield lit
        yield from self.short


def classify(sig: Signature, lits: Sequence[Literal] | LiteralIndex) -> str:
    index = lits if isinstance(lits, LiteralIndex) else LiteralIndex(lits)
    anchor = sig.key().lower()
    weak = False
    for ex in sig.examples:
        for lit in index.candidates(ex):
            if lit.matches(ex):
                if anchor in lit.words or any(anchor in p.lower() for p in lit.parts):
                    return "traced"
                weak = True
    return "weak" if weak else "untraced"


@cache
def _tags(repo: Path) -> tuple[str, ...]:
    return tuple((_git(repo, "tag") or "").split())


def newest_tag(repo: Path, ref: str) -> str | None:
    """The repository's newest release of the same series as ``ref``: the highest tag of the
    same shape (``v2.18.6-1`` -> the highest ``v<n>.<n>.<n>-<n>``, so that a package's own tags
    in the same repository and release candidates are not taken); none for a commit."""

    def version(tag: str) -> tuple[int, ...]:
        return tuple(int(n) for n in re.findall(r"\d+", tag))

    shape = re.compile(re.sub(r"\\d\+|\d+", r"\\d+", re.escape(ref)))
    same = [t for t in _tags(repo) if shape.fullmatch(t)]
    return max(same, key=version) if same and not re.fullmatch(r"[0-9a-f]{40}", ref) else None


def drift(repo: Path, ref: str, path: str, sig: Signature) -> tuple[str, str | None]:
    """Whether an entry traced at its ``ref`` still is at the repository's newest release:
    ``same``, ``moved`` (another file prints it), ``reworded`` (the file no longer prints
    it: the message changed or was removed) or ``gone`` (neither the file nor the text is
    left); with the tag read."""
    tag = newest_tag(repo, ref)
    if tag is None:
        return "", None
    if tag == ref:
        return "same", tag
    index = _git_index(repo, tag, path)
    if index is not None and classify(sig, index) == "traced":
        return "same", tag
    if elsewhere(repo, tag, sig, path) is not None:
        return "moved", tag
    return ("reworded" if index is not None else "gone"), tag


def run(
    roots: list[Path], programs: frozenset[str] = frozenset(), with_drift: bool = False
) -> list[dict[str, Any]]:
    by_file: dict[tuple[str, str, str], list[tuple[str, Signature]]] = defaultdict(list)
    rows: list[dict[str, Any]] = []
    for cat in all_catalogues():
        if programs and cat.program not in programs:
            continue
        for sig in cat.entries:
            s = sig.source
            if s.repo and s.ref and s.path:
                by_file[(s.repo, s.ref, s.path)].append((cat.program, sig))
    for (repo, ref, path), sigs in sorted(by_file.items()):
        mirror = next((m for root in roots if (m := mirror_of(root, repo))), None)
        tree, fallback = None, False
        if mirror is None:
            tree = next((t for root in roots if (t := tree_of(root, repo, ref))), None)
            if tree is None:
                tree = next((t for root in roots if (t := newest_tree(root, repo))), None)
                fallback = tree is not None
        text, in_tree = None, None
        if mirror is not None:
            text, fallback = read_source(mirror, ref, path)
        elif tree is not None and (got := read_tree(tree, path)) is not None:
            text, in_tree = got
        elif tree is not None and (tree / BINARY_STRINGS).is_file():
            # a C/C++ file of a binary release: its compiled strings stand for it
            text, in_tree = _tree_texts(tree)[BINARY_STRINGS], BINARY_STRINGS
        if in_tree is not None and tree is not None:
            lits = _tree_index(tree, in_tree)
        else:
            lits = LiteralIndex(literals(text, source_ext(path)) if text is not None else [])
        for program, sig in sigs:
            if mirror is None and tree is None:
                status = "no mirror"
            elif text is None:
                status = "no file"
            else:
                status = classify(sig, lits)
            found = None
            if status in ("untraced", "weak", "no file"):
                if mirror is not None:
                    found = elsewhere(mirror, ref, sig, path)
                elif tree is not None:
                    found = elsewhere_in_tree(tree, sig, in_tree)
                if found is not None:
                    status = "elsewhere"
            newest: tuple[str, str | None] = ("", None)
            if with_drift and mirror is not None and status == "traced" and not fallback:
                newest = drift(mirror, ref, path, sig)
            rows.append(
                {
                    "id": sig.id,
                    "program": program,
                    "repo": repo,
                    "ref": ref,
                    "path": path,
                    "status": status,
                    "ref_fallback": fallback,
                    "found_in": found or (in_tree if in_tree == BINARY_STRINGS else None),
                    "example": sig.examples[0],
                    "newest": newest[0],
                    "newest_tag": newest[1],
                }
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mirrors", type=Path, nargs="+", help="directories of mirrors")
    parser.add_argument(
        "--list", choices=["untraced", "weak", "elsewhere", "no file", "no mirror", "drift"]
    )
    parser.add_argument(
        "--drift",
        action="store_true",
        help="also read each traced entry at its repository's newest release tag",
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--program", action="append", default=[], help="only this catalogue's entries (repeatable)"
    )
    args = parser.parse_args(argv)
    rows = run(args.mirrors, frozenset(args.program), args.drift or args.list == "drift")
    if args.json:
        json.dump(rows, sys.stdout, indent=1)
        return 0
    if args.list == "drift":
        for r in rows:
            if r["newest"] in ("moved", "reworded", "gone"):
                where = f"{r['repo']}@{r['ref']}:{r['path']}"
                print(
                    f"{r['id']}\t{r['newest']} at {r['newest_tag']}\t{where}\t{r['example'][:160]}"
                )
        return 0
    if args.list:
        for r in rows:
            if r["status"] == args.list:
                found = f" (text in {r['found_in']})" if r["found_in"] else ""
                print(f"{r['id']}\t{r['repo']}@{r['ref']}:{r['path']}{found}\t{r['example'][:160]}")
        return 0
    by_prog: dict[str, Counter[str]] = defaultdict(Counter)
    for r in rows:
        by_prog[r["program"]][r["status"]] += 1
    total: Counter[str] = Counter(r["status"] for r in rows)
    read = total["traced"] + total["elsewhere"] + total["weak"] + total["untraced"]
    print(f"{len(rows)} entries citing a repository file; {read} read from a mirror")
    shares = ("traced", "elsewhere", "weak", "untraced")
    for k in (*shares, "no file", "no mirror"):
        share = f" ({100 * total[k] / max(read, 1):.1f}% of read)" if k in shares else ""
        print(f"  {k:10} {total[k]:5}{share}")
    print(f"  ref fallback {sum(r['ref_fallback'] for r in rows)}")
    newest = Counter(r["newest"] for r in rows if r["newest"])
    if newest:
        print(
            "traced entries at their repository's newest release: "
            + ", ".join(f"{k} {newest[k]}" for k in ("same", "moved", "reworded", "gone"))
        )
    print("\nby program (traced/elsewhere/weak/untraced/no file/no mirror):")
    for prog, c in sorted(by_prog.items(), key=lambda kv: -kv[1]["untraced"]):
        cols = " ".join(
            f"{c[k]:4}" for k in ("traced", "elsewhere", "weak", "untraced", "no file", "no mirror")
        )
        print(f"  {prog:22} {cols}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
