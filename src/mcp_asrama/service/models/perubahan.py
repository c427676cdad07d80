"""The change feed's outbox (`perubahan`): one row per committed change, keys only (never personal data)."""

from datetime import date, datetime

from sqlalchemy import BigInteger, Date, DateTime, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from mcp_asrama.service.models.base import Base


class Perubahan(Base):
    """One change: its kind and keys. `id` is given by the writer (the newest plus one, under a lock held until
    commit), so ids become visible in commit order; `waktu` is when it was recorded, for retention. No foreign
    keys: an event outlives the row it names."""

    __tablename__ = "perubahan"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    jenis: Mapped[str] = mapped_column(String(12))
    tanggal: Mapped[date | None] = mapped_column(Date)
    id_anak: Mapped[str | None] = mapped_column(String(64))
    kamar: Mapped[str | None] = mapped_column(String(100))
    waktu: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    __table_args__ = (Index("ix_perubahan_waktu", "waktu"),)
