"""Achievements (issue 21): table prestasi, one row per achievement of a student (its field, level and a note),
indexed like the other dated records by student and day.

Written out in full, not read from the models: a revision stays what it was when it shipped.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"  # no branch labels, no dependencies


def upgrade() -> None:
    op.create_table(
        "prestasi",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("id_anak", sa.String(64), sa.ForeignKey("anak.id", ondelete="CASCADE"), nullable=False),
        sa.Column("tanggal", sa.Date, nullable=False),
        sa.Column("bidang", sa.String(10), nullable=False),
        sa.Column("tingkat", sa.String(10), nullable=False),
        sa.Column("keterangan", sa.String(500)),
        sa.Column("dicatat_oleh", sa.String(200)),
        sa.Column("dibuat", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_prestasi_anak_tanggal", "prestasi", ["id_anak", "tanggal"])
    op.create_index("ix_prestasi_tanggal", "prestasi", ["tanggal"])


def downgrade() -> None:
    op.drop_table("prestasi")
