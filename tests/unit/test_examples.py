"""The bundled examples load, and say what the seed says about them."""

from __future__ import annotations

from pathlib import Path

import pytest

from aifabric.catalog import Catalog
from aifabric.checks import CheckContext, run_checks
from aifabric.design import load_fabric
from aifabric.topology.capacity import fabric_capacity
from tests.conftest import EXAMPLES


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.name)
def test_example_loads_and_checks(path: Path, catalog: Catalog) -> None:
    fabric = load_fabric(path, catalog)
    assert fabric.servers and fabric.links
    run_checks(CheckContext(fabric, catalog))


def test_s7_example_is_the_worked_example(catalog: Catalog) -> None:
    fabric = load_fabric(EXAMPLES / "s7-worked-example.yaml", catalog)
    cap = fabric_capacity(fabric)
    assert (cap.gpus, cap.servers, cap.leaves, cap.spines) == (1024, 128, 16, 8)
    assert cap.oversubscription == {"leaf": 1.0}
    assert run_checks(CheckContext(fabric, catalog)) == []


def test_s17_before_and_after(catalog: Catalog) -> None:
    before = load_fabric(EXAMPLES / "s17-case-study-before.yaml", catalog)
    after = load_fabric(EXAMPLES / "s17-case-study-after.yaml", catalog)
    b = {f.check for f in run_checks(CheckContext(before, catalog))}
    a = {f.check for f in run_checks(CheckContext(after, catalog))}
    fixed = {
        "design.middlebox-on-path",
        "design.transport",
        "design.switch-class",
        "design.legacy-three-tier",
    }
    assert fixed <= b
    assert not fixed & a
    for fabric in (before, after):
        assert sum(s.gpus for s in fabric.servers) == 64
        assert len(fabric.sites) == 2
    cap_after = fabric_capacity(after)
    assert cap_after.tiers == 2
    assert cap_after.oversubscription["leaf"] == 1.0
    assert after.transport == "roce" and not after.middleboxes


def test_rail_and_32k_examples(catalog: Catalog) -> None:
    rail = fabric_capacity(load_fabric(EXAMPLES / "rail-1024-400g.yaml", catalog))
    # 4 SUs x 8 rail leaves; each leaf: 32 x 400G down on 16 broken-out 800G ports, 16 x 800G
    # up; 32 leaves x 16 uplinks over 64-port spines = 8 spines
    assert (rail.servers, rail.leaves, rail.spines, rail.tiers) == (128, 32, 8, 2)
    assert rail.oversubscription == {"leaf": 1.0}
    big = fabric_capacity(load_fabric(EXAMPLES / "cluster-32k.yaml", catalog))
    assert big.gpus == 32768 and big.tiers == 3


def test_designed_examples_match_the_designer() -> None:
    import importlib.util  # noqa: PLC0415

    path = EXAMPLES.parent / "scripts" / "gen_examples.py"
    spec = importlib.util.spec_from_file_location("gen_examples", path)
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert load_fabric(EXAMPLES / "s7-worked-example.yaml", gen.load_catalog()) == gen.s7()
    assert load_fabric(EXAMPLES / "s17-case-study-after.yaml", gen.load_catalog()) == (
        gen.s17_after()
    ), "run `python scripts/gen_examples.py`"
