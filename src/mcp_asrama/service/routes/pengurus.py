"""`/pengurus`: the staff list. List (by role, active or not), one person, store one (`PUT`: created or replaced,
so sending it again changes nothing), deactivate one, check a local account's password (`masuk`). Answers are the
contract's `Pengurus`: the password's hash and the sign-in's counters never leave the service."""

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Query, Response

from mcp_asrama.contract.pengurus import DaftarPengurus, HasilMasuk, MasukIn, Pengurus, PengurusIn, Peran, fold_email
from mcp_asrama.service.crud import pengurus as crud
from mcp_asrama.service.deps import SessionDep, TokenDep
from mcp_asrama.service.models.pengurus import Pengurus as Row

router = APIRouter(prefix="/pengurus", tags=["pengurus"], dependencies=[TokenDep])
EmailPath = Annotated[str, Path(max_length=254, description="the staff member's email (in any case)")]
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"description": "Pengurus tidak ditemukan"}}


def _public(row: Row) -> Pengurus:
    return Pengurus.model_validate(row, from_attributes=True)


def _found(row: Row | None) -> Row:
    if row is None:
        raise HTTPException(status_code=404, detail="Pengurus tidak ditemukan")
    return row


@router.get("", response_model=DaftarPengurus)
def daftar_pengurus(
    session: SessionDep,
    aktif: Annotated[bool | None, Query(description="Hanya yang aktif (true) atau yang nonaktif (false)")] = None,
    peran: Annotated[
        list[Peran] | None, Query(max_length=6, description="Hanya yang berperan salah satunya; boleh diulang")
    ] = None,
) -> DaftarPengurus:
    """Every staff member by email, with roles, rooms and classes."""
    return DaftarPengurus(data=[_public(row) for row in crud.daftar(session, aktif, peran or ())])


@router.get("/{email}", response_model=Pengurus, responses=NOT_FOUND)
def detail_pengurus(email: EmailPath, session: SessionDep) -> Pengurus:
    """One staff member (the email in any case)."""
    return _public(_found(crud.cari(session, email)))


@router.put(
    "/{email}",
    response_model=Pengurus,
    responses={
        201: {"description": "Pengurus baru", "model": Pengurus},
        422: {"description": "email berbeda, atau kamar yang tidak ada"},
    },
)
def simpan_pengurus(email: EmailPath, body: PengurusIn, session: SessionDep, response: Response) -> Pengurus:
    """Create (201) or replace (200) the staff member of `email`; the body's email must be the same (in any case),
    and each of their rooms a stored room (by the name's fold). A password already set stays."""
    if fold_email(email) != body.email:
        raise HTTPException(status_code=422, detail="email di badan permintaan harus sama dengan email di alamat")
    if unknown := crud.unknown_rooms(session, body.kamar):
        raise HTTPException(status_code=422, detail=crud.ROOMS_UNKNOWN.format(", ".join(unknown)))
    if crud.simpan(session, body):
        response.status_code = 201
    session.commit()
    return _public(_found(crud.cari(session, email)))


@router.post("/{email}/nonaktif", response_model=Pengurus, responses=NOT_FOUND)
def nonaktifkan_pengurus(email: EmailPath, session: SessionDep) -> Pengurus:
    """Deactivate a staff member (may no longer sign in); again is the same."""
    row = _found(crud.nonaktif(session, email))
    session.commit()
    return _public(row)


@router.post("/{email}/masuk", response_model=HasilMasuk)
def masuk_pengurus(email: EmailPath, body: MasukIn, session: SessionDep) -> HasilMasuk:
    """Check a local account's password; always 200 with the outcome (`ok` with the staff member, `salah`,
    `terkunci` with the seconds left, `nonaktif`). Five wrong ones in a row lock the account for a minute, each
    further one doubles it (at most an hour); an unknown email is `salah`, taking as long."""
    hasil = crud.masuk(session, email, body.sandi, datetime.now(UTC))
    session.commit()
    return hasil
