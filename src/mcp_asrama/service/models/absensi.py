"""Daily attendance (`absensi`) and the history of every change (`riwayat_absensi`)."""

from datetime import date, datetime

from sqlalchemy import Date, DateTime, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from mcp_asrama.service.models.base import Base


class Absensi(Base):
    """One student's attendance on one day: hadir, izin, sakit or alpa."""

    __tablename__ = "absensi"

    tanggal: Mapped[date] = mapped_column(Date, primary_key=True)
    id_anak: Mapped[str] = mapped_column(ForeignKey("anak.id", ondelete="CASCADE"), primary_key=True)
    status: Mapped[str] = mapped_column(String(5))
    keterangan: Mapped[str | None] = mapped_column(String(500))

    # Covers a student's date range with its status: /absensi/rekap reads only this index, never the table.
    __table_args__ = (Index("ix_absensi_anak_tanggal_status", "id_anak", "tanggal", "status"),)


class RiwayatAbsensi(Base):
    """One change of an attendance record: old → new (NULL: no record), who (`oleh`), when, which confirmation
    (`kunci`, the write's Idempotency-Key)."""

    __tablename__ = "riwayat_absensi"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tanggal: Mapped[date] = mapped_column(Date)
    id_anak: Mapped[str] = mapped_column(ForeignKey("anak.id", ondelete="CASCADE"))
    status_lama: Mapped[str | None] = mapped_column(String(5))
    status_baru: Mapped[str | None] = mapped_column(String(5))
    keterangan_lama: Mapped[str | None] = mapped_column(String(500))
    keterangan_baru: Mapped[str | None] = mapped_column(String(500))
    oleh: Mapped[str | None] = mapped_column(String(200))
    waktu: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    kunci: Mapped[str | None] = mapped_column(String(128))

    __table_args__ = (Index("ix_riwayat_absensi_anak_tanggal", "id_anak", "tanggal", "id"),)
