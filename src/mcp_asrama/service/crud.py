"""Queries and writes of the data service; routes stay thin and import only these functions."""

from collections.abc import Iterable, Sequence
from datetime import date
from itertools import product
from typing import Any

from sqlalchemy import ColumnElement, Integer, and_, column, func, or_, select, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from mcp_asrama.service.db import NAME_INDEX
from mcp_asrama.service.models import Absensi, Anak, Base, Kamar
from mcp_asrama.service.schemas import BELUM_DICATAT, STATUS_ABSENSI


def _dialect(session: Session) -> str:
    return session.get_bind().dialect.name


def _case_variants(term: str) -> set[str]:
    """Every spelling of a short `term` in lower and upper case per character ("ét" → ét, éT, Ét, ÉT)."""
    return {"".join(chars) for chars in product(*({c, c.lower(), c.upper()} for c in term))}


def _fts_phrase(term: str) -> str:
    """`term` as one quoted FTS5 phrase: with the trigram tokenizer, a case-insensitive substring match."""
    return '"' + term.replace('"', '""') + '"'


def _uses_name_index(session: Session, nama: str | None) -> bool:
    return bool(nama) and _dialect(session) == "sqlite" and len(nama or "") >= 3


def _nama_contains(session: Session, term: str) -> ColumnElement[bool]:
    """Case-insensitive substring match on the name, through the trigram index where there is one."""
    if _dialect(session) == "sqlite":
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


def anak_filters(
    session: Session,
    *,
    nama: str | None = None,
    kelas: str | None = None,
    kamar: str | None = None,
    status: str | None = None,
    id_anak: str | None = None,
) -> list[ColumnElement[bool]]:
    filters: list[ColumnElement[bool]] = []
    if nama:
        filters.append(_nama_contains(session, nama))
    # Both sides lowered by the database: Python's lower() and SQLite's (ASCII only) disagree on "Ü".
    if kelas:
        filters.append(func.lower(Anak.kelas) == func.lower(kelas))
    if kamar:
        filters.append(func.lower(Anak.kamar) == func.lower(kamar))
    if status:
        filters.append(Anak.status == status)
    if id_anak:
        filters.append(Anak.id == id_anak)
    return filters


def cari_anak(
    session: Session,
    *,
    nama: str | None,
    kelas: str | None,
    kamar: str | None,
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
    if _dialect(session) == "sqlite":
        session.execute(text("UPDATE anak SET no = no WHERE 0"))  # begins the write transaction, changes nothing
        return existing_ids(session, Anak.id, ids)
    found: set[str] = set()
    ordered = sorted(set(ids))
    for start in range(0, len(ordered), 500):
        chunk = ordered[start : start + 500]
        found.update(session.scalars(select(Anak.id).where(Anak.id.in_(chunk)).order_by(Anak.id).with_for_update()))
    return found


def daftar_kamar(session: Session) -> list[dict[str, Any]]:
    """Every room with `terisi`, the number of students whose `kamar` names it (case-insensitively)."""
    occupancy = (
        select(func.lower(Anak.kamar).label("kunci"), func.count().label("terisi"))
        .where(Anak.kamar.is_not(None))
        .group_by(func.lower(Anak.kamar))
        .subquery()
    )
    rooms = session.execute(
        select(Kamar, func.coalesce(occupancy.c.terisi, 0))
        .outerjoin(occupancy, occupancy.c.kunci == func.lower(Kamar.nama))
        .order_by(Kamar.gedung, Kamar.nama)
    )
    return [
        {"nama": k.nama, "gedung": k.gedung, "kapasitas": k.kapasitas, "musyrif": k.musyrif, "terisi": terisi}
        for k, terisi in rooms
    ]


def absensi_harian(
    session: Session,
    tanggal: date,
    *,
    kelas: str | None,
    kamar: str | None,
    status: str | None,
    semua_anak: bool = False,
    ids: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """One day's attendance records with each student's name, class and room, of the students `ids` only when
    given. With `semua_anak`, every student of the filter: one without a record has status `belum_dicatat` (and
    `status="belum_dicatat"` keeps only those)."""
    recorded = and_(Absensi.id_anak == Anak.id, Absensi.tanggal == tanggal)
    query = (
        select(Anak.id.label("id_anak"), Absensi.status, Absensi.keterangan, Anak.nama, Anak.kelas, Anak.kamar)
        .select_from(Anak)
        .join(Absensi, recorded, isouter=semua_anak)
        .where(*anak_filters(session, kelas=kelas, kamar=kamar))
        .order_by(Anak.kelas, Anak.nama, Anak.id)
    )
    if ids:
        query = query.where(Anak.id.in_(ids))
    if status == BELUM_DICATAT:
        query = query.where(Absensi.id_anak.is_(None))
    elif status:
        query = query.where(Absensi.status == status)
    return [{**r, "status": r["status"] or BELUM_DICATAT} for r in session.execute(query).mappings()]


def rekap_absensi(
    session: Session,
    dari: date,
    sampai: date,
    *,
    kelas: str | None,
    kamar: str | None,
    id_anak: str | None,
) -> list[dict[str, Any]]:
    """Per-student counts per status over [dari, sampai], most absences first."""
    counts = [func.count().filter(Absensi.status == s).label(s) for s in STATUS_ABSENSI]
    query = (
        select(Anak.id, Anak.nama, Anak.kelas, Anak.kamar, *counts)
        .join(Absensi, Absensi.id_anak == Anak.id)
        .where(Absensi.tanggal.between(dari, sampai))
        .where(*anak_filters(session, kelas=kelas, kamar=kamar, id_anak=id_anak))
        .group_by(Anak.no, Anak.id, Anak.nama, Anak.kelas, Anak.kamar)  # the integer key first: cheaper groups
    )
    rows: list[dict[str, Any]] = []
    for r in session.execute(query).mappings():
        per_status: dict[str, int] = {s: int(r[s] or 0) for s in STATUS_ABSENSI}
        rows.append(
            {
                "id_anak": r["id"],
                "nama": r["nama"],
                "kelas": r["kelas"],
                "kamar": r["kamar"],
                **per_status,
                "tidak_hadir": per_status["izin"] + per_status["sakit"] + per_status["alpa"],
            }
        )
    rows.sort(key=lambda r: (-r["tidak_hadir"], r["nama"], r["id_anak"]))
    return rows


def upsert(session: Session, model: type[Base], rows: Sequence[dict[str, Any]], key: Iterable[str]) -> None:
    """Insert `rows` into `model`'s table, updating the rows whose `key` columns already exist."""
    if not rows:
        return
    key = list(key)
    insert = postgresql.insert if _dialect(session) == "postgresql" else sqlite.insert
    statement = insert(model)
    updates = {c: statement.excluded[c] for c in rows[0] if c not in key}
    session.execute(statement.on_conflict_do_update(index_elements=key, set_=updates), rows)


def existing_ids(session: Session, column_: Any, ids: Sequence[str], chunk: int = 500) -> set[str]:
    """Which of `ids` are already stored in `column_`."""
    found: set[str] = set()
    for start in range(0, len(ids), chunk):
        found.update(session.scalars(select(column_).where(column_.in_(ids[start : start + chunk]))))
    return found


def is_empty(session: Session) -> bool:
    """True when the database holds no student and no room."""
    return session.scalar(select(Anak.id).limit(1)) is None and session.scalar(select(Kamar.nama).limit(1)) is None
