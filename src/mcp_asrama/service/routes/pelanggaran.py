"""`/pelanggaran`: the school's kinds of violation, recording a violation (idempotent under an `Idempotency-Key`),
listing them and summing them per student and category."""

from typing import Any

from fastapi import APIRouter, HTTPException, Request

from mcp_asrama.service import idempotensi
from mcp_asrama.service.crud import anak as crud_anak
from mcp_asrama.service.crud import pelanggaran as crud
from mcp_asrama.service.deps import ActorDep, KeyDep, SessionDep, TokenDep
from mcp_asrama.service.models import Anak, Pelanggaran
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
from mcp_asrama.service.schemas.pelanggaran import (
    KATEGORI_PELANGGARAN,
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

_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"description": "Anak tidak ditemukan"},
    409: {"description": "Idempotency-Key dipakai untuk permintaan lain"},
}


def _public(record: Pelanggaran, anak: Anak, nama_jenis: str) -> PelanggaranPublic:
    return PelanggaranPublic(
        id=record.id,
        id_anak=anak.id,
        nama=anak.nama,
        kelas=anak.kelas,
        kamar=anak.kamar,
        tanggal=record.tanggal,
        kategori=record.kategori,
        jenis=record.jenis,
        nama_jenis=nama_jenis,
        poin=record.poin,
        keterangan=record.keterangan,
        dicatat_oleh=record.dicatat_oleh,
    )


@router.get("/jenis", response_model=DaftarJenisPelanggaran)
def daftar_jenis(session: SessionDep) -> DaftarJenisPelanggaran:
    """The kinds of violation the school recognises, by kategori (ringan, sedang, berat) then nama."""
    return DaftarJenisPelanggaran(
        data=[
            JenisPelanggaranPublic(kode=j.kode, nama=j.nama, kategori=j.kategori, poin=j.poin)
            for j in crud.list_jenis(session)
        ]
    )


@router.post("", status_code=201, response_model=PelanggaranPublic, response_model_exclude_none=True, responses=_ERRORS)
def catat_pelanggaran(request: Request, session: SessionDep, body: PelanggaranIn, actor: ActorDep, key: KeyDep) -> Any:
    """Record a violation of a kind of `/pelanggaran/jenis` (its points and category unless given) on a day up to
    today. 404 unknown student, 422 unknown kind."""
    check_not_future(body.tanggal)
    sidik = idempotensi.fingerprint(request, body, actor)
    found = crud_anak.lock_students(session, [body.id_anak])
    if (stored := idempotensi.replay(session, key, sidik)) is not None:
        return stored
    anak = crud_anak.get_anak(session, body.id_anak) if found else None
    if anak is None:
        raise HTTPException(status_code=404, detail="Anak tidak ditemukan")
    jenis = crud.get_jenis(session, body.jenis)
    if jenis is None:
        raise HTTPException(status_code=422, detail="jenis pelanggaran tidak dikenal: lihat GET /pelanggaran/jenis")
    record = crud.create(
        session,
        anak,
        jenis,
        tanggal=body.tanggal,
        poin=body.poin,
        kategori=body.kategori,
        keterangan=body.keterangan,
        actor=actor,
    )
    answer = _public(record, anak, jenis.nama)
    return idempotensi.commit(session, key, request, sidik, 201, answer) or answer


@router.get("", response_model=DaftarPelanggaran, response_model_exclude_none=True)
def daftar_pelanggaran(
    session: SessionDep,
    id_anak: IdAnakFilter = None,
    kelas: Filter = None,
    kamar: Filter = None,
    dari: Dari = None,
    sampai: Sampai = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> DaftarPelanggaran:
    """Violations by student, class, room (case-insensitive) and period, latest first."""
    check_period(dari, sampai)
    total, page = crud.search(
        session, id_anak=id_anak, kelas=kelas, kamar=kamar, dari=dari, sampai=sampai, limit=limit, offset=offset
    )
    return DaftarPelanggaran(total=total, data=[_public(p, a, n) for p, a, n in page])


@router.get("/rekap", response_model=RekapPelanggaran, response_model_exclude_none=True)
def rekap_pelanggaran(
    session: SessionDep, dari: DariWajib, sampai: SampaiWajib, kelas: Filter = None, kamar: Filter = None
) -> RekapPelanggaran:
    """Counts per category and points over [dari, sampai] (at most 366 days): in all, and per student with at least
    one violation, most points first."""
    check_period(dari, sampai)
    per_anak = []
    for anak, counts, poin in crud.rekap(session, dari=dari, sampai=sampai, kelas=kelas, kamar=kamar):
        per_anak.append(
            RekapAnakPelanggaran(
                id_anak=anak.id,
                nama=anak.nama,
                kelas=anak.kelas,
                kamar=anak.kamar,
                **{k: counts.get(k, 0) for k in KATEGORI_PELANGGARAN},
                jumlah=sum(counts.values()),
                poin=poin,
            )
        )
    per_anak.sort(key=lambda r: (-r.poin, -r.jumlah, r.nama, r.id_anak))
    total = JumlahPelanggaran(
        **{k: sum(getattr(r, k) for r in per_anak) for k in KATEGORI_PELANGGARAN},
        jumlah=sum(r.jumlah for r in per_anak),
        poin=sum(r.poin for r in per_anak),
    )
    return RekapPelanggaran(dari=dari, sampai=sampai, jumlah_anak=len(per_anak), total=total, per_anak=per_anak)
