"""The staff list (`pengurus`): who signs in, in which roles, for which rooms and classes; and what the sign-in
keeps of each person (the password's Argon2id hash, failed attempts, a lock), which never leaves the service."""

from datetime import datetime

from sqlalchemy import JSON, Boolean, DateTime, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from mcp_asrama.service.models.base import Base


def _none() -> list[str]:
    """A new row's rooms or classes when the write names none."""
    return []


class Pengurus(Base):
    """One staff member, by their case-folded `email`. `peran`, `kamar` and `kelas` are JSON lists (the same on
    SQLite and PostgreSQL; a school's few hundred staff are filtered by role in Python). `sandi`: the Argon2id hash
    of a local account's password (NULL: none set); `gagal` and `terkunci_sampai`: failed sign-ins and the lock
    they caused; `diubah`: when the record last changed."""

    __tablename__ = "pengurus"

    email: Mapped[str] = mapped_column(String(254), primary_key=True)
    nama: Mapped[str] = mapped_column(String(200))
    peran: Mapped[list[str]] = mapped_column(JSON)
    kamar: Mapped[list[str]] = mapped_column(JSON, default=_none)
    kelas: Mapped[list[str]] = mapped_column(JSON, default=_none)
    menulis: Mapped[bool] = mapped_column(Boolean, default=False)
    aktif: Mapped[bool] = mapped_column(Boolean, default=True)
    sandi: Mapped[str | None] = mapped_column(String(200))
    gagal: Mapped[int] = mapped_column(Integer, default=0)
    terkunci_sampai: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    diubah: Mapped[datetime] = mapped_column(DateTime(timezone=True))
