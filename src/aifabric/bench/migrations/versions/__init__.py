"""alembic revisions of the bench store (loaded by alembic from their files, not imported)."""
