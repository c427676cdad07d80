"""Room and class names matched by one key everywhere (issue 19): `kamar.kunci`, `anak.kelas_kunci` and
`anak.kamar_kunci` hold each name's fold (`mcp_asrama.names.fold`: whitespace collapsed, Unicode case folded, as
the MCP server's scope check compares), filled here for the rows already stored; `(kelas_kunci, nama, id)` and
`(kamar_kunci, nama, id)` replace the indexes on `lower(kelas)` and `lower(kamar)` (SQL lower() made `Straße 1` and
`STRASSE 1` two rooms, and on SQLite also `Ü` and `ü`).

Stored names are left as they are. Rooms whose names fold together (`Al-Fatih  1` and `al-fatih 1`, stored before
this revision) are kept, both: they become one room for every filter and share their students' count; the upgrade
logs how many such names it found (never the names) so the school can merge them. New rooms cannot fold onto a
stored one (`crud.kamar.refuse_clashes`), so the key's index is not unique.

Written out in full, not read from the models: a revision stays what it was when it shipped. Like the baseline, it
tolerates a database that already has the keys and their indexes (one created from the models before its schema was
versioned).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03
"""

import logging
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from mcp_asrama.names import fold

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

log = logging.getLogger("mcp_asrama.service.db")

# (table, name column, key column, the key's length: casefold may make a name up to three times longer)
_KEYS = [
    ("kamar", "nama", "kunci", 300),
    ("anak", "kelas", "kelas_kunci", 60),
    ("anak", "kamar", "kamar_kunci", 300),
]


def _backfill(conn: sa.Connection, table: str, name: str, key: str) -> None:
    """Each distinct stored name's key, one UPDATE per name (a school has a few hundred)."""
    names = conn.execute(sa.text(f"SELECT DISTINCT {name} FROM {table} WHERE {name} IS NOT NULL")).scalars()  # noqa: S608
    update = sa.text(f"UPDATE {table} SET {key} = :key WHERE {name} = :name")  # noqa: S608
    rows = [{"key": fold(value), "name": value} for value in names]
    if rows:
        conn.execute(update, rows)


def upgrade() -> None:
    conn = op.get_bind()
    for table, name, key, length in _KEYS:
        if key not in {c["name"] for c in sa.inspect(conn).get_columns(table)}:
            op.add_column(table, sa.Column(key, sa.String(length)))
        _backfill(conn, table, name, key)
    op.create_index("ix_kamar_kunci", "kamar", ["kunci"], if_not_exists=True)
    for column in ("kelas", "kamar"):
        op.create_index(f"ix_anak_{column}_kunci", "anak", [f"{column}_kunci", "nama", "id"], if_not_exists=True)
        op.drop_index(f"ix_anak_{column}_nama", table_name="anak", if_exists=True)
    shared = conn.execute(
        sa.text(
            "SELECT count(*) FROM kamar WHERE kunci IN (SELECT kunci FROM kamar GROUP BY kunci HAVING count(*) > 1)"
        )
    ).scalar_one()
    if shared:
        log.warning(
            "%d room names fold onto another room's name (case or spacing only): kept, matched as one room", shared
        )


def downgrade() -> None:
    for column in ("kelas", "kamar"):
        ordered: list[str | sa.TextClause] = [sa.text(f"lower({column})"), "nama", "id"]
        op.create_index(f"ix_anak_{column}_nama", "anak", ordered, if_not_exists=True)
        op.drop_index(f"ix_anak_{column}_kunci", table_name="anak")
    op.drop_index("ix_kamar_kunci", table_name="kamar")
    for table, _name, key, _length in _KEYS:
        op.drop_column(table, key)
