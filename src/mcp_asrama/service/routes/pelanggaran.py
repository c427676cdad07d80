"""`/pelanggaran`: the school's kinds of violation, recording a violation (idempotent under an `Idempotency-Key`),
listing them and summing them per student and category."""

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request

from mcp_asrama.service import records
from mcp_asrama.service.crud import pelanggaran as crud
from mcp_asrama.service.deps import ActorDep, KeyDep, SessionDep, TokenDep
from mcp_asrama.service.models import Anak, JenisPelanggaran, Pelanggaran
from mcp_asrama.service.records import PagingDep, RecordFilterDep
from mcp_asrama.service.routes.common import DariWajib, Filter, SampaiWajib, check_not_future, check_period
from mcp_asrama.service.schemas.pelanggaran import (
    DaftarJenisPelanggaran,
    DaftarPelanggaran,
    JenisPelanggaranPublic,
    JumlahPelanggaran,
    PelanggaranIn,
    PelanggaranPublic,
    RekapAnakPelanggaran,
    RekapPelanggaran,
)

router = APIRouter(prefix="/pelanggaran", tags=["pelanggaran"], dependencies=[TokenDep])


@router.get("/jenis", response_model=DaftarJenisPelanggaran)
def daftar_jenis(session: SessionDep) -> DaftarJenisPelanggaran:
    """The kinds of violation the school recognises, by kategori (ringan, sedang, berat) then nama."""
    return DaftarJenisPelanggaran(
        data=[
            JenisPelanggaranPublic(kode=j.kode, nama=j.nama, kategori=j.kategori, poin=j.poin)
            for j in crud.list_jenis(session)
        ]
    )


@router.post(
    "", status_code=201, response_model=PelanggaranPublic, response_model_exclude_none=True, responses=records.ERRORS
)
def catat_pelanggaran(request: Request, session: SessionDep, body: PelanggaranIn, actor: ActorDep, key: KeyDep) -> Any:
    """Record a violation of a kind of `/pelanggaran/jenis` (its points and category unless given) on a day up to
    today. 404 unknown student, 422 unknown kind."""
    check_not_future(body.tanggal)

    def write(anak: Anak) -> PelanggaranPublic:
        jenis = crud.get_jenis(session, body.jenis)
        if jenis is None:
            raise HTTPException(status_code=422, detail="jenis pelanggaran tidak dikenal: lihat GET /pelanggaran/jenis")
        record = records.add(
            session,
            "pelanggaran",
            Pelanggaran,
            anak,
            actor,
            tanggal=body.tanggal,
            kategori=body.kategori or jenis.kategori,
            jenis=jenis.kode,
            poin=jenis.poin if body.poin is None else body.poin,
            keterangan=body.keterangan,
        )
        return records.public(PelanggaranPublic, record, anak, nama_jenis=jenis.nama)

    return records.create(request, session, body, actor, key, write)


@router.get("", response_model=DaftarPelanggaran, response_model_exclude_none=True)
def daftar_pelanggaran(session: SessionDep, where: RecordFilterDep, paging: PagingDep) -> DaftarPelanggaran:
    """Violations by student, class, room (case-insensitive) and period, latest first."""
    kind = (JenisPelanggaran, JenisPelanggaran.kode == Pelanggaran.jenis)
    total, page = records.search(session, Pelanggaran, where, paging, extra=[JenisPelanggaran.nama], joins=[kind])
    return DaftarPelanggaran(
        total=total, data=[records.public(PelanggaranPublic, p, a, nama_jenis=n) for p, a, n in page]
    )


@router.get("/rekap", response_model=RekapPelanggaran, response_model_exclude_none=True)
def rekap_pelanggaran(
    session: SessionDep,
    dari: DariWajib,
    sampai: SampaiWajib,
    kelas: Filter = None,
    kamar: Filter = None,
    limit: Annotated[int | None, Query(ge=1, le=10_000, description="Batasi per_anak")] = None,
) -> RekapPelanggaran:
    """Counts per category and points over [dari, sampai] (at most 366 days): in all, and per student with at least
    one violation, most points first (the first `limit` of them when given)."""
    check_period(dari, sampai)
    rekap = crud.rekap(session, dari=dari, sampai=sampai, kelas=kelas, kamar=kamar, limit=limit)
    return RekapPelanggaran(
        dari=dari,
        sampai=sampai,
        jumlah_anak=rekap.jumlah_anak,
        total=JumlahPelanggaran(**rekap.total),
        per_anak=[RekapAnakPelanggaran(**r) for r in rekap.per_anak],
    )
