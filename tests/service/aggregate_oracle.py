"""The recounts that the kept aggregates replaced (`crud.hafalan.progres` and `crud.absensi.rekap_absensi` before
revision 0009), kept as the oracle of `test_aggregates`: the same answers straight from every deposit and record."""

from collections.abc import Iterable
from datetime import date, timedelta
from typing import Any

from sqlalchemy import BigInteger, ColumnElement, String, and_, case, cast, func, select
from sqlalchemy.orm import Session

from mcp_asrama import quran
from mcp_asrama.service.crud.anak import FilterValues, anak_filters
from mcp_asrama.service.crud.hafalan import PACE_DAYS, Progres
from mcp_asrama.service.models import Absensi, Anak, Hafalan
from mcp_asrama.service.schemas.common import STATUS_ABSENSI

KEY, SPAN = quran.AYAT_KEY, quran.AYAT_KEY * (quran.SURAHS + 1)


def _packed_ranges(condition: ColumnElement[bool], recent: ColumnElement[bool]) -> ColumnElement[str]:
    first = cast(Hafalan.surah * KEY + Hafalan.ayat_mulai, BigInteger)
    packed = (first * SPAN + Hafalan.surah * KEY + Hafalan.ayat_selesai) * 2 + case((recent, 1), else_=0)
    return func.aggregate_strings(case((condition, cast(packed, String))), ",")


def _merged(numbers: Iterable[int]) -> list[quran.Interval]:
    index = quran.ayat_keys()
    return quran.merge([(index[n // SPAN], last) for n in numbers if (last := index[n % SPAN])])


def _progress(packed: str | None) -> tuple[int, float, int]:
    if not packed:
        return 0, 0.0, 0
    numbers = sorted(map(int, packed.split(",")))
    merged = _merged([n >> 1 for n in numbers])
    recent = quran.count_ayat(_merged([n >> 1 for n in numbers if n & 1]))
    return quran.count_ayat(merged), quran.count_juz(merged), recent


def old_progres(
    session: Session, *, id_anak: str | None, kelas: FilterValues, kamar: FilterValues, today: date
) -> list[Progres]:
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
    out.sort(key=lambda p: -p.ayat)
    return out


def old_rekap(
    session: Session, dari: date, sampai: date, *, kelas: FilterValues, kamar: FilterValues, id_anak: str | None
) -> list[dict[str, Any]]:
    counts = [func.count().filter(Absensi.status == s).label(s) for s in STATUS_ABSENSI]
    query = (
        select(Anak.id, Anak.nama, Anak.kelas, Anak.kamar, *counts)
        .join(Absensi, Absensi.id_anak == Anak.id)
        .where(Absensi.tanggal.between(dari, sampai))
        .where(*anak_filters(session, kelas=kelas, kamar=kamar, id_anak=id_anak))
        .group_by(Anak.no, Anak.id, Anak.nama, Anak.kelas, Anak.kamar)
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
