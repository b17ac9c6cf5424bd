"""Held-out configs will be messier than ours: every interpreter and every verify check must
survive real configs with lines dropped, duplicated or shuffled, never raising."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aifabric.catalog import load_catalog
from aifabric.checks import CheckContext, run_checks
from aifabric.design import load_fabric
from aifabric.dialects.host import interpret as host_interpret
from aifabric.dialects.load import SWITCH_KINDS, interpreter
from aifabric.dialects.observed import Observed
from aifabric.evidence import parse_text

ROOT = Path(__file__).resolve().parents[2] / "fixtures"
CONFIGS = [
    (kind, p.read_text(encoding="utf-8", errors="replace"))
    for kind in SWITCH_KINDS
    for p in sorted((ROOT / "evidence" / kind).glob("*/input.*"))
]
FABRIC = load_fabric(ROOT / "verify" / "_fabrics" / "small-l3.yaml", load_catalog())
CATALOG = load_catalog()


@st.composite
def mangled(draw: st.DrawFn) -> tuple[str, str]:
    kind, text = draw(st.sampled_from(CONFIGS))
    lines = text.splitlines()
    ops = draw(st.lists(st.tuples(st.sampled_from("dxs"), st.integers(0, 10_000)), max_size=8))
    for op, at in ops:
        if not lines:
            break
        i = at % len(lines)
        if op == "d":
            del lines[i]
        elif op == "x":
            lines.insert(i, lines[i])
        else:
            j = (at // 7) % len(lines)
            lines[i], lines[j] = lines[j], lines[i]
    return kind, "\n".join(lines) + "\n"


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mangled())
def test_interpret_and_verify_never_raise(case: tuple[str, str]) -> None:
    kind, text = case
    result = parse_text(text, kind)
    dev = interpreter(kind)(result, file="leaf01.cfg", name="leaf01")
    assert dev.role == "switch"
    ctx = CheckContext(FABRIC, CATALOG, Observed(devices={"leaf01": dev}))
    for f in run_checks(ctx, category="verify"):
        assert f.explanation and f.fix


HOSTS = [
    (kind, p.read_text(encoding="utf-8", errors="replace"))
    for kind in ("mlnx-qos", "ip-link", "ibv-devinfo", "rdma-traffic-class", "cma-roce-tos")
    for p in sorted((ROOT / "evidence" / kind).glob("*/input.*"))
]


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(HOSTS), st.integers(0, 50), st.integers(0, 50))
def test_host_captures_never_raise(case: tuple[str, str], drop: int, dup: int) -> None:
    kind, text = case
    lines = text.splitlines()
    if lines:
        del lines[drop % len(lines)]
    if lines:
        lines.insert(dup % len(lines), lines[dup % len(lines)])
    result = parse_text("\n".join(lines) + "\n", kind)
    dev = host_interpret([("srv01/capture", result)], name="srv01")
    ctx = CheckContext(FABRIC, CATALOG, Observed(devices={"srv01": dev}))
    run_checks(ctx, category="verify")
