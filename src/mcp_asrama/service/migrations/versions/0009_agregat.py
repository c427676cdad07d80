"""Aggregates kept, not recounted (issue 24): `hafalan_progres`, each student's memorisation summed up (distinct
ayat and juz by ziyadah, last deposit, the pace for each of the 28 days from the last ziyadah), and
`absensi_kumulatif`, beside each attendance record the student's count per status over all records up to that
day, packed in one integer. Both filled here from what is stored.

The running counts are one INSERT ... SELECT with a window function (SQLite 3.25+, PostgreSQL). The summaries merge
ayat intervals and weigh juz as `mcp_asrama.quran` does, which SQL cannot match to the last bit of a float: they are
computed by `crud.hafalan.summaries`, reading the deposits student by student.

The tables are written out in full, not read from the models: a revision stays what it was when it shipped.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03
"""

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"  # no branch labels, no dependencies

BITS = 15  # per status, hadir highest: the packing of crud.absensi_kumulatif
WEIGHTS = {"hadir": 1 << (3 * BITS), "izin": 1 << (2 * BITS), "sakit": 1 << BITS, "alpa": 1}
BATCH = 5000


def _weight(status: str) -> str:
    """SQL: what a record of `status` (a column) adds to the packed count."""
    whens = " ".join(f"WHEN '{s}' THEN {w}" for s, w in WEIGHTS.items())
    return f"(CASE {status} {whens} ELSE 0 END)"


_RUNNING = (
    "INSERT INTO absensi_kumulatif (id_anak, tanggal, jumlah) SELECT id_anak, tanggal, "  # noqa: S608 - constants only
    f"SUM({_weight('status')}) OVER (PARTITION BY id_anak ORDER BY tanggal ROWS UNBOUNDED PRECEDING) FROM absensi"
)


def _forget(old: str) -> str:
    """SQL statements: record `old` (OLD) leaves the running counts."""
    return (
        f"DELETE FROM absensi_kumulatif WHERE id_anak = {old}.id_anak AND tanggal = {old}.tanggal; "  # noqa: S608 - constants only
        f"UPDATE absensi_kumulatif SET jumlah = jumlah - {_weight(old + '.status')} "
        f"WHERE id_anak = {old}.id_anak AND tanggal > {old}.tanggal;"
    )


def _count(new: str) -> str:
    """SQL statements: record `new` (NEW) joins the running counts."""
    before = (
        "SELECT jumlah FROM absensi_kumulatif "  # noqa: S608 - constants only
        f"WHERE id_anak = {new}.id_anak AND tanggal < {new}.tanggal ORDER BY tanggal DESC LIMIT 1"
    )
    return (
        "INSERT INTO absensi_kumulatif (id_anak, tanggal, jumlah) "  # noqa: S608 - constants only
        f"VALUES ({new}.id_anak, {new}.tanggal, COALESCE(({before}), 0) + {_weight(new + '.status')}); "
        f"UPDATE absensi_kumulatif SET jumlah = jumlah + {_weight(new + '.status')} "
        f"WHERE id_anak = {new}.id_anak AND tanggal > {new}.tanggal;"
    )


_MOVED = "OLD.status IS NOT NEW.status OR OLD.tanggal IS NOT NEW.tanggal OR OLD.id_anak IS NOT NEW.id_anak"
_SQLITE_TRIGGERS = [
    f"CREATE TRIGGER absensi_kumulatif_insert AFTER INSERT ON absensi BEGIN {_count('NEW')} END",
    f"CREATE TRIGGER absensi_kumulatif_delete AFTER DELETE ON absensi BEGIN {_forget('OLD')} END",
    f"CREATE TRIGGER absensi_kumulatif_update AFTER UPDATE ON absensi WHEN {_MOVED} "
    f"BEGIN {_forget('OLD')} {_count('NEW')} END",
    "CREATE TRIGGER hafalan_progres_basi_insert AFTER INSERT ON hafalan BEGIN "
    "INSERT OR IGNORE INTO hafalan_progres_basi (id_anak) VALUES (NEW.id_anak); END",
    "CREATE TRIGGER hafalan_progres_basi_delete AFTER DELETE ON hafalan BEGIN "
    "INSERT OR IGNORE INTO hafalan_progres_basi (id_anak) VALUES (OLD.id_anak); END",
    "CREATE TRIGGER hafalan_progres_basi_update AFTER UPDATE ON hafalan BEGIN "
    "INSERT OR IGNORE INTO hafalan_progres_basi (id_anak) VALUES (OLD.id_anak); "
    "INSERT OR IGNORE INTO hafalan_progres_basi (id_anak) VALUES (NEW.id_anak); END",
]
_POSTGRES_TRIGGERS = [
    "CREATE FUNCTION absensi_kumulatif_ikut() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    f"IF TG_OP <> 'INSERT' THEN {_forget('OLD')} END IF; "
    f"IF TG_OP <> 'DELETE' THEN {_count('NEW')} END IF; "
    "RETURN NULL; END $$",
    "CREATE TRIGGER absensi_kumulatif_tulis AFTER INSERT OR DELETE ON absensi "
    "FOR EACH ROW EXECUTE FUNCTION absensi_kumulatif_ikut()",
    "CREATE TRIGGER absensi_kumulatif_ubah AFTER UPDATE ON absensi "
    f"FOR EACH ROW WHEN ({_MOVED.replace('IS NOT', 'IS DISTINCT FROM')}) EXECUTE FUNCTION absensi_kumulatif_ikut()",
    "CREATE FUNCTION hafalan_progres_tandai() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "IF TG_OP <> 'INSERT' THEN INSERT INTO hafalan_progres_basi (id_anak) VALUES (OLD.id_anak) "
    "ON CONFLICT DO NOTHING; END IF; "
    "IF TG_OP <> 'DELETE' THEN INSERT INTO hafalan_progres_basi (id_anak) VALUES (NEW.id_anak) "
    "ON CONFLICT DO NOTHING; END IF; "
    "RETURN NULL; END $$",
    "CREATE TRIGGER hafalan_progres_basi AFTER INSERT OR DELETE OR UPDATE ON hafalan "
    "FOR EACH ROW EXECUTE FUNCTION hafalan_progres_tandai()",
]
_DROP_POSTGRES = [
    "DROP TRIGGER IF EXISTS absensi_kumulatif_tulis ON absensi",
    "DROP TRIGGER IF EXISTS absensi_kumulatif_ubah ON absensi",
    "DROP TRIGGER IF EXISTS hafalan_progres_basi ON hafalan",
    "DROP FUNCTION IF EXISTS absensi_kumulatif_ikut()",
    "DROP FUNCTION IF EXISTS hafalan_progres_tandai()",
]
_DEPOSITS = "SELECT id_anak, jenis, surah, ayat_mulai, ayat_selesai, tanggal FROM hafalan ORDER BY id_anak, tanggal, id"


def _progres_table() -> sa.TableClause:
    return sa.table(
        "hafalan_progres",
        *(sa.column(c) for c in ("id_anak", "ayat", "juz", "hari_setoran_terakhir", "hari_ziyadah_terakhir", "laju")),
    )


def _backfill_progres(conn: sa.Connection) -> None:
    from mcp_asrama.service.crud.hafalan import summaries

    target = _progres_table()
    deposits = sa.text(_DEPOSITS).columns(tanggal=sa.Date())
    rows: list[dict[str, Any]] = []
    for row in summaries(conn.execute(deposits.execution_options(yield_per=BATCH))):
        rows.append(row)
        if len(rows) == BATCH:
            conn.execute(sa.insert(target), rows)
            rows.clear()
    if rows:
        conn.execute(sa.insert(target), rows)


def upgrade() -> None:
    conn = op.get_bind()
    op.create_table(
        "hafalan_progres",
        sa.Column("id_anak", sa.String(64), sa.ForeignKey("anak.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("ayat", sa.Integer, nullable=False),
        sa.Column("juz", sa.Float, nullable=False),
        sa.Column("hari_setoran_terakhir", sa.Integer, nullable=False),
        sa.Column("hari_ziyadah_terakhir", sa.Integer),
        sa.Column("laju", sa.String(112), nullable=False),
    )
    op.create_table("hafalan_progres_basi", sa.Column("id_anak", sa.String(64), primary_key=True))
    op.create_table(
        "absensi_kumulatif",
        sa.Column("id_anak", sa.String(64), primary_key=True),
        sa.Column("tanggal", sa.Date, primary_key=True),
        sa.Column("jumlah", sa.BigInteger, nullable=False),
        sqlite_with_rowid=False,
    )
    conn.execute(sa.text(_RUNNING))
    _backfill_progres(conn)
    for statement in _SQLITE_TRIGGERS if conn.dialect.name == "sqlite" else _POSTGRES_TRIGGERS:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for statement in _SQLITE_TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {statement.split()[2]}")
    else:
        for statement in _DROP_POSTGRES:
            op.execute(statement)
    for table in ("absensi_kumulatif", "hafalan_progres_basi", "hafalan_progres"):
        op.drop_table(table)
