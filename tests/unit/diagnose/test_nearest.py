"""The nearest-message suggestion for lines no catalogue entry matches (diagnose.nearest).

The arithmetic is checked on a catalogue built here, against cosines worked out by hand; the
gates and the engine's use of it on real lines; the calibration of the shipped constants against
a floor, so that a change that makes suggestions worse fails.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from aifabric.checks.diagnose import diagnose, load_evidence
from aifabric.checks.diagnose import nearest as nmod
from aifabric.checks.diagnose.engine import UNRECOGNISED_CHECK
from aifabric.checks.diagnose.nearest import NearestIndex, nearest_index, tokens
from aifabric.checks.diagnose.signatures import Catalogue

BENCH = Path(__file__).resolve().parents[3] / "benchmarks"

NIXL_LINE = "E nixl_agent.cpp:404] createBackend: backend creation failed for 'UCX'"
"""source: https://github.com/smg-project/smg/pull/2520 (a NIXL worker bound by UCX to an mlx5
device that backs VM networking, not the RDMA fabric)."""


def _toy() -> NearestIndex:
    def entry(i: str, text: str, cause: str, meaning: str) -> dict[str, object]:
        return {
            "id": f"toy.{i}", "pattern": text, "examples": [text], "severity": "error",
            "cause": cause, "meaning": meaning, "source": {"url": "https://example.org/toy"},
        }  # fmt: skip

    cat = Catalogue.model_validate(
        {
            "program": "toy",
            "title": "toy",
            "entries": [
                entry("a", "alpha beta", "host.gid", "zeta"),
                entry("b", "gamma delta", "host.shm", "omega"),
                # fillers: with 20 entries a word of one entry has idf ln(21/2) + 1 = 3.35,
                # distinctive (MIN_IDF); each word is still in one entry only
                *(entry(f"f{i}", f"filler{i}", "host.resources", f"pad{i}") for i in range(18)),
            ],
        }
    )
    return NearestIndex([cat])


def test_cosine_matches_the_hand_computed_value() -> None:
    # every word is in one entry: one idf i for all, so entry a is (i, i, 0.3 i) over
    # (alpha, beta, zeta) and the query "alpha beta" (i, i, 0):
    # cos = 2 i^2 / (sqrt(2) i * i sqrt(2.09)) = sqrt(2 / 2.09)
    near = _toy().nearest("alpha beta")
    assert [n.id for n in near] == ["toy.a"]
    assert near[0].similarity == round(math.sqrt(2 / 2.09), 3)
    # one shared word: i^2 / (i * i sqrt(2.09)) = 1 / sqrt(2.09)
    assert _toy().nearest("alpha unknownword")[0].similarity == round(1 / math.sqrt(2.09), 3)


def test_words_no_entry_uses_give_nothing() -> None:
    assert _toy().nearest("nothing here matches") == []
    assert _toy().suggest("nothing here matches") is None


def test_a_suggestion_needs_two_distinctive_words() -> None:
    ix = _toy()
    assert ix.suggest("alpha beta") is not None  # both words shared, cosine 0.98
    assert ix.suggest("alpha") is None  # one word only: MIN_SHARED is 2


@given(st.text(max_size=200))
def test_tokens_are_lowercase_words_of_the_text(text: str) -> None:
    low = text.lower()
    for t in tokens(text):
        assert t == t.lower()
        assert len(t) >= 3
        assert t in low
        assert t not in nmod._STOP


def test_generic_lines_suggest_nothing() -> None:
    ix = nearest_index()
    for line in ("error:", "Worker failed to start.", "Error: failed", "Traceback"):
        assert ix.suggest(line) is None, line


def test_a_real_uncatalogued_line_gets_its_cause() -> None:
    got = nearest_index().suggest(NIXL_LINE)
    assert got is not None
    assert got.cause == "host.rdma-device"
    assert got.share >= nmod.MIN_SHARE
    assert got.neighbours[0].program == "nixl"


def test_the_engine_puts_the_suggestion_on_the_unrecognised_finding(tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    log.write_text(f"{NIXL_LINE}\nerror:\n", encoding="utf-8")
    found = [f for f in diagnose(load_evidence([log])).findings if f.check == UNRECOGNISED_CHECK]
    by_line = {f.evidence[0].text.strip(): f for f in found}
    hinted = by_line[NIXL_LINE]
    assert hinted.severity == "warning"
    assert hinted.cause == "host.rdma-device"
    assert "a suggestion" in hinted.message
    assert "cosine" in (hinted.explanation or "")
    assert by_line["error:"].cause is None


def test_calibration_stays_above_its_floor() -> None:
    sys.path.insert(0, str(BENCH))
    try:
        import nearest_loo  # noqa: PLC0415
    finally:
        sys.path.remove(str(BENCH))
    got = nearest_loo.calibrate()
    for mode in ("entry", "program"):
        assert got[mode]["precision"] >= 0.65, got
        assert got[mode]["coverage"] >= 0.10, got
