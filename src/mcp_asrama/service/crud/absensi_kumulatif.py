"""Running attendance counts (`absensi_kumulatif`): beside each record, the student's count per status over all
their records up to that day, packed in one integer (`WEIGHT`: 15 bits a status, about 89 years of days each),
kept by triggers on `absensi` (migration 0009) in the transaction of every write, whoever makes it. A range's
counts are the packed difference of the last rows on or before its end and before its start, whatever the range's
length: for a whole school, the rows of a few days joined to the students (`_last`).

A status other than the four (none of our writes stores one) counts in none of them."""

import functools
import operator
from collections.abc import Callable, Sequence
from datetime import date
from typing import Any, cast

from sqlalchemy import ColumnElement, Table, and_, func, literal_column, select
from sqlalchemy.orm import Session

from mcp_asrama.service.crud.common import Rekap, ranked
from mcp_asrama.service.models import Anak
from mcp_asrama.service.models.agregat import AbsensiKumulatif
from mcp_asrama.service.schemas.common import STATUS_ABSENSI

BITS = 15
MASK = (1 << BITS) - 1
WEIGHT: dict[str, int] = {s: 1 << (BITS * (len(STATUS_ABSENSI) - 1 - i)) for i, s in enumerate(STATUS_ABSENSI)}
"""What one record of each status adds to the packed count (hadir in the highest bits, alpa in the lowest)."""

_TABLE = cast(Table, AbsensiKumulatif.__table__)


def rekap(session: Session, dari: date, sampai: date, where: Sequence[ColumnElement[bool]], limit: int | None) -> Rekap:
    """The counts per status over [dari, sampai] of the students of `where` (an `Anak` filter) with a record there:
    in all, and per student (`limit` of them, or all), most absent first, then by name and id in code point order.
    Counted, summed and sorted by the database: a whole school sends only the rows asked for."""
    end, end_days = _last(lambda tanggal: tanggal <= sampai)
    start, start_days = _last(lambda tanggal: tanggal < dari)
    source: Any = Anak.__table__
    for kept, on in (*end_days, *start_days):
        source = source.outerjoin(kept, on)
    packed = (end - func.coalesce(start, 0)).label("packed")
    chosen = select(Anak.id, Anak.nama, Anak.kelas, Anak.kamar, packed).select_from(source).where(*where)
    per = chosen.offset(0).subquery()  # a fence: the planner would otherwise inline `packed` into every use of it
    counts = {status: _field(per.c.packed, weight) for status, weight in WEIGHT.items()}
    counts["tidak_hadir"] = functools.reduce(operator.add, [counts[s] for s in STATUS_ABSENSI if s != "hadir"])
    students = (per.c.id, per.c.nama, per.c.kelas, per.c.kamar)
    return ranked(session, per, students, counts, [per.c.packed != 0], [counts["tidak_hadir"].desc()], limit)


def _field(packed: Any, weight: int) -> Any:
    """One status's count in a packed difference, in SQL (constants inlined: integer shifts on both dialects)."""
    return packed.op(">>")(literal_column(str(weight.bit_length() - 1))).op("&")(literal_column(str(MASK)))


def _last(
    allowed: Callable[[Any], ColumnElement[bool]],
) -> tuple[ColumnElement[Any], list[tuple[Any, ColumnElement[bool]]]]:
    """A student's packed count on their last day that `allowed` allows (NULL without one), and the joins it needs.

    Read from the rows of the last two days that any student has there (each day's rows one index range, joined:
    nobody has a record between those days, so a student's row on the later, else the earlier, is their last), and
    sought per student (an index seek) only for a student with a record on neither: a whole school costs two scans of
    one day's rows instead of a seek a student."""
    later = select(func.max(_TABLE.c.tanggal)).where(allowed(_TABLE.c.tanggal)).scalar_subquery()
    earlier = select(func.max(_TABLE.c.tanggal)).where(_TABLE.c.tanggal < later).scalar_subquery()
    joins = []
    for day in (later, earlier):
        kept = _TABLE.alias()
        joins.append((kept, and_(kept.c.id_anak == Anak.id, kept.c.tanggal == day)))
    sought = select(_TABLE.c.jumlah).where(_TABLE.c.id_anak == Anak.id, allowed(_TABLE.c.tanggal))
    sought = sought.order_by(_TABLE.c.tanggal.desc()).limit(1)
    return func.coalesce(*(kept.c.jumlah for kept, _ in joins), sought.scalar_subquery()), joins
