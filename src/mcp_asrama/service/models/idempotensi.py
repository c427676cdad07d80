"""The stored answers of idempotent writes (`idempotensi`), shared by every domain's writes."""

from datetime import datetime

from sqlalchemy import DateTime, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from mcp_asrama.service.models.base import Base


class Idempotensi(Base):
    """The first answer to a write made with an Idempotency-Key, replayed when the same request comes again."""

    __tablename__ = "idempotensi"

    kunci: Mapped[str] = mapped_column(String(128), primary_key=True)
    rute: Mapped[str] = mapped_column(String(300))
    fingerprint: Mapped[str] = mapped_column("sidik", String(64))  # the stored column keeps its first name
    status_code: Mapped[int] = mapped_column(Integer)
    respons: Mapped[str] = mapped_column(Text)
    waktu: Mapped[datetime] = mapped_column(DateTime(timezone=True))
