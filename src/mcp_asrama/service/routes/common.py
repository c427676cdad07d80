"""What the routes share: list filters, paging, the checks of a period and a date, and the refusal of a write
whose attendance changed since it was read."""

from collections.abc import Callable, Iterable
from datetime import date
from typing import Annotated

from fastapi import HTTPException, Query
from sqlalchemy.orm import Session

from mcp_asrama.contract import BERUBAH, KONFLIK_HEADER
from mcp_asrama.service.crud import absensi as crud_absensi
from mcp_asrama.service.crud.absensi import Catatan
from mcp_asrama.service.schemas.common import BELUM_DICATAT, Cari, Tanggal

MAX_RANGE_DAYS = 366
MAX_FILTER_VALUES = 50

Filter = Annotated[
    list[Cari] | None,
    Query(
        max_length=MAX_FILTER_VALUES,
        description=(
            f"Tanpa beda huruf besar/kecil dan spasi; boleh diulang (maks. {MAX_FILTER_VALUES}): salah satunya cocok"
        ),
    ),
]
"""A class or room filter (`kamar=A&kamar=B`: room A or B)."""
IdAnakFilter = Annotated[Cari | None, Query(description="Hanya anak ini")]
Dari = Annotated[Tanggal | None, Query(description="Dari tanggal ini (YYYY-MM-DD)")]
Sampai = Annotated[Tanggal | None, Query(description="Sampai tanggal ini (YYYY-MM-DD)")]
DariWajib = Annotated[Tanggal, Query(description="Dari tanggal ini (YYYY-MM-DD)")]
SampaiWajib = Annotated[Tanggal, Query(description="Sampai tanggal ini (YYYY-MM-DD), paling lama 366 hari")]
Limit = Annotated[int, Query(ge=1, le=500)]
Offset = Annotated[int, Query(ge=0, le=1_000_000)]


def check_period(dari: date | None, sampai: date | None) -> None:
    """422 unless `sampai` is on or after `dari` and the period is at most 366 days (when both are given)."""
    if dari is None or sampai is None:
        return
    if sampai < dari:
        raise HTTPException(status_code=422, detail="sampai harus sama dengan atau sesudah dari")
    if (sampai - dari).days >= MAX_RANGE_DAYS:
        raise HTTPException(status_code=422, detail=f"rentang tanggal paling lama {MAX_RANGE_DAYS} hari")


def check_not_future(tanggal: date) -> None:
    """422 when `tanggal` is after today: what is recorded has happened."""
    if tanggal > date.today():
        raise HTTPException(status_code=422, detail="tanggal tidak boleh sesudah hari ini")


def refuse_changed(
    session: Session, read: Iterable[tuple[date, str, str, str | None]], detail: Callable[[list[str]], str]
) -> None:
    """409 (`KONFLIK_HEADER: BERUBAH`) when a stored attendance record is no longer what its caller `read`: each
    (day, student, status_lama (`BELUM_DICATAT`: no record), keterangan_lama). `detail(students changed)` says
    which, never by name."""
    expected = [Catatan(d, i, None if s == BELUM_DICATAT else s, k) for d, i, s, k in read]
    changed = crud_absensi.differing(session, expected) if expected else []
    if changed:
        raise HTTPException(status_code=409, detail=detail(changed), headers={KONFLIK_HEADER: BERUBAH})
