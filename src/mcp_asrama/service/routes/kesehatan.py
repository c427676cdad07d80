"""`/kesehatan`: recording a clinic visit (idempotent under an `Idempotency-Key`), listing visits, and counts per
category. Health data (UU PDP): no field of a visit is ever logged; the rekap holds counts only."""

from typing import Any

from fastapi import APIRouter, HTTPException, Request

from mcp_asrama.service import idempotensi
from mcp_asrama.service.crud import anak as crud_anak
from mcp_asrama.service.crud import kesehatan as crud
from mcp_asrama.service.deps import ActorDep, KeyDep, SessionDep, TokenDep
from mcp_asrama.service.models import Anak, KunjunganKlinik
from mcp_asrama.service.routes.common import (
    Dari,
    DariWajib,
    Filter,
    IdAnakFilter,
    Limit,
    Offset,
    Sampai,
    SampaiWajib,
    check_not_future,
    check_period,
)
from mcp_asrama.service.schemas.kesehatan import (
    KATEGORI_KESEHATAN,
    DaftarKunjungan,
    KunjunganIn,
    KunjunganPublic,
    RekapKategoriKesehatan,
    RekapKesehatan,
)

router = APIRouter(prefix="/kesehatan", tags=["kesehatan"], dependencies=[TokenDep])

_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"description": "Anak tidak ditemukan"},
    409: {"description": "Idempotency-Key dipakai untuk permintaan lain"},
}


def _public(record: KunjunganKlinik, anak: Anak) -> KunjunganPublic:
    return KunjunganPublic(
        id=record.id,
        id_anak=anak.id,
        nama=anak.nama,
        kelas=anak.kelas,
        kamar=anak.kamar,
        tanggal=record.tanggal,
        kategori=record.kategori,
        keluhan=record.keluhan,
        tindakan=record.tindakan,
        obat=record.obat,
        rujukan=record.rujukan,
        petugas=record.petugas,
    )


@router.post("", status_code=201, response_model=KunjunganPublic, response_model_exclude_none=True, responses=_ERRORS)
def catat_kunjungan(request: Request, session: SessionDep, body: KunjunganIn, actor: ActorDep, key: KeyDep) -> Any:
    """Record a clinic visit on a day up to today. 404 unknown student."""
    check_not_future(body.tanggal)
    sidik = idempotensi.fingerprint(request, body, actor)
    found = crud_anak.lock_students(session, [body.id_anak])
    if (stored := idempotensi.replay(session, key, sidik)) is not None:
        return stored
    anak = crud_anak.get_anak(session, body.id_anak) if found else None
    if anak is None:
        raise HTTPException(status_code=404, detail="Anak tidak ditemukan")
    record = crud.create(
        session,
        anak,
        tanggal=body.tanggal,
        keluhan=body.keluhan,
        kategori=body.kategori,
        tindakan=body.tindakan,
        obat=body.obat,
        rujukan=body.rujukan,
        petugas=body.petugas,
        actor=actor,
    )
    answer = _public(record, anak)
    return idempotensi.commit(session, key, request, sidik, 201, answer) or answer


@router.get("", response_model=DaftarKunjungan, response_model_exclude_none=True)
def daftar_kunjungan(
    session: SessionDep,
    id_anak: IdAnakFilter = None,
    kelas: Filter = None,
    kamar: Filter = None,
    dari: Dari = None,
    sampai: Sampai = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> DaftarKunjungan:
    """Visits by student, class, room (case-insensitive) and period, latest first."""
    check_period(dari, sampai)
    total, page = crud.search(
        session, id_anak=id_anak, kelas=kelas, kamar=kamar, dari=dari, sampai=sampai, limit=limit, offset=offset
    )
    return DaftarKunjungan(total=total, data=[_public(k, a) for k, a in page])


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
