"""Discipline (`pelanggaran`) and the school's list of kinds of violation (`jenis_pelanggaran`)."""

from datetime import date, datetime

from sqlalchemy import Date, DateTime, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from mcp_asrama.service.models.base import Base


class JenisPelanggaran(Base):
    """A kind of violation the school recognises, with its category and default points (school-configurable)."""

    __tablename__ = "jenis_pelanggaran"

    kode: Mapped[str] = mapped_column(String(40), primary_key=True)
    nama: Mapped[str] = mapped_column(String(200))
    kategori: Mapped[str] = mapped_column(String(10))
    poin: Mapped[int] = mapped_column(Integer)


class Pelanggaran(Base):
    """A recorded violation; `id` is a random handle, `keterangan` may be personal, `dicatat_oleh` the actor."""

    __tablename__ = "pelanggaran"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    id_anak: Mapped[str] = mapped_column(ForeignKey("anak.id", ondelete="CASCADE"))
    tanggal: Mapped[date] = mapped_column(Date)
    kategori: Mapped[str] = mapped_column(String(10))
    jenis: Mapped[str] = mapped_column(ForeignKey("jenis_pelanggaran.kode"))
    poin: Mapped[int] = mapped_column(Integer)
    keterangan: Mapped[str | None] = mapped_column(String(500))
    dicatat_oleh: Mapped[str | None] = mapped_column(String(200))
    dibuat: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    __table_args__ = (
        Index("ix_pelanggaran_anak_tanggal", "id_anak", "tanggal"),
        Index("ix_pelanggaran_tanggal", "tanggal"),
    )
