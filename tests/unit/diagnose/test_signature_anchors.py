"""An entry is tried only on lines that hold one of its index words: no match may go untried.

The index words are the entry's anchor and, when the anchor sits in one branch of an
alternation or in an optional part, words of the other branches (``_extra_anchors``). Before
they existed, an entry such as ``Connection was reset by remote peer|Receiver connection
aborted`` with anchor ``remote`` never saw a ``Receiver connection aborted`` line. The property
test draws strings from the shipped patterns themselves and checks each holds an index word.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.checks.diagnose.signatures import (
    Catalogue,
    Signature,
    SignatureIndex,
    _extra_anchors,
    _index_facts,
    all_catalogues,
)

_WORD = re.compile(r"\w+")


def _catalogue(pattern: str, anchor: str, example: str, flags: str = "") -> Catalogue:
    entry = {
        "id": "test.entry",
        "pattern": pattern,
        "anchor": anchor,
        "examples": [example],
        "severity": "error",
        "cause": "application.peer-exit",
        "meaning": "a test entry",
        "source": {"url": "https://example.org/source"},
    }
    if flags:
        entry["flags"] = flags
    return Catalogue.model_validate({"program": "test", "title": "test", "entries": [entry]})


@pytest.mark.parametrize(
    ("pattern", "anchor", "other_branch"),
    [
        ("Connection was reset by remote peer|Receiver connection aborted", "remote",
         "Receiver connection aborted"),
        (r"(?:Unable to reserve tx rings|tx ring reservation failure)", "rings",
         "bnxt_en 0000:3b:00.0 eth0: tx ring reservation failure"),
        (r"Failed to (?:allocate RCFW Channel|allocate CREQ): (?P<rc>0x[0-9a-f]{1,8})", "RCFW",
         "bnxt_re: Failed to allocate CREQ: 0x1"),
        (r"peer (?P<p>\S+) is down(?: \(link lost\))?", "lost", "peer 10.0.0.2 is down"),
    ],
)
def test_a_line_of_the_branch_without_the_anchor_is_matched(
    pattern: str, anchor: str, other_branch: str
) -> None:
    example = {
        "remote": "Connection was reset by remote peer",
        "rings": "Unable to reserve tx rings",
        "RCFW": "Failed to allocate RCFW Channel: 0x2",
        "lost": "peer 10.0.0.2 is down (link lost)",
    }[anchor]
    index = SignatureIndex([_catalogue(pattern, anchor, example)])
    assert index.match(example) is not None
    hit = index.match(other_branch)
    assert hit is not None and hit.signature.id == "test.entry"


def test_a_required_anchor_needs_no_extra_word() -> None:
    assert _extra_anchors(r"NCCL WARN (?:Call to \w+ failed|Cuda failure)", "NCCL", False) == ()


def test_case_folded_entries_get_folded_extra_words() -> None:
    extra = _extra_anchors("Remote side aborted|LOCAL QP ERROR", "remote", True)
    assert extra == ("local",)
    index = SignatureIndex([_catalogue("Remote side aborted|LOCAL QP ERROR", "remote",
                                       "remote side aborted", flags="i")])
    hit = index.match("mlx5: local qp error on port 1")
    assert hit is not None


_ANCHORED = [
    s for c in all_catalogues() for s in c.entries if s.anchor and "|" in s.pattern
][::7]


@pytest.mark.parametrize("sig", _ANCHORED, ids=[s.id for s in _ANCHORED])
def test_strings_a_pattern_matches_hold_an_index_word(sig: object) -> None:
    assert isinstance(sig, Signature)
    key, _, _, extra = _index_facts(sig)
    words = {key, *extra}
    flags = re.IGNORECASE if sig.flags else 0

    # derandomize: the same strings on every run, so that CI cannot go red by chance
    @settings(max_examples=25, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(st.from_regex(re.compile(sig.pattern, flags), fullmatch=True,
                         alphabet=st.characters(codec="ascii")))
    def holds_an_index_word(text: str) -> None:
        # A drawn string glues the pattern's literals to random letters; only a branch that
        # lacks every index word (not a word glued to a neighbour) is a miss.
        tokens = set(_WORD.findall(text.lower() if sig.flags else text))
        glued = any(w in t for w in words for t in tokens)
        assert words & tokens or glued, f"{sig.id}: {text!r} holds none of {sorted(words)}"

    holds_an_index_word()
