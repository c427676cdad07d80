"""A class's or a room's students in name order straight from an index (issue 13): `(lower(kelas), nama, id)` and
`(lower(kamar), nama, id)` replace the indexes on `lower(kelas)` and `lower(kamar)` alone, so a page of one class
(`GET /anak?kelas=7A&limit=20`) is a range scan instead of sorting the whole class (5,556 rows at 100,000 students).

Written out in full, not read from the models: a revision stays what it was when it shipped. Like the baseline,
it tolerates a database that already has the new indexes or lacks the old ones (one created from the models before
its schema was versioned).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    for column in ("kelas", "kamar"):
        ordered: list[str | sa.TextClause] = [sa.text(f"lower({column})"), "nama", "id"]
        op.create_index(f"ix_anak_{column}_nama", "anak", ordered, if_not_exists=True)
        op.drop_index(f"ix_anak_{column}_ci", table_name="anak", if_exists=True)


def downgrade() -> None:
    for column in ("kelas", "kamar"):
        op.create_index(f"ix_anak_{column}_ci", "anak", [sa.text(f"lower({column})")], if_not_exists=True)
        op.drop_index(f"ix_anak_{column}_nama", table_name="anak", if_exists=True)
