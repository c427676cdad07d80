"""Qur'an memorisation deposits: recording one, listing them, and each student's progress (distinct ayat and juz
memorised by ziyadah, the last deposit, the recent pace), counted with `mcp_asrama.quran`."""

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from mcp_asrama import quran
from mcp_asrama.service.crud import perubahan
from mcp_asrama.service.crud.anak import FilterValues, anak_filters, dated_filters
from mcp_asrama.service.models import Anak, Hafalan

PACE_DAYS = 28  # the pace is the ziyadah of the last 28 days (today included), per week


def check_range(surah: int, ayat_mulai: int, ayat_selesai: int) -> str | None:
    """None when the ayat lie within the surah; else why not, in Indonesian ("Al-Baqarah hanya punya 286 ayat")."""
    try:
        quran.validate_range(surah, ayat_mulai, ayat_selesai)
    except ValueError as exc:
        return str(exc)
    return None


def create(
    session: Session,
    anak: Anak,
    *,
    tanggal: date,
    jenis: str,
    surah: int,
    ayat_mulai: int,
    ayat_selesai: int,
    nilai: int | None,
    penguji: str | None,
    actor: str | None,
) -> Hafalan:
    """Store a deposit (its range already checked)."""
    record = Hafalan(
        id=secrets.token_urlsafe(12),
        id_anak=anak.id,
        tanggal=tanggal,
        jenis=jenis,
        surah=surah,
        ayat_mulai=ayat_mulai,
        ayat_selesai=ayat_selesai,
        nilai=nilai,
        penguji=penguji,
        dicatat_oleh=actor,
        dibuat=datetime.now(UTC),
    )
    session.add(record)
    perubahan.catat(session, "hafalan", tanggal=tanggal, id_anak=anak.id)
    session.flush()
    return record


def search(
    session: Session,
    *,
    id_anak: str | None,
    kelas: FilterValues,
    kamar: FilterValues,
    dari: date | None,
    sampai: date | None,
    jenis: str | None,
    limit: int,
    offset: int,
) -> tuple[int, list[tuple[Hafalan, Anak]]]:
    """Deposits matching every given filter, latest first: (total, one page)."""
    filters = dated_filters(
        session, Hafalan.tanggal, id_anak=id_anak, kelas=kelas, kamar=kamar, dari=dari, sampai=sampai
    )
    if jenis is not None:
        filters.append(Hafalan.jenis == jenis)
    base = select(Hafalan, Anak).join(Anak, Anak.id == Hafalan.id_anak).where(*filters)
    total = session.scalar(select(func.count()).select_from(base.subquery())) or 0
    order = (Hafalan.tanggal.desc(), Hafalan.dibuat.desc(), Hafalan.id)
    page = session.execute(base.order_by(*order).limit(limit).offset(offset))
    return total, [(h, a) for h, a in page]


@dataclass
class Progres:
    anak: Anak
    ayat: int
    juz: float
    setoran_terakhir: date | None
    ayat_per_pekan: float


def progres(
    session: Session, *, id_anak: str | None, kelas: FilterValues, kamar: FilterValues, today: date
) -> list[Progres]:
    """Every student of the filter with their progress, most ayat first (then by name)."""
    filters = anak_filters(session, kelas=kelas, kamar=kamar, id_anak=id_anak)
    students: Sequence[Anak] = session.scalars(select(Anak).where(*filters).order_by(Anak.nama, Anak.id)).all()
    ranges: dict[str, list[quran.Range]] = {}
    recent: dict[str, list[quran.Range]] = {}
    last: dict[str, date] = {}
    window = today - timedelta(days=PACE_DAYS - 1)
    rows = session.execute(
        select(Hafalan.id_anak, Hafalan.tanggal, Hafalan.jenis, Hafalan.surah, Hafalan.ayat_mulai, Hafalan.ayat_selesai)
        .join(Anak, Anak.id == Hafalan.id_anak)
        .where(*filters)
    )
    for id_, tanggal, jenis, surah, mulai, selesai in rows:
        # A range another tool stored outside its surah is not counted (never a 500).
        if jenis == "ziyadah" and check_range(surah, mulai, selesai) is None:
            ranges.setdefault(id_, []).append((surah, mulai, selesai))
            if window <= tanggal <= today:
                recent.setdefault(id_, []).append((surah, mulai, selesai))
        if id_ not in last or tanggal > last[id_]:
            last[id_] = tanggal
    out = [
        Progres(
            anak=a,
            ayat=quran.ayat_count(ranges.get(a.id, [])),
            juz=round(quran.juz_memorised(ranges.get(a.id, [])), 2),
            setoran_terakhir=last.get(a.id),
            ayat_per_pekan=round(quran.ayat_count(recent.get(a.id, [])) / (PACE_DAYS / 7), 1),
        )
        for a in students
    ]
    out.sort(key=lambda p: -p.ayat)  # stable: students with as many ayat stay by name
    return out
