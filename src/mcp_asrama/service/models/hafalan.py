"""Qur'an memorisation deposits (`hafalan`, *setoran*)."""

from datetime import date, datetime

from sqlalchemy import Date, DateTime, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from mcp_asrama.service.models.base import Base


class Hafalan(Base):
    """One deposit: ayat `ayat_mulai`..`ayat_selesai` of `surah` (1-114), new (`ziyadah`) or reviewed (`murajaah`);
    `id` is a random handle, `dicatat_oleh` the actor."""

    __tablename__ = "hafalan"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    id_anak: Mapped[str] = mapped_column(ForeignKey("anak.id", ondelete="CASCADE"))
    tanggal: Mapped[date] = mapped_column(Date)
    jenis: Mapped[str] = mapped_column(String(10))
    surah: Mapped[int] = mapped_column(Integer)
    ayat_mulai: Mapped[int] = mapped_column(Integer)
    ayat_selesai: Mapped[int] = mapped_column(Integer)
    nilai: Mapped[int | None] = mapped_column(Integer)
    penguji: Mapped[str | None] = mapped_column(String(200))
    dicatat_oleh: Mapped[str | None] = mapped_column(String(200))
    dibuat: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    __table_args__ = (
        Index("ix_hafalan_anak_tanggal", "id_anak", "tanggal"),
        Index("ix_hafalan_tanggal", "tanggal"),
    )
