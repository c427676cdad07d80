"""`/hafalan`: recording a Qur'an memorisation deposit (*setoran*, idempotent under an `Idempotency-Key`), listing
deposits, and memorisation progress per student."""

from datetime import date
from typing import Annotated, Any

from fastapi import APIRouter, BackgroundTasks, Depends, HTTPException, Query, Request, Response

from mcp_asrama import quran
from mcp_asrama.service import records
from mcp_asrama.service.crud import anak as crud_anak
from mcp_asrama.service.crud import hafalan as crud
from mcp_asrama.service.deps import ActorDep, KeyDep, SessionDep, TokenDep
from mcp_asrama.service.models import Anak, Hafalan
from mcp_asrama.service.records import PagingDep, RecordFilterDep
from mcp_asrama.service.routes.common import Filter, IdAnakFilter, check_not_future
from mcp_asrama.service.schemas.hafalan import (
    DaftarHafalan,
    HafalanIn,
    HafalanPublic,
    JenisHafalan,
    ProgresAnak,
    ProgresHafalan,
    RataRataHafalan,
)

router = APIRouter(prefix="/hafalan", tags=["hafalan"], dependencies=[TokenDep])

TopLimit = Annotated[int | None, Query(ge=1, le=500, description="only the first this many students")]


def _surah(record: Hafalan) -> tuple[str, list[int]]:
    """The surah's name and the juz the range touches; a range another tool stored badly shows what it can."""
    try:
        return quran.surah(record.surah).nama, quran.juz_span(record.surah, record.ayat_mulai, record.ayat_selesai)
    except ValueError:
        return (quran.surah(record.surah).nama if 1 <= record.surah <= 114 else str(record.surah)), []


def _public(record: Hafalan, anak: Anak) -> HafalanPublic:
    nama_surah, juz = _surah(record)
    return records.public(HafalanPublic, record, anak, nama_surah=nama_surah, juz=juz)


def _jenis(jenis: Annotated[JenisHafalan | None, Query()] = None) -> JenisHafalan | None:
    return jenis


@router.post(
    "", status_code=201, response_model=HafalanPublic, response_model_exclude_none=True, responses=records.ERRORS
)
def catat_setoran(request: Request, session: SessionDep, body: HafalanIn, actor: ActorDep, key: KeyDep) -> Any:
    """Record a deposit of ayat `ayat_mulai`..`ayat_selesai` of `surah` on a day up to today; 422 when the ayat
    are not in the surah ("Al-Baqarah hanya punya 286 ayat"), 404 unknown student."""
    check_not_future(body.tanggal)
    if (problem := crud.check_range(body.surah, body.ayat_mulai, body.ayat_selesai)) is not None:
        raise HTTPException(status_code=422, detail=problem)

    def write(anak: Anak) -> HafalanPublic:
        deposit = records.add(session, "hafalan", Hafalan, anak, actor, **body.model_dump(exclude={"id_anak"}))
        crud.refresh(session, [anak.id])
        return _public(deposit, anak)

    return records.create(request, session, body, actor, key, write)


@router.get("", response_model=DaftarHafalan, response_model_exclude_none=True)
def daftar_hafalan(
    session: SessionDep,
    where: RecordFilterDep,
    jenis: Annotated[JenisHafalan | None, Depends(_jenis)],
    paging: PagingDep,
) -> DaftarHafalan:
    """Deposits by student, class, room (case-insensitive), period and kind, latest first."""
    also = [] if jenis is None else [Hafalan.jenis == jenis]
    total, page = records.search(session, Hafalan, where, paging, also=also)
    return DaftarHafalan(total=total, data=[_public(h, a) for h, a in page])


@router.get("/progres", response_model=ProgresHafalan, response_model_exclude_none=True, responses=records.ERRORS)
def progres_hafalan(
    request: Request,
    session: SessionDep,
    later: BackgroundTasks,
    id_anak: IdAnakFilter = None,
    kelas: Filter = None,
    kamar: Filter = None,
    limit: TopLimit = None,
) -> Response:
    """Every student of the filter, also those without a deposit: distinct ayat and juz memorised (ziyadah, ever),
    the last deposit, and the ziyadah ayat per week over the last 28 days; most ayat first. `limit`: only the first
    that many students (the count and averages stay those of all). 404 for an unknown `id_anak`."""
    school = crud.progres(session, id_anak=id_anak, kelas=kelas, kamar=kamar, today=date.today(), limit=limit)
    if school.waiting:  # counted from their deposits this time; once the answer went out, kept for the next reads
        later.add_task(crud.sum_up_waiting, request.app.state.sessions)
    if id_anak and not school.jumlah_anak and crud_anak.get_anak(session, id_anak) is None:
        raise HTTPException(status_code=404, detail="Anak tidak ditemukan")
    data = [ProgresAnak.model_validate(p, from_attributes=True) for p in school.data]
    n = school.jumlah_anak
    rata = RataRataHafalan(
        ayat=round(school.ayat / n, 1) if n else 0.0,
        juz=round(school.juz / n, 2) if n else 0.0,
    )
    # Validated once, as it is built: FastAPI would validate a returned model again against `response_model` (about
    # 0.7 s for the 100,000 rows of a 100k school) before writing the same JSON.
    body = ProgresHafalan(jumlah_anak=n, rata_rata=rata, data=data)
    return Response(body.model_dump_json(exclude_none=True), media_type="application/json")
