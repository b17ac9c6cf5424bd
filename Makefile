# Two entry points a fresh machine needs (README "Quick start"):
#   make demo   set up .venv and run the main job on a bundled example
#   make test   set up .venv and run the whole test suite (pytest, ruff, mypy --strict)
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
STAMP   = $(VENV)/.installed-dev

.PHONY: demo test lint bench docs examples clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/aifabric check examples/s7-worked-example.yaml

test: $(STAMP)
	$(PY) -m pytest -q -n 2
	$(VENV)/bin/ruff check src tests benchmarks scripts
	$(VENV)/bin/mypy

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks scripts
	$(VENV)/bin/mypy

bench: $(STAMP)
	$(PY) benchmarks/run.py

examples: $(STAMP)
	$(PY) scripts/gen_examples.py

docs: $(STAMP)
	$(PY) scripts/gen_checks_doc.py > docs/checks.md
	$(PY) scripts/gen_evidence_doc.py > docs/evidence.md
	$(PY) scripts/gen_rules_doc.py > docs/diagnose.md
	$(PY) scripts/gen_signatures_doc.py > docs/signatures.md

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
