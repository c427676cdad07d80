"""Discipline (`pelanggaran`) and the school's list of kinds of violation (`jenis_pelanggaran`)."""

from sqlalchemy import ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from mcp_asrama.service.models.base import Base, StudentRecord


class JenisPelanggaran(Base):
    """A kind of violation the school recognises, with its category and default points (school-configurable)."""

    __tablename__ = "jenis_pelanggaran"

    kode: Mapped[str] = mapped_column(String(40), primary_key=True)
    nama: Mapped[str] = mapped_column(String(200))
    kategori: Mapped[str] = mapped_column(String(10))
    poin: Mapped[int] = mapped_column(Integer)


class Pelanggaran(StudentRecord, Base):
    """A recorded violation; `id` is a random handle, `keterangan` may be personal, `dicatat_oleh` the actor."""

    __tablename__ = "pelanggaran"

    kategori: Mapped[str] = mapped_column(String(10))
    jenis: Mapped[str] = mapped_column(ForeignKey("jenis_pelanggaran.kode"))
    poin: Mapped[int] = mapped_column(Integer)
    keterangan: Mapped[str | None] = mapped_column(String(500))

    __table_args__ = (
        Index("ix_pelanggaran_anak_tanggal", "id_anak", "tanggal"),
        Index("ix_pelanggaran_tanggal", "tanggal"),
    )
