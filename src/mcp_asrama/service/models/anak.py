"""Rooms (`kamar`) and students (`anak`).

A room or class name is matched by its key (`mcp_asrama.names.fold`: whitespace collapsed, Unicode case folded),
which the database cannot compute (SQL lower() neither folds "ß" nor, on SQLite, anything beyond ASCII): each name
column has a `..._kunci` column beside it, filled from the name on every insert, Core or ORM (a Python-side
default), by `crud.common.upsert` on update, and at start by `crud.common.rekey_names` for rows another tool wrote.
`NAME_KEYS` says which key column follows which name column.
"""

from collections.abc import Callable
from datetime import date

from sqlalchemy import Date, Index, Integer, String
from sqlalchemy.engine.default import DefaultExecutionContext
from sqlalchemy.orm import Mapped, mapped_column

from mcp_asrama.names import fold
from mcp_asrama.service.models.base import Base

NAME_KEYS: dict[str, dict[str, str]] = {
    "kamar": {"nama": "kunci"},
    "anak": {"kelas": "kelas_kunci", "kamar": "kamar_kunci"},
}
"""Per table: name column -> the column holding its key."""
FOLD_GROWTH = 3  # casefold may lengthen a name (one character to at most three: "ΐ")


def key_of(name_column: str) -> Callable[[DefaultExecutionContext], str | None]:
    """A column default: the key of the row's `name_column` (None when the row has no name)."""

    def default(context: DefaultExecutionContext) -> str | None:
        value = context.get_current_parameters().get(name_column)  # type: ignore[no-untyped-call]
        return fold(value) if isinstance(value, str) else None

    return default


class Kamar(Base):
    """A dormitory room."""

    __tablename__ = "kamar"

    nama: Mapped[str] = mapped_column(String(100), primary_key=True)
    kunci: Mapped[str | None] = mapped_column(String(100 * FOLD_GROWTH), default=key_of("nama"))
    gedung: Mapped[str] = mapped_column(String(100))
    kapasitas: Mapped[int] = mapped_column(Integer)
    musyrif: Mapped[str | None] = mapped_column(String(200))

    __table_args__ = (Index("ix_kamar_kunci", "kunci"),)


class Anak(Base):
    """A student; `nik`, `no_hp_wali`, `alamat` and `tanggal_lahir` are personal data."""

    __tablename__ = "anak"

    # A stable integer key: SQLite's rowid alias, which the trigram name index refers to.
    no: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(64), unique=True)
    nama: Mapped[str] = mapped_column(String(200))
    kelas: Mapped[str] = mapped_column(String(20))
    kamar: Mapped[str | None] = mapped_column(String(100))
    kelas_kunci: Mapped[str | None] = mapped_column(String(20 * FOLD_GROWTH), default=key_of("kelas"))
    kamar_kunci: Mapped[str | None] = mapped_column(String(100 * FOLD_GROWTH), default=key_of("kamar"))
    status: Mapped[str] = mapped_column(String(10), default="aktif")
    jenis_kelamin: Mapped[str | None] = mapped_column(String(1))
    nama_wali: Mapped[str | None] = mapped_column(String(200))
    nik: Mapped[str | None] = mapped_column(String(16))
    no_hp_wali: Mapped[str | None] = mapped_column(String(20))
    alamat: Mapped[str | None] = mapped_column(String(500))
    tanggal_lahir: Mapped[date | None] = mapped_column(Date)

    __table_args__ = (
        Index("ix_anak_nama_id", "nama", "id"),
        # A class's or a room's students in name order (revision 0005).
        Index("ix_anak_kelas_kunci", "kelas_kunci", "nama", "id"),
        Index("ix_anak_kamar_kunci", "kamar_kunci", "nama", "id"),
    )
