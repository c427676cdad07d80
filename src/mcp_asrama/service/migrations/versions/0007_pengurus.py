"""The staff list (issue 22): table pengurus, one row per staff member by case-folded email, with roles, rooms and
classes as JSON lists, and what a local sign-in keeps (the password's Argon2id hash, failed attempts, a lock).

Written out in full, not read from the models: a revision stays what it was when it shipped.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"  # no branch labels, no dependencies


def upgrade() -> None:
    op.create_table(
        "pengurus",
        sa.Column("email", sa.String(254), primary_key=True),
        sa.Column("nama", sa.String(200), nullable=False),
        sa.Column("peran", sa.JSON, nullable=False),
        sa.Column("kamar", sa.JSON, nullable=False),
        sa.Column("kelas", sa.JSON, nullable=False),
        sa.Column("menulis", sa.Boolean, nullable=False),
        sa.Column("aktif", sa.Boolean, nullable=False),
        sa.Column("sandi", sa.String(200)),
        sa.Column("gagal", sa.Integer, nullable=False),
        sa.Column("terkunci_sampai", sa.DateTime(timezone=True)),
        sa.Column("diubah", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("pengurus")
