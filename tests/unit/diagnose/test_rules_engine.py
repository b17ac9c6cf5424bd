"""The rule language: operators, validation, all/any/none, count, scope, message templates."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from pydantic import ValidationError

from aifabric.checks.diagnose import load_evidence
from aifabric.checks.diagnose.engine import diagnose, field_value
from aifabric.checks.diagnose.rules import Rule, all_rules, op_holds

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "diagnose"
LOG = FIX / "retry-exceeded-roce-v4mapped" / "nccl.log"  # 1 status=12, 2 status=5 completions


@pytest.mark.parametrize(
    ("op", "actual", "expected", "result"),
    [
        ("eq", 12, 12, True),
        ("ne", 12, 5, True),
        ("gt", 3, 2, True),
        ("ge", 2, 2, True),
        ("lt", 2, 3, True),
        ("le", 3, 2, False),
        ("in", "cuda", ["cuda", "dmabuf"], True),
        ("not_in", "cuda", ["dmabuf"], True),
        ("contains", "NET/IB : Got completion", "completion", True),
        ("not_contains", "abc", "z", True),
        ("matches", "status=12 opcode", r"status=1\d", True),
        ("exists", None, False, True),
        ("exists", 0, True, True),
        ("gt", None, 0, False),  # a missing value never passes a comparison
        ("ne", None, 3, True),
        ("gt", "abc", 3, False),  # incomparable types do not raise
    ],
)
def test_operators(op: str, actual: object, expected: object, result: bool) -> None:
    assert op_holds(op, actual, expected) is result


def _rule(**over: object) -> Rule:
    base: dict[str, object] = {
        "id": "diagnose.test",
        "title": "t",
        "symptom": "s",
        "layer": "fabric",
        "cause_class": "fabric.packet-loss",
        "confidence": 0.5,
        "when": {"all": [{"record": "problem", "as": "p", "where": {"status": {"eq": 12}}}]},
        "message": "{count} x status {p.status} from {p.peer_address}; {p.nope}",
        "cause": "c",
        "explanation": "e",
        "fix": "f",
        "refs": ["S20"],
    }
    base.update(over)
    return Rule.model_validate(base)


def test_rule_validation_refuses_bad_rules() -> None:
    with pytest.raises(ValidationError, match="seed id"):
        _rule(refs=["RFC 7938"])
    with pytest.raises(ValidationError, match="regular expression"):
        _rule(when={"all": [{"record": "problem", "where": {"message": {"matches": "("}}}]})
    with pytest.raises(ValidationError, match="at least one"):
        _rule(when={"none": [{"record": "problem"}]})
    with pytest.raises(ValidationError):
        _rule(when={"all": [{"record": "problem", "where": {"status": {"approx": 12}}}]})


def test_all_none_count_and_template() -> None:
    ev = load_evidence([LOG])
    (f,) = diagnose(ev, [_rule()], only_rules=True).findings
    assert f.message == "Fabric: 1 x status 12 from 172.36.143.59; ?"
    assert f.evidence[0].text == (LOG.read_text().splitlines()[0].strip()[:160])
    # none: a status-5 completion in the same input suppresses the rule
    suppressed = _rule(
        when={
            "all": [{"record": "problem", "where": {"status": {"eq": 12}}}],
            "none": [{"record": "problem", "where": {"status": {"eq": 5}}}],
        }
    )
    assert diagnose(ev, [suppressed], only_rules=True).findings == []
    # count: two status-5 completions, not three
    two = _rule(
        when={"all": [{"record": "problem", "where": {"status": {"eq": 5}}, "count": {"eq": 2}}]}
    )
    three = _rule(
        when={"all": [{"record": "problem", "where": {"status": {"eq": 5}}, "count": {"ge": 3}}]}
    )
    assert len(diagnose(ev, [two], only_rules=True).findings) == 1
    assert diagnose(ev, [three], only_rules=True).findings == []


def test_scope_input_is_one_finding_over_everything() -> None:
    ev = load_evidence([LOG, FIX / "socket-fallback-no-libibverbs" / "nccl.log"])
    rule = _rule(scope="input", when={"all": [{"record": "problem"}]}, message="{count} problems")
    (f,) = diagnose(ev, [rule], only_rules=True).findings
    assert f.target == "all input"


def test_match_scope_input_looks_past_the_subject() -> None:
    # the status-12 log names host hostname-test; the torchrun log names no host at all
    peer = FIX / "retry-exceeded-peer-killed"
    ev = load_evidence([peer / "nccl.log", peer / "launcher.log"])
    died = {"record": "problem", "where": {"category": {"eq": "process_exit"}}}
    when = {"all": [{"record": "problem", "where": {"status": {"eq": 12}}}], "none": [died]}
    own = _rule(when=when, message="{count}")
    assert [f.target for f in diagnose(ev, [own], only_rules=True).findings] == ["hostname-test"]
    across = _rule(when={**when, "none": [{**died, "scope": "input"}]}, message="{count}")
    assert diagnose(ev, [across], only_rules=True).findings == []


def test_field_paths_walk_attributes_and_int_keys() -> None:
    rec = SimpleNamespace(counters={"rx_discards_phy": 7}, by_prio={3: 11})
    assert field_value(rec, "counters.rx_discards_phy") == 7
    assert field_value(rec, "by_prio.3") == 11
    assert field_value(rec, "counters.nope") is None


def test_shipped_rules_load_and_have_unique_ids() -> None:
    rules = all_rules()
    assert len(rules) >= 20
    assert len({r.id for r in rules}) == len(rules)
    assert {r.layer for r in rules} == {"fabric", "host", "config", "application"}
