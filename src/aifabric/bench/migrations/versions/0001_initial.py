"""Initial bench store schema: runs, rows, run hosts, change log (aifabric issue 20).

Revision ID: 0001
Revises:
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Create the four tables and their indexes."""
    op.create_table(
        "bench_changes",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("at", sa.DateTime, nullable=False),
        sa.Column("cluster", sa.Text),
    )
    op.create_index("ix_bench_changes_cluster_at", "bench_changes", ["cluster", "at"])
    op.create_table(
        "bench_runs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("collective", sa.Text, nullable=False),
        sa.Column("tool", sa.Text, nullable=False),
        sa.Column("started", sa.DateTime, nullable=False),
        sa.Column("recorded", sa.DateTime, nullable=False),
        sa.Column("cluster", sa.Text),
        sa.Column("fabric_hash", sa.Text),
        sa.Column("nccl_version", sa.Text),
        sa.Column("driver_version", sa.Text),
        sa.Column("env", sa.Text, nullable=False),
        sa.Column("hosts", sa.Text, nullable=False),
        sa.Column("ranks", sa.Integer),
        sa.Column("change_id", sa.Integer, sa.ForeignKey("bench_changes.id")),
        sa.Column("label", sa.Text),
        sa.Column("source", sa.Text),
        sa.Column("pair_a", sa.Text),
        sa.Column("pair_b", sa.Text),
        sa.Column("avg_busbw_gbps", sa.Double),
    )
    op.create_index("ix_bench_runs_collective_started", "bench_runs", ["collective", "started"])
    op.create_index(
        "ix_bench_runs_collective_cluster_started",
        "bench_runs",
        ["collective", "cluster", "started"],
    )
    op.create_index("ix_bench_runs_cluster_started", "bench_runs", ["cluster", "started"])
    op.create_index("ix_bench_runs_started", "bench_runs", ["started"])
    op.create_index("ix_bench_runs_label", "bench_runs", ["label"])
    op.create_table(
        "bench_rows",
        sa.Column(
            "run_id",
            sa.Integer,
            sa.ForeignKey("bench_runs.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("size_bytes", sa.BigInteger, nullable=False),
        sa.Column("count", sa.BigInteger),
        sa.Column("dtype", sa.Text),
        sa.Column("redop", sa.Text),
        sa.Column("time_us", sa.Double, nullable=False),
        sa.Column("algbw_gbps", sa.Double, nullable=False),
        sa.Column("busbw_gbps", sa.Double, nullable=False),
        sa.Column("in_place", sa.Boolean, nullable=False),
        sa.Column("wrong", sa.Double),
        sqlite_with_rowid=False,
    )
    op.create_index("ix_bench_rows_run_size", "bench_rows", ["run_id", "size_bytes"])
    op.create_table(
        "bench_run_hosts",
        sa.Column(
            "run_id",
            sa.Integer,
            sa.ForeignKey("bench_runs.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("host", sa.Text, primary_key=True),
        sqlite_with_rowid=False,
    )
    op.create_index("ix_bench_run_hosts_host", "bench_run_hosts", ["host", "run_id"])


def downgrade() -> None:
    """Drop everything :func:`upgrade` made."""
    op.drop_table("bench_run_hosts")
    op.drop_table("bench_rows")
    op.drop_table("bench_runs")
    op.drop_table("bench_changes")
