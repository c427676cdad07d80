"""`/izin`: ask for a student's leave, list leaves, end one; each write idempotent under an `Idempotency-Key`."""

from datetime import date
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Query, Request

from mcp_asrama.contract import BERUBAH, KONFLIK_HEADER
from mcp_asrama.service import records
from mcp_asrama.service.crud import anak as crud_anak
from mcp_asrama.service.crud import izin as crud_izin
from mcp_asrama.service.deps import ActorDep, KeyDep, SessionDep, TokenDep
from mcp_asrama.service.idempotensi import Once
from mcp_asrama.service.models import Anak, Izin
from mcp_asrama.service.records import PagingDep
from mcp_asrama.service.routes.common import Filter, IdAnakFilter, refuse_changed
from mcp_asrama.service.schemas.common import Tanggal
from mcp_asrama.service.schemas.izin import MAX_DAYS, DaftarIzin, IzinIn, IzinPublic, IzinSelesaiIn

router = APIRouter(prefix="/izin", tags=["izin"], dependencies=[TokenDep])

IzinId = Annotated[str, Path(max_length=64)]
_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"description": "Anak atau izin tidak ditemukan"},
    409: {
        "description": "Bertabrakan dengan izin lain, izin sudah selesai, absensi hari-harinya berubah sejak dibaca "
        f"(header {KONFLIK_HEADER}: {BERUBAH}), atau Idempotency-Key dipakai lain"
    },
}


def _public(izin: Izin, anak: Anak, today: date) -> IzinPublic:
    return records.public(IzinPublic, izin, anak, aktif=crud_izin.is_running(izin, today))


@router.post("", status_code=201, response_model=IzinPublic, response_model_exclude_none=True, responses=_ERRORS)
def ajukan_izin(request: Request, session: SessionDep, body: IzinIn, actor: ActorDep, key: KeyDep) -> Any:
    """A student's leave over [dari, sampai] (at most 30 days): those days are recorded `izin` (the note says the
    kind, never the reason) and the student is `izin` while it runs. 409 when it overlaps another izin, or when a
    day of `absensi_lama` is no longer recorded as its caller read it (nothing written).

    With an `Idempotency-Key`, the same request again returns the first answer and writes nothing.
    """
    if body.sampai < body.dari:
        raise HTTPException(status_code=422, detail="sampai harus sama dengan atau sesudah dari")
    if (body.sampai - body.dari).days >= MAX_DAYS:
        raise HTTPException(status_code=422, detail=f"izin paling lama {MAX_DAYS} hari")

    def write(anak: Anak) -> IzinPublic:
        if crud_izin.overlapping(session, anak.id, body.dari, body.sampai):
            raise HTTPException(status_code=409, detail="Anak sudah punya izin pada sebagian tanggal itu")
        read = [(d.tanggal, anak.id, d.status_lama, d.keterangan_lama) for d in body.absensi_lama or []]
        refuse_changed(
            session, read, lambda days: f"Absensi {len(days)} hari berubah sejak dibaca; tidak ada yang dicatat"
        )
        today = date.today()
        asked = body.model_dump(include={"dari", "sampai", "jenis", "alasan"})
        izin = crud_izin.create(session, anak, **asked, actor=actor, key=key, today=today)
        return _public(izin, anak, today)

    return records.create(request, session, body, actor, key, write)


@router.get("", response_model=DaftarIzin, response_model_exclude_none=True)
def daftar_izin(
    session: SessionDep,
    *,
    aktif: Annotated[bool | None, Query(description="true: yang berjalan hari ini; false: yang tidak")] = None,
    kelas: Filter = None,
    kamar: Filter = None,
    id_anak: IdAnakFilter = None,
    tanggal: Annotated[
        Tanggal | None, Query(description="Hanya izin yang berjalan pada tanggal ini (YYYY-MM-DD)")
    ] = None,
    paging: PagingDep,
) -> DaftarIzin:
    """Izin records by running today (`aktif`) or on a day (`tanggal`), class, room (case-insensitive) or student,
    latest first."""
    today = date.today()
    total, page = crud_izin.search(
        session, paging, aktif=aktif, kelas=kelas, kamar=kamar, id_anak=id_anak, today=today, pada=tanggal
    )
    return DaftarIzin(total=total, data=[_public(i, a, today) for i, a in page])


@router.get("/{id_izin}", response_model=IzinPublic, response_model_exclude_none=True, responses=_ERRORS)
def detail_izin(session: SessionDep, id_izin: IzinId) -> IzinPublic:
    """One izin by its id."""
    found = crud_izin.get(session, id_izin)
    if found is None:
        raise HTTPException(status_code=404, detail="Izin tidak ditemukan")
    return _public(*found, date.today())


@router.post("/{id_izin}/selesai", response_model=IzinPublic, response_model_exclude_none=True, responses=_ERRORS)
def selesai_izin(
    request: Request, session: SessionDep, id_izin: IzinId, body: IzinSelesaiIn, actor: ActorDep, key: KeyDep
) -> Any:
    """End an izin on the day the student is back (today at the latest), early or late: the student is `aktif`
    again, and on an early return the izin records from that day on are removed (kept in the history)."""
    once = Once.of(request, body, actor, key)
    found = crud_izin.get(session, id_izin)
    if found is None:
        raise HTTPException(status_code=404, detail="Izin tidak ditemukan")
    izin, anak = found
    crud_anak.lock_students(session, [anak.id])
    if (stored := once.replay(session)) is not None:
        return stored
    session.refresh(izin)  # read again under the lock
    session.refresh(anak)
    if izin.tanggal_kembali is not None:
        raise HTTPException(status_code=409, detail="Izin ini sudah selesai")
    if body.tanggal_kembali < izin.dari:
        raise HTTPException(status_code=422, detail="tanggal_kembali harus sama dengan atau sesudah dari")
    today = date.today()
    if body.tanggal_kembali > today:
        raise HTTPException(status_code=422, detail="tanggal_kembali tidak boleh sesudah hari ini")
    crud_izin.end(session, izin, anak, tanggal_kembali=body.tanggal_kembali, actor=actor, key=key)
    answer = _public(izin, anak, today)
    return once.commit(session, 200, answer)
