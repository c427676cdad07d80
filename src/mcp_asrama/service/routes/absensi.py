"""`/absensi`: one day's records, a summary over a range, and recording one student's day."""

from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query

from mcp_asrama.service import crud
from mcp_asrama.service.deps import SessionDep, TokenDep
from mcp_asrama.service.models import Absensi
from mcp_asrama.service.schemas import (
    BELUM_DICATAT,
    STATUS_ABSENSI,
    AbsensiHarian,
    AbsensiIn,
    AbsensiPublic,
    Cari,
    JumlahStatus,
    RekapAbsensi,
    RekapAnak,
    StatusHarian,
    Tanggal,
)

router = APIRouter(prefix="/absensi", tags=["absensi"], dependencies=[TokenDep])

MAX_RANGE_DAYS = 366
Filter = Annotated[Cari | None, Query()]


@router.get("", response_model=AbsensiHarian, response_model_exclude_none=True)
def absensi_harian(
    session: SessionDep,
    tanggal: Annotated[Tanggal, Query(description="YYYY-MM-DD")],
    kelas: Filter = None,
    kamar: Filter = None,
    status: StatusHarian | None = None,
    semua_anak: Annotated[
        bool, Query(description="Sertakan setiap anak filter yang belum punya catatan hari itu (status belum_dicatat)")
    ] = False,
) -> AbsensiHarian:
    """The attendance records of one day (a day without records gives an empty list). With `semua_anak=true`
    (implied by `status=belum_dicatat`), every student of the filter: `belum_dicatat` where there is no record."""
    semua_anak = semua_anak or status == BELUM_DICATAT
    rows = crud.absensi_harian(session, tanggal, kelas=kelas, kamar=kamar, status=status, semua_anak=semua_anak)
    return AbsensiHarian(tanggal=tanggal, data=[AbsensiPublic(**r) for r in rows], semua_anak=semua_anak or None)


@router.get("/rekap", response_model=RekapAbsensi)
def rekap_absensi(
    session: SessionDep,
    dari: Annotated[Tanggal, Query(description="YYYY-MM-DD, inklusif")],
    sampai: Annotated[Tanggal, Query(description="YYYY-MM-DD, inklusif")],
    kelas: Filter = None,
    kamar: Filter = None,
    id_anak: Filter = None,
    limit: Annotated[int | None, Query(ge=1, le=10_000, description="Batasi per_anak")] = None,
) -> RekapAbsensi:
    """Counts per status over a date range: overall and per student, most absences first."""
    if sampai < dari:
        raise HTTPException(status_code=422, detail="sampai harus sama dengan atau sesudah dari")
    if (sampai - dari).days >= MAX_RANGE_DAYS:
        raise HTTPException(status_code=422, detail=f"rentang paling panjang {MAX_RANGE_DAYS} hari")
    per_anak = crud.rekap_absensi(session, dari, sampai, kelas=kelas, kamar=kamar, id_anak=id_anak)
    total = JumlahStatus(**{s: sum(r[s] for r in per_anak) for s in STATUS_ABSENSI})
    return RekapAbsensi(
        dari=dari,
        sampai=sampai,
        total=total,
        jumlah_anak=len(per_anak),
        per_anak=[RekapAnak(**r) for r in per_anak[:limit]],
    )


@router.put("/{tanggal}/{id_anak}", response_model=AbsensiPublic, response_model_exclude_none=True)
def catat_absensi(
    session: SessionDep,
    tanggal: Annotated[Tanggal, Path(description="YYYY-MM-DD")],
    id_anak: Annotated[Cari, Path()],
    body: AbsensiIn,
) -> AbsensiPublic:
    """Record (or correct) one student's attendance on one day; repeating the same call changes nothing."""
    anak = crud.get_anak(session, id_anak)
    if anak is None:
        raise HTTPException(status_code=404, detail="Anak tidak ditemukan")
    record = {"tanggal": tanggal, "id_anak": anak.id, "status": body.status, "keterangan": body.keterangan}
    crud.upsert(session, Absensi, [record], key=("tanggal", "id_anak"))
    session.commit()
    return AbsensiPublic(
        id_anak=anak.id,
        status=body.status,
        keterangan=body.keterangan,
        nama=anak.nama,
        kelas=anak.kelas,
        kamar=anak.kamar,
    )
