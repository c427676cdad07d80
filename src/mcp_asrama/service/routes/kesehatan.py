"""`/kesehatan`: recording a clinic visit (idempotent under an `Idempotency-Key`), listing visits, and counts per
category. Health data (UU PDP): no field of a visit is ever logged; the rekap holds counts only."""

from typing import Any

from fastapi import APIRouter, Request

from mcp_asrama.service import records
from mcp_asrama.service.crud import kesehatan as crud
from mcp_asrama.service.deps import ActorDep, KeyDep, SessionDep, TokenDep
from mcp_asrama.service.models import KunjunganKlinik
from mcp_asrama.service.records import PagingDep, RecordFilterDep
from mcp_asrama.service.routes.common import DariWajib, Filter, SampaiWajib, check_period
from mcp_asrama.service.schemas.kesehatan import (
    KATEGORI_KESEHATAN,
    DaftarKunjungan,
    KunjunganIn,
    KunjunganPublic,
    RekapKategoriKesehatan,
    RekapKesehatan,
)

router = APIRouter(prefix="/kesehatan", tags=["kesehatan"], dependencies=[TokenDep])


@router.post(
    "", status_code=201, response_model=KunjunganPublic, response_model_exclude_none=True, responses=records.ERRORS
)
def catat_kunjungan(request: Request, session: SessionDep, body: KunjunganIn, actor: ActorDep, key: KeyDep) -> Any:
    """Record a clinic visit on a day up to today. 404 unknown student."""
    return records.create_as_sent(
        request, session, body, actor, key, kind="kesehatan", model=KunjunganKlinik, shape=KunjunganPublic
    )


@router.get("", response_model=DaftarKunjungan, response_model_exclude_none=True)
def daftar_kunjungan(session: SessionDep, where: RecordFilterDep, paging: PagingDep) -> DaftarKunjungan:
    """Visits by student, class, room (case-insensitive) and period, latest first."""
    return records.listing(session, KunjunganKlinik, where, paging, shape=KunjunganPublic, page=DaftarKunjungan)


@router.get("/rekap", response_model=RekapKesehatan)
def rekap_kesehatan(
    session: SessionDep, dari: DariWajib, sampai: SampaiWajib, kelas: Filter = None, kamar: Filter = None
) -> RekapKesehatan:
    """Visits and distinct students over [dari, sampai] (at most 366 days), per category (every one, in order,
    zeros included). Counts only: no student in the answer."""
    check_period(dari, sampai)
    kunjungan, anak, per = crud.rekap(session, dari=dari, sampai=sampai, kelas=kelas, kamar=kamar)
    per_kategori = [
        RekapKategoriKesehatan(kategori=k, kunjungan=per.get(k, (0, 0))[0], anak=per.get(k, (0, 0))[1])
        for k in KATEGORI_KESEHATAN
    ]
    return RekapKesehatan(dari=dari, sampai=sampai, kunjungan=kunjungan, anak=anak, per_kategori=per_kategori)
