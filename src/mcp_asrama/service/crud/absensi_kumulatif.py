"""Running attendance counts (`absensi_kumulatif`): beside each record, the student's count per status over all
their records up to that day, packed in one integer (`WEIGHT`: 15 bits a status, about 89 years of days each),
kept by triggers on `absensi` (migration 0009) in the transaction of every write, whoever makes it. A range's
counts are the packed difference of the last rows on or before its end and before its start: two index seeks a
student, whatever the range's length.

A status other than the four (none of our writes stores one) counts in none of them."""

from collections.abc import Iterator, Sequence
from datetime import date
from typing import Any, cast

from sqlalchemy import ColumnElement, Table, func, select
from sqlalchemy.orm import Session

from mcp_asrama.service.crud.hafalan import plain_rows
from mcp_asrama.service.models import Anak
from mcp_asrama.service.models.agregat import AbsensiKumulatif
from mcp_asrama.service.schemas.common import STATUS_ABSENSI

BITS = 15
WEIGHT: dict[str, int] = {s: 1 << (BITS * (len(STATUS_ABSENSI) - 1 - i)) for i, s in enumerate(STATUS_ABSENSI)}
"""What one record of each status adds to the packed count (hadir in the highest bits, alpa in the lowest)."""

_TABLE = cast(Table, AbsensiKumulatif.__table__)


def counts(difference: int) -> tuple[int, int, int, int]:
    """The count of each status (`STATUS_ABSENSI` order) in the difference of two packed counts."""
    hadir, rest = divmod(difference, WEIGHT["hadir"])
    izin, rest = divmod(rest, WEIGHT["izin"])
    sakit, alpa = divmod(rest, WEIGHT["sakit"])
    return hadir, izin, sakit, alpa


def ranges(
    session: Session, dari: date, sampai: date, where: Sequence[ColumnElement[bool]], columns: Sequence[Any]
) -> Iterator[tuple[Any, ...]]:
    """Each student of `where` (an `Anak` filter) with a record in [dari, sampai]: their `columns`, then their packed
    count there (`counts` unpacks it)."""

    def last(before: ColumnElement[bool]) -> Any:
        found = select(_TABLE.c.jumlah).where(_TABLE.c.id_anak == Anak.id, before)
        return found.order_by(_TABLE.c.tanggal.desc()).limit(1).scalar_subquery()

    difference = last(_TABLE.c.tanggal <= sampai) - func.coalesce(last(_TABLE.c.tanggal < dari), 0)
    query = select(*columns, difference).where(*where)
    return (row for row in plain_rows(session, query) if row[-1])
