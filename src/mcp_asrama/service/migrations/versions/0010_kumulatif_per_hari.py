"""A whole school's attendance rekap reads a day's running counts at once (issue 24): an index on
`absensi_kumulatif` by day, then student, holding the count itself, so that the rows of one day are one index range
read without touching the table (`crud.absensi_kumulatif._last` joins them to the students).

Written out in full, not read from the models: a revision stays what it was when it shipped.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03
"""

from alembic import op

revision = "0010"
down_revision = "0009"  # no branch labels, no dependencies


def upgrade() -> None:
    op.create_index("ix_absensi_kumulatif_hari", "absensi_kumulatif", ["tanggal", "id_anak", "jumlah"])


def downgrade() -> None:
    op.drop_index("ix_absensi_kumulatif_hari", table_name="absensi_kumulatif")
