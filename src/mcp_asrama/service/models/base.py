"""The declarative base every domain's tables derive from, and the columns of a dated record of one student."""

from datetime import date, datetime

from sqlalchemy import Date, DateTime, ForeignKey, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    """Declarative base of the service's tables."""


class StudentRecord:
    """A dated record of one student (a violation, a deposit, a visit): a random handle `id`, the student, the day,
    then the domain's own columns, then who recorded it (`dicatat_oleh`, the actor) and when (`dibuat`)."""

    id: Mapped[str] = mapped_column(String(32), primary_key=True, sort_order=-1)
    id_anak: Mapped[str] = mapped_column(ForeignKey("anak.id", ondelete="CASCADE"), sort_order=-1)
    tanggal: Mapped[date] = mapped_column(Date, sort_order=-1)
    dicatat_oleh: Mapped[str | None] = mapped_column(String(200), sort_order=1)
    dibuat: Mapped[datetime] = mapped_column(DateTime(timezone=True), sort_order=1)
