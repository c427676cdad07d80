"""Pelanggaran, hafalan, kesehatan (issue 10): tables jenis_pelanggaran (seeded with the default kinds),
pelanggaran, hafalan and kunjungan_klinik, each with its indexes.

The default kinds are inserted only into an empty jenis_pelanggaran (this revision creates it, so: always); a
school changes or extends them with `mcp-asrama import jenis_pelanggaran`. Written out in full, not read from
the models: a revision stays what it was when it shipped.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# (kode, nama, kategori, poin): the default list of kinds of violation, as shipped with this revision.
DEFAULT_JENIS = [
    ("terlambat_sholat", "Terlambat sholat berjamaah", "ringan", 5),
    ("terlambat_kelas", "Terlambat masuk kelas", "ringan", 5),
    ("tidak_piket", "Tidak melaksanakan piket", "ringan", 5),
    ("seragam", "Tidak berseragam lengkap", "ringan", 5),
    ("tidur_kajian", "Tidur saat kajian", "ringan", 5),
    ("berbahasa_kasar", "Berkata kasar", "ringan", 10),
    ("keluar_tanpa_izin", "Keluar asrama tanpa izin", "sedang", 20),
    ("membawa_hp", "Membawa HP tanpa izin", "sedang", 25),
    ("bolos", "Tidak masuk kelas tanpa keterangan", "sedang", 20),
    ("terlambat_kembali", "Terlambat kembali dari izin", "sedang", 15),
    ("berkelahi", "Berkelahi", "berat", 50),
    ("merokok", "Merokok", "berat", 75),
    ("mencuri", "Mengambil barang orang lain", "berat", 100),
]


def upgrade() -> None:
    jenis = op.create_table(
        "jenis_pelanggaran",
        sa.Column("kode", sa.String(40), primary_key=True),
        sa.Column("nama", sa.String(200), nullable=False),
        sa.Column("kategori", sa.String(10), nullable=False),
        sa.Column("poin", sa.Integer, nullable=False),
    )
    op.bulk_insert(jenis, [{"kode": k, "nama": n, "kategori": c, "poin": p} for k, n, c, p in DEFAULT_JENIS])
    op.create_table(
        "pelanggaran",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("id_anak", sa.String(64), sa.ForeignKey("anak.id", ondelete="CASCADE"), nullable=False),
        sa.Column("tanggal", sa.Date, nullable=False),
        sa.Column("kategori", sa.String(10), nullable=False),
        sa.Column("jenis", sa.String(40), sa.ForeignKey("jenis_pelanggaran.kode"), nullable=False),
        sa.Column("poin", sa.Integer, nullable=False),
        sa.Column("keterangan", sa.String(500)),
        sa.Column("dicatat_oleh", sa.String(200)),
        sa.Column("dibuat", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_pelanggaran_anak_tanggal", "pelanggaran", ["id_anak", "tanggal"])
    op.create_index("ix_pelanggaran_tanggal", "pelanggaran", ["tanggal"])
    op.create_table(
        "hafalan",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("id_anak", sa.String(64), sa.ForeignKey("anak.id", ondelete="CASCADE"), nullable=False),
        sa.Column("tanggal", sa.Date, nullable=False),
        sa.Column("jenis", sa.String(10), nullable=False),
        sa.Column("surah", sa.Integer, nullable=False),
        sa.Column("ayat_mulai", sa.Integer, nullable=False),
        sa.Column("ayat_selesai", sa.Integer, nullable=False),
        sa.Column("nilai", sa.Integer),
        sa.Column("penguji", sa.String(200)),
        sa.Column("dicatat_oleh", sa.String(200)),
        sa.Column("dibuat", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_hafalan_anak_tanggal", "hafalan", ["id_anak", "tanggal"])
    op.create_index("ix_hafalan_tanggal", "hafalan", ["tanggal"])
    op.create_table(
        "kunjungan_klinik",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("id_anak", sa.String(64), sa.ForeignKey("anak.id", ondelete="CASCADE"), nullable=False),
        sa.Column("tanggal", sa.Date, nullable=False),
        sa.Column("keluhan", sa.String(500), nullable=False),
        sa.Column("kategori", sa.String(20), nullable=False),
        sa.Column("tindakan", sa.String(500)),
        sa.Column("obat", sa.String(500)),
        sa.Column("rujukan", sa.String(500)),
        sa.Column("petugas", sa.String(200)),
        sa.Column("dicatat_oleh", sa.String(200)),
        sa.Column("dibuat", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_kunjungan_klinik_anak_tanggal", "kunjungan_klinik", ["id_anak", "tanggal"])
    op.create_index("ix_kunjungan_klinik_tanggal", "kunjungan_klinik", ["tanggal"])


def downgrade() -> None:
    for table in ("kunjungan_klinik", "hafalan", "pelanggaran", "jenis_pelanggaran"):
        op.drop_table(table)
