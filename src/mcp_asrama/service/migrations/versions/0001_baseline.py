"""Baseline: the schema of the last release before versioned migrations.

Tables kamar, anak, absensi, riwayat_absensi, izin, idempotensi with their indexes, and the name index: on SQLite an
FTS5 trigram table kept in step by triggers, on PostgreSQL a pg_trgm GIN index on lower(nama) (left out, with a
warning, where pg_trgm is not available).

On an empty database this creates all of it. On a database of an earlier release (tables, no alembic_version) it
does what that release's init_schema did on every start: it creates the tables and indexes missing (a release before
izin lacks three tables), drops the index the current one replaced, and builds the name index over the students
already there; a database of the last release gains nothing. Written out in full, not read from models.py: a
revision stays what it was when it shipped.

Revision ID: 0001
Revises:
Create Date: 2026-12-01
"""

import logging
from collections.abc import Callable, Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.exc import DBAPIError

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

log = logging.getLogger("mcp_asrama.service.db")


def _kamar() -> None:
    op.create_table(
        "kamar",
        sa.Column("nama", sa.String(100), primary_key=True),
        sa.Column("gedung", sa.String(100), nullable=False),
        sa.Column("kapasitas", sa.Integer, nullable=False),
        sa.Column("musyrif", sa.String(200)),
    )


def _anak() -> None:
    op.create_table(
        "anak",
        sa.Column("no", sa.Integer, primary_key=True, autoincrement=True),  # SQLite's rowid: the FTS table's key
        sa.Column("id", sa.String(64), nullable=False, unique=True),
        sa.Column("nama", sa.String(200), nullable=False),
        sa.Column("kelas", sa.String(20), nullable=False),
        sa.Column("kamar", sa.String(100)),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("jenis_kelamin", sa.String(1)),
        sa.Column("nama_wali", sa.String(200)),
        sa.Column("nik", sa.String(16)),
        sa.Column("no_hp_wali", sa.String(20)),
        sa.Column("alamat", sa.String(500)),
        sa.Column("tanggal_lahir", sa.Date),
    )


def _idempotensi() -> None:
    op.create_table(
        "idempotensi",
        sa.Column("kunci", sa.String(128), primary_key=True),
        sa.Column("rute", sa.String(300), nullable=False),
        sa.Column("sidik", sa.String(64), nullable=False),
        sa.Column("status_code", sa.Integer, nullable=False),
        sa.Column("respons", sa.Text, nullable=False),
        sa.Column("waktu", sa.DateTime(timezone=True), nullable=False),
    )


def _absensi() -> None:
    op.create_table(
        "absensi",
        sa.Column("tanggal", sa.Date, primary_key=True),
        sa.Column("id_anak", sa.String(64), sa.ForeignKey("anak.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("status", sa.String(5), nullable=False),
        sa.Column("keterangan", sa.String(500)),
    )


def _riwayat_absensi() -> None:
    op.create_table(
        "riwayat_absensi",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("tanggal", sa.Date, nullable=False),
        sa.Column("id_anak", sa.String(64), sa.ForeignKey("anak.id", ondelete="CASCADE"), nullable=False),
        sa.Column("status_lama", sa.String(5)),
        sa.Column("status_baru", sa.String(5)),
        sa.Column("keterangan_lama", sa.String(500)),
        sa.Column("keterangan_baru", sa.String(500)),
        sa.Column("oleh", sa.String(200)),
        sa.Column("waktu", sa.DateTime(timezone=True), nullable=False),
        sa.Column("kunci", sa.String(128)),
    )


def _izin() -> None:
    op.create_table(
        "izin",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("id_anak", sa.String(64), sa.ForeignKey("anak.id", ondelete="CASCADE"), nullable=False),
        sa.Column("dari", sa.Date, nullable=False),
        sa.Column("sampai", sa.Date, nullable=False),
        sa.Column("jenis", sa.String(10), nullable=False),
        sa.Column("alasan", sa.String(500)),
        sa.Column("tanggal_kembali", sa.Date),
        sa.Column("dibuat_oleh", sa.String(200)),
        sa.Column("dibuat", sa.DateTime(timezone=True), nullable=False),
        sa.Column("selesai_oleh", sa.String(200)),
    )


# In the order the last release created them, each table with its indexes (name, columns or expressions).
_TABLES: list[tuple[str, Callable[[], None], list[tuple[str, list[str | sa.TextClause]]]]] = [
    ("kamar", _kamar, []),
    (
        "anak",
        _anak,
        [
            ("ix_anak_kelas_ci", [sa.text("lower(kelas)")]),
            ("ix_anak_nama_id", ["nama", "id"]),
            ("ix_anak_kamar_ci", [sa.text("lower(kamar)")]),
        ],
    ),
    ("idempotensi", _idempotensi, []),
    ("absensi", _absensi, [("ix_absensi_anak_tanggal_status", ["id_anak", "tanggal", "status"])]),
    ("riwayat_absensi", _riwayat_absensi, [("ix_riwayat_absensi_anak_tanggal", ["id_anak", "tanggal", "id"])]),
    ("izin", _izin, [("ix_izin_anak_dari", ["id_anak", "dari"])]),
]
# An index of an earlier release that ix_absensi_anak_tanggal_status replaced.
_SUPERSEDED_INDEXES = ["ix_absensi_anak_tanggal"]

_SQLITE_NAME_INDEX = [
    "CREATE VIRTUAL TABLE IF NOT EXISTS anak_nama_fts USING fts5("
    "nama, content='anak', content_rowid='no', tokenize='trigram')",
    "CREATE TRIGGER IF NOT EXISTS anak_fts_insert AFTER INSERT ON anak BEGIN "
    "INSERT INTO anak_nama_fts(rowid, nama) VALUES (new.no, new.nama); END",
    "CREATE TRIGGER IF NOT EXISTS anak_fts_delete AFTER DELETE ON anak BEGIN "
    "INSERT INTO anak_nama_fts(anak_nama_fts, rowid, nama) VALUES ('delete', old.no, old.nama); END",
    "CREATE TRIGGER IF NOT EXISTS anak_fts_update AFTER UPDATE OF nama ON anak BEGIN "
    "INSERT INTO anak_nama_fts(anak_nama_fts, rowid, nama) VALUES ('delete', old.no, old.nama); "
    "INSERT INTO anak_nama_fts(rowid, nama) VALUES (new.no, new.nama); END",
]
_SQLITE_REBUILD_NAME_INDEX = "INSERT INTO anak_nama_fts(anak_nama_fts) VALUES ('rebuild')"
_POSTGRES_NAME_INDEX = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE INDEX IF NOT EXISTS ix_anak_nama_trgm ON anak USING gin (lower(nama) gin_trgm_ops)",
]


def upgrade() -> None:
    bind = op.get_bind()
    existing = set(sa.inspect(bind).get_table_names())
    had_students = "anak" in existing
    for name, create, indexes in _TABLES:
        if name not in existing:
            create()
        for index, columns in indexes:
            # On a table just created the index is new (created as create_all did); on one of an earlier
            # release it may be there already.
            op.create_index(index, name, columns, if_not_exists=name in existing)
    for index in _SUPERSEDED_INDEXES:
        op.execute(f"DROP INDEX IF EXISTS {index}")
    if bind.dialect.name == "sqlite":
        fresh_index = "anak_nama_fts" not in existing
        for statement in _SQLITE_NAME_INDEX:
            op.execute(statement)
        if fresh_index and had_students:
            op.execute(_SQLITE_REBUILD_NAME_INDEX)
    elif bind.dialect.name == "postgresql":
        try:
            with bind.begin_nested():
                for statement in _POSTGRES_NAME_INDEX:
                    bind.execute(sa.text(statement))
        except DBAPIError:
            log.warning("pg_trgm is not available: name search will scan the table")


def downgrade() -> None:
    raise NotImplementedError("the baseline is not undone (it would drop every table): restore a backup instead")
