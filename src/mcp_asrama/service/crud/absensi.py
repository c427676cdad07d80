"""Attendance: one day with every student of the filter (as rows, or counted per status), a summary over a range,
and writes with their history: every change of a record (new, overwritten, removed) leaves a row in
`riwayat_absensi` saying old → new, who and under which confirmation, and an `absensi` event in the change feed;
unchanged records are neither written nor recorded. Callers hold the students first (`crud.anak.lock_students`) and
commit."""

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import and_, case, delete, func, or_, select, tuple_
from sqlalchemy.orm import Session

from mcp_asrama.service.crud import absensi_kumulatif, perubahan
from mcp_asrama.service.crud.anak import FilterValues, anak_filters
from mcp_asrama.service.crud.common import Rekap, upsert
from mcp_asrama.service.models import Absensi, Anak, RiwayatAbsensi
from mcp_asrama.service.schemas.common import BELUM_DICATAT, STATUS_ABSENSI


@dataclass(frozen=True)
class Catatan:
    """One student's day as it should be: `status` None removes the record."""

    tanggal: date
    id_anak: str
    status: str | None
    keterangan: str | None = None


@dataclass(frozen=True)
class Perubahan:
    """One student's day before and after a write (the columns of its `riwayat_absensi` row but who, when, key)."""

    tanggal: date
    id_anak: str
    status_lama: str | None
    status_baru: str | None
    keterangan_lama: str | None
    keterangan_baru: str | None

    @property
    def berubah(self) -> bool:
        return (self.status_lama, self.keterangan_lama) != (self.status_baru, self.keterangan_baru)


def current(session: Session, pairs: Sequence[tuple[date, str]]) -> dict[tuple[date, str], Absensi]:
    """The stored records of these (tanggal, id_anak) pairs."""
    found: dict[tuple[date, str], Absensi] = {}
    for start in range(0, len(pairs), 300):
        chunk = pairs[start : start + 300]
        rows = session.scalars(
            select(Absensi)
            .where(tuple_(Absensi.tanggal, Absensi.id_anak).in_(chunk))
            .execution_options(populate_existing=True)
        )
        found.update({(r.tanggal, r.id_anak): r for r in rows})
    return found


def _note(text: str | None) -> str | None:
    return (text or "").strip() or None


def differing(session: Session, expected: Sequence[Catatan]) -> list[str]:
    """The students whose stored record is not as `expected` (status None: no record), in the given order; notes
    compared as written (trimmed, blank as none)."""
    stored = current(session, [(e.tanggal, e.id_anak) for e in expected])
    found = {k: (r.status, _note(r.keterangan)) for k, r in stored.items()}
    return [
        e.id_anak
        for e in expected
        if found.get((e.tanggal, e.id_anak), (None, None)) != (e.status, _note(e.keterangan) if e.status else None)
    ]


def write(session: Session, records: Sequence[Catatan], *, actor: str | None, key: str | None) -> list[Perubahan]:
    """Bring these records to the given state, recording each change; returns every record's old → new."""
    stored = current(session, [(r.tanggal, r.id_anak) for r in records])
    changes: list[Perubahan] = []
    for r in records:
        old = stored.get((r.tanggal, r.id_anak))
        changes.append(
            Perubahan(
                tanggal=r.tanggal,
                id_anak=r.id_anak,
                status_lama=old.status if old else None,
                status_baru=r.status,
                keterangan_lama=old.keterangan if old else None,
                keterangan_baru=r.keterangan if r.status is not None else None,
            )
        )
    changed = [c for c in changes if c.berubah]
    kept = [
        {"tanggal": c.tanggal, "id_anak": c.id_anak, "status": c.status_baru, "keterangan": c.keterangan_baru}
        for c in changed
        if c.status_baru is not None
    ]
    upsert(session, Absensi, kept, key=("tanggal", "id_anak"))
    removed = [(c.tanggal, c.id_anak) for c in changed if c.status_baru is None]
    if removed:
        session.execute(delete(Absensi).where(tuple_(Absensi.tanggal, Absensi.id_anak).in_(removed)))
    now = datetime.now(UTC)
    session.add_all(RiwayatAbsensi(**asdict(c), oleh=actor, waktu=now, kunci=key) for c in changed)
    for c in changed:
        perubahan.catat(session, "absensi", tanggal=c.tanggal, id_anak=c.id_anak)
    session.flush()
    return changes


def history(session: Session, tanggal: date, id_anak: str) -> Sequence[RiwayatAbsensi]:
    """The changes of one student's day, oldest first."""
    query = (
        select(RiwayatAbsensi)
        .where(RiwayatAbsensi.id_anak == id_anak, RiwayatAbsensi.tanggal == tanggal)
        .order_by(RiwayatAbsensi.id)
    )
    return session.scalars(query).all()


def absensi_harian(
    session: Session,
    tanggal: date,
    *,
    kelas: FilterValues,
    kamar: FilterValues,
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


def ringkasan_harian(
    session: Session,
    tanggal: date,
    *,
    kelas: FilterValues,
    kamar: FilterValues,
    daftar: str | None,
    limit: int,
    ids: Sequence[str] = (),
) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """One day of every student of the filter (of `ids` only when given): the count per status (`belum_dicatat`: no
    record), and at most `limit` listed students (those of `daftar`, else all but `hadir`), recorded first, then by
    kelas, nama, id."""
    recorded = and_(Absensi.id_anak == Anak.id, Absensi.tanggal == tanggal)
    where = anak_filters(session, kelas=kelas, kamar=kamar)
    if ids:
        where.append(Anak.id.in_(ids))
    counts = session.execute(
        select(Absensi.status, func.count())
        .select_from(Anak)
        .join(Absensi, recorded, isouter=True)
        .where(*where)
        .group_by(Absensi.status)
    )
    per_status: dict[str, int] = {s: 0 for s in (*STATUS_ABSENSI, BELUM_DICATAT)}
    for found, n in counts:
        per_status[found or BELUM_DICATAT] += int(n)
    unrecorded = Absensi.id_anak.is_(None)
    query = (
        select(Anak.id.label("id_anak"), Absensi.status, Absensi.keterangan, Anak.nama, Anak.kelas, Anak.kamar)
        .select_from(Anak)
        .join(Absensi, recorded, isouter=True)
        .where(*where)
        .order_by(case((unrecorded, 1), else_=0), Anak.kelas, Anak.nama, Anak.id)
        .limit(limit)
    )
    if daftar == BELUM_DICATAT:
        query = query.where(unrecorded)
    elif daftar:
        query = query.where(Absensi.status == daftar)
    else:
        query = query.where(or_(unrecorded, Absensi.status != "hadir"))
    rows = [{**r, "status": r["status"] or BELUM_DICATAT} for r in session.execute(query).mappings()]
    return per_status, rows


def rekap_absensi(
    session: Session,
    dari: date,
    sampai: date,
    *,
    kelas: FilterValues,
    kamar: FilterValues,
    id_anak: str | None,
    limit: int | None = None,
) -> Rekap:
    """Counts per status over [dari, sampai] of the students of the filter with a record there: in all, and per
    student (the first `limit`, or all), most absences first; read from the running counts (`absensi_kumulatif`),
    not recounted."""
    where = anak_filters(session, kelas=kelas, kamar=kamar, id_anak=id_anak)
    return absensi_kumulatif.rekap(session, dari, sampai, where, limit)
