"""Qur'an memorisation deposits: recording one, listing them, and each student's progress (distinct ayat and juz
memorised by ziyadah, the last deposit, the recent pace), counted with `mcp_asrama.quran`."""

import secrets
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from sqlalchemy import ColumnElement, Integer, String, and_, case, cast, func, literal, select
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
    id_anak: str
    nama: str
    kelas: str
    kamar: str | None
    ayat: int
    juz: float
    setoran_terakhir: date | None
    ayat_per_pekan: float


# Each ziyadah range travels from the database as one integer, first * SPAN + last (global ayat indexes, see
# `quran.interval`), each student's joined by commas: the database finds the indexes in two strings of fixed-width
# numbers (ayat before each surah, ayat in it), so Python only merges sorted integers.
SPAN = 8192  # > quran.TOTAL_AYAT
_BEFORE = "".join(f"{quran.interval(s.nomor, 1, 1)[0] - 1:04d}" for s in quran.surahs())
_LENGTH = "".join(f"{s.jumlah_ayat:03d}" for s in quran.surahs())


def _of_surah(table: str, width: int) -> ColumnElement[int]:
    return cast(func.substr(literal(table), (Hafalan.surah - 1) * width + 1, width), Integer)


def _packed_ranges(condition: ColumnElement[bool]) -> ColumnElement[str]:
    """The student's ranges meeting `condition` that lie within their surah, packed; NULL when none."""
    before = _of_surah(_BEFORE, 4)
    packed = cast((before + Hafalan.ayat_mulai) * SPAN + before + Hafalan.ayat_selesai, String)
    # Nested, so the surah's length is looked up only for a surah number that exists (PostgreSQL refuses '').
    within = case((Hafalan.ayat_selesai <= _of_surah(_LENGTH, 3), packed))
    return func.aggregate_strings(case((condition, within)), ",")


def _merged(packed: str | None) -> list[quran.Interval]:
    if not packed:
        return []
    return quran.merge([divmod(number, SPAN) for number in sorted(map(int, packed.split(",")))])


def progres(
    session: Session, *, id_anak: str | None, kelas: FilterValues, kamar: FilterValues, today: date
) -> list[Progres]:
    """Every student of the filter with their progress, most ayat first (then by name).

    The database gives each student's ziyadah ranges (all, and those of the last 28 days) and last deposit in one
    row; the ranges are counted as merged intervals (`quran.merge`), not ayat by ayat."""
    filters = anak_filters(session, kelas=kelas, kamar=kamar, id_anak=id_anak)
    students = session.execute(
        select(Anak.id, Anak.nama, Anak.kelas, Anak.kamar).where(*filters).order_by(Anak.nama, Anak.id)
    ).all()
    window = today - timedelta(days=PACE_DAYS - 1)
    ziyadah = and_(
        Hafalan.jenis == "ziyadah",
        Hafalan.surah.between(1, quran.SURAHS),
        Hafalan.ayat_mulai >= 1,
        Hafalan.ayat_mulai <= Hafalan.ayat_selesai,
        Hafalan.ayat_selesai <= quran.LONGEST_SURAH,
    )
    recent = and_(ziyadah, Hafalan.tanggal >= window, Hafalan.tanggal <= today)
    query = (
        select(Hafalan.id_anak, _packed_ranges(ziyadah), _packed_ranges(recent), func.max(Hafalan.tanggal))
        .select_from(Hafalan)
        .group_by(Hafalan.id_anak)
    )
    if filters:
        query = query.join(Anak, Anak.id == Hafalan.id_anak).where(*filters)
    deposits = {row[0]: row[1:] for row in session.execute(query)}
    out = []
    for id_, nama, kelas_, kamar_ in students:
        ever, lately, last = deposits.get(id_, (None, None, None))
        merged = _merged(ever)
        out.append(
            Progres(
                id_anak=id_,
                nama=nama,
                kelas=kelas_,
                kamar=kamar_,
                ayat=quran.count_ayat(merged),
                juz=round(quran.count_juz(merged), 2),
                setoran_terakhir=last,
                ayat_per_pekan=round(quran.count_ayat(_merged(lately)) / (PACE_DAYS / 7), 1),
            )
        )
    out.sort(key=lambda p: -p.ayat)  # stable: students with as many ayat stay by name
    return out
