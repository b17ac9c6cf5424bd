"""The contract every render dialect keeps (architecture.md, "one module per vendor owns both
directions"):

* render → parse → verify: the rendered configs, read back exactly as ``verify --configs DIR``
  reads them, add no error finding to what the fabric alone gives, and every rendered device is
  read (nothing rendered lands in ``skipped``);
* render → parse → render is stable: the intent rebuilt from what the parser read
  (:func:`aifabric.dialects.intent.intent_from_observed`) renders to the same text;
* a change plan of a rendered config against itself is empty;
* every template names the public document it follows;
* the seed's S18 concept (PFC on queue 3 only, ECN on queue 3 at 50 KB / 100 KB) reads back as
  exactly that on every switch dialect.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from aifabric.catalog import load_catalog
from aifabric.cli.verify_cmd import VerifyRun, run_verify
from aifabric.design import load_fabric
from aifabric.dialects.intent import intent_from_observed
from aifabric.dialects.render import (
    BUILTIN,
    RenderResult,
    dialect_names,
    get_dialect,
    render_fabric,
    write_files,
)
from aifabric.model import Fabric

ROOT = Path(__file__).resolve().parents[2]
FABRICS = {
    "lossless-lab": ROOT / "examples" / "lossless-lab" / "fabric.yaml",
    "s18": ROOT / "examples" / "s18-switch-concept.yaml",
}
DIALECTS = dialect_names()
SWITCH_DIALECTS = [d for d in DIALECTS if get_dialect(d).role == "switch"]


@cache
def _fabric(name: str) -> Fabric:
    return load_fabric(FABRICS[name], load_catalog([]))


@cache
def _rendered(fabric: str, dialect: str, tmp: Path) -> tuple[RenderResult, VerifyRun]:
    cat = load_catalog([])
    fab = _fabric(fabric)
    res = render_fabric(fab, dialect, catalog=cat)
    out = tmp / f"{fabric}-{dialect}"
    write_files(res.files, out)
    return res, run_verify(fab, cat, configs=out)


@pytest.fixture(scope="module")
def tmp_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("render")


def test_builtin_dialects_are_registered() -> None:
    assert set(BUILTIN) <= set(DIALECTS)
    assert {"sonic", "eos", "nxos", "nvue", "host"} <= set(DIALECTS)


@pytest.mark.parametrize("fabric", sorted(FABRICS))
@pytest.mark.parametrize("dialect", DIALECTS)
def test_render_parse_verify_adds_no_error(fabric: str, dialect: str, tmp_root: Path) -> None:
    res, run = _rendered(fabric, dialect, tmp_root)
    assert res.files, "nothing rendered"
    base = run_verify(_fabric(fabric), load_catalog([]))
    before = {(f.check, f.target) for f in base.findings if f.severity == "error"}
    new = [f for f in run.findings if f.severity == "error" and (f.check, f.target) not in before]
    assert not new, "\n".join(f"{f.check} {f.target}: {f.message}" for f in new)
    assert run.observed is not None
    for name in res.intents:
        assert name in run.observed.devices, f"{name} not read back"
    read = {f.path for f in res.files if f.kind is not None}
    skipped = [s for s in run.observed.skipped if any(p in s for p in read)]
    assert not skipped, skipped


@pytest.mark.parametrize("fabric", sorted(FABRICS))
@pytest.mark.parametrize("dialect", DIALECTS)
def test_render_parse_render_is_stable(fabric: str, dialect: str, tmp_root: Path) -> None:
    res, run = _rendered(fabric, dialect, tmp_root)
    assert run.observed is not None
    d = get_dialect(dialect)
    for name, intent in res.intents.items():
        again = d.render(intent_from_observed(intent, run.observed.devices[name]))
        first = {f.path: f.text for f in res.files if f.device == name}
        assert {f.path: f.text for f in again} == first, name


@pytest.mark.parametrize("dialect", DIALECTS)
def test_plan_against_itself_is_empty(dialect: str, tmp_root: Path) -> None:
    res, _ = _rendered("lossless-lab", dialect, tmp_root)
    d = get_dialect(dialect)
    for f in res.files:
        if f.kind is None:
            continue
        plan = d.plan(f, f.text)
        assert (plan.added, plan.removed) == (0, 0), (f.path, plan.plan)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_templates_name_the_document_they_follow(dialect: str) -> None:
    d = get_dialect(dialect)
    assert d.follows and all(u.startswith("https://") for u in d.follows)
    module = BUILTIN.get(dialect, "").split(":")[0].rsplit(".", 1)[0]
    folder = ROOT / "src" / Path(*module.split(".")) / "templates"
    templates = sorted(folder.glob("*.j2"))
    assert templates, f"{folder}: no templates"
    for t in templates:
        head = "\n".join(t.read_text(encoding="utf-8").splitlines()[:8])
        assert "https://" in head, f"{t.name} does not name the document it follows"


@pytest.mark.parametrize("dialect", SWITCH_DIALECTS)
def test_s18_concept_reads_back(dialect: str, tmp_root: Path) -> None:
    res, run = _rendered("s18", dialect, tmp_root)
    assert run.observed is not None
    for name in res.intents:
        dev = run.observed.devices[name]
        for port in res.intents[name].ports:
            v = dev.view(port.name)
            assert v.pfc_priorities is not None and v.pfc_priorities.value == (3,), port.name
            q = v.queue_of_tc(v.tc_of_dscp(26) or 0)
            assert q == 3
            marks = [m for m in v.ecn if m.covers(3) and m.enabled is not False]
            assert marks, f"{name} {port.name}: no ECN on queue 3"
            assert (marks[0].kmin_bytes, marks[0].kmax_bytes) == (51200, 102400)
            assert not [m for m in v.ecn if m.enabled is not False and not m.covers(3)]
