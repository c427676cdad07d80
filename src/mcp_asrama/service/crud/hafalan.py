"""Qur'an memorisation deposits (recorded and listed by `service.records`): each student's progress (distinct ayat
and juz memorised by ziyadah, the last deposit, the recent pace), counted with `mcp_asrama.quran` and kept in
`hafalan_progres` by every write of deposits (`refresh`, `rebuild`), in its transaction."""

import logging
import math
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from itertools import groupby
from typing import Any, cast

from sqlalchemy import ColumnElement, Table, case, delete, func, insert, outerjoin, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from mcp_asrama import quran
from mcp_asrama.service.crud.anak import FilterValues, anak_filters, lock_students
from mcp_asrama.service.crud.common import plain_rows
from mcp_asrama.service.models import Anak, Hafalan
from mcp_asrama.service.models.agregat import PACE_FIELD, HafalanProgres, HafalanProgresBasi

PACE_DAYS = 28  # the pace is the ziyadah of the last 28 days (today included), per week
# Students another tool wrote that a read with a `limit` still has the database sort, each a case of its sort key
# (more: all read here, 1.1–1.2 s at 100,000 students). At 100k 50 of them make the read 0.37 s on SQLite and 0.6 s on
# PostgreSQL (none: 0.26 and 0.4 s), 100 of them 0.45–0.6 and 1.2 s.
SORTED_WAITING = 50
log = logging.getLogger(__name__)
_summing = threading.Lock()  # held while this process sums up the students another tool wrote (`sum_up_waiting`)


def check_range(surah: int, ayat_mulai: int, ayat_selesai: int) -> str | None:
    """None when the ayat lie within the surah; else why not, in Indonesian ("Al-Baqarah hanya punya 286 ayat")."""
    try:
        quran.validate_range(surah, ayat_mulai, ayat_selesai)
    except ValueError as exc:
        return str(exc)
    return None


@dataclass(slots=True)
class Progres:
    id_anak: str
    nama: str
    kelas: str
    kamar: str | None
    ayat: int
    juz: float
    setoran_terakhir: date | None
    ayat_per_pekan: float


Deposit = tuple[str, int, int, int, date]
"""What a summary reads of a deposit: jenis, surah, ayat_mulai, ayat_selesai, tanggal."""
DEPOSIT_COLUMNS = (Hafalan.jenis, Hafalan.surah, Hafalan.ayat_mulai, Hafalan.ayat_selesai, Hafalan.tanggal)
_PROGRES = cast(Table, HafalanProgres.__table__)
_STALE = cast(Table, HafalanProgresBasi.__table__)
KEPT = ("ayat", "juz", "hari_setoran_terakhir", "hari_ziyadah_terakhir", "laju")


def _ziyadah(deposits: Iterable[Deposit]) -> list[tuple[date, int, int]]:
    """The ziyadah ranges counted, as (tanggal, first, last) global ayat indexes: a range outside its surah (or
    reversed) is skipped."""
    index = quran.ayat_keys()
    out = []
    for jenis, surah, mulai, selesai, tanggal in deposits:
        if jenis != "ziyadah" or not (1 <= surah <= quran.SURAHS and 1 <= mulai <= selesai <= quran.LONGEST_SURAH):
            continue
        if last := index[surah * quran.AYAT_KEY + selesai]:
            out.append((tanggal, index[surah * quran.AYAT_KEY + mulai], last))
    return out


def _distinct_ayat(ranges: Iterable[tuple[date, int, int]]) -> int:
    return quran.count_ayat(quran.merge((first, last) for _, first, last in ranges))


def _pace_digits(ranges: list[tuple[date, int, int]], last: date) -> str:
    """`HafalanProgres.laju`: for k = 0..27, the distinct ayat of the ranges of the 28 days up to `last` + k."""
    recent = [r for r in ranges if r[0] > last - timedelta(days=PACE_DAYS)]
    by_start = {d: _distinct_ayat(r for r in recent if r[0] >= d) for d in {r[0] for r in recent}}
    values = []
    for k in range(PACE_DAYS):
        start = last + timedelta(days=k - PACE_DAYS + 1)
        values.append(min(((d, n) for d, n in by_start.items() if d >= start), default=(start, 0))[1])
    return "".join(f"{n:0{PACE_FIELD}d}" for n in values)


def summarise(deposits: Sequence[Deposit]) -> dict[str, Any]:
    """The `hafalan_progres` columns of one student's deposits (at least one)."""
    ranges = _ziyadah(deposits)
    merged = quran.merge((first, last) for _, first, last in ranges)
    last = max((r[0] for r in ranges), default=None)
    return {
        "ayat": quran.count_ayat(merged),
        "juz": float(quran.count_juz(merged)),
        "hari_setoran_terakhir": max(d[4] for d in deposits).toordinal(),
        "hari_ziyadah_terakhir": last.toordinal() if last else None,
        "laju": _pace_digits(ranges, last) if last else "",
    }


def summaries(rows: Iterable[Sequence[Any]]) -> Iterator[dict[str, Any]]:
    """A `hafalan_progres` row per student of (id_anak, *DEPOSIT_COLUMNS) rows ordered by id_anak."""
    for id_anak, group in groupby(rows, key=lambda r: r[0]):
        yield {"id_anak": id_anak, **summarise([tuple(r[1:]) for r in group])}


def _summarised(session: Session, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The `hafalan_progres` row of each of these students who has deposits, counted from them."""
    out: dict[str, dict[str, Any]] = {}
    for start in range(0, len(ids), 500):
        query = select(Hafalan.id_anak, *DEPOSIT_COLUMNS).where(Hafalan.id_anak.in_(ids[start : start + 500]))
        out.update((row["id_anak"], row) for row in summaries(session.execute(query.order_by(Hafalan.id_anak))))
    return out


def refresh(session: Session, ids: Iterable[str]) -> None:
    """Sum up these students' deposits afresh (after a write of some of them), in the caller's transaction, holding
    them first (`lock_students`): a concurrent writer of the same students sums up after this one commits, seeing
    its deposits."""
    ordered = sorted(set(ids))
    lock_students(session, ordered)
    for start in range(0, len(ordered), 500):
        chunk = ordered[start : start + 500]
        fresh = list(_summarised(session, chunk).values())
        session.execute(delete(_PROGRES).where(_PROGRES.c.id_anak.in_(chunk)))
        session.execute(delete(_STALE).where(_STALE.c.id_anak.in_(chunk)))
        if fresh:
            session.execute(insert(_PROGRES), fresh)


def refresh_stale(session: Session) -> int:
    """Sum up afresh the students whose deposits another tool wrote straight into the table (listed by the
    triggers in `hafalan_progres_basi`, read from their deposits until then): how many."""
    ids = list(session.scalars(select(_STALE.c.id_anak)))
    if ids:
        refresh(session, ids)
    return len(ids)


def sum_up_waiting(sessions: Callable[[], Session]) -> int:
    """`refresh_stale` in a session of its own, committed (at the service's start, and after a read that found
    students another tool wrote, once its answer went out): how many. One at a time in the process: while one
    runs, another call returns 0 at once. A database that refuses the write now (busy, locked) is logged, and the
    students stay listed: the reads count them from their deposits, and the next read or start tries again."""
    if not _summing.acquire(blocking=False):
        return 0
    try:
        with sessions() as session, session.begin():
            summed = refresh_stale(session)
    except SQLAlchemyError as exc:
        log.warning("hafalan progress of students another tool wrote not summed up now (%s)", type(exc).__name__)
        return 0
    finally:
        _summing.release()
    if summed:
        log.info("hafalan progress summed up afresh for %d students written by another tool", summed)
    return summed


def rebuild(session: Session, batch: int = 5000) -> None:
    """Sum up every student's deposits afresh (after a bulk fill such as the demo school)."""
    session.execute(delete(_PROGRES))
    session.execute(delete(_STALE))
    query = select(Hafalan.id_anak, *DEPOSIT_COLUMNS).order_by(Hafalan.id_anak)
    rows: list[dict[str, Any]] = []
    for row in summaries(session.execute(query.execution_options(yield_per=batch))):
        rows.append(row)
        if len(rows) == batch:
            session.execute(insert(_PROGRES), rows)
            rows.clear()
    if rows:
        session.execute(insert(_PROGRES), rows)


def _recent_from_deposits(session: Session, ids: Sequence[str], today: date) -> dict[str, int]:
    """The distinct ziyadah ayat of the 28 days up to `today`, counted from the deposits (for a `today` before a
    student's last ziyadah, which the kept pace does not cover)."""
    window = today - timedelta(days=PACE_DAYS - 1)
    out: dict[str, int] = {}
    for start in range(0, len(ids), 500):
        query = (
            select(Hafalan.id_anak, *DEPOSIT_COLUMNS)
            .where(Hafalan.id_anak.in_(ids[start : start + 500]), Hafalan.tanggal.between(window, today))
            .order_by(Hafalan.id_anak)
        )
        for id_anak, group in groupby(session.execute(query), key=lambda r: r[0]):
            out[id_anak] = _distinct_ayat(_ziyadah([tuple(r[1:]) for r in group]))  # type: ignore[misc]
    return out


@dataclass(slots=True)
class ProgresSekolah:
    """The progress of the students of a filter: how many, their ayat and juz (each rounded as shown) summed, and
    the first of them (or all), most ayat first, then by name."""

    jumlah_anak: int
    ayat: int
    juz: float
    data: list[Progres]
    waiting: bool = False  # students another tool wrote wait to be summed up (`sum_up_waiting`)


def progres(
    session: Session,
    *,
    id_anak: str | None,
    kelas: FilterValues,
    kamar: FilterValues,
    today: date,
    limit: int | None = None,
) -> ProgresSekolah:
    """The progress of every student of the filter, the first `limit` (or all) of them in `data`: read from the
    kept summaries (`hafalan_progres`); only the pace, which depends on `today`, is picked here from the kept ones.
    With a `limit`, the database sorts and sends only those students (and the sums' two columns). Students written
    by another tool (`hafalan_progres_basi`, listed by its triggers) are counted from their deposits here, and the
    answer says so (`waiting`: the caller has them summed up, `sum_up_waiting`, for the next reads); with more than
    `SORTED_WAITING` of them, every student is read here."""
    filters = anak_filters(session, kelas=kelas, kamar=kamar, id_anak=id_anak)
    stale = set(session.scalars(select(_STALE.c.id_anak)))
    if limit is not None and len(stale) <= SORTED_WAITING:
        school = _first(session, filters, today, limit, stale)
    else:
        rows = _every(session, filters, today, stale)
        school = ProgresSekolah(len(rows), sum(p.ayat for p in rows), math.fsum(p.juz for p in rows), rows[:limit])
    school.waiting = bool(stale)
    return school


def _first(
    session: Session, filters: list[ColumnElement[bool]], today: date, limit: int, stale: set[str]
) -> ProgresSekolah:
    """`progres` of the first `limit` students, sorted and cut by the database; the sums from the kept rows. The
    `stale` students' rows are counted here and their ayat given to the database's sort."""
    counted = {i: tuple(row[c] for c in KEPT) for i, row in _summarised(session, sorted(stale)).items()}
    ayat: ColumnElement[Any] = func.coalesce(_PROGRES.c.ayat, 0)
    if stale:
        ayat = case({i: counted[i][0] if i in counted else 0 for i in stale}, value=Anak.id, else_=ayat)
    kept = outerjoin(Anak.__table__, _PROGRES, _PROGRES.c.id_anak == Anak.id)
    query = (
        select(Anak.id, Anak.nama, Anak.kelas, Anak.kamar, *(_PROGRES.c[c] for c in KEPT), func.count().over())
        .select_from(kept)
        .where(*filters)
        .order_by(ayat.desc(), Anak.nama, Anak.id)
        .limit(limit)
    )
    rows = plain_rows(session, query)
    sums = select(_PROGRES.c.ayat, _PROGRES.c.juz)
    if filters:
        sums = sums.where(_PROGRES.c.id_anak.in_(select(Anak.id).where(*filters)))
    if stale:
        sums = sums.where(_PROGRES.c.id_anak.not_in(stale))
    summed = plain_rows(session, sums)
    if counted:
        shown = session.scalars(select(Anak.id).where(*filters, Anak.id.in_(list(counted))))
        summed += [counted[i][:2] for i in shown]
    by_id = {row[0]: row[4:-1] for row in rows if row[4] is not None and row[0] not in stale}
    by_id |= {row[0]: counted[row[0]] for row in rows if row[0] in counted}
    data = _shown(session, [row[:4] for row in rows], by_id, today)
    return ProgresSekolah(
        jumlah_anak=int(rows[0][-1]) if rows else 0,
        ayat=sum(ayat for ayat, _ in summed),
        juz=math.fsum(round(juz, 2) for _, juz in summed),
        data=data,
    )


def _every(session: Session, filters: list[ColumnElement[bool]], today: date, stale: set[str]) -> list[Progres]:
    """`progres` of every student of the filter, most ayat first (then by name); the `stale` ones counted from
    their deposits."""
    students = plain_rows(
        session, select(Anak.id, Anak.nama, Anak.kelas, Anak.kamar).where(*filters).order_by(Anak.nama, Anak.id)
    )
    kept = select(_PROGRES.c.id_anak, *(_PROGRES.c[c] for c in KEPT))  # apart, matched here: cheaper than a join
    if filters:
        kept = kept.where(_PROGRES.c.id_anak.in_(select(Anak.id).where(*filters)))
    by_id = {row[0]: row[1:] for row in plain_rows(session, kept)}
    counted = _summarised(session, [s[0] for s in students if s[0] in stale]) if stale else {}
    for id_, row in counted.items():
        by_id[id_] = tuple(row[c] for c in KEPT)
    for id_ in stale - counted.keys():
        by_id.pop(id_, None)
    out = _shown(session, students, by_id, today)
    out.sort(key=lambda p: -p.ayat)  # stable: students with as many ayat stay by name
    return out


def _shown(
    session: Session, students: Sequence[Sequence[Any]], by_id: dict[str, Sequence[Any]], today: date
) -> list[Progres]:
    """Each of `students` (id, nama, kelas, kamar) with their kept summary (`KEPT` columns, by id; none: nothing
    deposited) as shown on `today`: the pace picked from the kept ones, or counted from the deposits when `today`
    is before the last ziyadah."""
    day = today.toordinal()
    early = [s[0] for s in students if (row := by_id.get(s[0])) is not None and row[3] is not None and row[3] > day]
    recounted = _recent_from_deposits(session, early, today) if early else {}
    out = []
    per_week: dict[int, float] = {}  # ayat of the 28 days -> ayat a week, as rounded
    for id_, nama, kelas_, kamar_ in students:
        if (kept_row := by_id.get(id_)) is None:
            out.append(Progres(id_, nama, kelas_, kamar_, 0, 0.0, None, 0.0))
            continue
        ayat, juz, last, ziyadah_last, laju = kept_row
        recent = 0
        if ziyadah_last is not None:
            if (k := day - ziyadah_last) < 0:  # a ziyadah after `today`: counted from the deposits
                recent = recounted.get(id_, 0)
            elif k < PACE_DAYS:
                recent = int(laju[k * PACE_FIELD : (k + 1) * PACE_FIELD])
        if (week := per_week.get(recent)) is None:
            week = per_week[recent] = round(recent / (PACE_DAYS / 7), 1)
        out.append(Progres(id_, nama, kelas_, kamar_, ayat, round(juz, 2), date.fromordinal(last), week))
    return out
