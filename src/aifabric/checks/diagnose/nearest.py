"""The catalogue messages nearest to a line no entry matches: a cause suggested by likeness.

A catalogue entry matches a line only when its pattern does. The long tail of messages (a
program not catalogued, a version that words it differently, a line wrapped or cut) matches
none and is reported as "not recognised". Many such lines still share their vocabulary with
catalogued messages of the same cause (``ibv_reg_mr``, ``GID``, ``/dev/shm``, ``memlock``,
``NCCL_SOCKET_IFNAME``). This module ranks the catalogue entries by likeness to the line and,
when the nearest ones agree, suggests their cause class on the "not recognised" finding; the
finding stays a warning, says that the cause is a suggestion, and names the entries it rests on.

**Method** (a k-nearest-neighbour vote over tf-idf vectors, Manning, Raghavan and Schütze,
*Introduction to Information Retrieval*, 2008, ch. 6.2-6.3 and 14.3):

- tokens: words of at least three characters (letters, digits, ``_``; starting with a letter),
  lower-cased, without a short list of English stop words and hex-like words (addresses, GUIDs);
- each entry is a document: the tokens of its examples (the message as the program prints it)
  plus its ``meaning`` weighted by :data:`MEANING_WEIGHT`; term weight ``(1 + ln tf) * idf``,
  ``idf = ln((N + 1) / (df + 1)) + 1`` over the ``N`` entries;
- the line is a query over the same vocabulary (words no entry uses carry no weight); likeness
  is the cosine of the two vectors;
- the :data:`K` nearest entries vote for their cause with the square of their likeness (an
  entry of severity ``info``, a benign message, votes for "nothing wrong"; squaring lets a
  clearly nearest entry outweigh several faint ones, which the catalogue's growth brings in
  ever more of); a cause is suggested when the nearest
  likeness is at least :data:`MIN_SIMILARITY`, the cause holds at least :data:`MIN_SHARE` of
  the votes, and the line shares :data:`MIN_SHARED` distinctive words with the printed examples
  of the nearest entry that voted for it.

**Calibration** (``benchmarks/nearest_loo.py``): each entry's first example is classified with
that entry left out (a message the catalogues do not hold), and with its whole catalogue left
out (a program not catalogued; the idf weights stay those of all entries). With the constants
below, 2026-12-05, 3,314 entries: 1,219 of 3,084 messages got a suggestion, 76% of them the
entry's own cause, with the entry left out; 618 of 3,084, 71% right, with the whole catalogue
left out (with 2,816 entries, votes by plain likeness gave 926 at 80% and 474 at 70%, squared
likeness 1,031 at 78% and 524 at 70%; 2026-12-06, 4,271 entries with examples: 1,605 suggested
at 74%, and 798 at 68%). That is the precision a user should read into a
suggestion: about three in four on messages like the catalogued ones, less on the generic
lines real logs hold, which is why it is a warning that says so, never an error.

**On real lines** (``benchmarks/suggestion_real.py``, 2026-12-06): the lines of the line sets
that no catalogue recognises, each labelled by independent readers with the cause its own
words point to or ``none``. Frozen lines (never read): 212 of 669 got a suggestion, 50 right,
146 on lines that name no cause by themselves, 16 of the wrong class; where the line names a
cause and a suggestion is given it is right 50 times in 66. Dev lines: 38 of 169, 20 right, 15
on lines naming none. The vote does not tell a generic line from a specific one: a line that
shares a program's words (``coro_rpc_client``, ``syncd``) gets that program's commonest cause.
Two remedies tried on the dev lines and the catalogue did not pay: requiring a word whose
entries mostly share the cause (precision 53 % to 62 %, but half the right suggestions lost)
and a softmax regression over the same features (more coverage on catalogued messages left
out, less precision on the real lines).
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from aifabric.cache import cached
from aifabric.checks.diagnose.signatures import Catalogue, all_catalogues, catalogue_sources

__all__ = [
    "MEANING_WEIGHT",
    "MIN_SHARE",
    "MIN_SIMILARITY",
    "K",
    "NearestIndex",
    "Neighbour",
    "Suggestion",
    "nearest_index",
    "tokens",
]

K = 5
"""Entries that vote."""
MEANING_WEIGHT = 0.3
"""Weight of an entry's ``meaning`` words beside its examples' (the examples are what programs
print; the meaning is our prose, which names the cause's vocabulary)."""
MIN_SIMILARITY = 0.25
"""Cosine of the nearest entry below which nothing is suggested."""
MIN_SHARE = 0.6
"""Share of the K entries' votes the suggested cause must hold."""
MIN_SHARED = 2
"""Distinctive words (idf at least :data:`MIN_IDF`) the line must share with the printed
examples of the nearest entry of the suggested cause: ``error:`` or ``failed to start`` alone
suggest nothing."""
MIN_IDF = 3.0
"""A word used by at most about one entry in eight: ``error``, ``failed``, ``nccl``, ``warn``,
``device``, ``port``, ``memory``, ``gpu``, ``driver``, ``rdma`` are below."""

BENIGN = "info"
"""The vote of an entry of severity ``info``: the line is like a message that is not a fault."""

_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_]*[A-Za-z0-9]")
_HEXLIKE = re.compile(r"[0-9a-f]{6,}")
_STOP = frozenset(
    ("the", "and", "for", "with", "from", "this", "that", "was", "are", "has", "have", "you",
     "your", "its", "into", "not", "but", "all", "any", "our", "out", "use", "using", "via",
     "per", "one", "two", "then", "than", "when", "while")
)  # fmt: skip


def tokens(text: str) -> list[str]:
    """The words of ``text`` that carry meaning for likeness (module docstring)."""
    out: list[str] = []
    for raw in _TOKEN.findall(text):
        t = raw.lower()
        if len(t) >= 3 and t not in _STOP and not _HEXLIKE.fullmatch(t):
            out.append(t)
    return out


@dataclass(frozen=True, slots=True)
class Neighbour:
    """One catalogue entry near the line."""

    id: str
    program: str
    cause: str
    severity: str
    similarity: float


@dataclass(frozen=True, slots=True)
class Suggestion:
    """The cause the nearest entries agree on, with what it rests on."""

    cause: str
    similarity: float
    """Cosine of the nearest entry."""
    share: float
    """The cause's share of the K entries' votes."""
    neighbours: tuple[Neighbour, ...]


class NearestIndex:
    """tf-idf vectors of every catalogue entry with an inverted index (module docstring)."""

    def __init__(self, catalogues: Iterable[Catalogue]) -> None:
        entries: list[tuple[str, str, str, str, Counter[str], Counter[str]]] = []
        for cat in catalogues:
            for sig in cat.entries:
                said: Counter[str] = Counter()
                for ex in sig.examples:
                    said.update(tokens(ex))
                meant = Counter(tokens(sig.meaning))
                entries.append((sig.id, cat.program, sig.cause, sig.severity, said, meant))
        n = len(entries)
        df: Counter[str] = Counter()
        for *_, said, meant in entries:
            df.update(set(said) | set(meant))
        self.idf = {w: math.log((n + 1) / (c + 1)) + 1 for w, c in df.items()}
        self.entries = [Neighbour(e[0], e[1], e[2], e[3], 0.0) for e in entries]
        self.printed = [
            frozenset(w for w in e[4] if self.idf[w] >= MIN_IDF) for e in entries
        ]
        self.position = {e[0]: i for i, e in enumerate(entries)}
        self.postings: dict[str, list[tuple[int, float]]] = defaultdict(list)
        self.norms: list[float] = []
        for i, (*_, said, meant) in enumerate(entries):
            vec: dict[str, float] = defaultdict(float)
            for w, c in said.items():
                vec[w] += (1 + math.log(c)) * self.idf[w]
            for w, c in meant.items():
                vec[w] += MEANING_WEIGHT * (1 + math.log(c)) * self.idf[w]
            self.norms.append(math.sqrt(sum(x * x for x in vec.values())) or 1.0)
            for w, x in vec.items():
                self.postings[w].append((i, x))

    def nearest(self, text: str, *, skip: Sequence[bool] | None = None) -> list[Neighbour]:
        """The :data:`K` entries most like ``text``, nearest first (``skip[i]``: leave entry
        ``i`` out, for calibration)."""
        counts = Counter(w for w in tokens(text) if w in self.idf)
        query = {w: (1 + math.log(c)) * self.idf[w] for w, c in counts.items()}
        qnorm = math.sqrt(sum(x * x for x in query.values()))
        if not qnorm:
            return []
        dots: dict[int, float] = defaultdict(float)
        for w, x in query.items():
            for i, y in self.postings[w]:
                dots[i] += x * y
        scored = sorted(
            ((d / (qnorm * self.norms[i]), i) for i, d in dots.items()
             if skip is None or not skip[i]),
            key=lambda p: (-p[0], p[1]),
        )  # fmt: skip
        out: list[Neighbour] = []
        for sim, i in scored[:K]:
            e = self.entries[i]
            out.append(Neighbour(e.id, e.program, e.cause, e.severity, round(sim, 3)))
        return out

    def suggest(self, text: str, *, skip: Sequence[bool] | None = None) -> Suggestion | None:
        """The cause the nearest entries agree on (module docstring), or ``None``."""
        near = self.nearest(text, skip=skip)
        if not near or near[0].similarity < MIN_SIMILARITY:
            return None
        votes: dict[str, float] = defaultdict(float)
        for nb in near:
            votes[BENIGN if nb.severity == BENIGN else nb.cause] += nb.similarity**2
        cause = max(votes, key=lambda c: (votes[c], c == near[0].cause))
        share = votes[cause] / sum(votes.values())
        if cause == BENIGN or share < MIN_SHARE:
            return None
        backing = tuple(nb for nb in near if nb.cause == cause and nb.severity != BENIGN)
        words = set(tokens(text))
        if len(words & self.printed[self.position[backing[0].id]]) < MIN_SHARED:
            return None
        return Suggestion(cause, near[0].similarity, round(share, 2), backing)


@cache
def nearest_index() -> NearestIndex:
    """The index over every shipped catalogue (kept in the user's cache with the catalogues:
    :mod:`aifabric.cache`; building it takes about 0.3 s)."""
    parts = [*catalogue_sources(), b"nearest.py", Path(__file__).read_bytes()]
    return cached("nearest", parts, lambda: NearestIndex(all_catalogues()))
