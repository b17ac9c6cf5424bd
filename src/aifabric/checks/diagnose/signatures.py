"""Signature catalogues: the failure messages of the programs whose output users paste, as data.

Rules (:mod:`.rules`) combine parsed records; a catalogue entry recognises **one printed line**
of one program and says what it means. Catalogues live in ``checks/signatures/<program>.yaml``,
one file per program (NCCL, rdma-core, UCX, PyTorch, launchers, the mlx5 driver...), and every
entry is taken from the program's source or documentation at a named tag, with the message text
exactly as the program prints it::

    program: nccl
    title: NCCL
    url: https://github.com/NVIDIA/nccl
    entries:
      - id: nccl.ib-no-device
        pattern: 'NET/IB : No device found'
        anchor: device                   # optional; see below
        examples: ["host:1:1 [0] NCCL INFO NET/IB : No device found."]
        severity: warning                # error | warning | info | benign
        cause: host.rdma-device          # a class of checks/causes.yaml
        meaning: NCCL found no usable RDMA device and will use TCP sockets.
        next: ibv_devinfo; ls /sys/class/infiniband; NCCL_IB_HCA
        fix: Install/load the RDMA driver, expose the HCA to the container ...
        source: {repo: NVIDIA/nccl, ref: v2.23.4-1, path: src/transport/net_ib.cc}
        versions: "2.4-2.30"

``pattern`` is a Python regular expression searched in one line after launcher and rank prefixes
are removed; it must run in linear time (no nested quantifiers, no two unbounded wildcards that
can match the same text). Named groups may be used in ``message`` (``{group}``). ``benign``
entries explain a line that looks like an error but is not one (no finding, and the line is not
reported as unrecognised).

**Speed.** Every line of every log-like input is seen, so matching cannot try every pattern on
every line. Each entry has an *anchor*: a word (``\\w+`` token) that every matching line contains.
Lines are split into word tokens once; only entries whose anchor is among them are tried. The
anchor is given, or derived as the longest word that the pattern contains literally and that
every example holds. Where the anchor sits in one branch of an alternation (or an optional part),
the entry is also indexed under a word of each other branch, so no match goes untried.
"""

from __future__ import annotations

import importlib
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from aifabric.cache import cached
from aifabric.model import StrictModel, Tup
from aifabric.yamlfile import load_packaged_yaml, read_yaml_text, validate_data

__all__ = [
    "LAYER_WORDS",
    "Catalogue",
    "Cause",
    "Signature",
    "SignatureHit",
    "SignatureIndex",
    "Source",
    "all_catalogues",
    "all_causes",
    "catalogue_sources",
    "signature_by_id",
    "signature_index",
]

SigSeverity = Literal["error", "warning", "info", "benign"]
Layer = Literal["fabric", "host", "config", "application"]

_WORD = re.compile(r"\w+")

MAX_HITS_PER_LINE = 4
"""Messages read from one line at most (:meth:`SignatureIndex.match_all`)."""
MIN_REST_CHARS = 40
"""Text left beside a match shorter than this is not searched for another message."""
_LITERAL_WORD = re.compile(r"(?<![\\\w])([A-Za-z_][A-Za-z0-9_]{2,})(?![\w{])")


class Cause(StrictModel):
    """A class of causes (``checks/causes.yaml``): what a finding names, for scoring and filters."""

    id: str = Field(pattern=r"^(fabric|host|config|application)\.[a-z0-9\-]+$")
    layer: Layer
    title: str
    covers: str


class _CauseFile(StrictModel):
    causes: Tup[Cause]


LAYER_WORDS = {
    "fabric": "Fabric",
    "host": "Host, not the fabric",
    "config": "Configuration",
    "application": "Application, not the network",
}
"""The words a finding's message starts with, by the layer of its cause."""


@cache
def all_causes() -> dict[str, Cause]:
    """Every cause class by id."""
    entry = resources.files("aifabric.checks").joinpath("causes.yaml")
    text = entry.read_text(encoding="utf-8")
    data = validate_data(_CauseFile, read_yaml_text(text, file="causes.yaml"), file="causes.yaml")
    return {c.id: c for c in data.causes}


class Source(StrictModel):
    """Where a message comes from: a repository file at a tag, or a public URL."""

    repo: str | None = Field(default=None, pattern=r"^[\w.\-]+/[\w.\-]+$")
    ref: str | None = None
    path: str | None = None
    url: str | None = Field(default=None, pattern=r"^https?://")

    @model_validator(mode="after")
    def _resolvable(self) -> Source:
        if self.url is None and not (self.repo and self.ref and self.path):
            raise ValueError("a source needs `url`, or `repo`, `ref` and `path`")
        return self

    def link(self) -> str:
        """A public URL for the source."""
        if self.url is not None:
            return self.url
        return f"https://github.com/{self.repo}/blob/{self.ref}/{self.path}"


class Signature(StrictModel):
    """One message of one program and what it means."""

    id: str = Field(pattern=r"^[a-z0-9\-]+\.[a-z0-9\-.]+$")
    pattern: str
    anchor: str | None = Field(default=None, pattern=r"^\w+$")
    examples: Tup[str] = Field(min_length=1)
    severity: SigSeverity
    cause: str
    meaning: str
    message: str | None = Field(default=None, description="finding text; {group} expands")
    next: str = ""
    fix: str = ""
    source: Source
    versions: str | None = None
    real: Tup[str] = Field(default=(), description="public threads where it was pasted")
    flags: Literal["", "i"] = Field(default="", description="'i': case-insensitive")
    priority: int = Field(
        default=0, description="breaks ties between entries matching one line (higher wins)"
    )
    multi_node: bool = Field(
        default=False,
        description="harmless in a single-node job: info there (the NCCL log or nccl-tests "
        "header of the same input shows one node)",
    )
    catch_all: bool = Field(
        default=False,
        description="takes every warning or failed call no specific entry matched (a program's "
        "own wrapper around another program's error): the cause it names is a default, not a "
        "reading of the message, so it backs no candidate of a differential",
    )

    @field_validator("meaning", "next", "fix")
    @classmethod
    def _one_paragraph(cls, value: str) -> str:
        return " ".join(value.split())

    @model_validator(mode="after")
    def _checked(self) -> Signature:
        if self.cause not in all_causes():
            raise ValueError(f"{self.id}: unknown cause class {self.cause!r} (checks/causes.yaml)")
        try:  # compiled once, with its flags, into the cache regex() reads
            rx = self.regex()
        except re.error as exc:
            raise ValueError(f"{self.id}: bad regular expression: {exc}") from None
        for ex in self.examples:
            if not rx.search(ex):
                raise ValueError(f"{self.id}: pattern does not match its example {ex!r}")
        anchor = self.key()
        for ex in self.examples:
            words = set(_WORD.findall(ex if not self.flags else ex.lower()))
            if anchor not in words:
                raise ValueError(f"{self.id}: anchor {anchor!r} is not a word of {ex!r}")
        return self

    def specificity(self) -> tuple[int, int, int, int]:
        """How much a pattern says about a line: whether it reads the message at all (a
        ``catch_all`` entry, a program's wrapper that names no reason of its own, ranks below
        every entry that does, even a last-resort errno text on the same line), its priority,
        then the literal characters it requires (text outside classes, escapes and optional
        parts), then its length."""
        return _specificity(self.pattern, self.priority, self.catch_all)

    def regex(self) -> re.Pattern[str]:
        return _compile(self.pattern, self.flags)

    def key(self) -> str:
        """The anchor word (given, or the longest literal word common to pattern and examples)."""
        if self.anchor is not None:
            return self.anchor.lower() if self.flags else self.anchor
        literal = list(_required_words(self.pattern)) or _LITERAL_WORD.findall(
            _strip_classes(self.pattern)
        )
        common = [
            w
            for w in literal
            if all(
                (w.lower() if self.flags else w)
                in set(_WORD.findall(ex.lower() if self.flags else ex))
                for ex in self.examples
            )
        ]
        if not common:
            raise ValueError(
                f"{self.id}: no literal word of the pattern is in every example; give `anchor`"
            )
        best: str = max(common, key=len)
        return best.lower() if self.flags else best


def _strip_classes(pattern: str) -> str:
    """Remove character classes and escapes so only literal text is left for anchor words."""
    out = re.sub(r"\[[^\]]*\]", " ", pattern)
    out = re.sub(r"\(\?P<\w+>", "(", out)
    out = re.sub(r"\\[A-Za-z]", " ", out)
    # words followed by an optional/repeat quantifier are not guaranteed to be there
    out = re.sub(r"\w+\)?[?*]", " ", out)
    out = re.sub(r"\([^()]*\|[^()]*\)", " ", out)
    return out


@cache
def _sre_parse(pattern: str) -> Any:
    """The stdlib's own parse of a pattern (``re._parser``: internal, so callers fall back)."""
    return importlib.import_module("re._parser").parse(pattern)


@cache
def _required_words(pattern: str) -> tuple[str, ...]:
    """Whole words (3+ characters) that every match of ``pattern`` contains: words of literal
    runs at the pattern's top level or in groups that must match, never in alternatives or
    optional parts, and not cut by a class at either end of their run."""
    try:
        return _required_words_of(_sre_parse(pattern))
    except Exception:  # an internal API: fall back to no derived words
        return ()


def _required_words_of(items: Any) -> tuple[str, ...]:
    runs: list[str] = []

    def walk(items: Any) -> None:
        run: list[str] = []
        for op, arg in items:
            name = str(op)
            if name == "LITERAL":
                run.append(chr(arg))
                continue
            if name == "AT":  # \b, ^, $: zero-width, a clean edge
                runs.append("".join(run))
                run = []
                continue
            runs.append("".join(run) + "\x00")  # \x00: the run is cut by something else
            run = ["\x00"]
            if name == "SUBPATTERN":
                walk(arg[-1])
            elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") and int(arg[0]) >= 1:
                walk(arg[2])
        runs.append("".join(run))

    walk(items)
    words: list[str] = []
    for run in runs:
        for m in _WORD.finditer(run):
            w = m.group()
            cut_before = m.start() > 0 and run[m.start() - 1] == "\x00"
            cut_after = m.end() < len(run) and run[m.end()] == "\x00"
            edge = (m.start() == 0 and run.startswith("\x00")) or cut_before or cut_after
            if len(w) >= 3 and not edge:
                words.append(w)
    return tuple(words)


_MAX_SKELETONS = 64
"""Alternation expansions :func:`_extra_anchors` reads before it gives up on an entry."""


def _skeletons(items: Any) -> list[str] | None:
    """Every way through the alternations of ``items`` as literal text, the parts that are not
    literal written ``\x00`` (optional parts left out); ``None`` past :data:`_MAX_SKELETONS`."""
    out = [""]
    for op, arg in items:
        name = str(op)
        parts: list[str] | None
        if name == "LITERAL":
            parts = [chr(arg)]
        elif name == "AT":
            parts = [" "]  # \b, ^, $: a clean word edge
        elif name == "BRANCH":
            parts = []
            for alt in arg[1]:
                sub = _skeletons(alt)
                if sub is None:
                    return None
                parts += sub
        elif name in ("SUBPATTERN", "ATOMIC_GROUP"):
            parts = _skeletons(arg[-1] if name == "SUBPATTERN" else arg)
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") and int(arg[0]) >= 1:
            sub = _skeletons(arg[2])
            parts = None if sub is None else [p + "\x00" for p in sub]
        else:
            parts = ["\x00"]
        if parts is None or len(out) * len(parts) > _MAX_SKELETONS:
            return None
        out = [a + b for a in out for b in parts]
    return out


def _extra_anchors(pattern: str, key: str, folded: bool) -> tuple[str, ...]:
    """More index words for an entry whose anchor not every match holds, so that no match goes
    untried: a line is tried against an entry only when it holds one of the entry's index words.
    An anchor inside an alternative (``Connection was reset by remote peer|Receiver connection
    aborted`` with anchor ``remote``) or an optional part leaves the other branch's lines
    unmatched. The pattern is expanded into its ways through the alternations
    (:func:`_skeletons`); each way whose literal text lacks the anchor adds its longest whole
    word (one not glued to a non-literal part; failing that, its longest word). Where the
    pattern has too many ways, the longest word every match holds is taken; failing that, the
    ways through the first group that alone has few enough of them."""

    def norm(word: str) -> str:
        return word.lower() if folded else word

    try:
        items = _sre_parse(pattern)
        required = [norm(w) for w in _required_words_of(items)]
    except Exception:  # an internal API: no extra words then
        return ()
    if key in required:
        return ()

    def cover(ways: list[str]) -> tuple[list[str], bool]:
        out: list[str] = []
        complete = True
        for way in ways:
            matches = [m for m in _WORD.finditer(way) if len(m.group()) >= 3]
            whole = [
                norm(m.group())
                for m in matches
                if (m.start() == 0 or way[m.start() - 1] != "\x00")
                and (m.end() == len(way) or way[m.end()] != "\x00")
            ]
            # a word next to a non-literal part (``unr {0,2}\|``) is a whole word of most
            # lines all the same: better than leaving the way untried
            words = whole or [norm(m.group()) for m in matches]
            if key in words or key in (norm(m.group()) for m in matches):
                continue
            if words:
                out.append(max(words, key=len))
            else:
                complete = False
        return out, complete

    ways = _skeletons(items)
    if ways is not None:
        found, _ = cover(ways)
    elif required:
        found = [max(required, key=len)]
    else:
        # Too many ways: cover one group every match passes through, on its own.
        found = []
        for op, arg in items:
            if str(op) not in ("SUBPATTERN", "BRANCH"):
                continue
            ways = _skeletons([(op, arg)])
            if ways is None:
                continue
            found, complete = cover(ways)
            if complete:
                break
    return tuple(dict.fromkeys(w for w in found if w != key))


@cache
def _longest_literal(pattern: str) -> str:
    """The longest run of literal characters every match of ``pattern`` contains (checked with
    ``in`` before the regular expression is tried: most candidate lines fail it at C speed)."""
    best, run = "", []
    try:
        items = list(_sre_parse(pattern))
    except Exception:  # an internal API: no prefilter then
        return ""
    for op, arg in items:
        if str(op) == "LITERAL":
            run.append(chr(arg))
            continue
        if len(run) > len(best):
            best = "".join(run)
        run = []
    if len(run) > len(best):
        best = "".join(run)
    return best


@cache
def _specificity(pattern: str, priority: int, catch_all: bool) -> tuple[int, int, int, int]:
    return (0 if catch_all else 1, priority, _required_literals(pattern), len(pattern))


def _required_literals(pattern: str) -> int:
    """The number of literal characters every match of ``pattern`` contains: literals count 1,
    a class or wildcard 0, an alternation its poorest branch, a repeat its minimum count."""
    def walk(items: Any) -> int:
        total = 0
        for op, arg in items:
            name = str(op)
            if name == "LITERAL":
                total += 1
            elif name == "SUBPATTERN":
                total += walk(arg[-1])
            elif name == "BRANCH":
                total += min((walk(b) for b in arg[1]), default=0)
            elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                total += int(arg[0]) * walk(arg[2])
            elif name == "ATOMIC_GROUP":
                total += walk(arg)
        return total

    try:
        return walk(_sre_parse(pattern))
    except Exception:  # an internal API: fall back to the pattern's length
        return len(pattern)


@cache
def _compile(pattern: str, flags: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE if flags else 0)


class Catalogue(StrictModel):
    """The messages of one program."""

    program: str = Field(pattern=r"^[a-z0-9\-]+$")
    title: str
    url: str | None = None
    notes: str = ""
    entries: Tup[Signature] = Field(min_length=1)

    @model_validator(mode="after")
    def _ids(self) -> Catalogue:
        seen: set[str] = set()
        for e in self.entries:
            if not e.id.startswith(self.program + "."):
                raise ValueError(f"{e.id}: ids in catalogue {self.program!r} start with it")
            if e.id in seen:
                raise ValueError(f"{e.id}: duplicate id")
            seen.add(e.id)
        return self


def _read_catalogues() -> tuple[Catalogue, ...]:
    out: list[Catalogue] = []
    ids: set[str] = set()
    for name, cat in load_packaged_yaml("checks/signatures", Catalogue):
        for e in cat.entries:
            if e.id in ids:
                raise ValueError(f"{name}: signature {e.id} is defined twice")
            ids.add(e.id)
        out.append(cat)
    return tuple(out)


IndexFacts = tuple[str, str, tuple[int, int, int, int], tuple[str, ...]]
"""What the index needs of an entry: its anchor word, its longest required literal (``""`` for
case-folded entries), its specificity and the extra index words an anchor inside an alternative
needs (:func:`_extra_anchors`). Derived from the pattern by the stdlib's parser."""


def _index_facts(sig: Signature) -> IndexFacts:
    key = sig.key()
    literal = "" if sig.flags else _longest_literal(sig.pattern)
    return key, literal, sig.specificity(), _extra_anchors(sig.pattern, key, bool(sig.flags))


def _build() -> tuple[tuple[Catalogue, ...], dict[str, IndexFacts]]:
    cats = _read_catalogues()
    return cats, {sig.id: _index_facts(sig) for cat in cats for sig in cat.entries}


_DEPENDS_ON = ("checks/causes.yaml", "checks/diagnose/signatures.py", "model/base.py",
               "yamlfile.py")


@cache
def catalogue_sources() -> tuple[bytes, ...]:
    """Every file the loaded catalogues depend on: the catalogues, the cause classes, and the
    modules that define and validate their types (a change to any is a new cache key). Read
    once per process: the catalogue cache and the nearest-entry cache both key on it."""
    pkg = resources.files("aifabric")
    parts: list[bytes] = []
    for entry in sorted(pkg.joinpath("checks/signatures").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml"):
            parts += [entry.name.encode(), entry.read_bytes()]
    for rel in _DEPENDS_ON:
        node = pkg
        for piece in rel.split("/"):
            node = node.joinpath(piece)
        parts += [rel.encode(), node.read_bytes()]
    return tuple(parts)


@cache
def _loaded() -> tuple[tuple[Catalogue, ...], dict[str, IndexFacts]]:
    return cached("signatures", catalogue_sources(), _build)


def all_catalogues() -> tuple[Catalogue, ...]:
    """Every catalogue shipped in ``checks/signatures/*.yaml``, by program name (validated
    once per package version and kept in the user's cache: :mod:`aifabric.cache`)."""
    return _loaded()[0]


@dataclass(frozen=True, slots=True)
class SignatureHit:
    """One line recognised by one catalogue entry."""

    signature: Signature
    program: str
    groups: dict[str, str]
    span: tuple[int, int] = (0, 0)
    """Where the pattern matched in the line (start, end)."""


class SignatureIndex:
    """Every entry, indexed by anchor word, to match lines fast (see the module docstring).

    Where several entries match one line, the most specific wins (:meth:`Signature.specificity`:
    an entry that reads the message before a ``catch_all`` wrapper, then priority, then the
    literal text a pattern requires), so a catalogue may hold a general entry (``NCCL WARN``)
    and particular ones beside it.
    """

    def __init__(
        self, catalogues: Iterable[Catalogue], facts: dict[str, IndexFacts] | None = None
    ) -> None:
        Entry = tuple[tuple[int, int, int, int], Signature, str, str]
        self.by_anchor: dict[str, list[Entry]] = defaultdict(list)
        self.folded: dict[str, list[Entry]] = defaultdict(list)
        self.entries: list[tuple[Signature, str]] = []
        self.cache: dict[str, tuple[tuple[SignatureHit, ...], bool]] = {}
        """Per-line results kept by the engine (a fleet's logs repeat the same lines)."""
        for cat in catalogues:
            for sig in cat.entries:
                self.entries.append((sig, cat.program))
                known = facts.get(sig.id) if facts is not None else None
                key, literal, spec, extra = known or _index_facts(sig)
                entry = (spec, sig, cat.program, literal)
                for word in (key, *extra):
                    (self.folded if sig.flags else self.by_anchor)[word].append(entry)
        for table in (self.by_anchor, self.folded):
            for entries in table.values():
                entries.sort(key=lambda e: e[0], reverse=True)

    def match(self, line: str, pos: int = 0, endpos: int | None = None) -> SignatureHit | None:
        """The most specific entry matching ``line[pos:endpos]``, or ``None``."""
        end = len(line) if endpos is None else endpos
        words = set(_WORD.findall(line, pos, end))
        best: tuple[tuple[int, int, int, int], Signature, str, re.Match[str]] | None = None
        for table, folded in ((self.by_anchor, False), (self.folded, True)):
            if not table:
                continue
            keys = {w.lower() for w in words} if folded else words
            for word in keys & table.keys():
                for spec, sig, program, literal in table[word]:
                    if best is not None and spec <= best[0]:
                        break
                    if literal and line.find(literal, pos, end) < 0:
                        continue
                    m = sig.regex().search(line, pos, end)
                    if m is not None:
                        best = (spec, sig, program, m)
                        break
        if best is None:
            return None
        _, sig, program, m = best
        groups = {k: v for k, v in m.groupdict().items() if v is not None}
        return SignatureHit(sig, program, groups, m.span())

    def match_all(self, line: str, limit: int = MAX_HITS_PER_LINE) -> tuple[SignatureHit, ...]:
        """The entries matching ``line``: the most specific, then the most specific in the text
        before and after it, and so on (at most ``limit``), for a paste that flattened several
        messages into one line (a log copied out of a web page, a traceback joined by a tracker).
        Text shorter than :data:`MIN_REST_CHARS` around a match is not searched again."""
        hits: list[SignatureHit] = []
        todo = [(0, len(line))]
        while todo and len(hits) < limit:
            pos, end = todo.pop()
            hit = self.match(line, pos, end)
            if hit is None:
                continue
            hits.append(hit)
            a, b = hit.span
            if end - b >= MIN_REST_CHARS:
                todo.append((b, end))
            if a - pos >= MIN_REST_CHARS:
                todo.append((pos, a))
        hits.sort(key=lambda h: h.span)
        return tuple(hits)

    def scan(self, lines: Iterable[str]) -> Iterator[tuple[int, SignatureHit]]:
        """(1-based line, hit) for every recognised line."""
        for n, line in enumerate(lines, 1):
            hit = self.match(line)
            if hit is not None:
                yield n, hit


@cache
def signature_by_id() -> dict[str, tuple[Signature, str]]:
    """Every entry by id, with its program."""
    return {s.id: (s, c.program) for c in all_catalogues() for s in c.entries}


@cache
def signature_index() -> SignatureIndex:
    """The index over every shipped catalogue."""
    cats, facts = _loaded()
    return SignatureIndex(cats, facts)
