"""Achievements (`prestasi`): a student's win or award, its field and level."""

from sqlalchemy import Index, String
from sqlalchemy.orm import Mapped, mapped_column

from mcp_asrama.service.models.base import Base, StudentRecord


class Prestasi(StudentRecord, Base):
    """One achievement: its field (`bidang`), level (`tingkat`) and what it was (`keterangan`); `id` is a random
    handle, `dicatat_oleh` the actor."""

    __tablename__ = "prestasi"

    bidang: Mapped[str] = mapped_column(String(10))
    tingkat: Mapped[str] = mapped_column(String(10))
    keterangan: Mapped[str | None] = mapped_column(String(500))

    __table_args__ = (
        Index("ix_prestasi_anak_tanggal", "id_anak", "tanggal"),
        Index("ix_prestasi_tanggal", "tanggal"),
    )
