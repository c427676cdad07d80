"""Leave (`izin`): asking for one marks the student's days `izin` and, while it runs, the student; ending it gives
the student back and, when early, removes the izin records of the days from the return on. Each records its
change-feed events: the izin's (dated by its first day), its days' attendance, and the student's when the status
changes. Callers hold the student first (`crud.anak.lock_students`) and commit."""

import secrets
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta

from sqlalchemy import ColumnElement, and_, or_, select
from sqlalchemy.orm import Session

from mcp_asrama.service.crud import absensi as crud_absensi
from mcp_asrama.service.crud import perubahan
from mcp_asrama.service.crud.absensi import Catatan
from mcp_asrama.service.crud.anak import FilterValues, anak_filters
from mcp_asrama.service.crud.common import Paging, page
from mcp_asrama.service.models import Anak, Izin


def new_handle() -> str:
    """An unguessable izin id: 16 URL-safe characters from 96 random bits."""
    return secrets.token_urlsafe(12)


def keterangan(jenis: str) -> str:
    """The attendance note of an izin day: its kind only, never the (possibly personal) reason."""
    return f"Izin {jenis}"


def last_day(izin: Izin) -> date:
    """The last day the izin covers: `sampai`, or the day before an early return."""
    if izin.tanggal_kembali is not None:
        return min(izin.sampai, izin.tanggal_kembali - timedelta(days=1))
    return izin.sampai


def is_running(izin: Izin, today: date) -> bool:
    """Whether the izin runs on `today` (the same rule as `_running`)."""
    return izin.dari <= today <= izin.sampai and (izin.tanggal_kembali is None or izin.tanggal_kembali > today)


def _running(today: date) -> ColumnElement[bool]:
    return and_(
        Izin.dari <= today,
        Izin.sampai >= today,
        or_(Izin.tanggal_kembali.is_(None), Izin.tanggal_kembali > today),
    )


def overlapping(session: Session, id_anak: str, dari: date, sampai: date) -> bool:
    """Whether the student has an izin covering a day of [dari, sampai]."""
    izin = session.scalars(select(Izin).where(Izin.id_anak == id_anak, Izin.dari <= sampai))
    return any(i.dari <= last_day(i) and last_day(i) >= dari for i in izin)


def _days(dari: date, sampai: date) -> list[date]:
    return [dari + timedelta(days=n) for n in range((sampai - dari).days + 1)]


def create(
    session: Session,
    anak: Anak,
    *,
    dari: date,
    sampai: date,
    jenis: str,
    alasan: str | None,
    actor: str | None,
    key: str | None,
    today: date,
) -> Izin:
    """Store an izin, mark its days `izin` (with history) and the student `izin` when it runs today."""
    izin = Izin(
        id=new_handle(),
        id_anak=anak.id,
        dari=dari,
        sampai=sampai,
        jenis=jenis,
        alasan=alasan,
        dibuat_oleh=actor,
        dibuat=datetime.now(UTC),
    )
    session.add(izin)
    days = [Catatan(d, anak.id, "izin", keterangan(jenis)) for d in _days(dari, sampai)]
    crud_absensi.write(session, days, actor=actor, key=key)
    perubahan.catat(session, "izin", tanggal=dari, id_anak=anak.id)
    if is_running(izin, today) and anak.status != "izin":
        anak.status = "izin"
        perubahan.catat(session, "anak", id_anak=anak.id)
    session.flush()
    return izin


def end(session: Session, izin: Izin, anak: Anak, *, tanggal_kembali: date, actor: str | None, key: str | None) -> None:
    """End an izin on the student's return; on an early return the izin records of [return, sampai] are removed
    (with history), unless someone has changed them since."""
    izin.tanggal_kembali = tanggal_kembali
    izin.selesai_oleh = actor
    if tanggal_kembali <= izin.sampai:
        days = _days(tanggal_kembali, izin.sampai)
        current = crud_absensi.current(session, [(d, anak.id) for d in days])
        ours = [
            Catatan(d, anak.id, None)
            for d in days
            if (r := current.get((d, anak.id))) is not None
            and (r.status, r.keterangan) == ("izin", keterangan(izin.jenis))
        ]
        crud_absensi.write(session, ours, actor=actor, key=key)
    perubahan.catat(session, "izin", tanggal=izin.dari, id_anak=anak.id)
    if anak.status == "izin":
        anak.status = "aktif"
        perubahan.catat(session, "anak", id_anak=anak.id)
    session.flush()


def get(session: Session, id_izin: str) -> tuple[Izin, Anak] | None:
    """One izin with its student, or None."""
    row = session.execute(select(Izin, Anak).join(Anak, Anak.id == Izin.id_anak).where(Izin.id == id_izin)).first()
    return (row[0], row[1]) if row else None


def search(
    session: Session,
    paging: Paging,
    *,
    aktif: bool | None,
    kelas: FilterValues,
    kamar: FilterValues,
    id_anak: str | None,
    today: date,
    pada: date | None = None,
) -> tuple[int, Sequence[tuple[Izin, Anak]]]:
    """Izin records matching every given filter (`aktif`: running today or not; `pada`: running that day), latest
    first: (total, one page)."""
    filters = anak_filters(session, kelas=kelas, kamar=kamar, id_anak=id_anak)
    if aktif is not None:
        filters.append(_running(today) if aktif else ~_running(today))
    if pada is not None:
        filters.append(_running(pada))
    total, rows = page(session, Izin, filters, paging, order=(Izin.dari.desc(), Izin.id))
    return total, [(i, a) for i, a in rows]
