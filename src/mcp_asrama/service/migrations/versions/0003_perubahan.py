"""The change feed (issue 11): table perubahan, the outbox of every committed change (kind and keys only), with
an index on its time for retention.

Written out in full, not read from the models: a revision stays what it was when it shipped.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "perubahan",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("jenis", sa.String(12), nullable=False),
        sa.Column("tanggal", sa.Date),
        sa.Column("id_anak", sa.String(64)),
        sa.Column("kamar", sa.String(100)),
        sa.Column("waktu", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_perubahan_waktu", "perubahan", ["waktu"])


def downgrade() -> None:
    op.drop_table("perubahan")
