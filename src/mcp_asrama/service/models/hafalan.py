"""Qur'an memorisation deposits (`hafalan`, *setoran*)."""

from sqlalchemy import Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from mcp_asrama.service.models.base import Base, StudentRecord


class Hafalan(StudentRecord, Base):
    """One deposit: ayat `ayat_mulai`..`ayat_selesai` of `surah` (1-114), new (`ziyadah`) or reviewed (`murajaah`);
    `id` is a random handle, `dicatat_oleh` the actor."""

    __tablename__ = "hafalan"

    jenis: Mapped[str] = mapped_column(String(10))
    surah: Mapped[int] = mapped_column(Integer)
    ayat_mulai: Mapped[int] = mapped_column(Integer)
    ayat_selesai: Mapped[int] = mapped_column(Integer)
    nilai: Mapped[int | None] = mapped_column(Integer)
    penguji: Mapped[str | None] = mapped_column(String(200))

    __table_args__ = (
        Index("ix_hafalan_anak_tanggal", "id_anak", "tanggal"),
        Index("ix_hafalan_tanggal", "tanggal"),
    )
