"""Rooms (`kamar`) and students (`anak`)."""

from datetime import date

from sqlalchemy import Date, Index, Integer, String, func
from sqlalchemy.orm import Mapped, mapped_column

from mcp_asrama.service.models.base import Base


class Kamar(Base):
    """A dormitory room."""

    __tablename__ = "kamar"

    nama: Mapped[str] = mapped_column(String(100), primary_key=True)
    gedung: Mapped[str] = mapped_column(String(100))
    kapasitas: Mapped[int] = mapped_column(Integer)
    musyrif: Mapped[str | None] = mapped_column(String(200))


class Anak(Base):
    """A student; `nik`, `no_hp_wali`, `alamat` and `tanggal_lahir` are personal data."""

    __tablename__ = "anak"

    # A stable integer key: SQLite's rowid alias, which the trigram name index refers to.
    no: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(64), unique=True)
    nama: Mapped[str] = mapped_column(String(200))
    kelas: Mapped[str] = mapped_column(String(20))
    kamar: Mapped[str | None] = mapped_column(String(100))
    status: Mapped[str] = mapped_column(String(10), default="aktif")
    jenis_kelamin: Mapped[str | None] = mapped_column(String(1))
    nama_wali: Mapped[str | None] = mapped_column(String(200))
    nik: Mapped[str | None] = mapped_column(String(16))
    no_hp_wali: Mapped[str | None] = mapped_column(String(20))
    alamat: Mapped[str | None] = mapped_column(String(500))
    tanggal_lahir: Mapped[date | None] = mapped_column(Date)

    __table_args__ = (
        Index("ix_anak_nama_id", "nama", "id"),
        # A class's or a room's students in name order (revision 0004).
        Index("ix_anak_kelas_nama", func.lower(kelas), "nama", "id"),
        Index("ix_anak_kamar_nama", func.lower(kamar), "nama", "id"),
    )
