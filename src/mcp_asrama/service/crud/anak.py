"""Students: the shared student filters (every domain's lists use them), search, one student, and the row lock
that writes take first."""

from collections.abc import Sequence
from datetime import date
from itertools import product
from typing import Any

from sqlalchemy import ColumnElement, Integer, column, func, or_, select, text
from sqlalchemy.orm import InstrumentedAttribute, Session

from mcp_asrama.names import fold
from mcp_asrama.service.crud.common import dialect, existing_ids
from mcp_asrama.service.db import NAME_INDEX
from mcp_asrama.service.models import Anak


def _case_variants(term: str) -> set[str]:
    """Every spelling of a short `term` in lower and upper case per character ("ét" → ét, éT, Ét, ÉT)."""
    return {"".join(chars) for chars in product(*({c, c.lower(), c.upper()} for c in term))}


def _fts_phrase(term: str) -> str:
    """`term` as one quoted FTS5 phrase: with the trigram tokenizer, a case-insensitive substring match."""
    return '"' + term.replace('"', '""') + '"'


def _uses_name_index(session: Session, nama: str | None) -> bool:
    return bool(nama) and dialect(session) == "sqlite" and len(nama or "") >= 3


def _nama_contains(session: Session, term: str) -> ColumnElement[bool]:
    """Case-insensitive substring match on the name, through the trigram index where there is one."""
    if dialect(session) == "sqlite":
        if not _uses_name_index(session, term):
            # Below the trigram index's reach; SQLite's lower() and LIKE fold ASCII only, so compare the
            # spellings in every case as the index (Unicode case folding) does for longer terms.
            return or_(*(func.instr(Anak.nama, v) > 0 for v in sorted(_case_variants(term))))
        matches = (
            text(f"SELECT rowid FROM {NAME_INDEX} WHERE {NAME_INDEX} MATCH :nama_fts")  # noqa: S608
            .bindparams(nama_fts=_fts_phrase(term))
            .columns(column("rowid", Integer))
        )
        return Anak.no.in_(matches)
    escaped = term.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return func.lower(Anak.nama).like(f"%{escaped}%", escape="\\")


FilterValues = str | Sequence[str] | None
"""A class or room filter: one value, or several (any of them matches); empty values are ignored."""


def _any_of(key: InstrumentedAttribute[str | None], values: FilterValues) -> ColumnElement[bool] | None:
    """The name whose key column is `key` equal to one of `values`, compared by their fold (whitespace and Unicode
    case, as the MCP server's scope check compares); None when no value is given."""
    wanted = list(dict.fromkeys(fold(v) for v in ([values] if isinstance(values, str) else values or ()) if v))
    if not wanted:
        return None
    return key == wanted[0] if len(wanted) == 1 else key.in_(wanted)


def anak_filters(
    session: Session,
    *,
    nama: str | None = None,
    kelas: FilterValues = None,
    kamar: FilterValues = None,
    status: str | None = None,
    id_anak: str | None = None,
) -> list[ColumnElement[bool]]:
    filters: list[ColumnElement[bool]] = []
    if nama:
        filters.append(_nama_contains(session, nama))
    filters.extend(f for f in (_any_of(Anak.kelas_kunci, kelas), _any_of(Anak.kamar_kunci, kamar)) if f is not None)
    if status:
        filters.append(Anak.status == status)
    if id_anak:
        filters.append(Anak.id == id_anak)
    return filters


def dated_filters(
    session: Session,
    tanggal: Any,
    *,
    id_anak: str | None,
    kelas: FilterValues,
    kamar: FilterValues,
    dari: date | None,
    sampai: date | None,
) -> list[ColumnElement[bool]]:
    """The student filters plus a range of days on `tanggal`, the date column of any domain's records."""
    filters = anak_filters(session, kelas=kelas, kamar=kamar, id_anak=id_anak)
    if dari is not None:
        filters.append(tanggal >= dari)
    if sampai is not None:
        filters.append(tanggal <= sampai)
    return filters


def cari_anak(
    session: Session,
    *,
    nama: str | None,
    kelas: FilterValues,
    kamar: FilterValues,
    status: str | None,
    limit: int,
    offset: int,
) -> tuple[int, Sequence[Anak]]:
    """Students matching every given filter, ordered by name: (total, one page)."""
    filters = anak_filters(session, nama=nama, kelas=kelas, kamar=kamar, status=status)
    if _uses_name_index(session, nama) and not (kelas or kamar or status):
        # The index alone knows how many names match (its triggers keep it in step with `anak`): no table reads.
        count = text(f"SELECT count(*) FROM {NAME_INDEX} WHERE {NAME_INDEX} MATCH :nama_fts")  # noqa: S608
        total = session.scalar(count, {"nama_fts": _fts_phrase(nama or "")}) or 0
    else:
        total = session.scalar(select(func.count()).select_from(Anak).where(*filters)) or 0
    page = session.scalars(select(Anak).where(*filters).order_by(Anak.nama, Anak.id).limit(limit).offset(offset))
    return total, page.all()


def get_anak(session: Session, id_anak: str) -> Anak | None:
    """One student by id, or None."""
    return session.scalar(select(Anak).where(Anak.id == id_anak))


def lock_students(session: Session, ids: Sequence[str]) -> set[str]:
    """Open a write transaction that holds these students until commit, and return which of `ids` exist.

    Writes that read before they write (history, overlaps, idempotency) call this first, so two of them on the
    same students run one after the other and lose no update: PostgreSQL locks the students' rows (in id order, so
    two writers never deadlock); SQLite takes its single write lock at once (waiting up to its busy_timeout).
    """
    if dialect(session) == "sqlite":
        session.execute(text("UPDATE anak SET no = no WHERE 0"))  # begins the write transaction, changes nothing
        return existing_ids(session, Anak.id, ids)
    found: set[str] = set()
    ordered = sorted(set(ids))
    for start in range(0, len(ordered), 500):
        chunk = ordered[start : start + 500]
        found.update(session.scalars(select(Anak.id).where(Anak.id.in_(chunk)).order_by(Anak.id).with_for_update()))
    return found
