"""`/absensi`: one day's records (or its counts and who was absent), a summary over a range, recording one student's
day or a whole roll call, and the history of a record."""

from collections import Counter
from collections.abc import Sequence
from datetime import date
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Query, Request
from sqlalchemy.orm import Session

from mcp_asrama.contract import BERUBAH, KONFLIK_HEADER
from mcp_asrama.service.crud import absensi as crud_absensi
from mcp_asrama.service.crud import anak as crud_anak
from mcp_asrama.service.crud.absensi import Catatan
from mcp_asrama.service.deps import ActorDep, KeyDep, SessionDep, TokenDep
from mcp_asrama.service.idempotensi import Once
from mcp_asrama.service.records import student
from mcp_asrama.service.routes.common import Filter, IdAnakFilter, refuse_changed
from mcp_asrama.service.schemas.absensi import (
    MAX_ENTRI,
    AbsensiBanyakIn,
    AbsensiHarian,
    AbsensiIn,
    AbsensiPublic,
    DaftarRiwayat,
    HasilAbsensi,
    JumlahHarian,
    JumlahStatus,
    PerubahanAbsensi,
    RekapAbsensi,
    RekapAnak,
    RiwayatPublic,
)
from mcp_asrama.service.schemas.common import BELUM_DICATAT, AnakId, Cari, StatusHarian, Tanggal

router = APIRouter(prefix="/absensi", tags=["absensi"], dependencies=[TokenDep])

MAX_RANGE_DAYS = 366
MAX_IDS_IN_DETAIL = 20
MAX_RINGKAS = 1000


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
    id_anak: Annotated[
        list[AnakId] | None, Query(max_length=MAX_ENTRI, description="Hanya anak-anak ini (boleh diulang, maks. 300)")
    ] = None,
    ringkas: Annotated[
        bool, Query(description="Hitung setiap anak filter per status di sini; data: hanya anak yang didaftar")
    ] = False,
    daftar: Annotated[
        StatusHarian | None, Query(description="Dengan ringkas: daftar anak berstatus ini (tanpa: yang tidak hadir)")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_RINGKAS, description="Dengan ringkas: paling banyak sekian anak")] = 100,
) -> AbsensiHarian:
    """The attendance records of one day (a day without records gives an empty list). With `semua_anak=true`
    (implied by `status=belum_dicatat`), every student of the filter: `belum_dicatat` where there is no record.
    With `id_anak` (repeated, up to 300), only those students (an unknown id is simply absent).

    With `ringkas=true` (not with `status`), the day counted here: `per_status` (with `belum_dicatat`) of every
    student of the filter, `jumlah_anak` of them; `data` then lists only the students of `daftar` (without it,
    everyone not `hadir`: the recorded ones first, then `belum_dicatat`, each by kelas, nama, id), at most `limit`."""
    ids = id_anak or ()
    if ringkas:
        if status is not None:
            raise HTTPException(status_code=422, detail="status tidak dipakai bersama ringkas: gunakan daftar")
        per_status, rows = crud_absensi.ringkasan_harian(
            session, tanggal, kelas=kelas, kamar=kamar, daftar=daftar, limit=limit, ids=ids
        )
        return AbsensiHarian(
            tanggal=tanggal,
            data=[AbsensiPublic(**r) for r in rows],
            jumlah_anak=sum(per_status.values()),
            per_status=JumlahHarian(**per_status),
        )
    semua_anak = semua_anak or status == BELUM_DICATAT
    rows = crud_absensi.absensi_harian(
        session, tanggal, kelas=kelas, kamar=kamar, status=status, semua_anak=semua_anak, ids=ids
    )
    return AbsensiHarian(tanggal=tanggal, data=[AbsensiPublic(**r) for r in rows], semua_anak=semua_anak or None)


@router.get("/rekap", response_model=RekapAbsensi)
def rekap_absensi(
    session: SessionDep,
    dari: Annotated[Tanggal, Query(description="YYYY-MM-DD, inklusif")],
    sampai: Annotated[Tanggal, Query(description="YYYY-MM-DD, inklusif")],
    kelas: Filter = None,
    kamar: Filter = None,
    id_anak: IdAnakFilter = None,
    limit: Annotated[int | None, Query(ge=1, le=10_000, description="Batasi per_anak")] = None,
) -> RekapAbsensi:
    """Counts per status over a date range: overall and per student, most absences first."""
    if sampai < dari:
        raise HTTPException(status_code=422, detail="sampai harus sama dengan atau sesudah dari")
    if (sampai - dari).days >= MAX_RANGE_DAYS:
        raise HTTPException(status_code=422, detail=f"rentang paling panjang {MAX_RANGE_DAYS} hari")
    rekap = crud_absensi.rekap_absensi(session, dari, sampai, kelas=kelas, kamar=kamar, id_anak=id_anak, limit=limit)
    return RekapAbsensi(
        dari=dari,
        sampai=sampai,
        total=JumlahStatus(**rekap.total),
        jumlah_anak=rekap.jumlah_anak,
        per_anak=[RekapAnak(**r) for r in rekap.per_anak],
    )


def _ids(ids: list[str]) -> str:
    """Problem ids for a `detail` (ids only, never names), at most 20 of them."""
    more = f" (dan {len(ids) - MAX_IDS_IN_DETAIL} lainnya)" if len(ids) > MAX_IDS_IN_DETAIL else ""
    return ", ".join(ids[:MAX_IDS_IN_DETAIL]) + more


def _refuse_changed(session: Session, tanggal: date, entri: Sequence[tuple[str, AbsensiIn]]) -> None:
    """409 (ids only) when a student's stored record is no longer the `status_lama` / `keterangan_lama` its caller
    read; an entry without `status_lama` is not checked."""
    read = [(tanggal, i, e.status_lama, e.keterangan_lama) for i, e in entri if e.status_lama is not None]
    refuse_changed(session, read, lambda ids: f"Catatan berubah sejak dibaca, tidak ada yang dicatat: {_ids(ids)}")


_WRITE_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"description": "Anak tidak ditemukan"},
    409: {
        "description": f"Catatan berubah sejak dibaca (header {KONFLIK_HEADER}: {BERUBAH}), atau Idempotency-Key "
        "dipakai lain"
    },
}


@router.post("/{tanggal}", response_model=HasilAbsensi, response_model_exclude_none=True, responses=_WRITE_ERRORS)
def catat_absensi_banyak(
    request: Request,
    session: SessionDep,
    tanggal: Annotated[Tanggal, Path(description="YYYY-MM-DD")],
    body: AbsensiBanyakIn,
    actor: ActorDep,
    key: KeyDep,
) -> Any:
    """A roll call of up to 300 students in one transaction, all or nothing; each change is kept in the history.
    An entry with `status_lama` is checked first: if any such student's record changed, nothing is written (409).

    With an `Idempotency-Key`, the same request again returns the first answer and writes nothing.
    """
    ids = [e.id_anak for e in body.entri]
    twice = sorted(i for i, n in Counter(ids).items() if n > 1)
    if twice:
        raise HTTPException(status_code=422, detail=f"id_anak lebih dari sekali: {_ids(twice)}")
    once = Once.of(request, body, actor, key)
    found = crud_anak.lock_students(session, ids)
    if (stored := once.replay(session)) is not None:
        return stored
    unknown = sorted(set(ids) - found)
    if unknown:
        raise HTTPException(status_code=404, detail=f"Anak tidak ditemukan: {_ids(unknown)}")
    _refuse_changed(session, tanggal, [(e.id_anak, e) for e in body.entri])
    records = [Catatan(tanggal, e.id_anak, e.status, e.keterangan) for e in body.entri]
    changes = crud_absensi.write(session, records, actor=actor, key=key)
    answer = HasilAbsensi(
        tanggal=tanggal,
        jumlah=len(changes),
        baru=sum(c.status_lama is None for c in changes),
        diubah=sum(c.berubah and c.status_lama is not None for c in changes),
        tetap=sum(not c.berubah for c in changes),
        data=[
            PerubahanAbsensi(id_anak=c.id_anak, status_lama=c.status_lama, status_baru=c.status_baru) for c in changes
        ],
    )
    return once.commit(session, 200, answer)


@router.get("/{tanggal}/{id_anak}/riwayat", response_model=DaftarRiwayat, response_model_exclude_none=True)
def riwayat_absensi(
    session: SessionDep,
    tanggal: Annotated[Tanggal, Path(description="YYYY-MM-DD")],
    id_anak: Annotated[Cari, Path()],
) -> DaftarRiwayat:
    """Every change of one student's record of one day, oldest first: old → new, who, when, which confirmation."""
    if crud_anak.get_anak(session, id_anak) is None:
        raise HTTPException(status_code=404, detail="Anak tidak ditemukan")
    rows = crud_absensi.history(session, tanggal, id_anak)
    return DaftarRiwayat(tanggal=tanggal, id_anak=id_anak, data=[RiwayatPublic.model_validate(r) for r in rows])


@router.put(
    "/{tanggal}/{id_anak}", response_model=AbsensiPublic, response_model_exclude_none=True, responses=_WRITE_ERRORS
)
def catat_absensi(
    session: SessionDep,
    tanggal: Annotated[Tanggal, Path(description="YYYY-MM-DD")],
    id_anak: Annotated[Cari, Path()],
    body: AbsensiIn,
    actor: ActorDep,
) -> AbsensiPublic:
    """Record (or correct) one student's attendance on one day, kept in the history; the same call again changes
    nothing. With `status_lama`, only while the stored record is still what the caller read (else 409)."""
    anak = crud_anak.get_anak(session, id_anak)
    if anak is None or not crud_anak.lock_students(session, [anak.id]):
        raise HTTPException(status_code=404, detail="Anak tidak ditemukan")
    _refuse_changed(session, tanggal, [(anak.id, body)])
    crud_absensi.write(session, [Catatan(tanggal, anak.id, body.status, body.keterangan)], actor=actor, key=None)
    session.commit()
    return AbsensiPublic(**student(anak), status=body.status, keterangan=body.keterangan)
