"""Clinic visits (`kunjungan_klinik`): specific personal data under UU PDP (No. 27/2022)."""

from sqlalchemy import Index, String
from sqlalchemy.orm import Mapped, mapped_column

from mcp_asrama.service.models.base import Base, StudentRecord


class KunjunganKlinik(StudentRecord, Base):
    """A student's visit to the clinic. `keluhan`, `tindakan`, `obat` and `rujukan` are health data: never logged,
    returned only to the service's token holder (the MCP server shows them to clinic staff only)."""

    __tablename__ = "kunjungan_klinik"

    keluhan: Mapped[str] = mapped_column(String(500))
    kategori: Mapped[str] = mapped_column(String(20))
    tindakan: Mapped[str | None] = mapped_column(String(500))
    obat: Mapped[str | None] = mapped_column(String(500))
    rujukan: Mapped[str | None] = mapped_column(String(500))
    petugas: Mapped[str | None] = mapped_column(String(200))

    __table_args__ = (
        Index("ix_kunjungan_klinik_anak_tanggal", "id_anak", "tanggal"),
        Index("ix_kunjungan_klinik_tanggal", "tanggal"),
    )
