"""Qur'an memorisation deposits (recorded and listed by `service.records`): each student's progress (distinct ayat
and juz memorised by ziyadah, the last deposit, the recent pace), counted with `mcp_asrama.quran`."""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta

from sqlalchemy import BigInteger, ColumnElement, String, and_, case, cast, func, select
from sqlalchemy.orm import Session

from mcp_asrama import quran
from mcp_asrama.service.crud.anak import FilterValues, anak_filters
from mcp_asrama.service.models import Anak, Hafalan

PACE_DAYS = 28  # the pace is the ziyadah of the last 28 days (today included), per week


def check_range(surah: int, ayat_mulai: int, ayat_selesai: int) -> str | None:
    """None when the ayat lie within the surah; else why not, in Indonesian ("Al-Baqarah hanya punya 286 ayat")."""
    try:
        quran.validate_range(surah, ayat_mulai, ayat_selesai)
    except ValueError as exc:
        return str(exc)
    return None


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


# Each ziyadah range travels from the database as one integer, ((surah * KEY + ayat_mulai) * SPAN + surah * KEY +
# ayat_selesai) * 2 + (1 if deposited in the last 28 days), each student's joined by commas: the order of the
# integers is the ranges' order in the mushaf, and `quran.ayat_keys` turns each key into a global ayat index (0 for
# an ayat the surah does not have).
KEY, SPAN = quran.AYAT_KEY, quran.AYAT_KEY * (quran.SURAHS + 1)


def _packed_ranges(condition: ColumnElement[bool], recent: ColumnElement[bool]) -> ColumnElement[str]:
    """The student's ranges meeting `condition`, packed and marked when `recent`; NULL when none."""
    first = cast(Hafalan.surah * KEY + Hafalan.ayat_mulai, BigInteger)  # the product passes 2**31
    packed = (first * SPAN + Hafalan.surah * KEY + Hafalan.ayat_selesai) * 2 + case((recent, 1), else_=0)
    return func.aggregate_strings(case((condition, cast(packed, String))), ",")


def _merged(numbers: Iterable[int]) -> list[quran.Interval]:
    """Merged intervals of packed ranges (sorted, mark removed); one that ends beyond its surah is skipped."""
    index = quran.ayat_keys()
    return quran.merge([(index[n // SPAN], last) for n in numbers if (last := index[n % SPAN])])


def _progress(packed: str | None) -> tuple[int, float, int]:
    """Distinct ayat, juz and distinct ayat of the last 28 days of a student's packed ranges."""
    if not packed:
        return 0, 0.0, 0
    numbers = sorted(map(int, packed.split(",")))
    merged = _merged([n >> 1 for n in numbers])
    recent = quran.count_ayat(_merged([n >> 1 for n in numbers if n & 1]))
    return quran.count_ayat(merged), quran.count_juz(merged), recent


def progres(
    session: Session, *, id_anak: str | None, kelas: FilterValues, kamar: FilterValues, today: date
) -> list[Progres]:
    """Every student of the filter with their progress, most ayat first (then by name).

    The database gives each student's ziyadah ranges (marked when of the last 28 days) and last deposit in one row;
    the ranges are counted as merged intervals (`quran.merge`), not ayat by ayat."""
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
    ranges = _packed_ranges(ziyadah, Hafalan.tanggal.between(window, today))
    query = select(Hafalan.id_anak, ranges, func.max(Hafalan.tanggal)).group_by(Hafalan.id_anak)
    if filters:
        query = query.join(Anak, Anak.id == Hafalan.id_anak).where(*filters)
    deposits = {id_: (packed, last) for id_, packed, last in session.execute(query)}
    out = []
    for id_, nama, kelas_, kamar_ in students:
        packed, last = deposits.get(id_, (None, None))
        ayat, juz, recent = _progress(packed)
        per_week = round(recent / (PACE_DAYS / 7), 1)
        out.append(Progres(id_, nama, kelas_, kamar_, ayat, round(juz, 2), last, per_week))
    out.sort(key=lambda p: -p.ayat)  # stable: students with as many ayat stay by name
    return out
