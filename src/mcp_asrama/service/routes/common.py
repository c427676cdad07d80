"""What the routes share: list filters, paging, and the checks of a period and a date."""

from datetime import date
from typing import Annotated

from fastapi import HTTPException, Query

from mcp_asrama.service.schemas.common import Cari, Tanggal

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
