"""alembic environment of the bench store.

Online only through a connection handed over in ``config.attributes["connection"]`` (what
:func:`aifabric.bench.store.open_store` does, inside its write-locked transaction), or one made
from ``sqlalchemy.url``; offline (``--sql``) renders the DDL for ``sqlalchemy.url``'s dialect.
The version table is ``config.attributes["version_table"]`` (``aifabric_bench_alembic_version``).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context

VERSION_TABLE_DEFAULT = "aifabric_bench_alembic_version"


def _run() -> None:
    config = context.config
    version_table = str(config.attributes.get("version_table", VERSION_TABLE_DEFAULT))
    url = config.get_main_option("sqlalchemy.url")
    if context.is_offline_mode():
        context.configure(url=url, literal_binds=True, version_table=version_table)
        with context.begin_transaction():
            context.run_migrations()
        return
    connection = config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection, version_table=version_table)
        with context.begin_transaction():
            context.run_migrations()
        return
    if not url:
        raise RuntimeError("no connection given and no sqlalchemy.url set")
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            context.configure(connection=conn, version_table=version_table)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


_run()
