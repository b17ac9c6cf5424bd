"""alembic migrations of the bench store's schema (run by :func:`aifabric.bench.store.open_store`).

``env.py`` is alembic's environment; ``versions/`` holds one revision per schema change. A new
revision: copy ``versions/0001_initial.py`` to ``versions/000N_what.py``, set ``revision`` and
``down_revision``, and write ``upgrade``/``downgrade`` with ``op`` calls (never import the live
:data:`~aifabric.bench.store.metadata`: a revision is frozen history).
``tests/unit/bench/test_store.py`` checks that head equals the live schema.
"""
