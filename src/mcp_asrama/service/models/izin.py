"""Leave (`izin`)."""

from datetime import date, datetime

from sqlalchemy import Date, DateTime, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from mcp_asrama.service.models.base import Base


class Izin(Base):
    """A student's leave over [dari, sampai]; `tanggal_kembali` once ended. `id` is a random handle, `alasan` may be
    personal (kept here only, never copied into `absensi.keterangan`)."""

    __tablename__ = "izin"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    id_anak: Mapped[str] = mapped_column(ForeignKey("anak.id", ondelete="CASCADE"))
    dari: Mapped[date] = mapped_column(Date)
    sampai: Mapped[date] = mapped_column(Date)
    jenis: Mapped[str] = mapped_column(String(10))
    alasan: Mapped[str | None] = mapped_column(String(500))
    tanggal_kembali: Mapped[date | None] = mapped_column(Date)
    dibuat_oleh: Mapped[str | None] = mapped_column(String(200))
    dibuat: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    selesai_oleh: Mapped[str | None] = mapped_column(String(200))

    __table_args__ = (Index("ix_izin_anak_dari", "id_anak", "dari"),)
